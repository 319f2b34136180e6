"""Fine-tune all-MiniLM-L6-v2 as a 4-class cross-encoder judge (full / partial / none / contradicts).

The training mix (see docs/model-judge.md):

* attribution rows from the *train* split of the human-labelled sets (training/data.py), English only
  (the MiniLM vocabulary turns most Chinese into [UNK]; Chinese pairs are routed elsewhere by the
  `model` judge). Label rates are balanced per source: each source contributes the same number of
  `full` and not-`full` rows (the smaller side oversampled at most 2x, each side capped at
  `per_source_cap / 2`), so that source identity no longer predicts the label.
* generic NLI pairs (MNLI dev, SNLI dev, CAD-SNLI, FEVER-NLI, SciTail, RTE) at `nli_ratio` : 1,
  entailment -> full, neutral / not_entailment -> none, contradiction -> contradicts, drawn evenly
  over the sets (as far as each set has rows).

Long evidence: the passages of a row are joined when they fit `max_len` (as the judge reads them),
otherwise cut into sentence windows with judges/windows.py (the same cutting the judge uses), and the
row trains on the ONE window with the highest token overlap with the claim, whatever its label. A
`full` label on a window that does not hold the support would teach the model to say `full` for
irrelevant text; picking the most claim-like window is the window the judge itself will most likely
pick at inference (it takes the window with the highest p(full)).

A larger mix: `nli_sets="large"` adds the NLI rows judge-v1 left unused that have a stated permissive
licence (FEVER-NLI test, CAD-SNLI dev and test); `unstated_licence_nli` adds RTE dev (no stated
licence; the model card says so); `nli_ratio` and `per_source_cap` set the sizes. `mix` trains on a
mix saved before (a work dir's mix.jsonl and manifest.json, or the .xz of the former), so that a
machine without the public sets (an accelerator) can train on it.

Devices: `device="auto"` is cuda when torch sees one, else cpu. On cpu nothing changes from judge-v1's
run (batch 16, fp32, batches tokenised in the training loop). On cuda the defaults are batch 64, bf16
autocast (fp32 master weights, no loss scaling), fused AdamW, and batches tokenised ahead by
DataLoader workers into pinned memory, so that the GPU does not wait for the tokenizer. The batches
themselves are the same plan on every device: the order depends on the seed and the batch size only.

Training is deterministic for a seed (data sampling, shuffling, torch init of the head), checkpoints
to `work_dir` every `checkpoint` steps, resumes from there, and stops at `steps` or `time_budget_s`
(elapsed time is carried across resumes). With `fit_steps` the planned steps are lowered, after a
short measurement of the speed, to what fits the time budget, so that the learning rate decays to
its floor inside the budget instead of being cut off halfway. Export and calibration follow as
separate steps (export.py, calibrate.py); `citeaudit train-judge` runs the three in turn.
"""

from __future__ import annotations

import contextlib
import json
import lzma
import os
import random
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from citeaudit.errors import TrainingError
from citeaudit.records import file_sha256
from citeaudit.text import has_han
from citeaudit.training.bases import resolve_base
from citeaudit.training.config import ATTRIBUTION_LICENCES, DEFAULT_WORK_DIR, ID2LABEL, LABEL2ID
from citeaudit.training.data import (LABEL_MAPPING, NLI_ALL_SETS, NLI_MORE_SETS, NLI_SETS, NLI_UNSTATED_SETS,
                                     NLI_ZH_SETS,
                                     data_dir_or_default, load_all, read_nli, split_rows)
from citeaudit.training.export import libraries_quiet

NLI_SET_CHOICES = {"standard": tuple(NLI_SETS), "large": (*NLI_SETS, *NLI_MORE_SETS)}


# --- data mix -------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def _overlap(claim: str, text: str) -> float:
    if has_han(claim):  # a run of Han characters is one \w+ "word": compare character bigrams instead
        from citeaudit.judges.calibration import claim_word_recall  # numpy: not on the CLI's start-up path

        return claim_word_recall(claim, text)
    c = set(w.lower() for w in _WORD.findall(claim))
    t = set(w.lower() for w in _WORD.findall(text))
    return len(c & t) / (len(c) or 1)


