"""Readers for the human-labelled attribution sets in the shared data folder, and a leak-free split.

Every reader yields DATA rows, the format `citeaudit validate-judge` reads::

    {"id", "claim", "passages": [{"id", "text"}], "label", "source", "lang"}

Label mapping onto citeaudit's four labels (what each source's label becomes):

| citeaudit   | WiCE (oracle chunks)  | ExpertQA     | Factcheck-GPT (subtask 3) | CiteCheck |
|-------------|-----------------------|--------------|---------------------------|-----------|
| full        | supported             | Complete     | completely-support        | 1         |
| partial     | partially_supported   | Partial      | partially-support         | —         |
| none        | not_supported         | Incomplete   | irrelevant                | 0         |
| contradicts | —                     | —            | refute                    | —         |
| (skipped)   | —                     | Missing, N/A, unlabelled, no passage text | exact duplicates kept once; pairs with conflicting labels dropped | — |

CiteCheck's `0` covers both "information changed" and "information deleted" negatives; we map it to
`none`, not `partial`, since the source does not tell the two apart per row.

The split is by claim: sha256 of the normalised claim text (NFKC, case-folded, citation markers and
punctuation and spacing dropped) picks train (80 %), dev (10 %) or test (10 %), so the same claim never sits in
two splits, whichever source or system it came from.

The data folder is the one passed in (`--data-dir`), else $CITEAUDIT_DATA_DIR, else the first
`shared/data` found in the current folder or a folder above it (a checkout beside the shared data);
it is looked up when the data is read, not when the module is imported.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from citeaudit.errors import TrainingError
from citeaudit.files.labelled import Row, parse_rows
# the form a claim is hashed in lives in the ground: judge directories name the claims they learnt from by it
from citeaudit.text import normalise_claim

DATA_DIR_VARIABLE = "CITEAUDIT_DATA_DIR"

LABEL_MAPPING: dict[str, dict[str, str]] = {
    "wice": {"supported": "full", "partially_supported": "partial", "not_supported": "none"},
    "expertqa": {"Complete": "full", "Partial": "partial", "Incomplete": "none"},
    "factcheck_gpt": {
        "completely-support": "full", "partially-support": "partial", "irrelevant": "none",
        "refute": "contradicts",
    },
    "citecheck": {"1": "full", "0": "none"},
}

SPLITS = ("train", "dev", "test")
_MARKER_WITH_SPACE = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def split_of(claim: str, dev: int = 10, test: int = 10) -> str:
    """'train', 'dev' or 'test', fixed by a hash of the normalised claim (dev% / test% of claims)."""
    bucket = int(hashlib.sha256(normalise_claim(claim).encode("utf-8")).hexdigest()[:8], 16) % 100
    if bucket < 100 - dev - test:
        return "train"
    return "dev" if bucket < 100 - test else "test"


def find_data_dir() -> Path:
    """$CITEAUDIT_DATA_DIR, else the first shared/data in the current folder or one above it."""
    named = os.environ.get(DATA_DIR_VARIABLE)
    if named:
        if not Path(named).is_dir():
            raise TrainingError(f"{DATA_DIR_VARIABLE}={named}: no such folder")
        return Path(named)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    raise TrainingError(f"no data folder: found no shared/data in {here} or a folder above it; "
                        f"pass --data-dir or set {DATA_DIR_VARIABLE}")


def data_dir_or_default(data_dir: Path | str | None) -> Path:
    """The data folder given, else the one `find_data_dir` finds."""
    return Path(data_dir) if data_dir else find_data_dir()


def _row(id_: str, claim: str, passages: list[tuple[str, str]], label: str, source: str, lang: str) -> dict:
    return {
        "id": id_,
        "claim": claim,
        "passages": [{"id": pid, "text": text} for pid, text in passages],
        "label": label,
        "source": source,
        "lang": lang,
    }


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield n, json.loads(line)


def read_wice(path: Path) -> Iterator[dict]:
    """WiCE oracle chunks: a Wikipedia sentence and the chunk of the cited article (one passage)."""
    mapping = LABEL_MAPPING["wice"]
    seen: Counter[str] = Counter()  # a claim can come with several chunks of its article
    for n, d in _jsonl(path):
        label = mapping.get(d.get("label"))
        text = " ".join(s.strip() for s in d.get("evidence") or [] if s.strip())
        if label is None or not text or not d.get("claim"):
            continue
        rid = (d.get("meta") or {}).get("id") or f"line{n}"
        seen[rid] += 1
        yield _row(f"wice:{rid}:{seen[rid]}", d["claim"].strip(), [("chunk", text)], label, "wice", "en")


_EXPERTQA_HEADER = re.compile(r"^\s*\[(\d+)\]\s*(\S*)\s*\n+", re.S)


def _expertqa_passage(evidence: str) -> tuple[str, str] | None:
    """'[3] https://url\\n\\npassage' -> ('3', passage); None when there is no passage text."""
    m = _EXPERTQA_HEADER.match(evidence)
    if m:
        number, text = m.group(1), evidence[m.end():]
    else:
        number, text = "", evidence
    text = text.strip()
    if not text or re.fullmatch(r"(\[\d+\]\s*)?https?://\S+", text):
        return None
    return number, text


def read_expertqa(paths: Iterable[Path]) -> Iterator[dict]:
    """ExpertQA claims with expert support labels; the rand_* and domain_* files overlap, so each
    (question, system) answer is read once. Missing / N/A / unlabelled claims and claims without any
    passage text are skipped."""
    mapping = LABEL_MAPPING["expertqa"]
    seen: set[tuple[str, str]] = set()
    for path in paths:
        for _, d in _jsonl(path):
            question = d.get("question") or ""
            for system, answer in sorted((d.get("answers") or {}).items()):
                key = (question.strip(), system)
                if key in seen:
                    continue
                seen.add(key)
                qhash = hashlib.sha256(f"{question}\x00{system}".encode()).hexdigest()[:10]
                for i, claim in enumerate(answer.get("claims") or []):
                    label = mapping.get(claim.get("support"))
                    text = _MARKER_WITH_SPACE.sub("", claim.get("claim_string") or "")
                    text = " ".join(text.split())
                    if label is None or not text:
                        continue
                    passages = []
                    for j, ev in enumerate(claim.get("evidence") or []):
                        got = _expertqa_passage(ev) if isinstance(ev, str) else None
                        if got:
                            passages.append((f"e{j + 1}" + (f"[{got[0]}]" if got[0] else ""), got[1]))
                    if passages:
                        yield _row(f"expertqa:{qhash}:{i}", text, passages, label, "expertqa", "en")


def read_factcheck(path: Path) -> Iterator[dict]:
    """Factcheck-GPT subtask 3 (claim, evidence, stance). Exact duplicate rows are kept once; a
    (claim, evidence) pair seen with different stances is dropped altogether."""
    mapping = LABEL_MAPPING["factcheck_gpt"]
    stances: dict[tuple[str, str], set[str]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for n, d in _jsonl(path):
        key = (d.get("claim") or "", d.get("evidence") or "")
        stances.setdefault(key, set()).add(d.get("stance"))
        first_line.setdefault(key, n)
    for key, found in stances.items():
        claim, evidence = key
        if len(found) != 1 or not claim.strip() or not evidence.strip():
            continue
        label = mapping.get(next(iter(found)))
        if label is None:
            continue
        yield _row(f"factcheck_gpt:{first_line[key]}", claim.strip(), [("evidence", evidence.strip())],
                   label, "factcheck_gpt", "en")


_CITE_SPLIT = re.compile(r"\[(\d+)\]\s*")


def _citecheck_passages(quote: str) -> list[tuple[str, str]]:
    parts = _CITE_SPLIT.split(quote)
    passages = []
    if parts[0].strip():
        passages.append(("q0", parts[0].strip()))
    for number, text in zip(parts[1::2], parts[2::2]):
        if text.strip():
            passages.append((f"[{number}]", text.strip()))
    # a marker number may repeat inside a quote: keep ids unique
    counts: Counter[str] = Counter()
    unique = []
    for pid, text in passages:
        counts[pid] += 1
        unique.append((pid if counts[pid] == 1 else f"{pid}#{counts[pid]}", text))
    return unique


def read_citecheck(path: Path) -> Iterator[dict]:
    """CiteCheck (Chinese): a cited statement and the quotes of the documents it cites."""
    mapping = LABEL_MAPPING["citecheck"]
    for n, d in _jsonl(path):
        label = mapping.get(str(d.get("label")))
        statement = _MARKER_WITH_SPACE.sub("", d.get("statement") or "").strip()
        passages = _citecheck_passages(d.get("quote") or "")
        if label is None or not statement or not passages:
            continue
        yield _row(f"citecheck:{d.get('idx', n)}:{n}", statement, passages, label, "citecheck", "zh")


def load_all(data_dir: Path | str | None = None) -> list[dict]:
    """Every row of every attribution set, in a fixed order."""
    base = data_dir_or_default(data_dir)
    rows: list[dict] = []
    rows += read_wice(base / "wice" / "oracle_chunks__claim__dev.jsonl")
    rows += read_expertqa(base / "expertqa" / f"{name}.jsonl"
                          for name in ("rand_val", "rand_test", "domain_val", "domain_test"))
    rows += read_factcheck(base / "factcheck_gpt" / "subtask3_claim_evidence_stance.jsonl")
    rows += read_citecheck(base / "citecheck" / "dev.jsonl")
    return rows


def split_rows(rows: Iterable[dict]) -> dict[str, list[dict]]:
    """Rows grouped by the split of their claim."""
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for row in rows:
        out[split_of(row["claim"])].append(row)
    return out


def write_jsonl(path: Path, rows: Iterable[dict]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def export_validation_sets(out_dir: Path | str, data_dir: Path | str | None = None,
                           include_train: bool = False) -> dict[str, int]:
    """Write dev.jsonl and test.jsonl (and train.jsonl when asked) under out_dir; returns row counts."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    splits = split_rows(load_all(data_dir))
    wanted = SPLITS if include_train else ("dev", "test")
    return {name: write_jsonl(out / f"{name}.jsonl", splits[name]) for name in wanted}


