"""What every adapter asks: one question, its answer and the contexts the assistant retrieved -> citeaudit's
support figure, with the counts, the per-claim labels and the signatures that explain it.

    from citeaudit.integrations.core import check_citations
    result = check_citations("How heavy is the P7?", "The P7 weighs 4.2 kg [1].", ["The P7 weighs 4.2 kg."])
    result.score        # 1.0: the support figure `citeaudit score` gives for the same case
    result.reason()     # "support 1/1 (100.0 %): claim 1 'The P7 weighs 4.2 kg.' cites [1]: full (p(support) 0.95)"

The answer is judged as `citeaudit verify` and `score` judge it (one code path: `run.verify.verify`), so
a harness figure and a citeaudit report never disagree. A claim the judge was unsure of is counted in
neither the numerator nor the denominator, as every citeaudit figure counts it, and each adapter says so
in its harness's own terms; when no claim could be scored, `score` is None ("not scored"), never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from citeaudit.errors import InputError, Problem
from citeaudit.judges import Judge, JudgmentStore
from citeaudit.metrics import names as N
from citeaudit.metrics.ratio import Ratio
from citeaudit.metrics.scoring import UNCERTAIN

Cite = Literal["order", "id"]
CITES: tuple[str, ...] = ("order", "id")
DEFAULT_JUDGE = "model"  # the shipped offline judge: no labels, no network
NOT_SCORED = "not scored"  # what every adapter calls a claim (or an answer) the judge was unsure of
EXCERPT = 80  # characters of a claim quoted in a reason


@dataclass(frozen=True)
class ClaimVerdict:
    """One atomic claim of the answer: what it cites and how the judge labelled it."""

    text: str
    citations: tuple[str, ...]  # as the answer wrote them: context numbers (cite=order) or ids
    label: str  # full, partial, none, contradicts, uncertain (not scored), or unjudged
    supported: bool
    p_support: float | None = None  # the judge's calibrated probability of support, where it gives one

    @property
    def scored(self) -> bool:
        return self.label not in (UNCERTAIN, "unjudged")

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "citations": list(self.citations), "label": self.label,
                "supported": self.supported, "p_support": self.p_support}


@dataclass(frozen=True)
class CitationResult:
    """citeaudit's verdict on one answer, in the terms a harness needs."""

    support: Ratio  # supported claims / claims the judge was sure of
    claims: tuple[ClaimVerdict, ...]
    decision: str  # verify's: deliver, revise or abstain
    supported_answer: str
    judge_signature: str
    signature: str  # the support measure's whole signature, as `citeaudit score --signatures` prints it
    verification: Any = field(repr=False, compare=False, default=None)  # run.verify.Verification

    @property
    def score(self) -> float | None:
        """The support figure in [0, 1]; None when no claim could be scored (no claims, or all unsure)."""
        return None if self.support.denominator == 0 else self.support.value

    @property
    def not_scored(self) -> tuple[ClaimVerdict, ...]:
        return tuple(c for c in self.claims if not c.scored)

    def label_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for claim in self.claims:
            counts[claim.label] = counts.get(claim.label, 0) + 1
        return counts

    def reason(self) -> str:
        """One paragraph a harness report can show: the figure with its counts, then every claim."""
        head = f"support {self.support}"
        if not self.claims:
            head += ": the answer makes no claim (an abstention)"
        elif self.not_scored:
            head += f"; {len(self.not_scored)} of {len(self.claims)} claims {NOT_SCORED} (the judge was unsure)"
        lines = [head]
        for i, claim in enumerate(self.claims, 1):
            cites = " ".join(f"[{c}]" for c in claim.citations) or "nothing"
            label = NOT_SCORED if claim.label == UNCERTAIN else claim.label
            p = f" (p(support) {claim.p_support:.2f})" if claim.p_support is not None else ""
            lines.append(f"claim {i} {excerpt(claim.text)!r} cites {cites}: {label}{p}")
        return "; ".join(lines[:1]) + (": " + "; ".join(lines[1:]) if len(lines) > 1 else "")

    def metadata(self) -> dict[str, Any]:
        """Everything behind the figure, as JSON-ready values: counts, per-claim labels, signatures."""
        return {
            "score": self.score,
            "supported": self.support.numerator,
            "scored_claims": self.support.denominator,
            "claims": len(self.claims),
            "not_scored": len(self.not_scored),
            "labels": self.label_counts(),
            "decision": self.decision,
            "per_claim": [c.to_dict() for c in self.claims],
            "judge_signature": self.judge_signature,
            "signature": self.signature,
        }


def excerpt(text: str) -> str:
    """`text` cut to EXCERPT characters, for a message or a reason."""
    return text if len(text) <= EXCERPT else text[:EXCERPT - 1] + "…"


def cite_problem(cite: str, where: str) -> Problem | None:
    """The problem with a `cite` value an adapter was given, or None when it is one of CITES."""
    if cite in CITES:
        return None
    return Problem(where, None, "cite", f"unknown cite '{cite}' (known: {', '.join(CITES)})")


