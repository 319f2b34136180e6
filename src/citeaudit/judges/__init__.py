"""Judges behind one protocol, a registry to name them, and the judgment source scoring reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import UnknownJudge
from ..resolve import ResolvedCase
from .base import Judge, JudgmentSource, Request, judge_many
from .curated import CuratedJudge
from .source import Judgments
from .spec import EMBEDDING, HF, MODEL, ONNX, JudgeOptions
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


def _with_options(description: str, table: JudgeOptions) -> str:
    """A built-in judge's description with its options, from its option table."""
    names = [o.name for o in table.options if o.in_spec]
    envs = [o.env for o in table.options if o.env]
    return description + (f"; options: {', '.join(names)}" if names else "") + (
        f"; environment: {', '.join(envs)}" if envs else "")


@register_judge("curated", "human labels given in the cases' `labels`; an unlabelled pair is an error")
def _curated(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    return CuratedJudge.from_cases(cases)


@register_judge("hf", _with_options(
    "a local transformers sequence-classification checkpoint: hf:PATH[::NAME=label,...]", HF))
def _hf(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .local import make_local_judge

    return make_local_judge("hf", argument)


@register_judge("onnx", _with_options(
    "a local ONNX classifier with tokenizer.json and config.json: onnx:PATH[::NAME=label,...]", ONNX))
def _onnx(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .local import make_local_judge

    return make_local_judge("onnx", argument)


@register_judge("model", _with_options(
    "the shipped offline judge (int8 MiniLM cross-encoder + qualifier guard): model[:OPTION=VALUE,...]", MODEL))
def _model(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .model import make_model_judge

    return make_model_judge(argument)


@register_judge("embedding", _with_options(
    "cosine similarity of packaged multilingual-e5-small embeddings: embedding[:THRESHOLD] or "
    "embedding[:OPTION=VALUE,...]", EMBEDDING))
def _embedding(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .embedding import make_embedding_judge

    return make_embedding_judge(argument)


@register_judge("openai", "an OpenAI-compatible chat endpoint: openai:MODEL; environment: CITEAUDIT_OPENAI_* "
                          "(see docs/remote-judges.md)")
def _openai(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .remote import judge_from_env

    return judge_from_env(argument)


@register_judge("cascade", "judge with the first, send only its uncertain pairs to the second: "
                           "cascade:FIRST,SECOND (SECOND may be `human`: they wait for review in the desk)")
def _cascade(argument: str, cases: Sequence[ResolvedCase]) -> Judge:
    from .cascade import make_cascade

    return make_cascade(argument, lambda spec: make_judge(spec, cases), lambda name: name in _REGISTRY)


def available_judges() -> dict[str, str]:
    return {name: description for name, (_, description) in sorted(_REGISTRY.items())}


def make_judge(spec: str, cases: Sequence[ResolvedCase]) -> Judge:
    """The judge named by `spec` (`NAME` or `NAME:ARGUMENT`, see judges/spec.py for the grammar)."""
    name, _, argument = spec.partition(":")
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownJudge(f"unknown judge '{spec}'; known judges: {known}")
    return _REGISTRY[name][0](argument, cases)
