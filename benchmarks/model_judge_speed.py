"""Speed of the `model` judge, in one run: end to end against the raw forward pass on the same windows,
int8 static vs int8 dynamic vs fp32, and the Chinese route.

    python benchmarks/model_judge_speed.py [DATA.jsonl] [--rows N] [--rounds 3] [--threads 2]
                                           [--dev-rows 584] [--zh-rows 89] [--work /tmp/citeaudit-quant]
                                           [--skip-variants] [--skip-zh]

1. End to end vs raw forward. DATA defaults to tests/fixtures/judge_validation_sample.jsonl (40 dev rows
   per source; its 120 English rows are used). The windows are exactly what the judge reads: each
   request and the parts of a multi-passage set (a set is judged with its parts), cut to the model's
   256 tokens. Each round, in turns (the order flips every round, since the CPU may be shared):
     raw          onnxruntime forward passes only, one window per pass as the judge runs, on pairs
                  encoded beforehand (tokenizers' encode_batch, outside the timing), shortest first
     judge        a fresh `model` judge (calibrated + guard) end to end on the requests: encoding,
                  windowing, forward passes, calibration, guard; and a fresh `model:calibration=off,
                  guard=off` (the model alone)
   and prints each round's windows/s and the ratio judge / raw, then the medians.
2. Variants of the same weights (skipped with --skip-variants). Built once under --work: fp32 is the
   shipped int8 graph with its weights dequantised (`training.export.dequantize_dynamic`: the fp32
   export of training is not kept in the repository); int8 static is `quantize_static_qdq` of that fp32
   graph (QDQ, MinMax activation scales from 200 windows of English train-split rows; per-tensor and
   per-channel weights). For each: raw windows/s at batch 1 and at batch 16 (length-sorted), in turns
   over the rounds; the largest change of a probability between batch 16 and one window per pass (0:
   batch-independent); and the `model` judge's balanced accuracy (full vs rest) and AUC of p(support)
   on the English dev rows (--dev-rows, 0 to skip), with the shipped calibration.
3. The Chinese route (skipped with --skip-zh): a cold `model` judge on the CiteCheck dev rows (routed
   to `embedding:0.9175`), pairs/s, next to the English route's pairs/s of the same round.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from citeaudit.judges.base import Request
from citeaudit.judges.local import CrossEncoderJudge
from citeaudit.judges.model import ModelJudge, _subsets, is_chinese, make_model_judge, shipped_model_dir
from citeaudit.judges.windows import set_windows
from citeaudit.files.labelled import load_rows
from citeaudit.records import SourcePassage

ROOT = Path(__file__).resolve().parents[1]
WARM_UP = Request.of("The warm-up claim is short.",
                     [SourcePassage("W", "W", None, "A warm-up passage, read before any timing.", 0, 42)])


def judge_windows(judge: CrossEncoderJudge, requests: list[Request]) -> list[tuple[str, str]]:
    """(premise, claim) of every window the model judge reads for `requests`, each set's parts included,
    cut with an encoding of every span (the way judges/local.py counts)."""
    plain = dict.fromkeys(q for r in requests for q in _subsets(r))
    pairs = []
    for r in plain:
        budget = judge.max_tokens - judge.backend.count(r.text) - 3
        for group in set_windows(r.passages, judge.backend.count, budget):
            pairs.append(("\n".join(w.text for w in group), r.text))
    return pairs


def encode(judge: CrossEncoderJudge, pairs: list[tuple[str, str]]) -> list:
    return judge.backend.tokenizer.encode_batch(pairs)


def feeds(judge: CrossEncoderJudge, encodings: list, batch: int) -> list[tuple[list[int], dict]]:
    """Feeds of `batch` windows each and the windows each holds, sorted by length as the judge runs them
    (one shape after another of about the same size is also faster for onnxruntime at batch 1)."""
    order = sorted(range(len(encodings)), key=lambda k: len(encodings[k].ids))
    out = []
    for b in range(0, len(order), batch):
        chunk = order[b: b + batch]
        width = max(len(encodings[k].ids) for k in chunk)

        def pad(rows):
            return np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int64)

        feed = {"input_ids": pad([encodings[k].ids for k in chunk]),
                "attention_mask": pad([encodings[k].attention_mask for k in chunk]),
                "token_type_ids": pad([encodings[k].type_ids for k in chunk])}
        out.append((chunk, {k: v for k, v in feed.items() if k in judge.backend.inputs}))
    return out


class Clock:
    """Wall seconds and CPU seconds of this process (all its threads) of what runs inside it. On a
    shared machine wall time measures the other work too; CPU time counts only this process's (with
    onnxruntime's waiting threads spinning, not quite only the work), so both are printed."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def raw_forward(judge: CrossEncoderJudge, prepared: list[tuple[list[int], dict]]) -> tuple[Clock, np.ndarray]:
    """The clock of the forward passes alone, and each window's logits."""
    session = judge.backend.session
    session.run(None, prepared[0][1])  # warm-up
    logits: list = [None] * sum(len(chunk) for chunk, _ in prepared)
    with Clock() as secs:
        outs = [session.run(None, feed)[0] for _, feed in prepared]
    for (chunk, _), out in zip(prepared, outs):
        for k, row in zip(chunk, out):
            logits[k] = row
    return secs, np.array(logits)


