"""Fit the model judge's calibration (judges/calibration.py) by running the model over labelled rows.

The calibration itself (features, the logistic fit, calibration.json) is pure numpy and lives with the
judge; this is the workflow around it: judge the rows with the uncalibrated model, fit, summarise, and
save the fit into the model directory and its card. `citeaudit calibrate-judge` fits on a DATA file;
`citeaudit train-judge` fits on the dev split of the shared data after export.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from citeaudit.errors import TrainingError
from citeaudit.judges.base import Request
from citeaudit.judges.calibration import FEATURES, FILE_NAME, Calibration, features, fit
from citeaudit.judges.model import ModelJudge, is_chinese
from citeaudit.files.labelled import Row
from citeaudit.stats import balanced_accuracy
from citeaudit.training.data import dev_rows
from citeaudit.training.export import record_calibration


def fit_model_calibration(model_dir: str | Path, rows: Sequence[Row], exclude_sources: Sequence[str] = (),
                          threads: int | None = None, described_as: str = "") -> tuple[Calibration, dict]:
    """Judge `rows` with the model in `model_dir` (no guard, no calibration), fit the calibration on the
    rows the model itself judges (not in `exclude_sources`; Chinese rows only when its vocabulary reads
    Chinese, else the embedding judge takes them), and return it with a summary: rows used and balanced
    accuracy on those rows before and after (in-sample)."""
    judge = ModelJudge(path=model_dir, guard=False, plain=False, threads=threads, calibrated=False)
    used = [r for r in rows if r.source not in exclude_sources
            and (judge.reads_chinese or not is_chinese(Request.of(r.claim, r.passages)))]
    if not used:
        raise TrainingError("no rows left to fit on (excluded sources, and Chinese rows for a model that does "
                            "not read Chinese, are skipped)")
    requests = [Request.of(r.claim, r.passages) for r in used]
    values: list[list[float]] = []
    argmax_full: list[bool] = []
    for i in range(0, len(requests), 64):
        chunk = requests[i:i + 64]
        texts: list[str] = []
        for request, j, text in zip(chunk, judge.inner.judge_batch(chunk, texts), texts):
            values.append(features((j.scores or {}).get("full", 0.0), request.text, text))
            argmax_full.append(j.label == "full")
    gold = [r.label == "full" for r in used]
    sources = sorted({r.source or "(unset)" for r in used})
    try:
        fitted = fit(values, gold, fitted_on={
            "rows": len(used), "full": sum(gold), "sources": sources, "excluded_sources": sorted(exclude_sources),
            "data": described_as, "model_dir_files": sorted(p.name for p in Path(model_dir).iterdir()
                                                          if p.is_file() and p.name != FILE_NAME)})
    except ValueError as exc:  # rows of one class only
        raise TrainingError(str(exc)) from exc
    calibrated_full = [fitted.probability(v) >= 0.5 for v in values]
    summary = {"rows": len(used), "full": sum(gold), "sources": sources,
               "weights": dict(zip(FEATURES, fitted.weights)), "bias": fitted.bias,
               "in_sample_balanced_accuracy": {"model argmax": balanced_accuracy(gold, argmax_full),
                                               "calibrated": balanced_accuracy(gold, calibrated_full)}}
    return fitted, summary


def calibrate_on_dev(model_dir: str | Path, data_dir: str | Path | None = None,
                     leave_out: str | None = None) -> tuple[Path, dict]:
    """Fit the exported model's calibration on the dev split of the shared data (without the left-out
    source), save it next to the model and in its card: (calibration.json path, summary)."""
    fitted, summary = fit_model_calibration(model_dir, dev_rows(data_dir),
                                            exclude_sources=[leave_out] if leave_out else [],
                                            described_as="dev split of the shared data (training/data.py)")
    return record_calibration(model_dir, fitted, summary), summary
