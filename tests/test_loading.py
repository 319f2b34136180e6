"""Bad input: every problem reported as file:line: path: message, with exit code 2."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.errors import InputError
from citeaudit.files.loading import load_cases, parse_cases

from helpers import make_case

GOOD = make_case([{"text": "x", "citations": ["S1"]}])


def _problems(text: str, name: str = "cases.json") -> list[str]:
    with pytest.raises(InputError) as info:
        parse_cases(name, text)
    return [str(p) for p in info.value.problems]


def _dump(case) -> str:
    return json.dumps(case, indent=1)


def _with(**changes) -> dict:
    return {**json.loads(json.dumps(GOOD)), **changes}


@pytest.mark.parametrize("text, expected", [
    ("", "cases.json: file is empty"),
    ("   \n", "cases.json: file is empty"),
    ('{"id": "t", "question": ', "cases.json:1: malformed JSON: Expecting value (column 25)"),
    ("[1, 2]", "cases.json:1: cases[0]: a case must be a JSON object"),
    ("[]", "cases.json: no cases found"),
])
def test_unreadable_files(text, expected):
    assert _problems(text)[0].startswith(expected)


@pytest.mark.parametrize("case, path, message", [
    (make_case([{"text": "x", "citations": ["S99"]}]), "answers[0].statements[0].citations[0]", "unknown passage 'S99'"),
    (make_case([{"text": "x", "citations": ["S1", "S1"]}]), "answers[0].statements[0].citations[1]", "passage 'S1' is cited twice"),
    (make_case([{"citations": ["S1"]}]), "answers[0].statements[0].text", "Field required"),
    (make_case([{"text": 3, "citations": ["S1"]}]), "answers[0].statements[0].text", "Input should be a valid string"),
    (make_case([{"text": "x", "citations": "S1"}]), "answers[0].statements[0].citations", "Input should be a valid list"),
    (make_case([{"text": "x", "citation": ["S1"]}]), "answers[0].statements[0].citation", "Extra inputs are not permitted"),
    (make_case([{"text": "x", "kind": "maybe"}]), "answers[0].statements[0].kind", "Input should be 'claim', 'abstention' or 'other'"),
    (make_case([{"text": "x", "facts": ["nope"]}]), "answers[0].statements[0].facts[0]", "unknown fact 'nope'"),
    (make_case([{"text": "x"}], gold_documents=["D9"]), "gold_documents[0]", "unknown document 'D9'"),
    (make_case([{"text": "x"}], facts=[{"id": "f", "text": "t", "passages": ["S7"]}]), "facts[0].passages[0]", "unknown passage 'S7'"),
    (make_case([{"text": "x"}], ranking=["S1", "S1"]), "ranking", "document 'S1' appears twice in the ranking"),
    (make_case([{"text": "x"}], sources=("S1", "S1")), "sources[1].id", "document id 'S1' is used twice in this case"),
    (make_case([{"text": "x", "kind": "abstention", "claims": [{"text": "y"}]}]), "answers[0].statements[0]",
     "a statement of kind 'abstention' cannot carry claims"),
])
def test_field_problems_name_the_path(case, path, message):
    problems = _problems(_dump(case))
    assert any(p.endswith(f": {path}: {message}") for p in problems), problems


def test_line_numbers_point_at_the_field():
    text = _dump(make_case([{"text": "ok", "citations": ["S1"]}, {"text": "bad", "citations": ["S1", "S99"]}]))
    (problem,) = _problems(text)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if '"S99"' in l)
    assert problem == f"cases.json:{line}: answers[0].statements[1].citations[1]: unknown passage 'S99'"


def test_all_problems_are_collected_across_records_and_files(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join([
        json.dumps(make_case([{"text": "x", "citations": ["S9"]}], id="one")),
        "{not json",
        json.dumps(make_case([{"text": "x", "citations": ["S1", "S1"]}], id="two")),
    ]), encoding="utf-8")
    b = tmp_path / "b.json"
    b.write_text("", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_cases([a, b, tmp_path / "missing.json"])
    shown = [str(p) for p in info.value.problems]
    assert shown[0] == f"{a}:1: answers[0].statements[0].citations[0]: unknown passage 'S9'"
    assert shown[1].startswith(f"{a}:2: malformed JSON")
    assert shown[2] == f"{a}:3: answers[0].statements[0].citations[1]: passage 'S1' is cited twice"
    assert shown[3] == f"{b}: file is empty: expected a case, a list of cases, or JSON lines"
    assert shown[4] == f"{tmp_path / 'missing.json'}: file not found"


def test_cases_list_and_wrapper_shapes_load():
    assert len(parse_cases("x.json", json.dumps([GOOD, {**GOOD, "id": "u"}]))) == 2
    assert len(parse_cases("x.json", json.dumps({"cases": [GOOD]}))) == 1


def test_duplicate_case_ids_are_an_error():
    assert _problems(json.dumps([GOOD, GOOD])) == ["cases.json:1: cases[1].id: case id 't' is also the id of the case at line 1"]


@pytest.mark.parametrize("doc, message", [
    ({"id": "D", "text": "abcdef", "passages": [{"id": "P", "span": {"start": 2, "end": 9}}]}, "span end 9 is past"),
    ({"id": "D", "text": "abcdef", "passages": [{"id": "P", "text": "xyz"}]}, "text is not found in the document"),
    ({"id": "D", "text": "abcdef", "passages": [{"id": "P", "text": "bc", "span": {"start": 3, "end": 5}}]}, "text differs"),
    ({"id": "D"}, "a document needs 'text' or 'passages'"),
    ({"id": "D", "text": "abc", "passages": [{"id": "P", "span": {"start": 2, "end": 1}}]}, "end (1) is before start (2)"),
])
def test_passage_spans_are_checked(doc, message):
    case = {**GOOD, "sources": [{"id": "S1", "text": "s"}, doc]}
    assert any(message in p for p in _problems(_dump(case))), _problems(_dump(case))


def test_passage_spans_resolve_into_the_document():
    case = {**GOOD, "sources": [{"id": "S1", "text": "s"}, {"id": "D", "version": "7", "text": "Alpha. Beta.",
                                 "passages": [{"id": "P1", "text": "Beta."}, {"id": "P2", "span": {"start": 0, "end": 6}}]}]}
    (rc,) = parse_cases("x.json", json.dumps(case))
    assert (rc.passages["P1"].start, rc.passages["P1"].end, rc.passages["P1"].doc_id) == (7, 12, "D")
    assert rc.passages["P2"].text == "Alpha." and rc.passages["P2"].version == "7"


def test_cli_bad_input_exit_code_2(runner, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(_dump(make_case([{"text": "x", "citations": ["S99"]}])), encoding="utf-8")
    for verb in ("score", "validate"):
        result = runner.invoke(main, [verb, str(path)])
        assert result.exit_code == 2
        assert "unknown passage 'S99'" in result.output
        assert "Traceback" not in result.output
