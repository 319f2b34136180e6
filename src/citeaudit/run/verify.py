"""Check a cited answer before it goes out: deliver it, revise it to what the sources establish, or abstain.

    from citeaudit import verify
    result = verify("The continuous limit is 80 °C [D1]. Eco reduces annual energy by 15% [D3].",
                    {"D1": "...", "D3": "..."}, judge="model")
    result.decision            # "deliver", "revise" or "abstain"
    result.supported_answer    # the supported claims with their citations, and what the sources do not establish
    result.gaps                # each unsupported claim: its label, the best evidence found, why it falls short

The support check becomes an explicit output that can trigger a fallback instead of a silent assumption
(after Filice et al., "Generate but Verify", IJCNLP-AACL 2025). Judging is scoring's own: the answer is
scored as a one-answer case (support and coverage), so a claim is judged exactly as `citeaudit score`
judges it, and the run log of a verification is an ordinary run log.

Nothing is ever added to the answer but sentences built from a dropped claim's own words ("The sources do
not establish that Eco reduces annual energy by 15%."): no fact comes from anywhere else. A claim whose
citations fall short is first looked for among the other sources, as `citeaudit repair` looks
(run/repair.py): when the judge finds a passage, or a pair, that supports it, the claim is kept with that
citation instead of being dropped, and the gap says so ("kept with S3 instead of S2").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from citeaudit.budget import SearchBudget, SearchRecord
from citeaudit.errors import InputError, Problem, format_path, validation_problems
from citeaudit.files.loading import read_json_file
from citeaudit.jsonio import JsonPiece, Path as JsonPath, read_text
from citeaudit.judges import Judge, Judgments, JudgeSpec, JudgmentStore, judgment_source
from citeaudit.metrics import Report, Settings
from citeaudit.run.pipeline import case_report
from citeaudit.metrics import names as N
from citeaudit.metrics.scoring import INVALID_CITATION_JUDGE, AnswerResult, ClaimResult, by_rule, plan_requests
from citeaudit.records import Answer, Case, Document, Judgment, Passage, SourcePassage
from citeaudit.run.advice import guard_notes
from citeaudit.run.repair import RepairOptions, Repairer, confidence, kept_note, place
from citeaudit.run.results import ClaimRepair
from citeaudit.parse.resolve import Reading, ResolvedCase, resolve
from citeaudit.text import NOT_NAMES

Decision = Literal["deliver", "revise", "abstain"]
Invalid = Literal["error", "count"]  # a citation naming no passage: refused, or kept as a claim that is not supported
# The command line's exit code for each decision (2 and 3 keep their meanings: bad input, judge failure).
EXIT_CODES: dict[str, int] = {"deliver": 0, "revise": 1, "abstain": 4}
DEFAULT_JUDGE = "model"  # the shipped offline judge: needs no labels and no network
VERIFY_SETTINGS = Settings(metrics=(N.SUPPORT, N.COVERAGE))  # claims only: what the decision rests on
QUOTE_LIMIT = 300  # characters of evidence quoted in a gap



class Policy(BaseModel):
    """What counts as support when deciding. An `uncertain` judgment is never support, whatever the policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    partial_counts_as_supported: bool = Field(
        default=False, strict=True, description="a `partial` label counts as support (default: it does not)")
    max_unsupported_share: float = Field(
        default=0.0, ge=0.0, le=1.0, allow_inf_nan=False,
        description="deliver while at most this share of the claims is unsupported (default 0: every claim)")

    def counts(self, judgment: Judgment | None) -> bool:
        if judgment is None or judgment.uncertain:
            return False
        return judgment.label == "full" or (self.partial_counts_as_supported and judgment.label == "partial")

    def decide(self, supported: int, claims: int) -> Decision:
        """abstain when no claim is supported (or there is none), deliver when the unsupported share is
        within the policy, revise otherwise."""
        if supported == 0:
            return "abstain"
        if (claims - supported) / claims <= self.max_unsupported_share:
            return "deliver"
        return "revise"

    def render(self) -> str:
        return (f"partial:{'supported' if self.partial_counts_as_supported else 'unsupported'}"
                f"|max_unsupported:{self.max_unsupported_share:g}")

    @classmethod
    def parse(cls, text: str | None, source: str = "--policy") -> Policy:
        """`partial=supported,max_unsupported=0.25` (either key may be left out; `strict` is the default).
        Every problem is named by its key with the allowed values: an unknown key, a bad value, an empty
        item, a key given twice (refused as the JSON reader refuses a repeated key)."""
        if text is None or text.strip() in ("", "strict"):
            return cls()
        values: dict[str, Any] = {}
        problems = []
        items = [part.strip() for part in text.split(",")]
        if "" in items:
            problems.append(Problem(source, None, "", f"an empty item in {text!r}; {_POLICY_USAGE}"))
        for item in filter(None, items):
            key, equals, value = (s.strip() for s in item.partition("="))
            if not equals:
                problems.append(Problem(source, None, item, f"expected KEY=VALUE; {_POLICY_USAGE}"))
            elif key not in _POLICY_KEYS:
                problems.append(Problem(source, None, key or "(no key)", f"unknown policy key; {_POLICY_USAGE}"))
            elif _POLICY_KEYS[key] in values:
                problems.append(Problem(source, None, key, f"given twice; {_POLICY_USAGE}"))
            else:
                try:
                    values[_POLICY_KEYS[key]] = _read_policy_value(key, value)
                except ValueError:
                    problems.append(Problem(source, None, key, f"expected {_POLICY_VALUES[key]}, got {value!r}"))
        if problems:
            raise InputError(problems)
        return cls(**values)


