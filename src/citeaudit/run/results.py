"""Every figure of a scoring run as reports and the run log keep it: typed records, one per answer,
case and summary, each ratio with its counts and signature. Reports render these, never a recomputation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from citeaudit._version import __version__
from citeaudit.metrics.ratio import Ratio
from citeaudit.metrics.scoring import AnswerResult, ClaimResult, Report
from citeaudit.records import Judgment


class _Log(BaseModel):
    """The base of every record a run log holds (these and runlog's): an unknown field is refused."""

    model_config = ConfigDict(extra="forbid")


def _omit_none():
    return Field(default=None, exclude_if=lambda v: v is None)


class RatioRecord(_Log):
    numerator: int | float
    denominator: int | float
    value: float | None
    kind: Literal["ratio", "mean"]
    reason: str | None = _omit_none()  # only when the figure is undefined or set by a convention
    signature: str

    def ratio(self) -> Ratio:
        empty = self.value if not self.denominator else None  # a convention's value (ALCE's 0)
        return Ratio(self.numerator, self.denominator, self.reason, empty, self.kind)


Ratios = dict[str, RatioRecord]


class ShownJudgment(Judgment):
    """A judgment as the results show it: fields without a value are left out."""

    @model_serializer(mode="wrap")
    def _without_none(self, handler):
        return {k: v for k, v in handler(self).items() if v is not None}


class CitationCheckRecord(_Log):
    id: str
    alone: bool | None
    without: bool | None
    precise: bool
    reason: str


class StatementRecord(_Log):
    index: int
    id: str | None
    text: str
    kind: str
    citations: list[str]
    cited_set_supports: bool | None
    judgment: ShownJudgment | None
    citation_checks: list[CitationCheckRecord] | None  # None: precision undecided (a judgment is missing)


class PassageRef(_Log):
    """Everything that names one exact passage text."""

    id: str
    doc: str
    version: str | None
    span: list[int]
    sha256: str


RepairAction = Literal["replace", "add", "drop", "review", "none_found", "budget_spent"]


class ClaimRepair(_Log):
    """What `citeaudit repair` found for one claim (run/repair.py): the citations the answer gave, the set
    proposed with the passages it names and the judge's judgment of it, a set to review (`review`: the
    judge is not sure of it; shown, never applied), or why nothing is proposed."""

    action: RepairAction
    note: str  # "cite S1 instead of S2", "add S3", "drop S2, S3 (not needed)", "review S1: …", "no supporting …"
    original: list[str]  # the claim's citations as the answer gave them
    label: str  # the original citations' label: partial, none, contradicts, uncertain (full: a trim)
    suggested: list[str] | None = _omit_none()  # None: nothing proposed (a review proposes nothing)
    evidence: list[PassageRef] = Field(default_factory=list)  # each suggested passage (a review's: each to look at)
    judgment: ShownJudgment | None = _omit_none()  # of the suggested set (a review's: of the set its note names)
    searched: int = 0  # judgments the search read for this claim
    skipped: int = 0  # candidate sets without a label or recorded judgment: skipped, never guessed
    unsure: int = 0  # candidate sets the judge was unsure of: never applied

    @property
    def added(self) -> list[str]:
        return [c for c in self.suggested or [] if c not in self.original]

    @property
    def removed(self) -> list[str]:
        return [c for c in self.original if self.suggested is not None and c not in self.suggested]


class ClaimRecord(ClaimResult):
    model_config = ConfigDict(extra="forbid")

    judgment: ShownJudgment | None  # None: unjudged
    # Only in the run log of repaired answers (`citeaudit repair --log`): left out everywhere else, so
    # every other log is written, and read, as it always was.
    repair: ClaimRepair | None = _omit_none()


class AnswerRecord(_Log):
    case: str
    answer: str
    system: str
    abstained: bool
    metrics: Ratios
    labels: dict[str, int]
    covered_facts: list[str]
    statements: list[StatementRecord]
    claims: list[ClaimRecord]


class CaseRecord(_Log):
    id: str
    question: str
    origin: str
    retrieval: Ratios


class Summary(_Log):
    all: Ratios
    by_system: dict[str, Ratios]
    labels: dict[str, int]
    retrieval: Ratios


class ResultSettings(_Log):
    ks: list[int]
    no_citation_precision: Literal["n/a", "zero"]


class Results(_Log):
    citeaudit_version: str
    judge: str
    settings: ResultSettings
    cases: list[CaseRecord]
    answers: list[AnswerRecord]
    summary: Summary

    def by_system(self) -> dict[str, list[AnswerRecord]]:
        groups: dict[str, list[AnswerRecord]] = {}
        for a in self.answers:
            groups.setdefault(a.system, []).append(a)
        return groups


class Finding(_Log):
    kind: str
    ref: str
    text: str
    cause: str
    area: str
    advice: str


def _ratios_json(report: Report, ratios: dict[str, Ratio]) -> dict[str, Any]:
    return {name: {**r.to_dict(), "signature": report.signature(name)} for name, r in ratios.items()}


def answer_json(report: Report, r: AnswerResult, ratios: dict[str, Ratio] | None = None) -> dict[str, Any]:
    """One answer's record; `ratios`: its `r.ratios()` when the caller has them already."""
    return {
        "case": r.case_id,
        "answer": r.answer_id,
        "system": r.system,
        "abstained": r.abstained,
        "metrics": _ratios_json(report, r.ratios() if ratios is None else ratios),
        "labels": r.label_counts(),
        "covered_facts": r.covered_facts,
        "statements": [
            {
                "index": s.index, "id": s.id, "text": s.text, "kind": s.kind, "citations": s.citations,
                "cited_set_supports": s.supported if s.kind == "claim" else None,
                "judgment": s.judgment.model_dump(exclude_none=True) if s.judgment else None,
                "citation_checks": None if s.checks is None else [c.to_dict() for c in s.checks],
            }
            for s in r.statements
        ],
        "claims": [
            {
                "statement": c.statement, "index": c.index, "id": c.id, "text": c.text,
                "citations": c.citations, "facts": c.facts,
                "judgment": c.judgment.model_dump(exclude_none=True) if c.judgment else None,
            }
            for c in r.claims
        ],
    }


def to_json(report: Report) -> dict[str, Any]:
    return {
        "citeaudit_version": __version__,
        "judge": report.judge_signature,
        "settings": {"ks": list(report.settings.ks), "no_citation_precision": report.settings.no_citation_precision},
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


def results_of(report: Report) -> Results:
    """Every figure of a report, as the log keeps it."""
    return Results.model_validate(to_json(report))
