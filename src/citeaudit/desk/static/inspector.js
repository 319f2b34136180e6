// The inspector: one statement, its citations, each cited passage's exact text (evidence span highlighted),
// the judgment, the per-citation checks, the suggested repair, the repair controls and the seed's JSON objects.
import { $, h, STATUS_TEXT, isScored, jsonText, labelClass, labelText, markBidi, spoken, statementName, threadStatus, unmarkBidi } from "./dom.js";
import { rankedPassages } from "./map2d.js";

/** Each passage's language, by id: the snapshot's passages say it (docs/desk.md). */
export function passageLanguages(snap) {
  return new Map(snap.passages.map((p) => [p.id, p.lang]));
}

export function renderInspector(snap, state, on) {
  const body = $("#inspector-body");
  const answer = snap.answer;
  const st = answer && answer.statements[state.selected];
  if (!st) {
    body.replaceChildren(h("p", { class: "muted" }, answer ? "This answer has no statements." : "This case has no answers."));
    return;
  }
  const seed = answer.inspector[state.selected];
  const languages = passageLanguages(snap); // the seed objects stay as they are
  const claims = answer.claims.filter((c) => c.statement === st.index);
  const evidence = claims.map((c) => c.judgment && c.judgment.evidence).filter(Boolean);
  if (st.judgment && st.judgment.evidence) evidence.unshift(st.judgment.evidence);

  body.replaceChildren(...[
    h("h3", { id: "inspector-title" }, `Statement ${statementName(st)}`,
      isScored(st) ? null : h("span", { class: "badge" }, ` ${st.kind}: not scored`)),
    h("p", { class: "statement-text", id: "inspector-text", lang: spoken(answer.lang) }, st.text),
    h("dl", { class: "kv" },
      h("dt", {}, "Citations"),
      h("dd", { id: "inspector-citations" }, st.citations.length ? st.citations.join(", ") : "none"),
      h("dt", {}, "Cited set supports"),
      h("dd", {}, st.cited_set_supports === null || st.cited_set_supports === undefined ? "n/a"
        : st.cited_set_supports ? "yes" : "no"),
      ...judgmentRows(st, claims, answer.lang)),
    h("h4", {}, "Cited passages"),
    seed.citedPassages.length
      ? seed.citedPassages.map((p) => citedPassage(p, st, evidence, state, languages.get(p.id)))
      : h("p", { class: "muted" }, "No citation: nothing to follow."),
    st.citation_checks && st.citation_checks.length ? checksTable(st) : null,
    suggestionSection(st, on.suggestionOf(st.index), on, answer.lang, languages),
    repair(snap, st, on),
    h("details", { id: "inspector-json" },
      h("summary", {}, "Statement and check as JSON"),
      h("p", { class: "muted" }, "The statement with its cited passages (a long passage as its folded pieces)"),
      h("pre", { id: "inspector-statement-json", tabindex: "0" },
        jsonText({ statement: seed.statement, citedPassages: seed.citedPassages })),
      h("p", { class: "muted" }, "The check of its citations"),
      h("pre", { id: "inspector-check-json", tabindex: "0" }, jsonText(seed.check))),
  ].flat(Infinity).filter(Boolean));
  if (state.thread) {
    const el = document.getElementById(`cited-${state.thread}`);
    if (el && state.scrollToThread) el.scrollIntoView({ block: "nearest" });
  }
}

function judgmentRows(st, claims, lang) {
  const rows = [];
  const shown = claims.length > 1 ? claims : (st.judgment ? [{ text: null, judgment: st.judgment }] : []);
  if (!shown.length) return [h("dt", {}, "Judgment"), h("dd", {}, "none (not scored)")];
  shown.forEach((c, k) => {
    const j = c.judgment;
    rows.push(
      h("dt", {}, claims.length > 1 ? `Claim ${k + 1}` : "Judgment"),
      h("dd", { class: "judgment", id: claims.length > 1 ? `inspector-judgment-${k}` : "inspector-judgment" },
        c.text ? [h("span", { class: "claim-text", lang: spoken(lang) }, c.text), " "] : null,
        h("span", { class: `badge ${labelClass(j)}` }, labelText(j)), " ",
        h("span", { class: "muted" }, "by "), h("span", { class: "muted signature", title: j.judge }, j.judge),
        j.explanation ? h("span", { class: "explanation" }, [h("br"), j.explanation]) : null,
        j.scores ? h("span", { class: "muted" }, [h("br"),
          Object.entries(j.scores).map(([k2, v]) => `${k2} ${Number(v).toFixed(2)}`).join(" · ")]) : null),
    );
  });
  return rows;
}

