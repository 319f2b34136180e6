"""A self-contained HTML report for runs of 10 to 10,000 answers: one file, nothing fetched; opens offline.

Everything shown comes from the run log (never a recomputation). The page reads top-down: a compact
header (judge signature, conventions), the summary tables, distributions drawn as static SVG
(report/charts.py), the diagnosis as counts per cause with the next action, then an answers table
(report/answers_table.py) and a claims table (report/claims_table.py), drawn by a small script from JSON
embedded once, sorted, filtered and paged in the page.

Untrusted text (questions, claims, passages, ids) is escaped by Jinja2's autoescape in the HTML, escaped
for <script> in the embedded JSON, and inserted by the script as text nodes only.

The page declares the language of its content: `<html lang>` is the language most answers are in
(`text.content_language` of each answer's statements; English on a tie). Its own words (headings,
tables, notes, explanations) are English and say so (`lang="en"` on each section when the page is not);
each claim's text carries its answer's language and each passage its own, where not English.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from citeaudit.metrics import names as N
from citeaudit.run.log import RunLog
from citeaudit.report import charts
from citeaudit.metrics.names import DESCRIPTIONS
from citeaudit.report.answers_table import FIGURES, answers_data
from citeaudit.report.claims_table import Strings, embed_json, table_data
from citeaudit.report.summary_view import figure_rows, label_counts
from citeaudit.text import content_language, majority_language

PAGE_WORDS = "en"  # the language of the page's own words

LABEL_COLOURS = {"full": "#2e7d32", "partial": "#f9a825", "none": "#c62828", "contradicts": "#6a1b9a",
                 "uncertain": "#757575", "unjudged": "#bdbdbd"}  # the last two: counted apart

# The diagnosis's causes (diagnose.py), grouped by where the fix lies, with the next action for each group.
CAUSE_GROUPS = {
    "retrieval miss": (("not_retrieved",),
                       "Improve search, filters or document access: the evidence never reached the answer."),
    "evidence not used": (("retrieved_not_cited", "uncited"),
                          "Make the generator cite the retrieved passage that documents the claim."),
    "unsupported claim": (("cited_unsupported", "contradicted"),
                          "Constrain generation to what the cited passage says; see each claim's advice below."),
    "incomplete": (("omitted", "abstained"),
                   "Make the answer state the required facts its sources document."),
    # not a failure of the system: the judge gave no verdict, so nothing above may count these
    "judge unsure": (("judge_unsure",),
                     "Decide these claims in the desk's review, or escalate them to a stronger judge "
                     "(e.g. --judge cascade:model,openai:MODEL)."),
}


def _diagnosis(log: RunLog, systems: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of the diagnosis table (a group, its counts per system and per cause) and chart values; a run
    whose measures judged no claim diagnosed nothing, and its counts say so (never a reassuring 0)."""
    system_of = {f"{a.case}/{a.answer}": a.system for a in log.results.answers}
    per_cause: dict[tuple[str, str], int] = {}
    for key, findings in log.diagnosis.items():
        for f in findings:
            k = (system_of.get(key, "?"), f.cause)
            per_cause[k] = per_cause.get(k, 0) + 1
    rows, values = [], []
    for group, (causes, action) in CAUSE_GROUPS.items():
        counts = {s: sum(per_cause.get((s, c), 0) for c in causes) for s in systems}
        detail = [(c.replace("_", " "), {s: per_cause.get((s, c), 0) for s in systems}) for c in causes]
        rows.append({"group": group, "causes": causes, "counts": counts, "detail": detail, "action": action})
        values += [{"group": group, "system": s, "findings": n} for s, n in counts.items()]
    if not log.settings.judges_claims:
        for row in rows:
            row["counts"] = dict.fromkeys(systems, N.NOT_MEASURED)
            row["detail"] = [(cause, dict.fromkeys(systems, N.NOT_MEASURED)) for cause, _ in row["detail"]]
        return rows, []
    return rows, values


