"""Statement kinds: claims, abstentions ("the sources do not say"), other (greetings, headings)."""

from __future__ import annotations

import pytest

from citeaudit.errors import InputError
from citeaudit.parse import parse_answer

from test_parse_common import SOURCES


def kinds(text: str, **kw) -> list[tuple[str, str]]:
    return [(st.kind, st.text) for st in parse_answer(text, SOURCES, **kw)]


@pytest.mark.parametrize(
    "text",
    [
        "The sources do not say when the plant opened.",
        "The sources say nothing about the warranty.",
        "The archive contains no record of the 2019 audit.",
        "There is no information on the price.",
        "I could not find the opening date.",
        "The opening date is not documented.",
        "The provided context does not include information on fasting.",
        "None of the documents mention the price.",
        "The passages don't specify the dosage [2].",
        "Unfortunately, the steps are not mentioned in the passages.",
        "档案中没有关于保修的信息。",
        "资料未提及具体日期。",
        "来源没有说明价格。",
        "我没有找到相关的信息。",
        "根据现有资料无法确定具体日期。",
    ],
)
def test_abstentions(text: str) -> None:
    ((kind, _),) = kinds(text)
    assert kind == "abstention"


@pytest.mark.parametrize(
    "text",
    [
        "Hi!",
        "Sure, here is a summary:",
        "Here are the main points:",
        "I hope this helps.",
        "Let me know if you need more.",
        "Thank you!",
        "# Overview",
        "**Costs**",
        "Warranty terms",
        "The main causes are:",
        "The clinician may order the following tests: 1.",  # a lead-in with its list's first number
        "主要包括以下几点：1、",
        "你好！",
        "希望对你有帮助。",
        "当然！",
        "以下是主要内容：",
    ],
)
def test_other(text: str) -> None:
    ((kind, _),) = kinds(text)
    assert kind == "other"


@pytest.mark.parametrize(
    "text",
    [
        # findings, not abstentions
        "There is no evidence that Eco damages the pump [1].",
        "The contract does not specify a deadline [2].",
        "The results did not confirm the hypothesis [1].",
        "此项变更未涉及股权的变化。",
        "Java无法确定应该调用哪个接口中的方法。",
        # not greetings or headings
        "Sure, the limit is 80 °C.",
        "Thanks to Eco, energy falls by 15 %.",
        "当然，温度上限是80度。",
        "Eco is efficient",  # a verb: a sentence without its period
        "- Fast charging",  # a list item
        "Warranty terms [1]",  # cited: a claim, whatever its shape
        "The limit is 80 °C.",
        "The mix uses a ratio of 3: 1.",  # a colon between digits is a ratio, not a lead-in
        "比例为3：1。",
    ],
)
def test_claims(text: str) -> None:
    ((kind, _),) = kinds(text)
    assert kind == "claim"


def test_heading_text_loses_its_mark() -> None:
    text = "# Overview\nThe limit is 80 °C [1].\n## Energy\nEco saves 15 % [3]."
    assert kinds(text) == [
        ("other", "Overview"), ("claim", "The limit is 80 °C."), ("other", "Energy"), ("claim", "Eco saves 15 %."),
    ]


def test_a_whole_answer() -> None:
    text = ("Hi! Sure, here is what the archive says:\n\n"
            "The continuous limit is 80 °C [D1]. The archive contains no record of a 90 °C test.\n\n"
            "I hope this helps.")
    assert [k for k, _ in kinds(text)] == ["other", "other", "claim", "abstention", "other"]


def test_override_kinds() -> None:
    text = "Hi! The limit is 80 °C and Eco saves 15 % energy [1]. Done."
    statements = parse_answer(text, SOURCES, kinds={0: "claim", 1: "other", 2: "abstention"})
    assert [st.kind for st in statements] == ["claim", "other", "abstention"]
    assert statements[1].claims is None  # only claims are decomposed


@pytest.mark.parametrize(
    "override, path, message",
    [
        ({0: "greeting"}, "kinds[0]", "unknown kind 'greeting'"),
        ({5: "other"}, "kinds[5]", "there is no statement 5"),
    ],
)
def test_bad_override(override, path: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_answer("Hi! The limit is 80 °C [1].", SOURCES, kinds=override, where="a.json")
    (problem,) = err.value.problems
    assert (problem.file, problem.path) == ("a.json", path)
    assert message in problem.message


def test_a_stray_mark_between_inline_list_items_is_not_a_claim() -> None:
    statements = kinds("The doctor may order the following tests: 1. A blood count [1]. 2. An MRI scan [2].")
    assert [kind for kind, _ in statements if kind == "claim"] == ["claim", "claim"]
    assert all(kind == "other" for kind, text in statements if not any(c.isalpha() for c in text))
    assert [kind for kind, _ in kinds("Key measurements include:\n\n1.")] == ["other", "other"]
