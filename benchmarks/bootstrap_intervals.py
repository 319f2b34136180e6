"""Seconds to measure a judge's labels with intervals (stats.metrics: balanced accuracy, AUC and kappa,
each with a 1,000-resample bootstrap), drawing single rows and drawing whole groups of rows, side by
side in one run:

    python benchmarks/bootstrap_intervals.py [--rows 20000] [--rows-per-group 3] [--resamples 1000] [--rounds 3]

The rows are synthetic (seeded): random gold and predicted labels and scores, and a group for each row
drawn so that groups hold --rows-per-group rows on average, as rows citing one passage do
(training/validation.py `row_groups`; the shared data's English test rows are 2.3 a group). Prints the
median seconds of each way and their ratio (groups / rows).
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--rows-per-group", type=float, default=3.0)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import numpy as np

    from citeaudit.stats import metrics

    rng = np.random.default_rng(0)
    n = args.rows
    gold = list(rng.choice(["full", "partial", "none", "contradicts"], n))
    pred = list(rng.choice(["full", "partial", "none"], n))
    scores = list(rng.random(n))
    groups = list(rng.integers(0, max(1, int(n / args.rows_per_group)), n))
    seconds: dict[str, list[float]] = {"rows": [], "groups": []}
    for round_ in range(args.rounds):
        for way in ("rows", "groups") if round_ % 2 == 0 else ("groups", "rows"):
            started = time.perf_counter()
            metrics(gold, pred, scores, args.resamples, 0, groups=groups if way == "groups" else None)
            seconds[way].append(time.perf_counter() - started)
    print(f"{n} rows in {len(set(groups))} groups, {args.resamples} resamples, median of {args.rounds} rounds:")
    for way, values in seconds.items():
        print(f"  drawing {way:<6} {statistics.median(values):7.2f} s")
    print(f"  groups / rows: {statistics.median(seconds['groups']) / statistics.median(seconds['rows']):.2f}x")


if __name__ == "__main__":
    main()
