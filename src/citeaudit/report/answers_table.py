"""The report's answers table as data: one row per answer with its claims, support, citation recall and
precision, coverage (each with its counts), unsure claims and the diagnosis's findings, in the order of
the terminal report's list of the answers with the lowest support (render.worst_answers). Embedded beside
the claims table's rows, sharing their string table, and sorted, filtered and paged by the page's script.

A measure the run did not score (`score --metrics support`) is None, shown "not measured": never 0,
and never confused with a figure whose denominator is zero (n/a, with the reason)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from citeaudit.metrics import names as N
from citeaudit.metrics.scoring import UNCERTAIN
from citeaudit.report.claims_table import Strings
from citeaudit.report.render import worst_answers
from citeaudit.run.diagnose import CAUSES
from citeaudit.run.log import RunLog
from citeaudit.run.results import RatioRecord

FIGURES = (N.SUPPORT, N.CITATION_RECALL, N.CITATION_PRECISION, N.COVERAGE)
COLUMNS = ("system", "case", "answer", "claims", "abstained", *FIGURES, "unsure", "findings")
CAUSE_ORDER = {cause: i for i, cause in enumerate(CAUSES)}  # findings listed as the diagnosis lists them


def _figure(record: RatioRecord | None, strings: Strings) -> list[Any] | None:
    """[numerator, denominator, the figure as every report writes it], with the value last when a
    convention gives a zero denominator one (ALCE's precision 0); None when not measured."""
    if record is None:
        return None
    ratio = record.ratio()
    figure = [ratio.numerator, ratio.denominator, strings(str(ratio))]
    return figure + [ratio.value] if not ratio.denominator and ratio.defined else figure


def _findings(causes: list[str], strings: Strings) -> list[int]:
    """Each cause once with its count, flattened: [cause, count, cause, count, …]."""
    counts = Counter(causes)
    ordered = sorted(counts, key=lambda c: CAUSE_ORDER.get(c, len(CAUSE_ORDER)))
    return [n for cause in ordered for n in (strings(cause), counts[cause])]


def answers_data(log: RunLog, strings: Strings) -> dict[str, Any]:
    """The answers' rows, worst support first (see COLUMNS)."""
    judges_claims = log.settings.judges_claims  # else no claim was judged: unsure not measured
    rows = []
    for a in worst_answers(log.results, len(log.results.answers)):
        findings = log.diagnosis.get(f"{a.case}/{a.answer}", [])
        rows.append([strings(a.system), strings(a.case), strings(a.answer), len(a.claims), int(a.abstained),
                     *(_figure(a.metrics.get(m), strings) for m in FIGURES),
                     a.labels.get(UNCERTAIN, 0) if judges_claims else None,
                     _findings([f.cause for f in findings], strings)])
    return {"columns": COLUMNS, "figures": FIGURES, "rows": rows}
