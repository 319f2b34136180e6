"""From a metric to the next action: one cause for every failing claim and every missed required fact.

The causes separate the three checks, because each needs a different fix:

- `not_retrieved`        the evidence is not in the retrieved set          → search and filters
- `retrieved_not_cited`  the evidence was retrieved, another passage cited → evidence use
- `cited_unsupported`    the cited passage does not establish the claim    → evidence use
- `contradicted`         the cited passage contradicts the claim           → evidence use
- `uncited`              a claim with no citation at all                   → evidence use
- `omitted`              a required fact the answer never states           → completeness
- `abstained`            a required fact stated as undocumented            → completeness
- `judge_unsure`         the judge was unsure (its uncertain band)         → judgment

A claim the judge was unsure of is counted apart in every figure, so it gets its own cause, never one of
the causes above: its best guess is not a verdict. A required fact named by such a claim (and conveyed by
no supported one) is undecided for the same reason, and gets that cause too.

A claim's evidence is known through the required facts it names (`facts`); a claim that names none is
judged only against what it cites.

A claim no judge judged (unlabelled with --missing-labels skip) has no cause to find, and a required fact
only such claims convey is undecided, not omitted. A run whose measures judge no claim (`--metrics
citation_recall`, say) finds nothing about facts either: which of them the answer conveys was not measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from citeaudit.metrics.scoring import AnswerResult, ClaimResult
from citeaudit.parse.resolve import ResolvedCase

CAUSES = {
    "not_retrieved": ("not retrieved", "search and filters",
                      "its evidence is not in the retrieved set: better search, filters or document access"),
    "retrieved_not_cited": ("retrieved but not cited", "evidence use",
                            "the supporting passage was retrieved; cite it instead of the passage cited"),
    "cited_unsupported": ("cited but unsupported", "evidence use",
                          "the cited passage does not establish the claim: check quantity, horizon and scope"),
    "contradicted": ("contradicted", "evidence use", "the cited passage says otherwise: correct or drop the claim"),
    "uncited": ("uncited", "evidence use", "the claim carries no citation: cite its evidence or drop it"),
    "omitted": ("omitted", "completeness", "a required fact the answer never states"),
    "abstained": ("abstained", "completeness", "stated as undocumented although the sources document it"),
    "judge_unsure": ("judge unsure", "judgment",
                     "the judge was unsure whether the cited passage establishes the claim: review it in the "
                     "desk, or escalate (e.g. --judge cascade:model,openai:MODEL)"),
}
# Where the fix lies, in the order reports list the findings.
AREAS = ("search and filters", "evidence use", "completeness", "judgment")
UNSURE = "judge_unsure"


@dataclass(frozen=True)
class Finding:
    kind: str  # "claim" or "fact"
    ref: str  # claim "statement.claim" position or fact id
    text: str
    cause: str

    @property
    def title(self) -> str:
        return CAUSES[self.cause][0]

    @property
    def area(self) -> str:
        return CAUSES[self.cause][1]

    @property
    def advice(self) -> str:
        return CAUSES[self.cause][2]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "ref": self.ref, "text": self.text, "cause": self.cause,
                "area": self.area, "advice": self.advice}


def retrieved_documents(rc: ResolvedCase, k: int | None = None) -> set[str] | None:
    """Documents in the top k of the ranking (all of it when k is None); None when there is no ranking."""
    ranking = rc.case.ranking
    if ranking is None:
        return None
    return set(ranking if k is None else ranking[:k])


def _evidence(rc: ResolvedCase, fact_ids: list[str]) -> list[str]:
    return [p for f in fact_ids for p in rc.passage_ids_of_fact(f)]


def claim_cause(rc: ResolvedCase, claim: ClaimResult, retrieved: set[str] | None) -> str | None:
    if claim.supported or claim.judgment is None:  # an unjudged claim has no cause to find
        return None
    if claim.judgment.uncertain:  # its label is only a best guess: no verdict to find a cause for
        return UNSURE
    if claim.judgment.label == "contradicts":
        return "contradicted"
    evidence = _evidence(rc, claim.facts)
    if evidence and retrieved is not None and any(rc.passages[p].doc_id not in retrieved for p in evidence):
        return "not_retrieved"
    if evidence and not set(evidence) <= set(claim.citations):
        return "retrieved_not_cited"
    return "cited_unsupported" if claim.citations else "uncited"


def diagnose(rc: ResolvedCase, result: AnswerResult, k: int | None = None) -> list[Finding]:
    """Every failing claim and every required fact not conveyed with support, each with one cause."""
    retrieved = retrieved_documents(rc, k)
    findings: list[Finding] = []
    causes_by_fact: dict[str, str] = {}
    for claim in result.claims:
        cause = claim_cause(rc, claim, retrieved)
        if cause is None:
            continue
        findings.append(Finding("claim", f"{claim.statement + 1}.{claim.index + 1}", claim.text, cause))
        for f in claim.facts:
            # an unsure claim is what leaves the fact undecided, whatever another claim's cause
            if cause == UNSURE:
                causes_by_fact[f] = cause
            else:
                causes_by_fact.setdefault(f, cause)
    if not result.settings.judges_claims:  # no claim judged: which facts are conveyed is not known
        return findings
    answer = next(a for a in rc.case.answers if a.id == result.answer_id)
    abstained = {f for st in answer.statements if st.kind == "abstention" for f in st.facts}
    for fact in rc.case.facts:
        if fact.id in result.covered_facts:
            continue
        cause = causes_by_fact.get(fact.id)
        if cause is None and fact.id in result.undecided_facts:
            continue  # stated only by claims no judge judged: undecided, not omitted
        if cause is None:
            missing = retrieved is not None and any(rc.passages[p].doc_id not in retrieved for p in fact.passages)
            cause = "abstained" if fact.id in abstained else "not_retrieved" if missing else "omitted"
        findings.append(Finding("fact", fact.id, fact.text, cause))
    return findings
