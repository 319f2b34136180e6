"""Render a run's results (report/results.py) as Markdown or a terminal table. Every figure shows its
raw counts, and every measure's signature is printed once, under the figures (sacrebleu's footnote
habit). Scoring and `report` render the same records, so a report never recomputes a figure."""

from __future__ import annotations

from ..metrics import names as N
from ..metrics.ratio import Ratio
from ..metrics.scoring import UNCERTAIN, UNJUDGED
from ..metrics.signature import Signature
from ..records import LABELS
from ..text import visible_controls
from .results import AnswerRecord, CaseRecord, Finding, Ratios, Results, answer_json, to_json

__all__ = ["answer_json", "diagnosis_markdown", "print_text", "signatures", "to_json", "to_markdown"]

TABLE_MEASURES = (N.CITATION_PRESENCE, N.SUPPORT, N.CITATION_RECALL, N.CITATION_PRECISION, N.COVERAGE)
HEADERS = {
    N.CITATION_PRESENCE: "citation presence",
    N.SUPPORT: "support S",
    N.CITATION_RECALL: "citation recall",
    N.CITATION_PRECISION: "citation precision",
    N.COVERAGE: "coverage U",
    N.ABSTENTION: "abstained",
    N.ALCE_CITATION_RECALL: "ALCE recall (mean)",
    N.ALCE_CITATION_PRECISION: "ALCE precision (mean)",
}


def signatures(results: Results, signature: Signature) -> list[tuple[str, str]]:
    measured = [*TABLE_MEASURES, N.ABSTENTION, *N.MEAN_MEASURES, N.INVALID_CITATIONS]
    names = list(results.summary.retrieval) + [n for n in measured if n in results.summary.all]
    return [(n, signature.render(n)) for n in names]


def _retrieval_line(ratios: Ratios) -> str:
    return " · ".join(f"{name} {record.ratio()}" for name, record in ratios.items())


def _answers_of(results: Results, case: CaseRecord) -> list[AnswerRecord]:
    return [a for a in results.answers if a.case == case.id]


def _label_counts(answers: list[AnswerRecord]) -> dict[str, int]:
    counts = {label: sum(a.labels.get(label, 0) for a in answers) for label in (*LABELS, *APART)}
    return {label: n for label, n in counts.items() if label in LABELS or n}


def _summary_rows(results: Results) -> list[tuple[str, dict[str, Ratio], dict[str, int]]]:
    def ratios(records: Ratios) -> dict[str, Ratio]:
        return {name: record.ratio() for name, record in records.items()}

    groups = results.by_system()
    rows = [(system, ratios(results.summary.by_system[system]), _label_counts(answers))
            for system, answers in groups.items()]
    if len(rows) > 1:
        rows.append(("all", ratios(results.summary.all), dict(results.summary.labels)))
    return rows


LABELS_HEADER = "full/partial/none/contradicts"
APART = (UNCERTAIN, UNJUDGED)  # claims counted beside the four labels, never as one of them


def _label_cell(counts: dict[str, int]) -> str:
    cell = "/".join(str(counts.get(label, 0)) for label in LABELS)
    apart = [f"+{counts[label]} {label}" for label in APART if counts.get(label)]
    return f"{cell} ({', '.join(apart)})" if apart else cell


def _cell(ratios: dict[str, Ratio], measure: str) -> str:
    """A summary cell: the figure, or "—" for a measure not asked for (--metrics)."""
    return str(ratios[measure]) if measure in ratios else "—"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _abstained(a: AnswerRecord) -> str:
    return " — abstained (no claims)" if a.abstained else ""


