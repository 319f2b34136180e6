"""Judges side by side on every measuring set, in both languages: what decides which judge ships.

    python benchmarks/judge_v2.py [--judge SPEC ...] [--sets dev,test,plain,holdout,fresh,fresh2,…,fresh19,hard,nli,FILE.jsonl] [--changed] [--reading] [--passage-seen] [--resample-by rows|groups] [--rows N] [--cache DIR]

Default judge: `model` (judge-v1, Chinese by the embedding route); name a trained bilingual judge with
`--judge model:path=DIR,zh=model` beside it. For each judge and each set, by source and language: balanced accuracy (full vs the rest)
with its 95 % bootstrap interval, ROC AUC, the share the judge called uncertain and the accuracy of the
rest, and the recall of `partial` and `contradicts` (the share of gold partial / contradicts rows the
judge gave that label). From the second judge on, each line ends with its BAcc minus the first
judge's on the same rows, with the paired bootstrap interval of that difference.

The sets:
  dev     the dev split of the shared attribution data (training/data.py: split by claim), both languages
  test    the test split (the same, never read by training or calibration)
  plain   benchmarks/data/plain_support.jsonl: short plain support pairs (instructions, figures with
          units, negation, a wrong person or measure, a missing second fact) written for this purpose
          and never trained on
  holdout benchmarks/data/plain_holdout.jsonl: 80 more such pairs (40 English, 40 Chinese), written
          apart from the project's code, after the plain reading (judges/plain.py) and the derived
          kinds head, swap and antonym (training/augment.py) were designed on `plain`: it measures what
          `plain` no longer can
  fresh, fresh2 … fresh5
          benchmarks/data/plain_fresh*.jsonl: 60 more each (30 English, 30 Chinese), written apart from the
          project's code while plain reading version 2 was built, each measured once before it was read
          (docs/model-judge.md, "The plain reading, measured")
  fresh6 … fresh11
          60 more each, written apart from the code from the issue's description of such pairs alone,
          two at a time while plain reading version 3 was built; each pair measured once before it was
          read (fresh10 and fresh11 read for version 5)
  fresh12 … fresh15
          60 more each, written the same way, four at once, with "many real paraphrases" among the
          supports, while version 4 was built; each measured once before any was read (fresh14 and
          fresh15 never read)
  fresh16 … fresh19
          60 more each, written the same way, four at once, to check the e5 cosine for short Chinese pairs
          (judges/short_pairs.py) after it was chosen; measured before and after it, never read
  hard    benchmarks/data/plain_hard.jsonl: 960 pairs (480 a language, half full) written to be hard, near
          misses sharing most of the passage's words and supports paraphrased; the fine-tuning trial's
          data and the design set of plain reading version 3
  FILE.jsonl
          any labelled-pairs file
  nli     held-out NLI files no training step reads: Chinese-SNLI test and FEVER-NLI test, --rows pairs
          each (seed 0)

--resample-by: what the intervals draw; `rows` (the default, as every table in docs/model-judge.md was
measured) or `groups`, whole groups of rows that share a claim or a passage, as `citeaudit
validate-judge` draws by default (training/validation.py `row_groups`). The written sets are one claim
and one passage a row, so the two are the same there; on dev and test the groups are wider.

--passage-seen: on dev and test, each language and source also in two parts: the rows with a passage
whose text the train split holds too (the split is by claim, so a passage cited for many claims, as
Factcheck-GPT's and some of ExpertQA's are, can fall on both sides) and the rest: whether having
trained on a passage flatters the figures on it.

--reading: per language, how many pairs the plain reading decides and how often the judge is right on
them, and on the pairs it leaves to the model, the model's calls on the supported and on the other
pairs (counts only, so a set no one has read stays unread).

Judgments are cached as JSONL under --cache keyed by the judge's signature and the row, so a rerun
judges only what is missing (Ctrl-C loses at most one batch).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLAIN = HERE / "data" / "plain_support.jsonl"
HOLDOUT = HERE / "data" / "plain_holdout.jsonl"
HARD = HERE / "data" / "plain_hard.jsonl"  # hard near misses, paraphrased supports: the design set of version 3
WRITTEN = {"plain": PLAIN, "holdout": HOLDOUT, "hard": HARD} | {
    f"fresh{n}": HERE / "data" / f"plain_fresh{n}.jsonl" for n in ("", *map(str, range(2, 20)))}


def rows_of(name: str, data_dir: str | None, n: int):
    from citeaudit.files.labelled import load_rows, parse_rows
    from citeaudit.training.data import load_all, read_nli, split_rows

    if name in WRITTEN:
        return load_rows(str(WRITTEN[name]))
    if name.endswith(".jsonl"):  # any labelled-pairs file
        return load_rows(name)
    if name in ("dev", "test"):
        rows = split_rows(load_all(data_dir))[name]
        return parse_rows([json.dumps(r, ensure_ascii=False) for r in rows])
    out = []
    for held, lang in (("cnsd-snli-zh-test", "zh"), ("fever-test", "en")):
        pool = read_nli(held, data_dir)
        random.Random(0).shuffle(pool)
        for i, r in enumerate(pool[:n]):
            out.append(json.dumps({"id": f"{held}:{i}", "claim": r["hypothesis"], "label": r["label"],
                                   "passages": [{"id": "p", "text": r["premise"]}], "source": held, "lang": lang},
                                  ensure_ascii=False))
    return parse_rows(out)


def judged(judge, rows, cache: Path):
    """Each row's judgment, from the cache where it is there."""
    from citeaudit.records import Judgment
    from citeaudit.training.validation import predict

    key = hashlib.sha256(judge.signature.encode()).hexdigest()[:16]
    path = cache / f"{key}.jsonl"
    known: dict[str, Judgment] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            known[d["row"]] = Judgment.model_validate(d["judgment"])

    def row_key(r) -> str:
        return hashlib.sha256(json.dumps([r.claim, [p.text for p in r.passages]], ensure_ascii=False).encode()).hexdigest()

    todo = [r for r in rows if row_key(r) not in known]
    with path.open("a", encoding="utf-8") as fh:
        for i in range(0, len(todo), 64):
            chunk = todo[i:i + 64]
            for r, j in zip(chunk, predict(chunk, judge)):
                known[row_key(r)] = j
                fh.write(json.dumps({"row": row_key(r), "judgment": j.model_dump(mode="json")}, ensure_ascii=False) + "\n")
            fh.flush()
            print(f"  {judge.name}: {min(i + 64, len(todo))}/{len(todo)} judged", file=sys.stderr, end="\r")
    return [known[row_key(r)] for r in rows]