# --policy's keys: the field each sets and the values it takes
_POLICY_KEYS = {"partial": "partial_counts_as_supported", "max_unsupported": "max_unsupported_share"}
_POLICY_VALUES = {"partial": "'supported' or 'unsupported'", "max_unsupported": "a share within 0..1"}
_POLICY_USAGE = "known: " + ", ".join(f"{key}=<{values}>" for key, values in _POLICY_VALUES.items())


def _read_policy_value(key: str, value: str) -> bool | float:
    if key == "partial":
        if value not in ("supported", "unsupported"):
            raise ValueError(value)
        return value == "supported"
    share = float(value)
    if not 0.0 <= share <= 1.0:  # NaN fails too
        raise ValueError(value)
    return share


class EvidenceRef(BaseModel):
    """The best evidence found for a claim: the passage, where it sits in its document, and its text."""

    passage: str
    doc: str
    version: str | None = None
    start: int  # offsets into the document's text
    end: int
    quote: str


class ClaimCheck(BaseModel):
    """One claim of the answer and its judgment, as the decision counted it."""

    id: str | None
    statement: int
    text: str
    citations: list[str]
    label: str  # full, partial, none, contradicts, or uncertain / unjudged
    supported: bool  # counted as support under the policy
    judgment: Judgment | None


class Gap(BaseModel):
    """A claim not counted as support (unsupported, or one the judge was unsure of): its label, the best
    evidence found and why that falls short."""

    claim: str | None  # the claim's id, when it has one
    statement: int
    text: str
    citations: list[str]
    label: str
    evidence: EvidenceRef | None
    reason: str
    sentence: str  # what the supported answer says instead of the claim
    limitation: bool = False  # stated as a limitation: the search budget is spent
    repair: ClaimRepair | None = Field(default=None, exclude_if=lambda v: v is None,
                                       description="the citations the claim is kept with instead, when another "
                                                   "passage supports it")

    @property
    def kept(self) -> bool:
        """Kept in the supported answer with corrected citations rather than dropped."""
        return self.repair is not None and self.repair.suggested is not None


