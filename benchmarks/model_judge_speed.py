"""Speed of the `model` judge on a realistic mix, in one run:

    python benchmarks/model_judge_speed.py [DATA.jsonl] [--rows N] [--threads 2] [--fp32 DIR]

DATA defaults to tests/fixtures/judge_validation_sample.jsonl (40 dev rows per source; the English
rows are used: Chinese rows go to the embedding judge, benchmarked in judge_throughput.py). Every pair
is cut into the windows the judge reads (up to the model's 256 tokens). Measured on those same windows:

  raw int8    onnxruntime forward passes only (pre-tokenised, one window per pass as the judge runs,
              and batched by length, batch 16)
  raw fp32    the same with the fp32 ONNX export (--fp32 DIR, default /tmp/citeaudit-train/onnx-fp32)
  judge int8  ModelJudge end to end (tokenising, windowing, batching, label mapping): the model alone,
              with its calibration, and with calibration and guard

and prints windows/s, pairs/s and the ratios judge/raw and int8/fp32.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from citeaudit.judges.base import Request
from citeaudit.judges.local import CrossEncoderJudge
from citeaudit.judges.model import IDENTITY_LABELS, ModelJudge, is_chinese, shipped_model_dir
from citeaudit.judges.windows import set_windows
from citeaudit.labelled import load_rows

ROOT = Path(__file__).resolve().parents[1]


def windows_of(judge: CrossEncoderJudge, requests: list[Request]) -> list[tuple[str, str]]:
    pairs = []
    for r in requests:
        budget = judge.max_tokens - judge.backend.count(r.text) - 3
        for group in set_windows(r.passages, judge.backend.count, budget):
            pairs.append(("\n".join(w.text for w in group), r.text))
    return pairs


def raw_forward(judge: CrossEncoderJudge, pairs: list[tuple[str, str]], batch: int = 16) -> float:
    """Seconds for forward passes only over pre-tokenised, length-sorted batches."""
    backend = judge.backend
    encodings = backend.tokenizer.encode_batch(pairs)
    order = sorted(range(len(encodings)), key=lambda k: len(encodings[k].ids))
    feeds = []
    for b in range(0, len(order), batch):
        chunk = [encodings[k] for k in order[b: b + batch]]
        width = max(len(e.ids) for e in chunk)

        def pad(rows):
            return np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int64)

        feed = {"input_ids": pad([e.ids for e in chunk]), "attention_mask": pad([e.attention_mask for e in chunk]),
                "token_type_ids": pad([e.type_ids for e in chunk])}
        feeds.append({k: v for k, v in feed.items() if k in backend.inputs})
    backend.session.run(None, feeds[0])  # warm-up
    t = time.perf_counter()
    for feed in feeds:
        backend.session.run(None, feed)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(ROOT / "tests/fixtures/judge_validation_sample.jsonl"))
    ap.add_argument("--rows", type=int, default=0, help="use the first N English rows (0: all)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fp32", default="/tmp/citeaudit-train/onnx-fp32", help="the fp32 ONNX export dir")
    args = ap.parse_args()

    requests = [Request.of(r.claim, r.passages) for r in load_rows(args.data)]
    requests = [r for r in requests if not is_chinese(r)]
    if args.rows:
        requests = requests[: args.rows]
    t = time.perf_counter()
    judge = ModelJudge(threads=args.threads)
    load_s = time.perf_counter() - t
    pairs = windows_of(judge.inner, requests)
    tokens = [len(judge.inner.backend.tokenizer.encode(p, h).ids) for p, h in pairs]
    print(f"{len(requests)} English pairs -> {len(pairs)} windows, mean {np.mean(tokens):.0f} tokens "
          f"(max {max(tokens)}), {args.threads} threads; model load {load_s:.2f} s")

    results = {}
    results["raw int8"] = raw_forward(judge.inner, pairs, batch=1)
    results["raw int8, batch 16"] = raw_forward(judge.inner, pairs, batch=16)
    fp32_dir = Path(args.fp32)
    if (fp32_dir / "model.onnx").exists():
        fp32 = CrossEncoderJudge("onnx", fp32_dir, label_map=IDENTITY_LABELS, threads=args.threads)  # model only
        results["raw fp32"] = raw_forward(fp32, pairs, batch=1)
        fp32.batch_size = 1
        judge.inner.judge_batch(requests[:4])
        t = time.perf_counter()
        fp32.judge_batch(requests)
        results["judge fp32 (no guard)"] = time.perf_counter() - t
    else:
        print(f"(no fp32 export at {fp32_dir}: fp32 skipped)")
    # a fresh judge each, so no variant finds token counts remembered from another
    for name, j, guard in (("judge int8, model only", ModelJudge(threads=args.threads, calibrated=False), False),
                           ("judge int8, calibrated", ModelJudge(threads=args.threads), False),
                           ("judge int8, calibrated + guard", judge, True)):
        j.judge_batch(requests[-1:], guard=guard)  # warm-up on one request
        t = time.perf_counter()
        j.judge_batch(requests, guard=guard)
        results[name] = time.perf_counter() - t
    # the same passages again (as when a passage is cited by several claims, or judged alone and in its
    # set for ALCE precision): token counts for the windows are remembered
    t = time.perf_counter()
    judge.judge_batch(requests)
    results["judge int8, calibrated + guard, passages seen"] = time.perf_counter() - t
    for name, secs in results.items():
        print(f"{name:46s} {secs:7.2f} s  {len(pairs) / secs:7.1f} windows/s  {len(requests) / secs:7.1f} pairs/s")
    print(f"batch 16 / batch 1 (raw int8): {results['raw int8'] / results['raw int8, batch 16']:.2f}x the speed")
    for name in ("judge int8, model only", "judge int8, calibrated", "judge int8, calibrated + guard",
                 "judge int8, calibrated + guard, passages seen"):
        print(f"{name}: {results['raw int8'] / results[name]:.2f} of the raw forward speed")
    if "raw fp32" in results:
        print(f"int8/fp32 speed-up: raw {results['raw fp32'] / results['raw int8']:.2f}x, "
              f"judge {results['judge fp32 (no guard)'] / results['judge int8, model only']:.2f}x")
    sizes = {p.name: p.stat().st_size / 2**20 for p in shipped_model_dir().glob("*.onnx")}
    if (fp32_dir / "model.onnx").exists():
        sizes["fp32 model.onnx"] = (fp32_dir / "model.onnx").stat().st_size / 2**20
    print("model files: " + ", ".join(f"{k} {v:.1f} MiB" for k, v in sizes.items()))


if __name__ == "__main__":
    main()
