// Review mode: step through the answer's claims, set a human label with a note, see agreement, export.
// The review queue (claims the judge is unsure of, across every case) is worked through from here too.
import { $, h, isQueued, labelClass, labelText, queueText, spoken } from "./dom.js";

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

  const parts = [queueBar(snap, state, on)];
  if (!claim) {
    parts.push(h("p", { class: "muted" }, "This answer has no claims to review."));
  } else {
    const k = claims.indexOf(claim);
    const j = claim.judgment;
    parts.push(
      claimList(snap, claims, k, on),
      h("p", { id: "review-position" }, `Claim ${k + 1} of ${claims.length} · statement ${claim.id || `#${claim.statement + 1}`}`),
      h("blockquote", { class: "review-claim", id: "review-claim", lang: spoken(snap.answer.lang) }, claim.text),
      h("p", {}, `Cites ${claim.citations.length ? claim.citations.join(", ") : "nothing"} · automatic label `,
        h("span", { class: `badge ${labelClass(j)}`, id: "review-auto" }, labelText(j)),
        isQueued(snap, claim) ? [" ", unsureBadge("review-unsure")] : null,
        j ? [h("span", { class: "muted" }, " by "), h("span", { class: "muted signature", title: j.judge }, j.judge)] : null,
        j && j.scores && j.scores.support !== undefined
          ? h("span", { class: "muted" }, ` · p(support) ${Number(j.scores.support).toFixed(2)}`) : null),
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
          "aria-pressed": mine && mine.label === label ? "true" : "false",
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
          h("td", { lang: spoken(snap.answer && snap.answer.lang) }, x.text), h("td", {}, h("span", { class: `badge ${x.label}` }, x.label)),
          h("td", {}, x.reviewer), h("td", {}, x.note || "")))))
      : h("p", { class: "muted", id: "human-labels" }, "None yet."),
    h("p", { id: "agreement", dataset: { n: a.n, agree: a.agree, kappa: kappaText(a) } },
      `Agreement with the automatic labels (all reviewed claims): n = ${a.n}, agree = ${a.agree} of ${a.n}, Cohen's κ = `,
      h("span", { id: "kappa" }, kappaText(a)),
      a.kappa_reason ? h("span", { class: "muted" }, ` (${a.kappa_reason})`) : null,
      a.not_counted ? h("span", { class: "muted" }, ` · ${a.not_counted} not counted (unjudged, uncertain, or reviewers differ)`) : null),
    h("p", { class: "muted" }, "Export run (at the top) downloads a run log; human labels appear in it as judgments of human:REVIEWER."),
  );
  $("#review-body").replaceChildren(...parts.flat(Infinity).filter(Boolean));
}

// How many claims await a person, and the way to the next one (in any case or answer).
function queueBar(snap, state, on) {
  const n = snap.queue.count;
  return h("div", { class: `queue-bar${n ? " waiting" : ""}` },
    h("p", { id: "queue-count", dataset: { count: n } }, queueText(n)),
    h("button", {
      type: "button", id: "queue-next", disabled: !n, title: "shortcut: u",
      onclick: () => on.nextUnsure(),
    }, "Next unsure claim"));
}

// The answer's claims at a glance: each one's automatic label, the queued ones marked "unsure".
function claimList(snap, claims, current, on) {
  return h("ol", { class: "review-claims", id: "review-claims", "aria-label": "Claims of this answer" },
    claims.map((c, k) => h("li", {},
      h("button", {
        type: "button", id: `review-claim-${k}`, class: "claim-pick", "aria-current": k === current ? "true" : null,
        onclick: () => on.goToClaim(k),
      },
      h("span", { class: "claim-pick-text", lang: spoken(snap.answer.lang) }, c.text),
      h("span", { class: `badge ${labelClass(c.judgment)}` }, labelText(c.judgment)),
      isQueued(snap, c) ? unsureBadge(null) : null))));
}

function unsureBadge(id) {
  return h("span", { class: "badge unsure", id, title: "the judge is unsure: this claim waits for a human label" }, "unsure");
}

// The agreement's kappa as its data attribute: three decimals, or "n/a" until enough claims are reviewed
// (the server applies the threshold; the page checks it too, so that no kappa of a handful shows).
function kappaText(a) {
  if (a.kappa === null || a.kappa === undefined || (a.min_pairs && a.n < a.min_pairs)) return "n/a";
  return a.kappa.toFixed(3);
}

function noteField(state, mine) {
  const el = h("textarea", { id: "review-note", rows: "2", oninput: (ev) => { state.note = ev.target.value; } });
  if (state.note === null) state.note = mine ? mine.note : "";
  el.value = state.note;
  return el;
}