def dev_rows(data_dir: Path | str | None = None, lang: str | None = None, limit: int | None = None,
             seed: int = 0) -> list[Row]:
    """The dev split as labelled Rows (optionally one language, a fixed random sample of `limit`)."""
    import random

    rows = [r for r in split_rows(load_all(data_dir))["dev"] if lang is None or r["lang"] == lang]
    if limit and len(rows) > limit:
        rows = random.Random(seed).sample(rows, limit)
    return parse_rows([json.dumps(r, ensure_ascii=False) for r in rows])


# --- Generic NLI pairs (shared/data/nli), for training a model judge -------------------------------

NLI_LABELS: dict[str, str] = {
    "entailment": "full", "neutral": "none", "not_entailment": "none", "contradiction": "contradicts",
}

# set name -> (relative path, format, licence as given in the data README)
NLI_SETS: dict[str, tuple[str, str, str]] = {
    "mnli_dev": ("nli/mnli_dev/dev.csv", "csv", "OANC + CC BY-SA 3.0"),
    "snli_dev": ("nli/snli_dev/dev.csv", "csv", "CC BY-SA 4.0"),
    "cad_snli": ("nli/cad_snli/train.tsv", "tsv_s1s2gold", "Apache-2.0 (SNLI CC BY-SA 4.0)"),
    "fever_nli": ("nli/fever_nli_binary/dev.txt", "tsv_label_first", "BSD-3 (FEVER CC BY-SA 3.0)"),
    "scitail": ("nli/scitail_test/dev.csv", "csv", "Apache-2.0"),
    "rte": ("nli/rte_glue/train.tsv", "tsv_rte", "no explicit licence (research use)"),
}
# The NLI rows judge-v1's mix left unused, with a stated permissive licence: `--nli-sets large` adds them
NLI_MORE_SETS: dict[str, tuple[str, str, str]] = {
    "fever_nli_test": ("nli/fever_nli_binary/test.txt", "tsv_label_first", "BSD-3 (FEVER CC BY-SA 3.0)"),
    "cad_snli_dev": ("nli/cad_snli/dev.tsv", "tsv_s1s2gold", "Apache-2.0 (SNLI CC BY-SA 4.0)"),
    "cad_snli_test": ("nli/cad_snli/test.tsv", "tsv_s1s2gold", "Apache-2.0 (SNLI CC BY-SA 4.0)"),
}
# Unused rows without a stated licence: only behind an explicit option, and the model card says so.
NLI_UNSTATED_SETS: dict[str, tuple[str, str, str]] = {
    "rte_dev": ("nli/rte_glue/dev.tsv", "tsv_rte", "no explicit licence (research use)"),
}
# Chinese NLI (machine-translated CMNLI; Chinese-SNLI, translated and hand-corrected): a multilingual
# base reads them; their licence is not stated, which a model card trained on them says.
NLI_ZH_SETS: dict[str, tuple[str, str, str]] = {
    "cmnli_zh": ("nli/cmnli_zh/dev.txt", "tsv_s1s2label", "not stated"),
    "cnsd_snli_zh": ("nli/cnsd_snli_zh/dev.txt", "tsv_s1s2label", "not stated"),
}
NLI_ALL_SETS = {**NLI_SETS, **NLI_MORE_SETS, **NLI_UNSTATED_SETS}  # the English sets a mix may name


