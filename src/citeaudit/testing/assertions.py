"""`assert_supported`: fail a test when a cited answer makes claims its own sources do not support.

Built on `citeaudit.verify`: the answer is parsed and judged exactly as `citeaudit verify` and `score`
judge it (citation markers -> passage ids, statements -> atomic claims, each claim against the passages
it cites). A claim counts as supported only when its judgment is a `full` the judge is sure of:
`partial`, `none`, `contradicts`, an `uncertain` judgment and a claim citing nothing count against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.judges.base import Judge
from citeaudit.judges.source import Judgments
from citeaudit.judges.store import JudgmentStore
from citeaudit.metrics.ratio import Ratio
from citeaudit.records import Judgment

EXCERPT_CHARS = 160  # how much of a cited passage the failure message quotes


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of the answer, what it cites, how it was judged and why it falls short (if it does)."""

    index: int  # 1-based, in reading order
    text: str
    citations: tuple[str, ...]
    label: str  # full, partial, none, contradicts, or uncertain
    supported: bool
    judgment: Judgment | None
    reason: str = ""  # why an unsupported claim falls short (verify's gap reason)
    evidence: tuple[str, str] | None = None  # (passage id, quoted span) the judge pointed at


@dataclass(frozen=True)
class SupportCheck:
    """What `assert_supported` found: every claim's judgment and the share supported."""

    claims: tuple[ClaimCheck, ...]
    min_support: float
    judge: str  # the judge's signature
    verification: Any  # the full citeaudit.Verification (decision, supported answer, gaps, signature)

    @property
    def support(self) -> Ratio:
        return Ratio(sum(c.supported for c in self.claims), len(self.claims), "the answer makes no claim to check")

    @property
    def unsupported(self) -> list[ClaimCheck]:
        return [c for c in self.claims if not c.supported]

    @property
    def passed(self) -> bool:
        value = self.support.value
        return value is not None and value >= self.min_support

    def explain(self, passages: Mapping[str, str] | None = None) -> str:
        """The failure message: the counts, then each unsupported claim with its label, cited excerpt
        and the reason it falls short."""
        support = self.support
        if support.value is None:
            return f"{support.reason}: nothing to assert support of (judge {self.judge})"
        lines = [f"{len(self.unsupported)} of {support.denominator} claims not supported by their cited "
                 f"sources: support {support.numerator}/{support.denominator} ({support.value:.1%}), "
                 f"min_support {self.min_support:.1%} (judge {self.judge})"]
        for claim in self.unsupported:
            lines += ["", f"- claim {claim.index}: {claim.text!r}", f"    label:  {claim.label}"]
            lines += [f"    cited:  {cited}" for cited in _cited(claim, passages or {})]
            if claim.reason:
                lines.append(f"    reason: {_one_line(claim.reason)}")
        return "\n".join(lines)


def assert_supported(
    answer: str,
    sources: Any,
    *,
    judge: Judge | Judgments | str,
    min_support: float = 1.0,
    store: JudgmentStore | str | Path | None = None,
) -> SupportCheck:
    """Judge every claim of `answer` against the passages it cites; raise AssertionError listing the
    unsupported claims when the supported share is below `min_support` (1.0: every claim).

    `answer` is raw text with citation markers (`[1]`, `[D1]`, ...). `sources` are the passages it may
    cite: a mapping id -> text, a list of texts (ids "1", "2", ...), or what `verify` takes (documents
    or passages). `judge` is a Judge, a judge spec (`"openai:gpt-4o-mini"`) or the pytest plugin's
    `citeaudit_judge(...)`, which records judgments and replays them. `store` (a path or a
    JudgmentStore) records judgments and replays those already there (not with `citeaudit_judge`, which
    has its own). Returns the check when it passes.
    """
    check, passages = _check(answer, sources, judge, min_support, store)
    if not check.passed:
        raise AssertionError(check.explain(passages))
    return check


def check_support(answer: str, sources: Any, *, judge: Judge | Judgments | str, min_support: float = 1.0,
                  store: JudgmentStore | str | Path | None = None) -> SupportCheck:
    """`assert_supported` without the assertion: every claim's judgment."""
    return _check(answer, sources, judge, min_support, store)[0]


def _check(answer: str, sources: Any, judge: Judge | Judgments | str, min_support: float,
           store: JudgmentStore | str | Path | None) -> tuple[SupportCheck, dict[str, str]]:
    from citeaudit.run.verify import Policy, verify

    if not 0.0 <= min_support <= 1.0:
        raise ValueError(f"min_support must be a share between 0 and 1, got {min_support!r}")
    if isinstance(sources, Sequence) and not isinstance(sources, str) and all(isinstance(s, str) for s in sources):
        sources = {str(n): text for n, text in enumerate(sources, start=1)}
    if isinstance(judge, Judgments):  # the plugin's recording source: its judge (or replayer) and store
        if store is not None:
            raise TypeError("store goes with a judge, not with citeaudit_judge(...), which has its own")
        judge, store = judge.judge, judge.store
    elif isinstance(judge, str):
        from citeaudit.judges import make_judge

        judge = make_judge(judge, [])
    # no repair search: an assertion judges what the answer cites, and asks the judge for nothing else
    result = verify(answer, sources, judge=judge, policy=Policy(), store=store, repair=None)
    gaps = {(g.statement, g.text): g for g in result.gaps}
    claims = []
    for n, c in enumerate(result.claims, start=1):
        gap = gaps.get((c.statement, c.text))
        claims.append(ClaimCheck(
            index=n, text=c.text, citations=tuple(c.citations), label=c.label, supported=c.supported,
            judgment=c.judgment, reason=gap.reason if gap else "",
            evidence=(gap.evidence.passage, gap.evidence.quote) if gap and gap.evidence else None))
    check = SupportCheck(tuple(claims), min_support, judge.signature, result)
    return check, _texts(sources)


def _texts(sources: Any) -> dict[str, str]:
    """Passage id -> text, where the sources give both (for excerpts in the failure message)."""
    if isinstance(sources, Mapping):
        return {str(k): v if isinstance(v, str) else getattr(v, "text", "") or "" for k, v in sources.items()}
    out = {}
    for s in sources if isinstance(sources, Sequence) else ():
        pid, text = (s.get("id"), s.get("text")) if isinstance(s, Mapping) else (getattr(s, "id", None),
                                                                                  getattr(s, "text", None))
        if isinstance(pid, str) and isinstance(text, str):
            out[pid] = text
    return out


def _cited(claim: ClaimCheck, passages: Mapping[str, str]) -> list[str]:
    """One line per cited passage: the span the judge pointed at, else the passage's opening."""
    if not claim.citations:
        return ["nothing"]
    out = []
    for pid in claim.citations:
        text = passages.get(pid, "")
        if claim.evidence is not None and claim.evidence[0] == pid:
            quote = claim.evidence[1]
            at = text.find(quote)
            out.append(f"[{pid}] " + _excerpt(text, at, at + len(quote)) if at >= 0 else f'[{pid}] "{_one_line(quote)}"')
        elif text:
            out.append(f"[{pid}] " + _excerpt(text, 0, min(len(text), EXCERPT_CHARS)))
        else:
            out.append(f"[{pid}]")
    return out


def _excerpt(text: str, start: int, end: int) -> str:
    end = min(end, start + EXCERPT_CHARS)
    return f'"{"…" if start > 0 else ""}{_one_line(text[start:end])}{"…" if end < len(text) else ""}"'


def _one_line(text: str) -> str:
    return " ".join(text.split())
