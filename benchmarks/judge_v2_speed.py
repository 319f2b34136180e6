"""Seconds per pair of the `model` judge in English and in Chinese, pairs of the same length, side by side
for each judge in one run:

    python benchmarks/judge_v2_speed.py [--judge SPEC ...] [--pairs 60] [--tokens 200] [--rounds 3] [--threads 2] [--short]

Pairs: dev rows of each language (training/data.py), each passage cut to its first --tokens tokens of
multilingual-e5-small's tokenizer (the same token count in both languages, whatever judge reads them),
one passage a pair. `--short`: the short pairs of the plain sets the reading was built on instead (a
sentence cited to a few sentences, as written; benchmarks/short_chinese_pairs.py's `DESIGNED_ON`), where
a Chinese pair the reading leaves silent also costs two e5 embeddings (judges/short_pairs.py).
Every round builds each judge afresh (nothing remembered), lets it judge one pair
of each language outside the timed set (so that loading its models, once per process, is not counted
as the cost of a pair; `--cold` counts it), then times the English pairs and the Chinese pairs, each
language in one call as a run judges them; the order of the judges and of the languages flips each
round. A language with fewer than two pairs of --tokens tokens in the dev rows (Chinese at 400: its dev
passages are short) is left out, and the output says so.
Prints, per judge, the median seconds per pair in each language and their ratio (Chinese / English),
the same ratio for the fastest round of each language, and each judge's English seconds against the
first judge's.

Default judge: `model` (judge-v1 for English, judge-v2 for Chinese); `--judge model:zh=embedding` is
the Chinese route before judge-v2 (two passes of a 12-layer encoder per window), and a bilingual judge
directory is named with `--judge model:path=DIR,zh=model`.
"""

from __future__ import annotations

import argparse
import statistics
import time

NAMES = {"en": "English", "zh": "Chinese"}


def pairs(lang: str, n: int, tokens: int):
    from citeaudit.judges.base import Request
    from citeaudit.records import SourcePassage
    from citeaudit.training.bases import base_model_dir
    from citeaudit.training.data import dev_rows
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(base_model_dir("e5-small-zh-en") / "tokenizer.json"))
    out = []  # the last one is the warm-up pair, never timed
    for row in dev_rows(lang=lang):
        text = row.passages[0].text
        encoding = tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) < tokens:
            continue
        cut = text[: encoding.offsets[tokens - 1][1]]
        out.append(Request.of(row.claim, [SourcePassage(id="p", doc_id="p", version=None, text=cut, start=0,
                                                        end=len(cut))]))
        if len(out) == n + 1:
            break
    return out


def short_pairs(lang: str, n: int):
    from citeaudit.judges.base import Request
    from citeaudit.judges.model import is_chinese
    from judge_v2 import rows_of
    from short_chinese_pairs import DESIGNED_ON

    out = []  # the last one is the warm-up pair, never timed
    for name in DESIGNED_ON:
        for row in rows_of(name, None, 0):
            request = Request.of(row.claim, row.passages)
            if is_chinese(request) == (lang == "zh") and len(out) <= n:
                out.append(request)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", action="append")
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cold", action="store_true", help="count loading the model in the first pair's time")
    ap.add_argument("--short", action="store_true", help="the plain sets' short pairs, not cut dev rows")
    args = ap.parse_args()
    from citeaudit.judges import plain
    from citeaudit.judges.registry import build_judge, parse_judge

    specs = args.judge or ["model"]
    data = {lang: short_pairs(lang, args.pairs) if args.short else pairs(lang, args.pairs, args.tokens)
            for lang in ("en", "zh")}
    for lang in [lang for lang, found in data.items() if len(found) < 2]:  # a pair to warm on and one to time
        print(f"too few {NAMES[lang]} pairs" + ("" if args.short else f" of {args.tokens} tokens in the dev rows")
              + f": timed without {NAMES[lang]}")
        del data[lang]
    if not data:
        raise SystemExit("nothing to time: no language has two pairs")
    languages = list(data)
    warm = {lang: pairs[-1] for lang, pairs in data.items()}
    data = {lang: pairs[:-1] for lang, pairs in data.items()}
    print(" and ".join(f"{len(data[lang])} {NAMES[lang]}" for lang in languages) + " pairs"
          + (" of the plain sets, as written" if args.short else f" of {args.tokens} tokens each")
          + ("; loading counted" if args.cold else "; each judge warmed on one pair first"))
    seconds: dict[str, dict[str, list[float]]] = {s: {lang: [] for lang in languages} for s in specs}
    for round_ in range(args.rounds):
        for spec in specs if round_ % 2 == 0 else list(reversed(specs)):
            judge = build_judge(parse_judge(f"{spec}{',' if ':' in spec else ':'}threads={args.threads}"))
            if not args.cold:
                for lang in languages:
                    judge.judge_batch([warm[lang]])
            for lang in languages if round_ % 2 == 0 else list(reversed(languages)):
                plain.forget()  # every round reads its passages as new text, as a run reads new answers
                started = time.perf_counter()
                judge.judge_batch(data[lang])
                seconds[spec][lang].append((time.perf_counter() - started) / len(data[lang]))
    # the median says what a round costs on this machine as it is; the minimum, what it costs when nothing
    # else takes the cores (a shared machine only ever adds time)
    base = languages[0]
    first = statistics.median(seconds[specs[0]][base])
    for spec in specs:
        median = {lang: statistics.median(seconds[spec][lang]) for lang in languages}
        line = f"{spec:22} " + "  ".join(f"{NAMES[lang]} {median[lang] * 1000:7.1f} ms/pair" for lang in languages)
        if len(languages) == 2:
            en_min, zh_min = (min(seconds[spec][lang]) for lang in ("en", "zh"))
            line += (f"  Chinese/English {median['zh'] / median['en']:5.2f}x "
                     f"(fastest rounds {zh_min / en_min:5.2f}x)")
        print(line + f"  {NAMES[base]}/first judge's {NAMES[base]} {median[base] / first:5.2f}x")

if __name__ == "__main__":
    main()
