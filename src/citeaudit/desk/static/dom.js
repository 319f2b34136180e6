// Small DOM helpers. Every piece of data goes in as a text node or an attribute value, never as markup:
// passages, statements and notes are untrusted text.

const SVG_NS = "http://www.w3.org/2000/svg";

// Direction controls (embeddings, overrides, isolates, marks) reorder how text is shown while staying
// unseen: "\u202Egnp.exe" shows as "exe.png". The page never shows them raw, only as a visible mark.
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
// Elements whose content is text only (no child elements), and attributes a browser shows as text.
const TEXT_ONLY = new Set(["OPTION", "TEXTAREA", "TITLE", "SCRIPT", "STYLE"]);
const SHOWN_ATTRIBUTES = new Set(["title", "aria-label", "alt", "placeholder"]);

function codePoint(c) {
  return `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** `text` with each direction control written as a visible mark, ⟨U+202E⟩ (for text-only places). */
export function markBidi(text) {
  return String(text).replace(BIDI, (c) => `⟨${codePoint(c)}⟩`);
}

/** The inverse of markBidi, for text edited in a field that showed the marks. */
export function unmarkBidi(text) {
  return String(text).replace(/⟨U\+(061C|200E|200F|202[A-E]|206[6-9])⟩/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)));
}

/** `text` as nodes: text, with each direction control as a styled mark element in its place. */
export function visibleText(text) {
  const str = String(text);
  const nodes = [];
  let last = 0;
  for (const m of str.matchAll(BIDI)) {
    if (m.index > last) nodes.push(document.createTextNode(str.slice(last, m.index)));
    const mark = document.createElement("span");
    mark.className = "bidi-mark";
    mark.title = `hidden direction control ${codePoint(m[0])}, shown so that it cannot reorder the text`;
    mark.textContent = `⟨${codePoint(m[0])}⟩`;
    nodes.push(mark);
    last = m.index + m[0].length;
  }
  if (last < str.length || !nodes.length) nodes.push(document.createTextNode(str.slice(last)));
  return nodes;
}

/** Set an element's text, direction controls shown as marks. */
export function setText(el, text) {
  el.replaceChildren(...visibleText(text || ""));
}

/** JSON for display: direction controls as their JSON escapes (\u202e), so it stays valid JSON. */
export function jsonText(value) {
  return JSON.stringify(value, null, 2).replace(BIDI, (c) => `\\u${c.codePointAt(0).toString(16).padStart(4, "0")}`);
}

function textChild(el, text) {
  const htmlWithChildren = el.namespaceURI !== SVG_NS && !TEXT_ONLY.has(el.tagName);
  return htmlWithChildren ? visibleText(text) : [document.createTextNode(markBidi(text))];
}

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (key === "checked" || key === "disabled" || key === "value") {
      el[key] = value;
    } else if (SHOWN_ATTRIBUTES.has(key)) {
      el.setAttribute(key, markBidi(value));
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    if (child instanceof Node) el.append(child);
    else el.append(...textChild(el, child));
  }
  return el;
}

/** The `lang` attribute of a text in `lang`: none for English, the language of the page's own words (the
 * header, the desk and the footer say lang="en"), so that a Chinese claim or passage says it is Chinese. */
export function spoken(lang) {
  return lang && lang !== "en" ? lang : undefined;
}

/** An HTML element: h("p", {class: "x"}, "text", otherNode). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function $(selector) {
  return document.querySelector(selector);
}

/** A count as the command line prints it: integers as is, other numbers to three significant figures. */
export function num(x) {
  return Number.isInteger(x) ? String(x) : String(Number(Number(x).toPrecision(3)));
}

/** `n/d (pp.p %)`, or `n/a (reason)` when nothing was counted. Returns [text, counts]. */
export function ratioText(r) {
  if (!r) return ["n/a (no answer)", "n/a"];
  if (!r.denominator) return [`n/a (${r.reason || "nothing to count"})`, "n/a"];
  const counts = `${num(r.numerator)}/${num(r.denominator)}`;
  return [`${counts} (${(100 * r.numerator / r.denominator).toFixed(1)} %)`, counts];
}

/** How one citation pointer fares: precise, imprecise (the set supports, this one earns nothing) or unsupported. */
export function threadStatus(statement, citation) {
  if (statement.kind !== "claim" || !statement.citation_checks || !statement.citation_checks.length) return "unscored";
  if (!statement.cited_set_supports) return "unsupported";
  const check = statement.citation_checks.find((c) => c.id === citation);
  return check && check.precise ? "precise" : "imprecise";
}

export const STATUS_TEXT = {
  precise: "precise citation",
  imprecise: "cited set supports, but this citation is not needed",
  unsupported: "cited set does not support the statement",
  unscored: "not scored",
};

export function statementName(st) {
  return st.id || `#${st.index + 1}`;
}

export function isScored(st) {
  return st.kind === "claim";
}

/** A judgment's label as shown: an uncertain one says so, with the judge's best guess. */
export function labelText(judgment) {
  if (!judgment) return "unjudged";
  return judgment.uncertain ? `uncertain (best guess: ${judgment.label})` : judgment.label;
}

/** The class a judgment's badge is drawn with: its label, or "uncertain". */
export function labelClass(judgment) {
  if (!judgment) return "unjudged";
  return judgment.uncertain ? "uncertain" : judgment.label;
}

/** Whether a claim of the shown answer waits in the review queue (uncertain, and no person labelled it). */
export function isQueued(snap, claim) {
  return Boolean(snap.answer) && snap.queue.items.some((q) => q.case === snap.case.id && q.answer === snap.answer.answer
    && q.statement === claim.statement && q.claim === claim.index);
}

/** "4 claims await review (the judge is unsure)", or that none do. */
export function queueText(count) {
  if (!count) return "No claims await review: the judge is sure of every claim, or a person has labelled it.";
  return `${count} ${count === 1 ? "claim awaits" : "claims await"} review (the judge is unsure)`;
}