class Verification(BaseModel):
    """The decision on one answer, the answer as the sources support it, and every gap."""

    case: str
    answer: str
    decision: Decision
    supported_answer: str
    gaps: list[Gap]
    claims: list[ClaimCheck]
    limitations: list[str] = Field(default_factory=list, description="gaps stated as limitations once the "
                                   "search budget is spent")
    policy: Policy
    signature: str
    search: SearchRecord | None = None
    _report: Report | None = PrivateAttr(default=None)
    _judgments: Judgments | None = PrivateAttr(default=None)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]

    @property
    def supported_count(self) -> int:
        return sum(c.supported for c in self.claims)

    def runlog(self, inputs: Sequence[str | Path] = (), reader: str = "citeaudit"):
        """The run log of this verification (an ordinary run log, with the search budget when one was used);
        `reader`: the format the inputs were read as (another tool's, for `verify --from`)."""
        from citeaudit.run.log import build_runlog

        if self._report is None or self._judgments is None:
            raise InputError([Problem("verification", None, "", "this verification was not made here "
                                                                 "(read from JSON): it has no run log")])
        log = build_runlog(self._report, self._judgments, inputs=list(inputs), reader=reader)
        return log.model_copy(update={"search": self.search}) if self.search is not None else log

    def write_log(self, path: str | Path, inputs: Sequence[str | Path] = (), reader: str = "citeaudit") -> None:
        from citeaudit.run.log import write_runlog

        write_runlog(path, self.runlog(inputs, reader))

    def render(self) -> str:
        """The decision, the supported answer and the gaps, as text for a terminal."""
        n = len(self.claims)
        unsure = sum(c.label == "uncertain" for c in self.claims)
        counts = f"{self.supported_count} of {n} claim{'s' if n != 1 else ''} supported" + (
            f", {unsure} the judge was unsure of" if unsure else "")  # as every report counts them: apart
        lines = [f"decision: {self.decision} ({counts})",
                 "", "supported answer:", f"  {self.supported_answer}" if self.supported_answer else "  (nothing)"]
        lines += ["", f"gaps ({len(self.gaps)}):" if self.gaps else "gaps: none"]
        for gap in self.gaps:
            cites = ", ".join(gap.citations) or "nothing"
            lines.append(f"  {gap.claim or f'statement {gap.statement}'}: {gap.text!r} cites {cites}: {gap.label}")
            if gap.evidence is not None:
                e = gap.evidence
                lines.append(f"    best evidence: {place(e.passage, e.doc, e.version, e.start, e.end)}: {e.quote!r}")
            lines.append(f"    why: {gap.reason}")
            if gap.kept:
                r = gap.repair
                where = "; ".join(place(e.id, e.doc, e.version, e.span[0], e.span[1]) for e in r.evidence)
                lines.append(f"    {kept_note(r)}: {where}: {confidence(r.judgment)}")
        if self.search is not None:
            s = self.search
            limit = ", ".join(x for x in (f"max {s.max_searches}" if s.max_searches is not None else "",
                                          f"max cost {s.max_cost:g}" if s.max_cost is not None else "") if x)
            lines += ["", f"searches: {s.searches} (cost {s.cost:g}{'; ' + limit if limit else ''}); "
                          f"budget {'spent' if s.exhausted else 'left'}"
                          f"{', it stopped the search' if s.stopped_by_budget else ''}"]
        if self.limitations:
            lines += ["", "stated limitations:"] + [f"  {x}" for x in self.limitations]
        lines += ["", f"signature: {self.signature}"]
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Reading what the caller gave


def _document(source: Any) -> Document:
    if isinstance(source, Document):
        return source
    if isinstance(source, Passage):
        return Document(id=source.id, text=source.text, passages=[] if source.text else [source])
    if isinstance(source, SourcePassage):
        return Document(id=source.id, version=source.version, title=source.title, text=source.text)
    return Document.model_validate(source)


@dataclass(frozen=True)
class _Where:
    """Where sources came from, for messages: the file (`verify` for values given from Python), the path
    that leads to them within it, and how to find a path's line."""

    file: str = "verify"
    prefix: JsonPath = ("sources",)
    line_of: Callable[[JsonPath], int | None] | None = None

    def problem(self, path: JsonPath, message: str) -> Problem:
        return Problem(self.file, self.line_of(path[len(self.prefix):]) if self.line_of else None,
                       format_path(path), message)

    def validation_problems(self, err: ValidationError, path: JsonPath) -> list[Problem]:
        """Pydantic's errors for the value given at `path`, each at its own path and line."""
        line_of = self.line_of
        return validation_problems(err, self.file, path,
                                   (lambda loc: line_of(path[len(self.prefix):] + loc)) if line_of else None)


def _documents(sources: Any, where: _Where = _Where()) -> tuple[list[Document], list[JsonPath]]:
    """Documents from a mapping id -> text, or a list of documents, passages or their dicts, with the path
    each was given at."""
    if isinstance(sources, Mapping):
        items = [({"id": str(k), "text": v} if isinstance(v, str) else v, (*where.prefix, str(k)))
                 for k, v in sources.items()]
    elif isinstance(sources, Sequence) and not isinstance(sources, str):
        items = [(s, (*where.prefix, i)) for i, s in enumerate(sources)]
    else:
        raise InputError([where.problem(where.prefix, "expected passages: a mapping id -> text, or a list of "
                                                      f"documents or passages, got {type(sources).__name__}")])
    docs, problems = [], []
    for source, path in items:
        if isinstance(sources, Mapping) and not isinstance(source, (Mapping, Document, Passage, SourcePassage)):
            problems.append(where.problem(path, f"expected the document's text (or a document), got "
                                                f"{type(source).__name__}"))
            continue
        try:
            docs.append(_document(source))
        except ValidationError as err:
            problems += where.validation_problems(err, path)
    if problems:
        raise InputError(problems)
    return docs, [path for _, path in items]


