// Small DOM helpers. Every piece of data goes in as a text node or an attribute value, never as markup:
// passages, statements and notes are untrusted text.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (key === "checked" || key === "disabled" || key === "value") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
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
