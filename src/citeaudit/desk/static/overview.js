// The run at a glance: figures per system (summed counts, as the command line sums them), then the answers
// table, one page at a time, sorted and filtered on the server: a run of 10,000 answers stays as light as
// one of ten. A row opens its answer below.
import { $, h, ratioText } from "./dom.js";

const PAGE = 25;
const count = (n) => n.toLocaleString("en"); // 10,000: counts of answers read at a glance
const MEASURES = [
  ["support", "Support"],
  ["citation_precision", "Citation precision"],
  ["citation_recall", "Citation recall"],
  ["coverage", "Coverage"],
];
const COLUMNS = [
  ["case", "Case"],
  ["system", "System"],
  ["claims", "Claims"],
  ...MEASURES,
  ["unsure", "Unsure"],
];

export function createOverview({ api, labels, open }) {
  const view = { offset: 0, sort: "case", order: "asc", system: "", label: "", text: "", data: null };
  const section = $("#overview");

  $("#filter-label").replaceChildren(h("option", { value: "" }, "any"),
    ...[...labels, "uncertain"].map((l) => h("option", { value: l }, l)));
  $("#filter-system").addEventListener("change", (ev) => { view.system = ev.target.value; view.offset = 0; refresh(); });
  $("#filter-label").addEventListener("change", (ev) => { view.label = ev.target.value; view.offset = 0; refresh(); });
  let typing = null;
  $("#filter-text").addEventListener("input", (ev) => {
    clearTimeout(typing); // wait for a pause in typing: one request, not one per key
    typing = setTimeout(() => { view.text = ev.target.value.trim(); view.offset = 0; refresh(); }, 250);
  });
  $("#page-prev").addEventListener("click", () => { view.offset = Math.max(0, view.offset - PAGE); refresh(); });
  $("#page-next").addEventListener("click", () => { view.offset += PAGE; refresh(); });

  let asked = 0; // the newest request: an older answer that arrives after it is not shown

  async function refresh() {
    const q = new URLSearchParams({ offset: view.offset, limit: PAGE, sort: view.sort, order: view.order });
    for (const key of ["system", "label", "text"]) if (view[key]) q.set(key, view[key]);
    const mine = ++asked;
    section.setAttribute("aria-busy", "true");
    try {
      const data = await api("GET", `/api/overview?${q}`);
      if (mine !== asked) return;
      view.data = data;
      render();
    } catch (err) {
      if (!view.data) throw err; // the first load: the page shows why
      if (mine === asked) $("#answers-count").textContent = `(not updated: ${err.message})`;
    } finally {
      if (mine === asked) section.removeAttribute("aria-busy");
    }
  }

  function sortBy(key) {
    view.order = view.sort === key && view.order === "asc" ? "desc" : "asc";
    view.sort = key;
    view.offset = 0;
    refresh();
  }

  function render() {
    const d = view.data;
    section.hidden = false;
    $("#overview-heading").textContent = `The run at a glance: ${count(d.total)} ${d.total === 1 ? "answer" : "answers"}`;
    $("#summary").replaceChildren(summaryTable(d.summary));
    const systems = $("#filter-system");
    if (systems.options.length !== d.systems.length + 1) {
      systems.replaceChildren(h("option", { value: "" }, "all"), ...d.systems.map((s) => h("option", { value: s }, s)));
      systems.value = view.system;
    }
    $("#answers-count").textContent = d.matching === d.total ? `(${count(d.total)})` : `(${count(d.matching)} of ${count(d.total)} match)`;
    $("#answers-table").replaceChildren(
      h("thead", {}, h("tr", {}, COLUMNS.map(([key, label]) => h("th", {
        scope: "col", "aria-sort": view.sort === key ? (view.order === "asc" ? "ascending" : "descending") : null,
      }, h("button", { type: "button", class: "sort", id: `sort-${key}`, onclick: () => sortBy(key) },
        label, view.sort === key ? (view.order === "asc" ? " ▲" : " ▼") : ""))))),
      h("tbody", {}, d.rows.length ? d.rows.map(row) : h("tr", {}, h("td", { colspan: COLUMNS.length, class: "muted" }, "No answer matches."))));
    const last = Math.min(d.offset + d.rows.length, d.matching);
    $("#page-info").textContent = d.matching ? `answers ${count(d.offset + 1)}–${count(last)} of ${count(d.matching)}` : "";
    $("#page-prev").disabled = d.offset === 0;
    $("#page-next").disabled = last >= d.matching;
  }

  function row(r) {
    const go = () => open(r.case, r.answer);
    return h("tr", { class: "answer-row", dataset: { case: r.case, answer: r.answer } },
      h("td", { class: "case-cell" }, h("button", { type: "button", class: "link", title: r.question, onclick: go },
        r.case, r.answer !== r.system ? ` · ${r.answer}` : "")),
      h("td", {}, r.system),
      h("td", { class: "num" }, count(r.claims)),
      MEASURES.map(([key]) => h("td", { class: "num", dataset: { measure: key } }, ratioText(r[key])[0])),
      h("td", { class: "num" }, r.unsure ? h("span", { class: "badge unsure" }, count(r.unsure)) : "0"));
  }

  return { refresh };
}

function summaryTable(summary) {
  return h("table", { class: "summary", id: "summary-table" },
    h("caption", { class: "muted" }, "Per system: summed counts over its answers"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "System"), h("th", { scope: "col" }, "Answers"),
      MEASURES.map(([, label]) => h("th", { scope: "col" }, label)), h("th", { scope: "col" }, "Claim labels"))),
    h("tbody", {}, summary.map((s) => h("tr", { dataset: { system: s.system } },
      h("th", { scope: "row" }, s.system), h("td", { class: "num" }, count(s.answers)),
      MEASURES.map(([key]) => h("td", { class: "num" }, ratioText(s[key])[0])),
      h("td", {}, Object.entries(s.labels).map(([k, v]) => `${k} ${count(v)}`).join(" · "))))));
}
