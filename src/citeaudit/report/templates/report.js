// The answers table and the claims table: rows come from the JSON embedded in the page, are sorted,
// filtered and paged here, and only one page of each is in the DOM. Every piece of text is inserted as a
// text node (append with a string, textContent, setAttribute), never parsed as HTML: ids, claims and
// passages are untrusted.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var S = data.strings, rows = data.rows, P = data.passages, FOLD = data.fold;
  // Every element here sits in English (the page's own words, or a section marked lang="en"): a claim or
  // a passage says its language where it is another.
  function spoken(e, lang) {
    if (lang && lang !== "en") e.lang = lang;
    return e;
  }
  var PAGE = 50, ANSWERS_PAGE = 25;  // rows a page shows: a page of answers fits a window
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
  function indexes(n) {
    var out = new Array(n);
    for (var i = 0; i < n; i++) out[i] = i;
    return out;
  }
  function byRank(a, b) { return rank[a] - rank[b]; }
  function never() { return false; }

  // Row indexes sorted by `cmp` in direction `dir`; rows for which `last` holds stay last either way,
  // in their own order. Ties keep the rows' order.
  function sortedRows(n, cmp, dir, last) {
    return indexes(n).sort(function (a, b) {
      var la = last(a), lb = last(b);
      if (la !== lb) return la ? 1 : -1;
      if (la) return a - b;
      return dir * cmp(a, b) || a - b;
    });
  }
  function markSorted(table, key, dir) {
    table.querySelectorAll("th[data-sort]").forEach(function (th) {
      th.setAttribute("aria-sort", th.dataset.sort !== key ? "none" : dir > 0 ? "ascending" : "descending");
    });
  }
  function fillOptions(select, values) {
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v;
      o.textContent = words(v);
      select.append(o);
    });
  }
  function distinctStrings(values) {
    var seen = {};
    values.forEach(function (i) { seen[i] = true; });
    return Object.keys(seen).map(Number).map(function (i) { return S[i]; }).filter(Boolean).sort(collator.compare);
  }

  // One page of `view.shown` (row indexes), `size` rows, in `tbody`, with its pager: the count in
  // `ids.shown`, the page in `ids.page`, the buttons `ids.prev` and `ids.next`. `render(i, items)` appends
  // row i's elements; `turned()` runs when the page turns.
  function pagedView(tbody, ids, size, total, noun, render, turned) {
    var view = {shown: [], page: 0};
    var prev = document.getElementById(ids.prev), next = document.getElementById(ids.next);
    view.draw = function () {
      var pages = Math.max(1, Math.ceil(view.shown.length / size));
      view.page = Math.min(view.page, pages - 1);
      var items = [];
      view.shown.slice(view.page * size, (view.page + 1) * size).forEach(function (i) { render(i, items); });
      tbody.replaceChildren.apply(tbody, items);
      document.getElementById(ids.shown).textContent =
        view.shown.length.toLocaleString() + " of " + total.toLocaleString() + " " + noun;
      document.getElementById(ids.page).textContent = "page " + (view.page + 1) + " of " + pages;
      prev.disabled = view.page === 0;
      next.disabled = view.page >= pages - 1;
    };
    prev.addEventListener("click", function () { view.page--; turned(); view.draw(); });
    next.addEventListener("click", function () { view.page++; turned(); view.draw(); });
    return view;
  }
  // A row that opens with a click, Enter or Space.
  function clickable(tr, open) {
    tr.tabIndex = 0;
    tr.addEventListener("click", open);
    tr.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } });
  }

  // --- the claims table ---
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

  var claimsTable = document.getElementById("claims-table");
  var order = indexes(rows.length);
  var sortKey = null, sortDir = 1, openIndex = null;
  var onlyAnswer = null;  // [case, answer] string indexes: the answer whose claims are shown, or null for all
  var f = {
    system: document.getElementById("f-system"), label: document.getElementById("f-label"),
    cause: document.getElementById("f-cause"), confidence: document.getElementById("f-confidence"),
    text: document.getElementById("f-text")
  };
  function column(table, col) { return table.map(function (r) { return r[col]; }); }
  fillOptions(f.system, distinctStrings(column(rows, C.system)));
  fillOptions(f.label, distinctStrings(column(rows, C.label)));
  fillOptions(f.cause, distinctStrings(column(rows, C.cause)));

  function keep() {
    var system = f.system.value, label = f.label.value, cause = f.cause.value, conf = f.confidence.value;
    var text = f.text.value.trim().toLowerCase(), only = onlyAnswer;
    return function (i) {
      var r = rows[i];
      if (only && (r[C.case] !== only[0] || r[C.answer] !== only[1])) return false;
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
    claims.shown = order.filter(keep());
    claims.page = 0;
    openIndex = null;
    claims.draw();
  }

  function sortBy(key) {
    sortDir = sortKey === key ? -sortDir : 1;
    sortKey = key;
    // unscored rows last, either way
    order = sortedRows(rows.length, KEYS[key], sortDir, key === "score" ? unscored : never);
    markSorted(claimsTable, key, sortDir);
    update();
  }

  // A passage with its span highlighted; text far from the span is folded (and capped when unfolded).
  function passageText(text, start, end, whole, lang) {
    var box = spoken(el("div", "ptext"), lang);
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
      spoken(highlighted(r[C.text], r[C.marks]), S[r[C.lang]]),
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
      var p = P[pi], text = p[4], lang = S[p[5]], span = spanIn(r, pi, text);
      var block = el("blockquote", "passage", [
        el("span", "pmeta", [el("b", null, [p[0]]), " " + p[1] + " · " + p[2] + (p[3] ? " · " + p[3] : "")])
      ]);
      var body = passageText(text, span[0], span[1], false, lang);
      block.append(body);
      if (text.length > 2 * FOLD) {
        var more = el("button", "unfold", ["show more of the passage"]);
        more.type = "button";
        more.addEventListener("click", function (e) {
          e.stopPropagation();
          block.replaceChild(passageText(text, span[0], span[1], true, lang), block.querySelector(".ptext"));
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
    var text = el("div", "clamp", [r[C.kind] === "fact" ? el("span", "kind", ["missed fact"]) : null,
      spoken(el("span", null, [r[C.text]]), S[r[C.lang]])]);
    var tr = el("tr", "row", [
      el("td", null, [S[r[C.system]]]),
      el("td", null, [S[r[C.case]] + " / " + S[r[C.answer]], el("span", "meta", [" " + r[C.ref]])]),
      el("td", "text", [text]),
      el("td", null, [labelChip(labelOf(r))]),
      el("td", null, [words(causeOf(r))]),
      el("td", "num", [r[C.score] === null ? "—" : r[C.score].toFixed(2)])
    ]);
    tr.dataset.row = String(i);
    clickable(tr, function () {
      openIndex = openIndex === i ? null : i;
      claims.draw();
    });
    if (openIndex === i) tr.classList.add("open");
    return tr;
  }

  var claims = pagedView(claimsTable.querySelector("tbody"), {shown: "shown", page: "page", prev: "prev", next: "next"},
    PAGE, rows.length, "rows", function (i, items) {
      items.push(rowElement(i));
      if (openIndex === i) items.push(detail(rows[i]));
    }, function () { openIndex = null; });

  claimsTable.querySelectorAll("th[data-sort] button").forEach(function (b) {
    b.addEventListener("click", function () { sortBy(b.parentNode.dataset.sort); });
  });
  [f.system, f.label, f.cause, f.confidence].forEach(function (s) { s.addEventListener("change", update); });
  f.text.addEventListener("input", update);

  // The claims of one answer only (from the answers table), every other filter cleared; null: every answer.
  var answerChip = document.getElementById("f-answer");
  function onlyClaimsOf(where) {
    onlyAnswer = where;
    answerChip.hidden = where === null;
    if (where !== null) {
      document.getElementById("f-answer-name").textContent = S[where[0]] + " / " + S[where[1]];
      [f.system, f.label, f.cause, f.confidence, f.text].forEach(function (s) { s.value = ""; });
    }
    update();
  }
  document.getElementById("f-answer-clear").addEventListener("click", function () { onlyClaimsOf(null); });
  update();

  // --- the answers table ---
  // Rows come worst support first (the terminal report's order): sorting by support is that order.
  var A = data.answers, arows = A.rows, AC = {};
  A.columns.forEach(function (name, i) { AC[name] = i; });
  var FIGURES = A.figures;
  var answersTable = document.getElementById("answers-table");
  var af = {
    system: document.getElementById("a-system"), finding: document.getElementById("a-finding"),
    text: document.getElementById("a-text")
  };
  // A figure is null (not measured) or [numerator, denominator, its text, and the value a convention
  // gives a zero denominator]; its value is null when undefined.
  function figureValue(fig) { return fig === null ? null : fig[1] ? fig[0] / fig[1] : fig.length > 3 ? fig[3] : null; }
  function findingCount(r) {
    var found = r[AC.findings], n = 0;
    for (var k = 1; k < found.length; k += 2) n += found[k];
    return n;
  }
  function hasCause(r, cause) {
    var found = r[AC.findings];
    for (var k = 0; k < found.length; k += 2) if (S[found[k]] === cause) return true;
    return false;
  }
  function findingsText(r) {
    var found = r[AC.findings], parts = [];
    for (var k = 0; k < found.length; k += 2) parts.push(words(S[found[k]]) + " " + found[k + 1]);
    return parts.join(" · ");
  }
  // The support ranking counts an unsure claim as supported: answers with neither a judged nor an
  // unsure claim (or no support measured) are not ranked.
  function unranked(i) {
    var r = arows[i], fig = r[AC.support];
    return fig === null || fig[1] + (r[AC.unsure] || 0) === 0;
  }
  function byNumber(col) { return function (a, b) { return arows[a][col] - arows[b][col]; }; }
  var ANSWER_KEYS = {  // [compare, rows kept last, direction of the first click: the worst first]
    system: [function (a, b) { return byRank(arows[a][AC.system], arows[b][AC.system]); }, never, 1],
    where: [function (a, b) {
      return byRank(arows[a][AC.case], arows[b][AC.case]) || byRank(arows[a][AC.answer], arows[b][AC.answer]);
    }, never, 1],
    claims: [byNumber(AC.claims), never, -1],
    support: [function (a, b) { return a - b; }, unranked, 1],
    unsure: [byNumber(AC.unsure), function (i) { return arows[i][AC.unsure] === null; }, -1],
    findings: [function (a, b) { return findingCount(arows[a]) - findingCount(arows[b]); }, never, -1]
  };
  FIGURES.filter(function (name) { return name !== "support"; }).forEach(function (name) {
    var col = AC[name];
    ANSWER_KEYS[name] = [function (a, b) { return figureValue(arows[a][col]) - figureValue(arows[b][col]); },
      function (i) { return figureValue(arows[i][col]) === null; }, 1];
  });
  var answerOrder = indexes(arows.length), answerKey = "support", answerDir = 1;

  fillOptions(af.system, distinctStrings(column(arows, AC.system)));
  var causes = [];
  arows.forEach(function (r) { for (var k = 0; k < r[AC.findings].length; k += 2) causes.push(r[AC.findings][k]); });
  fillOptions(af.finding, distinctStrings(causes));

  function keepAnswer() {
    var system = af.system.value, finding = af.finding.value, text = af.text.value.trim().toLowerCase();
    return function (i) {
      var r = arows[i];
      if (system && S[r[AC.system]] !== system) return false;
      if (finding === "-" ? r[AC.findings].length : finding === "+" ? !r[AC.findings].length
          : finding && !hasCause(r, finding)) return false;
      if (text && (S[r[AC.system]] + " " + S[r[AC.case]] + "/" + S[r[AC.answer]] + " " + findingsText(r))
        .toLowerCase().indexOf(text) < 0) return false;
      return true;
    };
  }
  function updateAnswers() {
    answers.shown = answerOrder.filter(keepAnswer());
    answers.page = 0;
    answers.draw();
  }
  function sortAnswersBy(key) {
    var spec = ANSWER_KEYS[key];
    answerDir = answerKey === key ? -answerDir : spec[2];
    answerKey = key;
    answerOrder = sortedRows(arows.length, spec[0], answerDir, spec[1]);
    markSorted(answersTable, key, answerDir);
    updateAnswers();
  }

  function notMeasured() { return el("span", "not-measured", ["not measured"]); }
  function answerRow(i) {
    var r = arows[i];
    var cells = [
      el("td", null, [S[r[AC.system]]]),
      el("td", null, [S[r[AC.case]] + " / " + S[r[AC.answer]]]),
      el("td", "num", [String(r[AC.claims]), r[AC.abstained] ? el("span", "meta", [" abstained"]) : null])
    ];
    FIGURES.forEach(function (name) {
      var fig = r[AC[name]];
      cells.push(el("td", "num", [fig === null ? notMeasured() : S[fig[2]]]));
    });
    cells.push(el("td", "num", [r[AC.unsure] === null ? notMeasured() : String(r[AC.unsure])]));
    cells.push(el("td", null, [findingsText(r) || "—"]));
    var tr = el("tr", "row", cells);
    tr.dataset.row = String(i);
    tr.title = "show this answer's claims";
    clickable(tr, function () {
      onlyClaimsOf([r[AC.case], r[AC.answer]]);
      document.getElementById("claims").scrollIntoView();
      var first = claimsTable.querySelector("tbody tr.row");
      if (first) first.focus({preventScroll: true});
    });
    return tr;
  }

  var answers = pagedView(answersTable.querySelector("tbody"),
    {shown: "answers-shown", page: "answers-page", prev: "answers-prev", next: "answers-next"},
    ANSWERS_PAGE, arows.length, "answers", function (i, items) { items.push(answerRow(i)); }, never);
  answersTable.querySelectorAll("th[data-sort] button").forEach(function (b) {
    b.addEventListener("click", function () { sortAnswersBy(b.parentNode.dataset.sort); });
  });
  [af.system, af.finding].forEach(function (s) { s.addEventListener("change", updateAnswers); });
  af.text.addEventListener("input", updateAnswers);
  updateAnswers();

  document.body.dataset.ready = "true";
})();
