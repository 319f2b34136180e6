"""The files `benchmarks/adapt_judge.py` measures with: one domain's labels to adapt on, and the rest of it to
measure on, sharing no passage.

    citeaudit judge-data export SPLITS --train
    python benchmarks/adapt_files.py SPLITS --source expertqa --sizes 300,600 --out DIR [--pool train|all] [--seed 1]

--pool train (for the shipped judge, which trained on the train split): DIR/test.jsonl is the source's
test split; DIR/adapt300.jsonl, DIR/adapt600.jsonl … are drawn from its train split, leaving out every
row that cites a passage text a test row cites.

--pool all (for a judge trained without the source, `train-judge --leave-out SOURCE`): every row of the
source, whatever its split, is drawn from; the test file is the rows sharing no passage text with the
largest adapt file.

Rows are drawn in whole groups (rows citing one passage text, directly or through others, are one
group), in an order shuffled with the seed, until the size is reached; a group the size cuts is cut, and
its other rows go to neither file. The smaller files are the first rows of the larger ones, so 600
labels are the 300 and 300 more. Prints what it wrote.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from citeaudit.stats import connected_groups


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def passage_texts(row: dict) -> set[str]:
    return {p["text"] for p in row["passages"]}


def drawn_in_groups(rows: list[dict], size: int, seed: int) -> list[dict]:
    """`size` rows, whole groups of rows sharing a passage text taken in a seeded order."""
    numbers = connected_groups([[p["text"] for p in row["passages"]] for row in rows])
    groups: dict[int, list[dict]] = {}
    for row, number in zip(rows, numbers):
        groups.setdefault(number, []).append(row)
    order = list(groups.values())
    random.Random(seed).shuffle(order)
    drawn = [row for group in order for row in group]
    return drawn[:size]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("splits", type=Path, help="the folder `citeaudit judge-data export DIR --train` wrote")
    ap.add_argument("--source", required=True)
    ap.add_argument("--sizes", default="300", help="adapt file sizes, comma-separated")
    ap.add_argument("--pool", choices=("train", "all"), default="train")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    splits = {}
    for name in ("train", "dev", "test"):
        path = args.splits / f"{name}.jsonl"
        if not path.exists():
            sys.exit(f"{path}: missing; write the splits with `citeaudit judge-data export {args.splits} --train`")
        splits[name] = [row for row in read(path) if row.get("source") == args.source]
    if not any(splits.values()):
        sys.exit(f"no rows of source {args.source!r} in {args.splits}")
    if args.pool == "train":
        test = splits["test"]
        tested = set().union(*map(passage_texts, test)) if test else set()
        pool = [row for row in splits["train"] if not passage_texts(row) & tested]
        drawn = drawn_in_groups(pool, sizes[-1], args.seed)
    else:
        everything = splits["train"] + splits["dev"] + splits["test"]
        drawn = drawn_in_groups(everything, sizes[-1], args.seed)
        adapted = set().union(*map(passage_texts, drawn))
        test = [row for row in everything if not passage_texts(row) & adapted]
    if len(drawn) < sizes[-1]:
        sys.exit(f"only {len(drawn)} rows of {args.source} can be drawn; ask for at most that many")
    args.out.mkdir(parents=True, exist_ok=True)

    def write(name: str, rows: list[dict]) -> None:
        path = args.out / name
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
        print(f"{path}: {len(rows)} rows")

    for size in sizes:
        write(f"adapt{size}.jsonl", drawn[:size])
    write("test.jsonl", test)


if __name__ == "__main__":
    main()
