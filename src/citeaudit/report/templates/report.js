// The claims table: rows come from the JSON embedded in the page, are sorted, filtered and paged here,
// and only one page of them is in the DOM. Every piece of text is inserted as a text node (append with
// a string, textContent, setAttribute), never parsed as HTML: claims and passages are untrusted.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var S = data.strings, rows = data.rows, P = data.passages, FOLD = data.fold, PAGE = 50;
  var SHOW_ALL_CAP = 20000;  // characters of a passage put in the DOM at most, even when unfolded
  var C = {};
  data.columns.forEach(function (name, i) { C[name] = i; });
  var LABELS = ["full", "partial", "none", "contradicts", "uncertain", "unjudged", "missed"];
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});

  // Ranks of the string table, so that sorting interned columns compares integers.
  var sortedStrings = S.map(function (_, i) { return i; }).sort(function (a, b) { return collator.compare(S[a], S[b]); });
  var rank = new Array(S.length);
  sortedStrings.forEach(function (s, r) { rank[s] = r; });

  function el(tag, cls, children) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) e.append(c); });
    return e;
  }
  function labelOf(r) { return S[r[C.label]]; }
  function causeOf(r) { return S[r[C.cause]]; }
  function words(s) { return s.replace(/_/g, " "); }
  function labelChip(label) {
    return el("span", "label " + (LABELS.indexOf(label) >= 0 ? label : ""), [label]);
  }

  var KEYS = {
    system: function (a, b) { return rank[rows[a][C.system]] - rank[rows[b][C.system]]; },
    where: function (a, b) {
      var x = rows[a], y = rows[b];
      return (rank[x[C.case]] - rank[y[C.case]]) || (rank[x[C.answer]] - rank[y[C.answer]])
        || collator.compare(x[C.ref], y[C.ref]);
    },
    text: function (a, b) { return collator.compare(rows[a][C.text], rows[b][C.text]); },
    label: function (a, b) { return rank[rows[a][C.label]] - rank[rows[b][C.label]]; },
    cause: function (a, b) { return rank[rows[a][C.cause]] - rank[rows[b][C.cause]]; },
    score: function (a, b) { return rows[a][C.score] - rows[b][C.score]; }
  };
  function unscored(i) { return rows[i][C.score] === null; }

  var order = rows.map(function (_, i) { return i; });
  var shown = order, page = 0, sortKey = null, sortDir = 1, openIndex = null;
  var tbody = document.querySelector("#claims-table tbody");
  var f = {
    system: document.getElementById("f-system"), label: document.getElementById("f-label"),
    cause: document.getElementById("f-cause"), confidence: document.getElementById("f-confidence"),
    text: document.getElementById("f-text")
  };

  function fillOptions(select, values) {
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v;
      o.textContent = words(v);
      select.append(o);
    });
  }
  function distinct(col) {
    var seen = {};
    rows.forEach(function (r) { seen[r[col]] = true; });
    return Object.keys(seen).map(Number).map(function (i) { return S[i]; }).filter(Boolean)
      .sort(collator.compare);
  }
  fillOptions(f.system, distinct(C.system));
  fillOptions(f.label, distinct(C.label));
  fillOptions(f.cause, distinct(C.cause));

  function keep() {
    var system = f.system.value, label = f.label.value, cause = f.cause.value, conf = f.confidence.value;
    var text = f.text.value.trim().toLowerCase();
    return function (i) {
      var r = rows[i];
      if (system && S[r[C.system]] !== system) return false;
      if (label && labelOf(r) !== label) return false;
      if (cause === "-" ? causeOf(r) !== "" : cause === "+" ? causeOf(r) === "" : cause && causeOf(r) !== cause) return false;
      if (conf === "uncertain" && !r[C.uncertain]) return false;
      if (conf === "sure" && (r[C.uncertain] || r[C.kind] !== "claim" || labelOf(r) === "unjudged")) return false;
      if (conf === "low" && !(r[C.score] !== null && r[C.score] < 0.5)) return false;
      if (conf === "high" && !(r[C.score] !== null && r[C.score] >= 0.5)) return false;
      if (text && r[C.text].toLowerCase().indexOf(text) < 0
          && (S[r[C.case]] + "/" + S[r[C.answer]] + " " + r[C.ref]).toLowerCase().indexOf(text) < 0) return false;
      return true;
    };
  }

  function update() {
    shown = order.filter(keep());
    page = 0;
    openIndex = null;
    draw();
  }

  function sortBy(key) {
    sortDir = sortKey === key ? -sortDir : 1;
    sortKey = key;
    var cmp = KEYS[key];
    order = rows.map(function (_, i) { return i; });
    order.sort(function (a, b) {
      if (key === "score" && unscored(a) !== unscored(b)) return unscored(a) ? 1 : -1;  // unscored last, either way
      if (key === "score" && unscored(a)) return a - b;
      return sortDir * cmp(a, b) || a - b;
    });
    document.querySelectorAll("#claims-table th[data-sort]").forEach(function (th) {
      th.setAttribute("aria-sort", th.dataset.sort !== key ? "none" : sortDir > 0 ? "ascending" : "descending");
    });
    update();
  }

  // A passage with its span highlighted; text far from the span is folded (and capped when unfolded).
  function passageText(text, start, end, whole) {
    var box = el("div", "ptext");
    if (start === null) {
      var cut = whole ? SHOW_ALL_CAP : 2 * FOLD;
      box.append(text.slice(0, cut));
      if (text.length > cut) box.append(el("span", "fold", [" … " + (text.length - cut).toLocaleString() + " more characters"]));
      return box;
    }
    var from = whole ? Math.max(0, start - SHOW_ALL_CAP / 2) : Math.max(0, start - FOLD);
    var to = whole ? Math.min(text.length, end + SHOW_ALL_CAP / 2) : Math.min(text.length, end + FOLD);
    if (from > 0) box.append(el("span", "fold", [from.toLocaleString() + " characters folded … "]));
    box.append(text.slice(from, start), el("mark", null, [text.slice(start, end)]), text.slice(end, to));
    if (to < text.length) box.append(el("span", "fold", [" … " + (text.length - to).toLocaleString() + " characters folded"]));
    return box;
  }

  function spanIn(r, pi, text) {
    var ev = r[C.evidence];
    if (ev && ev[0] === pi) return [ev[1], ev[2]];
    var marks = r[C.marks];
    for (var m = 0; m < marks.length; m++) {
      var at = text.indexOf(marks[m]);
      if (at >= 0) return [at, at + marks[m].length];
    }
    return [null, null];
  }

  function highlighted(text, marks) {
    var box = el("p", "claim-text");
    var at = -1, mark = "";
    marks.forEach(function (m) { var i = text.indexOf(m); if (i >= 0 && (at < 0 || i < at)) { at = i; mark = m; } });
    if (at < 0) { box.append(text); return box; }
    box.append(text.slice(0, at), el("mark", null, [mark]), text.slice(at + mark.length));
    return box;
  }

  function detail(r) {
    var left = el("div", null, [
      el("h4", null, [r[C.kind] === "fact" ? "missed required fact " + r[C.ref] : "claim " + r[C.ref]]),
      highlighted(r[C.text], r[C.marks]),
      el("p", "meta", [S[r[C.system]] + " · case " + S[r[C.case]] + " · answer " + S[r[C.answer]]]),
      el("p", null, [labelChip(labelOf(r)), causeOf(r) ? " " + words(causeOf(r)) : null,
        r[C.score] !== null ? " · p(support) " + r[C.score].toFixed(3) : null])
    ]);
    if (S[r[C.explanation]]) left.append(el("h4", null, ["judge's explanation"]), el("p", null, [S[r[C.explanation]]]));
    if (S[r[C.advice]]) left.append(el("h4", null, ["advice"]), el("p", "advice", [S[r[C.advice]]]));
    if (S[r[C.repair]]) left.append(el("h4", null, ["repair"]), el("p", "repair", [S[r[C.repair]]]));
    var right = el("div", null, [el("h4", null, [r[C.kind] === "fact" ? "documenting passages" : "cited passages"])]);
    if (!r[C.passages].length) right.append(el("p", "meta", ["no citation"]));
    r[C.passages].forEach(function (pi) {
      var p = P[pi], text = p[4], span = spanIn(r, pi, text);
      var block = el("blockquote", "passage", [
        el("span", "pmeta", [el("b", null, [p[0]]), " " + p[1] + " · " + p[2] + (p[3] ? " · " + p[3] : "")])
      ]);
      var body = passageText(text, span[0], span[1], false);
      block.append(body);
      if (text.length > 2 * FOLD) {
        var more = el("button", "unfold", ["show more of the passage"]);
        more.type = "button";
        more.addEventListener("click", function (e) {
          e.stopPropagation();
          block.replaceChild(passageText(text, span[0], span[1], true), block.querySelector(".ptext"));
          more.remove();
        });
        block.append(more);
      }
      right.append(block);
    });
    var td = el("td", null, [el("div", "detail-grid", [left, right])]);
    td.colSpan = 6;
    var tr = el("tr", "detail", [td]);
    return tr;
  }

  function rowElement(i) {
    var r = rows[i];
    var text = el("div", "clamp", [r[C.kind] === "fact" ? el("span", "kind", ["missed fact"]) : null, r[C.text]]);
    var tr = el("tr", "row", [
      el("td", null, [S[r[C.system]]]),
      el("td", null, [S[r[C.case]] + " / " + S[r[C.answer]], el("span", "meta", [" " + r[C.ref]])]),
      el("td", "text", [text]),
      el("td", null, [labelChip(labelOf(r))]),
      el("td", null, [words(causeOf(r))]),
      el("td", "num", [r[C.score] === null ? "—" : r[C.score].toFixed(2)])
    ]);
    tr.tabIndex = 0;
    tr.dataset.row = String(i);
    function toggle() {
      openIndex = openIndex === i ? null : i;
      draw();
    }
    tr.addEventListener("click", toggle);
    tr.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
    if (openIndex === i) tr.classList.add("open");
    return tr;
  }

  function draw() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    var items = [];
    shown.slice(page * PAGE, (page + 1) * PAGE).forEach(function (i) {
      items.push(rowElement(i));
      if (openIndex === i) items.push(detail(rows[i]));
    });
    tbody.replaceChildren.apply(tbody, items);
    document.getElementById("shown").textContent =
      shown.length.toLocaleString() + " of " + rows.length.toLocaleString() + " rows";
    document.getElementById("page").textContent = "page " + (page + 1) + " of " + pages;
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
  }

  document.querySelectorAll("#claims-table th[data-sort] button").forEach(function (b) {
    b.addEventListener("click", function () { sortBy(b.parentNode.dataset.sort); });
  });
  [f.system, f.label, f.cause, f.confidence].forEach(function (s) { s.addEventListener("change", update); });
  f.text.addEventListener("input", update);
  document.getElementById("prev").addEventListener("click", function () { page--; openIndex = null; draw(); });
  document.getElementById("next").addEventListener("click", function () { page++; openIndex = null; draw(); });
  update();
  document.body.dataset.ready = "true";
})();
