"""The judge protocol: one small call, the same `Judgment` back from every implementation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from citeaudit.records import Judgment, SourcePassage


@dataclass(frozen=True)
class Request:
    """One judgment the metrics need: does this passage set support this text?

    Passages are kept sorted by id: a set's judgment does not depend on citation order.
    """

    text: str
    passages: tuple[SourcePassage, ...]

    @classmethod
    def of(cls, text: str, passages: Sequence[SourcePassage]) -> Request:
        return cls(text, tuple(sorted(passages, key=lambda p: p.id)))

    @property
    def passage_ids(self) -> list[str]:
        return [p.id for p in self.passages]

    def describe(self) -> str:
        return f"claim {self.text!r} with passages [{', '.join(self.passage_ids)}]"


@runtime_checkable
class Judge(Protocol):
    """Labels whether a passage set supports a text: full, partial, none or contradicts."""

    name: str

    @property
    def signature(self) -> str:
        """Everything that can change this judge's labels: name, version, configuration, model hash."""
        ...

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment: ...


class JudgmentSource(Protocol):
    """What scoring needs: the judgment of one (text, passage set) pair, and the signature of the judge
    behind it. `judges.source.Judgments` is the usual one (judge + store + memo); a run log's replay
    is another."""

    @property
    def signature(self) -> str: ...

    def get(self, text: str, passages: Sequence[SourcePassage]) -> Judgment: ...


def judge_many(judge: Judge, requests: Sequence[Request]) -> list[Judgment]:
    """Judge several requests, in one batch when the judge offers `judge_batch`."""
    batch = getattr(judge, "judge_batch", None)
    if batch is not None:
        return list(batch(requests))
    return [judge.judge(r.text, r.passages) for r in requests]