def context_documents(contexts: Any, cite: str = "order", where: str = "contexts") -> list[dict[str, Any]]:
    """The retrieved contexts as citeaudit documents. `contexts`: a list of texts, a list of
    `{"id", "text"}` (or `page_content`/`content`) mappings, or a mapping id -> text.

    cite=order: `[n]` names the n-th context (documents "1", "2", ..., the context's own id kept in its
    metadata); cite=id: the markers name the contexts' own ids."""
    problem = cite_problem(cite, where)
    if problem is not None:
        raise InputError([problem])
    if isinstance(contexts, Mapping):
        items: list[tuple[str | None, Any]] = [(str(k), v) for k, v in contexts.items()]
    elif isinstance(contexts, Sequence) and not isinstance(contexts, (str, bytes)):
        items = [(_context_id(c), c) for c in contexts]
    else:
        raise InputError([Problem(where, None, "", "expected the retrieved contexts: a list of texts, a list of "
                                                   f"{{'id', 'text'}} mappings or a mapping id -> text, got "
                                                   f"{type(contexts).__name__}")])
    docs, problems = [], []
    for n, (given_id, context) in enumerate(items, 1):
        text = _context_text(context)
        if text is None:
            problems.append(Problem(where, None, f"[{n - 1}]", f"expected a context's text, got "
                                                                f"{type(context).__name__}"))
            continue
        if cite == "id" and given_id is None:
            problems.append(Problem(where, None, f"[{n - 1}]", "cite=id needs every context's id; this one has "
                                                                "none (use cite=order: [n] names the n-th context)"))
            continue
        doc: dict[str, Any] = {"id": given_id if cite == "id" else str(n), "text": text}
        if cite == "order" and given_id is not None:
            doc["metadata"] = {"id": given_id}
        docs.append(doc)
    if problems:
        raise InputError(problems)
    return docs


def _context_id(context: Any) -> str | None:
    if isinstance(context, Mapping):
        value = context.get("id", context.get("doc_id"))
        return None if value is None else str(value)
    metadata = getattr(context, "metadata", None)  # a LangChain Document: its id, or its metadata's
    value = getattr(context, "id", None) or (metadata.get("id") if isinstance(metadata, Mapping) else None)
    return None if value is None else str(value)


def _context_text(context: Any) -> str | None:
    if isinstance(context, str):
        return context
    if isinstance(context, Mapping):
        for key in ("text", "page_content", "content"):
            if isinstance(context.get(key), str):
                return context[key]
        return None
    text = getattr(context, "page_content", None)  # a LangChain Document
    return text if isinstance(text, str) else None


def check_citations(question: str, answer: str, contexts: Any, judge: str | Judge = DEFAULT_JUDGE, *,
                    cite: str = "order", store: str | JudgmentStore | None = None, policy: Any = None,
                    repair: bool = False, invalid_citations: str = "error") -> CitationResult:
    """Judge `answer`'s cited claims against `contexts` as `citeaudit score` would, and return the support
    figure with everything behind it. `judge`: a judge spec (`model`, `model:guard=off`, `openai:MODEL`,
    …) or a Judge built once and reused across calls (see `judge_for`). `store`: recorded judgments,
    replayed on the next call. `repair`: also look among the other contexts for a citation that
    supports a failing claim (verify's repair; more judging). `invalid_citations`: a marker naming no
    context is an InputError ("error") or an unsupported claim ("count", verify's)."""
    from citeaudit.run.repair import RepairOptions
    from citeaudit.run.verify import verify

    docs = context_documents(contexts, cite)
    result = verify(answer, docs, judge, policy, store=store, question=question or "",
                    repair=RepairOptions() if repair else None, invalid_citations=invalid_citations)
    report = result._report
    claims = tuple(ClaimVerdict(text=c.text, citations=tuple(c.citations), label=c.label, supported=c.supported,
                                p_support=_p_support(c.judgment))
                   for c in result.claims)
    return CitationResult(support=report.summary()[N.SUPPORT], claims=claims, decision=result.decision,
                          supported_answer=result.supported_answer, judge_signature=report.judge_signature,
                          signature=report.signature(N.SUPPORT), verification=result)


def _p_support(judgment: Any) -> float | None:
    scores = judgment.scores if judgment is not None else None
    return round(scores["support"], 4) if scores and "support" in scores else None


# Where check_citations' problems arise (the one-answer case verify builds, the contexts read), and the
# part of the harness's record each stands for.
_PARTS: tuple[tuple[str, str], ...] = (("answers[0].text", "answer"), ("answers[0]", "answer"), ("sources", "contexts"),
                                       ("question", "question"))


def in_harness_terms(err: InputError, record: str, fields: Mapping[str, str]) -> InputError:
    """`err`, raised by check_citations, with every problem placed where the harness's user gave it:
    `record` names the test case or row, `fields` the harness's names for "question", "answer" and
    "contexts" (DeepEval: `{"answer": "actual_output", "contexts": "retrieval_context"}`), so that
    "verify: answers[0].text: ... unknown passage id '3'" reads "test case 'p7': actual_output: ...".
    The n-th context is source n-1 under either cite convention, so an index carries over."""
    def place(problem: Problem) -> Problem:
        path = problem.path
        if problem.file == "contexts" and path.startswith("["):  # context_documents: the n-th context
            return Problem(record, None, fields.get("contexts", "contexts") + path, problem.message)
        for prefix, part in _PARTS:
            if path == prefix or path.startswith((prefix + ".", prefix + "[")):
                return Problem(record, None, fields.get(part, part) + path[len(prefix):], problem.message)
        return Problem(record, None, path, problem.message)

    return InputError([place(p) for p in err.problems])


def judge_for(spec: str | Judge) -> Judge:
    """A judge built once from its spec, for an adapter that scores many answers (building the model
    judge loads its ONNX session; a harness calls the scorer once per test case)."""
    if not isinstance(spec, str):
        return spec
    from citeaudit.judges import make_judge

    return make_judge(spec, [])
