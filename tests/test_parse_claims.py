"""Atomic claims: where the rule decomposer splits, where it must not, citations per clause, and
the Decomposer protocol."""

from __future__ import annotations

import pytest

from citeaudit.parse import Decomposer, NoDecomposer, RuleDecomposer, parse_answer

from test_parse_common import SOURCES, assert_offsets


def one(text: str, **kw):
    statements = parse_answer(text, SOURCES, **kw)
    assert_offsets(text, statements)
    (st,) = statements
    return st


@pytest.mark.parametrize(
    "text, claims",
    [
        ("The limit is 80 °C and Eco saves 15 % energy [D1,D3].",
         ["The limit is 80 °C", "Eco saves 15 % energy"]),
        ("The limit is 80 °C, and Eco saves 15 % energy [D1,D3].",
         ["The limit is 80 °C", "Eco saves 15 % energy"]),
        ("The limit is 80 °C; the alarm sounds at 85 °C [D1].", ["The limit is 80 °C", "the alarm sounds at 85 °C"]),
        ("The limit is 80 °C but Eco lowers the load [1][2].", ["The limit is 80 °C", "Eco lowers the load"]),
        ("BIM stands for building modelling and GIS stands for geography [1].",
         ["BIM stands for building modelling", "GIS stands for geography"]),
        ("The pump v3.1 is rated 80 °C and the pump v3.2 is rated 90 °C [1].",
         ["The pump v3.1 is rated 80 °C", "the pump v3.2 is rated 90 °C"]),
        ("They have similar efficacy, but there are some differences in dosing [2].",
         ["They have similar efficacy", "there are some differences in dosing"]),
    ],
)
def test_rule_splits_coordinated_clauses(text: str, claims: list[str]) -> None:
    st = one(text)
    assert [c.text for c in st.claims] == claims
    # one closing marker cluster: every claim inherits the statement's citations
    assert all(c.citations is None for c in st.claims)
    assert all(c.citations == st.citations for c in st.atomic_claims())


@pytest.mark.parametrize(
    "text",
    [
        # a number stays with its quantity, unit, subject, version and condition
        "The pump shows 15 % downtime over 30 days [1].",
        "Keep the room between 10 and 20 °C [1].",
        "Eco saves 15 % in winter and 10 % in summer [1].",
        "Version 3.1 and version 3.2 are supported [1].",
        "In 2020, sales rose 5 % and costs fell 3 % [1].",
        "If the limit is exceeded, the fan stops and the alarm sounds [1].",
        # the second part has no subject of its own
        "Items are returned within 30 days and in original packaging [1].",
        "Items must be returned within 30 days and must be unused [1].",
        "Prices rose and fell [1].",
        # coordinated noun phrases, enumerations, examples
        "Salt and pepper are used [1].",
        "Researchers such as Smith and Jones are cited [1].",
        "It needs a clear objective, a target market, and a realistic set of levels [1].",
        "The toxicity may vary depending on the substance and the storage conditions [1].",
        "The patient who has no symptoms and no record can be hard to treat [1].",
        "It was instigated by publisher Casterman and Hergé's estate managers Moulinsart [1].",
        "The navy operates aircraft, with the Ka-27 and Ka-31 helicopters being the main ones [1].",
        # the second claim would not stand alone
        "The limit is 80 °C and it applies to all models [1].",
        "The limit is 80 °C and their value is volatile [1].",
        # reported speech, parentheses, quotations
        "The study found that the limit is 80 °C and Eco saves 15 % energy [1].",
        "The limit (80 °C and Eco saves 15 %) is fixed [1].",
        'The manual says "the limit is 80 °C and Eco saves energy" [1].',
        # Chinese: never at a comma
        "上限为80 °C，并且Eco节能15%【1】。",
        "原因有：第一个原因很长；第二个原因也长【1】。",
        "短【1】；也短【2】。",
    ],
)
def test_rule_leaves_whole(text: str) -> None:
    st = one(text)
    assert st.claims is None
    assert len(st.atomic_claims()) == 1


