// citeaudit desk: the page's state and wiring. Every change goes through the JSON API and the page is
// redrawn from the snapshot it returns, so the figures on screen are always the server's figures.
import { $, h, num, ratioText, setText, spoken, statementName } from "./dom.js";
import { drawThreads, renderMap2d, sceneOf } from "./map2d.js";
import { passageLanguages, renderInspector, suggestionSection } from "./inspector.js";
import { currentClaim, renderReview } from "./review.js";
import { createOverview } from "./overview.js";

// The exercises have a page (and a session) of their own, /walkthrough: they never mix with the user's cases.
const EXERCISES = location.pathname.replace(/\/+$/, "") === "/walkthrough";
const API = EXERCISES ? "/walkthrough/api" : "/api";

const SCORES = [
  ["citation_recall", "Citation recall"],
  ["citation_precision", "Citation precision"],
  ["support", "Support rate"],
  ["coverage", "Coverage"],
  ["citation_presence", "Citation presence"],
];

const state = {
  snap: null,
  selected: 0, // statement index
  thread: null, // passage id of the selected thread, if any
  scrollToThread: false,
  review: false,
  claim: 0,
  reviewer: "reviewer",
  note: null,
  busy: false, // a request is on its way; later actions wait in `queue` (see act)
  inflight: null, // the job being sent
  drafts: new Map(), // statement text typed but not saved yet, by case, answer and statement
  suggestions: new Map(), // suggested repairs, by case, its version, answer and statement (see suggestionOf)
  view: "2d",
  expanded: false,
  three: null, // the 3D view, once loaded
  walkthroughs: [],
  overview: null,
  exporting: false,
};
window.__desk = state; // for debugging and tests; nothing reads it back

// ------------------------------------------------------------------ API

class DeskFailure extends Error {}

