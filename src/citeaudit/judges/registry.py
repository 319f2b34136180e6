"""The registry of judge kinds: how a spec names each, how it is read (judges/spec.py) and built."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.errors import JudgeSetupError, UnknownJudge
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.judges.base import Judge
from citeaudit.judges.curated import CuratedJudge
from citeaudit.judges.spec import (EMBEDDING, HF, MODEL, ONNX, OPENAI, JudgeOptions, JudgeSpec,
                                   Options)

JudgeFactory = Callable[[str, Sequence[ResolvedCase]], Judge]


@dataclass(frozen=True)
class JudgeKind:
    """One registered kind of judge: how its spec is read, how it is built, and what it needs."""

    name: str
    description: str
    build: Callable[[JudgeSpec, Sequence[ResolvedCase]], Judge]
    options: JudgeOptions | None = None  # its option table; None: it reads its argument itself
    reads_cases: bool = False  # built from the cases (the curated judge's labels)
    can_be_unsure: bool = False  # its judgments can be `uncertain`
    check: Callable[[Options], None] | None = None  # reads what its options name (files) when the spec is read


_REGISTRY: dict[str, JudgeKind] = {}


def _kind(name: str, description: str, options: JudgeOptions | None = None, reads_cases: bool = False,
          can_be_unsure: bool = False, check: Callable[[Options], None] | None = None):
    def decorate(build: Callable[[JudgeSpec, Sequence[ResolvedCase]], Judge]):
        _REGISTRY[name] = JudgeKind(name, _with_options(description, options) if options else description, build,
                                    options, reads_cases, can_be_unsure, check)
        return build

    return decorate


def register_judge(name: str, description: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Register a factory `(argument, cases) -> Judge` under `name` (used as `name` or `name:argument`)."""

    def decorate(factory: JudgeFactory) -> JudgeFactory:
        _REGISTRY[name] = JudgeKind(name, description, lambda spec, cases: factory(spec.argument, cases),
                                    reads_cases=True, can_be_unsure=True)  # unknown: assume it may need both
        return factory

    return decorate


def _with_options(description: str, table: JudgeOptions) -> str:
    """A built-in judge's description with its options, from its option table."""
    names = [o.name for o in table.options if o.in_spec]
    envs = [o.env for o in table.options if o.env]
    return description + (f"; options: {', '.join(names)}" if names else "") + (
        f"; environment: {', '.join(envs)}" if envs else "")


