"""How closely do citeaudit's claim splitters reproduce Factcheck-GPT's human claim decompositions?

Factcheck-GPT (Wang et al., 2024; Apache-2.0) has annotators split each sentence of 94 ChatGPT answers
into atomic claims, written on the sentence's decontextualised form (pronouns replaced by what they
name). Each splitter gets that decontextualised sentence; sentences the annotators gave no claim
(not check-worthy) are left out. Per sentence we compare the splitter's claims with the annotators':

* a claim matches when its token F1 (lower-cased words, as SQuAD's F1) with a claim of the other side
  reaches the threshold (default 0.7);
* claim recall: annotator claims matched by some generated claim (over all claims, and the mean over
  sentences); claim precision: generated claims matched by some annotator claim;
* count agreement: sentences where the splitter gives exactly as many claims as the annotators;
* split rate: sentences cut into more than one claim.

Splitters measured, side by side in one run:

* `none`: every sentence is one claim (the floor);
* `rule@1`: the rule splitter (parse/decompose.py);
* `oracle`: the `openai:` splitter whose model answers with the annotators' own claims, served by a
  local stand-in server (citeaudit.testing.OpenAIStub) and recorded in a temporary store. This is not a model:
  it measures what the split checks (numbers, units and condition words kept, nothing added) and the
  fallback do to human splits. Its recall is the best any model can reach through these checks; its
  rejections are the human splits the checks refuse (a name added by decontextualisation, a number
  restated), each then split by the rule splitter instead. The run replays the store with the server
  gone and checks that every split comes back the same.

No network is used. A real model's figure needs its recorded responses: run the splitter against the
endpoint once with a store, then this script with `--store` (not done here: no model was available
offline).

    .venv/bin/python benchmarks/factcheck_decompose.py [--data FILE] [--threshold 0.7] [--show N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from citeaudit.judges import JudgmentStore
from citeaudit.parse import NoDecomposer, RuleDecomposer
from citeaudit.parse.lm_decompose import OpenAIDecomposer
from citeaudit.testing import OpenAIStub

DEFAULT_DATA = (Path(__file__).resolve().parents[1].parent / "shared" / "data" / "factcheck_gpt"
                / "factcheck-GPT-benchmark.jsonl")
_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> Counter:
    return Counter(t.lower() for t in _TOKEN.findall(text))


def token_f1(a: str, b: str) -> float:
    ta, tb = tokens(a), tokens(b)
    common = sum((ta & tb).values())
    if not common:
        return 0.0
    precision, recall = common / sum(tb.values()), common / sum(ta.values())
    return 2 * precision * recall / (precision + recall)


def sentences(path: Path) -> list[tuple[str, list[str]]]:
    """(decontextualised sentence, annotator claims) for every sentence with at least one claim."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for sentence in row["sentences"].values():
                claims = [c.strip() for c in sentence.get("claims") or [] if c and c.strip()]
                text = (sentence.get("decontext") or sentence.get("text") or "").strip()
                if claims and text:
                    out.append((text, claims))
    return out


def as_texts(statement: str, split) -> list[str]:
    """A decomposer's answer as claim texts (ranges are cut from the statement and trimmed)."""
    items = list(split or [])
    if not items:
        return [statement]
    if all(isinstance(x, str) for x in items):
        return items
    return [statement[a:b].strip().rstrip(".,;:") for a, b in items]


class Tally:
    def __init__(self, threshold: float):
        self.threshold = threshold
        self.gold = self.gold_matched = self.made = self.made_matched = 0
        self.sentences = self.same_count = self.split = 0
        self.recall_sum = 0.0

    def add(self, gold: list[str], made: list[str]) -> None:
        matched = [any(token_f1(g, m) >= self.threshold for m in made) for g in gold]
        self.gold += len(gold)
        self.gold_matched += sum(matched)
        self.made += len(made)
        self.made_matched += sum(any(token_f1(g, m) >= self.threshold for g in gold) for m in made)
        self.sentences += 1
        self.same_count += len(made) == len(gold)
        self.split += len(made) > 1
        self.recall_sum += sum(matched) / len(gold)

    def row(self, name: str) -> str:
        def pct(n: int, d: int) -> str:
            return f"{n}/{d} ({n / d:.1%})" if d else "n/a"

        return (f"| {name} | {pct(self.gold_matched, self.gold)} | {self.recall_sum / self.sentences:.1%} | "
                f"{pct(self.made_matched, self.made)} | {pct(self.same_count, self.sentences)} | "
                f"{pct(self.split, self.sentences)} |")


def run_oracle(data: list[tuple[str, list[str]]], store_path: Path) -> tuple[list[list[str]], OpenAIDecomposer, str]:
    """The openai splitter with the annotators' claims as the model's answers; returns each split."""
    with OpenAIStub(answer=lambda claim, passages: {}) as stub:
        splitter = OpenAIDecomposer("annotators", base_url=stub.url, store=JudgmentStore(store_path), max_retries=0)
        made = []
        for statement, gold in data:
            stub.push(("content", json.dumps({"claims": gold})))
            made.append(as_texts(statement, splitter.decompose(statement, "en")))
        url = stub.url
    return made, splitter, url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--threshold", type=float, default=0.7, help="token F1 for two claims to match")
    parser.add_argument("--show", type=int, default=0, help="print N rejected oracle splits with the reason")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"{args.data}: no such file (Factcheck-GPT's factcheck-GPT-benchmark.jsonl)", file=sys.stderr)
        return 2
    data = sentences(args.data)
    print(f"Factcheck-GPT: {len(data)} decontextualised sentences with {sum(len(g) for _, g in data)} "
          f"annotator claims ({sum(len(g) > 1 for _, g in data)} split into several); "
          f"a claim matches at token F1 >= {args.threshold:g}\n")

    tallies = {}
    for name, decomposer in (("none", NoDecomposer()), ("rule@1", RuleDecomposer())):
        tally = tallies[name] = Tally(args.threshold)
        for statement, gold in data:
            tally.add(gold, as_texts(statement, decomposer.decompose(statement, "en")))

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "splits.sqlite"
        made, splitter, url = run_oracle(data, store)
        tally = tallies["oracle (openai: splitter, annotators' claims as answers)"] = Tally(args.threshold)
        for (_, gold), claims in zip(data, made):
            tally.add(gold, claims)
        # Replay with the server gone: the same splits, no request.
        replay = OpenAIDecomposer("annotators", base_url=url, store=JudgmentStore(store), replay=True)
        replayed = [as_texts(s, replay.decompose(s, "en")) for s, _ in data]
        same = sum(a == b for a, b in zip(made, replayed))

    print("| splitter | claim recall (all claims) | claim recall (mean per sentence) | claim precision "
          "| count agreement | split rate |")
    print("|---|---|---|---|---|---|")
    for name, tally in tallies.items():
        print(tally.row(name))

    rejected = splitter.fallbacks
    by_kind = Counter()
    for f in rejected:
        for part in f.reason.removeprefix("split rejected: ").split(";"):
            words = part.split()
            by_kind[" ".join(words[:2])] += 1
    print(f"\noracle: {len(data) - len(rejected)}/{len(data)} human splits accepted by the split checks, "
          f"{len(rejected)} rejected (then split by rule@1); reasons (a split may have several): "
          + ", ".join(f"{k} {n}" for k, n in by_kind.most_common()))
    print(f"replay with the server gone: {same}/{len(data)} splits identical, {replay.asked} requests")
    for f in rejected[: args.show]:
        print(f"\n  {f.statement}\n    {f.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
