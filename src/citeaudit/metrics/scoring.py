"""Score answers: retrieval, support, ALCE citation recall/precision, coverage and abstention.

Per answer we collect raw counts (sacrebleu's habit: statistics first, scores from the sums), so that
many answers aggregate by summing numerators and denominators. ALCE's own corpus figures average per
answer; those are offered under their own names (`alce_citation_recall`, `alce_citation_precision`).

Judgments are read lazily from a `Judgments` source: only the pairs a metric actually needs are asked
for (a citation's "without" check only when it fails "alone", as ALCE does).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from citeaudit._version import __version__
from citeaudit.errors import MissingJudgment, UnlabelledPair
from citeaudit.judges.base import JudgmentSource, Request
from citeaudit.records import LABELS, Answer, Judgment, SourcePassage
from citeaudit.parse.resolve import Reading, ResolvedCase
from citeaudit.metrics import names as N
from citeaudit.metrics.predicted import answer_supported, flag_ratios, retrieval_sufficient
from citeaudit.metrics.ratio import Ratio, mean_of
from citeaudit.metrics.signature import Signature

NO_CITATION_JUDGE = "rule:no-citation"
UNJUDGED = "unjudged"
UNCERTAIN = "uncertain"


def decided(judgment: Judgment | None) -> bool:
    """A judgment a figure can count: given, and not in the judge's uncertain band."""
    return judgment is not None and not judgment.uncertain

REASON_NOT_SUPPORTED = "The cited set does not support the whole statement, so this citation receives no precision credit."
REASON_ALONE = "It supports the statement on its own."
REASON_NEEDED = "The rest of the cited set does not support the statement without it."
REASON_REDUNDANT = "It does not support the statement alone, and the rest of the cited set supports it without it."
REASON_INVALID = "It names no passage, so it supports nothing."
INVALID_CITATION_JUDGE = "rule:invalid-citation"
# The rules that label a claim without asking the judge: it cites nothing, or names no passage.
RULE_JUDGES = (NO_CITATION_JUDGE, INVALID_CITATION_JUDGE)


def by_rule(judgment: Judgment | None) -> bool:
    """A label a rule gave (no citation, or one naming no passage): no judge was asked for it."""
    return judgment is not None and judgment.judge in RULE_JUDGES


@dataclass(frozen=True)
class Settings:
    """Every setting that changes a figure; each one goes into the figures' signatures."""

    ks: tuple[int, ...] = (1, 3, 5, 10)
    # ALCE's eval.py scores precision 0 for an answer with no citations; by default it is undefined.
    no_citation_precision: Literal["n/a", "zero"] = "n/a"
    # "alce": every rule of ALCE's eval.py (parse/alce.py reads the answers; precision without citations 0)
    conventions: Literal["citeaudit", "alce"] = "citeaudit"
    # "count": citations naming no passage were kept on their statements and are counted (invalid_citations)
    invalid_citations: Literal["error", "count"] = "error"
    # the measures wanted (None: all); the judge is asked only for what they need
    metrics: tuple[str, ...] | None = None
    # "skip": a pair the curated judge has no label for is unjudged, and left out of every figure
    missing_labels: Literal["error", "skip"] = "error"

    def __post_init__(self) -> None:
        if self.conventions == "alce" and self.no_citation_precision != "zero":
            object.__setattr__(self, "no_citation_precision", "zero")  # part of ALCE's conventions

    @property
    def counts_invalid(self) -> bool:
        return self.invalid_citations == "count" or self.conventions == "alce"

    def wants(self, *measures: str) -> bool:
        """Is any of these measures asked for?"""
        return self.metrics is None or any(m in self.metrics for m in measures)

    def reports(self, measure: str) -> bool:
        """Is this per-answer measure in the results? (the ALCE means are computed from two of them)"""
        return (measure in N.JUDGE_FREE or self.wants(measure)
                or (measure == N.CITATION_RECALL and self.wants(N.ALCE_CITATION_RECALL))
                or (measure == N.CITATION_PRECISION and self.wants(N.ALCE_CITATION_PRECISION)))

    @property
    def judges_claims(self) -> bool:
        return self.wants(N.SUPPORT, N.COVERAGE, *N.PREDICTED_MEASURES)

    @property
    def judges_statements(self) -> bool:
        return self.wants(*N.STATEMENT_MEASURES)

    @property
    def checks_citations(self) -> bool:
        return self.wants(N.CITATION_PRECISION, N.ALCE_CITATION_PRECISION)


