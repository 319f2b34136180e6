"""One name per measure, parsed in one place, and `MEASURES`, the one registry of what each is; the CLI,
scoring, reports, docs and library derive their lists from it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

CITATION_PRESENCE = "citation_presence"
SUPPORT = "support"
CITATION_RECALL = "citation_recall"
CITATION_PRECISION = "citation_precision"
ALCE_CITATION_RECALL = "alce_citation_recall"
ALCE_CITATION_PRECISION = "alce_citation_precision"
COVERAGE = "coverage"
ABSTENTION = "abstention"
INVALID_CITATIONS = "invalid_citations"
# A system's own "supported?" flag against citeaudit's verdict on the whole answer (Filice et al. 2025).
PREDICTED_SUPPORT_PRECISION = "predicted_support_precision"
PREDICTED_SUPPORT_RECALL = "predicted_support_recall"
PREDICTED_MEASURES = (PREDICTED_SUPPORT_PRECISION, PREDICTED_SUPPORT_RECALL)

@dataclass(frozen=True)
class Measure:
    """One measure, as every caller needs it: the CLI (--metrics), scoring, signatures, reports, docs."""

    name: str
    description: str
    unit: str  # what it counts: claim, statement, fact, answer, citation (answer-level), document (retrieval)
    kind: Literal["answer", "retrieval"] = "answer"  # once per answer, or once per case from its ranking
    selectable: bool = True  # --metrics may choose it; the others need no judge and are always computed
    judged: bool = True  # a judge's labels change it, so its signature names the judge
    mean: bool = False  # averaged per answer (as ALCE's eval.py does), not summed
    headline: bool = False  # one of an answer's main figures: compared between runs


# In the order reports list them.
MEASURES: dict[str, Measure] = {m.name: m for m in (
    Measure(CITATION_PRESENCE, "claims with at least one citation / claims", "claim",
            selectable=False, judged=False, headline=True),
    Measure(SUPPORT, "claims whose cited set the judge labels full / claims", "claim", headline=True),
    Measure(CITATION_RECALL, "statements whose cited set supports them / statements (ALCE recall, summed)",
            "statement", headline=True),
    Measure(CITATION_PRECISION, "citations credited by ALCE's alone/without rules / citations (summed)",
            "statement", headline=True),
    Measure(COVERAGE, "required facts conveyed by a supported claim / required facts", "fact", headline=True),
    Measure(ABSTENTION, "answers that make no claim / answers", "answer", selectable=False, judged=False,
            headline=True),
    Measure(ALCE_CITATION_RECALL, "citation recall averaged per answer, as ALCE's eval.py reports it", "statement",
            mean=True),
    Measure(ALCE_CITATION_PRECISION, "citation precision averaged per answer, as ALCE's eval.py reports it",
            "statement", mean=True),
    Measure(INVALID_CITATIONS, "citations that name no passage / citations written (when invalid citations are "
                               "counted)", "citation", selectable=False, judged=False),
    Measure(PREDICTED_SUPPORT_PRECISION, "answers the system flags supported that are supported (every claim full) / "
                                         "answers it flags supported (answers that carry the flag)", "answer"),
    Measure(PREDICTED_SUPPORT_RECALL, "supported answers the system flags supported / supported answers whose "
                                      "ranking retrieved every required fact's passages (answers that carry the "
                                      "flag)", "answer"),
    Measure("recall@k", "gold evidence documents in the top k of the ranking / gold documents", "document",
            kind="retrieval", selectable=False, judged=False),
    Measure("facts@k", "required facts whose documenting passages all sit in the top k / required facts", "fact",
            kind="retrieval", selectable=False, judged=False),
)}


def _names(**wanted: object) -> tuple[str, ...]:
    return tuple(m.name for m in MEASURES.values() if all(getattr(m, k) == v for k, v in wanted.items()))


# Answer-level measures, in report order.
ANSWER_LEVEL = _names(kind="answer")
ANSWER_MEASURES = _names(kind="answer", headline=True)
MEAN_MEASURES = _names(kind="answer", mean=True)
STATEMENT_MEASURES = _names(kind="answer", unit="statement")
# What --metrics chooses from (retrieval measures need no judge and are always computed).
SELECTABLE = _names(selectable=True)
# Measures no judge can change: their signatures name no judge; scoring computes them always.
JUDGE_FREE = _names(kind="answer", judged=False)

DESCRIPTIONS = {m.name: m.description for m in MEASURES.values()}

# What every reader says of a figure the run left out (`--metrics` chose other measures): in text as it
# stands, in JSON as the figure `{"value": null, "reason": NOT_MEASURED}` (docs/runs.md).
NOT_MEASURED = "not measured in this run"


def not_measured_json() -> dict[str, None | str]:
    """A figure the run did not measure, where JSON would hold it: undefined, and why."""
    return {"value": None, "reason": NOT_MEASURED}

_AT_K = re.compile(r"^(recall|facts)@(\d+)$")


def at_k(measure: str, k: int) -> str:
    return f"{measure}@{k}"


def parse_at_k(name: str) -> tuple[str, int] | None:
    """`recall@3` -> ("recall", 3); None for names that take no k."""
    m = _AT_K.match(name)
    return (m.group(1), int(m.group(2))) if m else None
