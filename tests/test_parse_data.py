"""The parser on real answers: ExpertQA (English, [n] markers) and CiteCheck (Chinese).

The samples and their licences are described in tests/fixtures/parse/README.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citeaudit.errors import InputError
from citeaudit.parse import parse_answer

from test_parse_common import assert_offsets

FIXTURES = Path(__file__).parent / "fixtures" / "parse"
EXPERTQA = [json.loads(line) for line in (FIXTURES / "expertqa_sample.jsonl").open(encoding="utf-8")]
CITECHECK = [json.loads(line) for line in (FIXTURES / "citecheck_sample.jsonl").open(encoding="utf-8")]
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def source_ids(row: dict) -> list[str]:
    return [re.match(r"\[(\d+)\]", a).group(1) for a in row["attribution"]]


def normalise(text: str) -> str:
    """As in benchmarks/expertqa_agreement.py: markers and list enumerators out, letters and digits only."""
    text = _MARKER.sub("", text)
    text = re.sub(r"(?m)^\s*\d{1,3}\.\s", "", text)
    text = re.sub(r":\s+\d{1,3}\.\s*$", ":", text)
    return re.sub(r"[^a-z0-9]", "", text.lower())


def marked(text: str) -> set[str]:
    return {n.strip() for m in _MARKER.finditer(text) for n in m.group(1).split(",")}


# (row, ExpertQA claims, claims whose text a parsed statement matches, parsed statements)
# Every text match must also agree on the cited passages. The unmatched claims are ExpertQA's own
# splitting slips (a Bing list run into one "claim", a lead-in glued to its first item).
AGREEMENT = [
    (0, 6, 6, 6),
    (1, 6, 5, 7),
    (2, 11, 11, 11),
    (3, 4, 4, 4),
    (4, 3, 3, 3),
    (5, 8, 8, 8),
    (6, 3, 3, 3),
    (7, 8, 8, 8),
    (8, 3, 2, 7),
    (9, 10, 10, 10),
]


@pytest.mark.parametrize("row, n_claims, n_matched, n_statements", AGREEMENT)
def test_expertqa_sentences_and_citations(row: int, n_claims: int, n_matched: int, n_statements: int) -> None:
    data = EXPERTQA[row]
    text = data["answer_string"]
    statements = parse_answer(text, source_ids(data))
    assert_offsets(text, statements)
    by_text = {normalise(st.text): st for st in statements}
    matched = 0
    for claim in data["claims"]:
        st = by_text.get(normalise(claim["claim_string"]))
        if st is None:
            continue
        matched += 1
        assert set(st.citations) == marked(claim["claim_string"]), claim["claim_string"]
    assert (len(data["claims"]), matched, len(statements)) == (n_claims, n_matched, n_statements)


def test_expertqa_sample_covers_the_hard_cases() -> None:
    texts = [row["answer_string"] for row in EXPERTQA]
    assert any(re.search(r"[.!?]\s*\[\d+\]", t) for t in texts)  # marker after the final period
    assert any(re.search(r"\n\d+\[\d+\]\.", t) for t in texts)  # marker inside an enumerator
    assert any(re.search(r"\[\d+,\s*\d+\]", t) for t in texts)  # several ids in one bracket
    assert {row["system"] for row in EXPERTQA} == {
        "gpt4", "bing_chat", "rr_sphere_gpt4", "rr_gs_gpt4", "post_hoc_sphere_gpt4", "post_hoc_gs_gpt4"}


def test_expertqa_abstention_and_split() -> None:
    statements = parse_answer(EXPERTQA[3]["answer_string"], source_ids(EXPERTQA[3]))
    assert [st.kind for st in statements].count("abstention") == 1
    statements = parse_answer(EXPERTQA[7]["answer_string"], source_ids(EXPERTQA[7]))
    (split,) = [st for st in statements if st.claims]
    assert [c.text for c in split.claims] == [
        "They have similar efficacy for healing acid-related diseases",
        "there are some differences in their pharmacokinetics",
    ]


def test_expertqa_markers_outside_attribution_are_reported() -> None:
    data = EXPERTQA[10]
    text = data["answer_string"]
    with pytest.raises(InputError) as err:
        parse_answer(text, source_ids(data), where="expertqa")
    found = [(p.path, p.message) for p in err.value.problems]
    assert found == [
        (f"text[{text.index('[49]')}]", "citation marker '[49]': unknown passage id '49' (known: 1, 2, 3, 4, 5)"),
        (f"text[{text.index('[50]')}]", "citation marker '[50]': unknown passage id '50' (known: 1, 2, 3, 4, 5)"),
    ]


@pytest.mark.parametrize("row", range(len(CITECHECK)), ids=[str(r["idx"]) for r in CITECHECK])
def test_citecheck_statement_is_recovered(row: int) -> None:
    data = CITECHECK[row]
    statements = parse_answer(data["answer"], [])
    assert_offsets(data["answer"], statements)
    assert data["statement"] in [st.text for st in statements]
    assert all(st.citations == [] for st in statements)


@pytest.mark.parametrize("style", ["【1】。", "[1]。", "。[1]", "。【1】"])
@pytest.mark.parametrize("row", range(len(CITECHECK)), ids=[str(r["idx"]) for r in CITECHECK])
def test_citecheck_with_markers(row: int, style: str) -> None:
    """Cite the CiteCheck statement inside its answer, before or after its final "。"."""
    data = CITECHECK[row]
    statement = data["statement"]
    assert statement.endswith("。")
    answer = data["answer"].replace(statement, statement[:-1] + style, 1)
    statements = parse_answer(answer, ["D1"])
    assert_offsets(answer, statements)
    cited = [st for st in statements if st.citations]
    assert [(st.text, st.citations) for st in cited] == [(statement, ["D1"])]
