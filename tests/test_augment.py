"""Short plain pairs made from real passages (training/augment.py), and the hand-written plain sets the
judge is measured on (benchmarks/data/plain_*.jsonl)."""

import random
from collections import Counter
from pathlib import Path

import pytest

from citeaudit.training import augment

PLAIN_SET = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "plain_support.jsonl"
HOLDOUT_SET = PLAIN_SET.with_name("plain_holdout.jsonl")
HARD_SET = PLAIN_SET.with_name("plain_hard.jsonl")
WRITTEN_SETS = sorted(PLAIN_SET.parent.glob("plain_*.jsonl"))  # every hand-written plain set, fresh ones too


@pytest.mark.parametrize("sentence, zh, want", [
    ("To reset the router, hold the button for ten seconds.", False, "Hold the button for ten seconds."),
    ("The pump is quiet; it runs on 12 volts.", False, "The pump is quiet."),
    ("如需重启平板，请按住电源键10秒。", True, "请按住电源键10秒。"),
    ("本产品重1.2公斤；保修两年。", True, "本产品重1.2公斤。"),
    ("The pump runs on 12 volts.", False, None),  # one clause: nothing to take apart
])
def test_a_clause_stands_on_its_own(sentence, zh, want):
    assert augment.clause_of(sentence, zh) == want


def test_a_changed_number_is_another_number():
    rng = random.Random(0)
    for sentence in ("Hold the button for 10 seconds.", "The battery holds 72.5 Wh.", "电池容量为72瓦时。"):
        changed = augment.with_number_changed(sentence, rng)
        assert changed and changed != sentence
        assert [c for c in changed if not c.isdigit() and c != "."] == [c for c in sentence if not c.isdigit() and c != "."]
    assert augment.with_number_changed("No figures here.", rng) is None


@pytest.mark.parametrize("sentence, zh, allowed", [
    ("Hold it for 10 seconds.", False, {"Hold it for 10 minutes.", "Hold it for 10 hours."}),
    ("按住10秒。", True, {"按住10分钟。", "按住10小时。"}),
    ("早在20世纪20年代就有了。", True, None),  # 20年代 is a decade, not a number of years
])
def test_a_unit_is_swapped_for_one_of_its_kind(sentence, zh, allowed):
    got = augment.with_unit_swapped(sentence, random.Random(0), zh)
    assert (got in allowed) if allowed else got is None


@pytest.mark.parametrize("sentence, zh, want", [
    ("The tablet is waterproof.", False, "The tablet is not waterproof."),
    ("The tablet is not waterproof.", False, "The tablet is waterproof."),
    ("Dogs cannot enter.", False, "Dogs can enter."),
    ("这款平板不防水。", True, "这款平板防水。"),
    ("客房内禁止携带宠物。", True, "客房内允许携带宠物。"),
])
def test_negation_is_added_or_removed(sentence, zh, want):
    assert augment.with_negation_flipped(sentence, random.Random(0), zh) == want


@pytest.mark.parametrize("sentence, zh, want", [
    ("The tablet is splash resistant, but it is not waterproof.", False, "The tablet is splash resistant."),
    ("If the light turns red, unplug the charger at once.", False, None),  # a condition is not said
    ("The pump, a small one.", False, None),  # too short to stand on its own
    ("这款平板具备防溅功能，但并不防水。", True, "这款平板具备防溅功能。"),
    ("如果指示灯变红，请立即拔掉充电器。", True, None),
])
def test_the_head_of_a_sentence_stands_on_its_own_or_is_not_taken(sentence, zh, want):
    assert augment.head_of(sentence, zh) == want


def test_a_swapped_word_comes_from_the_sentences_around_it():
    rng = random.Random(0)
    sentence = "Press the green button to start the scan."
    around = ["The red button cancels a scan in progress."]
    for _ in range(20):
        got = augment.with_word_swapped(sentence, around, rng, zh=False)
        changed = set(got.split()) - set(sentence.split())
        assert len(changed) == 1 and changed.pop().strip(".") in {"button", "cancels", "scan", "progress", "red"}
    assert augment.with_word_swapped(sentence, [], rng, zh=False) is None
    zh = augment.with_word_swapped("按绿色按钮开始扫描。", ["红色按钮用于取消扫描。"], rng, zh=True)
    assert zh and zh != "按绿色按钮开始扫描。" and len(zh) == len("按绿色按钮开始扫描。")


