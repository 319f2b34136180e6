"""One call between an assistant's cited draft and its user, in any framework: verify the draft against the
contexts it was written from, and get back what to deliver with the decision behind it.

    from citeaudit.integrations.guard import AnswerGuard
    guard = AnswerGuard(judge="model")            # settings held once; the judge is built on the first call
    checked = guard("How often is the filter replaced?", draft, retrieved)
    checked.decision          # "deliver", "revise" or "abstain": `citeaudit verify`'s decision
    checked.answer            # the draft, the answer the sources support, or an abstention
    checked.failing_claims    # each claim not counted as support: citations, label, why, the best evidence

The decision is `citeaudit verify`'s on the same one-answer case (through `core.check_citations`, the one
code path every adapter shares), so an application's guard and a report never disagree. What is
delivered for each decision:

    deliver   the draft, as written
    revise    verify's supported answer: the supported claims with their citations (a claim kept with the
              citation another context supports it with), and a sentence for each dropped claim built from
              its own words ("The sources do not establish that ...")
    abstain   the abstention (`abstention`; by default `default_abstention`)

Generated answers are read with `invalid_citations="count"`: a marker naming no retrieved context ([4] when
three were retrieved) is the model's mistake, so its claim is a failing claim, not an exception. Bad input
(an answer that is not text, contexts of the wrong shape, none at all) is an InputError naming the field.
This module imports no third-party package; `langchain.py` wraps it as a LangChain Runnable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeaudit.errors import InputError, Problem
from citeaudit.integrations.core import (DEFAULT_JUDGE, check_citations, cite_problem, context_documents,
                                         judge_for)
from citeaudit.metrics.ratio import Ratio

if TYPE_CHECKING:
    from citeaudit.judges import Judge, JudgmentStore
    from citeaudit.run.verify import Policy, Verification

__all__ = ["ABSTENTION", "AnswerGuard", "Evidence", "FailingClaim", "GuardedAnswer", "Where", "default_abstention",
           "guard_answer"]

ABSTENTION = "The retrieved sources do not support an answer to this question."
INVALID = ("error", "count")


def default_abstention(verification: Verification) -> str:
    """What an abstaining guard delivers unless told otherwise. A draft that makes no claim asserted
    nothing: its own statements of a limit ("The manual does not say.") are kept as written. Otherwise
    `ABSTENTION`, followed by verify's sentences saying what the sources do not establish ("The sources do
    not establish that the Aero 2 works with Alexa."): nothing from outside the draft's own words."""
    said = verification.supported_answer
    if not verification.claims and said:
        return said
    return f"{ABSTENTION} {said}" if said else ABSTENTION


@dataclass(frozen=True)
class Evidence:
    """The best evidence found for a failing claim: the context it lies in and the quoted text."""

    context: str  # as the answer cites it: the context's number (cite=order) or its id (cite=id)
    source_id: str | None  # the context's own id (a LangChain Document's id or metadata id), where it has one
    quote: str
    start: int  # character offsets into the context's text
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {"context": self.context, "source_id": self.source_id, "quote": self.quote,
                "start": self.start, "end": self.end}


@dataclass(frozen=True)
class FailingClaim:
    """A claim of the draft that did not count as support, and what the delivered answer says instead."""

    text: str
    citations: tuple[str, ...]  # as the draft wrote them (a marker naming no context is left out)
    label: str  # none, partial, contradicts, or uncertain (the judge was not sure: never support)
    reason: str  # why it falls short: the rule, the qualifier guard's finding, or the label and p(support)
    sentence: str  # what the revised answer says instead: the claim with corrected citations, or why dropped
    evidence: Evidence | None
    kept_with: tuple[str, ...] | None = None  # the citations it is kept with, when another context supports it

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "citations": list(self.citations), "label": self.label, "reason": self.reason,
                "sentence": self.sentence, "evidence": self.evidence.to_dict() if self.evidence else None,
                "kept_with": list(self.kept_with) if self.kept_with is not None else None}