@dataclass
class CitationCheck:
    """ALCE's precision rule for one citation of a statement (the seed desk's `citationChecks`)."""

    id: str
    alone: bool | None  # None: not needed to decide
    without: bool | None
    precise: bool
    reason: str

    def to_dict(self) -> dict:
        return {"id": self.id, "alone": self.alone, "without": self.without, "precise": self.precise,
                "reason": self.reason}


class ClaimResult(BaseModel):
    """One atomic claim as scored; the run log keeps it as it is (report/results.py)."""

    statement: int
    index: int
    id: str | None
    text: str
    citations: list[str]
    facts: list[str]
    judgment: Judgment | None  # None: unjudged (a measure that needs it was not asked for, or no label)

    @property
    def supported(self) -> bool:
        return self.judgment is not None and self.judgment.supports

    @property
    def label(self) -> str:
        """The judgment's label; "unjudged" without one, "uncertain" when the judge does not know."""
        if self.judgment is None:
            return UNJUDGED
        return UNCERTAIN if self.judgment.uncertain else self.judgment.label

    @property
    def explanation(self) -> str:
        if self.judgment is None:
            return "not judged: no label for this pair, or no measure asked for it"
        guess = f"the judge's best guess is {self.judgment.label}; " if self.judgment.uncertain else ""
        return guess + (self.judgment.explanation or "")


@dataclass
class StatementResult:
    index: int
    id: str | None
    text: str
    kind: str
    citations: list[str]
    judgment: Judgment | None = None  # the whole cited set vs the statement (claim statements only)
    checks: list[CitationCheck] | None = field(default_factory=list)  # None: precision undecided
    invalid: list[str] = field(default_factory=list)  # citations that name no passage, as written

    @property
    def supported(self) -> bool:
        return self.judgment is not None and self.judgment.supports


