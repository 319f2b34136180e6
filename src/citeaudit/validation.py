"""Measure a judge against human labels: balanced accuracy, ROC AUC and Cohen's kappa, with bootstrap
95 % intervals, overall and per source and language.

DATA rows (JSONL), one per line::

    {"id": "...", "claim": "...", "passages": [{"id": "...", "text": "..."}],
     "label": "full|partial|none|contradicts", "source": "...", "lang": "..."}

`source` and `lang` are optional. Binary metrics compare `full` against the rest (what scoring counts
as support); kappa compares all four labels. AUC needs a score: `scores["support"]` (the model judge's
calibrated probability) when there is one, else `scores["full"]` when the judge gives class
probabilities, else `scores["similarity"]`; it is None for a judge that gives none of these.
All metrics are implemented with numpy here (small, tested), no scikit-learn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, Problem
from .records import LABELS, Judgment, SourcePassage

_ROW_KEYS = {"id", "claim", "passages", "label", "source", "lang"}


@dataclass(frozen=True)
class Row:
    id: str
    claim: str
    passages: tuple[SourcePassage, ...]
    label: str
    source: str | None = None
    lang: str | None = None
    line: int | None = field(default=None, compare=False)


# --- loading --------------------------------------------------------------------------------------


def _check_row(d: Any, file: str, line: int) -> tuple[Row | None, list[Problem]]:
    def bad(path: str, message: str) -> Problem:
        return Problem(file, line, path, message)

    if not isinstance(d, dict):
        return None, [bad("", f"a row must be a JSON object, got {type(d).__name__}")]
    problems = [bad(k, "unknown field (expected one of: " + ", ".join(sorted(_ROW_KEYS)) + ")")
                for k in d if k not in _ROW_KEYS]
    for key in ("id", "claim"):
        if not isinstance(d.get(key), str) or not d.get(key, "").strip():
            problems.append(bad(key, "missing or not a non-empty string"))
    if d.get("label") not in LABELS:
        problems.append(bad("label", f"must be one of {', '.join(LABELS)}, got {d.get('label')!r}"))
    for key in ("source", "lang"):
        if key in d and d[key] is not None and not isinstance(d[key], str):
            problems.append(bad(key, "must be a string"))
    passages = d.get("passages")
    built: list[SourcePassage] = []
    if not isinstance(passages, list) or not passages:
        problems.append(bad("passages", "missing or not a non-empty list"))
    else:
        seen: set[str] = set()
        for i, p in enumerate(passages):
            where = f"passages[{i}]"
            if not isinstance(p, dict):
                problems.append(bad(where, "must be an object with 'id' and 'text'"))
                continue
            pid, text = p.get("id"), p.get("text")
            if not isinstance(pid, str) or not pid:
                problems.append(bad(f"{where}.id", "missing or not a non-empty string"))
                continue
            if pid in seen:
                problems.append(bad(f"{where}.id", f"duplicate passage id '{pid}'"))
            seen.add(pid)
            if not isinstance(text, str) or not text.strip():
                problems.append(bad(f"{where}.text", "missing or not a non-empty string"))
                continue
            extra = set(p) - {"id", "text"}
            if extra:
                problems.append(bad(f"{where}.{sorted(extra)[0]}", "unknown field (expected id, text)"))
            built.append(SourcePassage(id=pid, doc_id=f"{d.get('id')}/{pid}", version=None, text=text,
                                       start=0, end=len(text)))
    if problems:
        return None, problems
    return Row(d["id"], d["claim"], tuple(built), d["label"], d.get("source"), d.get("lang"), line), []


def parse_rows(lines: Sequence[str], file: str = "<data>") -> list[Row]:
    rows: list[Row] = []
    problems: list[Problem] = []
    ids: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(Problem(file, n, "", f"not valid JSON: {err.msg} (column {err.colno})"))
            continue
        row, found = _check_row(d, file, n)
        problems += found
        if row is not None:
            if row.id in ids:
                problems.append(Problem(file, n, "id", f"duplicate id '{row.id}' (first on line {ids[row.id]})"))
            ids.setdefault(row.id, n)
            rows.append(row)
    if not rows and not problems:
        problems.append(Problem(file, None, "", "no rows"))
    if problems:
        raise InputError(problems)
    return rows


def load_rows(path: str | Path) -> list[Row]:
    """Read and check a DATA file; every bad row is reported as file:line: field: message."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError([Problem(str(path), None, "", f"cannot read: {err.strerror or err}")]) from None
    except UnicodeDecodeError as err:
        raise InputError([Problem(str(path), None, "", f"not UTF-8: {err.reason}")]) from None
    return parse_rows(text.splitlines(), str(path))


