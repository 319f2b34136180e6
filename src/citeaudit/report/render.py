"""Render a scoring Report as JSON, Markdown or a terminal table. Every figure shows its raw counts,
and every measure's signature is printed once, under the figures (sacrebleu's footnote habit)."""

from __future__ import annotations

from typing import Any

from .._version import __version__
from ..metrics import names as N
from ..metrics.ratio import Ratio
from ..metrics.scoring import AnswerResult, Report

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


def _ratios_json(report: Report, ratios: dict[str, Ratio]) -> dict[str, Any]:
    return {name: {**r.to_dict(), "signature": report.signature(name)} for name, r in ratios.items()}


def answer_json(report: Report, r: AnswerResult) -> dict[str, Any]:
    return {
        "case": r.case_id,
        "answer": r.answer_id,
        "system": r.system,
        "abstained": r.abstained,
        "metrics": _ratios_json(report, r.ratios()),
        "labels": r.label_counts(),
        "covered_facts": r.covered_facts,
        "statements": [
            {
                "index": s.index, "id": s.id, "text": s.text, "kind": s.kind, "citations": s.citations,
                "cited_set_supports": s.supported if s.kind == "claim" else None,
                "judgment": s.judgment.model_dump(exclude_none=True) if s.judgment else None,
                "citation_checks": [c.to_dict() for c in s.checks],
            }
            for s in r.statements
        ],
        "claims": [
            {
                "statement": c.statement, "index": c.index, "id": c.id, "text": c.text,
                "citations": c.citations, "facts": c.facts,
                "judgment": c.judgment.model_dump(exclude_none=True),
            }
            for c in r.claims
        ],
    }


def to_json(report: Report) -> dict[str, Any]:
    return {
        "citeaudit_version": __version__,
        "judge": report.judge_signature,
        "settings": {"k": list(report.settings.ks), "no_citation_precision": report.settings.no_citation_precision},
        "cases": [
            {"id": rc.id, "question": rc.case.question, "origin": rc.origin,
             "retrieval": _ratios_json(report, report.retrieval[rc.id])}
            for rc in report.cases
        ],
        "answers": [answer_json(report, r) for r in report.answers],
        "summary": {
            "all": _ratios_json(report, report.summary()),
            "by_system": {s: _ratios_json(report, report.summary(rs)) for s, rs in report.by_system().items()},
            "labels": report.label_counts(),
            "retrieval": _ratios_json(report, report.retrieval_summary()),
        },
    }


def signatures(report: Report) -> list[tuple[str, str]]:
    names = list(report.retrieval_summary()) + list(TABLE_MEASURES) + [N.ABSTENTION, *N.MEAN_MEASURES]
    return [(n, report.signature(n)) for n in names]


def _retrieval_line(ratios: dict[str, Ratio]) -> str:
    return " · ".join(f"{name} {ratio}" for name, ratio in ratios.items())


def _summary_rows(report: Report) -> list[tuple[str, dict[str, Ratio], dict[str, int]]]:
    rows = [(system, report.summary(rs), report.label_counts(rs)) for system, rs in report.by_system().items()]
    if len(rows) > 1:
        rows.append(("all", report.summary(), report.label_counts()))
    return rows


LABELS_HEADER = "full/partial/none/contradicts"


def _label_cell(counts: dict[str, int]) -> str:
    return "/".join(str(n) for n in counts.values())


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: Report) -> str:
    out: list[str] = []
    for rc in report.cases:
        out += [f"## Case `{rc.id}`", "", f"> {rc.case.question}", ""]
        out += [f"Retrieval: {_retrieval_line(report.retrieval[rc.id])}", ""]
        for r in (a for a in report.answers if a.case_id == rc.id):
            out += [f"### Answer `{r.answer_id}`" + (" — abstained (no claims)" if r.abstained else ""), ""]
            out += ["| # | claim | cited | label | why |", "|---|---|---|---|---|"]
            for c in r.claims:
                why, text = (_md_cell(x) for x in (c.judgment.explanation or "", c.text))
                out.append(f"| {c.statement + 1}.{c.index + 1} | {text} | "
                           f"{', '.join(c.citations) or '—'} | {c.judgment.label} | {why} |")
            out.append("")
    out += ["## Summary", "", "| system | " + " | ".join(HEADERS[m] for m in TABLE_MEASURES) + f" | {LABELS_HEADER} |",
            "|---|" + "---|" * (len(TABLE_MEASURES) + 1)]
    for system, ratios, labels in _summary_rows(report):
        out.append(f"| {system} | " + " | ".join(str(ratios[m]) for m in TABLE_MEASURES) + f" | {_label_cell(labels)} |")
    out += ["", "Signatures:", ""] + [f"- `{n}`: `{s}`" for n, s in signatures(report)]
    return "\n".join(out) + "\n"


def print_text(report: Report, console) -> None:
    """Terminal output with rich tables (colour only when the console is a terminal)."""
    from rich.table import Table

    label_style = {"full": "green", "partial": "yellow", "none": "red", "contradicts": "bold red"}
    for rc in report.cases:
        console.print(f"[bold]Case {rc.id}[/bold]: {rc.case.question}", highlight=False)
        console.print(f"  retrieval: {_retrieval_line(report.retrieval[rc.id])}", highlight=False)
        for r in (a for a in report.answers if a.case_id == rc.id):
            title = f"answer {r.answer_id}" + (" — abstained (no claims)" if r.abstained else "")
            table = Table(title=title, title_justify="left", show_lines=False)
            for col in ("#", "claim", "cited", "label", "why"):
                table.add_column(col, overflow="fold")
            for c in r.claims:
                table.add_row(f"{c.statement + 1}.{c.index + 1}", c.text, ", ".join(c.citations) or "—",
                              f"[{label_style[c.judgment.label]}]{c.judgment.label}[/]", c.judgment.explanation or "")
            for s in r.statements:
                if s.kind != "claim":
                    table.add_row(f"{s.index + 1}", s.text, "—", f"({s.kind})", "not scored")
            console.print(table)
            ratios = r.ratios()
            console.print("  " + " · ".join(f"{m} {ratios[m]}" for m in TABLE_MEASURES), highlight=False)
        console.print()
    table = Table(title="summary", title_justify="left")
    table.add_column("system")
    for m in TABLE_MEASURES:
        table.add_column(HEADERS[m])
    table.add_column(LABELS_HEADER)
    for system, ratios, labels in _summary_rows(report):
        table.add_row(system, *(str(ratios[m]) for m in TABLE_MEASURES), _label_cell(labels))
    console.print(table)
    console.print("signatures:", highlight=False)
    for n, s in signatures(report):
        console.print(f"  {n}: {s}", highlight=False, soft_wrap=True)


def diagnosis_markdown(diagnosis: dict[str, list[dict[str, Any]]]) -> str:
    """Failures grouped by where the fix lies: search and filters, evidence use, or completeness."""
    out = ["## Diagnosis", ""]
    for answer, findings in diagnosis.items():
        if not findings:
            out.append(f"- `{answer}`: every claim supported, every required fact conveyed")
            continue
        out.append(f"- `{answer}`:")
        for area in ("search and filters", "evidence use", "completeness"):
            for f in (f for f in findings if f["area"] == area):
                out.append(f"  - {area}: {f['kind']} {f['ref']} *{f['cause'].replace('_', ' ')}* — {f['text']}")
    return "\n".join(out) + "\n"