def _answer(answer: Any) -> Answer:
    if isinstance(answer, Answer):
        return answer
    if isinstance(answer, str):
        return Answer(id="answer", text=answer)
    try:
        return Answer.model_validate(answer)
    except ValidationError as err:
        raise InputError(validation_problems(err, "verify", ("answer",))) from None


def _case(answer: Any, sources: Any, question: str, where: _Where = _Where(), answer_file: str = "verify",
          invalid_citations: Invalid = "error") -> ResolvedCase:
    documents, paths = _documents(sources, where)
    try:
        case = Case(id="verify", question=question, sources=documents, answers=[_answer(answer)])
    except ValidationError as err:
        raise InputError(validation_problems(err, "verify")) from None
    rc, problems = resolve(case, Reading(invalid_citations=invalid_citations))
    if problems:
        raise InputError([_located(path, message, paths, where, answer_file) for path, message in problems])
    return rc


def _located(path: JsonPath, message: str, paths: list[JsonPath], where: _Where, answer_file: str) -> Problem:
    """A problem of the one-answer case put back where its part was given: a source at its own path (and
    line) in the sources, the answer in its file."""
    if path[:1] == ("sources",) and len(path) > 1 and isinstance(path[1], int):
        return where.problem(paths[path[1]] + tuple(path[2:]), message)
    if answer_file != "verify" and path[:2] == ("answers", 0):
        return Problem(answer_file, None, format_path(path[2:]), message)
    return Problem("verify", None, format_path(path), message)


def answer_file_case(answer_path: str | Path, sources_path: str | Path, answer_id: str | None = None) -> ResolvedCase:
    """The one-answer case of `citeaudit verify ANSWER.txt --sources SOURCES.json`: the answer's text and
    its sources (a mapping id -> text, or a list of documents), each problem named by its file, and a
    source's by its line and path in the sources file."""
    name = str(sources_path)
    data = read_json_file(name)
    if not isinstance(data, (dict, list)):
        raise InputError([Problem(name, None, "", "expected a mapping id -> text, or a list of documents")])
    piece = cache(lambda: JsonPiece(read_text(name)))  # lines are looked up only for a problem
    text = read_text(answer_path)  # as every input: a byte-order mark skipped, a file that is not UTF-8 located
    return _case({"id": answer_id or Path(answer_path).stem, "text": text}, data, "",
                 _Where(name, (), lambda path: piece().line(path)), str(answer_path))


# --------------------------------------------------------------------------------------------
# Verifying


def verify(answer: str | Answer | Mapping[str, Any], sources: Any, judge: str | Judge = DEFAULT_JUDGE,
           policy: Policy | None = None, *, store: str | Path | JudgmentStore | None = None,
           budget: SearchBudget | None = None, question: str = "",
           repair: RepairOptions | None = RepairOptions(), invalid_citations: Invalid = "error") -> Verification:
    """Verify `answer` (raw text with citation markers, or an Answer record) against `sources` (a mapping
    id -> text, or a list of documents or passages, as records or dicts).

    `judge` is a Judge or a judge spec (`model`, `model:guard=off`, `openai:MODEL`, …); the curated judge
    needs labels, so pass a `CuratedJudge` built from labelled cases. `store` records judgments (and
    replays them on the next call). With a spent `budget`, gaps are stated as limitations. `repair`: how
    far to look among the other sources for a citation that supports a gap's claim (None: not at all).
    `invalid_citations`: a marker naming no source is an InputError ("error", for a hand-written answer:
    a typo to fix), or ("count", for a generated one: the model's mistake) its statement's claims are
    judged unsupported by rule and become gaps."""
    rc = _case(answer, sources, question, invalid_citations=invalid_citations)
    return verify_case(rc, rc.case.answers[0].id, judge, policy, store=store, budget=budget, repair=repair,
                       invalid_citations=invalid_citations)