# --- metrics --------------------------------------------------------------------------------------


def balanced_accuracy(gold: Sequence[bool], pred: Sequence[bool]) -> float | None:
    """Mean of sensitivity and specificity; with one class only in gold, that class's recall."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if g.size == 0:
        return None
    recalls = [float(np.mean(p[g == c] == c)) for c in (True, False) if np.any(g == c)]
    return float(np.mean(recalls))


def roc_auc(gold: Sequence[bool], scores: Sequence[float]) -> float | None:
    """Probability that a random positive outscores a random negative (ties count half); None when
    gold has a single class."""
    g = np.asarray(gold, dtype=bool)
    s = np.asarray(scores, dtype=float)
    n_pos, n_neg = int(g.sum()), int((~g).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=float)
    sorted_s = s[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_s, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[g].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def cohen_kappa(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] = LABELS) -> float | None:
    """Cohen's kappa; 1.0 when both raters use one and the same single label throughout (perfect
    agreement with no chance correction possible), None for no rows."""
    if len(gold) == 0:
        return None
    index = {lab: i for i, lab in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)))
    for a, b in zip(gold, pred):
        m[index[a], index[b]] += 1
    n = m.sum()
    observed = np.trace(m) / n
    expected = float((m.sum(axis=1) @ m.sum(axis=0)) / (n * n))
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return float((observed - expected) / (1.0 - expected))


def confusion(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] = LABELS) -> dict[str, dict[str, int]]:
    table = {g: {p: 0 for p in labels} for g in labels}
    for a, b in zip(gold, pred):
        table[a][b] += 1
    return table


def bootstrap_interval(statistic: Callable[[np.ndarray], float | None], n: int, resamples: int = 1000,
                       seed: int = 0, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of `statistic(indices)` over `resamples` resamples of range(n) with
    replacement; resamples where the statistic is undefined are skipped."""
    if n == 0 or resamples <= 0:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        v = statistic(rng.integers(0, n, size=n))
        if v is not None and not np.isnan(v):
            values.append(v)
    if not values:
        return None
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(np.asarray(values), [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def best_threshold(gold: Sequence[bool], scores: Sequence[float]) -> tuple[float, float] | None:
    """(threshold, balanced accuracy) maximising balanced accuracy of `score >= threshold`; the
    threshold is the midpoint between adjacent distinct scores (lowest such on ties)."""
    g = np.asarray(gold, dtype=bool)
    s = np.asarray(scores, dtype=float)
    if g.size == 0 or g.all() or not g.any():
        return None
    distinct = np.unique(s)
    candidates = np.concatenate([[distinct[0] - 1e-6], (distinct[:-1] + distinct[1:]) / 2, [distinct[-1] + 1e-6]])
    best = None
    for t in candidates:
        b = balanced_accuracy(g, s >= t)
        if best is None or b > best[1] + 1e-12:
            best = (float(t), float(b))
    return best


# --- validation -----------------------------------------------------------------------------------


def score_of(judgment: Judgment) -> float | None:
    return score_from(judgment.scores)


def score_from(scores: dict[str, float] | None) -> float | None:
    """The score a judgment ranks by: p(support), else p(full), else the similarity; None without one."""
    scores = scores or {}
    for key in ("support", "full", "similarity"):
        if key in scores and scores[key] is not None:
            return float(scores[key])
    return None


def metrics(gold: Sequence[str], pred: Sequence[str], scores: Sequence[float | None],
            resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """n, balanced accuracy (full vs rest), AUC, kappa, confusion; each with a bootstrap 95 % interval."""
    g = np.asarray(gold, dtype=object)
    p = np.asarray(pred, dtype=object)
    gb = g == "full"
    pb = p == "full"
    have_scores = len(scores) > 0 and all(s is not None for s in scores)
    s = np.asarray([x if x is not None else np.nan for x in scores], dtype=float)

    def bacc(ix: np.ndarray):
        return balanced_accuracy(gb[ix], pb[ix])

    def auc(ix: np.ndarray):
        return roc_auc(gb[ix], s[ix])

    def kappa(ix: np.ndarray):
        return cohen_kappa(list(g[ix]), list(p[ix]))

    n = len(gold)
    everything = np.arange(n)
    out: dict[str, Any] = {"n": n, "n_full": int(gb.sum())}
    for name, fn in (("balanced_accuracy", bacc), ("auc", auc), ("kappa", kappa)):
        if name == "auc" and not have_scores:
            out[name], out[f"{name}_ci"] = None, None
            continue
        out[name] = fn(everything) if n else None
        out[f"{name}_ci"] = bootstrap_interval(fn, n, resamples, seed) if out[name] is not None else None
    out["confusion"] = confusion(list(g), list(p))
    return out


def predict(rows: Sequence[Row], judge, batch_size: int = 64,
            progress: Callable[[int], None] | None = None) -> list[Judgment]:
    """The judge's judgment of every row, batched when the judge offers `judge_batch`."""
    from .judges.base import Request, judge_many

    out: list[Judgment] = []
    for i in range(0, len(rows), batch_size):
        chunk = rows[i : i + batch_size]
        out += judge_many(judge, [Request.of(r.claim, r.passages) for r in chunk])
        if progress:
            progress(len(chunk))
    return out


def evaluate(rows: Sequence[Row], judgments: Sequence[Judgment], resamples: int = 1000,
             seed: int = 0) -> dict[str, Any]:
    """Metrics of given judgments against the rows' labels, overall, by_source and by_lang."""
    gold = [r.label for r in rows]
    pred = [j.label for j in judgments]
    scores = [score_of(j) for j in judgments]
    result = metrics(gold, pred, scores, resamples, seed)
    for key, attr in (("by_source", "source"), ("by_lang", "lang")):
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            groups.setdefault(getattr(r, attr) or "(unset)", []).append(i)
        result[key] = {
            name: metrics([gold[i] for i in ix], [pred[i] for i in ix], [scores[i] for i in ix], resamples, seed)
            for name, ix in sorted(groups.items())
        }
    return result


def write_predictions(path: str | Path, rows: Sequence[Row], judgments: Sequence[Judgment]) -> None:
    with Path(path).open("w", encoding="utf-8") as fh:
        for r, j in zip(rows, judgments):
            fh.write(json.dumps({
                "id": r.id, "gold": r.label, "label": j.label, "score": score_of(j),
                "source": r.source, "lang": r.lang, "judge": j.judge,
                "evidence": j.evidence.model_dump() if j.evidence else None,
                "explanation": j.explanation,
            }, ensure_ascii=False) + "\n")


def validate_judge(rows: Sequence[Row], judge, *, resamples: int = 1000, seed: int = 0,
                   predictions: str | Path | None = None, batch_size: int = 64,
                   progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Judge every row and measure agreement with its human label (see `evaluate` for the keys);
    also writes each row's predicted label and score to `predictions` when given."""
    judgments = predict(rows, judge, batch_size, progress)
    if predictions is not None:
        write_predictions(predictions, rows, judgments)
    result = evaluate(rows, judgments, resamples, seed)
    result["judge"] = judge.signature
    scores = [score_of(j) for j in judgments]
    if all(s is not None for s in scores):
        found = best_threshold([r.label == "full" for r in rows], scores)
        result["best_threshold"] = None if found is None else {"threshold": found[0], "balanced_accuracy": found[1]}
    return result