def figures(rows, judgments, groups=None) -> dict:
    """The figures of one set of rows; the intervals draw whole `groups` (row_drawing's) or single rows."""
    from citeaudit.stats import metrics
    from citeaudit.training.validation import score_of

    gold = [r.label for r in rows]
    pred = [j.label for j in judgments]
    m = metrics(gold, pred, [score_of(j) for j in judgments], 1000, 0, groups=groups)
    sure = [i for i, j in enumerate(judgments) if not j.uncertain]
    recall = {}
    for label in ("partial", "contradicts"):
        ix = [i for i, g in enumerate(gold) if g == label]
        recall[label] = (sum(pred[i] == label for i in ix) / len(ix), len(ix)) if ix else None
    def with_interval(name):
        ci = m.get(f"{name}_ci")
        return None if m.get(name) is None else {"value": m[name], "low": ci[0] if ci else None,
                                                  "high": ci[1] if ci else None}

    return {"n": len(rows), "bacc": with_interval("balanced_accuracy"), "auc": with_interval("auc"),
            "uncertain": 1 - len(sure) / len(rows) if rows else 0,
            "rest_accuracy": (sum((gold[i] == "full") == (pred[i] == "full") for i in sure) / len(sure)) if sure else None,
            "recall": recall}


def line(name: str, f: dict) -> str:
    def fig(v):
        if v is None:
            return "n/a"
        if isinstance(v, dict):
            if v.get("low") is None:
                return f"{v['value']:.3f}"
            return f"{v['value']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"
        return f"{v:.3f}"

    rec = "  ".join(f"{k[:4]} {v[0]:.2f}/{v[1]}" if v else f"{k[:4]} -" for k, v in f["recall"].items())
    return (f"  {name:28} n {f['n']:5}  BAcc {fig(f['bacc']):24} AUC {fig(f['auc']):24} "
            f"unsure {f['uncertain']:.1%}  rest acc {fig(f['rest_accuracy'])}  recall {rec}")


def difference(rows, first, judgments, groups=None) -> str:
    """This judge's BAcc (full vs rest) minus the first judge's on the same rows, with its paired bootstrap
    interval (the same resamples for both, drawing whole `groups` or single rows)."""
    from citeaudit.stats import paired_balanced_accuracy_difference

    gain, ci = paired_balanced_accuracy_difference([r.label == "full" for r in rows], [j.label == "full" for j in first],
                                                   [j.label == "full" for j in judgments], 1000, 0, groups=groups)
    return "n/a" if gain is None else f"{gain:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")


def changed(rows, first, second) -> None:
    """Each row the two judges call otherwise (full or not), with its gold label and who is right."""
    right = {0: 0, 1: 0}
    for r, a, b in zip(rows, first, second):
        if (a.label == "full") == (b.label == "full"):
            continue
        winner = int((b.label == "full") == (r.label == "full"))
        right[winner] += 1
        print(f"  {'second' if winner else 'first '} right  {r.id}  gold {r.label}: {a.label} -> {b.label}  "
              f"{r.claim[:90]!r}")
    print(f"  changed {right[0] + right[1]}: the second judge right on {right[1]}, the first on {right[0]}")