@dataclass
class AnswerResult:
    case_id: str
    answer_id: str
    system: str
    statements: list[StatementResult]
    claims: list[ClaimResult]
    covered_facts: list[str]
    required_facts: list[str]
    settings: Settings

    undecided_facts: list[str] = field(default_factory=list)  # conveyed only by unjudged claims
    predicted_supported: bool | None = None  # the system's own flag, when the answer carries one
    sufficient_retrieval: bool = False  # the ranking holds every required fact's passages (metrics/predicted.py)

    @property
    def abstained(self) -> bool:
        return not self.claims

    @property
    def unjudged(self) -> int:
        """Claims left without a judgment (unlabelled with --missing-labels skip, or not asked for)."""
        return sum(c.judgment is None for c in self.claims)

    def label_counts(self) -> dict[str, int]:
        """Claims per label; claims the judge was unsure of (`uncertain`) or did not judge apart."""
        counts = Counter(c.judgment.label for c in self.claims if decided(c.judgment))
        out = {label: counts.get(label, 0) for label in LABELS}
        uncertain = sum(c.judgment is not None and bool(c.judgment.uncertain) for c in self.claims)
        if uncertain:
            out[UNCERTAIN] = uncertain
        if self.unjudged:  # unlabelled (--missing-labels skip), or no measure asked (--metrics)
            out[UNJUDGED] = self.unjudged
        return out

    def ratios(self) -> dict[str, Ratio]:
        """Every measure asked for. An unjudged claim or statement is in no judged measure's
        denominator: it is neither supported nor unsupported."""
        claims, stmts = self.claims, [s for s in self.statements if s.kind == "claim"]
        no_claims = "abstention: the answer makes no claim"
        unjudged = "no judged claims" if claims else no_claims
        # an uncertain judgment is counted apart, like a missing one: never silently full or none
        judged_claims = [c for c in claims if decided(c.judgment)]
        judged_stmts = [s for s in stmts if decided(s.judgment)]
        # One check per citation precision counts (an invalid one included, uncredited); ALCE leaves
        # the citations of a sentence with an out-of-range one out, so they have no check.
        checked = [s for s in stmts if s.checks is not None]
        citations = sum(len(s.checks) for s in checked)
        credited = sum(c.precise for s in checked for c in s.checks)
        # ALCE's 0 for an answer without citations; an answer without statements (an empty output)
        # stays n/a, as ALCE drops it from both means.
        zero = self.settings.no_citation_precision == "zero" and bool(checked)
        required = [f for f in self.required_facts if f not in self.undecided_facts]
        out = {
            N.CITATION_PRESENCE: Ratio(sum(bool(c.citations) for c in claims), len(claims), no_claims),
            N.SUPPORT: Ratio(sum(c.supported for c in judged_claims), len(judged_claims), unjudged),
            N.CITATION_RECALL: Ratio(sum(s.supported for s in judged_stmts), len(judged_stmts),
                                     no_claims if not stmts else "no judged statements"),
            N.CITATION_PRECISION: Ratio(
                credited, citations,
                "no citations (ALCE convention: 0)" if zero else "no citations",
                0.0 if zero else None,
            ),
            N.COVERAGE: Ratio(len(self.covered_facts), len(required), "no required facts"),
            N.ABSTENTION: Ratio(int(self.abstained), 1),
        }
        if self.settings.counts_invalid:
            written = sum(len(s.citations) + len(s.invalid) for s in stmts)
            out[N.INVALID_CITATIONS] = Ratio(sum(len(s.invalid) for s in stmts), written, "no citations")
        # only for an answer that carries the flag: outputs without one stay as they were
        if self.predicted_supported is not None and self.settings.judges_claims:
            out.update(flag_ratios(self.predicted_supported, answer_supported([c.judgment for c in claims]),
                                   self.sufficient_retrieval))
        return {name: ratio for name, ratio in out.items() if self.settings.reports(name)}


def _judge_set(judgments: JudgmentSource, text: str, passages: Sequence[SourcePassage],
               settings: Settings | None = None) -> Judgment | None:
    """The judgment of a cited set; None when it has no label and unlabelled pairs are skipped."""
    if not passages:
        # An empty set supports nothing; the judge is not asked.
        return Judgment(label="none", judge=NO_CITATION_JUDGE, explanation="no passage is cited")
    if settings is not None and settings.missing_labels == "skip":
        try:
            return judgments.get(text, passages)
        except (UnlabelledPair, MissingJudgment):  # no label, or none recorded (a skipped pair, replayed)
            return None
    return judgments.get(text, passages)


def citation_checks(judgments: JudgmentSource, text: str, cited: Sequence[SourcePassage],
                    settings: Settings | None = None) -> tuple[Judgment | None, list[CitationCheck] | None]:
    """The cited set's judgment and ALCE's alone/without precision check for each citation (§3.3).
    With unlabelled pairs skipped, a judgment the rule needs may be missing: the set's judgment is
    then None (unjudged), or the checks are None (precision undecided for this statement)."""
    settings = settings or Settings()
    joint = _judge_set(judgments, text, cited, settings)
    if not decided(joint):
        return joint, None
    if not settings.checks_citations:
        return joint, None
    if not joint.supports:
        single = len(cited) == 1  # alone == the set; without == the empty set: both known for free
        return joint, [
            CitationCheck(p.id, False if single else None, False if single else None, False, REASON_NOT_SUPPORTED)
            for p in cited
        ]
    if len(cited) == 1:
        return joint, [CitationCheck(cited[0].id, True, False, True, REASON_ALONE)]
    checks = []
    for p in cited:
        alone = _judge_set(judgments, text, [p], settings)
        if not decided(alone):
            return joint, None
        if alone.supports:
            checks.append(CitationCheck(p.id, True, None, True, REASON_ALONE))
            continue
        rest = list(cited)
        rest.remove(p)  # one copy: a passage cited twice (ALCE conventions) is still cited once
        judged_without = _judge_set(judgments, text, rest, settings)
        if not decided(judged_without):
            return joint, None
        without = judged_without.supports
        checks.append(CitationCheck(p.id, False, without, not without,
                                    REASON_REDUNDANT if without else REASON_NEEDED))
    return joint, checks