/** A long passage as the server folded it: its pieces, each with the evidence it holds highlighted, and a
 * note of how much is folded away between them. */
function foldedText(p, ev) {
  const out = [];
  let at = 0;
  for (const piece of p.pieces) {
    if (piece.start > at) out.push(h("span", { class: "fold" }, ` … ${(piece.start - at).toLocaleString("en")} characters folded … `));
    const end = piece.start + piece.text.length;
    if (ev && ev.start >= piece.start && ev.end <= end) {
      const a = ev.start - piece.start;
      const b = ev.end - piece.start;
      out.push(piece.text.slice(0, a), h("mark", { title: "evidence span" }, piece.text.slice(a, b)), piece.text.slice(b));
    } else {
      out.push(piece.text);
    }
    at = end;
  }
  if (p.length > at) out.push(h("span", { class: "fold" }, ` … ${(p.length - at).toLocaleString("en")} characters folded`));
  return out;
}

/** The evidence span among `evidence` that lies in passage `p`, if any. */
function spanIn(p, evidence) {
  const length = p.text === null ? p.length : p.text.length;
  return evidence.find((e) => e && e.passage === p.id && e.end > e.start && e.end <= length);
}

/** A passage's text as the server sent it (whole, or folded), the evidence span `ev` highlighted, or the whole
 * passage when the judgment gives no span. */
function passageText(p, ev) {
  if (p.text === null) return foldedText(p, ev);
  if (ev) return [p.text.slice(0, ev.start), h("mark", { title: "evidence span" }, p.text.slice(ev.start, ev.end)), p.text.slice(ev.end)];
  return [h("mark", { title: "whole passage (the judgment gives no evidence span)" }, p.text)];
}

function citedPassage(p, st, evidence, state, lang) {
  const ev = spanIn(p, evidence);
  const status = threadStatus(st, p.id);
  const check = (st.citation_checks || []).find((c) => c.id === p.id);
  const text = passageText(p, ev);
  return h("article", {
    class: `cited-passage${state.thread === p.id ? " focus-thread" : ""}`, id: `cited-${p.id}`, dataset: { passage: p.id },
  },
  h("div", { class: "p-head" },
    h("strong", {}, p.id),
    h("span", { class: "muted" }, `version ${p.version || "none"} · span ${p.span.start}–${p.span.end}`),
    h("span", { class: `status-${status}` }, STATUS_TEXT[status])),
  h("blockquote", { class: "passage-text", lang: spoken(lang) }, text),
  h("p", { class: "muted" }, ev ? `Highlighted: evidence span ${ev.start}–${ev.end} of this passage's text.`
    : p.text === null ? "The judgment gives no evidence span: shown are the passage's start and where the statement's words appear in it."
      : "Highlighted: the whole passage (the judgment gives no evidence span)."),
  p.text === null ? h("p", { class: "muted fold-note" }, `A long passage (${p.length.toLocaleString("en")} characters): shown around its evidence, the rest folded.`) : null,
  check && check.reason ? h("p", { class: "muted" }, check.reason) : null);
}

function yesNo(v) {
  return v === null || v === undefined ? "–" : v ? "yes" : "no";
}

function checksTable(st) {
  return h("table", { class: "checks", id: "inspector-checks" },
    h("caption", { class: "muted" }, "Per-citation checks"),
    h("thead", {}, h("tr", {}, h("th", {}, "citation"), h("th", {}, "supports alone"),
      h("th", {}, "set holds without it"), h("th", {}, "precise"))),
    h("tbody", {}, st.citation_checks.map((c) =>
      h("tr", {}, h("td", {}, c.id), h("td", {}, yesNo(c.alone)), h("td", {}, yesNo(c.without)),
        h("td", { class: c.precise ? "status-precise" : "" }, yesNo(c.precise))))));
}

