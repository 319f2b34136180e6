"""The model judge taken apart for adapting: the parts adapting changes (the English weights, the
calibration with its uncertain band, the Chinese threshold) as one `JudgeState`, a judge made from any
state, rows judged with it, its calibration and band refitted, and two calibrations blended."""

from __future__ import annotations

import math
from functools import cache
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from citeaudit.errors import TrainingError
from citeaudit.files.labelled import Row
from citeaudit.judges import calibration as calib
from citeaudit.judges.base import Request
from citeaudit.judges.judge_dir import load_judge_dir
from citeaudit.judges.model import CHINESE_MODEL_NAME, ModelJudge, shipped_model_dir
from citeaudit.judges.spec import MODEL_UNCERTAIN_BAND, ZH_EMBEDDING_THRESHOLD
from citeaudit.records import Judgment

BAND_TARGET_ACCURACY = 0.80  # the rule that chose the shipped band (docs/model-judge.md)
BAND_LIMITS = (0.03, 0.25)

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def quiet(stage: str, done: int, total: int) -> None:
    pass


@dataclass
class JudgeState:
    """What adapting changes: the English weights (None: the model file's own), the calibration with its
    band, and the Chinese threshold."""

    model: Any = None  # a torch BertForSequenceClassification, or None for the int8 model as shipped
    calibration: calib.Calibration | None = None
    band: float = MODEL_UNCERTAIN_BAND
    zh_threshold: float = float(ZH_EMBEDDING_THRESHOLD)


def base_state(model_dir: Path) -> JudgeState:
    cal = load_judge_dir(model_dir).calibration
    if cal is None:
        raise TrainingError(f"{model_dir}: the judge to adapt has no calibration.json")
    return JudgeState(None, cal, cal.band if cal.band is not None else MODEL_UNCERTAIN_BAND,
                      cal.zh_threshold if cal.zh_threshold is not None else float(ZH_EMBEDDING_THRESHOLD))


@cache
def _judge_v2(threads: int | None, path: Path | None = None) -> ModelJudge:
    """judge-v2, the shipped one or the adapted one at `path`, loaded once for every judge of an adaptation
    (adapting judge-v1 leaves it as it is)."""
    return ModelJudge(path or shipped_model_dir(CHINESE_MODEL_NAME), guard=False, plain=False, threads=threads,
                      zh="model")


def make_judge(model_dir: Path, state: JudgeState, threads: int | None, calibrated: bool = True,
               remembered: dict | None = None, chinese_judge: str | None = None,
               int8_of: Callable[[Any], Path] | None = None, chinese_dir: Path | None = None) -> ModelJudge:
    """The model judge of `model_dir` judging with `state`. Its torch weights are run as the written judge
    will run them: `int8_of(weights)` gives them exported and quantised to int8 ONNX (adapted_dir.export_int8);
    without it, in fp32 and batched. Run in fp32, an adaptation on 600 ExpertQA claims lost 0.005 on the
    English dev rows, where the int8 judge written from the same weights lost 0.026. `remembered` keeps
    the model's scored windows by request (before any window is chosen, calibrated or guarded), for judges
    that share the weights.
    `chinese_dir`: the adapted judge-v2 the written judge will hold, where it holds one."""
    # Chinese pairs go where the adapted judge will send them: judge-v2 where it keeps its base's (`chinese_judge`)
    judge = ModelJudge(path=model_dir, guard=True, threads=threads, calibrated=False, band=0.0,
                       zh="v2" if chinese_judge else None)
    if judge.reads_chinese:  # a base that reads Chinese judges it itself, and is adapted and checked on it
        judge.zh = "model"
    judge.calibration = state.calibration if calibrated else None
    judge.band = state.band if calibrated else 0.0
    if chinese_judge:  # judge-v2 as the written judge runs it, with its own calibration and band
        judge._zh_judge = _judge_v2(threads, chinese_dir)
    elif state.zh_threshold != float(ZH_EMBEDDING_THRESHOLD):
        from citeaudit.judges.embedding import make_embedding_judge

        judge._zh_judge = make_embedding_judge(f"{state.zh_threshold:g}")
    if state.model is not None and int8_of is not None:  # this judge's own backend: the base judge's is untouched
        judge.inner.backend.load_model(int8_of(state.model), threads)
    elif state.model is not None:
        forward = _torch_forward(state.model)
        judge.inner._forward = forward
        judge.inner.backend.predict = lambda premises, hypotheses: forward(
            [(e.ids, e.type_ids) for e in judge.inner.backend.tokenizer.encode_batch(list(zip(premises, hypotheses)))])
        judge.inner.batch_size = 16
    if remembered is not None:
        _remember(judge.inner, remembered)
    return judge