def train_passages(data_dir: str | None) -> set[str]:
    """The passage texts of the train split (the split by claim of training/data.py)."""
    from citeaudit.training.data import load_all, split_rows

    return {p["text"] for r in split_rows(load_all(data_dir))["train"] for p in r["passages"]}


def read_by_plain(rows) -> list[bool]:
    """Whether the plain reading decides each row (for some passage: a clause holds the claim, a rival or a
    denial)."""
    from citeaudit.judges import plain

    return [any(plain.read(r.claim, p.text) is not None for p in r.passages) for r in rows]


def by_reading(rows, judgments, read: list[bool]) -> None:
    """Per language: the pairs the plain reading decides (a clause of a passage holds the claim, a rival or
    a denial) and how often the judge is right on them (full vs rest), and on the rest, where the model
    decides, its calls on the supported and on the unsupported pairs (`read`: read_by_plain's). Aggregates
    only: no pair is shown."""
    for lang in sorted({r.lang for r in rows}):
        spoken, silent = [], []
        for r, j, decided in zip(rows, judgments, read):
            if r.lang == lang:
                (spoken if decided else silent).append((r.label == "full", j.label == "full"))
        right = sum(g == c for g, c in spoken)
        full = [c for g, c in silent if g]
        rest = [not c for g, c in silent if not g]
        share = f"{len(spoken) / (len(spoken) + len(silent)):.0%}"
        print(f"  reading, {lang}: decides {len(spoken)} of {len(spoken) + len(silent)} ({share}), right on {right}"
              + (f" ({right / len(spoken):.0%})" if spoken else "") + f"; silent {len(silent)}: supported called "
              f"full {sum(full)}/{len(full)}, the rest called not {sum(rest)}/{len(rest)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", action="append", help="judge spec (repeatable)")
    ap.add_argument("--sets", default="dev,test,plain,holdout,fresh,nli")
    ap.add_argument("--rows", type=int, default=1000, help="pairs per held-out NLI file")
    ap.add_argument("--data", default=None, help="the shared data folder")
    ap.add_argument("--cache", default="/tmp/citeaudit-judge-v2")
    ap.add_argument("--json", help="also write every figure here")
    ap.add_argument("--reading", action="store_true",
                    help="per language, the pairs the plain reading decides and the judge's calls there and on the rest")
    ap.add_argument("--changed", action="store_true",
                    help="list the rows whose full-vs-rest call the second judge makes otherwise than the first, "
                         "and which of the two is right")
    ap.add_argument("--passage-seen", action="store_true",
                    help="on dev and test, also split each language and source by whether a passage's text is in "
                         "the train split")
    ap.add_argument("--resample-by", choices=("rows", "groups"), default="rows",
                    help="what the bootstrap intervals draw: single rows, or groups sharing a claim or passage")
    args = ap.parse_args()
    from citeaudit.judges.registry import build_judge, parse_judge
    from citeaudit.training.validation import row_drawing

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    specs = args.judge or ["model"]
    trained = train_passages(args.data) if args.passage_seen else set()
    out: dict = {}
    for set_name in args.sets.split(","):
        rows = rows_of(set_name, args.data, args.rows)
        print(f"\n{set_name} ({len(rows)} rows)")
        calls = []
        read = read_by_plain(rows) if args.reading else []
        for spec in specs:
            judge = build_judge(parse_judge(spec))
            judgments = judged(judge, rows, cache)
            calls.append(judgments)
            print(f" {spec}  ({judge.signature[:90]}…)")
            groups: dict[str, list[int]] = {"all": list(range(len(rows)))}
            for i, r in enumerate(rows):
                groups.setdefault(f"lang {r.lang}", []).append(i)
                groups.setdefault(f"{r.source} ({r.lang})", []).append(i)
            if trained and set_name in ("dev", "test"):
                for i, r in enumerate(rows):
                    part = "seen passage" if any(p.text in trained for p in r.passages) else "new passages"
                    groups.setdefault(f"lang {r.lang}, {part}", []).append(i)
                    groups.setdefault(f"{r.source}, {part}", []).append(i)
            for name, ix in groups.items():
                chosen = [rows[i] for i in ix]
                drawn, _ = row_drawing(chosen, args.resample_by)
                f = figures(chosen, [judgments[i] for i in ix], drawn)
                out.setdefault(set_name, {}).setdefault(spec, {})[name] = f
                gain = (f"  minus the first judge's {difference(chosen, [calls[0][i] for i in ix], [judgments[i] for i in ix], drawn)}"
                        if len(calls) > 1 else "")
                print(line(name, f) + gain)
            if args.reading:
                by_reading(rows, judgments, read)
        if args.changed and len(calls) > 1:
            changed(rows, calls[0], calls[1])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
