"""Agreement statistics between a judge and human labels: balanced accuracy, ROC AUC, Cohen's kappa,
the confusion table and bootstrap 95 % intervals; and intervals of a run's figures (ratios of summed
counts), alone or as the paired difference of two runs on the same answers.

Binary metrics compare `full` against the rest (what scoring counts as support); kappa compares all
four labels. AUC needs a score (see `score_from`). Everything is plain numpy (small, tested, no
scikit-learn), and this module stands below every other: it knows labels and numbers, not judges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from citeaudit.records import LABELS


def balanced_accuracy(gold: Sequence[bool], pred: Sequence[bool]) -> float | None:
    """Mean of sensitivity and specificity; with one class only in gold, that class's recall."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if g.size == 0:
        return None
    positives = np.count_nonzero(g)
    negatives = g.size - positives
    recalls = []  # counted, not masked and averaged: this runs once per bootstrap resample
    if positives:
        recalls.append(np.count_nonzero(g & p) / positives)
    if negatives:
        recalls.append(np.count_nonzero(~g & ~p) / negatives)
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
    return _kappa_of_codes(_codes(gold, labels), _codes(pred, labels), len(labels))


def _codes(values: Sequence[str], labels: Sequence[str] = LABELS) -> np.ndarray:
    """Each label's place in `labels` (a KeyError for a label not among them)."""
    index = {lab: i for i, lab in enumerate(labels)}
    return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))


def _kappa_of_codes(gold: np.ndarray, pred: np.ndarray, k: int) -> float | None:
    """Cohen's kappa of two label-code arrays (one bincount: fast enough to bootstrap 50,000 rows)."""
    if gold.size == 0:
        return None
    m = np.bincount(gold * k + pred, minlength=k * k).reshape(k, k).astype(float)
    n = m.sum()
    observed = np.trace(m) / n
    expected = float((m.sum(axis=1) @ m.sum(axis=0)) / (n * n))
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return float((observed - expected) / (1.0 - expected))


def confusion(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] = LABELS) -> dict[str, dict[str, int]]:
    """{gold label: {predicted label: count}}, every label present in both directions."""
    table = {g: {p: 0 for p in labels} for g in labels}
    for a, b in zip(gold, pred):
        table[a][b] += 1
    return table