def _invalid_judgment(invalid: Sequence[str]) -> Judgment:
    return Judgment(label="none", judge=INVALID_CITATION_JUDGE,
                    explanation=f"cites {', '.join(invalid)}, which names no passage")


def _invalid_checks(cited: Sequence[str], invalid: Sequence[str], settings: Settings) -> list[CitationCheck]:
    """A statement citing what does not exist is unsupported. citeaudit counts each of its citations
    in precision, uncredited; ALCE leaves them all out of precision's denominator."""
    if settings.conventions == "alce":
        return []
    return ([CitationCheck(i, None, None, False, REASON_NOT_SUPPORTED) for i in cited]
            + [CitationCheck(i, None, None, False, REASON_INVALID) for i in invalid])


def score_answer(rc: ResolvedCase, answer: Answer, judgments: JudgmentSource, settings: Settings) -> AnswerResult:
    statements: list[StatementResult] = []
    claims: list[ClaimResult] = []
    for s, st in enumerate(answer.statements):
        cited_ids = st.cited_ids()
        result = StatementResult(s, st.id, st.text, st.kind, cited_ids, invalid=list(st.invalid_citations))
        if st.kind == "claim":
            if st.invalid_citations:
                result.judgment = _invalid_judgment(st.invalid_citations)
                result.checks = _invalid_checks(cited_ids, st.invalid_citations, settings)
            elif settings.judges_statements:
                result.judgment, result.checks = citation_checks(judgments, st.text, rc.cited(cited_ids), settings)
            else:
                result.checks = None
            for c, claim in enumerate(st.atomic_claims()):
                ids = list(claim.citations or [])
                judgment = (_invalid_judgment(st.invalid_citations) if st.invalid_citations
                            else _judge_set(judgments, claim.text, rc.cited(ids), settings) if settings.judges_claims
                            else None)
                claims.append(ClaimResult(statement=s, index=c, id=claim.id, text=claim.text, citations=ids,
                                          facts=list(claim.facts), judgment=judgment))
        statements.append(result)
    required = [f.id for f in rc.case.facts]
    conveyed = {f for c in claims if c.supported for f in c.facts}
    maybe = {f for c in claims if not decided(c.judgment) for f in c.facts}
    return AnswerResult(
        case_id=rc.id,
        answer_id=answer.id,
        system=answer.system or answer.id,
        statements=statements,
        claims=claims,
        covered_facts=[f for f in required if f in conveyed],
        required_facts=required,
        settings=settings,
        undecided_facts=[f for f in required if f in maybe and f not in conveyed],
        predicted_supported=answer.predicted_supported,
        sufficient_retrieval=answer.predicted_supported is not None and retrieval_sufficient(rc),
    )


# --------------------------------------------------------------------------------------------
# Retrieval: a property of the case's ranking, not of any answer.


def retrieval_ratios(rc: ResolvedCase, settings: Settings) -> dict[str, Ratio]:
    case = rc.case
    out: dict[str, Ratio] = {}
    for k in settings.ks:
        top = set(case.ranking[:k]) if case.ranking is not None else set()
        if case.ranking is None:
            out[N.at_k("recall", k)] = Ratio(0, 0, "no ranking given")
            out[N.at_k("facts", k)] = Ratio(0, 0, "no ranking given")
            continue
        gold = case.gold_documents
        out[N.at_k("recall", k)] = Ratio(sum(d in top for d in gold), len(gold), "no gold documents")
        covered = sum(all(rc.passages[p].doc_id in top for p in f.passages) for f in case.facts)
        out[N.at_k("facts", k)] = Ratio(covered, len(case.facts), "no required facts")
    return out