def to_markdown(results: Results, signature: Signature) -> str:
    out: list[str] = []
    for case in results.cases:
        out += [f"## Case `{case.id}`", "", f"> {case.question}", ""]
        out += [f"Retrieval: {_retrieval_line(case.retrieval)}", ""]
        for a in _answers_of(results, case):
            out += [f"### Answer `{a.answer}`" + _abstained(a), ""]
            out += ["| # | claim | cited | label | why |", "|---|---|---|---|---|"]
            for c in a.claims:
                why, text = (_md_cell(x) for x in (c.explanation, c.text))
                out.append(f"| {c.statement + 1}.{c.index + 1} | {text} | "
                           f"{', '.join(c.citations) or '—'} | {c.label} | {why} |")
            out.append("")
    out += ["## Summary", "", "| system | " + " | ".join(HEADERS[m] for m in TABLE_MEASURES) + f" | {LABELS_HEADER} |",
            "|---|" + "---|" * (len(TABLE_MEASURES) + 1)]
    for system, ratios, labels in _summary_rows(results):
        out.append(f"| {system} | " + " | ".join(_cell(ratios, m) for m in TABLE_MEASURES) + f" | {_label_cell(labels)} |")
    out += ["", "Signatures:", ""] + [f"- `{n}`: `{s}`" for n, s in signatures(results, signature)]
    return "\n".join(out) + "\n"


def _shown(text: str) -> str:
    """A user's string as rich prints it: controls made visible, "[...]" kept literal (not markup)."""
    from rich.markup import escape

    return escape(visible_controls(text))


def print_text(results: Results, signature: Signature, console) -> None:
    """Terminal output with rich tables (colour only when the console is a terminal). Every string
    that came from the input is printed as text: control characters visible, never markup."""
    from rich.table import Table

    label_style = {"full": "green", "partial": "yellow", "none": "red", "contradicts": "bold red", "unjudged": "dim",
                   "uncertain": "magenta"}
    for case in results.cases:
        console.print(f"[bold]Case {_shown(case.id)}[/bold]: {_shown(case.question)}", highlight=False)
        console.print(f"  retrieval: {_shown(_retrieval_line(case.retrieval))}", highlight=False)
        for a in _answers_of(results, case):
            table = Table(title=_shown(f"answer {a.answer}" + _abstained(a)), title_justify="left", show_lines=False)
            for col in ("#", "claim", "cited", "label", "why"):
                table.add_column(col, overflow="fold")
            for c in a.claims:
                table.add_row(f"{c.statement + 1}.{c.index + 1}", _shown(c.text), _shown(", ".join(c.citations) or "—"),
                              f"[{label_style[c.label]}]{c.label}[/]", _shown(c.explanation))
            for s in a.statements:
                if s.kind != "claim":
                    table.add_row(f"{s.index + 1}", _shown(s.text), "—", f"({s.kind})", "not scored")
            console.print(table)
            console.print("  " + " · ".join(f"{m} {a.metrics[m].ratio()}" for m in TABLE_MEASURES if m in a.metrics),
                          highlight=False)
        console.print()
    table = Table(title="summary", title_justify="left")
    table.add_column("system")
    for m in TABLE_MEASURES:
        table.add_column(HEADERS[m])
    table.add_column(LABELS_HEADER)
    for system, ratios, labels in _summary_rows(results):
        table.add_row(_shown(system), *(_cell(ratios, m) for m in TABLE_MEASURES), _label_cell(labels))
    console.print(table)
    console.print("signatures:", highlight=False)
    for n, s in signatures(results, signature):
        console.print(f"  {n}: {_shown(s)}", highlight=False, soft_wrap=True)


def diagnosis_markdown(diagnosis: dict[str, list[Finding]]) -> str:
    """Failures grouped by where the fix lies: search and filters, evidence use, or completeness."""
    out = ["## Diagnosis", ""]
    for answer, findings in diagnosis.items():
        if not findings:
            out.append(f"- `{answer}`: every claim supported, every required fact conveyed")
            continue
        out.append(f"- `{answer}`:")
        for area in ("search and filters", "evidence use", "completeness"):
            for f in (f for f in findings if f.area == area):
                out.append(f"  - {area}: {f.kind} {f.ref} *{f.cause.replace('_', ' ')}* — {f.text}")
    return "\n".join(out) + "\n"
