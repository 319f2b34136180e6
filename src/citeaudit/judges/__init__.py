"""Judges behind one protocol, a registry to name them, and the judgment source scoring reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import UnknownJudge
from ..resolve import ResolvedCase
from .base import Judge, JudgmentSource, Request, judge_many
from .curated import CuratedJudge
from .source import Judgments
from .store import JudgmentStore, MemoryStore, RecordedJudge, judgment_key

__all__ = [
    "CuratedJudge", "Judge", "JudgmentSource", "JudgmentStore", "MemoryStore", "Judgments", "RecordedJudge", "Request",
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