/** A call to this page's API: `path` is written as "/api/...", and goes to /walkthrough/api/... on the exercises page. */
async function api(method, path, body) {
  let res;
  try {
    res = await fetch(API + path.slice("/api".length), {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    throw new DeskFailure(`The desk server did not answer (${err.message}). Is it still running?`);
  }
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  if (!res.ok) {
    let msg = data && data.error;
    if (!msg && data && Array.isArray(data.detail)) msg = data.detail.map((d) => `${(d.loc || []).join(".")}: ${d.msg}`).join("; ");
    throw new DeskFailure(msg || `${res.status} ${res.statusText}`);
  }
  return data;
}

function showMessage(text) {
  const el = $("#message");
  el.hidden = !text;
  setText(el, text);
}

function showStatus(text) {
  setText($("#status"), text);
}

// Every action that changes what the server holds or shows goes through one queue. An action made while
// another is being judged waits its turn and is built from the latest snapshot when it is sent (a second
// ticked citation adds to the first), so no click or key press is dropped; a refusal is shown, never hidden.
const queue = [];
const idleWaiters = []; // resolved when the queue is empty again (an export waits for the changes before it)

function whenIdle() {
  return state.busy ? new Promise((resolve) => idleWaiters.push(resolve)) : Promise.resolve();
}

/** Queue one action. `job.send()` runs when its turn comes and resolves to [snapshot, status text];
 * `job.after(snap)` adjusts the selection before the redraw; `job.intent` lets the page show a queued
 * citation change at once (see pendingCitations). */
function act(job) {
  queue.push(job);
  if (state.busy) showProgress();
  else drain();
}

async function drain() {
  state.busy = true;
  document.body.setAttribute("aria-busy", "true");
  const refusals = [];
  let changed = false;
  while (queue.length) {
    state.inflight = queue.shift();
    showProgress();
    try {
      const [snap, what] = await state.inflight.send();
      if (!refusals.length) showMessage(null);
      if (state.inflight.after) state.inflight.after(snap);
      apply(snap);
      showStatus(what);
      changed = true;
    } catch (err) {
      refusals.push(err.message);
      showMessage(refusals.join(" "));
      showStatus("");
    }
    state.inflight = null;
    if (state.snap) render(); // puts a refused box back as the server has it
  }
  state.busy = false;
  document.body.removeAttribute("aria-busy");
  document.body.dataset.pending = "0";
  for (const resolve of idleWaiters.splice(0)) resolve();
  if (changed && state.overview) state.overview.refresh(); // an edit or a label changes the run's figures too
}

/** While requests are on their way, the status line says so, and how many more wait their turn. */
function showProgress() {
  const waiting = queue.length;
  document.body.dataset.pending = String(waiting + (state.inflight ? 1 : 0));
  showStatus(`Working…${waiting ? ` (${waiting} more ${waiting === 1 ? "change waits its" : "changes wait their"} turn)` : ""}`);
}

/** A POST whose answer is a snapshot, as a queued job; `body` may be a function, built when it is sent. */
function post(path, body, what, after, intent) {
  return {
    send: async () => {
      const b = typeof body === "function" ? body() : body;
      return [await api("POST", path, b), typeof what === "function" ? what(b) : what];
    },
    after,
    intent,
  };
}

function ids() {
  const snap = state.snap;
  return { case: snap.case.id, answer: snap.answer ? snap.answer.answer : null };
}

const sameAnswer = (a, b) => a.case === b.case && a.answer === b.answer;
const draftKey = (where, index) => JSON.stringify([where.case, where.answer, index]);

/** The citations of statement `index` as they will be once the queued changes are applied: the latest
 * snapshot's, with each citation change on its way or waiting applied in order. */
function pendingCitations(index) {
  let cites = state.snap.answer.statements[index].citations;
  const here = ids();
  for (const job of [state.inflight, ...queue]) {
    const it = job && job.intent;
    if (it && it.statement === index && sameAnswer(it, here)) cites = it.citations || toggled(cites, it.passage, it.on);
  }
  return cites;
}

// ------------------------------------------------------------------ suggested repairs

const MAX_SUGGESTIONS = 200; // kept in the page; the server keeps its own until the case changes
const suggestionKey = (where, version, index) => JSON.stringify([where.case, version, where.answer, index]);

/** The suggested repair of statement `index` of the shown answer, for the case as the latest snapshot has it:
 * {state: "ready", data}, or "loading" while the server searches (asked here, once), or "failed". */
function suggestionOf(index) {
  const snap = state.snap;
  const st = snap.answer && snap.answer.statements[index];
  if (!st || st.kind !== "claim") return null; // nothing scored, nothing to repair
  const where = ids();
  const key = suggestionKey(where, snap.case.version, index);
  if (!state.suggestions.has(key)) {
    remember(key, { key, state: "loading" });
    fetchSuggestion(where, index, key);
  }
  return state.suggestions.get(key);
}

function remember(key, found) {
  state.suggestions.delete(key);
  state.suggestions.set(key, found);
  if (state.suggestions.size > MAX_SUGGESTIONS) state.suggestions.delete(state.suggestions.keys().next().value);
}

async function fetchSuggestion(where, index, key) {
  try {
    // a POST: the search judges, and records what it judges
    const data = await api("POST", "/api/suggestion", { case: where.case, answer: where.answer, statement: index });
    const made = suggestionKey(where, data.version, index);
    remember(made, { key: made, state: "ready", data });
    // a change reached the server first: the next snapshot brings the version this one was made for
    if (made !== key) remember(key, { key, state: "stale" });
  } catch (err) {
    remember(key, { key, state: "failed", error: err.message });
  }
  const el = document.getElementById("suggestion");
  if (el && el.dataset.key === key) {
    // only the section is drawn again: nothing else the reviewer is in the middle of is touched
    const focused = el.contains(document.activeElement);
    const section = suggestionSection(state.snap.answer.statements[state.selected], state.suggestions.get(key), actions,
      state.snap.answer.lang, passageLanguages(state.snap));
    el.replaceWith(section);
    if (focused) section.focus({ preventScroll: true });
  }
}

function toggled(citations, passage, on) {
  if (on) return citations.includes(passage) ? citations : [...citations, passage];
  return citations.filter((c) => c !== passage);
}

// ------------------------------------------------------------------ actions

const actions = {
  select(index, thread, opts = {}) {
    if (!state.snap || !state.snap.answer) return;
    const n = state.snap.answer.statements.length;
    if (index < 0 || index >= n) return;
    state.selected = index;
    state.thread = thread;
    state.scrollToThread = Boolean(thread);
    if (state.review) {
      const k = state.snap.answer.claims.findIndex((c) => c.statement === index);
      if (k >= 0 && state.snap.answer.claims[state.claim]?.statement !== index) { state.claim = k; state.note = null; }
    }
    render();
    const target = thread ? document.getElementById(`thread-${index}-${thread}`) : document.getElementById(`st-${index}`);
    if (target && state.view === "2d") target.focus({ preventScroll: false });
    if (opts.inspect && window.matchMedia("(max-width: 900px)").matches) {
      $("#inspector").scrollIntoView({ block: "start" });
    }
  },
  move(delta) {
    if (state.review) return actions.step(delta);
    if (!state.snap || !state.snap.answer) return;
    const n = state.snap.answer.statements.length;
    actions.select(Math.max(0, Math.min(n - 1, state.selected + delta)), null);
  },
  step(delta) {
    actions.goToClaim(state.claim + delta);
  },
  goToClaim(k) {
    const claims = state.snap && state.snap.answer ? state.snap.answer.claims : [];
    if (!claims.length) return;
    showClaim(Math.max(0, Math.min(claims.length - 1, k)));
    render();
  },
  nextUnsure() {
    // decided when its turn comes, from the latest snapshot: a label just given has left the queue by then
    let item = null;
    act({
      send: async () => {
        item = nextQueued(state.snap);
        if (!item) return [state.snap, "No claim awaits review."];
        const what = `Next unsure claim (${item.case}, answer ${item.answer}).`;
        if (sameAnswer(item, ids())) return [state.snap, what];
        return [await api("GET", `/api/state?${new URLSearchParams({ case: item.case, answer: item.answer })}`), what];
      },
      after: (snap) => { if (item) showClaim(queuedIndex(snap, item), snap); },
    });
  },
  /** Cite `passage` from statement `index` (or stop citing it), on top of every change made before. */
  cite(index, passage, on) {
    const where = ids();
    const name = statementName(state.snap.answer.statements[index]);
    act(post("/api/edit", () => {
      // built when sent: the statement's citations as the changes before this one left them
      const latest = sameAnswer(ids(), where) ? state.snap.answer.statements[index].citations : [];
      return { ...where, statement: index, citations: toggled(latest, passage, on) };
    }, (b) => `${name} now cites ${b.citations.length ? b.citations.join(", ") : "nothing"}.`,
    null, { ...where, statement: index, passage, on }));
    render(); // the box shows the change at once, while it waits its turn
  },
  citationsOf: (index) => pendingCitations(index),
  suggestionOf: (index) => suggestionOf(index),
  /** Apply the suggested repair of statement `index`: the same edit as ticking and unticking its boxes. */
  applySuggestion(index) {
    const st = state.snap.answer && state.snap.answer.statements[index];
    if (!st) return;
    const found = suggestionOf(index);
    const s = found && found.state === "ready" ? found.data : null;
    const review = s && !s.claims.some((c) => c.suggested) && s.claims.find((c) => c.action === "review");
    if (review) { showStatus(`Nothing to apply to ${statementName(st)} — ${review.note}.`); return; }
    if (!s || !s.citations) { showStatus(`No suggested repair to apply to ${statementName(st)}.`); return; }
    const where = ids();
    const note = s.claims.find((c) => c.suggested).note;
    act(post("/api/edit", { ...where, statement: index, citations: s.citations },
      `Applied to ${statementName(st)}: ${note}. It now cites ${s.citations.join(", ")}.`,
      null, { ...where, statement: index, citations: s.citations }));
    render(); // the boxes show the new citations at once, while the change waits its turn
  },
  draft(index, text) {
    state.drafts.set(draftKey(ids(), index), text);
  },
  draftOf: (index) => state.drafts.get(draftKey(ids(), index)),
  saveText(index, text) {
    const where = ids();
    const name = statementName(state.snap.answer.statements[index]);
    act(post("/api/edit", { ...where, statement: index, text }, `Text of ${name} saved.`,
      () => state.drafts.delete(draftKey(where, index))));
  },
  label(claim, label) {
    if (!state.reviewer.trim()) { showMessage("A human label needs the reviewer's name."); $("#reviewer")?.focus(); return; }
    const body = {
      ...ids(), statement: claim.statement, claim: claim.index, label, note: state.note || "", reviewer: state.reviewer.trim(),
    };
    act(post("/api/human", body, `Labelled ${label} by ${body.reviewer}.`));
    // on to the next claim at once, so that the next key press labels it (the last one stays, to show its label)
    const claims = state.snap.answer ? state.snap.answer.claims : [];
    if (state.claim + 1 < claims.length) { showClaim(state.claim + 1); render(); }
  },
  walkthrough(name, variant) {
    act(post("/api/walkthrough", { name, variant: variant || null },
      `Exercise loaded: ${name}${variant ? ` (${variant})` : ""}.`, resetSelection));
  },
  reset() {
    act(post("/api/reset", ids(), "Case reset to its start.", resetSelection));
  },
  open(caseId, answerId) {
    const q = new URLSearchParams(answerId ? { case: caseId, answer: answerId } : { case: caseId });
    act({ send: async () => [await api("GET", `/api/state?${q}`), ""], after: resetSelection });
  },
  toggleReview() {
    state.review = !state.review;
    if (state.review) {
      const claims = state.snap.answer ? state.snap.answer.claims : [];
      const k = claims.findIndex((c) => c.statement === state.selected);
      state.claim = k >= 0 ? k : 0;
      state.note = null;
      if (claims[state.claim]) state.selected = claims[state.claim].statement;
    }
    render();
    if (state.review) $("#review").scrollIntoView({ block: "nearest" });
  },
};

/** Make claim `k` of the answer the one under review, with its statement selected. */
function showClaim(k, snap = state.snap) {
  const claims = snap.answer ? snap.answer.claims : [];
  state.claim = Math.max(0, k);
  state.note = null;
  state.thread = null;
  if (claims[state.claim]) state.selected = claims[state.claim].statement;
}

function queuedIndex(snap, item) {
  const claims = snap.answer ? snap.answer.claims : [];
  return claims.findIndex((c) => c.statement === item.statement && c.index === item.claim);
}

/** The first queued claim after the one under review, in case, answer and claim order; from the top past the end. */
function nextQueued(snap) {
  const items = snap.queue.items;
  if (!items.length) return null;
  const caseOf = (id) => snap.cases.findIndex((c) => c.id === id);
  const answerOf = (id) => snap.case.answers.findIndex((a) => a.id === id);
  const claim = currentClaim(snap, state);
  const here = [caseOf(snap.case.id), snap.answer ? answerOf(snap.answer.answer) : -1,
    claim ? claim.statement : -1, claim ? claim.index : -1];
  const keyOf = (q) => {
    const c = caseOf(q.case);
    // only the shown case's answer order is known here, and only it is needed: other cases compare by case
    return [c, c === here[0] ? answerOf(q.answer) : 0, q.statement, q.claim];
  };
  const after = (a, b) => { for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return a[i] > b[i]; return false; };
  return items.find((q) => after(keyOf(q), here)) || items[0];
}

function resetSelection() {
  state.selected = 0;
  state.thread = null;
  state.claim = 0;
  state.note = null;
  state.drafts.clear();
}

// ------------------------------------------------------------------ rendering

function apply(snap) {
  state.snap = snap;
  const n = snap.answer ? snap.answer.statements.length : 0;
  if (state.selected >= n) state.selected = Math.max(0, n - 1);
  const claims = snap.answer ? snap.answer.claims : [];
  if (state.claim >= claims.length) state.claim = Math.max(0, claims.length - 1);
  if (state.thread && !(snap.answer && snap.answer.statements[state.selected]?.citations.includes(state.thread))) state.thread = null;
}

function render() {
  const snap = state.snap;
  if (!snap) return;
  const focused = document.activeElement && document.activeElement.id;
  renderHeader(snap);
  renderScores(snap);
  renderMap2d(snap, state, actions);
  renderInspector(snap, state, actions);
  renderReview(snap, state, actions);
  state.scrollToThread = false;
  if (state.three) state.three.update(sceneOf(snap, state));
  if (focused && document.activeElement !== document.getElementById(focused)) {
    // Redrawing replaced the focused control: focus its successor (threads refocus themselves once drawn).
    const el = document.getElementById(focused);
    if (el) el.focus({ preventScroll: true });
    else if (focused === "apply-suggestion") $("#suggestion")?.focus({ preventScroll: true }); // applied: gone
    else if (focused.startsWith("thread-")) requestAnimationFrame(() => document.getElementById(focused)?.focus({ preventScroll: true }));
  }
}

function renderHeader(snap) {
  const signature = h("span", { class: "signature", title: snap.judge }, snap.judge);
  const counts = `${snap.case_count.toLocaleString("en")} ${snap.case_count === 1 ? "case" : "cases"}, `
    + `${snap.answer_count.toLocaleString("en")} ${snap.answer_count === 1 ? "answer" : "answers"}`;
  $("#source").replaceChildren(h("span", {}, `${snap.source} · ${counts} · judge `), signature);
  const status = snap.judge_status || { live: true, note: null };
  const note = $("#judge-note");
  note.hidden = !status.note;
  note.classList.toggle("replay-only", !status.live);
  setText(note, status.note || "");
  const caseSel = $("#case-select");
  caseSel.replaceChildren(...snap.cases.map((c) =>
    h("option", { value: c.id, selected: c.id === snap.case.id }, `${c.id} — ${c.question}`)));
  if (snap.case_count > snap.cases.length) {
    caseSel.append(h("option", { disabled: true }, `… ${(snap.case_count - snap.cases.length).toLocaleString("en")} more: find them in the answers table`));
  }
  caseSel.value = snap.case.id;
  const ansSel = $("#answer-select");
  ansSel.replaceChildren(...snap.case.answers.map((a) =>
    h("option", { value: a.id, selected: snap.answer && a.id === snap.answer.answer }, a.system === a.id ? a.id : `${a.system} (${a.id})`)));
  if (snap.answer) ansSel.value = snap.answer.answer;
  ansSel.disabled = !snap.case.answers.length;
  $("#question").replaceChildren("Question: ", h("span", { id: "question-text", lang: spoken(snap.case.lang) }, snap.case.question));
  document.documentElement.lang = snap.lang; // the language most of the session's answers are in
  const toggle = $("#review-toggle");
  toggle.setAttribute("aria-pressed", String(state.review));
  toggle.replaceChildren("Review mode", snap.queue.count
    ? h("span", { class: "badge unsure", id: "review-toggle-count" }, `${snap.queue.count} unsure`) : "");

  const wt = snap.walkthrough && snap.case.id === `returns-desk-${snap.walkthrough.name}` ? snap.walkthrough : null;
  for (const btn of document.querySelectorAll("#walkthroughs button")) {
    const on = Boolean(wt) && btn.dataset.walkthrough === wt.name && (btn.dataset.variant || null) === (wt.variant || null);
    btn.setAttribute("aria-pressed", String(on));
  }
  $("#walkthrough").hidden = !wt;
  if (!wt) return;
  const variant = wt.variant && wt.variants.find((v) => v.name === wt.variant);
  $("#walkthrough-title").textContent = `Exercise: ${wt.title}${variant ? ` — ${variant.title}` : ""}`;
  $("#walkthrough-instructions").textContent = wt.instructions;
  const m = snap.answer ? snap.answer.metrics : {};
  const recall = ratioText(m.citation_recall)[1];
  const precision = ratioText(m.citation_precision)[1];
  $("#goals").replaceChildren(...wt.goals.map((g, i) => {
    const met = g.recall === recall && g.precision === precision;
    return h("li", { id: `goal-${i}`, dataset: { met: String(met) } },
      h("span", { class: "goal-mark", "aria-label": met ? "reached" : "not reached" }, met ? "✓" : "○"),
      `${g.step}: recall ${g.recall}, precision ${g.precision}`);
  }));
}

function renderScores(snap) {
  const m = snap.answer ? snap.answer.metrics : null;
  $("#scores").replaceChildren(...SCORES.map(([key, label]) => {
    const r = m ? m[key] : null;
    const [text, counts] = ratioText(r);
    return h("div", { class: "score" }, h("dt", {}, label),
      h("dd", { id: `score-${key}`, dataset: { counts }, title: r ? r.signature : "" }, text));
  }));
  if (snap.answer && snap.answer.abstained) $("#scores").append(h("div", { class: "score abstained" }, "This answer abstains."));
  $("#retrieval").replaceChildren(...Object.entries(snap.retrieval).map(([name, r]) =>
    h("div", { class: "score" }, h("dt", {}, name), h("dd", { title: r.signature }, ratioText(r)[0]))));
  const labels = snap.answer ? snap.answer.labels : null;
  $("#labels-count").textContent = labels
    ? `Claim labels: ${Object.entries(labels).map(([k, v]) => `${k} ${num(v)}`).join(" · ")}` : "";
}

function renderWalkthroughBar(list) {
  const bar = $("#walkthroughs");
  bar.replaceChildren(...list.map((w) => {
    const main = h("button", { type: "button", id: `wt-${w.name}`, dataset: { walkthrough: w.name }, title: w.instructions,
      onclick: () => actions.walkthrough(w.name, null) }, w.title);
    if (!w.variants.length) return main;
    return h("span", { class: "variant-group", role: "group", "aria-label": `${w.title} setups` }, main,
      w.variants.map((v) => h("button", {
        type: "button", id: `wt-${w.name}-${v.name}`, dataset: { walkthrough: w.name, variant: v.name },
        onclick: () => actions.walkthrough(w.name, v.name),
      }, v.title)));
  }));
}

// ------------------------------------------------------------------ 3D view

function webglAvailable() {
  try {
    const c = document.createElement("canvas");
    return Boolean(c.getContext("webgl2") || c.getContext("webgl"));
  } catch {
    return false;
  }
}

function fallback(note) {
  state.view = "2d";
  const el = $("#map-note");
  el.textContent = note;
  el.hidden = false;
  setView("2d");
}

async function setView(view) {
  if (view === "3d" && !state.three) {
    if (!webglAvailable()) return fallback("3D needs WebGL, which this browser does not offer: showing the 2D map.");
    let mod;
    try {
      mod = await import("./build/three-view.js");
    } catch {
      return fallback("The 3D view is not built (run scripts/build-desk.sh): showing the 2D map.");
    }
    try {
      state.three = mod.createThreeView($("#map-3d"), {
        onSelect: (index, thread) => actions.select(index, thread || null, { inspect: true }),
      });
    } catch (err) {
      return fallback(`The 3D view could not start (${err.message}): showing the 2D map.`);
    }
  }
  state.view = view;
  const is3d = view === "3d";
  $("#view-3d-about").hidden = !is3d;
  $("#map-2d").hidden = is3d;
  $("#map-3d").hidden = !is3d;
  $("#legend").hidden = false;
  $("#view-2d").setAttribute("aria-pressed", String(!is3d));
  $("#view-3d").setAttribute("aria-pressed", String(is3d));
  $("#expand").hidden = !is3d;
  if (!is3d) setExpanded(false);
  if (is3d) {
    $("#map-note").hidden = true;
    state.three.update(sceneOf(state.snap, state));
    state.three.resize();
  } else if (state.snap) {
    drawThreads(state.snap, state, actions);
  }
}

function setExpanded(on) {
  state.expanded = on;
  $("#map").classList.toggle("expanded", on);
  $("#expand").setAttribute("aria-pressed", String(on));
  $("#expand").textContent = on ? "Leave expanded workspace" : "Expand workspace";
  if (state.three) state.three.resize();
}

// ------------------------------------------------------------------ keyboard

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  const typing = t && (t.tagName === "INPUT" && t.type !== "checkbox" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
  if (ev.key === "Escape" && state.expanded) { setExpanded(false); $("#expand").focus(); return; }
  if (typing || !state.snap) return;
  const k = ev.key;
  if (k === "j" || k === "k") { ev.preventDefault(); actions.move(k === "j" ? 1 : -1); focusSelected(); }
  else if (k === "i") {
    ev.preventDefault();
    const el = document.querySelector("#inspector .cite-toggle") || $("#statement-text");
    if (el) el.focus();
  } else if (k === "a") { ev.preventDefault(); actions.applySuggestion(state.selected); }
  else if (k === "r") { ev.preventDefault(); actions.toggleReview(); }
  else if (k === "v") { ev.preventDefault(); setView(state.view === "3d" ? "2d" : "3d"); }
  else if (state.review && k === "u") { ev.preventDefault(); actions.nextUnsure(); }
  else if (state.review && /^[1-4]$/.test(k)) {
    const claim = currentClaim(state.snap, state);
    if (claim) { ev.preventDefault(); actions.label(claim, state.snap.labels[Number(k) - 1]); }
  }
}

function focusSelected() {
  if (state.view !== "2d") return;
  const el = document.getElementById(`st-${state.selected}`);
  if (el) el.focus();
}

// ------------------------------------------------------------------ start

/** Download a run log of the session, showing how far the export has got while the server builds it. */
async function exportRun() {
  if (state.exporting) return;
  state.exporting = true;
  const button = $("#export");
  const box = $("#export-status");
  const bar = $("#export-progress");
  button.disabled = true;
  box.hidden = false;
  bar.removeAttribute("value"); // indeterminate until the server says how far it is
  setText($("#export-text"), "Exporting the run log…");
  let finished = false;
  const poll = setInterval(async () => {
    try {
      const p = await api("GET", "/api/export/progress");
      // a poll answered after the export ended must not write over the final message
      if (p.total && !finished) {
        bar.max = p.total;
        bar.value = p.done;
        setText($("#export-text"), p.done < p.total
          ? `Exporting: ${p.done.toLocaleString("en")} of ${p.total.toLocaleString("en")} cases scored…`
          : `Exporting: all ${p.total.toLocaleString("en")} cases scored, writing the run log…`);
      }
    } catch { /* the export itself reports failures */ }
  }, 250);
  try {
    await whenIdle(); // the run log holds every change made before the click
    // a POST (it builds the run log, seconds on a large run), with a JSON body as every POST has
    const res = await fetch(`${API}/export`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    if (!res.ok) {
      let msg = `${res.status} ${res.statusText}`;
      try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
      throw new DeskFailure(msg);
    }
    const blob = await res.blob();
    const url = URL.createObjectURL(blob);
    const link = h("a", { href: url, download: "desk-run.json", id: "export-download" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    bar.max = 1;
    bar.value = 1;
    setText($("#export-text"), `Run log exported (${Math.round(blob.size / 1024).toLocaleString("en")} KiB).`);
    document.body.dataset.exported = "true";
  } catch (err) {
    box.hidden = true;
    showMessage(err instanceof DeskFailure ? err.message : `The export failed (${err.message}).`);
  } finally {
    finished = true;
    clearInterval(poll);
    state.exporting = false;
    button.disabled = false;
  }
}

async function start() {
  $("#case-select").addEventListener("change", (ev) => actions.open(ev.target.value, null));
  $("#answer-select").addEventListener("change", (ev) => actions.open(state.snap.case.id, ev.target.value));
  $("#reset").addEventListener("click", () => actions.reset());
  $("#review-toggle").addEventListener("click", () => actions.toggleReview());
  $("#export").addEventListener("click", () => exportRun());
  $("#view-2d").addEventListener("click", () => setView("2d"));
  $("#view-3d").addEventListener("click", () => setView("3d"));
  $("#expand").addEventListener("click", () => setExpanded(!state.expanded));
  document.addEventListener("keydown", onKey);
  new ResizeObserver(() => { if (state.snap && state.view === "2d") drawThreads(state.snap, state, actions); }).observe($("#map-2d"));
  $("#exercises-link").hidden = EXERCISES;
  $("#back-link").hidden = !EXERCISES;
  $("#walkthrough-bar").hidden = !EXERCISES;
  if (EXERCISES) document.title = "citeaudit desk: exercises";
  showStatus("Loading: the first page judges every case once (kept for the session, and in --store for good)…");
  try {
    if (EXERCISES) {
      state.walkthroughs = await api("GET", "/api/walkthroughs");
      renderWalkthroughBar(state.walkthroughs);
    }
    apply(await api("GET", "/api/state"));
    render();
    if (!EXERCISES) {
      state.overview = createOverview({ api, labels: state.snap.labels, open: (c, a) => actions.open(c, a) });
      await state.overview.refresh();
    }
    showStatus("");
    document.body.dataset.pending = "0"; // changes sent and not yet answered (tests wait for 0)
    document.body.dataset.ready = "true";
  } catch (err) {
    showMessage(err.message);
  }
}

start();
