"""Sentence splitting, which sentence a marker belongs to, cleaned text and offsets."""

from __future__ import annotations

import pytest

from citeaudit.parse import detect_language, parse_answer

from test_parse_common import SOURCES, assert_offsets


def split(text: str, **kw) -> list[tuple[str, list[str]]]:
    statements = parse_answer(text, SOURCES, **kw)
    assert_offsets(text, statements)
    return [(st.text, st.citations) for st in statements]


@pytest.mark.parametrize(
    "text, expected",
    [
        # abbreviations, decimals, versions, units stay inside their sentence
        ("Dr. Smith measured 80 °C [1]. The tool v3.1 was used [2].",
         [("Dr. Smith measured 80 °C.", ["D1"]), ("The tool v3.1 was used.", ["D2"])]),
        ("Eco saves 15.5 % energy, e.g. in winter [1]. It costs $3.50 per unit [2].",
         [("Eco saves 15.5 % energy, e.g. in winter.", ["D1"]), ("It costs $3.50 per unit.", ["D2"])]),
        ("The U.S. economy grew 2.1% in Q3 [1]. Mr. Jones agreed [2].",
         [("The U.S. economy grew 2.1% in Q3.", ["D1"]), ("Mr. Jones agreed.", ["D2"])]),
        ("Python 3.11.2 is required [1]. It runs at 2.4 GHz [2].",
         [("Python 3.11.2 is required.", ["D1"]), ("It runs at 2.4 GHz.", ["D2"])]),
        ("It was released in Jan. 2020 [1]. It fixed bugs [2].",
         [("It was released in Jan. 2020.", ["D1"]), ("It fixed bugs.", ["D2"])]),
        # abbreviations pysbd does not know: repaired
        ("See Sect. 4.2 for details [1]. Approx. 15 % of users agree [2].",
         [("See Sect. 4.2 for details.", ["D1"]), ("Approx. 15 % of users agree.", ["D2"])]),
        ("Fig. 2 shows the curve [1]. The No. 3 pump failed [2]. Use approx. 5 L of water [3].",
         [("Fig. 2 shows the curve.", ["D1"]), ("The No. 3 pump failed.", ["D2"]),
          ("Use approx. 5 L of water.", ["D3"])]),
        ("The temp. is high [1]. It works.", [("The temp. is high.", ["D1"]), ("It works.", [])]),
        ("Costs fell (see Table 2.) and rose again [1]. Next step [2].",
         [("Costs fell (see Table 2.) and rose again.", ["D1"]), ("Next step.", ["D2"])]),
        # marker before or after the final punctuation: it closes its own sentence
        ("Items are returned within 30 days [1]. Refunds take 5 days [2].",
         [("Items are returned within 30 days.", ["D1"]), ("Refunds take 5 days.", ["D2"])]),
        ("Items are returned within 30 days. [1] Refunds take 5 days. [2]",
         [("Items are returned within 30 days.", ["D1"]), ("Refunds take 5 days.", ["D2"])]),
        ("Items are returned within 30 days.[1] Refunds take 5 days.[2][3]",
         [("Items are returned within 30 days.", ["D1"]), ("Refunds take 5 days.", ["D2", "D3"])]),
        ("Items are returned within 30 days.[1]Refunds take 5 days.",
         [("Items are returned within 30 days.", ["D1"]), ("Refunds take 5 days.", [])]),
        ("Is it safe? Yes [1]! It is [2].", [("Is it safe?", []), ("Yes!", ["D1"]), ("It is.", ["D2"])]),
        # quotations
        ('He asked "Is it safe?[1]" The answer was yes [2].',
         [('He asked "Is it safe?"', ["D1"]), ("The answer was yes.", ["D2"])]),
        ("He asked “Is it safe?” and left [1]. The answer was yes [2].",
         [("He asked “Is it safe?” and left.", ["D1"]), ("The answer was yes.", ["D2"])]),
        # lines
        ("This sentence is wrapped\nacross two lines [1]. Next one [2].",
         [("This sentence is wrapped across two lines.", ["D1"]), ("Next one.", ["D2"])]),
        ("Steps:\n\n1. Unplug the unit [1].\n2. Wait 10 s [2].",
         [("Steps:", []), ("Unplug the unit.", ["D1"]), ("Wait 10 s.", ["D2"])]),
        ("- First point [1]\n- Second point [2]",
         [("First point", ["D1"]), ("Second point", ["D2"])]),
        # a marker opening a line opens that line's sentence ...
        ("First line here.\n[2] Second line here.",
         [("First line here.", []), ("Second line here.", ["D2"])]),
        # ... but one inside a list enumerator (as post-hoc citers write it) closes the line before
        ("The steps are:\n\n1[1]. Unplug the unit [2].",
         [("The steps are:", ["D1"]), ("Unplug the unit.", ["D2"])]),
    ],
)
def test_english_sentences(text: str, expected: list[tuple[str, list[str]]]) -> None:
    assert split(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("连续运行上限为80 °C【1】。Eco模式使年度能耗降低15%【3】。",
         [("连续运行上限为80 °C。", ["D1"]), ("Eco模式使年度能耗降低15%。", ["D3"])]),
        ("第一句话很短【1】！第二句话【2】？第三句话。",
         [("第一句话很短！", ["D1"]), ("第二句话？", ["D2"]), ("第三句话。", [])]),
        ("上限为80 °C。【1】下一句话【2】。", [("上限为80 °C。", ["D1"]), ("下一句话。", ["D2"])]),
        ("价格是3.5元[1]。版本为v3.1[2]。", [("价格是3.5元。", ["D1"]), ("版本为v3.1。", ["D2"])]),
        ("他说：“我来了。”我很高兴【1】。", [("他说：“我来了。”", []), ("我很高兴。", ["D1"])]),
        ("角色由小罗伯特·唐尼(Robert Downey Jr.)扮演【1】。下一句【2】。",
         [("角色由小罗伯特·唐尼(Robert Downey Jr.)扮演。", ["D1"]), ("下一句。", ["D2"])]),
        ("该公司是 DNStination Inc.的注册商【1】。", [("该公司是 DNStination Inc.的注册商。", ["D1"])]),
        ("原因如下：\n1. 第一个原因很重要【1】。\n2、第二个原因也重要【2】。",
         [("原因如下：", []), ("第一个原因很重要。", ["D1"]), ("第二个原因也重要。", ["D2"])]),
        # "；" does not end a statement; it may separate claims (see test_parse_claims)
        ("第一部分说明了温度上限【1】；第二部分说明了能耗【2】。",
         [("第一部分说明了温度上限；第二部分说明了能耗。", ["D1", "D2"])]),
    ],
)
def test_chinese_sentences(text: str, expected: list[tuple[str, list[str]]]) -> None:
    assert split(text) == expected


