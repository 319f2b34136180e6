"""Properties that hold for any answer: offsets are ordered and in range, every marker is credited
once, statements are non-empty, and the parse never fails on well-formed markers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.parse import parse_answer
from citeaudit.parse.markers import find_markers

from test_parse_common import SOURCES

PIECES = [
    "The limit is 80 °C", "Eco saves 15.5 %", "Dr. Smith agreed", "v3.1 is used", "e.g. in winter",
    "and", "but", ";", ",", ".", "!", "?", ":", " ", " ", "\n", "\n\n", "- ", "1. ", "# ", "**Bold**",
    "[1]", "[2]", "[1, 3]", "[D4]", "[1-2]", "【2】", "[^3]", "[sic]", "`a[1]`", "“quoted.”", "(see Fig. 2)",
    "连续运行上限为80 °C", "。", "；", "，", "Eco模式", "档案中没有", "I could not find it",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.sampled_from([None, "en", "zh"]))
def test_any_answer(pieces: list[str], lang: str | None) -> None:
    text = "".join(pieces)
    statements = parse_answer(text, SOURCES, lang=lang)
    last = 0
    for s in statements:
        assert s.text and s.text == s.text.strip()
        assert last <= s.offsets.start < s.offsets.end <= len(text)
        last = s.offsets.end
        assert set(s.citations) <= set(SOURCES)
        assert len(s.citations) == len(set(s.citations))
        for c in s.claims or []:
            assert c.text
            if c.offsets:
                assert s.offsets.start <= c.offsets.start < c.offsets.end <= s.offsets.end
    # every marker's passages reach some statement (unless the answer has no statement at all)
    markers, problems = find_markers(text, SOURCES)
    assert problems == []
    if statements:
        assert {i for m in markers for i in m.ids} == {i for s in statements for i in s.citations}
