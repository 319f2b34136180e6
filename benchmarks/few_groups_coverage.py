"""How often each kind of interval holds the true figure when the labelled rows come in few groups.

    python benchmarks/few_groups_coverage.py [--groups 2,3,5,7,9,12,20] [--rows-per-group 4] [--spread 1.0] [--trials 400] [--resamples 400]

Synthetic and seeded. Each trial makes G groups of rows (rows that cite one passage, claims of one
answer): a group's chance that a row agrees is logistic(logit(0.7) + spread × z), z standard normal, the
same for all its rows, and each row agrees or not by that chance. The figure is the share of rows that
agree; the true figure is its expectation over groups (computed from a million draws). For each G,
the share of trials whose 95 % interval holds the true figure, and the interval's median width:

  rows       the rows drawn one by one (what 2 to 9 groups got before the jackknife)
  groups     whole groups drawn, percentile (what 20 groups or more get; before, 10 or more)
  shipped    what stats.bootstrap_interval gives with the groups: whole groups from stats.MIN_GROUPS (20)
             up, below that the span of a jackknife over the groups and the rows drawn one by one

--spread 0 makes the groups no different from each other (then every way should hold about 95 %).
"""

from __future__ import annotations

import argparse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default="2,3,5,7,9,12,20")
    ap.add_argument("--rows-per-group", type=int, default=4)
    ap.add_argument("--spread", type=float, default=1.0, help="standard deviation of the groups' logits")
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=400)
    args = ap.parse_args()
    import numpy as np

    from citeaudit.stats import bootstrap_interval

    rng = np.random.default_rng(0)
    centre = np.log(0.7 / 0.3)

    def chances(k: int) -> np.ndarray:
        return 1 / (1 + np.exp(-(centre + args.spread * rng.standard_normal(k))))

    truth = float(chances(1_000_000).mean())
    m = args.rows_per_group
    print(f"true share {truth:.3f}; {m} rows a group, spread {args.spread}, {args.trials} trials, "
          f"{args.resamples} resamples; share of intervals holding the truth (median width)")
    print(f"  {'groups':>6}  {'rows':>15}  {'groups':>15}  {'shipped':>15}")
    for k in (int(x) for x in args.groups.split(",")):
        held = {"rows": [], "groups": [], "shipped": []}
        width = {name: [] for name in held}
        for trial in range(args.trials):
            agree = (rng.random((k, m)) < chances(k)[:, None]).ravel().astype(float)
            group = np.repeat(np.arange(k), m)

            def share(ix):
                return float(agree[ix].mean())

            n = agree.size
            found = {"rows": bootstrap_interval(share, n, args.resamples, trial),
                     "shipped": bootstrap_interval(share, n, args.resamples, trial, groups=group, bounds=(0.0, 1.0))}
            # whole groups drawn whatever their number: the draw bootstrap_interval makes from 10 groups up
            values = [share(np.repeat(np.arange(n), np.bincount(drawn, minlength=k)[group]))
                      for drawn in np.random.default_rng(trial).integers(0, k, size=(args.resamples, k))]
            found["groups"] = tuple(np.quantile(values, [0.025, 0.975]))
            for name, (lo, hi) in found.items():
                held[name].append(lo <= truth <= hi)
                width[name].append(hi - lo)
        cells = [f"{np.mean(held[name]):6.1%} ({np.median(width[name]):.2f})" for name in held]
        print(f"  {k:>6}  " + "  ".join(f"{c:>15}" for c in cells))


if __name__ == "__main__":
    main()
