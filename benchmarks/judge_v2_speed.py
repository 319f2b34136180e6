"""Seconds per pair of the `model` judge in English and in Chinese, pairs of the same length, side by side
for each judge in one run:

    python benchmarks/judge_v2_speed.py [--judge SPEC ...] [--pairs 60] [--tokens 200] [--rounds 3] [--threads 2]

Pairs: dev rows of each language (training/data.py), each passage cut to its first --tokens tokens of
multilingual-e5-small's tokenizer (the same token count in both languages, whatever judge reads them),
one passage a pair. Every round builds each judge afresh (nothing remembered) and judges the English
pairs and the Chinese pairs, the order of the judges flipping each round (the CPU may be shared).
Prints, per judge, the median seconds per pair in each language and their ratio (Chinese / English),
and each judge's English seconds against the first judge's.

Default judge: `model` (judge-v1; Chinese by the embedding judge, two passes of a 12-layer encoder per
window); name a bilingual judge directory beside it with `--judge model:path=DIR,zh=model`.
"""

from __future__ import annotations

import argparse
import statistics
import time


def pairs(lang: str, n: int, tokens: int):
    from citeaudit.judges.base import Request
    from citeaudit.records import SourcePassage
    from citeaudit.training.bases import base_model_dir
    from citeaudit.training.data import dev_rows
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(base_model_dir("e5-small-zh-en") / "tokenizer.json"))
    out = []
    for row in dev_rows(lang=lang):
        text = row.passages[0].text
        encoding = tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) < tokens:
            continue
        cut = text[: encoding.offsets[tokens - 1][1]]
        out.append(Request.of(row.claim, [SourcePassage(id="p", doc_id="p", version=None, text=cut, start=0,
                                                        end=len(cut))]))
        if len(out) == n:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", action="append")
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    from citeaudit.judges.registry import build_judge, parse_judge

    specs = args.judge or ["model"]
    data = {lang: pairs(lang, args.pairs, args.tokens) for lang in ("en", "zh")}
    print(f"{len(data['en'])} English and {len(data['zh'])} Chinese pairs of {args.tokens} tokens each")
    seconds: dict[str, dict[str, list[float]]] = {s: {"en": [], "zh": []} for s in specs}
    for round_ in range(args.rounds):
        for spec in specs if round_ % 2 == 0 else list(reversed(specs)):
            for lang in ("en", "zh"):
                judge = build_judge(parse_judge(f"{spec}{',' if ':' in spec else ':'}threads={args.threads}"))
                started = time.perf_counter()
                judge.judge_batch(data[lang])
                seconds[spec][lang].append((time.perf_counter() - started) / len(data[lang]))
    first = statistics.median(seconds[specs[0]]["en"])
    for spec in specs:
        en, zh = (statistics.median(seconds[spec][lang]) for lang in ("en", "zh"))
        print(f"{spec:22} English {en * 1000:7.1f} ms/pair  Chinese {zh * 1000:7.1f} ms/pair  "
              f"Chinese/English {zh / en:5.2f}x  English/first judge's English {en / first:5.2f}x")


if __name__ == "__main__":
    main()