def _remember(inner, remembered: dict) -> None:
    """Let `inner.scored_windows` answer from `remembered` (request -> its scored windows), running the model
    only on what it has not seen: calibration, band and guard vary far more often than weights (and with
    the calibration, which window a judgment rests on under pick=support)."""
    scored_windows = inner.scored_windows

    def remembering(requests):
        todo = [r for r in dict.fromkeys(requests) if r not in remembered]
        if todo:
            for r, windows in zip(todo, scored_windows(todo)):
                remembered[r] = windows
        return [remembered[r] for r in requests]

    inner.scored_windows = remembering


def _torch_forward(model):
    import torch

    def forward(rows: list[tuple[list[int], list[int]]]):
        width = max(len(ids) for ids, _ in rows)
        ids = torch.tensor([list(i) + [0] * (width - len(i)) for i, _ in rows])
        mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in rows])
        types = torch.tensor([list(t) + [0] * (width - len(t)) for _, t in rows])
        with torch.no_grad():
            return torch.softmax(model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits, -1).numpy()

    return forward


def judge_rows(judge: ModelJudge, rows: Sequence[Row], progress: Progress = quiet, stage: str = "judging",
               chunk: int = 32) -> list[Judgment]:
    out: list[Judgment] = []
    progress(stage, 0, len(rows))
    for i in range(0, len(rows), chunk):
        out += judge.judge_batch([Request.of(r.claim, r.passages) for r in rows[i:i + chunk]])
        progress(stage, len(out), len(rows))
    return out


def calibration_values(judge: ModelJudge, rows: Sequence[Row]) -> list[list[float]]:
    """The calibration's features of each row: the uncalibrated model's p(full) and window."""
    requests = [Request.of(r.claim, r.passages) for r in rows]
    texts: list[str] = []
    judgments = judge.inner.judge_batch(requests, texts)
    return [calib.features((j.scores or {}).get("full", 0.0), r.claim, t) for r, j, t in zip(rows, judgments, texts)]


def fit_calibration(values: Sequence[Sequence[float]], gold_full: Sequence[bool], prior: calib.Calibration,
                    described: dict) -> tuple[calib.Calibration, float]:
    """The calibration refitted toward `prior`, and the uncertain band chosen on the same rows."""
    fitted = calib.fit(values, gold_full, prior=prior, fitted_on=described)
    p = [fitted.probability(v) for v in values]
    return fitted, choose_band(gold_full, p)


def choose_band(gold_full: Sequence[bool], p_support: Sequence[float]) -> float:
    """The narrowest band (0.01 steps) whose confident side, |p - 0.5| >= band, reaches the target
    accuracy, within BAND_LIMITS; never so wide that more than half the rows fall inside it. Where the
    judge cannot reach the target, a band holding every pair would make it say nothing: at most half
    are left to a person."""
    gold = np.asarray(gold_full, dtype=bool)
    p = np.asarray(p_support, dtype=float)
    low, high = BAND_LIMITS
    widest = min(high, max(low, math.floor(float(np.median(np.abs(p - 0.5))) * 100) / 100))
    for band in np.arange(low, widest + 1e-9, 0.01):
        sure = np.abs(p - 0.5) >= band
        if sure.sum() and float(((p[sure] >= 0.5) == gold[sure]).mean()) >= BAND_TARGET_ACCURACY:
            return round(float(band), 2)
    return round(widest, 2)


def blend_calibration(base: calib.Calibration, tuned: calib.Calibration, keep: float) -> calib.Calibration:
    return replace(tuned, weights=tuple((1 - keep) * b + keep * t for b, t in zip(base.weights, tuned.weights)),
                   bias=(1 - keep) * base.bias + keep * tuned.bias)