@_kind("curated", "human labels given in the cases' `labels`; an unlabelled pair is an error", reads_cases=True)
def _curated(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    return CuratedJudge.from_cases(cases)


@_kind("hf", "a local transformers sequence-classification checkpoint: hf:PATH[::NAME=label,...]", HF)
def _hf(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    from citeaudit.judges.local import local_judge

    return local_judge("hf", spec.options)


@_kind("onnx", "a local ONNX classifier with tokenizer.json and config.json: onnx:PATH[::NAME=label,...]", ONNX)
def _onnx(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    from citeaudit.judges.local import local_judge

    return local_judge("onnx", spec.options)


def _model_dir(options: Options) -> None:
    """The model directory (path=, else the shipped one) read and checked when the spec is: a damaged file
    stops every command before any work, with the same message."""
    from citeaudit.judges.model import model_dir

    model_dir(options["path"])


@_kind("model", "the shipped offline judge (int8 cross-encoders, judge-v1 for English and judge-v2 for Chinese, "
       "calibrated, with the plain reading and the qualifier guard): model[:OPTION=VALUE,...]",
       MODEL, can_be_unsure=True, check=_model_dir)
def _model(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    from citeaudit.judges.model import ModelJudge

    return ModelJudge(**spec.options.keywords())


@_kind("embedding", "cosine similarity of packaged multilingual-e5-small embeddings: embedding[:THRESHOLD] or "
                    "embedding[:OPTION=VALUE,...]", EMBEDDING)
def _embedding(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    from citeaudit.judges.embedding import EmbeddingJudge

    return EmbeddingJudge(**spec.options.keywords())


@_kind("openai", "an OpenAI-compatible chat endpoint: openai:MODEL[,OPTION=VALUE,...]; the API key comes from "
                 "CITEAUDIT_OPENAI_API_KEY or OPENAI_API_KEY only (see docs/remote-judges.md)", OPENAI)
def _openai(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    from citeaudit.judges.remote import OpenAIJudge

    return OpenAIJudge(spec.options.head, **spec.options.keywords())


@_kind("cascade", "judge with the first, send only its uncertain pairs to the second: cascade:FIRST,SECOND "
                  "(SECOND may be `human`: they wait for review in the desk)")
def _cascade(spec: JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    from citeaudit.judges.cascade import CascadeJudge

    first, second = spec.parts
    return CascadeJudge(build_judge(first, cases), build_judge(second, cases) if second is not None else None)


def available_judges() -> dict[str, str]:
    return {name: kind.description for name, kind in sorted(_REGISTRY.items())}


def judge_kinds() -> dict[str, JudgeKind]:
    """The registered kinds of judge, by name (for `citeaudit judges`)."""
    return dict(sorted(_REGISTRY.items()))


def parse_judge(spec: str | JudgeSpec, *, read_files: bool = True) -> JudgeSpec:
    """`NAME` or `NAME:ARGUMENT` parsed and checked (no judge is built); see judges/spec.py for the grammar.
    An unknown judge, option or value is an error that names it and lists what is allowed. The files a
    spec names are read and checked too (a model directory: judges/judge_dir.py), unless `read_files` is
    False: a spec a run log records names its judge, whose files may not be here."""
    if isinstance(spec, JudgeSpec):
        return spec
    text = spec.strip()
    name, colon, argument = text.partition(":")
    kind = _REGISTRY.get(name)
    if kind is None:
        raise UnknownJudge(f"unknown judge '{spec}'; known judges: {', '.join(sorted(_REGISTRY))}")
    if name == "cascade":
        from citeaudit.judges.cascade import cascade_parts

        parts = tuple(None if p is None else parse_judge(p, read_files=read_files)
                      for p in cascade_parts(argument, _REGISTRY.__contains__))
        if not parts[0].can_be_unsure:
            raise JudgeSetupError(f"cascade:{argument}: the first judge ({parts[0]}) is never unsure, so no pair "
                                  "would reach the second; start with a judge that can be (model)")
        return JudgeSpec(name, argument, parts=parts, reads_cases=any(p is not None and p.reads_cases for p in parts),
                         can_be_unsure=parts[1] is None or parts[1].can_be_unsure)
    if kind.options is not None:
        options = kind.options.parse(argument)
        if read_files and kind.check is not None:
            kind.check(options)
        return JudgeSpec(name, argument, options, reads_cases=kind.reads_cases, can_be_unsure=kind.can_be_unsure)
    if name == "curated" and (colon or argument):
        raise JudgeSetupError(f"the curated judge takes no options, got '{spec}': write --judge curated")
    return JudgeSpec(name, argument, reads_cases=kind.reads_cases, can_be_unsure=kind.can_be_unsure)


def build_judge(spec: str | JudgeSpec, cases: Sequence[ResolvedCase] = ()) -> Judge:
    """The judge named by `spec`, built (models loaded). `cases` are read only by a judge that reads them."""
    spec = parse_judge(spec)
    return _REGISTRY[spec.kind].build(spec, cases)


def judge_directory(spec: JudgeSpec | Any) -> Path | None:
    """The directory the judge of `spec` reads its model from: the model judge's `path=`, else the
    shipped judge of its `version`; an hf or onnx judge's PATH; a cascade's first judge's (the one that
    judges every pair); None for a judge that reads none (embedding, openai, curated). `spec` is a
    JudgeSpec or a run log's record of one (its options a dict, its `head` beside them). A shipped
    version this installation lacks is a JudgeSetupError."""
    while spec.kind == "cascade" and spec.parts:
        spec = spec.parts[0]
    options = spec.options if isinstance(spec.options, Mapping) else getattr(spec.options, "values", {})
    head = getattr(spec, "head", None) or getattr(spec.options, "head", None)
    if spec.kind == "model":
        if options.get("path"):
            return Path(options["path"])
        from citeaudit.judges.model import shipped_model_dir

        return shipped_model_dir()
    if spec.kind in ("hf", "onnx") and head:
        return Path(head)
    return None


def chinese_judge_directory(signature: str | None, directory: Path | None = None) -> tuple[str, Path] | None:
    """judge-v2's name and directory when the judge that signs `signature` hands its Chinese pairs to it
    (the model judge's `zh=judge-v2#…`, or `zh=judge-v2-adapted#…` for the adapted judge-v2 held inside the
    judge's own `directory`): the claims judge-v2 learnt from are seen by that judge too."""
    from citeaudit.judges.judge_dir import ADAPTED_CHINESE_JUDGE
    from citeaudit.judges.model import CHINESE_MODEL_NAME, shipped_model_dir

    if signature and directory is not None and f"|zh={ADAPTED_CHINESE_JUDGE}#" in signature:
        return ADAPTED_CHINESE_JUDGE, Path(directory) / ADAPTED_CHINESE_JUDGE
    if not signature or f"|zh={CHINESE_MODEL_NAME}#" not in signature:
        return None
    return CHINESE_MODEL_NAME, shipped_model_dir(CHINESE_MODEL_NAME)


def make_judge(spec: str | JudgeSpec, cases: Sequence[ResolvedCase]) -> Judge:
    """The judge named by `spec` (`NAME` or `NAME:ARGUMENT`, see judges/spec.py for the grammar)."""
    return build_judge(spec, cases)