function repair(snap, st, on) {
  // the boxes show queued changes too: a box ticked while another change is judged stays ticked
  const current = on.citationsOf(st.index);
  const options = rankedPassages(snap).map((p) => h("label", {},
    h("input", {
      type: "checkbox", id: `cite-${p.id}`, class: "cite-toggle", dataset: { passage: p.id },
      checked: current.includes(p.id),
      onchange: (ev) => on.cite(st.index, p.id, ev.target.checked),
    }),
    h("span", {}, h("strong", {}, p.id), p.title ? ` · ${p.title}` : "")));
  const textarea = h("textarea", {
    id: "statement-text", "aria-label": "Statement text", oninput: (ev) => on.draft(st.index, ev.target.value),
  });
  // marks in the field too; saving turns them back into the controls. Text typed and not saved yet stays.
  textarea.value = on.draftOf(st.index) ?? markBidi(st.text);
  return h("section", { class: "repair", "aria-labelledby": "repair-heading" },
    h("h4", { id: "repair-heading" }, "Repair"),
    h("fieldset", {}, h("legend", {}, `Citations of ${statementName(st)}`), h("div", { class: "cite-options" }, options)),
    h("div", { class: "text-edit" },
      h("label", { for: "statement-text" }, "Statement text"),
      textarea,
      h("button", {
        type: "button", id: "save-text",
        onclick: () => on.saveText(st.index, unmarkBidi(textarea.value)),
      }, "Save text")));
}

/** The repair `citeaudit repair` suggests for each claim of the statement, searched for by the server when the
 * statement is first selected (`found`: loading, failed or ready), and the button that applies it: the same
 * edit as ticking and unticking the boxes below. */
export function suggestionSection(st, found, on, lang, languages) {
  const status = !isScored(st) ? "not-scored" : found ? found.state : "loading";
  let body;
  if (status === "not-scored") body = h("p", { class: "muted" }, `${st.kind}: not scored, nothing to repair.`);
  else if (status === "failed") body = h("p", { class: "muted" }, `No suggestion: ${found.error}`);
  else if (status !== "ready") body = h("p", { class: "muted" }, "Looking among the case's passages for a set that supports it…");
  else {
    const s = found.data;
    const offered = s.claims.find((c) => c.suggested);
    body = [
      s.claims.map((c) => suggestedClaim(c, s.claims.length > 1, lang, languages)),
      s.citations ? h("button", {
        type: "button", id: "apply-suggestion", title: "Cite exactly what the suggestion names (shortcut: a)",
        onclick: () => on.applySuggestion(st.index),
      }, `Apply: ${offered.note}`) : null,
      offered && !s.citations ? h("p", { class: "muted", id: "suggestion-not-applied" }, `Not applied here: ${s.not_applied}.`) : null,
    ];
  }
  return h("section", {
    class: "suggestion", id: "suggestion", tabindex: "-1", "aria-labelledby": "suggestion-heading", "aria-live": "polite",
    dataset: { state: status, key: found ? found.key : "" },
  }, h("h4", { id: "suggestion-heading" }, "Suggested repair"), body);
}

/** One claim's suggestion; a review (the judge not sure: `suggested` null) shows its passages and verdict,
 * to read, with nothing to apply. */
function suggestedClaim(c, several, lang, languages) {
  const j = c.judgment;
  const review = c.action === "review";
  return h("div", { class: "suggested-claim", id: `suggestion-${c.claim}`, dataset: { action: c.action || "none" } },
    several ? h("p", { class: "claim-text" }, `Claim ${c.claim + 1}: `, h("span", { lang: spoken(lang) }, c.text)) : null,
    h("p", { class: "suggestion-note", id: `suggestion-note-${c.claim}` }, c.note),
    (c.evidence || []).map((p) => h("article", { class: "cited-passage suggested-passage", dataset: { passage: p.id } },
      h("div", { class: "p-head" },
        h("strong", {}, p.id),
        h("span", { class: "muted" }, `${p.doc !== p.id ? `document ${p.doc} · ` : ""}version ${p.version || "none"} · span ${p.span.start}–${p.span.end}`)),
      h("blockquote", { class: "passage-text", lang: spoken(languages.get(p.id)) }, passageText(p, spanIn(p, [j && j.evidence]))))),
    j ? h("p", { class: "judgment", id: `suggestion-judgment-${c.claim}` },
      review ? "The judge's verdict: " : "The judge finds the new set ",
      h("span", { class: `badge ${labelClass(j)}` }, c.confidence), " ",
      h("span", { class: "muted" }, "by "), h("span", { class: "muted signature", title: j.judge }, j.judge),
      j.explanation ? h("span", { class: "explanation" }, [h("br"), j.explanation]) : null) : null,
    review ? h("p", { class: "muted", id: `suggestion-review-${c.claim}` },
      "Nothing to apply: read the passage and decide; the boxes below change the citations.") : null);
}