@dataclass(frozen=True)
class GuardedAnswer:
    """The answer to deliver, the decision behind it, and everything that explains it."""

    answer: str  # what to deliver (see the module's table)
    decision: str  # deliver, revise or abstain
    original: str  # the draft as the assistant wrote it
    failing_claims: tuple[FailingClaim, ...]
    support: Ratio  # supported claims / claims the judge was sure of, as `citeaudit score` counts them
    signature: str  # verify's signature with the citation convention: `verify|judge:…|…|cite:order|version:…`
    verification: Verification = field(repr=False, compare=False)  # the full Verification (gaps, claims, run log)

    @property
    def revised(self) -> bool:
        """The delivered answer differs from the draft."""
        return self.answer != self.original

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: everything but the Verification (its own `model_dump()` gives that)."""
        return {"answer": self.answer, "decision": self.decision, "original": self.original,
                "failing_claims": [c.to_dict() for c in self.failing_claims], "support": str(self.support),
                "signature": self.signature}


@dataclass(frozen=True)
class Where:
    """Where each input is named in a message: the caller, and the field or key of each input."""

    caller: str = "guard_answer"
    question: str = "question"
    answer: str = "answer"
    contexts: str = "contexts"

    def problem(self, path: str, message: str) -> Problem:
        return Problem(self.caller, None, path, message)


class AnswerGuard:
    """`guard_answer`'s settings held once, for an application that checks every answer it drafts. The
    judge is built on the first call and reused; calls from several threads (LangChain's `batch`) take
    turns at the judge, which keeps caches and a tokenizer that are not safe to share mid-call.

    `judge`: a judge spec (`model`, the shipped offline judge) or a Judge. `policy`: a Policy or its text
    (`partial=supported,max_unsupported=0.25`). `cite`: what a marker names, the n-th context (`order`:
    [1] is the first context retrieved) or a context's own id (`id`). `store`: recorded judgments,
    replayed on the next call. `repair`: look among the other contexts for one that supports a failing
    claim, and keep the claim with it (verify's default). `invalid_citations`: `count` (a marker naming
    no context is a failing claim) or `error`. `abstention`: the text delivered on abstain, or a
    function of the Verification that returns it (default: `default_abstention`)."""

    def __init__(self, judge: str | Judge = DEFAULT_JUDGE, policy: Policy | str | None = None, *,
                 cite: str = "order", store: str | Path | JudgmentStore | None = None, repair: bool = True,
                 invalid_citations: str = "count",
                 abstention: str | Callable[[Verification], str] | None = None):
        problems = []
        problems += [p for p in [cite_problem(cite, "AnswerGuard")] if p is not None]
        if invalid_citations not in INVALID:
            problems.append(Problem("AnswerGuard", None, "invalid_citations", f"unknown value '{invalid_citations}' "
                                                                              f"(known: {', '.join(INVALID)})"))
        if abstention is not None and not isinstance(abstention, str) and not callable(abstention):
            problems.append(Problem("AnswerGuard", None, "abstention", "expected the abstention's text or a function "
                                                                       "of the Verification that returns it, got "
                                                                       f"{type(abstention).__name__}"))
        if not isinstance(judge, str) and not callable(getattr(judge, "judge", None)):
            problems.append(Problem("AnswerGuard", None, "judge", f"expected a judge spec (such as 'model') or a "
                                                                  f"Judge, got {type(judge).__name__}"))
        if problems:
            raise InputError(problems)
        self.policy = _policy(policy)
        self.cite, self.store, self.repair = cite, store, repair
        self.invalid_citations = invalid_citations
        self.abstention = abstention
        self._spec = judge
        self._judge: Judge | None = None if isinstance(judge, str) else judge
        self._lock = threading.Lock()

    @property
    def judge(self) -> Judge:
        """The judge, built from its spec on first use (loading the model judge takes about a second)."""
        with self._lock:
            if self._judge is None:
                self._judge = judge_for(self._spec)
            return self._judge

    def __call__(self, question: str | None, answer: str, contexts: Any) -> GuardedAnswer:
        return self.check(question, answer, contexts)

    def check(self, question: str | None, answer: str, contexts: Any, where: Where = Where("AnswerGuard")
              ) -> GuardedAnswer:
        """Verify `answer` against `contexts` (texts, `{"id", "text"}` mappings, a mapping id -> text, or
        LangChain Documents) and return what to deliver. `where` names the inputs in a message."""
        problems: list[Problem] = []
        if question is not None and not isinstance(question, str):
            problems.append(where.problem(where.question, f"expected the question's text, got "
                                                          f"{type(question).__name__}"))
        if not isinstance(answer, str):
            problems.append(where.problem(where.answer, f"expected the answer's text, got {type(answer).__name__}"))
        docs = self._documents(contexts, where, problems)
        if problems:
            raise InputError(problems)
        judge = self.judge
        with self._lock:  # one call at a time at the judge (see the class)
            result = check_citations(question or "", answer, contexts, judge,
                                     cite=self.cite, store=self.store, policy=self.policy, repair=self.repair,
                                     invalid_citations=self.invalid_citations)
        return self._guarded(answer, result, docs)

    def _documents(self, contexts: Any, where: Where, problems: list[Problem]) -> list[dict[str, Any]]:
        """The contexts as core's documents; each problem added, named under the key they came from."""
        if contexts is None:
            problems.append(where.problem(where.contexts, "no retrieved contexts (None): there is nothing to "
                                                          "check the answer's citations against"))
            return []
        try:
            docs = context_documents(contexts, self.cite, where.caller)
        except InputError as err:  # core names a context by its place ("[2]"): put it under its key
            problems += [where.problem(f"{where.contexts}{p.path}" if p.path.startswith("[") else where.contexts,
                                       p.message) for p in err.problems]
            return []
        if not docs:
            problems.append(where.problem(where.contexts, "no retrieved contexts (an empty list): there is nothing "
                                                          "to check the answer's citations against"))
        return docs

    def _guarded(self, answer: str, result: Any, docs: list[dict[str, Any]]) -> GuardedAnswer:
        verification = result.verification
        if verification.decision == "deliver":
            delivered = answer
        elif verification.decision == "revise":
            delivered = verification.supported_answer
        elif isinstance(self.abstention, str):
            delivered = self.abstention
        else:
            delivered = (self.abstention or default_abstention)(verification)
        own_ids = {d["id"]: d.get("metadata", {}).get("id", d["id"] if self.cite == "id" else None) for d in docs}
        return GuardedAnswer(answer=delivered, decision=verification.decision, original=answer,
                             failing_claims=tuple(_failing(gap, own_ids) for gap in verification.gaps),
                             support=result.support, signature=_signature(verification.signature, self.cite),
                             verification=verification)


def guard_answer(question: str | None, answer: str, contexts: Any, judge: str | Judge = DEFAULT_JUDGE,
                 policy: Policy | str | None = None, *, cite: str = "order",
                 store: str | Path | JudgmentStore | None = None, repair: bool = True,
                 invalid_citations: str = "count",
                 abstention: str | Callable[[Verification], str] | None = None) -> GuardedAnswer:
    """Verify one drafted answer against the contexts it was written from and return what to deliver
    (AnswerGuard's options). A judge given by its spec is built for this call: an application that
    checks many answers holds one `AnswerGuard`, or passes `core.judge_for(spec)`."""
    guard = AnswerGuard(judge, policy, cite=cite, store=store, repair=repair, invalid_citations=invalid_citations,
                        abstention=abstention)
    return guard.check(question, answer, contexts, Where("guard_answer"))


def _policy(policy: Any) -> Policy:
    from citeaudit.run.verify import Policy

    if policy is None or isinstance(policy, Policy):
        return policy or Policy()
    if isinstance(policy, str):
        return Policy.parse(policy, source="policy")
    raise InputError([Problem("AnswerGuard", None, "policy", f"expected a Policy or its text "
                                                             f"('partial=supported,max_unsupported=0.25'), got "
                                                             f"{type(policy).__name__}")])


def _failing(gap: Any, own_ids: dict[str, str | None]) -> FailingClaim:
    e = gap.evidence
    evidence = (Evidence(context=e.passage, source_id=own_ids.get(e.doc), quote=e.quote, start=e.start, end=e.end)
                if e is not None else None)
    kept = tuple(gap.repair.suggested) if gap.kept else None
    return FailingClaim(text=gap.text, citations=tuple(gap.citations), label=gap.label, reason=gap.reason,
                        sentence=gap.sentence, evidence=evidence, kept_with=kept)


def _signature(verify_signature: str, cite: str) -> str:
    """verify's signature with what a marker names (`cite:order` or `cite:id`) before the version."""
    head, sep, version = verify_signature.rpartition("|version:")
    return f"{head}|cite:{cite}{sep}{version}" if sep else f"{verify_signature}|cite:{cite}"
