"""Fine-tuning a judge's own weights on CPU for `adapt-judge`: the int8 model read back as torch
(training/bases.py), the team's pairs each read at its most claim-like window as in training, mixed with
a replayed sample of the original training mix (models/adaptation/replay.jsonl.gz), the lower layers
frozen, early stopping on held-out pairs; and weights interpolated between the base and the tuned."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.files.labelled import Row
from citeaudit.training.anchor import REPLAY_FILE, read_examples
from citeaudit.training.bases import torch_model_from_onnx
from citeaudit.training.config import LABEL2ID
from citeaudit.training.judge_parts import Progress, quiet

MAX_LEN = 256


@dataclass(frozen=True)
class Tuning:
    """How the weights are fine-tuned (`adapt.Settings` holds these among its own)."""

    epochs: int = 2
    lr: float = 2e-5
    batch_size: int = 16
    replay: float = 0.5  # replayed examples per team example
    frozen_layers: int = 3  # the embeddings and this many lower encoder layers keep the base's weights
    seed: int = 0
    threads: int | None = None
    domain_only: bool = False  # no replay (and, in adapt, no forgetting check): a judge for this domain alone


@dataclass(frozen=True)
class Example:
    premise: str
    hypothesis: str
    label: str


def examples_of(rows: Sequence[Row], count, max_len: int = MAX_LEN) -> list[Example]:
    """Each row at the window the model trains on: its passages joined when they fit, else the most
    claim-like sentence window (training/train.py)."""
    from citeaudit.training.train import premise_for

    return [Example(premise_for({"claim": r.claim, "passages": [{"id": p.id, "text": p.text} for p in r.passages]},
                                count, max_len), r.claim, r.label) for r in rows]


class Trainer:
    """Fine-tunes a copy of the base weights; tokenises once."""

    def __init__(self, model_dir: Path, settings: Tuning):
        import torch
        from tokenizers import Tokenizer

        self.settings = settings
        if settings.threads:
            torch.set_num_threads(settings.threads)
        self.base = torch_model_from_onnx(model_dir)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        # the window length the judge reads (config.json), never more than the model was trained at
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.max_len = min(MAX_LEN, int(config.get("max_position_embeddings", MAX_LEN)))
        self.tokenizer.enable_truncation(self.max_len, strategy="only_first")
        self.replay = [Example(e["premise"], e["hypothesis"], e["label"]) for e in read_examples(REPLAY_FILE)]

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def _batch(self, examples: Sequence[Example]):
        import torch

        encodings = self.tokenizer.encode_batch([(e.premise, e.hypothesis) for e in examples])
        width = max(len(e.ids) for e in encodings)
        pad = lambda xs: list(xs) + [0] * (width - len(xs))  # noqa: E731
        return (torch.tensor([pad(e.ids) for e in encodings]),
                torch.tensor([pad(e.attention_mask) for e in encodings]),
                torch.tensor([pad(e.type_ids) for e in encodings]),
                torch.tensor([LABEL2ID[e.label] for e in examples]))

    def _loss(self, model, examples: Sequence[Example]) -> float:
        import torch

        total = 0.0
        with torch.no_grad():
            for i in range(0, len(examples), 32):
                ids, mask, types, labels = self._batch(examples[i:i + 32])
                out = model(input_ids=ids, attention_mask=mask, token_type_ids=types, labels=labels)
                total += float(out.loss) * len(labels)
        return total / max(1, len(examples))

    def fine_tune(self, train: Sequence[Example], held: Sequence[Example], progress: Progress = quiet,
                  stage: str = "fine-tuning") -> tuple[Any, dict]:
        """A copy of the base weights fine-tuned on `train` (+ replay), kept at the epoch with the lowest
        loss on `held`; returns it with the history."""
        import copy

        import torch

        s = self.settings
        rng = random.Random(s.seed)
        torch.manual_seed(s.seed)
        model = copy.deepcopy(self.base).train()
        # the lower layers keep what the base learnt from its whole mix: a forgetting guard, and a third
        # less time a step on CPU (measured on 2 threads: 3.9 s -> 2.6 s for 16 long windows)
        for module in [model.bert.embeddings, *model.bert.encoder.layer[:s.frozen_layers]]:
            for parameter in module.parameters():
                parameter.requires_grad = False
        replay = [] if s.domain_only else rng.sample(self.replay, min(len(self.replay), round(s.replay * len(train))))
        mix = list(train) + replay
        steps_per_epoch = math.ceil(len(mix) / s.batch_size)
        total = steps_per_epoch * s.epochs
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=s.lr, weight_decay=0.01)
        warmup = max(1, total // 10)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))))
        history = {"examples": {"team": len(train), "replay": len(replay), "held": len(held)},
                   "held_loss": [round(self._loss(model.eval(), held), 4)], "epochs_run": 0}
        best = (history["held_loss"][0], copy.deepcopy(model.state_dict()), 0)
        step = 0
        progress(stage, 0, total)
        for epoch in range(s.epochs):
            model.train()
            order = list(range(len(mix)))
            rng.shuffle(order)
            # batches of similar length pad less (the mix holds short NLI pairs and long windows)
            chunks = [sorted(order[c:c + s.batch_size * 8], key=lambda i: len(mix[i].premise))
                      for c in range(0, len(order), s.batch_size * 8)]
            batches = [chunk[b:b + s.batch_size] for chunk in chunks for b in range(0, len(chunk), s.batch_size)]
            rng.shuffle(batches)
            for batch in batches:
                ids, mask, types, labels = self._batch([mix[i] for i in batch])
                loss = model(input_ids=ids, attention_mask=mask, token_type_ids=types, labels=labels).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
                step += 1
                progress(stage, step, total)
            held_loss = self._loss(model.eval(), held)
            history["held_loss"].append(round(held_loss, 4))
            history["epochs_run"] = epoch + 1
            if held_loss < best[0] - 1e-4:
                best = (held_loss, copy.deepcopy(model.state_dict()), epoch + 1)
            elif epoch + 1 - best[2] >= 1:  # no better than the best epoch: stop
                break
        progress(stage, total, total)
        model.load_state_dict(best[1])
        history["kept_epoch"] = best[2]
        return model.eval(), history


def interpolate(base, tuned, keep: float):
    """Weights (1 - keep) x base + keep x tuned (a copy)."""
    import copy

    import torch

    out = copy.deepcopy(base)
    tuned_state = tuned.state_dict()
    with torch.no_grad():
        out.load_state_dict({k: (1 - keep) * v + keep * tuned_state[k] if v.is_floating_point() else v
                             for k, v in base.state_dict().items()})
    return out.eval()
