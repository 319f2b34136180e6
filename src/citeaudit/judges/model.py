"""The `model` judge: citeaudit's own fine-tuned cross-encoder (int8 ONNX, shipped in the package) plus
the qualifier guard, with Chinese pairs routed to the embedding judge.

    model                         the shipped model, guard on, Chinese -> embedding judge
    model:guard=off               without the qualifier guard
    model:threads=2               onnxruntime intra-op threads
    model:zh=model                judge Chinese with the model too (not validated: see docs/model-judge.md)
    model:path=DIR                another exported model directory (same layout as judges/../models/judge-v1)
    model:batch=16                windows per forward pass (default 1, see below)
    model:calibration=off         the model's own argmax instead of the calibrated decision

Batch size 1 by default: onnxruntime's dynamic int8 quantisation computes each activation scale over the
whole batch tensor, padding included, so with batches a window's scores move (by up to ~0.02) with
the company it is batched in. One window per pass makes a judgment independent of the batch (batch ==
single exactly, as a judgment store expects), and on 2 CPU threads it was no slower (no padding; see
benchmarks/model_judge_speed.py).

Inference is `CrossEncoderJudge("onnx", ...)` from judges/local.py (windows, batching, label mapping,
model-file hash): this module adds only the guard and the routing. It needs onnxruntime and tokenizers,
never torch.

Calibration (judges/calibration.py): when the model directory holds a calibration.json, as the shipped
one does, a pair is `full` when a logistic layer over logit p(full) and the claim-word recall of the
chosen window says p(support) >= 0.5; otherwise the model's own label stands, with a `full` it gave
turned into `partial` or `none` (whichever it scored higher). p(support) is kept as scores["support"].

The guard (judges/guard.py) looks at a `full` only: when a number, unit, percentage, date, version or
negation of the claim has no counterpart in the evidence window the model chose, the label becomes
`partial` or `none` (whichever the model scored higher) and the guard's reason is appended to the
explanation.

Chinese: the MiniLM vocabulary turns most Chinese characters into [UNK], so a pair whose claim or
passages are mostly Chinese is judged by `embedding:0.9175` (multilingual-e5-small) instead; the
explanation and the signature say so. The guard runs on those judgments too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import JudgeSetupError
from ..records import Judgment, SourcePassage
from . import calibration
from .base import Request
from .guard import check
from .local import CrossEncoderJudge
from .windows import set_windows

MODEL_NAME = "judge-v1"
ZH_EMBEDDING_THRESHOLD = "0.9175"
# the shipped config names its classes full / partial / none / contradicts
IDENTITY_LABELS = {name: name for name in ("full", "partial", "none", "contradicts")}


def shipped_model_dir() -> Path:
    """citeaudit/models/judge-v1, found with importlib.resources (works from a wheel or a checkout)."""
    from importlib.resources import files

    path = Path(str(files("citeaudit") / "models" / MODEL_NAME))
    if not (path / "config.json").exists():
        raise JudgeSetupError(f"the shipped model is missing at {path}")
    return path


def cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf") / len(letters)


def is_chinese(request: Request) -> bool:
    """Claim mostly Chinese, or the passages mostly Chinese."""
    return cjk_share(request.text) >= 0.3 or cjk_share(" ".join(p.text for p in request.passages)) >= 0.3


class ModelJudge:
    name = "model"

    def __init__(self, path: str | Path | None = None, guard: bool = True, threads: int | None = None,
                 zh: str = "embedding", batch_size: int = 1, calibrated: bool = True):
        if zh not in ("embedding", "model"):
            raise JudgeSetupError(f"model:zh= takes 'embedding' or 'model', not {zh!r}")
        self.path = Path(path) if path else shipped_model_dir()
        self.inner = CrossEncoderJudge("onnx", self.path, label_map=IDENTITY_LABELS, batch_size=batch_size,
                                       threads=threads)
        self.guard = guard
        self.calibration = calibration.load(self.path) if calibrated else None
        self.zh = zh
        self._zh_judge = None
        self.signature = (f"model:{self.path.name}[{self.inner.signature}]|guard={'on' if guard else 'off'}"
                          f"|cal={'on' if self.calibration else 'off'}"
                          f"|zh={'embedding:' + ZH_EMBEDDING_THRESHOLD if zh == 'embedding' else 'model'}")

    @property
    def zh_judge(self):
        if self._zh_judge is None:
            from .embedding import make_embedding_judge

            self._zh_judge = make_embedding_judge(ZH_EMBEDDING_THRESHOLD)
        return self._zh_judge

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self.judge_batch([Request.of(text, passages)])[0]

    def judge_batch(self, requests: Sequence[Request], guard: bool | None = None) -> list[Judgment]:
        route_zh = [self.zh == "embedding" and is_chinese(r) for r in requests]
        out: list[Judgment | None] = [None] * len(requests)
        en = [i for i, z in enumerate(route_zh) if not z]
        zh = [i for i, z in enumerate(route_zh) if z]
        evidence: list[str | None] = [None] * len(requests)  # the model's chosen window, for calibration and guard
        if en:
            texts: list[str] = []
            for i, j, text in zip(en, self.inner.judge_batch([requests[i] for i in en], texts), texts):
                note = ("; the model is not validated for Chinese (its vocabulary reads most Chinese as [UNK])"
                        if is_chinese(requests[i]) else "")
                evidence[i] = text
                if self.calibration is not None:
                    j = self.calibrate(requests[i], j, text)
                out[i] = j.model_copy(update={"judge": self.signature, "explanation": (j.explanation or "") + note})
        if zh:
            for i, j in zip(zh, self.zh_judge.judge_batch([requests[i] for i in zh])):
                out[i] = j.model_copy(update={
                    "judge": self.signature,
                    "explanation": ("Chinese text: judged by the embedding judge "
                                    f"({self.zh_judge.signature}), not the model, whose vocabulary reads most "
                                    "Chinese as [UNK]; " + (j.explanation or ""))})
        if self.guard if guard is None else guard:
            out = [self.apply_guard(r, j, text) for r, j, text in zip(requests, out, evidence)]
        return out  # type: ignore[return-value]

    def calibrate(self, request: Request, judgment: Judgment, evidence: str | None = None) -> Judgment:
        """`full` iff the calibrated p(support) >= 0.5; a `full` it overrules becomes partial or none."""
        scores = judgment.scores or {}
        if evidence is None:
            evidence = self.evidence_text(request, judgment)
        values = calibration.features(scores.get("full", 0.0), request.text, evidence)
        p = self.calibration.probability(values)
        label = judgment.label
        if p >= 0.5:
            label = "full"
        elif label == "full":
            label = _partial_or_none(scores)
        note = f"; calibrated p(support)={p:.3f} from p(full) and claim-word recall {values[1]:.2f}"
        if label != judgment.label:
            note += f" -> {label}, not {judgment.label}"
        return judgment.model_copy(update={"label": label, "scores": {**scores, "support": round(p, 6)},
                                           "explanation": (judgment.explanation or "") + note})

    # --- the guard --------------------------------------------------------------------------------

    def evidence_text(self, request: Request, judgment: Judgment) -> str:
        """The text the judgment rests on: the window (or joined set) whose span the judgment names."""
        passages = {p.id: p for p in request.passages}
        ev = judgment.evidence
        if ev is None or ev.passage not in passages:
            return "\n".join(p.text for p in request.passages)
        if judgment.scores and "similarity" not in judgment.scores:  # a model window: find its group
            budget = self.inner.max_tokens - self.inner.count(request.text) - 3
            if budget >= 16:
                for group in set_windows(request.passages, self.inner.count, budget):
                    w = group[0]
                    if (w.passage, w.start, w.end) == (ev.passage, ev.start, ev.end):
                        return "\n".join(x.text for x in group)
        return passages[ev.passage].text[ev.start:ev.end]

    def apply_guard(self, request: Request, judgment: Judgment, evidence: str | None = None) -> Judgment:
        """Check a `full` against its evidence text (found again from the judgment when not given)."""
        if judgment.label != "full":
            return judgment
        finding = check(request.text, evidence if evidence is not None else self.evidence_text(request, judgment))
        if finding is None:
            return judgment
        label = _partial_or_none(judgment.scores or {})
        return judgment.model_copy(update={
            "label": label,
            "explanation": (judgment.explanation or "") + f"; qualifier guard ({finding.kind}): {finding.reason} "
                                                          f"-> {label}, not full"})


def _partial_or_none(scores: dict[str, float]) -> str:
    return "partial" if scores.get("partial", 0.0) > scores.get("none", 0.0) else "none"


def _parse(argument: str) -> dict:
    options: dict = {}
    argument = argument.strip()
    if argument.startswith("model"):
        argument = argument[len("model"):].lstrip(":")
    for part in filter(None, (p.strip() for p in argument.split(","))):
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if key == "guard" and value.lower() in ("on", "off", "true", "false", "1", "0"):
            options["guard"] = value.lower() in ("on", "true", "1")
        elif key == "threads" and value.isdigit() and int(value) > 0:
            options["threads"] = int(value)
        elif key == "zh" and value in ("embedding", "model"):
            options["zh"] = value
        elif key == "batch" and value.isdigit() and int(value) > 0:
            options["batch_size"] = int(value)
        elif key == "path" and value:
            options["path"] = value
        elif key == "calibration" and value.lower() in ("on", "off"):
            options["calibrated"] = value.lower() == "on"
        else:
            raise JudgeSetupError(f"bad model judge option '{part}': use model, model:guard=off, "
                                  "model:threads=2, model:zh=model, model:batch=16, model:calibration=off "
                                  "or model:path=DIR")
    if "threads" not in options and os.environ.get("CITEAUDIT_THREADS"):
        options["threads"] = int(os.environ["CITEAUDIT_THREADS"])
    return options


def make_model_judge(argument: str = "") -> ModelJudge:
    """`model`, `model:guard=off`, `model:threads=2,zh=model`, as named on the command line (the part
    after 'model:' or the whole spec)."""
    return ModelJudge(**_parse(argument))


def guard_effect(rows, judge: ModelJudge, batch_size: int = 64) -> dict:
    """Balanced accuracy (full vs rest) with and without the guard, overall and per source, from one
    pass of the judge: {"off": ..., "on": ..., "fired": n, "fired_correctly": n}."""
    from ..validation import evaluate

    requests = [Request.of(r.claim, r.passages) for r in rows]
    plain: list[Judgment] = []
    for i in range(0, len(requests), batch_size):
        plain += judge.judge_batch(requests[i:i + batch_size], guard=False)
    guarded = [judge.apply_guard(q, j) for q, j in zip(requests, plain)]
    fired = [k for k, (a, b) in enumerate(zip(plain, guarded)) if a.label != b.label]
    out = {"fired": len(fired), "fired_on_gold_not_full": sum(rows[k].label != "full" for k in fired),
           "examples": [{"id": rows[k].id, "gold": rows[k].label, "reason": guarded[k].explanation.rsplit("; qualifier guard", 1)[-1]}
                        for k in fired[:12]]}
    for name, judgments in (("off", plain), ("on", guarded)):
        res = evaluate(rows, judgments, resamples=0)
        out[name] = {"balanced_accuracy": res.get("balanced_accuracy"),
                     "by_source": {s: m.get("balanced_accuracy") for s, m in res["by_source"].items()}}
    return out
