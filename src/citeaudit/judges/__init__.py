"""Judges behind one protocol, a registry to name them, and the judgment source scoring reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import JudgeError, UnknownJudge
from ..records import Judgment, SourcePassage
from ..resolve import ResolvedCase
from .base import Judge, Request, judge_many
from .curated import CuratedJudge
from .store import JudgmentStore, MemoryStore, RecordedJudge, judgment_key

__all__ = [
    "CuratedJudge", "Judge", "JudgmentStore", "MemoryStore", "Judgments", "RecordedJudge", "Request",
    "available_judges", "judge_many", "judgment_key", "make_judge", "register_judge",
]

JudgeFactory = Callable[[str, Sequence[ResolvedCase]], Judge]
_REGISTRY: dict[str, tuple[JudgeFactory, str]] = {}


def register_judge(name: str, description: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a factory `(argument, cases) -> Judge` under `name` (used as `name` or `name:argument`)."""

    def decorate(factory: JudgeFactory) -> JudgeFactory:
        _REGISTRY[name] = (factory, description)
        return factory

    return decorate


@register_judge("curated", "human labels given in the cases' `labels`; an unlabelled pair is an error")
def _curated(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    return CuratedJudge.from_cases(cases)


@register_judge("hf", "a local transformers sequence-classification checkpoint: hf:PATH[::NAME=label,...]")
def _hf(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .local import make_local_judge

    return make_local_judge("hf", argument)


@register_judge("onnx", "a local ONNX classifier with tokenizer.json and config.json: onnx:PATH[::NAME=label,...]")
def _onnx(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .local import make_local_judge

    return make_local_judge("onnx", argument)


@register_judge("model", "the shipped offline judge (int8 MiniLM cross-encoder + qualifier guard): model[:guard=off]")
def _model(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .model import make_model_judge

    return make_model_judge(argument)


@register_judge("embedding", "cosine similarity of packaged multilingual-e5-small embeddings: embedding[:THRESHOLD]")
def _embedding(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .embedding import make_embedding_judge

    return make_embedding_judge(argument)


@register_judge("openai", "an OpenAI-compatible chat endpoint: openai:MODEL (see docs/remote-judges.md)")
def _openai(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .remote import judge_from_env

    return judge_from_env(argument)


def available_judges() -> dict[str, str]:
    return {name: description for name, (_, description) in sorted(_REGISTRY.items())}


def make_judge(spec: str, cases: Sequence[ResolvedCase]) -> Judge:
    name, _, argument = spec.partition(":")
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownJudge(f"unknown judge '{spec}'; known judges: {known}")
    return _REGISTRY[name][0](argument, cases)


class Judgments:
    """What scoring reads: each pair judged once, from the store when recorded there, else by the judge
    (and then recorded). Passing a RecordedJudge makes it replay-only."""

    def __init__(self, judge: Judge, store: JudgmentStore | None = None):
        self.judge = judge
        self.store = store
        self._memo: dict[Request, Judgment] = {}
        self.asked = 0  # how many pairs the judge itself was asked (not memo or store)

    @property
    def signature(self) -> str:
        return self.judge.signature

    def get(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        request = Request.of(text, passages)
        if request in self._memo:
            return self._memo[request]
        found = self.store.get(request, self.signature) if self.store else None
        if found is None:
            found = self.judge.judge(request.text, request.passages)
            if not isinstance(self.judge, RecordedJudge):
                self.asked += 1
                if self.store is not None:
                    self.store.put(request, found)
        self._memo[request] = found
        return found

    def recorded(self) -> list[tuple[Request, Judgment]]:
        """Every (pair, judgment) this source has served, in the order first asked."""
        return list(self._memo.items())

    def fill(self, requests: Sequence[Request], batch_size: int = 64, progress: Callable[[int], None] | None = None) -> int:
        """Judge every request not yet in the store, in batches; returns how many were judged."""
        missing = [r for r in dict.fromkeys(requests) if not (self.store and self.store.get(r, self.signature))]
        for i in range(0, len(missing), batch_size):
            chunk = missing[i : i + batch_size]
            try:
                judged = judge_many(self.judge, chunk)
            except JudgeError as err:
                # A batch judge may have judged most of the chunk: keep those before stopping.
                self._keep(chunk, getattr(err, "judgments", None) or [])
                raise
            self._keep(chunk, judged)
            if progress:
                progress(len(chunk))
        return len(missing)

    def _keep(self, requests: Sequence[Request], judged: Sequence[Judgment | None]) -> None:
        for request, judgment in zip(requests, judged):
            if judgment is None:
                continue
            self._memo[request] = judgment
            self.asked += 1
            if self.store is not None:
                self.store.put(request, judgment)