def timed_judge(spec: str, requests: list[Request]) -> Clock:
    judge = make_model_judge(spec)
    judge.judge_batch([WARM_UP])  # the session's first run, outside the timing
    with Clock() as secs:
        judge.judge_batch(requests)
    return secs


def end_to_end(requests: list[Request], rounds: int, threads: int) -> None:
    judge = ModelJudge(threads=threads)
    pairs = judge_windows(judge.inner, requests)
    encodings = encode(judge.inner, pairs)
    prepared = feeds(judge.inner, encodings, 1)
    tokens = [len(e.ids) for e in encodings]
    print(f"## end to end vs raw forward: {len(requests)} English pairs -> {len(pairs)} windows (sets' parts "
          f"included), mean {np.mean(tokens):.0f} tokens (max {max(tokens)}), {threads} threads")
    paths = {"raw int8, batch 1": lambda: raw_forward(judge.inner, prepared)[0],
             "judge `model`": lambda: timed_judge(f"threads={threads}", requests),
             "judge, model only": lambda: timed_judge(f"threads={threads},calibration=off,guard=off", requests)}
    clocks: dict[str, list[Clock]] = {name: [] for name in paths}
    for round_ in range(rounds):
        for name in (list(paths) if round_ % 2 == 0 else list(reversed(paths))):
            clocks[name].append(paths[name]())
        raw = clocks["raw int8, batch 1"][-1]
        print(f"round {round_ + 1}: " + ", ".join(f"{name} {len(pairs) / c[-1].wall:.1f} windows/s" for name, c in clocks.items())
              + "; judge/raw " + ", ".join(f"{name} {raw.wall / c[-1].wall:.2f} (CPU time {raw.cpu / c[-1].cpu:.2f})"
                                           for name, c in clocks.items() if name.startswith("judge")))
    for name, values in clocks.items():
        s = statistics.median(c.wall for c in values)
        print(f"{name:24s} median {len(pairs) / s:7.1f} windows/s {len(requests) / s:7.1f} pairs/s "
              f"(CPU {statistics.median(c.cpu for c in values):.2f} s)")
    for name in ("judge `model`", "judge, model only"):
        wall = [r.wall / j.wall for r, j in zip(clocks["raw int8, batch 1"], clocks[name])]
        cpu = [r.cpu / j.cpu for r, j in zip(clocks["raw int8, batch 1"], clocks[name])]
        print(f"{name} / raw forward: median {statistics.median(wall):.2f} wall, {statistics.median(cpu):.2f} CPU time "
              f"(rounds: {', '.join(f'{w:.2f}/{c:.2f}' for w, c in zip(wall, cpu))})")


def build_variants(work: Path) -> dict[str, Path]:
    """fp32 (dequantised) and int8 static variants of the shipped model, built once under `work`."""
    import shutil

    from citeaudit.training.export import dequantize_dynamic, quantize_static_qdq

    shipped = shipped_model_dir()
    dirs = {"int8 dynamic (shipped)": shipped, "fp32 (dequantised)": work / "fp32",
            "int8 static": work / "static", "int8 static, per-channel": work / "static-per-channel"}
    if not (dirs["fp32 (dequantised)"] / "model.onnx").exists():
        dequantize_dynamic(shipped / "model_int8.onnx", dirs["fp32 (dequantised)"])
    todo = [(name, per_channel) for name, per_channel in (("int8 static", False), ("int8 static, per-channel", True))
            if not any(dirs[name].glob("*.onnx"))]
    if todo:
        calibration_feeds = calibration_windows(ModelJudge(threads=2).inner, 200)
        for name, per_channel in todo:
            quantize_static_qdq(dirs["fp32 (dequantised)"], dirs[name], calibration_feeds, per_channel=per_channel)
    for name, path in dirs.items():  # the shipped decision on each variant's p(full)
        if path != shipped:
            shutil.copyfile(shipped / "calibration.json", path / "calibration.json")
    return dirs


def calibration_windows(judge: CrossEncoderJudge, limit: int) -> list[dict]:
    """Windows of English train-split rows (never dev or test), one feed each, as the judge reads them."""
    import json
    import random

    from citeaudit.files.labelled import parse_rows
    from citeaudit.training.data import load_all, split_rows

    train = [r for r in split_rows(load_all())["train"] if r["lang"] == "en"]
    rows = parse_rows([json.dumps(r, ensure_ascii=False) for r in random.Random(0).sample(train, limit)])
    pairs = judge_windows(judge, [Request.of(r.claim, r.passages) for r in rows])[:limit]
    return [feed for _, feed in feeds(judge, encode(judge, pairs), 1)]


