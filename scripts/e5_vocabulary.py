"""Choose the e5-small pieces that English and Chinese text use, and measure what the choice costs.

    pip install --target /tmp/vocab-tools --no-deps wordfreq==3.1.1 jieba==0.42.1
    PYTHONPATH=src:/tmp/vocab-tools python scripts/e5_vocabulary.py [--data-dir DIR] [--min-count N]

Counts piece use (the full e5-small tokenizer) over the shared data's running text (the attribution
sets and the NLI sets, English and Chinese) and two word lists that PyPI packages ship (wordfreq's
large English and Chinese lists, jieba's dictionary; used only here, read from their data files).
Every tenth text of each running-text source (by a hash of the text) is held back from the count; the
unknown-token rate of the full and the kept vocabulary is measured on those, per language. Writes
src/citeaudit/training/e5_zh_en_pieces.json.gz (the kept ids and the counting corpus's manifest),
which `--base e5-small-zh-en` builds from, and prints the figures as JSON.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

from citeaudit.training.bases import (SPECIALS, ZH_EN_PIECES, choose_pieces, e5_file, e5_tokenizer, piece_counts,
                                      read_e5, write_kept_pieces)
from citeaudit.training.data import NLI_ALL_SETS, data_dir_or_default, load_all, read_nli

HELD_BACK = 10  # one text in ten


def running_text(data_dir: Path) -> dict[str, tuple[str, list[str]]]:
    """source -> (language, texts): claims, passages, premises and hypotheses, each text once."""
    sources: dict[str, tuple[str, list[str]]] = {}
    for row in load_all(data_dir):
        texts = sources.setdefault(row["source"], (row["lang"], []))[1]
        texts += [row["claim"], *(p["text"] for p in row["passages"])]
    for name in NLI_ALL_SETS:
        sources[f"nli/{name}"] = ("en", [t for r in read_nli(name, data_dir) for t in (r["premise"], r["hypothesis"])])
    for folder, files in (("cmnli_zh", ("dev.txt",)), ("cnsd_snli_zh", ("dev.txt", "test.txt"))):
        texts = []
        for name in files:  # sentence 1, sentence 2, label: tab-separated
            for line in (data_dir / "nli" / folder / name).read_text(encoding="utf-8").splitlines():
                texts += [t for t in line.split("\t")[:2] if t.strip()]
        sources[f"nli/{folder}"] = ("zh", texts)
    return {name: (lang, list(dict.fromkeys(texts))) for name, (lang, texts) in sources.items()}


def _package_data(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None:
        sys.exit(f"{module} is not importable: pip install --target DIR --no-deps {module}, and put DIR on PYTHONPATH")
    return Path(list(spec.submodule_search_locations)[0])


def word_lists() -> dict[str, tuple[str, list[str]]]:
    """wordfreq's large lists (msgpack 'cB' format: a header, then words by frequency band) and jieba's
    dictionary (word, count, part of speech)."""
    import msgpack

    lists = {}
    for lang in ("en", "zh"):
        path = _package_data("wordfreq") / "data" / f"large_{lang}.msgpack.gz"
        bands = msgpack.unpackb(gzip.decompress(path.read_bytes()), raw=False)[1:]
        lists[f"wordfreq large_{lang}"] = (lang, [word for band in bands for word in band])
    dictionary = _package_data("jieba") / "dict.txt"
    lists["jieba dict.txt"] = ("zh", [line.split(" ")[0] for line in dictionary.read_text(encoding="utf-8").splitlines()])
    return lists


def held_back(text: str) -> bool:
    return zlib.crc32(text.encode("utf-8")) % HELD_BACK == 0


def unknown_rate(tokenizer, texts: list[str]) -> dict:
    unknown = SPECIALS.index("<unk>")
    tokens = unknowns = 0
    for encoding in tokenizer.encode_batch(texts, add_special_tokens=False):
        tokens += len(encoding.ids)
        unknowns += encoding.ids.count(unknown)
    return {"texts": len(texts), "characters": sum(map(len, texts)), "tokens": tokens, "unknown": unknowns,
            "unknown_rate": unknowns / max(1, tokens)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir")
    parser.add_argument("--min-count", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ZH_EN_PIECES)
    args = parser.parse_args()
    data_dir = data_dir_or_default(args.data_dir)
    e5 = read_e5(e5_file())
    full = e5_tokenizer(e5.pieces, e5.scores, e5.normalisation)
    corpus: dict[str, dict] = {}
    counted: list[str] = []
    held: dict[str, list[str]] = {"en": [], "zh": []}

    def take(name: str, lang: str, texts: list[str], hold: bool) -> Iterator[str]:
        kept = [t for t in texts if not (hold and held_back(t))]
        held[lang] += [t for t in texts if hold and held_back(t)]
        corpus[name] = {"language": lang, "texts": len(kept), "characters": sum(map(len, kept)),
                        **({"held_back_texts": len(texts) - len(kept)} if hold else {})}
        return kept

    for name, (lang, texts) in running_text(data_dir).items():
        counted += take(name, lang, texts, hold=True)
    for name, (lang, words) in word_lists().items():
        counted += take(name, lang, words, hold=False)
    counts = piece_counts(full, counted, len(e5.pieces))
    keep = choose_pieces(e5.pieces, counts, args.min_count)
    manifest = {"sources": corpus, "min_count": args.min_count,
                "held_back": f"one text in {HELD_BACK} of each running-text source (crc32 of the text), not counted",
                "single_characters_kept": "every piece of one character, alone or after the word-start marker",
                "word_list_packages": "wordfreq 3.1.1 (data CC BY-SA 4.0), jieba 0.42.1 (MIT); used to count only"}
    write_kept_pieces(args.out, e5, keep, manifest)
    pruned = e5_tokenizer([e5.pieces[i] for i in keep], e5.scores[keep], e5.normalisation)
    figures = {"pieces": {"full": len(e5.pieces), "kept": len(keep), "used_in_count": int((counts > 0).sum())},
               "held_back": {lang: {"full": unknown_rate(full, texts), "kept": unknown_rate(pruned, texts)}
                             for lang, texts in held.items()},
               "counted_characters": {lang: sum(v["characters"] for v in corpus.values() if v["language"] == lang)
                                      for lang in ("en", "zh")}}
    print(json.dumps(figures, indent=1))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
