"""Calibration of the model judge: when is a pair `full`?

The cross-encoder's own argmax over-predicts `full` on sources it was not trained on: a small model
reads "same topic, same entities" as support. Two signals generalise across sources better than its
raw p(full) alone (measured leave-one-source-out, see docs/model-judge.md):

* logit p(full) of the window the model chose;
* claim-word recall: the share of the claim's content words that occur in that window (English:
  lower-cased words and numbers minus stop words, cut to 6 letters as a crude stem; Chinese: character
  bigrams). A claim whose words are missing from its evidence is rarely fully supported.

A logistic layer over the two, fitted on labelled rows (`fit`), gives p(support); the judge calls a
pair `full` when p(support) >= 0.5. Balanced class weights make 0.5 the balanced-accuracy point rather
than the base rate of the rows it was fitted on. The fit is a few Newton steps on a 3-parameter model,
numpy only, so it runs at inference-time cost and needs no training extra. Running the model over
labelled rows to fit it is training/calibrate.py (`citeaudit calibrate-judge`).

The coefficients live in `calibration.json` next to the model, so they are part of the model
directory's hash and therefore of the judge's signature. A judge adapted to a team's labels
(training/adapt.py) also keeps there its uncertain band and its Chinese threshold, which the `model`
judge then uses unless told otherwise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from citeaudit.errors import JudgeSetupError
from citeaudit.text import content_words

FILE_NAME = "calibration.json"
FEATURES = ("logit_p_full", "claim_word_recall")


def claim_word_recall(claim: str, evidence: str) -> float:
    """Share of the claim's content words found in the evidence (1.0 for a claim without any)."""
    wanted = content_words(claim)
    if not wanted:
        return 1.0
    return len(wanted & content_words(evidence)) / len(wanted)


def partial_or_none(scores: dict[str, float]) -> str:
    """What a `full` becomes where a decision overrules it: `partial` or `none`, whichever the model scored
    higher."""
    return "partial" if scores.get("partial", 0.0) > scores.get("none", 0.0) else "none"


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def features(p_full: float, claim: str, evidence: str) -> list[float]:
    return [logit(p_full), claim_word_recall(claim, evidence)]


@dataclass(frozen=True)
class Calibration:
    weights: tuple[float, ...]
    bias: float
    fitted_on: dict = field(default_factory=dict)  # what the coefficients were fitted on (rows, sources, command)
    features: tuple[str, ...] = FEATURES
    band: float | None = None  # the uncertain band fitted with it (None: the judge's default)
    zh_threshold: float | None = None  # the Chinese route's threshold (None: the judge's default)

    def probability(self, values: Sequence[float]) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, values))
        return 1.0 / (1.0 + math.exp(-min(max(z, -500.0), 500.0)))  # a certain pair: 0 or 1, no overflow

    def to_json(self) -> dict:
        d = asdict(self)
        d["weights"], d["features"] = list(self.weights), list(self.features)
        for optional in ("band", "zh_threshold"):  # the shipped file has neither: keep it byte-identical
            if d[optional] is None:
                del d[optional]
        return d

    def save(self, model_dir: str | Path) -> Path:
        path = Path(model_dir) / FILE_NAME
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        return path


def load(model_dir: str | Path) -> Calibration | None:
    """The model directory's calibration, or None when it has no calibration.json."""
    path = Path(model_dir) / FILE_NAME
    if not path.exists():
        return None
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise JudgeSetupError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    except UnicodeDecodeError:
        raise JudgeSetupError(f"{path}: not UTF-8 text") from None
    except OSError as exc:  # a folder in its place, no permission
        raise JudgeSetupError(f"{path}: cannot read it ({exc.strerror})") from None
    if not isinstance(d, dict):
        raise JudgeSetupError(f"{path}: expected an object with 'features', 'weights' and 'bias'")
    features_ = d.get("features")
    if features_ != list(FEATURES):
        raise JudgeSetupError(f"{path}: features: expected {list(FEATURES)}, found {features_!r}")
    weights = d.get("weights")
    if not (isinstance(weights, list) and len(weights) == len(FEATURES)
            and all(isinstance(w, (int, float)) for w in weights)):
        raise JudgeSetupError(f"{path}: weights: expected {len(FEATURES)} numbers, found {weights!r}")
    if not isinstance(d.get("bias"), (int, float)):
        raise JudgeSetupError(f"{path}: bias: expected a number, found {d.get('bias')!r}")
    for name, low, high in (("band", 0.0, 0.5), ("zh_threshold", -1.0, 1.0)):
        value = d.get(name)
        if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and low <= value < high):
            raise JudgeSetupError(f"{path}: {name}: expected a number in [{low:g}, {high:g}), found {value!r}")
    return Calibration(tuple(float(w) for w in weights), float(d["bias"]), d.get("fitted_on") or {},
                       band=d.get("band"), zh_threshold=d.get("zh_threshold"))


def fit(values: Sequence[Sequence[float]], gold_full: Sequence[bool], l2: float = 1.0,
        fitted_on: dict | None = None, prior: Calibration | None = None) -> Calibration:
    """Logistic regression with balanced class weights and an L2 penalty on the weights (not the bias),
    by Newton's method. With a `prior` the penalty pulls the weights toward the prior's rather than
    toward zero: a refit on a few rows stays near the calibration it refines. Raises ValueError when the
    rows hold one class only."""
    x = np.asarray(values, dtype=float)
    y = np.asarray(gold_full, dtype=float)
    positives = int(y.sum())
    if x.ndim != 2 or len(x) != len(y) or positives in (0, len(y)):
        raise ValueError("calibration needs rows of both classes (full and not full)")
    n = len(y)
    # balanced: each class weighs n/2 in total, whatever its share of the rows
    sample_w = np.where(y == 1, n / (2 * positives), n / (2 * (n - positives)))
    design = np.hstack([x, np.ones((n, 1))])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    centre = np.zeros(design.shape[1])
    if prior is not None:
        centre[:-1] = prior.weights
    def objective(b: np.ndarray) -> float:
        z = design @ b
        return float(sample_w @ (np.logaddexp(0.0, z) - y * z) + 0.5 * penalty @ (b - centre) ** 2)

    beta = centre.copy()
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -500, 500)))  # a certain row: no overflow
        gradient = design.T @ (sample_w * (p - y)) + penalty * (beta - centre)
        hessian = (design * (sample_w * p * (1 - p))[:, None]).T @ design + np.diag(penalty)
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:  # every row predicted with certainty: the bias has no curvature
            step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        # a full Newton step can overshoot from a start far from the optimum: halve it until it helps
        before, t = objective(beta), 1.0
        while t > 1e-6 and objective(beta - t * step) > before + 1e-12:
            t /= 2
        beta -= t * step
        if np.abs(t * step).max() < 1e-10:
            break
    return Calibration(tuple(float(b) for b in beta[:-1]), float(beta[-1]), fitted_on or {})