def variants(requests: list[Request], rounds: int, threads: int, work: Path, dev_rows_n: int) -> None:
    dirs = build_variants(work)
    judges = {name: CrossEncoderJudge("onnx", path, threads=threads) for name, path in dirs.items()}
    first = next(iter(judges.values()))
    pairs = judge_windows(first, requests)
    encodings = encode(first, pairs)
    prepared = {batch: feeds(first, encodings, batch) for batch in (1, 16)}
    print(f"\n## int8 static vs int8 dynamic vs fp32: the same {len(pairs)} windows, {threads} threads")
    rates: dict[tuple[str, int], list[float]] = {(name, b): [] for name in judges for b in prepared}
    cpu_rates: dict[tuple[str, int], list[float]] = {(name, b): [] for name in judges for b in prepared}
    moved: dict[str, float] = {}
    for round_ in range(rounds):
        names = list(judges) if round_ % 2 == 0 else list(reversed(judges))
        for name in names:
            logits = {}
            for batch, prep in prepared.items():
                secs, logits[batch] = raw_forward(judges[name], prep)
                rates[(name, batch)].append(len(pairs) / secs.wall)
                cpu_rates[(name, batch)].append(len(pairs) / secs.cpu)
            probs = {b: np.exp(v - v.max(axis=1, keepdims=True)) for b, v in logits.items()}
            probs = {b: v / v.sum(axis=1, keepdims=True) for b, v in probs.items()}
            moved[name] = max(moved.get(name, 0.0), float(np.abs(probs[16] - probs[1]).max()))
    accuracy = dev_accuracy(dirs, threads, dev_rows_n) if dev_rows_n else {}
    print(f"{'model':26s} {'MiB':>5s} {'batch 1 w/s':>12s} {'batch 16 w/s':>13s} {'per CPU-s 1 / 16':>17s} "
          f"{'max |p16 - p1|':>15s}" + ("  dev BAcc   AUC" if accuracy else ""))
    for name, path in dirs.items():
        size = sum(p.stat().st_size for p in path.glob("*.onnx")) / 2**20
        line = (f"{name:26s} {size:5.1f} {statistics.median(rates[(name, 1)]):12.1f} "
                f"{statistics.median(rates[(name, 16)]):13.1f} {statistics.median(cpu_rates[(name, 1)]):8.1f} / "
                f"{statistics.median(cpu_rates[(name, 16)]):6.1f} {moved[name]:15.2e}")
        if name in accuracy:
            line += f"  {accuracy[name][0]:.3f}   {accuracy[name][1]:.3f}"
        print(line)
    print("(a probability that moves with batch 16 depends on its batch mates: only one window per pass is "
          "then batch-independent)")


def dev_accuracy(dirs: dict[str, Path], threads: int, limit: int) -> dict[str, tuple[float, float]]:
    """The `model` judge (calibrated + guard) on English dev rows with each variant's weights."""
    from citeaudit.training.data import dev_rows
    from citeaudit.training.validation import validate_judge

    rows = dev_rows(lang="en", limit=limit)
    print(f"(dev: {len(rows)} English rows, the `model` judge with each variant)")
    out = {}
    for name, path in dirs.items():
        result = validate_judge(rows, ModelJudge(path=path, threads=threads), resamples=1)
        out[name] = (result["balanced_accuracy"], result["auc"])
    return out


def chinese_route(threads: int, zh_rows: int, en: list[Request]) -> None:
    from citeaudit.training.data import dev_rows

    zh = [Request.of(r.claim, r.passages) for r in dev_rows(lang="zh")]
    zh = zh[:zh_rows] if zh_rows else zh
    passages = sum(len(r.passages) for r in zh)
    zh_secs = timed_judge(f"threads={threads}", zh).wall  # a cold judge: no vectors or windows remembered
    en_secs = timed_judge(f"threads={threads}", en).wall
    print(f"\n## the Chinese route: {len(zh)} CiteCheck dev rows ({passages} passages) through a cold `model` "
          f"judge (embedding:0.9175)")
    print(f"Chinese route {len(zh) / zh_secs:6.2f} pairs/s; English model route, same run "
          f"{len(en) / en_secs:6.2f} pairs/s ({(len(en) / en_secs) / (len(zh) / zh_secs):.1f}x per pair)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(ROOT / "tests/fixtures/judge_validation_sample.jsonl"))
    ap.add_argument("--rows", type=int, default=0, help="use the first N English rows (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default="/tmp/citeaudit-quant", help="where the fp32 and static variants are built")
    ap.add_argument("--dev-rows", type=int, default=584, help="English dev rows for the variants' accuracy (0: skip)")
    ap.add_argument("--zh-rows", type=int, default=0, help="the first N Chinese dev rows (0: all 89)")
    ap.add_argument("--skip-variants", action="store_true")
    ap.add_argument("--skip-zh", action="store_true")
    args = ap.parse_args()

    requests = [Request.of(r.claim, r.passages) for r in load_rows(args.data)]
    requests = [r for r in requests if not is_chinese(r)]
    if args.rows:
        requests = requests[: args.rows]
    end_to_end(requests, args.rounds, args.threads)
    if not args.skip_variants:
        variants(requests, args.rounds, args.threads, Path(args.work), args.dev_rows)
    if not args.skip_zh:
        chinese_route(args.threads, args.zh_rows, requests)


if __name__ == "__main__":
    main()