# --------------------------------------------------------------------------------------------
# Signatures and the whole report.


@dataclass(frozen=True)
class Parsing:
    """Who turned raw answer text into statements and claims (None in a report: nothing was parsed)."""

    parser: str
    claims: str

    @classmethod
    def of(cls, cases: Sequence[ResolvedCase], settings: Settings | None = None,
           reading: Reading | None = None) -> Parsing | None:
        """`reading` is the one the cases were read with: its claim splitter enters the signature."""
        if not any(rc.parsed for rc in cases):
            return None
        if settings is not None and settings.conventions == "alce":
            from citeaudit.parse import alce

            return cls(alce.parser_signature(), alce.CLAIMS_SIGNATURE)
        from citeaudit.parse import claim_splitter_signature, parser_signature

        return cls(parser_signature(), claim_splitter_signature(reading.decomposer if reading else None))


def add_ratios(into: dict[str, Ratio], ratios: dict[str, Ratio]) -> None:
    """Sum `ratios` into `into`, measure by measure (a figure keeps its counts)."""
    for name, ratio in ratios.items():
        into[name] = into[name] + ratio if name in into else ratio


class FigureSums:
    """A group of answers' summary figures, accumulated one answer at a time: summed ratios, and a sum
    and a count of the defined per-answer citation recall and precision for ALCE's means. The loaded
    report and the streamed run both summarise through it."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.sums: dict[str, Ratio] = {}
        self.recall = [0.0, 0]
        self.precision = [0.0, 0]

    def add(self, ratios: dict[str, Ratio]) -> None:
        add_ratios(self.sums, ratios)
        for total, name in ((self.recall, N.CITATION_RECALL), (self.precision, N.CITATION_PRECISION)):
            value = ratios[name].value if name in ratios else None
            if value is not None:
                total[0] += value
                total[1] += 1

    def ratios(self) -> dict[str, Ratio]:
        out = dict(self.sums)
        for total, name, mean, reason in ((self.recall, N.CITATION_RECALL, N.ALCE_CITATION_RECALL,
                                           "no answer with statements"),
                                          (self.precision, N.CITATION_PRECISION, N.ALCE_CITATION_PRECISION,
                                           "no answer with citations")):
            if self.settings.wants(name, mean):
                out[mean] = Ratio(total[0], total[1], reason, kind="mean") if total[1] else mean_of([], reason)
        return out


def label_totals(total: Counter) -> dict[str, int]:
    """Claims per label, the four labels always, uncertain and unjudged only when there are some."""
    out = {label: total.get(label, 0) for label in LABELS}
    for apart in (UNCERTAIN, UNJUDGED):
        if total.get(apart):
            out[apart] = total[apart]
    return out


def cited_by_of(cases: Iterable[ResolvedCase]) -> str | None:
    """The readings that said what these cases' answers cite (the signature's `cite`), or None when every
    answer says it itself."""
    return joined_readings(rc.cited_by for rc in cases)


def joined_readings(readings: Iterable[str | None]) -> str | None:
    """Readings as the signature's `cite` writes them: distinct, sorted, joined by "+"; None for none."""
    return "+".join(sorted(set(readings) - {None})) or None