def verify_case(rc: ResolvedCase, answer_id: str, judge: str | Judge = DEFAULT_JUDGE, policy: Policy | None = None,
                *, store: str | Path | JudgmentStore | None = None, budget: SearchBudget | None = None,
                repair: RepairOptions | None = RepairOptions(), invalid_citations: Invalid = "error") -> Verification:
    """Verify one answer of a resolved case (a case file's answer: `citeaudit verify CASE --answer ID`);
    `invalid_citations` as the case was resolved."""
    policy = policy or Policy()
    settings = replace(VERIFY_SETTINGS, invalid_citations=invalid_citations)
    answer = next((a for a in rc.case.answers if a.id == answer_id), None)
    if answer is None:
        known = ", ".join(a.id for a in rc.case.answers) or "none"
        raise InputError([Problem(rc.origin or rc.id, None, "answers", f"no answer '{answer_id}' in case "
                                                                       f"'{rc.id}' (answers: {known})")])
    one = ResolvedCase(rc.case.model_copy(update={"answers": [answer]}), rc.passages, rc.origin, rc.parsed)
    if isinstance(judge, (str, JudgeSpec)):
        judgments = judgment_source(judge, [rc], store=store)  # the whole case: a curated judge reads its labels
    else:
        judgments = Judgments(judge, JudgmentStore(store) if isinstance(store, (str, Path)) else store)
    if judgments.batched:
        judgments.fill(plan_requests([one], settings))  # model and remote judges work in batches
    report = case_report(one, judgments, settings)
    repairer = Repairer(judgments, repair) if repair is not None else None
    result = _verification(one, report.answers[0], policy, report, budget, repairer)
    result._report, result._judgments = report, judgments
    return result


def _verification(rc: ResolvedCase, scored: AnswerResult, policy: Policy, report: Report,
                  budget: SearchBudget | None, repairer: Repairer | None = None) -> Verification:
    spent = budget is not None and budget.exhausted
    checks = [ClaimCheck(id=c.id, statement=c.statement, text=c.text, citations=c.citations, label=c.label,
                         supported=policy.counts(c.judgment), judgment=c.judgment) for c in scored.claims]
    gaps = {(c.statement, c.index): _gap(rc, c, budget if spent else None, repairer)
            for c, check in zip(scored.claims, checks) if not check.supported}
    by_statement: dict[int, list[ClaimResult]] = {}
    for c in scored.claims:
        by_statement.setdefault(c.statement, []).append(c)
    pieces: list[str] = []
    for st in scored.statements:
        if st.kind == "abstention":
            pieces.append(st.text.strip())  # the answer's own statement of a limit: kept as written
        # other text (a lead-in, a heading) asserts nothing and is left out
        for claim in by_statement.get(st.index, []):
            gap = gaps.get((claim.statement, claim.index))
            pieces.append(gap.sentence if gap else _cited(claim.text, claim.citations))
    supported = sum(c.supported for c in checks)
    decision = policy.decide(supported, len(checks))
    if decision == "abstain" and any(g.kept for g in gaps.values()):
        decision = "revise"  # a claim kept with corrected citations is something the sources support
    limits = [g.sentence for g in gaps.values() if g.limitation]
    return Verification(
        case=rc.id, answer=scored.answer_id, decision=decision,
        supported_answer=" ".join(p for p in pieces if p), gaps=list(gaps.values()), claims=checks,
        limitations=limits, policy=policy,
        signature=_signature(report, policy, repairer), search=SearchRecord.of(budget) if budget is not None else None)


def _signature(report: Report, policy: Policy, repairer: Repairer | None = None) -> str:
    """verify|judge:…|[parse:…|claims:…|][invalid:count|]partial:…|max_unsupported:…|[repair:candidates:…|budget:…|rank:…|]version:…"""
    sig = report.run_signature
    parts = ["verify", f"judge:{sig.judge}"]
    if sig.parser is not None:
        parts += [f"parse:{sig.parser}", f"claims:{sig.claims}"]
    if sig.invalid != "error":  # printed only when not the default, as a figure's signature prints it
        parts.append(f"invalid:{sig.invalid}")
    repairs = [f"repair:{repairer.options.render()}"] if repairer is not None else []
    return "|".join(parts + [policy.render(), *repairs, f"version:{sig.version}"])


def _cited(text: str, citations: Sequence[str]) -> str:
    """"The limit is 80 °C." with [D1] -> "The limit is 80 °C [D1].\""""
    body, end = _split_end(text)
    return f"{body} [{', '.join(citations)}]{end}" if citations else f"{body}{end}"


