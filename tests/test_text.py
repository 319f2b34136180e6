"""citeaudit.text: sentence spans (pysbd), how Chinese a text is, content words."""

from __future__ import annotations

import pytest

from citeaudit import text as text_module
from citeaudit.text import (
    content_language, content_words, detect_language, han_share, majority_language, has_han, rule_sentence_spans, sentence_spans,
)


def sentences(text: str, lang: str | None = None) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text, lang)]


# --- sentences ------------------------------------------------------------------------------------


def test_english_sentences_keep_abbreviations_and_decimals_whole():
    text = "Dr. Smith measured 15.5 % in v3.1 of the U.S. trial. Results, e.g. the yield, rose. Next?"
    assert sentences(text) == ["Dr. Smith measured 15.5 % in v3.1 of the U.S. trial.",
                               "Results, e.g. the yield, rose.", "Next?"]


def test_chinese_sentences_end_at_chinese_punctuation_without_spaces():
    text = "试点持续30天。能耗降低了15%！是否继续？"
    assert sentences(text) == ["试点持续30天。", "能耗降低了15%！", "是否继续？"]
    assert sentences(text, "zh") == sentences(text)  # detected as Chinese


def test_every_line_break_ends_a_sentence():
    assert sentences("Heading without a stop\nthen a line. And more") == [
        "Heading without a stop", "then a line.", "And more"]


@pytest.mark.parametrize("text", [
    "", "   ", "One.", "  Leading and trailing space.  ", "A. B. C.\n\n\nD?! E… f", "上限为80 °C。\n试点持续30天！ OK.",
    "Approx. 15 % of 1,200 units (Fig. 2).Then more;  and more",
])
def test_spans_cover_the_text_in_order_without_whitespace_edges(text):
    spans = sentence_spans(text)
    assert all(a < b for a, b in spans) and all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))
    assert all(not text[a].isspace() and not text[b - 1].isspace() for a, b in spans)
    assert all("\n" not in text[a:b] for a, b in spans)
    covered = {i for a, b in spans for i in range(a, b)}
    assert {i for i, c in enumerate(text) if not c.isspace()} <= covered


def test_the_rule_splitter_differs_from_pysbd_where_documented():
    text = "Energy fell 15%; downtime fell 10%. It ran Dr. Who\nNext line"
    assert sentences(text) == ["Energy fell 15%; downtime fell 10%.", "It ran Dr. Who", "Next line"]
    assert [text[a:b] for a, b in rule_sentence_spans(text)] == [
        "Energy fell 15%;", "downtime fell 10%.", "It ran Dr. Who", "Next line"]


@pytest.mark.parametrize("text", ["", "One.", "  A. B;  C!\n\nD", "上限为80 °C。试点持续30天！ OK", "e.g. this. No. 5 is."])
def test_rule_spans_cover_the_text_in_order(text):
    spans = rule_sentence_spans(text)
    assert all(a < b for a, b in spans) and all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))
    assert all(not text[a].isspace() and not text[b - 1].isspace() for a, b in spans)
    assert {i for i, c in enumerate(text) if not c.isspace()} <= {i for a, b in spans for i in range(a, b)}


def test_an_unknown_language_falls_back_to_english_rules():
    assert sentences("One. Two.", "xx") == ["One.", "Two."]


def test_sentence_spans_are_remembered_per_text_and_language():
    text_module._spans.cache_clear()
    sentence_spans("Remembered. Once.")
    sentence_spans("Remembered. Once.")
    info = text_module._spans.cache_info()
    assert (info.hits, info.misses) == (1, 1) and info.maxsize is not None  # bounded
    spans = sentence_spans("Remembered. Once.")
    spans.append((0, 1))  # a caller's list: the remembered spans stay as they were
    assert sentence_spans("Remembered. Once.") == [(0, 11), (12, 17)]


# --- how Chinese ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, lang", [
    ("The pilot ran for 30 days.", "en"),
    ("试点持续30天，Eco 模式下能耗降低15%。", "zh"),
    ("The name 张伟 appears once in this long English sentence.", "en"),
    ("“Eco”模式", "zh"),
    ("", "en"),
])
def test_detect_language(text, lang):
    assert detect_language(text) == lang


def test_han_share_counts_han_among_letters():
    assert han_share("") == 0.0 and han_share("123 !") == 0.0
    assert han_share("能耗") == 1.0
    assert han_share("ab能耗") == pytest.approx(0.5)  # two Latin letters, two Han
    assert han_share("能耗 80%。") == 1.0  # digits, symbols and punctuation are not letters
    assert han_share("能耗 80 °C") == pytest.approx(2 / 3)  # the C of °C is a letter
    assert han_share("かな漢字") == pytest.approx(0.5)  # kana are letters but not Han
    assert han_share("\u3400x") == pytest.approx(0.5)  # extension A is Han


@pytest.mark.parametrize("text, lang", [
    ("The continuous limit is 80 °C.", "en"),
    ("连续运行温度上限为 80 °C。", "zh"),
    ("我们用 Transformer 模型做了实验。", "zh"),  # a Chinese sentence naming an English term
    ("The term 人工智能 means artificial intelligence.", "en"),  # an English one quoting Chinese
    ("", "en"), ("80 %", "en"),
])
def test_content_language(text, lang):
    assert content_language(text) == lang


def test_a_long_text_s_language_is_told_from_its_start():
    assert content_language("能耗" * 600 + "energy " * 10_000) == "zh"


@pytest.mark.parametrize("languages, lang", [
    (["zh", "zh", "en"], "zh"), (["en", "zh", "en"], "en"), (["zh", "en"], "en"), ([], "en"), (["zh"], "zh")])
def test_majority_language(languages, lang):
    assert majority_language(languages) == lang


def test_has_han():
    assert has_han("price 价格") and has_han("\u4e00") and has_han("\u3400")
    assert not has_han("かな, ＡＢＣ, plain text")


# --- content words --------------------------------------------------------------------------------


def test_content_words_english():
    assert content_words("The returns of standard items") == {"return", "standa", "items"}
    assert content_words("It is what it is") == set()
    assert content_words("Version 3.11 costs $1,200") == {"versio", "3", "11", "costs", "1", "200"}


def test_content_words_chinese_bigrams_and_single_characters():
    assert content_words("能耗降低") == {"能耗", "耗降", "降低"}
    assert content_words("能") == {"能"}
    assert content_words("Eco模式") == {"eco", "模式"}
