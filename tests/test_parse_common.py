"""Helpers shared by the parser tests (imported as `test_parse_common`), and tests of the helpers."""

from __future__ import annotations

import re

import pytest

from citeaudit.records import Statement

# Every marker style the tests use; written apart from the parser's own patterns on purpose.
_MARKERS = r"(?:\[\^?[A-Za-z]{0,4}\d+(?:\s*[-–,;]\s*[A-Za-z]{0,4}\d+)*\^?\]|【\d+】|［\d+］|\[returns-policy\])"

SOURCES = ["D1", "D2", "D3", "D4"]


def strip_markers(text: str) -> str:
    """What a marker-free reading of ``text`` should be (for the test inputs used here)."""
    out = re.sub(rf"\s*{_MARKERS}(?:\s*{_MARKERS})*", "\x00", text)
    out = re.sub(r"\x00(?=[.,;:!?)。，；：！？、”\"]|$)", "", out)  # no space before closing punctuation
    out = re.sub(r"(?<=[\u4e00-\u9fff])\x00(?=[\u4e00-\u9fff])", "", out)
    out = out.replace("\x00", " ")
    return re.sub(r"\s+", " ", out).strip()


def assert_offsets(text: str, statements: list[Statement]) -> None:
    """Every statement and claim span covers exactly the text it was cleaned from, in order."""
    last = 0
    for st in statements:
        assert st.offsets is not None
        a, b = st.offsets.start, st.offsets.end
        assert last <= a < b <= len(text), (st.text, a, b)
        assert strip_markers(text[a:b]) == st.text, (text[a:b], st.text)
        last = b
        for claim in st.claims or []:
            if claim.offsets is None:
                continue
            ca, cb = claim.offsets.start, claim.offsets.end
            assert a <= ca < cb <= b, (claim.text, ca, cb)
            assert strip_markers(text[ca:cb]).rstrip(".,;:!?。，；：！？") == claim.text, (text[ca:cb], claim.text)


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("The limit is 80 °C [D1].", "The limit is 80 °C."),
        ("Delivery takes 3 days. [1] [2]", "Delivery takes 3 days."),
        ("X [1] and Y [2].", "X and Y."),
        ("上限为80 °C【1】。", "上限为80 °C。"),
        ("It saves 15 % [^1].", "It saves 15 %."),
    ],
)
def test_strip_markers_helper(raw: str, clean: str) -> None:
    assert strip_markers(raw) == clean
