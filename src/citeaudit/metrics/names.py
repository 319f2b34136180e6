"""One name per measure, parsed in one place. The CLI, reports and library all use these names."""

from __future__ import annotations

import re

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

MEAN_MEASURES = (ALCE_CITATION_RECALL, ALCE_CITATION_PRECISION)
# What --metrics chooses from (retrieval measures need no judge and are always computed).
SELECTABLE = (SUPPORT, CITATION_RECALL, CITATION_PRECISION, COVERAGE, ALCE_CITATION_RECALL, ALCE_CITATION_PRECISION,
              *PREDICTED_MEASURES)
# Measures no judge can change: their signatures name no judge.
JUDGE_FREE = (CITATION_PRESENCE, ABSTENTION, INVALID_CITATIONS)

DESCRIPTIONS = {
    CITATION_PRESENCE: "claims with at least one citation / claims",
    SUPPORT: "claims whose cited set the judge labels full / claims",
    CITATION_RECALL: "statements whose cited set supports them / statements (ALCE recall, summed)",
    CITATION_PRECISION: "citations credited by ALCE's alone/without rules / citations (summed)",
    ALCE_CITATION_RECALL: "citation recall averaged per answer, as ALCE's eval.py reports it",
    ALCE_CITATION_PRECISION: "citation precision averaged per answer, as ALCE's eval.py reports it",
    COVERAGE: "required facts conveyed by a supported claim / required facts",
    ABSTENTION: "answers that make no claim / answers",
    INVALID_CITATIONS: "citations that name no passage / citations written (when invalid citations are counted)",
    PREDICTED_SUPPORT_PRECISION: "answers the system flags supported that are supported (every claim full) / "
                                 "answers it flags supported (answers that carry the flag)",
    PREDICTED_SUPPORT_RECALL: "supported answers the system flags supported / supported answers whose ranking "
                              "retrieved every required fact's passages (answers that carry the flag)",
    "recall@k": "gold evidence documents in the top k of the ranking / gold documents",
    "facts@k": "required facts whose documenting passages all sit in the top k / required facts",
}

_AT_K = re.compile(r"^(recall|facts)@(\d+)$")


def at_k(measure: str, k: int) -> str:
    return f"{measure}@{k}"


def parse_at_k(name: str) -> tuple[str, int] | None:
    """`recall@3` -> ("recall", 3); None for names that take no k."""
    m = _AT_K.match(name)
    return (m.group(1), int(m.group(2))) if m else None
