// Review mode: step through the answer's claims, set a human label with a note, see agreement, export.
import { $, h, num } from "./dom.js";

export function currentClaim(snap, state) {
  const claims = snap.answer ? snap.answer.claims : [];
  return claims[Math.min(state.claim, claims.length - 1)] || null;
}

export function renderReview(snap, state, on) {
  const panel = $("#review");
  panel.hidden = !state.review;
  if (!state.review) return;
  const claims = snap.answer ? snap.answer.claims : [];
  const claim = currentClaim(snap, state);
  const mine = claim && snap.human.find((x) => x.statement === claim.statement && x.claim === claim.index
    && x.reviewer === state.reviewer.trim() && x.text === claim.text);

  const parts = [];
  if (!claim) {
    parts.push(h("p", { class: "muted" }, "This answer has no claims to review."));
  } else {
    const k = claims.indexOf(claim);
    parts.push(
      h("p", { id: "review-position" }, `Claim ${k + 1} of ${claims.length} · statement ${claim.id || `#${claim.statement + 1}`}`),
      h("blockquote", { class: "review-claim", id: "review-claim" }, claim.text),
      h("p", {}, `Cites ${claim.citations.length ? claim.citations.join(", ") : "nothing"} · automatic label `,
        h("span", { class: `badge ${claim.judgment.label}`, id: "review-auto" }, claim.judgment.label),
        h("span", { class: "muted" }, ` by ${claim.judgment.judge}`)),
      h("div", { class: "button-row" },
        h("button", { type: "button", id: "review-prev", disabled: k === 0, onclick: () => on.step(-1) }, "← Previous"),
        h("button", { type: "button", id: "review-next", disabled: k === claims.length - 1, onclick: () => on.step(1) }, "Next →")),
      h("div", { class: "review-fields" },
        h("label", { for: "reviewer" }, "Reviewer"),
        h("input", {
          id: "reviewer", type: "text", autocomplete: "off", value: state.reviewer,
          oninput: (ev) => { state.reviewer = ev.target.value; },
        }),
        h("label", { for: "review-note" }, "Note"),
        noteField(state, mine)),
      h("div", { class: "label-buttons", role: "group", "aria-label": "Human label" },
        snap.labels.map((label, i) => h("button", {
          type: "button", id: `label-${label}`, class: `label-button ${label}`, dataset: { label },
          "aria-pressed": mine && mine.label === label ? "true" : "false", disabled: state.busy,
          title: `shortcut: ${i + 1}`,
          onclick: () => on.label(claim, label),
        }, label))),
    );
  }
  const humans = snap.human;
  const a = snap.agreement;
  parts.push(
    h("h3", {}, "Human labels on this answer"),
    humans.length
      ? h("table", { class: "human", id: "human-labels" },
        h("thead", {}, h("tr", {}, h("th", {}, "claim"), h("th", {}, "label"), h("th", {}, "reviewer"), h("th", {}, "note"))),
        h("tbody", {}, humans.map((x) => h("tr", {},
          h("td", {}, x.text), h("td", {}, h("span", { class: `badge ${x.label}` }, x.label)),
          h("td", {}, x.reviewer), h("td", {}, x.note || "")))))
      : h("p", { class: "muted", id: "human-labels" }, "None yet."),
    h("p", { id: "agreement", dataset: { n: a.n, agree: a.agree } },
      `Agreement with the automatic labels (all reviewed claims): n = ${a.n}, agree = ${a.agree}, Cohen's κ = `,
      a.kappa === null || a.kappa === undefined ? "n/a" : num(Number(a.kappa.toFixed(3)))),
    h("a", { id: "export", href: "/api/export", download: "desk-run.json" }, "Export run"),
    h("span", { class: "muted" }, " (a run log; human labels appear as judgments of human:REVIEWER)"),
  );
  $("#review-body").replaceChildren(...parts.flat(Infinity).filter(Boolean));
}

function noteField(state, mine) {
  const el = h("textarea", { id: "review-note", rows: "2", oninput: (ev) => { state.note = ev.target.value; } });
  if (state.note === null) state.note = mine ? mine.note : "";
  el.value = state.note;
  return el;
}
