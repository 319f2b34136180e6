"""Local sequence-classification models as judges: `hf:PATH` (transformers) and `onnx:PATH` (onnxruntime).

Both read a model directory, map its `id2label` onto full / partial / none / contradicts, cut long
passages into sentence windows (never truncating silently), and judge in batches sorted by length so
that each batch pads only to its own longest pair. The signature carries a hash of the model files,
so a changed model never reuses stale judgments.

A cited set is read whole when it fits (ALCE joins the cited passages); otherwise each window is read
on its own and the set is `full` when some window entails the claim. A window that contradicts the
claim makes the label `contradicts` unless another window entails it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from citeaudit.errors import JudgeSetupError, JudgeError
from citeaudit.extras import require
from citeaudit.records import LABELS, Evidence, Judgment, Label, SourcePassage, directory_sha256
from citeaudit.judges.base import Request
from citeaudit.judges.cache import BoundedCache
from citeaudit.judges.judge_dir import load_judge_dir
from citeaudit.judges.spec import HF, ONNX, Options
from citeaudit.judges.windows import Window, set_windows, window_reporter

VERSION = "1"
COUNTS_REMEMBERED = 200_000  # token counts kept per judge
ScoredWindows = list[tuple[list[Window], dict[str, float]]]  # one request's windows, each with its class scores


@dataclass(frozen=True)
class WindowRank:
    """How a request's windows are ranked when its best is chosen: `score(request index, window text, class
    scores)`, and what it is called in the explanation when it picks another window than p(full) would."""

    name: str
    score: Callable[[int, str, dict[str, float]], float]

# Class names seen in NLI and attribution checkpoints, lower-cased, "-" and " " read as "_".
LABEL_ALIASES: dict[str, Label] = {
    **dict.fromkeys(["full", "entailment", "entails", "entailed", "supported", "support", "supports", "attributable",
                     "consistent", "faithful", "yes"], "full"),
    **dict.fromkeys(["partial", "partially_supported", "partially_support", "partial_support"], "partial"),
    **dict.fromkeys(["none", "neutral", "not_entailment", "non_entailment", "not_entailed", "not_supported", "unsupported",
                     "not_enough_info", "nei", "not_attributable", "hallucinated", "irrelevant", "no"], "none"),
    **dict.fromkeys(["contradiction", "contradicts", "contradict", "contradicted", "refuted", "refutes", "refute"],
                    "contradicts"),
}


def map_labels(id2label: dict[int, str], override: dict[str, Label] | None = None) -> dict[int, Label]:
    mapping, unknown = {}, []
    for idx, name in sorted(id2label.items()):
        key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
        label = (override or {}).get(str(name)) or (override or {}).get(key) or LABEL_ALIASES.get(key)
        if label is None:
            unknown.append(str(name))
        else:
            mapping[int(idx)] = label
    if unknown or "full" not in mapping.values():
        raise JudgeSetupError(
            f"cannot map the model's labels {sorted(map(str, id2label.values()))} onto {', '.join(LABELS)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else " (no class means 'supported')")
            + "; give the mapping after '::', e.g. hf:PATH::LABEL_0=none,LABEL_1=full")
    return mapping


_hashed: BoundedCache[tuple, str] = BoundedCache(32)


def model_hash(path: Path) -> str:
    """SHA-256 over every file of the model directory (names and contents), hidden files and the record
    of the claims it trained on left out (records.directory_sha256). Read once per version of its files
    (names, sizes, modification times), as load_judge_dir checks a directory once: every judge built from
    a directory signs with its hash, an adaptation builds many, and a judge-v1 holding an adapted judge-v2
    signs with the hash of each."""
    path = Path(path)
    listing = tuple(sorted((str(f.relative_to(path)), stat.st_size, stat.st_mtime_ns)
                           for f in path.rglob("*") if f.is_file() for stat in [f.stat()]))
    key = (str(path.resolve()), listing)
    found = _hashed.get(key)
    return found if found is not None else _hashed.put(key, directory_sha256(path))


class _HFBackend:
    extra = "hf"

    def __init__(self, path: Path, threads: int | None):
        require("torch", "hf", "this judge")
        require("transformers", "hf", "this judge")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        if threads:
            torch.set_num_threads(threads)
        # a local directory: never reach for a hub
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True).eval()
        self.id2label = {int(k): v for k, v in self.model.config.id2label.items()}
        self.max_length = min(int(getattr(self.model.config, "max_position_embeddings", 512)),
                              int(getattr(self.tokenizer, "model_max_length", 512) or 512))
        self.pair_specials = self.tokenizer.num_special_tokens_to_add(pair=True)

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def predict(self, premises: list[str], hypotheses: list[str]):
        import torch

        batch = self.tokenizer(premises, hypotheses, padding=True, truncation=False, return_tensors="pt")
        with torch.no_grad():
            return torch.softmax(self.model(**batch).logits, dim=-1).numpy()


class _ONNXBackend:
    extra = "onnx"

    def __init__(self, path: Path, threads: int | None):
        require("onnxruntime", "onnx", "this judge")
        require("tokenizers", "onnx", "this judge")
        from tokenizers import Tokenizer

        files = load_judge_dir(path)  # every file checked first: a damaged one is named, not a traceback
        self.id2label = {int(k): v for k, v in files.config["id2label"].items()}
        self.max_length = int(files.config.get("max_position_embeddings", 512))
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        processor = self.tokenizer.post_processor
        self.pair_specials = processor.num_special_tokens_to_add(True) if processor is not None else 0
        self.load_model(files.model_file, threads)

    def load_model(self, model_file: Path, threads: int | None) -> None:
        """Run `model_file` (an ONNX graph with this tokenizer's inputs and these labels) from now on."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        try:
            self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        except Exception as err:  # a graph damaged inside a sound file (no card hash to catch it)
            raise JudgeSetupError(f"{model_file}: onnxruntime cannot load it "
                                  f"({str(err).strip().splitlines()[0][:200]})") from None
        # Feed inputs by *name*: an exported graph's input order is not guaranteed.
        self.inputs = {i.name for i in self.session.get_inputs()}

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def predict(self, premises: list[str], hypotheses: list[str]):
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(zip(premises, hypotheses)))
        width = max(len(e.ids) for e in encodings)
        feed = {
            "input_ids": np.array([e.ids + [0] * (width - len(e.ids)) for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask + [0] * (width - len(e.ids)) for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids + [0] * (width - len(e.ids)) for e in encodings], dtype=np.int64),
        }
        logits = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return exp / exp.sum(axis=-1, keepdims=True)


BACKENDS = {"hf": _HFBackend, "onnx": _ONNXBackend}


class CrossEncoderJudge:
    """A (passage, claim) sequence classifier behind the judge protocol."""

    def __init__(self, kind: str, path: str | Path, label_map: dict[str, Label] | None = None,
                 max_tokens: int | None = None, batch_size: int = 16, threads: int | None = None):
        self.name = kind
        self.path = Path(path)
        if not self.path.is_dir():
            raise JudgeSetupError(f"no model directory at {self.path}")
        self.backend = BACKENDS[kind](self.path, threads)
        self.labels = map_labels(self.backend.id2label, label_map)
        self.max_tokens = min(max_tokens or self.backend.max_length, self.backend.max_length)
        self.batch_size = batch_size
        self._counts: BoundedCache[str, int] = BoundedCache(COUNTS_REMEMBERED)  # see count()
        mapping = ",".join(f"{self.backend.id2label[i]}={lab}" for i, lab in sorted(self.labels.items()))
        self.signature = (f"{kind}:{self.path.name}@{VERSION}#{model_hash(self.path)[:12]}"
                          f"|max={self.max_tokens}|map={mapping}")

    def window_budget(self, claim_tokens: int) -> int:
        """Tokens left for the evidence beside a claim of `claim_tokens` and the pair's special tokens
        (3 for BERT's `[CLS] a [SEP] b [SEP]`, 4 for XLM-R's `<s> a </s></s> b </s>`)."""
        return self.max_tokens - claim_tokens - self.backend.pair_specials

    def count(self, text: str) -> int:
        """Tokens in `text`, remembered: a passage cited by several claims, or judged alone and in its
        set for ALCE precision, is cut into the same windows again, and counting is most of the
        windowing cost. Bounded, so a long run does not grow without end."""
        return self._counts.get_or_compute(text, self.backend.count)

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self.judge_batch([Request.of(text, passages)])[0]

    def judge_batch(self, requests: Sequence[Request], evidence_texts: list[str] | None = None,
                    rank: WindowRank | None = None) -> list[Judgment]:
        """Judge each request; when `evidence_texts` is a list, the text of each judgment's chosen window
        (or joined set) is appended to it, so a caller can check the evidence without re-windowing.
        `rank` orders a request's windows when the best one is chosen (default: p(full))."""
        decided = [self._decide(windows, rank, i) for i, windows in enumerate(self.scored_windows(requests))]
        if evidence_texts is not None:
            evidence_texts.extend(text for _, text in decided)
        return [j for j, _ in decided]

    def scored_windows(self, requests: Sequence[Request]) -> list[ScoredWindows]:
        """Each request's windows (or joined sets) with the model's class scores for each: the forward
        passes, before any window is chosen."""
        pairs: list[tuple[int, list[Window], str]] = []  # (request index, windows, premise text)
        for i, request in enumerate(requests):
            budget = self.window_budget(self.count(request.text))
            if budget < 16:
                raise JudgeError(f"claim too long for a {self.max_tokens}-token model: {request.text[:80]!r}")
            for windows in set_windows(request.passages, self.count, budget):
                pairs.append((i, windows, "\n".join(w.text for w in windows)))
        probs = [None] * len(pairs)
        order = sorted(range(len(pairs)), key=lambda k: len(pairs[k][2]))  # batch by length
        told = window_reporter()
        for b in range(0, len(order), self.batch_size):
            chunk = order[b : b + self.batch_size]
            out = self.backend.predict([pairs[k][2] for k in chunk], [requests[pairs[k][0]].text for k in chunk])
            for k, row in zip(chunk, out):
                probs[k] = row
            told(b + len(chunk), len(order))
        return self._scored(len(requests), [(i, windows) for i, windows, _ in pairs], probs)

    def _scored(self, n_requests: int, pairs: Sequence[tuple[int, list[Window]]], probs: Sequence) -> list[ScoredWindows]:
        """The windows of each request with their class probabilities (pairs: request index, windows)."""
        per_request: list[ScoredWindows] = [[] for _ in range(n_requests)]
        for (i, windows), row in zip(pairs, probs):
            scores = dict.fromkeys(LABELS, 0.0)
            for idx, p in enumerate(row):
                scores[self.labels[idx]] += float(p)
            per_request[i].append((windows, scores))
        return per_request

    def _decide(self, windows: ScoredWindows, rank: WindowRank | None = None, request: int = 0) -> tuple[Judgment, str]:
        """The judgment of one request (its index `request`) from its windows' scores, and the text of the
        chosen window: the one `rank` puts highest, else the one of highest p(full)."""
        def top(scores: dict[str, float]) -> str:
            return max(scores, key=scores.get)

        by_full = best = max(windows, key=lambda ws: ws[1]["full"])
        if rank is not None and len(windows) > 1:
            best = max(windows, key=lambda ws: rank.score(request, "\n".join(w.text for w in ws[0]), ws[1]))
        ranked = best
        label = "full" if top(best[1]) == "full" else None
        if label is None:
            for wanted in ("contradicts", "partial"):
                hits = [ws for ws in windows if top(ws[1]) == wanted]
                if hits:
                    best, label = max(hits, key=lambda ws: ws[1][wanted]), wanted
                    break
        label = label or "none"
        chosen, scores = best
        span = chosen[0]
        cut = any(w.cut for ws, _ in windows for w in ws)
        explanation = (f"best of {len(windows)} window(s): {span.passage}[{span.start}:{span.end}], "
                       f"p(full)={scores['full']:.3f}" + ("; a sentence longer than the model's window was cut" if cut else ""))
        if best is ranked is not by_full:
            other = by_full[0][0]
            explanation += (f"; picked by {rank.name} over the window of highest p(full), "
                            f"{other.passage}[{other.start}:{other.end}] (p(full)={by_full[1]['full']:.3f})")
        judgment = Judgment(label=label, judge=self.signature, explanation=explanation,
                            evidence=Evidence(passage=span.passage, start=span.start, end=span.end),
                            scores={k: round(v, 6) for k, v in scores.items()})
        return judgment, "\n".join(w.text for w in chosen)


def local_judge(kind: str, options: Options) -> CrossEncoderJudge:
    """An hf or onnx judge from its parsed spec (PATH, label mapping, threads, window size)."""
    return CrossEncoderJudge(kind, options.head, options.labels, max_tokens=options["max_tokens"],
                             threads=options["threads"])


def make_local_judge(kind: str, argument: str) -> CrossEncoderJudge:
    """`hf:PATH`, `onnx:PATH::LABEL_0=none,LABEL_1=full,threads=2`, as named on the command line (the part
    after 'hf:' or 'onnx:'); threads and window size default to CITEAUDIT_THREADS / CITEAUDIT_MAX_TOKENS."""
    return local_judge(kind, (HF if kind == "hf" else ONNX).parse(argument))