def languages(log: RunLog) -> tuple[str, dict[tuple[str, str], str]]:
    """The page's language and each answer's, by (case, answer): the language of its statements' text
    (an answer with none has none); the page's is the one most answers are in, English on a tie."""
    by_answer = {(a.case, a.answer): content_language(" ".join(s.text for s in a.statements))
                 for a in log.results.answers if a.statements}
    return majority_language(by_answer.values(), PAGE_WORDS), by_answer


def _passage_texts(log: RunLog) -> dict[tuple[str, str], dict[str, Any]]:
    """(case id, passage id) -> text, document, version, span: what each citation points to."""
    from citeaudit.run.log import resolved_cases

    out = {}
    for rc in resolved_cases(log):
        for pid, p in rc.passages.items():
            out[(rc.id, pid)] = {"text": p.text, "doc": p.doc_id, "version": p.version or "unversioned",
                                 "span": f"{p.start}–{p.end}", "title": p.title}
    return out


def _charts(log: RunLog, by_system_labels: dict[str, dict[str, int]],
            diagnosis_values) -> tuple[dict[str, str] | None, str | None]:
    """Each chart's SVG by name, or None and why not: vl-convert is not installed (no reason: the page
    says how to install it), or it failed on a chart (the reason; the page keeps its tables)."""
    if not charts.available():
        return None, None
    specs = {
        "histograms": charts.histogram_spec(log.results.answers),
        "labels": charts.label_mix_spec(by_system_labels, LABEL_COLOURS),
        "recall": charts.recall_spec(log.results.summary.retrieval),
        "diagnosis": charts.diagnosis_spec(diagnosis_values, list(CAUSE_GROUPS)),
    }
    try:
        return {name: charts.to_svg(spec) for name, spec in specs.items() if spec is not None}, None
    except charts.ChartError as err:
        return None, str(err)


def render_html(log: RunLog) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape
    from markupsafe import Markup

    env = Environment(loader=PackageLoader("citeaudit.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    results = log.results
    groups = results.by_system()
    systems = list(results.summary.by_system) or list(groups)
    summaries = []
    for system in systems:
        answers = groups.get(system, [])
        summaries.append({
            "system": system, "answers": len(answers), "claims": sum(len(a.claims) for a in answers),
            "labels": label_counts(answers),
            "rows": figure_rows(results.summary.by_system.get(system, {}), [a.metrics for a in answers], "answer",
                                N.ANSWER_MEASURES),
        })
    retrieval_rows = figure_rows(results.summary.retrieval, [c.retrieval for c in results.cases], "case")
    diagnosis_rows, diagnosis_values = _diagnosis(log, systems)
    svgs, charts_failed = _charts(log, {s["system"]: s["labels"] for s in summaries}, diagnosis_values)
    strings = Strings()
    page_lang, answer_langs = languages(log)
    data = {**table_data(log, _passage_texts(log), strings, answer_langs), "answers": answers_data(log, strings),
            "strings": strings.items}
    static = files("citeaudit.report") / "templates"
    return env.get_template("report.html.j2").render(
        log=log, lang=page_lang, words=Markup(f' lang="{PAGE_WORDS}"') if page_lang != PAGE_WORDS else "",
        results=results, summaries=summaries, retrieval_rows=retrieval_rows,
        diagnosis=diagnosis_rows, systems=systems, label_colours=LABEL_COLOURS,
        charts=None if svgs is None else {k: Markup(v) for k, v in svgs.items()}, charts_failed=charts_failed,
        install_hint=charts.INSTALL_HINT, claims=sum(s["claims"] for s in summaries),
        causes=sorted({c for g in CAUSE_GROUPS.values() for c in g[0]}),
        answer_figures=[(m, DESCRIPTIONS[m]) for m in FIGURES],  # support first: the default order
        data=Markup(embed_json(data)),
        script=Markup((static / "report.js").read_text(encoding="utf-8")),
        style=Markup((static / "report.css").read_text(encoding="utf-8")),
    )