def _split_end(text: str) -> tuple[str, str]:
    text = text.strip()
    m = re.search(r"[.!?。！？]+$", text)
    return (text[: m.start()], m.group(0)) if m else (text, ".")


def _quoted_claim(rc: ResolvedCase, text: str) -> str:
    """The claim as it reads inside another sentence: its first word lowered unless it is a name."""
    body, _ = _split_end(text)
    m = re.match(r"[A-Z][a-z]+\b", body)
    if m:
        word = m.group(0).lower()
        # written in lower case somewhere in the sources or the answer: a common word, not a name
        seen = " ".join([*(p.text for p in rc.passages.values()),
                         *(st.text for a in rc.case.answers for st in a.statements)])
        if word in NOT_NAMES or re.search(rf"(?<![\w-]){word}\b", seen):
            body = word + body[m.end():]
    return body


def _sentence(rc: ResolvedCase, claim: ClaimResult, label: str, budget: SearchBudget | None) -> str:
    """One plain sentence saying what the sources do not establish, from the claim's own words."""
    said = _quoted_claim(rc, claim.text)
    if budget is not None:
        searches = f"{budget.used} search{'es' if budget.used != 1 else ''}"
        return f"After {searches}, the sources do not establish that {said}."
    invalid = claim.judgment is not None and claim.judgment.judge == INVALID_CITATION_JUDGE
    if not claim.citations and not invalid:  # a claim citing only what names no source did cite something
        return f"No source is cited for the claim that {said}."
    if label == "contradicts":
        return f"The sources contradict the claim that {said}."
    if label == "partial":
        return f"The sources establish only part of the claim that {said}."
    if label == "uncertain" and not guard_notes(claim.judgment.explanation):
        return f"The sources could not be confirmed to establish that {said}."
    return f"The sources do not establish that {said}."


def _gap(rc: ResolvedCase, claim: ClaimResult, budget: SearchBudget | None, repairer: Repairer | None = None) -> Gap:
    found = repairer.claim(rc, claim) if repairer is not None else None
    gap = Gap(claim=claim.id, statement=claim.statement, text=claim.text, citations=claim.citations,
              label=claim.label, evidence=_evidence(rc, claim), reason=_reason(claim),
              sentence=_sentence(rc, claim, claim.label, budget), limitation=budget is not None)
    if found is None or found.suggested is None:
        return gap
    # kept, with the citations the judge found support it, instead of dropped
    return gap.model_copy(update={"repair": found, "sentence": _cited(claim.text, found.suggested), "limitation": False})


def _evidence(rc: ResolvedCase, claim: ClaimResult) -> EvidenceRef | None:
    """Where the judgment rests: the span the judge named, else the first cited passage whole."""
    j = claim.judgment
    named = j.evidence if j is not None else None
    if named is not None and named.passage in rc.passages:
        p = rc.passages[named.passage]
        start, end = named.start, min(named.end, len(p.text))
    elif claim.citations and claim.citations[0] in rc.passages:
        p = rc.passages[claim.citations[0]]
        start, end = 0, len(p.text)
    else:
        return None
    quote = p.text[start:end]
    if len(quote) > QUOTE_LIMIT:
        quote = quote[: QUOTE_LIMIT - 1] + "…"
    return EvidenceRef(passage=p.id, doc=p.doc_id, version=p.version, start=p.start + start, end=p.start + end,
                       quote=quote)


def _reason(claim: ClaimResult) -> str:
    """Why the claim falls short: the qualifier guard's finding, else the judge's own words."""
    j = claim.judgment
    if j is None:
        return "not judged: the judge has no label for this pair"
    if by_rule(j):
        return j.explanation or "no passage is cited"
    notes = guard_notes(j.explanation)  # the model judge's qualifier guard, as it recorded its finding
    if notes:
        why = "; ".join(f"{n.reason} (qualifier guard: {n.kind})" for n in notes)
    elif j.scores is None and j.explanation:  # a person's or a remote judge's own words
        why = j.explanation
    else:
        support = (j.scores or {}).get("support")
        why = f"the judge labels it {j.label}" + (f" (p(support) {support:.2f})" if support is not None else "")
    if j.uncertain:
        why = f"the judge is not sure (its best guess is {j.label}): " + why
    elif j.label == "partial":
        why += " (partial support does not count under this policy)"
    return why
