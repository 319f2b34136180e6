"""Two ways of combining what the judges already compute for English, measured; neither ships.

    python benchmarks/judge_combinations.py [--data DIR] [--cache DIR]

1. judge-v1 beside judge-v2 on English attribution rows. A logistic layer over the two judges'
   calibrated p(support) (as logits), then over judge-v1's with the e5 cosine of the claim and the
   window judge-v1 chose, is fitted on the dev split's English rows and measured on the test split's:
   ROC AUC and balanced accuracy (full vs rest) of the layer's own call, beside judge-v1's p(support)
   alone cut at 0.5. Running both judges would double the English route's cost; it is worth it only if
   the layer ranks the test rows better.
2. A threshold of their own for the short English pairs the plain reading leaves silent. judge-v1's
   calibration was fitted on long attribution passages; on the plain sets' silent English pairs it
   calls most supported pairs not `full`. The cut on p(support) that best splits the silent pairs of
   the sets read so far (`plain`, `holdout`, `fresh` … `fresh13`) is applied to those pairs of every set
   (a `contradicts` the guard or the reading gave stays), and each set's balanced accuracy printed
   beside the judge's as it ships. On the six sets never read (`fresh14` … `fresh19`) only each set's
   figure is printed, so they stay unread.

Judgments come from benchmarks/judge_v2.py's cache (the same --cache): what is missing is judged first.
judge-v2 reads English here as `model:path=<judge-v2 unpacked>,zh=model` does.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judge_v2 as bench  # noqa: E402  (the sets, the cache and the reading's test are judge_v2.py's)

READ = ["plain", "holdout", "fresh", *(f"fresh{n}" for n in range(2, 14))]
NEVER_READ = [f"fresh{n}" for n in range(14, 20)]


def support(judgment) -> float:
    from citeaudit.judges.calibration import logit

    return logit(judgment.scores["support"])


def english(rows, *judgment_lists):
    """The English rows, and each judge's judgments of them."""
    keep = [i for i, r in enumerate(rows) if r.lang == "en"]
    return [rows[i] for i in keep], [[js[i] for i in keep] for js in judgment_lists]


def window_cosines(rows, judgments) -> np.ndarray:
    """The e5 cosine of each claim and the window its judgment rests on (the whole passage without one)."""
    from citeaudit.judges.e5_onnx import OnnxE5Encoder

    windows = []
    for r, j in zip(rows, judgments):
        ev = j.evidence
        passage = next((p for p in r.passages if ev and p.id == ev.passage), r.passages[0])
        windows.append(passage.text[ev.start:ev.end] if ev and ev.end else passage.text)
    encoder = OnnxE5Encoder()
    return np.sum(np.asarray(encoder.query([r.claim for r in rows])) * np.asarray(encoder.passage(windows)), axis=1)


def layer_on_attribution(data: str | None, cache: Path, first, second) -> None:
    from citeaudit.judges.calibration import fit
    from citeaudit.stats import balanced_accuracy, roc_auc

    split = {}
    for name in ("dev", "test"):
        rows = bench.rows_of(name, data, 0)
        rows, (one, two) = english(rows, bench.judged(first, rows, cache), bench.judged(second, rows, cache))
        gold = np.array([r.label == "full" for r in rows])
        features = np.array([[support(a), support(b)] for a, b in zip(one, two)])
        split[name] = gold, np.c_[features, window_cosines(rows, one)]
    (gold_dev, dev), (gold_test, test) = split["dev"], split["test"]
    print(f"1. English attribution rows: a layer fitted on {len(gold_dev)} dev rows, measured on {len(gold_test)} test rows")
    print(f"  {'features':40s} {'dev AUC':>8s} {'test AUC':>9s} {'test BAcc':>10s}")
    alone = test[:, 0]
    print(f"  {'judge-v1 p(support), cut at 0.5':40s} {roc_auc(gold_dev, dev[:, 0]):8.3f} {roc_auc(gold_test, alone):9.3f} "
          f"{balanced_accuracy(gold_test, alone >= 0):10.3f}")
    for name, columns in (("judge-v1 and judge-v2 p(support)", [0, 1]), ("judge-v1 p(support) and the e5 cosine", [0, 2]),
                          ("all three", [0, 1, 2])):
        layer = fit(dev[:, columns], gold_dev)  # balanced classes, as the calibration is fitted
        d, t = (x[:, columns] @ layer.weights + layer.bias for x in (dev, test))
        print(f"  {name:40s} {roc_auc(gold_dev, d):8.3f} {roc_auc(gold_test, t):9.3f} {balanced_accuracy(gold_test, t >= 0):10.3f}"
              f"   weights {[round(w, 3) for w in layer.weights]}")


def threshold_on_silent_pairs(data: str | None, cache: Path, judge) -> None:
    from citeaudit.stats import balanced_accuracy, best_threshold

    sets = {}
    for name in READ + NEVER_READ:
        rows = bench.rows_of(name, data, 0)
        rows, (judgments,) = english(rows, bench.judged(judge, rows, cache))
        sets[name] = rows, judgments, bench.read_by_plain(rows)
    silent = [(r.label == "full", support(j)) for name in READ for r, j, read in zip(*sets[name]) if not read]
    cut, fitted = best_threshold([g for g, _ in silent], [s for _, s in silent])
    print(f"\n2. Short English pairs the plain reading leaves silent: {len(silent)} on the sets read, best cut at "
          f"p(support) {1 / (1 + math.exp(-cut)):.3f} (BAcc {fitted:.3f} on them; the shipped cut is 0.5)")

    def bacc(rows, judgments, read, with_cut: bool) -> float:
        calls = [j.label == "full" if r or not with_cut else (support(j) >= cut and j.label != "contradicts")
                 for j, r in zip(judgments, read)]
        return balanced_accuracy([r.label == "full" for r in rows], calls)

    for title, names in (("sets read", READ), ("sets never read", NEVER_READ)):
        before = [bacc(*sets[n], False) for n in names]
        after = [bacc(*sets[n], True) for n in names]
        print(f"  {title}: mean {np.mean(before):.3f} -> {np.mean(after):.3f}")
        for n, b, a in zip(names, before, after):
            print(f"    {n:8s} {b:.3f} -> {a:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="the shared data folder")
    ap.add_argument("--cache", default="/tmp/citeaudit-judge-v2", help="judge_v2.py's judgment cache")
    args = ap.parse_args()
    from citeaudit.judges.model import CHINESE_MODEL_NAME, shipped_model_dir
    from citeaudit.judges.registry import build_judge, parse_judge

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    first = build_judge(parse_judge("model"))
    second = build_judge(parse_judge(f"model:path={shipped_model_dir(CHINESE_MODEL_NAME)},zh=model"))
    layer_on_attribution(args.data, cache, first, second)
    threshold_on_silent_pairs(args.data, cache, first)


if __name__ == "__main__":
    main()