def premise_for(row: dict, count, max_len: int, pair_specials: int = 3) -> str:
    """What the model reads for an attribution row: the passages joined when they fit, else the one
    sentence window with the highest word overlap with the claim (`pair_specials`: the special tokens of
    a pair, 3 for BERT's tokenizers, 4 for XLM-R's)."""
    from citeaudit.judges.windows import set_windows
    from citeaudit.records import SourcePassage

    passages = [SourcePassage(id=p["id"], doc_id=p["id"], version=None, text=p["text"], start=0,
                              end=len(p["text"])) for p in row["passages"]]
    budget = max(16, max_len - count(row["claim"]) - pair_specials)
    items = set_windows(passages, count, budget)
    texts = ["\n".join(w.text for w in ws) for ws in items]
    return max(texts, key=lambda t: _overlap(row["claim"], t))


def balance_source(rows: list[dict], rng: random.Random, cap: int) -> list[dict]:
    """Equal full / not-full counts for one source (smaller side oversampled at most 2x)."""
    full = [r for r in rows if r["label"] == "full"]
    rest = [r for r in rows if r["label"] != "full"]
    if not full or not rest:
        return rng.sample(rows, min(len(rows), cap))
    n = min(cap // 2, max(len(full), len(rest)), 2 * min(len(full), len(rest)))

    def take(side: list[dict]) -> list[dict]:
        if n <= len(side):
            return rng.sample(side, n)
        return side + [rng.choice(side) for _ in range(n - len(side))]

    return take(full) + take(rest)


def nli_set_names(nli_sets: str | Sequence[str] = "standard", unstated_licence: bool = False) -> list[str]:
    """The NLI sets of a mix: "standard" (judge-v1's six), "large" (those and the unused rows with a
    stated permissive licence) or a list of set names; RTE dev only with `unstated_licence`."""
    if isinstance(nli_sets, str):
        if nli_sets not in NLI_SET_CHOICES:
            raise TrainingError(f"--nli-sets: one of {', '.join(NLI_SET_CHOICES)}, got {nli_sets!r}")
        names = list(NLI_SET_CHOICES[nli_sets])
    else:
        unknown = [n for n in nli_sets if n not in NLI_ALL_SETS]
        if unknown:
            raise TrainingError(f"unknown NLI set {', '.join(unknown)}: one of {', '.join(NLI_ALL_SETS)}"
                                + (" (the Chinese sets come with --nli-zh N)" if set(unknown) & set(NLI_ZH_SETS) else ""))
        names = list(nli_sets)
    if unstated_licence:
        names += [n for n in NLI_UNSTATED_SETS if n not in names]
    return names


def build_mix(data_dir: Path | str | None = None, extra_labels: str | Path | None = None,
              leave_out: str | None = None, nli_ratio: float = 3, seed: int = 0,
              per_source_cap: int = 1600, max_len: int = 256, count=None,
              nli_sets: str | Sequence[str] = "standard", unstated_licence_nli: bool = False,
              pair_specials: int = 3, languages: Sequence[str] = ("en",), nli_zh: int = 0,
              derived_per_kind: int = 0) -> tuple[list[dict], dict]:
    """(examples, manifest): examples are {"premise", "hypothesis", "label", "source", "kind"}; windows are
    cut with `count` to fit `max_len` beside the claim and the pair's `pair_specials` special tokens.

    judge-v1's mix is the default (English attribution rows, English NLI). A multilingual base adds
    `languages=("en", "zh")` (CiteCheck's train rows), `nli_zh` Chinese NLI rows drawn evenly from
    NLI_ZH_SETS, and `derived_per_kind` short plain pairs of each kind per language made from the
    train rows' passages (training/augment.py)."""
    from citeaudit.training.augment import derived_pairs

    names = nli_set_names(nli_sets, unstated_licence_nli)
    data_dir = data_dir_or_default(data_dir)
    rng = random.Random(seed)
    unknown = [lang for lang in languages if lang not in ("en", "zh")]
    if unknown:
        raise TrainingError(f"--languages: en and/or zh, got {', '.join(unknown)}")
    train = [r for r in split_rows(load_all(data_dir))["train"] if r["lang"] in languages]
    if leave_out:
        if leave_out not in LABEL_MAPPING:
            raise TrainingError(f"--leave-out: one of {', '.join(LABEL_MAPPING)}")
        train = [r for r in train if r["source"] != leave_out]
    extra: list[dict] = []
    if extra_labels:
        with open(extra_labels, encoding="utf-8") as fh:
            extra = [json.loads(line) for line in fh if line.strip()]
        for r in extra:
            r.setdefault("source", "extra")
    by_source: dict[str, list[dict]] = {}
    for r in train:
        by_source.setdefault(r["source"], []).append(r)
    attribution: list[dict] = []
    raw_counts = {s: dict(Counter(r["label"] for r in rows)) for s, rows in sorted(by_source.items())}
    for source, rows in sorted(by_source.items()):
        attribution += balance_source(rows, rng, per_source_cap)
    attribution += extra  # reviewed examples are taken as they are, unbalanced and all of them
    examples = [{"premise": premise_for(r, count, max_len, pair_specials), "hypothesis": r["claim"], "label": r["label"],
                 "source": r["source"], "kind": "attribution"} for r in attribution]
    # NLI: nli_ratio x the attribution count, drawn round-robin over the sets
    want = int(round(nli_ratio * len(examples)))
    pools = {name: read_nli(name, data_dir) for name in names}
    for pool in pools.values():
        rng.shuffle(pool)
    nli: list[dict] = []
    cursor = dict.fromkeys(pools, 0)
    while len(nli) < want and any(cursor[n] < len(pools[n]) for n in pools):
        for name in pools:
            if cursor[name] < len(pools[name]) and len(nli) < want:
                nli.append({**pools[name][cursor[name]], "kind": "nli"})
                cursor[name] += 1
    examples += nli
    zh_pools = {name: read_nli(name, data_dir) for name in NLI_ZH_SETS} if nli_zh else {}
    for name, pool in zh_pools.items():
        rng.shuffle(pool)
        examples += [{**row, "kind": "nli"} for row in pool[: nli_zh // len(zh_pools)]]
    derived: list[dict] = []
    if derived_per_kind:
        for lang in languages:
            texts = [(r["source"], p["text"]) for r in train if r["lang"] == lang for p in r["passages"]]
            derived += derived_pairs(texts, derived_per_kind, seed=seed, lang=lang)
    examples += derived
    rng.shuffle(examples)
    manifest = {
        "attribution": {
            "split": "train (by-claim hash, training/data.py)", "languages": list(languages),
            "left_out": leave_out,
            "rows_available": raw_counts,
            "rows_used": {s: dict(Counter(e["label"] for e in examples if e["kind"] == "attribution"
                                          and e["source"] == s)) for s in sorted(by_source) + (["extra"] if extra else [])},
            "licences": {s: ATTRIBUTION_LICENCES[s] for s in sorted(by_source)},
            "label_mapping": LABEL_MAPPING,
            "extra_labels": str(extra_labels) if extra_labels else None,
            "balancing": f"per source equal full / not-full, smaller side oversampled <= 2x, cap {per_source_cap}",
        },
        "nli": {
            "ratio": nli_ratio,
            "rows_used": {n: dict(Counter(e["label"] for e in nli if e["source"] == n)) for n in pools},
            "licences": {n: NLI_ALL_SETS[n][2] for n in pools},
            "files": {n: NLI_ALL_SETS[n][0] for n in pools},
            "sets": nli_sets if isinstance(nli_sets, str) else "listed",
            "unstated_licence_sets": [n for n in pools if "no explicit licence" in NLI_ALL_SETS[n][2]],
            "label_mapping": {"entailment": "full", "neutral": "none", "not_entailment": "none",
                              "contradiction": "contradicts"},
        },
        "total_examples": len(examples),
    }
    if zh_pools:
        manifest["nli_zh"] = {
            "rows_used": {n: dict(Counter(e["label"] for e in examples if e["source"] == n)) for n in zh_pools},
            "licences": {n: NLI_ZH_SETS[n][2] for n in zh_pools},
            "files": {n: NLI_ZH_SETS[n][0] for n in zh_pools}}
    if derived:
        manifest["derived"] = {
            "what": "short plain claims made from the train rows' passages (training/augment.py)",
            "per_kind": derived_per_kind,
            "rows_used": {lang: dict(Counter(e["derived"] for e in derived if e["source"] == f"derived-{lang}"))
                          for lang in languages}}
    return examples, manifest


# --- training -------------------------------------------------------------------------------------

# what each device trains with when not told otherwise (cpu: judge-v1's run, unchanged)
DEVICE_DEFAULTS = {
    "cpu": {"batch_size": 16, "precision": "fp32", "workers": 0},
    "cuda": {"batch_size": 64, "precision": "bf16", "workers": 6},
}
PRECISIONS = ("fp32", "bf16")
MIX_FILE, MANIFEST_FILE = "mix.jsonl", "manifest.json"


def _lr_at(step: int, lr: float, steps: int, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr * max(0.05, (steps - step) / max(1, steps - warmup))


def _eta(step: int, steps: int, elapsed: float, time_budget_s: float | None) -> str:
    """Time left at the pace so far, or to the time budget when that comes first, as h:mm:ss."""
    left = (steps - step) * elapsed / max(step, 1)
    if time_budget_s:
        left = min(left, max(0.0, time_budget_s - elapsed))
    minutes, seconds = divmod(int(left), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}"


def resolve_device(device: str = "auto") -> str:
    """"cuda" or "cpu": auto is cuda when torch sees a CUDA device; asking for cuda without one is an error."""
    import torch

    if device not in ("auto", "cpu", "cuda"):
        raise TrainingError(f"--device: one of auto, cpu, cuda, got {device!r}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise TrainingError(f"--device cuda: torch {torch.__version__} sees no CUDA device "
                            f"(built for CUDA {torch.version.cuda or 'none'}); use --device cpu or auto")
    return device


def read_mix(folder: str | Path) -> tuple[list[dict], dict]:
    """A saved mix: FOLDER/mix.jsonl (or mix.jsonl.xz) and FOLDER/manifest.json."""
    folder = Path(folder)
    plain, packed, manifest = folder / MIX_FILE, folder / (MIX_FILE + ".xz"), folder / MANIFEST_FILE
    if not manifest.exists() or not (plain.exists() or packed.exists()):
        raise TrainingError(f"--mix {folder}: needs {MIX_FILE} (or {MIX_FILE}.xz) and {MANIFEST_FILE}")
    text = plain.read_text(encoding="utf-8") if plain.exists() else lzma.decompress(packed.read_bytes()).decode("utf-8")
    examples = [json.loads(line) for line in text.splitlines() if line.strip()]
    return examples, json.loads(manifest.read_text(encoding="utf-8"))


def write_mix(folder: str | Path, examples: list[dict], manifest: dict, compress: bool = False) -> Path:
    """Save a mix as `read_mix` reads it (xz-compressed when asked: 18 MiB of text become 2.3 MiB);
    returns the mix file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples).encode("utf-8")
    target = folder / (MIX_FILE + (".xz" if compress else ""))
    target.write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME) if compress else data)
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1))
    return target


def batch_plan(lengths: Sequence[int], batch_size: int, steps: int, seed: int) -> list[list[int]]:
    """The example indices of each step's batch, epoch after epoch: shuffle, sort chunks of 50 batches
    by length (so short NLI pairs are padded with short pairs, not to a 256-token evidence window),
    shuffle the batches. Deterministic for (seed, batch size); the same on every device."""
    order_rng = random.Random(seed + 1)
    plan: list[list[int]] = []
    while len(plan) < steps:
        o = list(range(len(lengths)))
        order_rng.shuffle(o)
        batches = []
        for c in range(0, len(o), batch_size * 50):
            chunk = sorted(o[c: c + batch_size * 50], key=lambda i: lengths[i])
            batches += [chunk[b: b + batch_size] for b in range(0, len(chunk), batch_size)]
        order_rng.shuffle(batches)
        plan += batches
    return plan[:steps]


class _Encoded:
    """Batch k of the plan, tokenised: what a DataLoader worker computes ahead of the training loop."""

    def __init__(self, examples: list[dict], plan: list[list[int]], tokenizer, max_len: int,
                 pad_multiple: int | None):
        self.examples, self.plan, self.tokenizer = examples, plan, tokenizer
        self.max_len, self.pad_multiple = max_len, pad_multiple

    def __len__(self) -> int:
        return len(self.plan)

    def __getitem__(self, k: int):
        import torch

        batch = [self.examples[i] for i in self.plan[k]]
        enc = self.tokenizer([e["premise"] for e in batch], [e["hypothesis"] for e in batch], padding=True,
                             truncation="only_first", max_length=self.max_len, return_tensors="pt",
                             pad_to_multiple_of=self.pad_multiple)
        return dict(enc), torch.tensor([LABEL2ID[e["label"]] for e in batch])


def _batches(encoded: _Encoded, start: int, workers: int, pin: bool, seed: int):
    """(encoding, labels) for steps start, start + 1, ...: in this process when workers is 0 (judge-v1's
    loop, which draws nothing from torch's random state), else from DataLoader workers."""
    if workers == 0:
        for k in range(start, len(encoded)):
            yield encoded[k]
        return
    import torch

    loader = torch.utils.data.DataLoader(
        encoded, batch_size=None, sampler=range(start, len(encoded)), num_workers=workers, pin_memory=pin,
        prefetch_factor=4, persistent_workers=False,
        generator=torch.Generator().manual_seed(seed))  # its own generator: dropout's stream is untouched
    yield from loader


def _hardware(device: str, threads: int, precision: str, workers: int) -> str:
    import torch

    if device == "cuda":
        where = f"{torch.cuda.get_device_name(0)} (cuda)"
    else:
        where = f"{threads} CPU threads"
    extra = []
    if precision != "fp32":
        extra.append(f"{precision} autocast")
    if workers:
        extra.append(f"{workers} loader workers")
    return where + (f", {', '.join(extra)}" if extra else "")


def train_judge(out_dir: str | Path, data_dir: str | Path | None = None, extra_labels: str | Path | None = None,
                leave_out: str | None = None, steps: int = 3000, batch_size: int | None = None, max_len: int = 256,
                lr: float = 4e-5, seed: int = 0, nli_ratio: float = 3, time_budget_s: float | None = None,
                checkpoint: int = 100, work_dir: str | Path | None = None, resume: bool = False,
                threads: int = 2, log=print, *, device: str = "auto", precision: str | None = None,
                workers: int | None = None, base: str | Path | None = None, per_source_cap: int = 1600,
                nli_sets: str | Sequence[str] = "standard", unstated_licence_nli: bool = False,
                mix: str | Path | None = None, fit_steps: bool = False, languages: Sequence[str] = ("en",),
                nli_zh: int = 0, derived_per_kind: int = 0, freeze_embeddings: bool = False) -> dict:
    """Train; writes the Hugging Face model to `out_dir` (a directory of its own, e.g. the work dir's
    `final/`), returns the training record (for the model card).

    `device`, `batch_size`, `precision` and `workers` default per device (DEVICE_DEFAULTS); `base` is a
    name from bases.BASES or a base directory; `mix` a folder with a saved mix (then `data_dir`,
    `extra_labels`, `leave_out`, `nli_*` and `per_source_cap` are not read: the mix was built with them)."""
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    device = resolve_device(device)
    defaults = DEVICE_DEFAULTS[device]
    batch_size = batch_size or defaults["batch_size"]
    precision = precision or defaults["precision"]
    workers = defaults["workers"] if workers is None else workers
    if precision not in PRECISIONS:
        raise TrainingError(f"--precision: one of {', '.join(PRECISIONS)}, got {precision!r}")
    if fit_steps and not time_budget_s:
        raise TrainingError("--fit-steps needs --time-budget: the steps are fitted to it")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # 2 cores: torch's threads only
    hf_logging.set_verbosity_error()
    torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    work = Path(work_dir or DEFAULT_WORK_DIR)
    work.mkdir(parents=True, exist_ok=True)
    base_dir, base_record = resolve_base(base)
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    tokenizer_sha = file_sha256(base_dir / "tokenizer.json")

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    mix_file = work / MIX_FILE
    manifest_file = work / MANIFEST_FILE
    ckpt_file = work / "checkpoint.pt"
    if mix is not None and not (resume and mix_file.exists() and manifest_file.exists()):
        examples, manifest = read_mix(mix)
        made_with = manifest.get("tokenizer_sha256")
        if made_with and made_with != tokenizer_sha:
            raise TrainingError(f"--mix {mix}: its windows were cut with another tokenizer (sha256 {made_with[:12]}) "
                                f"than the base's ({tokenizer_sha[:12]}); build the mix with the same --base")
        write_mix(work, examples, manifest)
        if ckpt_file.exists() and not resume:
            ckpt_file.unlink()
        log(f"read a saved mix of {len(examples)} examples from {mix}")
    elif resume and mix_file.exists() and manifest_file.exists():
        examples, manifest = read_mix(work)
        log(f"resuming with the saved mix of {len(examples)} examples")
    else:
        examples, manifest = build_mix(data_dir, extra_labels, leave_out, nli_ratio, seed, max_len=max_len,
                                       count=count, per_source_cap=per_source_cap, nli_sets=nli_sets,
                                       unstated_licence_nli=unstated_licence_nli,
                                       pair_specials=tokenizer.num_special_tokens_to_add(pair=True),
                                       languages=languages, nli_zh=nli_zh, derived_per_kind=derived_per_kind)
        manifest["tokenizer_sha256"] = tokenizer_sha
        write_mix(work, examples, manifest)
        if ckpt_file.exists() and not resume:
            ckpt_file.unlink()
        log(f"built a mix of {len(examples)} examples")

    with libraries_quiet():  # transformers' bar and its advice to train the new head: training follows
        model = AutoModelForSequenceClassification.from_pretrained(
            base_dir, num_labels=4, id2label=ID2LABEL, label2id=LABEL2ID)
    on_gpu = device == "cuda"
    if on_gpu:
        torch.cuda.manual_seed_all(seed)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model.to(device)
    if freeze_embeddings:
        # the word embeddings stay the base's: a multilingual vocabulary keeps its alignment across
        # languages (English pairs still teach Chinese ones), and the step skips their 26M gradients
        model.get_input_embeddings().weight.requires_grad_(False)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.01,
                                  **({"fused": True} if on_gpu else {}))
    step, elapsed, losses = 0, 0.0, []
    planned_at_start = steps
    fitted: int | None = None  # the steps --fit-steps planned, once it has
    if resume and ckpt_file.exists():
        state = torch.load(ckpt_file, weights_only=False, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step, elapsed, losses = state["step"], state["elapsed"], state["losses"]
        torch.set_rng_state(state["torch_rng"])
        if on_gpu and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        fitted = state.get("steps_fitted")
        if fit_steps and fitted:
            steps = fitted
        log(f"resumed at step {step} ({elapsed / 60:.1f} min done)")
    warmup = min(200, steps // 10)
    lengths = [len(e["premise"]) + len(e["hypothesis"]) for e in examples]
    per_epoch = (len(examples) + batch_size - 1) // batch_size
    encoded = _Encoded(examples, batch_plan(lengths, batch_size, steps, seed), tokenizer, max_len,
                       8 if on_gpu else None)  # multiples of 8 suit the tensor cores
    probe = (step + min(10, steps // 4), step + min(60, max(2, steps // 2)))  # steps timed for --fit-steps
    probe_started = 0.0

    def save() -> None:
        tmp = ckpt_file.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                    "elapsed": elapsed, "losses": losses, "torch_rng": torch.get_rng_state(),
                    "cuda_rng": torch.cuda.get_rng_state_all() if on_gpu else None,
                    "steps_fitted": fitted}, tmp)
        tmp.replace(ckpt_file)

    autocast = (torch.autocast(device_type=device, dtype=torch.bfloat16) if precision == "bf16"
                else contextlib.nullcontext())
    pending: list = []  # losses still on the device (read back every log interval, not every step)
    log_every = 20 if not on_gpu else 100
    model.train()
    start = time.time() - elapsed
    stopped = "steps"
    batches = _batches(encoded, step, workers, on_gpu, seed)
    for enc, labels in batches:
        if step >= steps:
            break
        if time_budget_s and time.time() - start >= time_budget_s:
            stopped = "time budget"
            break
        if on_gpu:
            enc = {k: v.to(device, non_blocking=True) for k, v in enc.items()}
            labels = labels.to(device, non_blocking=True)
        for group in optimizer.param_groups:
            group["lr"] = _lr_at(step, lr, steps, warmup)
        with autocast:
            out = model(**enc, labels=labels)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        if on_gpu:
            pending.append(out.loss.detach())
        else:
            losses.append(round(float(out.loss.detach()), 4))
        step += 1
        if fit_steps and step == probe[0]:
            if on_gpu:
                torch.cuda.synchronize()
            probe_started = time.time()
        if fit_steps and step == probe[1] and fitted is None and probe_started:
            if on_gpu:
                torch.cuda.synchronize()
            per_step = (time.time() - probe_started) / max(1, probe[1] - probe[0])
            left = time_budget_s - (time.time() - start)
            fits = step + int(0.9 * left / per_step)  # 10 % kept for slower batches
            if fits < steps:
                log(f"at {per_step:.3f} s/step only {fits} of {steps} planned steps fit the time budget: "
                    f"the schedule now ends at step {fits}")
                steps = fitted = fits
                warmup = min(warmup, steps // 10)
        if pending and (step % log_every == 0 or step >= steps):
            losses += [round(v, 4) for v in torch.stack(pending).float().tolist()]
            pending.clear()
        elapsed = time.time() - start
        if step % log_every == 0:
            log(f"step {step}/{steps} loss({log_every}) {sum(losses[-log_every:]) / log_every:.4f} "
                f"{elapsed / step:.2f} s/step epoch {step / per_epoch:.2f} ETA {_eta(step, steps, elapsed, time_budget_s)}")
        if step % checkpoint == 0:
            save()
    batches.close()  # stops the loader's workers
    if pending:
        losses += [round(v, 4) for v in torch.stack(pending).float().tolist()]
    elapsed = time.time() - start
    save()
    final = Path(out_dir)
    final.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.to("cpu")
    with libraries_quiet():  # transformers' bar for the weights it writes: the log says where they went
        model.save_pretrained(final)
        tokenizer.save_pretrained(final)
    hyper_parameters = {
        "steps_planned": steps, "batch_size": batch_size, "max_len": max_len, "lr": lr,
        "schedule": f"linear warm-up {warmup} steps, linear decay to step {steps} (floor 5%)",
        "optimizer": "AdamW wd 0.01, grad clip 1.0", "seed": seed, "nli_ratio": manifest.get("nli", {}).get("ratio", nli_ratio),
        "threads": threads, "time_budget_s": time_budget_s, "word_embeddings": "frozen" if freeze_embeddings else "trained",
        "device": device, "precision": precision, "loader_workers": workers}
    if fitted and fit_steps:
        hyper_parameters["steps_fitted_to_budget"] = f"{planned_at_start} planned, {fitted} fitted"
    record = {
        "base_model": base_record["description"],
        "base_model_sha256": base_record["sha256"],
        "head": f"{type(model).__name__}, 4 classes", "id2label": ID2LABEL,
        "hyper_parameters": hyper_parameters,
        "steps_done": step, "stopped_by": stopped, "train_minutes": round(elapsed / 60, 1),
        "examples_seen": step * batch_size, "epochs": round(step * batch_size / len(examples), 2),
        "final_loss_mean_last_100": round(sum(losses[-100:]) / max(1, len(losses[-100:])), 4),
        "data": manifest,
        "base": base_record, "hardware": _hardware(device, threads, precision, workers),
    }
    (final / "training_record.json").write_text(json.dumps(record, indent=1))
    log(f"trained {step} steps in {elapsed / 60:.1f} min ({stopped}); model in {final}")
    return record


def card_texts(record: dict) -> dict:
    """The model card's title, summary and limits for a run that differs from judge-v1's (another base,
    device or NLI sets without a stated licence beyond RTE train), as export_judge's keywords; empty for
    a run like judge-v1's, whose card keeps its texts."""
    base = record.get("base") or {}
    nli = (record.get("data") or {}).get("nli") or {}
    unstated = [n for n in nli.get("unstated_licence_sets", []) if n != "rte"]
    hardware = record.get("hardware", "")
    if (base.get("name", "minilm-l6") == "minilm-l6" and "carried_sha256" not in base and not unstated
            and "CPU" in (hardware or "CPU") and not (record.get("data") or {}).get("nli_zh")):
        return {}
    name = base.get("description") or record.get("base_model", "the base model")
    rte = [n for n in nli.get("unstated_licence_sets", [])]
    data = record.get("data") or {}
    chinese = "zh" in ((data.get("attribution") or {}).get("languages") or [])
    zh_nli = sorted(((data.get("nli_zh") or {}).get("rows_used") or {}))
    limits = [
        ("English and Chinese: the mix holds English and Chinese (CiteCheck) attribution rows; the `model` judge "
         "judges Chinese pairs with this model." if chinese else
         "English only: the mix holds English rows alone; the `model` judge routes Chinese pairs to the "
         "`embedding` judge and says so."),
        f"Trained {record.get('train_minutes')} min on {hardware}; figures are single runs with one seed.",
        (f"NLI sets without an explicit licence (research use) in the mix: {', '.join(rte)}; "
         if rte else "No NLI set without a stated licence was used; ")
        + (f"Chinese NLI sets whose licence is not stated: {', '.join(zh_nli)}." if zh_nli
           else "no Chinese NLI set was used."),
    ]
    if data.get("derived"):
        limits.append("Short plain pairs made from the training rows' own passages (training/augment.py) are in "
                      "the mix; the hand-written plain pairs it is measured on (benchmarks/data/plain_support.jsonl) "
                      "are not.")
    if base.get("carried_sha256"):
        limits.append(f"Base weights as carried to the training machine: {base.get('note', 'not the original file')}; "
                      f"sha256 of the weights trained from {base['carried_sha256'][:16]}…")
    return {
        "title": f"# citeaudit model judge ({base.get('name', 'minilm-l6')} cross-encoder, int8 ONNX)",
        "summary": "A 4-class (full / partial / none / contradicts) cross-encoder for 'does this evidence support "
                   f"this claim', fine-tuned from {name} on generic NLI plus per-source balanced human "
                   "attribution labels" + (", in English and Chinese," if chinese else ",")
                   + " exported to ONNX and quantised to int8.",
        "limits": limits,
    }
