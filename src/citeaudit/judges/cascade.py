"""`cascade:FIRST,SECOND`: the first judge judges every pair, and only the pairs it is `uncertain` of go to
the second. `cascade:model,openai:gpt-4o-mini` sends the model judge's hard pairs to a larger model;
`cascade:model,human` leaves them for a person (they stay `uncertain`, waiting in the desk's review).

Each judgment says which judge decided (`decided_by`) and why it was escalated; the signature names
the whole cascade, so a store never mixes its judgments with either judge's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from citeaudit.errors import JudgeSetupError
from citeaudit.records import Judgment, SourcePassage
from citeaudit.judges.base import Judge, Request, judge_many

HUMAN = "human"


def split_cascade(argument: str, known: Callable[[str], bool]) -> list[str]:
    """'model:guard=off,threads=2,openai:gpt' -> ['model:guard=off,threads=2', 'openai:gpt']: a comma
    starts a new judge only where a known judge's name (or "human") follows it."""
    parts: list[str] = []
    for piece in argument.split(","):
        name = piece.strip().partition(":")[0]
        if parts and not (known(name) or name == HUMAN):
            parts[-1] += "," + piece  # an option of the judge before it
        else:
            parts.append(piece.strip())
    return parts


class CascadeJudge:
    """Judge with `first`; hand its uncertain judgments to `second` (a judge, or None for a person)."""

    name = "cascade"

    def __init__(self, first: Judge, second: Judge | None):
        self.first, self.second = first, second
        tail = second.signature if second is not None else HUMAN
        self.signature = f"cascade[{first.signature} > {tail}]"
        self.escalated = 0  # pairs sent on so far: the share a run escalated, for whoever reports it

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self.judge_batch([Request.of(text, passages)])[0]

    def judge_batch(self, requests: Sequence[Request]) -> list[Judgment]:
        out = [self._decided(j, self.first) for j in judge_many(self.first, requests)]
        hard = [i for i, j in enumerate(out) if j.uncertain]
        self.escalated += len(hard)
        if not hard:
            return out
        if self.second is None:
            for i in hard:
                out[i] = out[i].model_copy(update={"explanation": (out[i].explanation or "")
                                                   + "; awaiting human review (the first judge is unsure)"})
            return out
        second = judge_many(self.second, [requests[i] for i in hard])
        for i, j in zip(hard, second):
            why = f"escalated: {self.first.name} was unsure ({_p(out[i])})"
            out[i] = self._decided(j, self.second, why)
        return out

    def _decided(self, judgment: Judgment, by: Judge, why: str = "") -> Judgment:
        explanation = "; ".join(x for x in (why, judgment.explanation or "") if x)
        return judgment.model_copy(update={"judge": self.signature, "decided_by": by.signature,
                                           "explanation": explanation or None})


def _p(judgment: Judgment) -> str:
    scores = judgment.scores or {}
    if "support" in scores:
        return f"p(support)={scores['support']:.3f}, best guess {judgment.label}"
    return f"best guess {judgment.label}"


def cascade_parts(argument: str, known: Callable[[str], bool]) -> tuple[str, str | None]:
    """The two judges of `cascade:FIRST,SECOND` as specs (SECOND None for a person), checked."""
    parts = split_cascade(argument, known)
    if len(parts) != 2 or not all(parts):
        raise JudgeSetupError(f"cascade:{argument}: name two judges, the first and the one its uncertain pairs "
                              "go to: cascade:model,openai:MODEL or cascade:model,human")
    first, second = parts
    if first == HUMAN:
        raise JudgeSetupError("cascade: a person can be the last judge of a cascade, not the first")
    return first, None if second == HUMAN else second
