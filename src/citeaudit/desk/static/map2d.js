// The 2D evidence map: statements in a column in front (left), retrieved passages by rank (right), and an
// SVG thread for every citation pointer, coloured by that citation's check.
import { $, h, s, STATUS_TEXT, isQueued, isScored, labelClass, labelText, markBidi, spoken, statementName, threadStatus } from "./dom.js";

/** Passages in rank order; unranked ones after, in their given order. */
export function rankedPassages(snap) {
  return snap.passages
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.rank ?? Infinity) - (b.p.rank ?? Infinity) || a.i - b.i)
    .map(({ p }) => p);
}

/** The scene both views draw: statements, passages and threads with their status. Its texts are for a
 * canvas, so direction controls are written out as marks (`label` is a passage id as shown). */
export function sceneOf(snap, state) {
  const statements = snap.answer ? snap.answer.statements : [];
  const threads = [];
  for (const st of statements) {
    for (const c of st.citations) threads.push({ statement: st.index, passage: c, status: threadStatus(st, c) });
  }
  return {
    statements: statements.map((st) => ({
      index: st.index, name: markBidi(statementName(st)), text: markBidi(st.text), kind: st.kind,
      label: st.judgment ? labelText(st.judgment) : null, scored: isScored(st),
    })),
    passages: rankedPassages(snap).map((p) => ({
      // no passage text in 3D: drawn small on a turned card it is not readable (the inspector shows it)
      id: p.id, label: markBidi(p.id), title: p.title && markBidi(p.title), text: "", rank: p.rank,
    })),
    threads,
    selected: state.selected,
    thread: state.thread,
  };
}

export function renderMap2d(snap, state, on) {
  const answer = snap.answer;
  const statements = answer ? answer.statements : [];
  const cited = new Set(statements[state.selected] ? statements[state.selected].citations : []);
  const citedAny = new Set(statements.flatMap((st) => st.citations));
  const unsure = new Set(answer ? answer.claims.filter((c) => isQueued(snap, c)).map((c) => c.statement) : []);

  $("#statements").replaceChildren(
    ...(statements.length ? statements.map((st) => statementEl(st, unsure.has(st.index), state, on, answer.lang))
      : [h("p", { class: "muted" }, "This answer has no statements.")]),
  );
  $("#passages").replaceChildren(
    ...rankedPassages(snap).map((p) =>
      h("div", {
        class: `passage${cited.has(p.id) ? " cited" : ""}${citedAny.has(p.id) ? "" : " uncited"}`,
        id: `passage-${p.id}`, dataset: { passage: p.id },
        title: `${p.id} · ${p.version || "no version"}`,
      },
      h("span", { class: "p-head" },
        h("span", { class: "p-rank" }, p.rank ? `#${p.rank}` : "unranked"),
        h("span", { class: "p-id" }, p.id),
        p.title ? h("span", { class: "p-title" }, p.title) : null),
      h("span", { class: "p-text", lang: spoken(p.lang) }, p.text))),
  );
  requestAnimationFrame(() => drawThreads(snap, state, on));
}

/** One statement of the map; `unsure`: one of its claims waits in the review queue. */
function statementEl(st, unsure, state, on, lang) {
  const selected = st.index === state.selected;
  const scored = isScored(st);
  const label = st.judgment ? labelClass(st.judgment) : null;
  const classes = ["statement", `kind-${st.kind}`];
  if (!scored) classes.push("unscored");
  if (label) classes.push(`label-${label}`);
  const cites = !scored
    ? `not scored (${st.kind})`
    : st.citations.length ? `cites ${st.citations.join(", ")}` : "no citation";
  const el = h("div", {
    class: classes.join(" "), id: `st-${st.index}`, role: "option",
    "aria-selected": selected ? "true" : "false", tabindex: selected ? "0" : "-1",
    dataset: { index: st.index },
    onclick: () => on.select(st.index, null),
    onkeydown: (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); on.select(st.index, null, { inspect: ev.key === "Enter" }); }
      else if (ev.key === "ArrowDown") { ev.preventDefault(); ev.stopPropagation(); on.move(1); }
      else if (ev.key === "ArrowUp") { ev.preventDefault(); ev.stopPropagation(); on.move(-1); }
    },
  },
  h("span", { class: "st-head" },
    h("span", { class: "st-id" }, statementName(st)),
    label ? h("span", { class: `badge ${label}` }, labelText(st.judgment)) : null,
    unsure ? h("span", { class: "badge unsure", title: "a claim of this statement waits for a human label" }, "unsure") : null,
    !scored ? h("span", { class: "badge" }, st.kind) : null),
  h("span", { class: "st-text", lang: spoken(lang) }, st.text),
  h("span", { class: "st-cites" }, cites));
  return el;
}

/** Threads are drawn after layout, from the boxes' positions; redrawn when the map changes size. */
export function drawThreads(snap, state, on) {
  const svg = $("#threads");
  const host = $("#map-2d");
  if (!svg || !host || host.hidden || !snap.answer) { if (svg) svg.replaceChildren(); return; }
  const focusedId = document.activeElement && document.activeElement.closest && document.activeElement.closest(".thread")
    ? document.activeElement.closest(".thread").id : null;
  const box = host.getBoundingClientRect();
  svg.setAttribute("viewBox", `0 0 ${Math.max(1, box.width)} ${Math.max(1, box.height)}`);
  const groups = [];
  for (const st of snap.answer.statements) {
    const from = document.getElementById(`st-${st.index}`);
    if (!from) continue;
    const fb = from.getBoundingClientRect();
    st.citations.forEach((c, k) => {
      const to = document.getElementById(`passage-${c}`);
      if (!to) return;
      const tb = to.getBoundingClientRect();
      const n = st.citations.length;
      const x1 = fb.right - box.left;
      const y1 = fb.top - box.top + fb.height * (k + 1) / (n + 1);
      const x2 = tb.left - box.left;
      const y2 = tb.top - box.top + tb.height / 2;
      const dx = Math.max(16, (x2 - x1) / 2);
      const d = `M ${x1} ${y1} C ${x1 + dx} ${y1}, ${x2 - dx} ${y2}, ${x2} ${y2}`;
      const status = threadStatus(st, c);
      const mine = st.index === state.selected;
      const cls = ["thread", status, mine ? "active" : "dim"];
      if (mine && state.thread === c) cls.push("selected");
      const name = `${statementName(st)} cites ${c}: ${STATUS_TEXT[status]}`;
      groups.push(s("g", {
        class: cls.join(" "), id: `thread-${st.index}-${c}`, tabindex: "0", role: "button",
        "aria-label": name, "aria-pressed": mine && state.thread === c ? "true" : "false",
        dataset: { statement: st.index, passage: c, status },
        onclick: () => on.select(st.index, c, { inspect: true }),
        onkeydown: (ev) => {
          if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); on.select(st.index, c, { inspect: true }); }
        },
      },
      s("title", {}, name),
      s("path", { class: "hit", d }),
      s("path", { class: "wire", d })));
    });
  }
  svg.replaceChildren(...groups);
  if (focusedId && document.getElementById(focusedId)) document.getElementById(focusedId).focus();
}
