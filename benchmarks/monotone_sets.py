"""How often adding an unrelated passage to a cited set takes a `full` away, with sets judged as one
joint reading only (the old behaviour) and as the strongest of the set and its parts (the model judge).

    python benchmarks/monotone_sets.py [--rows tests/fixtures/judge_validation_sample.jsonl] [--dev N]

`--dev N` adds the first N rows of the dev split (needs the shared data folder). Prints, for each way,
the number of rows judged `full` alone and how many of them lost it when an unrelated passage (the
next row's first) joined the set.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from citeaudit.judges.base import Request
from citeaudit.judges.model import make_model_judge
from citeaudit.files.labelled import Row, load_rows


def joined_requests(rows: list[Row]) -> list[Request]:
    out = []
    for i, row in enumerate(rows):
        other = rows[(i + 1) % len(rows)].passages[0]
        out.append(Request.of(row.claim, [*row.passages, replace(other, id=f"{other.id}-unrelated-{i}")]))
    return out


def dev_rows(limit: int) -> list[Row]:
    from citeaudit.training.data import dev_rows as rows_of_dev

    return rows_of_dev(limit=limit, lang="en")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=str(Path(__file__).resolve().parents[1] / "tests" / "fixtures"
                                              / "judge_validation_sample.jsonl"))
    parser.add_argument("--dev", type=int, default=0)
    args = parser.parse_args()
    rows = load_rows(args.rows) + (dev_rows(args.dev) if args.dev else [])
    alone = [Request.of(r.claim, r.passages) for r in rows]
    joined = joined_requests(rows)
    judge = make_model_judge("threads=2")
    for name, judge_all in (("joint reading only", lambda rs: judge._judge_each(rs, judge.guard)),
                            ("set and its parts", judge.judge_batch)):
        before, after = judge_all(alone), judge_all(joined)
        full = [i for i, j in enumerate(before) if j.label == "full"]
        lost = [i for i in full if after[i].label != "full"]
        print(f"{name:20} rows {len(rows)}  full alone {len(full)}  lost with an unrelated passage "
              f"{len(lost)} ({100 * len(lost) / max(len(full), 1):.1f} %)")


if __name__ == "__main__":
    main()