@pytest.mark.parametrize("sentence, zh, allowed", [
    ("Revenue rose 8% in 2023.", False, {"Revenue fell 8% in 2023."}),
    ("Pets are allowed in the rooms.", False, {"Pets are prohibited in the rooms."}),
    ("2023年营业收入增长8%。", True, {"2023年营业收入下降8%。"}),
    ("本折扣不包括网上订单。", True, None),  # 不包括 is turned round as a whole, never to 不不包括
    ("The sky is blue.", False, None),
])
def test_a_word_is_turned_into_its_opposite(sentence, zh, allowed):
    got = augment.with_opposite(sentence, random.Random(0), zh)
    if allowed is None:
        assert got is None or "不不" not in got
    else:
        assert got in allowed


def test_derived_pairs_cover_every_kind_with_its_label():
    passages = [("a", "To reset the Alpha unit, hold the power button for 10 seconds. Then release it and wait. "
                      "The Alpha unit is not waterproof; keep it dry. It weighs 4 kg and costs 300 dollars."),
                ("a", "Maria Lopez founded the company in 1998 in Madrid. The company employs 250 people. "
                      "Its main factory is 12 km from the city centre and it is open on weekdays."),
                ("a", "Store the vaccine between 2 and 8 degrees. The vaccine can be kept for 6 months. "
                      "Peter Brown leads the research team in Boston. The team has published 40 papers."),
                ("a", "Sales rose sharply in the north region, and the company hired new staff there. "
                      "The warehouse stays open after the holidays, with extra loading bays.")] * 4
    pairs = augment.derived_pairs(passages, per_kind=2, seed=1, lang="en")
    kinds = Counter(p["derived"] for p in pairs)
    assert set(kinds) == set(augment.KINDS)
    for p in pairs:
        assert p["label"] == augment.LABELS[p["derived"]]
        assert p["source"] == "derived-en" and p["kind"] == "derived"
        if p["derived"] == "copy":
            assert p["hypothesis"] in p["premise"]
        if p["derived"] in ("number", "unit", "negation", "name"):
            assert p["hypothesis"] not in p["premise"]


def test_chinese_pairs_have_no_name_swaps():
    passages = [("c", "如需重启平板，请按住电源键10秒。平板不防水，请勿浸入水中。本产品重1.2公斤，售价300元。"),
                ("c", "公司成立于1998年，现有员工250人。工厂距离市中心12公里，工作日开放。")] * 4
    pairs = augment.derived_pairs(passages, per_kind=2, seed=0, lang="zh")
    kinds = {p["derived"] for p in pairs}
    assert "name" not in kinds and {"copy", "number", "negation"} <= kinds
    assert all(p["source"] == "derived-zh" for p in pairs)


@pytest.mark.parametrize("path, least", [(PLAIN_SET, 25), (HOLDOUT_SET, 18), (HARD_SET, 200)] + [
    (path, 12) for path in WRITTEN_SETS if path.name.startswith("plain_fresh")])
def test_the_plain_sets_are_balanced_in_both_languages_and_load_as_labelled_rows(path, least):
    from citeaudit.files.labelled import load_rows

    rows = load_rows(str(path))
    by_lang = Counter((r.lang, r.label == "full") for r in rows)
    for lang in ("en", "zh"):
        full, rest = by_lang[(lang, True)], by_lang[(lang, False)]
        assert full >= least and rest >= least and abs(full - rest) <= 5, (lang, full, rest)
    assert len({(r.claim, r.passages[0].text) for r in rows}) == len(rows)  # no pair twice


def test_no_measured_pair_reaches_a_mix():
    """The derived pairs are drawn from the train split's passages: none of them holds a claim or a passage
    of the sets the judge is measured on."""
    from citeaudit.errors import TrainingError
    from citeaudit.files.labelled import load_rows
    from citeaudit.training.data import load_all, split_rows

    try:
        train = split_rows(load_all(None))["train"]
    except TrainingError as err:  # a clone without the shared data beside it
        pytest.skip(str(err))
    assert len(WRITTEN_SETS) >= 7
    measured = [r for path in WRITTEN_SETS for r in load_rows(str(path))]
    claims = {r.claim.strip() for r in measured}
    passages = [r.passages[0].text for r in measured]
    for lang in ("en", "zh"):
        texts = [(r["source"], p["text"]) for r in train if r["lang"] == lang for p in r["passages"]]
        pairs = augment.derived_pairs(texts, 300, seed=0, lang=lang)
        assert len(pairs) > 1000
        assert not claims & {p["hypothesis"].strip() for p in pairs}
        premises = "\n".join(p["premise"] for p in pairs)
        assert not [t for t in passages if t in premises]
