"""The same batch judged by the local engine and by `prepare --engine ray` on local Ray workers.

    python benchmarks/ray_vs_local.py [DATA.jsonl] [--judge model] [--rows N] [--workers 2] [--block-size 64]

DATA defaults to tests/fixtures/judge_validation_sample.jsonl (dev claims with their cited passages).
Each engine fills a fresh store with the same requests; the script checks that the two stores hold the
same rows (keys and judgments, bit for bit) and prints the wall time of each, Ray's overhead in seconds
and as a ratio, and how much of Ray's time was starting the local cluster.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import tempfile
import time
from pathlib import Path

from citeaudit.judges import Judgments, JudgmentStore, Request
from citeaudit.judges.ray_engine import build_judge, fill_with_ray
from citeaudit.files.labelled import load_rows

ROOT = Path(__file__).resolve().parents[1]


def stored_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT key, judge, text, passages, judgment FROM judgments ORDER BY key").fetchall()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(ROOT / "tests/fixtures/judge_validation_sample.jsonl"))
    ap.add_argument("--judge", default="model", help="a judge spec that needs no cases (default: model)")
    ap.add_argument("--rows", type=int, default=0, help="use the first N rows (0: all)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--block-size", type=int, default=64)
    args = ap.parse_args()

    import ray

    rows = load_rows(args.data)[: args.rows or None]
    requests = list(dict.fromkeys(Request.of(r.claim, r.passages) for r in rows))
    folder = Path(tempfile.mkdtemp(prefix="ray_vs_local_"))

    t = time.perf_counter()
    local = Judgments(build_judge(args.judge, [], "citeaudit"), JudgmentStore(folder / "local.db"))
    local_load_s = time.perf_counter() - t
    local.fill(requests, batch_size=args.block_size)
    local_s = time.perf_counter() - t

    t = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    start_s = time.perf_counter() - t
    on_ray = Judgments(build_judge(args.judge, [], "citeaudit"), JudgmentStore(folder / "ray.db"))
    fill_with_ray(on_ray, requests, args.judge, [], workers=args.workers, block_size=args.block_size)
    ray_s = time.perf_counter() - t
    ray.shutdown()

    same = stored_rows(folder / "local.db") == stored_rows(folder / "ray.db")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; judge {local.signature}")
    print(f"batch: {len(requests)} distinct pairs from {args.data} ({len(rows)} rows); "
          f"{args.workers} Ray workers, blocks of {args.block_size}")
    print(f"stores identical (keys and judgments): {same} ({len(stored_rows(folder / 'ray.db'))} rows each)")
    print(f"local engine:  {local_s:7.2f} s  (judge loaded in {local_load_s:.2f} s)")
    print(f"ray engine:    {ray_s:7.2f} s  (of which starting the local Ray: {start_s:.2f} s)")
    print(f"ray overhead:  {ray_s - local_s:+7.2f} s, ratio ray/local {ray_s / local_s:.2f}; "
          f"without the start-up {ray_s - start_s - local_s:+.2f} s, ratio {(ray_s - start_s) / local_s:.2f}")
    if not same:
        raise SystemExit("the two engines stored different judgments")


if __name__ == "__main__":
    main()
