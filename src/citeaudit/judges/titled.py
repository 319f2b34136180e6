"""Show a judge each passage as ALCE's eval.py shows its entailment model: "Title: <title>" on the
line before the passage text (`--conventions alce`).

The curated judge is never wrapped: its labels are keyed by the passage text itself. An evidence span
a wrapped judge points at is mapped back onto the passage text (the title line is not part of it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from citeaudit.records import Evidence, Judgment, SourcePassage
from citeaudit.judges.base import Judge, Request, judge_many


def title_line(passage: SourcePassage) -> str:
    return f"Title: {passage.title or ''}\n"


class TitledPassages:
    """A judge that reads every passage with its title line first; otherwise the inner judge."""

    def __init__(self, inner: Judge):
        self.inner = inner
        self.name = inner.name

    @property
    def signature(self) -> str:
        return f"{self.inner.signature}|passages=alce-title"

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self.judge_batch([Request.of(text, passages)])[0]

    def judge_batch(self, requests: Sequence[Request]) -> list[Judgment]:
        titled = [Request(r.text, tuple(replace(p, text=title_line(p) + p.text) for p in r.passages))
                  for r in requests]
        return [self._on_passage_text(j, r) for j, r in zip(judge_many(self.inner, titled), requests)]

    def _on_passage_text(self, judgment: Judgment, request: Request) -> Judgment:
        """The signature of this wrapper, and an evidence span back on the untitled passage text."""
        evidence = judgment.evidence
        if evidence is not None:
            passage = next((p for p in request.passages if p.id == evidence.passage), None)
            if passage is not None:
                shift = len(title_line(passage))
                start, end = max(0, evidence.start - shift), max(0, evidence.end - shift)
                evidence = Evidence(passage=evidence.passage, start=min(start, len(passage.text)),
                                    end=min(end, len(passage.text)))
        return judgment.model_copy(update={"judge": self.signature, "evidence": evidence})
