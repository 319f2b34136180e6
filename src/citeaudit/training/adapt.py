"""Adapt the model judge to a team's own labels, on CPU (`citeaudit adapt-judge`).

A team that reviewed a few hundred claims has what a general judge lacks: labels from its own domain.
Adapting starts from the shipped judge itself (its int8 weights, dequantised: exactly what it judges
with), not from the base MiniLM, and writes a complete judge directory (`--judge model:path=DIR`).

English pairs (the cross-encoder's route):
1. Fine-tune on the team's pairs, each read at its most claim-like window as in training, mixed 1:1
   with a replayed sample of the original training mix (models/adaptation/replay.jsonl.gz), at a small
   learning rate, with early stopping on a held-out quarter of the team's pairs.
2. Refit the calibration (logit p(full) and claim-word recall, judges/calibration.py) on that held-out
   quarter, pulled toward the base judge's coefficients rather than toward zero, and refit the
   uncertain band by the rule that chose the shipped one (the narrowest band whose confident side
   reaches 80 % accuracy).
3. Guard against forgetting: the adapted judge reads a fixed sample of 300 of the English dev rows the
   shipped calibration was fitted on (models/adaptation/anchor-dev.jsonl.gz). When its balanced
   accuracy there falls more than 0.02 below the base judge's, its weights and calibration are moved
   back toward the base judge's (weight-space interpolation) until it does not. Every adaptation is
   guarded, those of the cross-validation folds too, so the reported figures are of what is written.
   Measured, one window a row is too lenient a reading (docs/model-judge.md): the judge reads whole
   passages, and an adaptation this check passed lost 0.065 on the whole dev rows.
   `domain_only` skips replay and check.
With too few labels per class to fine-tune, only the calibration and band are refitted; with fewer
still, nothing is adapted and the command refuses.

Chinese pairs go to the embedding judge (the cross-encoder reads most Chinese as [UNK]); adapting
refits its threshold on the team's Chinese labels.

What it reports is cross-validated: folds keep pairs that share a passage or a question together, and
each fold's figures come from an adaptation that never saw that fold. The fine-tuning needs torch
(`citeaudit[train]`); recalibration needs only the judge's own onnxruntime.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from citeaudit.errors import InputError, Problem, TrainingError
from citeaudit.files.destinations import temporary_folder_beside
from citeaudit.files.labelled import Row
from citeaudit.judges import calibration as calib
from citeaudit.judges.base import Request
from citeaudit.judges.judge_dir import load_judge_dir
from citeaudit.judges.model import ModelJudge, is_chinese, model_dir
from citeaudit.judges.spec import MODEL_UNCERTAIN_BAND, ZH_EMBEDDING_THRESHOLD
from citeaudit.records import Judgment, directory_sha256, file_sha256
from citeaudit.stats import best_threshold, metrics
from citeaudit.training import seen_claims
from citeaudit.training.anchor import ANCHOR_FILE, REPLAY_FILE, read_examples
from citeaudit.training.config import LABEL2ID

# Below these counts of the rarer class (full or not full) a step is not taken: fine-tuning a
# cross-encoder on a handful of examples of one class teaches it that class's topics, not support.
MIN_TO_TUNE = 40
MIN_TO_CALIBRATE = 10
FORGETTING_LIMIT = 0.02
BAND_TARGET_ACCURACY = 0.80  # the rule that chose the shipped band (docs/model-judge.md)
BAND_LIMITS = (0.03, 0.25)
INTERPOLATION_STEPS = (0.75, 0.5, 0.25, 0.0)  # share of the adaptation kept, tried in turn
MAX_LEN = 256

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def _quiet(stage: str, done: int, total: int) -> None:
    pass


@dataclass(frozen=True)
class Settings:
    folds: int = 3
    epochs: int = 2
    lr: float = 2e-5
    batch_size: int = 16
    replay: float = 0.5  # replayed examples per team example
    frozen_layers: int = 3  # the embeddings and this many lower encoder layers keep the base's weights
    seed: int = 0
    threads: int | None = None
    domain_only: bool = False  # no replay, no forgetting check: a judge for this domain alone
    recalibrate_only: bool = False
    resamples: int = 1000
    anchor_rows: int | None = 300  # the forgetting check on a fixed sample of the dev rows (None: all 584)
    anchor_exclude: tuple[str, ...] = ()  # sources the check leaves out (a domain measured as unseen)


# --- the team's labels ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TeamLabels:
    """Labelled pairs, each with the question (case) it came from when known, for grouping folds."""

    rows: list[Row]
    questions: list[str | None]
    described_as: str
    conflicts: int = 0  # pairs whose labels disagree, left out

    def content_hash(self) -> str:
        """SHA-256 of the pairs as used (claim, passage texts, label), order ignored."""
        lines = sorted(json.dumps([r.claim, [p.text for p in r.passages], r.label], ensure_ascii=False)
                       for r in self.rows)
        return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def rows_of_cases(cases) -> tuple[list[Row], list[str]]:
    """The curated labels of cases as labelled rows (their passages resolved), each with its case id."""
    rows, questions = [], []
    for rc in cases:
        for i, label in enumerate(rc.case.labels):
            rows.append(Row(f"{rc.id}/labels[{i}]", label.claim, rc.cited(list(label.passages)), label.label,
                            source=rc.case.id))
            questions.append(rc.case.id)
    return rows, questions


def load_team_labels(paths: Sequence[str], fmt: str | None = None, load_cases=None) -> TeamLabels:
    """Labels from labelled-pairs JSONL, a desk review export (a run log with human labels), or case
    files (any reader, `fmt`) whose curated labels are the team's. `load_cases(paths)` reads cases."""
    from citeaudit.files.labelled import load_rows
    from citeaudit.run.agree import is_run_log, load_labels

    rows: list[Row] = []
    questions: list[str | None] = []
    kinds = []
    case_paths = [p for p in paths if not is_run_log(p) and (fmt or _is_case_file(p))]
    for path in paths:
        if path in case_paths:
            continue
        if is_run_log(path):
            found = load_labels(path).rows
            kinds.append("desk review export")
        else:
            found = load_rows(path)
            kinds.append("labelled pairs")
        rows += found
        questions += [None] * len(found)
    if case_paths:
        if load_cases is None:
            raise TrainingError("case files need a case reader")
        found, found_questions = rows_of_cases(load_cases(case_paths))
        if not found:
            raise InputError([Problem(p, None, "labels", "no labels in these cases (adapting needs the team's "
                                                        "labels: cases[].labels, or --from a reader that keeps them)")
                              for p in case_paths[:1]])
        rows += found
        questions += found_questions
        kinds.append(f"case files{f' (--from {fmt})' if fmt else ''}")
    kept, kept_questions, conflicts = _one_label_a_pair(rows, questions)
    return TeamLabels(kept, kept_questions, ", ".join(dict.fromkeys(kinds)), conflicts)