@pytest.mark.parametrize(
    "text, claims",
    [
        ("The limit is 80 °C [D1], and Eco saves 15 % energy [D3].",
         [("The limit is 80 °C", ["D1"]), ("Eco saves 15 % energy", ["D3"])]),
        ("The limit [D1] is 80 °C and Eco saves 15 % energy [D3][D2].",
         [("The limit is 80 °C", ["D1"]), ("Eco saves 15 % energy", ["D3", "D2"])]),
        ("The limit is 80 °C [D1]; the alarm sounds at 85 °C [D2].",
         [("The limit is 80 °C", ["D1"]), ("the alarm sounds at 85 °C", ["D2"])]),
        ("第一部分说明了温度上限【1】；第二部分说明了能耗【2】。",
         [("第一部分说明了温度上限", ["D1"]), ("第二部分说明了能耗", ["D2"])]),
        # a claim without a marker of its own: all claims inherit the statement's citations
        ("The limit is 80 °C [D1], and Eco saves 15 % energy.",
         [("The limit is 80 °C", None), ("Eco saves 15 % energy", None)]),
        ("第一部分说明了温度上限；第二部分说明了能耗【1】。",
         [("第一部分说明了温度上限", None), ("第二部分说明了能耗", None)]),
    ],
)
def test_markers_inside_clauses(text: str, claims: list[tuple[str, list[str] | None]]) -> None:
    st = one(text)
    assert [(c.text, c.citations) for c in st.claims] == claims
    assert st.cited_ids() == st.citations


def test_claim_offsets_point_into_the_answer() -> None:
    text = "Intro [D2]. The limit is 80 °C [D1], and Eco saves 15 % energy [D3]."
    st = parse_answer(text, SOURCES)[1]
    spans = [text[c.offsets.start : c.offsets.end] for c in st.claims]
    assert spans == ["The limit is 80 °C [D1]", "Eco saves 15 % energy [D3]"]


class Fixed:
    """A stand-in for an LLM decomposer: returns what it is given."""

    def __init__(self, result):
        self.result = result
        self.calls: list[tuple[str, str]] = []

    def decompose(self, statement_text: str, lang: str):
        self.calls.append((statement_text, lang))
        return self.result


def test_protocol() -> None:
    assert isinstance(RuleDecomposer(), Decomposer)
    assert isinstance(NoDecomposer(), Decomposer)
    assert isinstance(Fixed([]), Decomposer)


TEXT = "The limit is 80 °C for model A [D1], and Eco saves 15 % energy in winter [D3]."


def test_decomposer_gets_the_cleaned_statement() -> None:
    d = Fixed([])
    parse_answer(TEXT, SOURCES, decomposer=d)
    assert d.calls == [("The limit is 80 °C for model A, and Eco saves 15 % energy in winter.", "en")]


def test_decomposer_strings_are_located() -> None:
    st = one(TEXT, decomposer=Fixed(["The limit is 80 °C for model A", "Eco saves 15 %  energy in winter."]))
    assert [(c.text, c.citations) for c in st.claims] == [
        ("The limit is 80 °C for model A", ["D1"]),
        ("Eco saves 15 % energy in winter", ["D3"]),
    ]
    assert all(c.offsets is not None for c in st.claims)


def test_decomposer_rephrased_strings_inherit() -> None:
    st = one(TEXT, decomposer=Fixed(["Model A's limit is 80 °C.", "Eco saves 15 % energy in winter"]))
    assert [(c.text, c.citations, c.offsets) for c in st.claims] == [
        ("Model A's limit is 80 °C.", None, None),
        ("Eco saves 15 % energy in winter", None, st.claims[1].offsets),
    ]
    assert st.claims[1].offsets is not None


def test_decomposer_spans() -> None:
    cleaned = "The limit is 80 °C for model A, and Eco saves 15 % energy in winter."
    a = cleaned.index("Eco")
    st = one(TEXT, decomposer=Fixed([(0, 30), (a, len(cleaned))]))
    assert [(c.text, c.citations) for c in st.claims] == [
        ("The limit is 80 °C for model A", ["D1"]),
        ("Eco saves 15 % energy in winter", ["D3"]),
    ]


@pytest.mark.parametrize("result", [[], [(0, 10)], ["The limit is 80 °C"]])
def test_decomposer_single_claim_leaves_statement_whole(result) -> None:
    assert one(TEXT, decomposer=Fixed(result)).claims is None


@pytest.mark.parametrize("result", [[(5, 2)], [(0, 10), (5, 20)], [(0, 999)], [("a", "b")]])
def test_decomposer_bad_spans(result) -> None:
    with pytest.raises(ValueError, match="decomposer"):
        parse_answer(TEXT, SOURCES, decomposer=Fixed(result))


def test_no_decomposer_keeps_statements_whole() -> None:
    st = one("The limit is 80 °C and Eco saves 15 % energy [D1,D3].", decomposer=NoDecomposer())
    assert st.claims is None


def test_only_claims_are_decomposed() -> None:
    d = Fixed([(0, 5), (6, 12)])
    statements = parse_answer("The sources do not say when and where it opened [1].", SOURCES, decomposer=d)
    assert statements[0].kind == "abstention" and statements[0].claims is None
    assert d.calls == []


def test_unknown_language_is_left_whole() -> None:
    assert RuleDecomposer().decompose("Le seuil est 80 °C et Eco économise 15 %.", "fr") == [(0, 41)]
