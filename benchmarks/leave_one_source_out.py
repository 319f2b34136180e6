"""Leave-one-source-out figures for the model judge: how it does on a source it never saw.

    python benchmarks/leave_one_source_out.py [--folds DIR] [--data DIR] [--cache DIR] [--train]

For each English attribution source X (wice, expertqa, factcheck_gpt) a model is trained without X:

    citeaudit train-judge DIR/X --leave-out X --steps 1200 --time-budget 25 --work-dir /tmp/loso-work/X

(`--train` runs that for every fold that is missing; about 25 minutes each on 2 cores). Then, on the
rows of X's test split (the rows of the per-source figures in docs/model-judge.md), side by side:

  fold, calibrated      the model trained without X with its calibration fitted on the dev split of the
                        *other* English sources, guard on: the shipped recipe, X never seen
  fold, argmax          the same model's own argmax (no calibration), guard on
  fold, argmax, no guard
  fold @ t              full iff p(full) >= t, t chosen on the other sources' dev (guard on)
  embedding @ t         cosine similarity, t chosen the same way (other sources' dev)
  judge-v1              the shipped model, which saw X's *train* split and is calibrated on every
                        source's dev split: the in-distribution reference

and the calibrated fold model on every row of X (train, dev and test: none was seen), for a tighter
interval, and on X's dev + test rows beside the embedding baseline. The intervals resample rows; rows
of one claim or one document are correlated, so they understate the uncertainty (the test split of a
source can differ from its other rows by more than its interval).

Chinese (CiteCheck) goes to the embedding judge in the shipped setting. Its threshold is chosen on
CiteCheck's dev split and measured on its test split (split by query: each CiteCheck query has one
row); the stricter figure chooses the threshold on English dev rows only, CiteCheck left out entirely.

Every judgment is cached as JSONL under --cache, keyed by judge and row id, so a rerun judges only
what is missing. BAcc is full vs the rest, with 95 % bootstrap intervals (1,000 resamples).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from citeaudit.judges.base import Request, judge_many
from citeaudit.training.data import load_all, split_rows
from citeaudit.files.labelled import Row, load_rows, parse_rows
from citeaudit.stats import balanced_accuracy, best_threshold, bootstrap_interval, roc_auc, score_from

ENGLISH = ("wice", "expertqa", "factcheck_gpt")


def cached_scores(cache: Path, key: str, rows: list[Row], make_judge) -> dict[str, dict]:
    """{row id: {"label", "scores"}} for every row, judging only the rows not yet in the cache file of
    this key and judge signature."""
    judge = make_judge()
    path = cache / f"{key}.{hashlib.sha256(judge.signature.encode()).hexdigest()[:10]}.jsonl"
    known: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                known[d["id"]] = d
    todo = [r for r in rows if r.id not in known]
    if todo:
        print(f"  judging {len(todo)} rows with {key}", file=sys.stderr, flush=True)
        with path.open("a", encoding="utf-8") as fh:
            for i in range(0, len(todo), 32):
                chunk = todo[i:i + 32]
                for r, j in zip(chunk, judge_many(judge, [Request.of(r.claim, r.passages) for r in chunk])):
                    known[r.id] = {"id": r.id, "label": j.label, "scores": j.scores}
                    fh.write(json.dumps(known[r.id]) + "\n")
                fh.flush()
    return {r.id: known[r.id] for r in rows}


def score(d: dict) -> float:
    return score_from(d["scores"])


def figures(rows: list[Row], predicted_full: list[bool], scores: list[float] | None) -> str:
    gold = [r.label == "full" for r in rows]
    n = len(rows)

    def bacc(ix):
        return balanced_accuracy([gold[i] for i in ix], [predicted_full[i] for i in ix])

    b = bacc(range(n))
    lo, hi = bootstrap_interval(bacc, n, 1000, 0)
    text = f"{b:.3f} [{lo:.3f}, {hi:.3f}]"
    if scores is not None:
        text += f"  AUC {roc_auc(gold, scores):.3f}"
    return text


def threshold_on(rows: list[Row], preds: dict[str, dict]) -> float:
    found = best_threshold([r.label == "full" for r in rows], [score(preds[r.id]) for r in rows])
    assert found is not None, "no threshold: the dev rows hold a single class"
    return found[0]


def model_judge(path: Path | None, guard: bool = True, calibrated: bool = True):
    from citeaudit.judges.model import ModelJudge

    return lambda: ModelJudge(path=path, guard=guard, threads=2, calibrated=calibrated)


def calibrated_copy(fold: Path, rows: list[Row], cache: Path) -> Path:
    """A copy of the fold model with its calibration fitted on `rows` (the other sources' dev)."""
    from citeaudit.training.calibrate import fit_model_calibration

    target = cache / f"{fold.name}-calibrated"
    if not (target / "calibration.json").exists():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(fold, target)
        (target / "calibration.json").unlink(missing_ok=True)
        fitted, summary = fit_model_calibration(target, rows, described_as="dev split, other English sources")
        fitted.save(target)
        print(f"  calibration of {fold.name}: {json.dumps(summary['weights'])}, bias {summary['bias']:.3f}",
              file=sys.stderr)
    return target


def embedding_judge():
    from citeaudit.judges.embedding import make_embedding_judge

    return make_embedding_judge("")


def guarded_at(rows, preds_off, preds_on, t):
    """full iff p(full) >= t, unless the guard stopped that pair's full (a guard only ever lowers a full)."""
    out = []
    for r in rows:
        stopped = preds_off[r.id]["label"] == "full" and preds_on[r.id]["label"] != "full"
        out.append(score(preds_off[r.id]) >= t and not stopped)
    return out


def train_missing(folds: Path) -> None:
    for source in ENGLISH:
        if not (folds / source / "model_int8.onnx").exists():
            subprocess.run(["citeaudit", "train-judge", str(folds / source), "--leave-out", source, "--steps", "1200",
                            "--time-budget", "25", "--resume", "--work-dir", f"/tmp/loso-work/{source}"], check=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", default="/tmp/loso", help="one exported model per left-out source: DIR/wice, ...")
    ap.add_argument("--data", default="/tmp/jv", help="dev.jsonl and test.jsonl from `citeaudit judge-data export`")
    ap.add_argument("--cache", default="/tmp/loso-cache")
    ap.add_argument("--train", action="store_true", help="train the folds that are missing first")
    args = ap.parse_args()
    folds, data, cache = Path(args.folds), Path(args.data), Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if args.train:
        train_missing(folds)
    if not (data / "test.jsonl").exists():
        subprocess.run(["citeaudit", "judge-data", "export", str(data)], check=True)
    dev, test = load_rows(data / "dev.jsonl"), load_rows(data / "test.jsonl")
    every = {s: parse_rows([json.dumps(r) for r in rows]) for s, rows in split_rows(load_all()).items()}

    en_dev = [r for r in dev if r.lang == "en"]
    emb_dev = cached_scores(cache, "embedding.dev", dev, embedding_judge)
    emb_test = cached_scores(cache, "embedding.test", test, embedding_judge)
    emb = {**emb_dev, **emb_test}
    v1_test = cached_scores(cache, "judge-v1.test", [r for r in test if r.lang == "en"], model_judge(None))

    print("Leave-one-source-out, English (BAcc full vs rest [95 % CI], AUC of p(full) or cosine)\n")
    for source in ENGLISH:
        fold = folds / source
        if not (fold / "model_int8.onnx").exists():
            print(f"{source}: no fold model at {fold} (run with --train)\n")
            continue
        rows = [r for r in test if r.source == source]
        other_dev = [r for r in en_dev if r.source != source]
        calibrated = calibrated_copy(fold, other_dev, cache)
        cal = cached_scores(cache, f"fold-{source}.cal.test", rows, model_judge(calibrated))
        on = cached_scores(cache, f"fold-{source}.on.test", rows, model_judge(fold, calibrated=False))
        off = cached_scores(cache, f"fold-{source}.off.test", rows, model_judge(fold, False, False))
        dev_off = cached_scores(cache, f"fold-{source}.off.dev", other_dev, model_judge(fold, False, False))
        t_model = threshold_on(other_dev, dev_off)
        t_emb = threshold_on(other_dev, emb_dev)
        p_full = [score(off[r.id]) for r in rows]
        print(f"{source}: {len(rows)} test rows, {sum(r.label == 'full' for r in rows)} full")
        def line(name: str, predicted: list[bool], scores: list[float] | None) -> None:
            print(f"  {name:<34} {figures(rows, predicted, scores)}")

        line("fold, calibrated", [cal[r.id]["label"] == "full" for r in rows], [score(cal[r.id]) for r in rows])
        line("fold, argmax", [on[r.id]["label"] == "full" for r in rows], p_full)
        line("fold, argmax, no guard", [off[r.id]["label"] == "full" for r in rows], p_full)
        line(f"fold @ p(full) >= {t_model:.3f}", guarded_at(rows, off, on, t_model), None)
        line(f"embedding @ {t_emb:.4f}", [score(emb_test[r.id]) >= t_emb for r in rows],
             [score(emb_test[r.id]) for r in rows])
        line(f"judge-v1 (saw {source} train)", [v1_test[r.id]["label"] == "full" for r in rows],
             [score(v1_test[r.id]) for r in rows])
        unseen = [r for split in every.values() for r in split if r.source == source]
        everything = cached_scores(cache, f"fold-{source}.cal.all", unseen, model_judge(calibrated))
        print(f"  fold, calibrated, all {len(unseen)} rows of {source}: "
              f"{figures(unseen, [everything[r.id]['label'] == 'full' for r in unseen], [score(everything[r.id]) for r in unseen])}")
        # dev + test of X: more rows for the side-by-side with the embedding baseline (both cached)
        both = [r for r in dev if r.source == source] + rows
        print(f"  dev+test, {len(both)} rows: fold, calibrated "
              f"{figures(both, [everything[r.id]['label'] == 'full' for r in both], [score(everything[r.id]) for r in both])}; "
              f"embedding @ {t_emb:.4f} {figures(both, [score(emb[r.id]) >= t_emb for r in both], [score(emb[r.id]) for r in both])}\n")

    zh_dev = [r for r in dev if r.lang == "zh"]
    zh_test = [r for r in test if r.lang == "zh"]
    print(f"Chinese (CiteCheck test, {len(zh_test)} rows), embedding judge:")
    for name, tuning in (("threshold on CiteCheck dev", zh_dev), ("threshold on English dev only", en_dev)):
        t = threshold_on(tuning, emb_dev)
        print(f"  {name} ({t:.4f}): "
              f"{figures(zh_test, [score(emb_test[r.id]) >= t for r in zh_test], [score(emb_test[r.id]) for r in zh_test])}")


if __name__ == "__main__":
    main()