@dataclass
class Report:
    """Everything one scoring run produced: per-case retrieval, per-answer results, summaries."""

    cases: list[ResolvedCase]
    answers: list[AnswerResult]
    retrieval: dict[str, dict[str, Ratio]]  # case id -> name -> ratio
    judge_signature: str
    settings: Settings
    parsing: Parsing | None = None
    cited_by: str | None = None  # `cited_by_of(cases)`: a reading that gave the answers their citations

    @property
    def run_signature(self) -> Signature:
        """Every setting behind this report's figures, as one comparable object."""
        return Signature(judge=self.judge_signature,
                         parser=self.parsing.parser if self.parsing else None,
                         claims=self.parsing.claims if self.parsing else None,
                         cite=self.cited_by,
                         nocite="0" if self.settings.no_citation_precision == "zero" else "n/a",
                         conventions=self.settings.conventions,
                         invalid=self.settings.invalid_citations,
                         missing=self.settings.missing_labels,
                         version=__version__)

    def summary(self, results: Sequence[AnswerResult] | None = None) -> dict[str, Ratio]:
        """Summed ratios over answers, plus ALCE's per-answer means."""
        sums = FigureSums(self.settings)
        for r in self.answers if results is None else results:
            sums.add(r.ratios())
        return sums.ratios()

    def retrieval_summary(self) -> dict[str, Ratio]:
        out: dict[str, Ratio] = {}
        for ratios in self.retrieval.values():
            add_ratios(out, ratios)
        return out

    def by_system(self) -> dict[str, list[AnswerResult]]:
        groups: dict[str, list[AnswerResult]] = {}
        for r in self.answers:
            groups.setdefault(r.system, []).append(r)
        return groups

    def label_counts(self, results: Sequence[AnswerResult] | None = None) -> dict[str, int]:
        total = Counter()
        for r in self.answers if results is None else results:
            total.update(r.label_counts())
        return label_totals(total)

    def signature(self, name: str) -> str:
        # every answer's every figure carries its signature: render each measure's once
        rendered = self.__dict__.setdefault("_rendered", {})
        if name not in rendered:
            rendered[name] = self.run_signature.render(name)
        return rendered[name]

    def to_pandas(self):
        """One row per claim and citation (docs/exports.md) as a pandas DataFrame; needs citeaudit[formats]."""
        from citeaudit.metrics.rows import report_frame

        return report_frame(self)


def score_cases(cases: Sequence[ResolvedCase], judgments: JudgmentSource, settings: Settings = Settings(),
                progress: Callable[[int], None] | None = None, parsing: Parsing | None = None) -> Report:
    """Score every answer of every case. Stops with the judge's error on a pair it cannot judge.
    `progress(1)` is called after each answer. `parsing` names who parsed raw answer text (found from
    the cases when not given; a run log's cases are parsed already and pass their own)."""
    answers = []
    for rc in cases:
        for a in rc.case.answers:
            answers.append(score_answer(rc, a, judgments, settings))
            if progress:
                progress(1)
    retrieval = {rc.id: retrieval_ratios(rc, settings) for rc in cases}
    return Report(list(cases), answers, retrieval, judgments.signature, settings, parsing or Parsing.of(cases, settings),
                  cited_by_of(cases))


def plan_requests(cases: Sequence[ResolvedCase], settings: Settings = Settings()) -> list[Request]:
    """Every judgment the metrics asked for may need, for judges that work best in batches: each
    claim's cited set (support, coverage), each statement's cited set (citation recall), each
    citation alone and the set without each citation (citation precision)."""
    requests: dict[Request, None] = {}

    def add(text: str, passages: Sequence[SourcePassage]) -> None:
        if passages:
            requests.setdefault(Request.of(text, passages), None)

    for rc in cases:
        for answer in rc.case.answers:
            for st in answer.statements:
                if st.kind != "claim" or st.invalid_citations:
                    continue  # a statement with an invalid citation is unsupported without a judge
                cited = rc.cited(st.cited_ids())
                if settings.judges_statements:
                    add(st.text, cited)
                if settings.checks_citations and len(cited) > 1:
                    for p in cited:
                        add(st.text, [p])
                        rest = list(cited)
                        rest.remove(p)
                        add(st.text, rest)
                if settings.judges_claims:
                    for claim in st.atomic_claims():
                        add(claim.text, rc.cited(list(claim.citations or [])))
    return list(requests)
