"""Throughput of the embedding judge on a realistic mix: dev-split claims against their cited passages.

    python benchmarks/judge_throughput.py [DATA.jsonl] [--rows N] [--batch 32]

DATA defaults to tests/fixtures/judge_validation_sample.jsonl (40 dev rows from each source). Prints
windows/s and pairs/s for a cold judge (every window embedded) and a warm one (all from cache).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from citeaudit.judges.base import Request
from citeaudit.judges.embedding import EmbeddingJudge, default_encoder
from citeaudit.files.labelled import load_rows

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(ROOT / "tests/fixtures/judge_validation_sample.jsonl"))
    ap.add_argument("--rows", type=int, default=0, help="use N rows spread over the file (0: all)")
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()

    rows = load_rows(args.data)
    if args.rows:  # an even spread over the file, so every source stays in the mix
        rows = rows[:: max(1, len(rows) // args.rows)][: args.rows]
    requests = [Request.of(r.claim, r.passages) for r in rows]

    t = time.perf_counter()
    encoder = default_encoder()
    load_s = time.perf_counter() - t
    judge = EmbeddingJudge(encoder=encoder, batch_size=args.batch)

    t = time.perf_counter()
    windows = [w for r in requests for p in r.passages for w in judge.windows(p)]
    window_s = time.perf_counter() - t
    tokens = [judge._count(w.text) for w in windows]
    claims = len({r.text for r in requests})
    distinct = len({w.text for w in windows})

    t = time.perf_counter()
    judge.judge_batch(requests)
    cold_s = time.perf_counter() - t
    t = time.perf_counter()
    judge.judge_batch(requests)
    warm_s = time.perf_counter() - t

    print(f"judge: {judge.signature}")
    print(f"data: {args.data}: {len(rows)} pairs, {claims} distinct claims, {len(windows)} windows "
          f"({distinct} distinct), tokens/window mean {statistics.mean(tokens):.0f} max {max(tokens)}")
    print(f"model load:         {load_s:8.2f} s")
    print(f"windowing:          {window_s:8.2f} s (tokenizer counts, cached per sentence)")
    print(f"cold (embed all):   {cold_s:8.2f} s  {distinct / cold_s:8.1f} windows/s  "
          f"{(distinct + claims) / cold_s:8.1f} texts/s  {len(rows) / cold_s:8.1f} pairs/s")
    print(f"warm (cache only):  {warm_s:8.3f} s  {len(rows) / warm_s:8.0f} pairs/s")


if __name__ == "__main__":
    main()