def connected_groups(keys: Sequence[Iterable[Hashable]]) -> list[int]:
    """A group number for each item: items that share a key, directly or through others, are one
    group (rows citing one passage, rows of one claim). Groups are numbered in the order of their first
    item, so that items sharing nothing are groups 0, 1, 2, … in item order."""
    parent = list(range(len(keys)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[Hashable, int] = {}
    for i, item_keys in enumerate(keys):
        for key in item_keys:
            if key in first_with:
                parent[find(i)] = find(first_with[key])
            else:
                first_with[key] = i
    numbers: dict[int, int] = {}
    return [numbers.setdefault(find(i), len(numbers)) for i in range(len(keys))]


# Fewer groups than this are too few to draw whole: two or three groups drawn with replacement give a
# handful of distinct resamples, and an interval narrower than drawing the items one by one; up to about
# 20 groups the percentile interval of whole groups still holds the true figure less often than it says
# (88-92 % at 12 groups, benchmarks/few_groups_coverage.py). From 2 groups up to this, an interval spans
# a jackknife (one group left out at a time) and the items drawn one by one (93-96 % there).
MIN_GROUPS = 20


def drawing(resample_by: str, unit: str, n: int,
            groups_of: Callable[[], Sequence[int]]) -> tuple[list[int] | None, dict[str, Any]]:
    """What the intervals of `n` items draw, and what the output says of it. `resample_by` is "groups" or
    single items, `unit` + "s" ("rows", "pairs"); anything else is a ValueError. For "groups", whole groups
    (`groups_of()`: a group number for each item, `connected_groups`) when there are at least MIN_GROUPS
    of them; with 2 to MIN_GROUPS - 1, the same groups, for an interval that spans a jackknife over them
    and the items drawn one by one (`by` "jackknife"); with one group only, single items, and then how
    many groups they made."""
    if resample_by not in ("groups", f"{unit}s"):
        raise ValueError(f"resample_by must be one of groups, {unit}s, not {resample_by!r}")
    if resample_by != "groups":
        return None, {"by": f"{unit}s", "units": n}
    groups = list(groups_of())
    sizes = Counter(groups)
    made = {"groups": len(sizes), "largest": max(sizes.values(), default=0)}
    if len(sizes) >= MIN_GROUPS or len(sizes) == n < 2:  # enough groups, or no more than one item
        by = "groups"
    elif len(sizes) >= 2:
        by = "jackknife"
    else:  # one group of several items: nothing varies between groups, the items one by one
        return None, {"by": f"{unit}s", "units": n, **made}
    return groups, {"by": by, "units": len(sizes), "largest": made["largest"]}


@lru_cache(maxsize=64)
def t_quantile(p: float, df: int) -> float:
    """The `p`-quantile (0.5 < p < 1) of Student's t with `df` degrees of freedom: bisection on its
    distribution function, integrated numerically from the density (no scipy for one number)."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1 and df >= 1, got p={p}, df={df}")
    from math import gamma, pi, sqrt

    scale = gamma((df + 1) / 2) / (sqrt(df * pi) * gamma(df / 2))

    def cdf(x: float) -> float:  # 0.5 + the density's integral from 0 to x (Simpson's rule)
        t = np.linspace(0.0, x, 4001)
        f = scale * (1 + t * t / df) ** (-(df + 1) / 2)
        return 0.5 + (x / 4000 / 3) * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())

    low, high = 0.0, 1.0
    while cdf(high) < p:
        high *= 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < p else (low, mid)
    return (low + high) / 2


def widest(*intervals: tuple[float, float] | None) -> tuple[float, float] | None:
    """The span of the intervals that are there (None when none is)."""
    there = [i for i in intervals if i is not None]
    return (min(lo for lo, _ in there), max(hi for _, hi in there)) if there else None


def jackknife_interval(estimate: float, left_out: Iterable[float | None], level: float = 0.95,
                       bounds: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """The interval `estimate` ± t(G - 1) × the jackknife's standard error, from the figure recomputed
    with each of G groups left out in turn (`left_out`; one where it is undefined is dropped), clipped to
    `bounds`. For 2 to 19 groups, where a bootstrap drawing whole groups has too few distinct resamples:
    t's quantile makes it wide with few groups, as it should be. None with fewer than 2 defined values."""
    values = np.asarray([v for v in left_out if v is not None and not np.isnan(v)], dtype=float)
    g = values.size
    if g < 2:
        return None
    error = float(np.sqrt((g - 1) / g * np.sum((values - values.mean()) ** 2)))
    half = t_quantile(1.0 - (1.0 - level) / 2.0, g - 1) * error
    lo, hi = estimate - half, estimate + half
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return float(lo), float(hi)


def _renumbered(groups: Sequence[int]) -> np.ndarray:
    """The groups numbered afresh 0, 1, 2, … by their first item (a subset of a grouping keeps its order)."""
    numbers: dict[int, int] = {}
    return np.fromiter((numbers.setdefault(g, len(numbers)) for g in groups), dtype=np.int64, count=len(groups))


def bootstrap_interval(statistic: Callable[[np.ndarray], float | None], n: int, resamples: int = 1000,
                       seed: int = 0, level: float = 0.95, groups: Sequence[int] | None = None,
                       bounds: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """Percentile interval of `statistic(indices)` over `resamples` resamples of range(n) with
    replacement; resamples where the statistic is undefined are skipped. With `groups` (a group number
    for each item), whole groups are drawn, as many as there are, and each brings all its items: rows
    that share a passage or a claim are not independent, and drawing them one by one narrows the
    interval. Items that share nothing give the same draws as without `groups`. With 2 to MIN_GROUPS - 1
    groups, too few to draw whole: the span of two intervals, each group left out in turn
    (`jackknife_interval`, clipped to `bounds`, the values the statistic can take) and the items drawn
    one by one. Two or three groups can happen to agree, and their jackknife then claims a certainty
    that the items themselves do not give."""
    if groups is not None and len(groups) != n:
        raise ValueError(f"groups: one group number for each of the {n} items, got {len(groups)}")
    if n == 0 or resamples <= 0:
        return None
    numbers = _renumbered(groups) if groups is not None else None
    k = int(numbers.max()) + 1 if numbers is not None else n
    items = np.arange(n)
    if numbers is not None and 2 <= k < MIN_GROUPS:  # too few to draw whole
        estimate = statistic(items)
        jackknife = (None if estimate is None or np.isnan(estimate) else
                     jackknife_interval(estimate, (statistic(items[numbers != g]) for g in range(k)), level, bounds))
        return widest(jackknife, bootstrap_interval(statistic, n, resamples, seed, level))
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, k, size=k)
        if numbers is not None:  # each item as often as its group was drawn (order does not matter)
            drawn = np.repeat(items, np.bincount(drawn, minlength=k)[numbers])
        v = statistic(drawn)
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


COVERAGES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)


def risk_coverage(gold: Sequence[bool], pred: Sequence[bool], p_support: Sequence[float],
                  coverages: Sequence[float] = COVERAGES) -> list[dict[str, Any]]:
    """Accuracy (full vs rest) of the most confident part of the rows, at each coverage: the rows
    sorted by |p - 0.5|, most confident first (ties in row order), and the top share kept."""
    g = np.asarray(gold, dtype=bool)
    pr = np.asarray(pred, dtype=bool)
    confidence = np.abs(np.asarray(p_support, dtype=float) - 0.5)
    order = np.argsort(-confidence, kind="stable")
    out = []
    for coverage in coverages:
        kept = order[: int(round(coverage * len(order)))]
        accuracy = float((g[kept] == pr[kept]).mean()) if kept.size else None
        out.append({"coverage": coverage, "n": int(kept.size), "accuracy": accuracy,
                    "balanced_accuracy": balanced_accuracy(g[kept], pr[kept]) if kept.size else None,
                    "least_confidence": float(confidence[kept[-1]]) if kept.size else None})
    return out


def score_from(scores: dict[str, float] | None) -> float | None:
    """The score a judgment ranks by: p(support), else p(full), else the similarity; None without one."""
    scores = scores or {}
    for key in ("support", "full", "similarity"):
        if key in scores and scores[key] is not None:
            return float(scores[key])
    return None


def metrics(gold: Sequence[str], pred: Sequence[str], scores: Sequence[float | None],
            resamples: int = 1000, seed: int = 0, groups: Sequence[int] | None = None) -> dict[str, Any]:
    """n, balanced accuracy (full vs rest), AUC, kappa, confusion; each with a bootstrap 95 % interval,
    drawing rows, or whole `groups` of rows (a group number for each row; `bootstrap_interval`).
    AUC is None unless every row has a score."""
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

    g_codes, p_codes = _codes(list(g)), _codes(list(p))

    def kappa(ix: np.ndarray):
        return _kappa_of_codes(g_codes[ix], p_codes[ix], len(LABELS))

    n = len(gold)
    everything = np.arange(n)
    out: dict[str, Any] = {"n": n, "n_full": int(gb.sum())}
    for name, fn, bounds in (("balanced_accuracy", bacc, (0.0, 1.0)), ("auc", auc, (0.0, 1.0)),
                             ("kappa", kappa, (-1.0, 1.0))):
        if name == "auc" and not have_scores:
            out[name], out[f"{name}_ci"] = None, None
            continue
        out[name] = fn(everything) if n else None
        out[f"{name}_ci"] = (bootstrap_interval(fn, n, resamples, seed, groups=groups, bounds=bounds)
                              if out[name] is not None else None)
    out["confusion"] = confusion(list(g), list(p))
    return out


# --- intervals of figures that keep their counts ------------------------------------------------------
# A run's figures are ratios of summed counts (support = supported claims / judged claims, over every
# answer). Their intervals resample the items (answers, or cases for retrieval) and recompute the ratio
# from the resampled sums, as the figure itself is computed.

RESAMPLES = 1000
SEED = 0


def _resampled_sums(columns: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples × columns) sums of `columns` (items × columns) over resamples of the items with
    replacement; the same resamples (same seed) as `bootstrap_interval` draws."""
    n = columns.shape[0]
    rng = np.random.default_rng(seed)
    sums = np.empty((resamples, columns.shape[1]))
    for r in range(resamples):
        times = np.bincount(rng.integers(0, n, size=n), minlength=n)  # how often each item was drawn
        sums[r] = times @ columns
    return sums


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float] | None:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(values, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _ratios(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0 (the figure is undefined there)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominators > 0, numerators / np.where(denominators > 0, denominators, 1), np.nan)


def ratio_intervals(numerators: Sequence[Sequence[float]], denominators: Sequence[Sequence[float]],
                    resamples: int = RESAMPLES, seed: int = SEED,
                    level: float = 0.95) -> list[tuple[float, float] | None]:
    """Percentile interval of sum(numerators[:, j]) / sum(denominators[:, j]) for each figure j, over
    `resamples` resamples of the items (rows); one set of resamples serves every figure. Resamples
    where a figure is undefined (its denominator sums to 0) are skipped for it; None when no items.
    With 2 to MIN_GROUPS - 1 items, the span of that interval and a jackknife's (`_few_items`): a
    percentile bootstrap of a handful of items is too narrow. The figures are shares, within 0..1."""
    if len(numerators) == 0:  # no items: nothing to resample (and no columns to count)
        return []
    num = np.asarray(numerators, dtype=float).reshape(len(numerators), -1)
    den = np.asarray(denominators, dtype=float).reshape(num.shape)
    if resamples <= 0:
        return [None] * num.shape[1]
    sums = _resampled_sums(np.hstack([num, den]), resamples, seed)
    m = num.shape[1]
    values = _ratios(sums[:, :m], sums[:, m:])
    found = [_percentiles(values[:, j], level) for j in range(m)]
    return _few_items(found, lambda left: _ratios(*left), (num, den), level, (0.0, 1.0))


def _few_items(found: list, figure: Callable[[list[np.ndarray]], np.ndarray], columns: tuple[np.ndarray, ...],
               level: float, bounds: tuple[float, float]) -> list:
    """Each figure's interval widened to span a jackknife's when there are 2 to MIN_GROUPS - 1 items:
    `figure` computes every figure from column sums (items × figures arrays, `columns`), for all items
    and for each item left out in turn."""
    n = columns[0].shape[0]
    if not 2 <= n < MIN_GROUPS:
        return found
    totals = [c.sum(axis=0) for c in columns]
    estimate = figure(totals)
    left_out = figure([t - c for t, c in zip(totals, columns)])  # items × figures
    return [interval if np.isnan(estimate[j]) else widest(interval, jackknife_interval(
        float(estimate[j]), left_out[:, j], level, bounds)) for j, interval in enumerate(found)]


def paired_ratio_differences(numerators_a: Sequence[Sequence[float]], denominators_a: Sequence[Sequence[float]],
                             numerators_b: Sequence[Sequence[float]], denominators_b: Sequence[Sequence[float]],
                             resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95,
                             ) -> list[tuple[float | None, tuple[float, float] | None]]:
    """For each figure j, (difference, interval) of B's ratio minus A's over paired items: row i of A
    and row i of B are the same item (the same answer in two runs). A paired bootstrap: each resample
    draws item rows once and recomputes both runs' ratios from their counts on those same rows, so
    what the items share (a hard question for both) cancels out of the interval. The difference is
    None where either figure is undefined on all items; resamples where one is undefined are skipped.
    With 2 to MIN_GROUPS - 1 items, widened to span a jackknife's interval, as `ratio_intervals` is."""
    if len(numerators_a) == 0:  # no items: no figure to take a difference of (and no columns to count)
        return []
    arrays = [np.asarray(x, dtype=float).reshape(len(numerators_a), -1)
              for x in (numerators_a, denominators_a, numerators_b, denominators_b)]
    m = arrays[0].shape[1]
    total = [a.sum(axis=0) for a in arrays]
    point = _ratios(total[2], total[3]) - _ratios(total[0], total[1])
    sums = _resampled_sums(np.hstack(arrays), resamples, seed) if resamples > 0 else None
    intervals = [None if sums is None or np.isnan(point[j]) else _percentiles(
        _ratios(sums[:, 2 * m + j], sums[:, 3 * m + j]) - _ratios(sums[:, j], sums[:, m + j]), level) for j in range(m)]
    if sums is not None:  # a handful of items: widened by a jackknife, as ratio_intervals does
        intervals = _few_items(intervals, lambda s: _ratios(s[2], s[3]) - _ratios(s[0], s[1]), tuple(arrays), level,
                               (-1.0, 1.0))
    return [(None, None) if np.isnan(point[j]) else (float(point[j]), intervals[j]) for j in range(m)]


def paired_balanced_accuracy_difference(gold: Sequence[bool], pred_a: Sequence[bool], pred_b: Sequence[bool],
                                        resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95,
                                        groups: Sequence[int] | None = None,
                                        ) -> tuple[float | None, tuple[float, float] | None]:
    """(difference, interval) of B's balanced accuracy minus A's on the same items (two judges on the
    same labelled pairs): the paired bootstrap of `paired_ratio_differences`, each resample drawing the
    items once and recomputing both judges' recalls from their counts on those items. Balanced
    accuracy is the mean of two ratios, not one, so it is taken from the resampled counts here; with
    one class only it is that class's recall, as `balanced_accuracy` says. (None, None) for no items.
    With `groups` (a group number for each item), a resample draws whole groups, or, with 2 to
    MIN_GROUPS - 1 of them, the interval spans a jackknife and the items drawn one by one, as
    `bootstrap_interval` does."""
    g = np.asarray(gold, dtype=bool)
    if g.size == 0:
        return None, None
    a, b = np.asarray(pred_a, dtype=bool), np.asarray(pred_b, dtype=bool)
    # per item: A's and B's hits among positives and among negatives, then the class counts
    columns = np.column_stack([g & a, ~g & ~a, g & b, ~g & ~b, g, ~g]).astype(float)

    def bacc(hit_pos, hit_neg, pos, neg):  # a class absent (NaN recall): the other's recall alone
        return np.nanmean(np.stack([_ratios(hit_pos, pos), _ratios(hit_neg, neg)]), axis=0)

    def difference(sums: np.ndarray) -> np.ndarray:
        return bacc(sums[..., 2], sums[..., 3], sums[..., 4], sums[..., 5]) - bacc(
            sums[..., 0], sums[..., 1], sums[..., 4], sums[..., 5])

    point = float(difference(columns.sum(axis=0)))
    if resamples <= 0:
        return point, None
    if groups is not None:  # one row of counts per group: drawing a group draws all its items
        if len(groups) != g.size:
            raise ValueError(f"groups: one group number for each of the {g.size} items, got {len(groups)}")
        numbers = _renumbered(groups)
        by_group = np.zeros((int(numbers.max()) + 1, columns.shape[1]))
        np.add.at(by_group, numbers, columns)
        if 2 <= len(by_group) < MIN_GROUPS:  # too few to draw whole: as bootstrap_interval does
            jackknife = jackknife_interval(point, difference(by_group.sum(axis=0) - by_group), level, (-1.0, 1.0))
            return point, widest(jackknife, _percentiles(difference(_resampled_sums(columns, resamples, seed)), level))
        columns = by_group
    return point, _percentiles(difference(_resampled_sums(columns, resamples, seed)), level)