# The held-out files of the same releases, which judge-v1's training and the guard's development never
# read (training reads FEVER-NLI dev, RTE train and CAD-SNLI train): a source left out of everything, to
# measure on. A judge trained with `--nli-sets large` has read them: measure it elsewhere.
NLI_HELD_OUT: dict[str, tuple[str, str, str]] = {
    "fever-test": NLI_MORE_SETS["fever_nli_test"],
    "rte-dev": NLI_UNSTATED_SETS["rte_dev"],
    "cad-snli-test": NLI_MORE_SETS["cad_snli_test"],
    "cnsd-snli-zh-test": ("nli/cnsd_snli_zh/test.txt", "tsv_s1s2label", "not stated"),
}


def read_nli(name: str, data_dir: Path | str | None = None) -> list[dict]:
    """One generic NLI set (a name of NLI_SETS or NLI_HELD_OUT) as {"premise", "hypothesis", "label",
    "source"} with labels mapped onto full (entailment) / none (neutral, not_entailment) / contradicts
    (contradiction); rows with other or missing labels are skipped."""
    import csv

    rel, fmt, _ = {**NLI_ALL_SETS, **NLI_ZH_SETS, **NLI_HELD_OUT}[name]
    path = data_dir_or_default(data_dir) / rel
    out: list[dict] = []

    def add(premise: str | None, hypothesis: str | None, label: str | None) -> None:
        mapped = NLI_LABELS.get((label or "").strip())
        premise, hypothesis = (premise or "").strip(), (hypothesis or "").strip()
        if mapped and premise and hypothesis:
            out.append({"premise": premise, "hypothesis": hypothesis, "label": mapped, "source": name})

    with path.open(encoding="utf-8", newline="") as fh:
        if fmt == "csv":
            for d in csv.DictReader(fh):
                add(d.get("premise"), d.get("hypothesis"), d.get("label"))
        elif fmt == "tsv_s1s2gold":
            for d in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                add(d.get("sentence1"), d.get("sentence2"), d.get("gold_label"))
        elif fmt == "tsv_rte":
            for d in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                add(d.get("sentence1"), d.get("sentence2"), d.get("label"))
        elif fmt == "tsv_s1s2label":
            for line in fh:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 3:
                    add(parts[0], parts[1], parts[2])
        elif fmt == "tsv_label_first":
            for line in fh:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 3:
                    add(parts[1], parts[2], parts[0])
    return out
