"""Citation markers: styles, how numbers map to passage ids, what is not a marker, unknown ids."""

from __future__ import annotations

import pytest

from citeaudit.errors import InputError
from citeaudit.parse import parse_answer

from test_parse_common import SOURCES, assert_offsets


def cites(text: str, ids=SOURCES, **kw) -> list[list[str]]:
    statements = parse_answer(text, ids, **kw)
    assert_offsets(text, statements)
    return [st.citations for st in statements]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Alpha is one [1].", [["D1"]]),
        ("Alpha is one [1][2].", [["D1", "D2"]]),
        ("Alpha is one [1] [2].", [["D1", "D2"]]),
        ("Alpha is one [1, 2].", [["D1", "D2"]]),
        ("Alpha is one [1,3].", [["D1", "D3"]]),
        ("Alpha is one [1; 2].", [["D1", "D2"]]),
        ("Alpha is one [1-3].", [["D1", "D2", "D3"]]),
        ("Alpha is one [1–3].", [["D1", "D2", "D3"]]),  # en dash
        ("Alpha is one [D1].", [["D1"]]),
        ("Alpha is one [D2,D4].", [["D2", "D4"]]),
        ("Alpha is one [D1-D3].", [["D1", "D2", "D3"]]),
        ("Alpha is one [D2-4].", [["D2", "D3", "D4"]]),
        ("Alpha is one【1】.", [["D1"]]),
        ("Alpha is one ［2］.", [["D2"]]),
        ("Alpha is one [^1].", [["D1"]]),
        ("Alpha is one [^2^].", [["D2"]]),
        ("Alpha is one.[1]", [["D1"]]),
        ("Alpha is one. [1] [3]", [["D1", "D3"]]),
        # repeated citations in one statement: kept once, first order
        ("Alpha [2] is one [1][2].", [["D2", "D1"]]),
        ("Alpha [1] is one [1].", [["D1"]]),
        ("No citation here.", [[]]),
    ],
)
def test_marker_styles(text: str, expected: list[list[str]]) -> None:
    assert cites(text) == expected


def test_s_ids() -> None:
    assert cites("Alpha is one [S2,S3].", ["S1", "S2", "S3"]) == [["S2", "S3"]]


@pytest.mark.parametrize(
    "ids, numbering, marker, expected",
    [
        # auto: numeric markers are positions unless the ids are themselves numeric
        (["D1", "D2", "D3"], "auto", "[2]", ["D2"]),
        (["1", "2", "3"], "auto", "[2]", ["2"]),
        (["3", "1", "2"], "auto", "[1]", ["1"]),  # a literal id wins over position 1 ("3")
        (["3", "1", "2"], "auto", "[1-2]", ["1", "2"]),
        (["1", "2", "D3"], "auto", "[D3]", ["D3"]),
        (["returns-policy", "faq"], "auto", "[returns-policy]", ["returns-policy"]),
        (["returns-policy", "faq"], "auto", "[2]", ["faq"]),
        # forced readings
        (["3", "1", "2"], "position", "[1]", ["3"]),
        (["D1", "1"], "id", "[1]", ["1"]),
        (["D1", "D2"], "position", "[D2]", ["D2"]),  # ids with letters are always literal
    ],
)
def test_numbering(ids: list[str], numbering: str, marker: str, expected: list[str]) -> None:
    assert cites(f"Alpha is one {marker}.", ids, numbering=numbering) == [expected]


def test_numbering_must_be_known() -> None:
    with pytest.raises(ValueError, match="numbering"):
        parse_answer("Alpha [1].", SOURCES, numbering="ordinal")


@pytest.mark.parametrize(
    "text, statement",
    [
        ("He wrote it [sic] in 1990 [1].", "He wrote it [sic] in 1990."),
        ("The claim [citation needed] is old [2].", "The claim [citation needed] is old."),
        ("The ionic liquid [EMIM][TfO] melts at 20 °C [1].", "The ionic liquid [EMIM][TfO] melts at 20 °C."),
        ("Variables [a, b] are swapped [1].", "Variables [a, b] are swapped."),
        ("Use `arr[1]` to read it [2].", "Use `arr[1]` to read it."),
        ("Call `x[0] = y[12]` first [1].", "Call `x[0] = y[12]` first."),
        ("See [the manual] for more [1].", "See [the manual] for more."),
    ],
)
def test_ordinary_brackets_are_text(text: str, statement: str) -> None:
    (st,) = parse_answer(text, SOURCES)
    assert st.text == statement
    assert len(st.citations) == 1


def test_fenced_code_is_not_cited() -> None:
    text = "Run this code [1].\n\n```\nprint(rows[7])\n```\n"
    statements = parse_answer(text, SOURCES)
    assert statements[0].citations == ["D1"]
    assert all(st.citations == [] for st in statements[1:])


def test_reference_definition_lines_are_not_statements() -> None:
    text = "The limit is 80 °C [^1].\n\n[^1]: Datasheet, page 4.\n[2]: https://example.org/x"
    statements = parse_answer(text, SOURCES)
    assert [st.text for st in statements] == ["The limit is 80 °C."]
    assert statements[0].citations == ["D1"]


def problems(text: str, ids=SOURCES, **kw) -> list[tuple[str, str, str]]:
    with pytest.raises(InputError) as err:
        parse_answer(text, ids, **kw)
    return [(p.file, p.path, p.message) for p in err.value.problems]


def test_unknown_markers_are_all_reported_with_offsets() -> None:
    text = "Alpha is one [7]. Beta is two [D9]. Gamma is three [1]. Delta [2, 8]."
    found = problems(text)
    assert [path for _, path, _ in found] == [
        f"text[{text.index('[7]')}]", f"text[{text.index('[D9]')}]", f"text[{text.index('[2, 8]')}]"
    ]
    assert all(file == "<answer>" for file, _, _ in found)
    assert "passage 7 by position" in found[0][2] and "4 passage id(s)" in found[0][2]
    assert "unknown passage id 'D9'" in found[1][2]
    assert "'[2, 8]'" in found[2][2]


def test_where_names_the_answer() -> None:
    (problem,) = problems("Alpha [9].", where="cases/p7.json:answers[0]")
    assert problem[0] == "cases/p7.json:answers[0]"
    assert problem[1] == "text[6]"


@pytest.mark.parametrize(
    "text, ids, message",
    [
        ("Alpha [3-1].", SOURCES, "runs backwards"),
        ("Alpha [1-900].", SOURCES, "too long"),
        ("Alpha [2-6].", SOURCES, "in range '2-6'"),
        ("Alpha [D1-S2].", SOURCES, "mixes prefixes"),
        ("Alpha [1].", ["12", "7"], "unknown passage id '1'"),  # numeric ids: never read by position
        ("Alpha [1].", [], "no passage ids"),
        ("Alpha【5】。", SOURCES, "passage 5 by position"),
    ],
)
def test_bad_markers(text: str, ids: list[str], message: str) -> None:
    (problem,) = problems(text, ids)
    assert message in problem[2]