def test_p7_answer_a() -> None:
    text = ("The continuous limit is 80 °C [D1]. Eco reduces annual energy by 15% [D3]. "
            "The pilot was validated on a thousand machines [D4].")
    statements = parse_answer(text, SOURCES)
    assert [st.text for st in statements] == [
        "The continuous limit is 80 °C.",
        "Eco reduces annual energy by 15%.",
        "The pilot was validated on a thousand machines.",
    ]
    assert [st.citations for st in statements] == [["D1"], ["D3"], ["D4"]]
    assert [st.kind for st in statements] == ["claim", "claim", "claim"]
    assert all(st.claims is None for st in statements)
    assert [text[st.offsets.start : st.offsets.end] for st in statements] == [
        "The continuous limit is 80 °C [D1].",
        "Eco reduces annual energy by 15% [D3].",
        "The pilot was validated on a thousand machines [D4].",
    ]


def test_p7_answer_a_chinese() -> None:
    text = "连续运行上限为80 °C【1】。Eco模式使年度能耗降低15%【3】。"
    statements = parse_answer(text, ["D1", "D2", "D3", "D4"])
    assert [st.citations for st in statements] == [["D1"], ["D3"]]
    assert [st.text for st in statements] == ["连续运行上限为80 °C。", "Eco模式使年度能耗降低15%。"]
    assert [(st.offsets.start, st.offsets.end) for st in statements] == [(0, 16), (16, 35)]


@pytest.mark.parametrize(
    "text, offsets",
    [
        # a marker after the final period belongs to (and is inside the span of) its sentence
        ("Alpha is one. [1] Beta is two.", [(0, 17), (18, 30)]),
        ("  Alpha is one [1].\n\nBeta is two [2].  ", [(2, 19), (21, 37)]),
        # a list bullet is not part of the statement
        ("- Alpha is one [1].\n- Beta is two.", [(2, 19), (22, 34)]),
    ],
)
def test_statement_offsets(text: str, offsets: list[tuple[int, int]]) -> None:
    statements = parse_answer(text, SOURCES)
    assert [(st.offsets.start, st.offsets.end) for st in statements] == offsets
    assert_offsets(text, statements)


@pytest.mark.parametrize(
    "text, cleaned",
    [
        ("The limit is 80 °C [D1].", "The limit is 80 °C."),
        ("The limit [D1] is 80 °C.", "The limit is 80 °C."),
        ("The limit is 80 °C[D1][D2] .", "The limit is 80 °C."),
        ("Energy falls by 15 % [D3], says the report.", "Energy falls by 15 %, says the report."),
        ("The   limit \t is  80 °C [1] .", "The limit is 80 °C."),
        ("The limit is 15 % .", "The limit is 15 % ."),  # no marker removed: the text is the author's
        ("(Measured at 80 °C [1].)", "(Measured at 80 °C.)"),
    ],
)
def test_cleaned_text(text: str, cleaned: str) -> None:
    (st,) = parse_answer(text, SOURCES)
    assert st.text == cleaned


@pytest.mark.parametrize(
    "text, lang",
    [
        ("The limit is 80 °C.", "en"),
        ("连续运行上限为80 °C。", "zh"),
        ("Eco模式使年度能耗降低15%。", "zh"),
        ("The Chinese term 档案 means archive.", "en"),
        ("", "en"),
    ],
)
def test_detect_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


def test_explicit_language_overrides_detection() -> None:
    # Chinese rules on a Chinese answer, whatever the detector would say about a short text
    statements = parse_answer("Eco【1】。Pump【2】。", SOURCES, lang="zh")
    assert [st.citations for st in statements] == [["D1"], ["D2"]]


def test_empty_answer() -> None:
    assert parse_answer("", SOURCES) == []
    assert parse_answer("  \n ", SOURCES) == []
