"""The two small sets `adapt-judge` ships with (models/adaptation/), built once from the shared data:

* `replay.jsonl.gz`: a sample of judge-v1's own training mix (train split only), replayed beside a team's
  labels while fine-tuning so the model does not forget what it knew (attribution rows of every source
  balanced full / not-full, and generic NLI pairs; RTE, whose licence is not stated, is left out);
* `anchor-dev.jsonl.gz`: the dev split of the shared data (training/data.py `split_rows`), both
  languages (the English rows judge-v1's calibration was fitted on, and CiteCheck's Chinese rows), each
  row with every one of its passages, whole: the forgetting check (training/forgetting.py) judges them
  as `score` judges a claim's citations, not at one window.

A replayed line is {"premise", "hypothesis", "label", "source", "kind"}; a dev line is a labelled-pairs
row (files/labelled.py), {"id", "claim", "passages": [{"id", "text"}], "label", "source", "lang"}.
Rebuild with `python -m citeaudit.training.anchor [DATA_DIR]` (the same bytes for the same data and seed).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterable
from pathlib import Path

from citeaudit.files.labelled import Row, parse_rows

ADAPTATION_DIR = Path(__file__).resolve().parent.parent / "models" / "adaptation"
REPLAY_FILE = "replay.jsonl.gz"
ANCHOR_FILE = "anchor-dev.jsonl.gz"
REPLAY_ATTRIBUTION = 450  # 150 a source, half full
REPLAY_NLI = 450
UNLICENSED_NLI = ("rte",)


def read_examples(name: str, directory: Path | None = None) -> list[dict]:
    with gzip.open((directory or ADAPTATION_DIR) / name, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_dev_rows(directory: Path | None = None) -> list[Row]:
    """The shipped dev rows as labelled rows, each with all its passages."""
    with gzip.open((directory or ADAPTATION_DIR) / ANCHOR_FILE, "rt", encoding="utf-8") as fh:
        return parse_rows(fh.read().splitlines(), ANCHOR_FILE)


def _write(path: Path, examples: Iterable[dict]) -> int:
    n = 0
    # mtime 0: the same examples give the same bytes
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        for e in examples:
            fh.write((json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
            n += 1
    return n


def build(data_dir: str | Path | None = None, out_dir: str | Path | None = None, seed: int = 0) -> dict[str, int]:
    from tokenizers import Tokenizer

    from citeaudit.judges.model import shipped_model_dir
    from citeaudit.training.data import split_rows, load_all
    from citeaudit.training.train import build_mix

    out = Path(out_dir or ADAPTATION_DIR)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer.from_file(str(shipped_model_dir() / "tokenizer.json"))

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    mix, _ = build_mix(data_dir, seed=seed, count=count)
    rng = random.Random(seed)
    attribution = [e for e in mix if e["kind"] == "attribution"]
    nli = [e for e in mix if e["kind"] == "nli" and e["source"] not in UNLICENSED_NLI]
    replay: list[dict] = []
    sources = sorted({e["source"] for e in attribution})
    each = REPLAY_ATTRIBUTION // len(sources)
    for source in sources:
        for full in (True, False):
            side = [e for e in attribution if e["source"] == source and (e["label"] == "full") == full]
            # the mix oversamples: keep each example once
            side = list({(e["premise"], e["hypothesis"], e["label"]): e for e in side}.values())
            replay += rng.sample(side, min(len(side), each // 2))
    replay += rng.sample(nli, min(len(nli), REPLAY_NLI))
    rng.shuffle(replay)
    dev = split_rows(load_all(data_dir))["dev"]
    return {REPLAY_FILE: _write(out / REPLAY_FILE, replay), ANCHOR_FILE: _write(out / ANCHOR_FILE, dev)}


if __name__ == "__main__":
    import sys

    print(build(sys.argv[1] if len(sys.argv) > 1 else None))