def _is_case_file(path: str) -> bool:
    """A JSON/JSONL file whose first record is a case (it has answers or sources) rather than a row."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(1 << 16).lstrip()
    except (OSError, UnicodeDecodeError):
        return False
    if head.startswith("["):
        return True
    try:
        first = json.loads(head.split("\n", 1)[0]) if head.startswith("{") else None
    except ValueError:
        first = None
    if first is None:
        try:
            first = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return False
    return isinstance(first, dict) and "claim" not in first and ("answers" in first or "sources" in first
                                                                  or "cases" in first)


def _one_label_a_pair(rows: list[Row], questions: list[str | None]) -> tuple[list[Row], list[str | None], int]:
    """Each (claim, passage texts) pair once; a pair labelled differently by its reviewers is dropped."""
    seen: dict[tuple, int] = {}
    labels: dict[tuple, set[str]] = {}
    for i, r in enumerate(rows):
        key = (r.claim, frozenset(p.text for p in r.passages))
        seen.setdefault(key, i)
        labels.setdefault(key, set()).add(r.label)
    keep = [i for key, i in seen.items() if len(labels[key]) == 1]
    return [rows[i] for i in keep], [questions[i] for i in keep], sum(len(v) > 1 for v in labels.values())


def fold_of(team: TeamLabels, k: int, seed: int = 0) -> list[int]:
    """A fold for every row: rows sharing a passage text or a question are one group, groups are dealt
    to folds largest first (each to the smallest fold so far), ties broken by a seeded shuffle."""
    parent = list(range(len(team.rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for i, (row, question) in enumerate(zip(team.rows, team.questions)):
        keys = [f"p:{p.text}" for p in row.passages] + ([f"q:{question}"] if question else [])
        for key in keys:
            if key in first_with:
                parent[find(i)] = find(first_with[key])
            else:
                first_with[key] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(team.rows)):
        groups.setdefault(find(i), []).append(i)
    ordered = list(groups.values())
    random.Random(seed).shuffle(ordered)
    ordered.sort(key=len, reverse=True)
    sizes = [0] * k
    out = [0] * len(team.rows)
    for members in ordered:
        f = sizes.index(min(sizes))
        sizes[f] += len(members)
        for i in members:
            out[i] = f
    return out


# --- the judge, with its parts exchangeable ------------------------------------------------------------


@dataclass
class JudgeState:
    """What adapting changes: the English weights (None: the model file's own), the calibration with its
    band, and the Chinese threshold."""

    model: Any = None  # a torch BertForSequenceClassification, or None for the int8 model as shipped
    calibration: calib.Calibration | None = None
    band: float = MODEL_UNCERTAIN_BAND
    zh_threshold: float = float(ZH_EMBEDDING_THRESHOLD)


def base_state(model_dir: Path) -> JudgeState:
    cal = load_judge_dir(model_dir).calibration
    if cal is None:
        raise TrainingError(f"{model_dir}: the judge to adapt has no calibration.json")
    return JudgeState(None, cal, cal.band if cal.band is not None else MODEL_UNCERTAIN_BAND,
                      cal.zh_threshold if cal.zh_threshold is not None else float(ZH_EMBEDDING_THRESHOLD))


def make_judge(model_dir: Path, state: JudgeState, threads: int | None, calibrated: bool = True,
               remembered: dict | None = None) -> ModelJudge:
    """The model judge of `model_dir` judging with `state` (torch weights run in fp32, batched: unlike
    the int8 model their scores do not depend on the batch). `remembered` keeps the model's own
    judgments (before calibration and guard) by request, for judges that share the weights."""
    judge = ModelJudge(path=model_dir, guard=True, threads=threads, calibrated=False, band=0.0)
    judge.calibration = state.calibration if calibrated else None
    judge.band = state.band if calibrated else 0.0
    if state.zh_threshold != float(ZH_EMBEDDING_THRESHOLD):
        from citeaudit.judges.embedding import make_embedding_judge

        judge._zh_judge = make_embedding_judge(f"{state.zh_threshold:g}")
    if state.model is not None:
        forward = _torch_forward(state.model)
        judge.inner._forward = forward
        judge.inner.backend.predict = lambda premises, hypotheses: forward(
            [(e.ids, e.type_ids) for e in judge.inner.backend.tokenizer.encode_batch(list(zip(premises, hypotheses)))])
        judge.inner.batch_size = 16
    if remembered is not None:
        _remember(judge.inner, remembered)
    return judge


def _remember(inner, remembered: dict) -> None:
    """Let `inner.judge_batch` answer from `remembered` (request -> (judgment, window text)), judging
    only what it has not seen: calibration, band and guard vary far more often than weights."""
    judge_batch = inner.judge_batch

    def remembering(requests, evidence_texts=None):
        todo = [r for r in dict.fromkeys(requests) if r not in remembered]
        if todo:
            texts: list[str] = []
            for r, j, t in zip(todo, judge_batch(todo, texts), texts):
                remembered[r] = (j, t)
        found = [remembered[r] for r in requests]
        if evidence_texts is not None:
            evidence_texts.extend(t for _, t in found)
        return [j for j, _ in found]

    inner.judge_batch = remembering


def _torch_forward(model):
    import torch

    def forward(rows: list[tuple[list[int], list[int]]]):
        width = max(len(ids) for ids, _ in rows)
        ids = torch.tensor([list(i) + [0] * (width - len(i)) for i, _ in rows])
        mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in rows])
        types = torch.tensor([list(t) + [0] * (width - len(t)) for _, t in rows])
        with torch.no_grad():
            return torch.softmax(model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits, -1).numpy()

    return forward


def judge_rows(judge: ModelJudge, rows: Sequence[Row], progress: Progress = _quiet, stage: str = "judging",
               chunk: int = 32) -> list[Judgment]:
    out: list[Judgment] = []
    progress(stage, 0, len(rows))
    for i in range(0, len(rows), chunk):
        out += judge.judge_batch([Request.of(r.claim, r.passages) for r in rows[i:i + chunk]])
        progress(stage, len(out), len(rows))
    return out


def calibration_values(judge: ModelJudge, rows: Sequence[Row]) -> list[list[float]]:
    """The calibration's features of each row: the uncalibrated model's p(full) and window."""
    requests = [Request.of(r.claim, r.passages) for r in rows]
    texts: list[str] = []
    judgments = judge.inner.judge_batch(requests, texts)
    return [calib.features((j.scores or {}).get("full", 0.0), r.claim, t) for r, j, t in zip(rows, judgments, texts)]


def fit_calibration(values: Sequence[Sequence[float]], gold_full: Sequence[bool], prior: calib.Calibration,
                    described: dict) -> tuple[calib.Calibration, float]:
    """The calibration refitted toward `prior`, and the uncertain band chosen on the same rows."""
    fitted = calib.fit(values, gold_full, prior=prior, fitted_on=described)
    p = [fitted.probability(v) for v in values]
    return fitted, choose_band(gold_full, p)


def choose_band(gold_full: Sequence[bool], p_support: Sequence[float]) -> float:
    """The narrowest band (0.01 steps) whose confident side, |p - 0.5| >= band, reaches the target
    accuracy, within BAND_LIMITS; never so wide that more than half the rows fall inside it. Where the
    judge cannot reach the target, a band holding every pair would make it say nothing: at most half
    are left to a person."""
    gold = np.asarray(gold_full, dtype=bool)
    p = np.asarray(p_support, dtype=float)
    low, high = BAND_LIMITS
    widest = min(high, max(low, math.floor(float(np.median(np.abs(p - 0.5))) * 100) / 100))
    for band in np.arange(low, widest + 1e-9, 0.01):
        sure = np.abs(p - 0.5) >= band
        if sure.sum() and float(((p[sure] >= 0.5) == gold[sure]).mean()) >= BAND_TARGET_ACCURACY:
            return round(float(band), 2)
    return round(widest, 2)


# --- fine-tuning -----------------------------------------------------------------------------------------


def torch_model_from_onnx(model_dir: Path):
    """The judge's int8 (or fp32) ONNX weights as a transformers BERT classifier: each quantised tensor
    dequantised, (q - zero point) x scale, so the weights are the ones the judge computes with.

    Weights are found by the module scope the exporter writes into node names
    (`/inner/bert/encoder/layer.0/attention/self/query/MatMul`), not by initializer names: the exporter
    leaves MatMul weights unnamed and shares one initializer among equal tensors."""
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import BertConfig, BertForSequenceClassification

    graph = onnx.load(str(_onnx_file(model_dir))).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:  # equal tensors are stored once, the others made from it by Identity
        if node.op_type == "Identity" and node.input[0] in tensors:
            tensors[node.output[0]] = tensors[node.input[0]]

    def value(name: str) -> np.ndarray:
        if name.endswith("_quantized"):
            base = name.removesuffix("_quantized")
            return ((tensors[name].astype(np.float32) - tensors[f"{base}_zero_point"].astype(np.float32))
                    * tensors[f"{base}_scale"].astype(np.float32))
        return tensors[name].astype(np.float32)

    state: dict[str, np.ndarray] = {}
    biases: dict[str, np.ndarray] = {}
    for node in graph.node:
        scope = [part for part in node.name.split("/")[1:-1] if part]
        if scope[:1] == ["inner"]:
            scope = scope[1:]
        module = ".".join(scope)
        known = [name for name in node.input if name in tensors]
        if not module or not known:
            continue
        if node.op_type in ("MatMul", "MatMulInteger") and node.input[1] in tensors:
            state[f"{module}.weight"] = value(node.input[1]).T  # stored input-major
        elif node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            w = value(node.input[1])
            state[f"{module}.weight"] = w if trans_b else w.T
            if len(node.input) > 2 and node.input[2] in tensors:
                state[f"{module}.bias"] = value(node.input[2])
        elif node.op_type == "Add" and value(known[0]).ndim == 1:
            biases[module] = value(known[0])
        elif node.op_type == "LayerNormalization":
            state[f"{module}.weight"], state[f"{module}.bias"] = value(node.input[1]), value(node.input[2])
        elif node.op_type == "Gather" and node.input[0] in tensors:
            state[f"{module}.weight"] = value(node.input[0])
    for module, bias in biases.items():  # a bias belongs to the linear layer whose product it is added to
        if f"{module}.weight" in state:
            state.setdefault(f"{module}.bias", bias)
    try:
        words = state["bert.embeddings.word_embeddings.weight"]
        hidden = words.shape[1]
        layers = 1 + max(int(k.split(".")[3]) for k in state if k.startswith("bert.encoder.layer."))
        config = BertConfig(vocab_size=words.shape[0], hidden_size=hidden, num_hidden_layers=layers,
                            num_attention_heads=hidden // _head_size(graph, tensors),
                            intermediate_size=state["bert.encoder.layer.0.intermediate.dense.weight"].shape[0],
                            max_position_embeddings=state["bert.embeddings.position_embeddings.weight"].shape[0],
                            type_vocab_size=state["bert.embeddings.token_type_embeddings.weight"].shape[0],
                            num_labels=state["classifier.weight"].shape[0], attn_implementation="eager")
    except (KeyError, ValueError) as exc:
        raise TrainingError(f"{model_dir}: not a BERT classifier this can adapt ({exc})") from None
    model = BertForSequenceClassification(config)
    own = model.state_dict()
    missing = [k for k in own if k not in state and not k.endswith("position_ids")]
    wrong = [k for k in own if k in state and tuple(own[k].shape) != state[k].shape]
    if missing or wrong:
        raise TrainingError(f"{model_dir}: cannot rebuild the model from its ONNX graph ("
                            + (f"no weight for {', '.join(missing[:3])}{'…' if len(missing) > 3 else ''}" if missing
                               else f"{wrong[0]} has shape {state[wrong[0]].shape}") + ")")
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(state[k])) for k in own if k in state},
                          strict=False)
    return model.eval()


def _onnx_file(model_dir: Path) -> Path:
    """The model file the directory's judge loads: its weights are the ones adapted."""
    return load_judge_dir(model_dir).model_file


def _head_size(graph, tensors) -> int:
    """Attention head size: the exporter divides the scores by sqrt(head size) (or multiplies by its inverse)."""
    from onnx import numpy_helper

    constants = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in graph.node
                 if n.op_type == "Constant" and n.attribute and n.attribute[0].type == 4}
    for node in graph.node:
        if node.op_type in ("Div", "Mul") and re.search(r"attention/self/(Div|Mul)(_\d+)?$", node.name):
            for name in node.input:
                c = constants.get(name, tensors.get(name))
                if c is not None and c.size == 1 and float(c) > 0:
                    scale = float(c) if node.op_type == "Div" else 1.0 / float(c)
                    return int(round(scale * scale))
    raise TrainingError("cannot tell the attention head size from the ONNX graph")


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

    def __init__(self, model_dir: Path, settings: Settings):
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

    def fine_tune(self, train: Sequence[Example], held: Sequence[Example], progress: Progress = _quiet,
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


def blend_calibration(base: calib.Calibration, tuned: calib.Calibration, keep: float) -> calib.Calibration:
    return replace(tuned, weights=tuple((1 - keep) * b + keep * t for b, t in zip(base.weights, tuned.weights)),
                   bias=(1 - keep) * base.bias + keep * tuned.bias)


# --- one adaptation, and its cross-validation ------------------------------------------------------------


@dataclass
class Plan:
    """What the labels allow, per route: "fine-tune", "recalibrate" or None (left as it is), and why."""

    english: str | None
    chinese: str | None
    reasons: list[str] = field(default_factory=list)


def class_counts(rows: Sequence[Row]) -> dict[str, int]:
    full = sum(r.label == "full" for r in rows)
    return {"full": full, "not_full": len(rows) - full}


def plan_for(english: Sequence[Row], chinese: Sequence[Row], settings: Settings, torch_available: bool) -> Plan:
    reasons = []
    plan = Plan(None, None, reasons)
    en = min(class_counts(english).values()) if english else 0
    if english:
        if en >= MIN_TO_TUNE and not settings.recalibrate_only and torch_available:
            plan.english = "fine-tune"
        elif en >= MIN_TO_CALIBRATE:
            plan.english = "recalibrate"
            if settings.recalibrate_only:
                reasons.append("English: recalibrating only, as asked")
            elif en < MIN_TO_TUNE:
                reasons.append(f"English: too few labels to fine-tune ({_counts(english)}; fine-tuning needs at "
                               f"least {MIN_TO_TUNE} of each class): recalibrating only")
            else:
                reasons.append("English: torch is not installed (pip install 'citeaudit[train]'): recalibrating only")
        else:
            reasons.append(f"English: too few labels to adapt ({_counts(english)}; recalibrating needs at least "
                           f"{MIN_TO_CALIBRATE} of each class): left as it is")
    zh = min(class_counts(chinese).values()) if chinese else 0
    if chinese:
        if zh >= MIN_TO_CALIBRATE:
            plan.chinese = "recalibrate"
        else:
            reasons.append(f"Chinese: too few labels to refit the threshold ({_counts(chinese)}; it needs at least "
                           f"{MIN_TO_CALIBRATE} of each class): left as it is")
    return plan


def _counts(rows: Sequence[Row]) -> str:
    c = class_counts(rows)
    return f"{c['full']} full, {c['not_full']} not full"


class Adapter:
    """Adapts one judge directory; every fitted piece is made by `adapt`, for a fold or for all rows."""

    def __init__(self, model_dir: Path, settings: Settings, plan: Plan, progress: Progress = _quiet):
        self.model_dir = model_dir
        self.settings = settings
        self.plan = plan
        self.progress = progress
        self.base = base_state(model_dir)
        self._remembered: dict[int, tuple] = {}  # id(weights) -> (weights, their own judgments by request)
        self.question_of: dict[int, str | None] = {}  # id(row) -> its question, to keep a question together
        self._anchor: list[Row] | None = None
        self._anchor_base: float | None = None
        self.base_judge = self.judge_for(self.base)
        self.trainer = Trainer(model_dir, settings) if plan.english == "fine-tune" else None
        self._similarity: dict[int, float] = {}

    def judge_for(self, state: JudgeState, calibrated: bool = True) -> ModelJudge:
        """A judge with `state`, remembering its weights' own judgments for the next judge with them."""
        # the weights are kept with their memory, so that their id cannot be reused while it lives
        _, remembered = self._remembered.setdefault(id(state.model), (state.model, {}))
        return make_judge(self.model_dir, state, self.settings.threads, calibrated, remembered)

    def forget(self, model) -> None:
        if model is not None:
            self._remembered.pop(id(model), None)

    def anchor_accuracy(self, state: JudgeState, stage: str) -> float:
        """Balanced accuracy (full vs rest) of a judge with `state` on the forgetting check's rows."""
        if self._anchor is None:
            self._anchor = anchor_rows(self.settings.anchor_rows, self.settings.anchor_exclude)
        judged = self.judged(state, self._anchor, stage)
        return float(metrics([r.label for r in self._anchor], [j.label for j in judged], [], 0)["balanced_accuracy"])

    def guarded(self, state: JudgeState, stage: str) -> tuple[JudgeState, dict[str, Any]]:
        """`state` moved back toward the base judge (weights and calibration together, by
        INTERPOLATION_STEPS) until it loses at most FORGETTING_LIMIT on the forgetting check's rows."""
        if self._anchor_base is None:
            self._anchor_base = self.anchor_accuracy(self.base, "forgetting check: base judge")
        base = self._anchor_base
        base_model = self.trainer.base if self.trainer else None
        tried, keep, candidate = [], 1.0, state
        while True:
            if keep == 0.0:
                candidate = replace(state, model=None, calibration=self.base.calibration, band=self.base.band)
            elif keep < 1.0:
                candidate = replace(state, model=None if state.model is None else interpolate(base_model, state.model, keep),
                                    calibration=blend_calibration(self.base.calibration, state.calibration, keep),
                                    band=round((1 - keep) * self.base.band + keep * state.band, 2))
            found = self.anchor_accuracy(candidate, f"{stage}: forgetting check, {keep:.0%} of the adaptation")
            tried.append({"kept": keep, "balanced_accuracy": round(found, 4)})
            if base - found <= FORGETTING_LIMIT or keep == 0.0:
                break
            if candidate.model is not state.model:
                self.forget(candidate.model)
            keep = next(k for k in INTERPOLATION_STEPS if k < keep)
        if candidate.model is not state.model:
            self.forget(state.model)
        return candidate, {"rows": len(self._anchor), "base": round(base, 4), "adapted": round(found, 4),
                           "loss": round(base - found, 4), "limit": FORGETTING_LIMIT, "kept": keep, "tried": tried}

    def similarities(self, rows: Sequence[Row]) -> list[float]:
        todo = [r for r in rows if id(r) not in self._similarity]
        judged = self.base_judge.zh_judge.judge_batch([Request.of(r.claim, r.passages) for r in todo]) if todo else []
        for r, j in zip(todo, judged):
            self._similarity[id(r)] = float((j.scores or {}).get("similarity", 0.0))
        return [self._similarity[id(r)] for r in rows]

    def adapt(self, english: Sequence[Row], chinese: Sequence[Row], stage: str) -> tuple[JudgeState, dict]:
        """The adapted state from these rows, and what was done."""
        state = JudgeState(None, self.base.calibration, self.base.band, self.base.zh_threshold)
        record: dict[str, Any] = {}
        if self.plan.english == "recalibrate":
            state.calibration, state.band = fit_calibration(
                calibration_values(self.base_judge, english), [r.label == "full" for r in english], self.base.calibration,
                {"rows": len(english), "full": sum(r.label == "full" for r in english), "model": "base"})
            record["english"] = {"recalibrated_on": len(english), "band": state.band}
        elif self.plan.english == "fine-tune":
            tune, held = _split_held(english, [self.question_of.get(id(r)) for r in english], self.settings.seed)
            if not tune or not held:
                raise TrainingError("the labels fall into one group of pairs sharing a passage or question: "
                                    "nothing is left apart to stop training and calibrate on")
            trainer = self.trainer
            state.model, history = trainer.fine_tune(examples_of(tune, trainer.count, trainer.max_len),
                                                     examples_of(held, trainer.count, trainer.max_len),
                                                          self.progress, stage)
            judge = self.judge_for(state, calibrated=False)
            state.calibration, state.band = fit_calibration(
                calibration_values(judge, held), [r.label == "full" for r in held], self.base.calibration,
                {"rows": len(held), "full": sum(r.label == "full" for r in held), "model": "fine-tuned"})
            record["english"] = {"fine_tuned_on": len(tune), "calibrated_on": len(held), "band": state.band,
                                 **history}
        if self.plan.english is not None and not self.settings.domain_only:
            state, record["forgetting"] = self.guarded(state, stage or "recalibrating")
        if self.plan.chinese == "recalibrate":
            found = best_threshold([r.label == "full" for r in chinese], self.similarities(chinese))
            if found is not None:
                state.zh_threshold = round(found[0], 4)
                record["chinese"] = {"threshold_fitted_on": len(chinese), "threshold": state.zh_threshold}
        return state, record

    def judged(self, state: JudgeState, rows: Sequence[Row], stage: str) -> list[Judgment]:
        return judge_rows(self.judge_for(state), rows, self.progress, stage)


def _split_held(rows: Sequence[Row], questions: Sequence[str | None], seed: int) -> tuple[list[Row], list[Row]]:
    """Three quarters to fine-tune on, a quarter (by passage and question groups) to stop and calibrate on."""
    folds = fold_of(TeamLabels(list(rows), list(questions), ""), 4, seed + 1)
    return [r for r, f in zip(rows, folds) if f != 0], [r for r, f in zip(rows, folds) if f == 0]


def figures(gold: Sequence[str], judgments: Sequence[Judgment], resamples: int, seed: int) -> dict[str, Any]:
    """n, balanced accuracy (full vs rest) and kappa with intervals over every pair (an uncertain
    judgment counted at its best guess), the share uncertain, and balanced accuracy of the rest."""
    pred = [j.label for j in judgments]
    out = metrics(list(gold), pred, [], resamples, seed)
    sure = [i for i, j in enumerate(judgments) if not j.uncertain]
    confident = metrics([gold[i] for i in sure], [pred[i] for i in sure], [], 0, seed) if sure else {}
    return {"n": len(gold), "balanced_accuracy": out["balanced_accuracy"], "balanced_accuracy_ci": out["balanced_accuracy_ci"],
            "kappa": out["kappa"], "kappa_ci": out["kappa_ci"],
            "uncertain": len(gold) - len(sure), "uncertain_share": (len(gold) - len(sure)) / len(gold) if gold else None,
            "balanced_accuracy_confident": confident.get("balanced_accuracy")}


def cross_validate(adapter: Adapter, team: TeamLabels, chinese_of: Sequence[bool]) -> dict[str, Any]:
    """Out-of-fold judgments of every pair by the base judge, by a recalibrated one and by the adapted
    one, each adaptation made without the fold it judges; their figures per route."""
    s = adapter.settings
    folds = fold_of(team, s.folds, s.seed)
    rows = team.rows
    columns = {"base": adapter.judged(adapter.base, rows, "judging with the base judge"),
               "adapted": [None] * len(rows)}
    if adapter.plan.english == "fine-tune":
        columns["recalibrated"] = [None] * len(rows)
    recalibrating = Plan("recalibrate", adapter.plan.chinese)
    kept: list[float | None] = []  # the share of each fold's adaptation the forgetting check kept
    for f in range(s.folds):
        test_ix = [i for i, k in enumerate(folds) if k == f]
        if not test_ix:
            continue
        train_ix = [i for i, k in enumerate(folds) if k != f]
        en_train = [rows[i] for i in train_ix if not chinese_of[i]]
        zh_train = [rows[i] for i in train_ix if chinese_of[i]]
        state, record = adapter.adapt(en_train, zh_train, f"fold {f + 1}/{s.folds}: fine-tuning")
        kept.append((record.get("forgetting") or {}).get("kept"))
        test = [rows[i] for i in test_ix]
        for i, j in zip(test_ix, adapter.judged(state, test, f"fold {f + 1}/{s.folds}: judging")):
            columns["adapted"][i] = j
        adapter.forget(state.model)
        if "recalibrated" in columns:
            plan, adapter.plan = adapter.plan, recalibrating
            state, _ = adapter.adapt(en_train, zh_train, f"fold {f + 1}/{s.folds}: recalibrating")
            adapter.plan = plan
            for i, j in zip(test_ix, adapter.judged(state, test, f"fold {f + 1}/{s.folds}: judging recalibrated")):
                columns["recalibrated"][i] = j
    out: dict[str, Any] = {"folds": s.folds, "fold_sizes": [folds.count(f) for f in range(s.folds)],
                           "kept_per_fold": kept}
    for route, wanted in (("english", False), ("chinese", True)):
        ix = [i for i, z in enumerate(chinese_of) if z == wanted]
        if not ix:
            continue
        out[route] = {name: figures([rows[i].label for i in ix], [judged[i] for i in ix], s.resamples, s.seed)
                      for name, judged in columns.items() if not (route == "chinese" and name == "recalibrated")}
    out["seen"] = seen_claims.unseen_figures(adapter.model_dir, rows, chinese_of, columns,
                                             lambda gold, judged: figures(gold, judged, s.resamples, s.seed))
    return out


def anchor_rows(limit: int | None, exclude: Sequence[str] = ()) -> list[Row]:
    """The shipped English dev rows (one window each) the forgetting check reads, but those of the
    `exclude` sources; a fixed sample of `limit` of them when given."""
    anchor = [Row(f"anchor-{i}", e["hypothesis"], (_passage(e["premise"]),), e["label"], source=e["source"])
              for i, e in enumerate(read_examples(ANCHOR_FILE)) if e["source"] not in exclude]
    if limit and limit < len(anchor):
        anchor = random.Random(0).sample(anchor, limit)
    return anchor


def _passage(text: str):
    from citeaudit.records import SourcePassage

    return SourcePassage(id="W", doc_id="W", version=None, text=text, start=0, end=len(text))


# --- the whole command -------------------------------------------------------------------------------


def torch_available() -> bool:
    """Whether the `train` extra's packages are installed (fine-tuning needs them; recalibrating does not)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("torch", "transformers", "onnx"))


def adapt_judge(team: TeamLabels, out_dir: str | Path, base_dir: str | Path | None = None,
                settings: Settings = Settings(), progress: Progress = _quiet, force: bool = False) -> dict[str, Any]:
    """Cross-validate, adapt on every row, check forgetting, write the judge directory. Nothing is left
    at `out_dir` unless the whole directory was written: it is built in a hidden folder beside it, which
    holds every temporary file of the adaptation, and renamed into place."""
    started = time.monotonic()
    progress, seconds = _timed(progress)
    base_dir = model_dir(base_dir).path  # every file of the base checked before any work
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise InputError([Problem(str(out), None, "", "exists and is not empty (choose another folder or --force)")])
    if out.resolve() == base_dir.resolve():
        raise InputError([Problem(str(out), None, "", "is the judge being adapted; write the adapted judge elsewhere")])
    chinese_of = [is_chinese(Request.of(r.claim, r.passages)) for r in team.rows]
    english = [r for r, z in zip(team.rows, chinese_of) if not z]
    chinese = [r for r, z in zip(team.rows, chinese_of) if z]
    plan = plan_for(english, chinese, settings, torch_available())
    report: dict[str, Any] = {
        "labels": {"described_as": team.described_as, "pairs": len(team.rows), "sha256": team.content_hash(),
                   "english": class_counts(english), "chinese": class_counts(chinese),
                   "conflicting_pairs_left_out": team.conflicts},
        "base": {"dir": str(base_dir), "sha256": directory_sha256(base_dir)},
        "plan": {"english": plan.english, "chinese": plan.chinese, "reasons": plan.reasons},
        "settings": {k: v for k, v in vars(settings).items() if k != "threads"},
    }
    if plan.english is None and plan.chinese is None:
        raise InputError([Problem(team.described_as or "labels", None, "labels",
                                  "too few labels to adapt the judge: " + "; ".join(plan.reasons))])
    # made first: a destination that cannot be written is refused before any work
    with temporary_folder_beside(out, "--out") as work, _temporaries_in(work):
        adapter = Adapter(base_dir, settings, plan, progress)
        adapter.question_of = {id(r): q for r, q in zip(team.rows, team.questions)}
        if settings.folds >= 2:
            report["cross_validation"] = cross_validate(adapter, team, chinese_of)
        state, record = adapter.adapt(english, chinese, "fine-tuning on every pair")
        if "forgetting" in record:
            report["forgetting"] = record.pop("forgetting")
        report["adaptation"] = record
        report["minutes"] = round((time.monotonic() - started) / 60, 2)
        progress("writing the judge", 0, 1)
        written = write_judge(out, base_dir, state, report, work, [r.claim for r in team.rows])
    report["judge"] = {"dir": str(out), "sha256": directory_sha256(written),
                       "spec": f"model:path={out}"}
    report["minutes"] = round((time.monotonic() - started) / 60, 2)
    progress("writing the judge", 1, 1)
    report["seconds_by_stage"] = {stage: round(s, 1) for stage, s in seconds.items()}
    return report


def _timed(progress: Progress) -> tuple[Progress, dict[str, float]]:
    """`progress`, noting how long each stage took (from its first report to its last)."""
    first: dict[str, float] = {}
    seconds: dict[str, float] = {}

    def timed(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        first.setdefault(stage, now)
        seconds[stage] = now - first[stage]
        progress(stage, done, total)

    return timed, seconds


@contextmanager
def _temporaries_in(folder: Path) -> Iterator[None]:
    """Temporary files made without a folder named (onnxruntime's quantiser copies the model to one) go to
    `folder` too, not to the system's temporary folder, where a killed run would leave them."""
    before, tempfile.tempdir = tempfile.tempdir, str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = before


def write_judge(out: Path, base_dir: Path, state: JudgeState, report: dict, work: Path,
                team_claims: Sequence[str] = ()) -> Path:
    """The judge directory, built in `work` (a hidden folder beside `out`, removed by the caller) and
    renamed into place; what it has seen is the base's claims and `team_claims` (training/seen_claims.py)."""
    from citeaudit.training.export import SHIPPED_FILES

    built = work / "judge"
    built.mkdir()  # with the mode any new folder gets, as the judge's other readers expect
    if state.model is not None:
        _export(state.model, base_dir, built, work)
    else:
        for name in SHIPPED_FILES:
            shutil.copyfile(_onnx_file(base_dir) if name.endswith(".onnx") else base_dir / name, built / name)
    cal = replace(state.calibration, band=state.band, zh_threshold=state.zh_threshold,
                  fitted_on={**state.calibration.fitted_on, "adapted_from": report["base"],
                             "labels_sha256": report["labels"]["sha256"]})
    cal.save(built)
    seen_claims.add_claims(built, base_dir, team_claims,
                           f"adapt-judge on the team's labels (sha256 {report['labels']['sha256'][:12]})")
    _write_card(built, report, {name: file_sha256(built / name) for name in SHIPPED_FILES})
    if out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    built.rename(out)
    return out


def _export(model, base_dir: Path, dest: Path, work: Path) -> None:
    """`model` as the judge's int8 ONNX model in `dest`, by way of its transformers and fp32 ONNX forms in `work`."""
    from citeaudit.training.export import export_fp32, quantize_int8

    hf = work / "hf"
    model.save_pretrained(hf)
    shutil.copyfile(base_dir / "tokenizer.json", hf / "tokenizer.json")
    export_fp32(hf, work / "fp32", MAX_LEN)
    quantize_int8(work / "fp32", dest)
    config = json.loads((base_dir / "config.json").read_text(encoding="utf-8"))
    (dest / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")


def _write_card(work: Path, report: dict, files: dict[str, str]) -> None:
    """The card, with the hashes of the files the judge reads: loading checks them (judges/judge_dir.py)."""
    card = {"name": "citeaudit judge-v1, adapted", "adapted_from": report["base"], "labels": report["labels"],
            "plan": report["plan"], "settings": report["settings"], "adaptation": report.get("adaptation"),
            "cross_validation": report.get("cross_validation"), "forgetting": report.get("forgetting"),
            "files": files}
    (work / "model_card.json").write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (work / "MODEL_CARD.md").write_text(render_card(card), encoding="utf-8")


def render_card(card: dict) -> str:
    labels = card["labels"]
    lines = ["# citeaudit model judge, adapted to a team's labels", "",
             f"- adapted from: `{card['adapted_from']['dir']}` (sha256 `{card['adapted_from']['sha256'][:16]}…`)",
             f"- labels: {labels['pairs']} pairs ({labels['described_as']}), sha256 `{labels['sha256'][:16]}…`; "
             f"English {labels['english']}, Chinese {labels['chinese']}",
             f"- English: {card['plan']['english'] or 'unchanged'}; Chinese: {card['plan']['chinese'] or 'unchanged'}",
             *[f"- {reason}" for reason in card["plan"]["reasons"]], ""]
    lines += render_figures(card)
    return "\n".join(lines) + "\n"


def render_figures(report: dict) -> list[str]:
    """The cross-validated figures and the forgetting check, as text lines."""
    lines = []
    cv = report.get("cross_validation")
    if cv:
        lines.append(f"Cross-validated agreement with the team's labels ({cv['folds']} folds, pairs sharing a "
                     f"passage or question kept together; fold sizes {cv['fold_sizes']}):")
        for route in ("english", "chinese"):
            for name, f in (cv.get(route) or {}).items():
                lines.append(_figure_line(route, name, f))
        lines += seen_claims.render_unseen(cv.get("seen"), _figure_line)
    forgetting = report.get("forgetting")
    if forgetting:
        lines.append(f"Forgetting check on {forgetting['rows']} shipped English dev rows: BAcc {forgetting['base']:.3f} "
                     f"-> {forgetting['adapted']:.3f} (limit -{forgetting['limit']}; kept {forgetting['kept']:.0%} "
                     "of the adaptation)")
    return lines


def _figure_line(route: str, name: str, f: dict) -> str:
    return (f"  {route:<8} {name:<13} n={f['n']:<4} BAcc {_fig(f['balanced_accuracy'], f['balanced_accuracy_ci'])}"
            f"  kappa {_fig(f['kappa'], f['kappa_ci'])}  uncertain {f['uncertain_share']:.0%}")


def _fig(value: float | None, ci) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
