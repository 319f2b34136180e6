"""Input files against what editors and other programs put in them: a UTF-8 byte-order mark, a lone
surrogate escape ("\\ud800", half a character), and a case id given twice, in citeaudit's case files
(read whole and one case at a time), run logs, labelled pairs and other tools' files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.errors import InputError
from citeaudit.files.labelled import load_rows
from citeaudit.files.loading import each_case, each_checked_case, load_cases, read_json_file
from citeaudit.files.readers import read
from citeaudit.run.agree import is_run_log as agree_sees_a_run_log
from citeaudit.run.log import read_runlog, stream_entries

from helpers import make_case

BOM = "\ufeff"
FORMATS = Path(__file__).parent / "fixtures" / "formats"
LONE = "lone surrogate \\ud800 at character 0 (half of a UTF-16 pair, not a character)"


def _case(case_id: str = "c1", question: str = "q?") -> dict:
    claim = "Eco lowers energy use."
    return make_case([{"text": claim, "citations": ["S1"]}], id=case_id, question=question,
                     labels=[{"claim": claim, "passages": ["S1"], "label": "full"}])


def _problems(read_cases) -> list[str]:
    with pytest.raises(InputError) as err:
        read_cases()
    return [str(p) for p in err.value.problems]


def _streamed(path: Path):
    return list(each_case([path]))


# --- a byte-order mark ------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text", [
    ("cases.json", BOM + json.dumps(_case(), indent=1)),
    ("cases.json", BOM + json.dumps([_case("c1"), _case("c2")])),
    ("cases.jsonl", BOM + json.dumps(_case("c1")) + "\n" + json.dumps(_case("c2")) + "\n"),
])
def test_a_byte_order_mark_before_a_case_file_is_skipped(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    loaded = load_cases([path])
    assert [rc.id for rc in loaded] == [rc.id for rc in _streamed(path)] == [rc.id for rc in each_checked_case([path])]
    assert loaded[0].case.question == "q?" and loaded[0].origin == f"{path}:1"


def test_a_byte_order_mark_leaves_lines_and_columns_of_problems_in_place(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(BOM + json.dumps(_case()) + "\n{broken\n", encoding="utf-8")
    expected = [f"{path}:2: malformed JSON: Expecting property name enclosed in double quotes (column 2)"]
    assert _problems(lambda: load_cases([path])) == _problems(lambda: _streamed(path)) == expected


def test_a_byte_order_mark_before_a_run_log_is_skipped_and_it_still_verifies(runner, tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(_case()) + "\n", encoding="utf-8")
    for name in ("run.json", "run.jsonl"):  # one document, and a stream
        log = tmp_path / name
        assert runner.invoke(main, ["score", str(cases), "--out", str(log)]).exit_code == 0
        log.write_bytes(BOM.encode("utf-8") + log.read_bytes())
        assert agree_sees_a_run_log(log)
        read = read_runlog(log)
        assert [c.id for c in read.cases] == ["c1"] and not read.edited  # the mark is no edit of the log
        result = runner.invoke(main, ["report", str(log), "--format", "json"])
        assert result.exit_code == 0, result.output
        assert "changed after it was written" not in result.output


def test_a_byte_order_mark_before_labelled_pairs_and_a_json_file_is_skipped(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    row = {"id": "r1", "claim": "c", "passages": [{"id": "P", "text": "t"}], "label": "full"}
    pairs.write_text(BOM + json.dumps(row) + "\n", encoding="utf-8")
    assert [r.id for r in load_rows(pairs)] == ["r1"]
    sources = tmp_path / "sources.json"
    sources.write_text(BOM + '{"S1": "text"}', encoding="utf-8")
    assert read_json_file(sources) == {"S1": "text"}


@pytest.mark.parametrize("fmt, name", [("alce", "alce_asqa_result.json"), ("ragchecker", "ragchecker_output.json"),
                                       ("expertqa", "expertqa_rand_val_sample.jsonl"),
                                       ("ragas", "ragas_samples.jsonl"), ("ragas", "ragas_results.csv")])
def test_a_byte_order_mark_before_another_tools_file_is_skipped(tmp_path, fmt, name):
    path = tmp_path / name
    path.write_text(BOM + (FORMATS / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert [r.case for r in read(fmt, str(path))] == [r.case for r in read(fmt, str(FORMATS / name))]


# --- a lone surrogate -------------------------------------------------------------------------------


def _with_lone_surrogate(case: dict) -> str:
    """The case as JSON with "\\ud800" (an escape json.dumps writes for a lone surrogate) in its question."""
    return json.dumps({**case, "question": "\ud800?"}, indent=1)


def test_a_lone_surrogate_in_a_case_is_a_located_problem_read_whole_or_streamed(tmp_path):
    whole = tmp_path / "cases.json"
    whole.write_text(_with_lone_surrogate(_case()), encoding="utf-8")
    line = next(n for n, text in enumerate(_with_lone_surrogate(_case()).splitlines(), 1) if '"question"' in text)
    assert _problems(lambda: load_cases([whole])) == [f"{whole}:{line}: question: {LONE}"]
    lines = tmp_path / "cases.jsonl"
    lines.write_text(json.dumps(_case("c0")) + "\n" + json.dumps(json.loads(_with_lone_surrogate(_case()))) + "\n",
                     encoding="utf-8")
    expected = [f"{lines}:2: question: {LONE}"]
    assert _problems(lambda: load_cases([lines])) == _problems(lambda: _streamed(lines)) == expected


def test_a_lone_surrogate_in_a_key_or_deep_in_a_list_is_located_too(tmp_path):
    case = _case()
    case["metadata"] = {"\udc00": 1, "notes": ["fine", "x\udfff"]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    problems = _problems(lambda: load_cases([path]))
    assert f"{path}:1: metadata.notes[1]: lone surrogate \\udfff at character 1 (half of a UTF-16 pair, not a " \
           "character)" in problems
    assert any(p.startswith(f"{path}:1: metadata.") and "key: lone surrogate \\udc00" in p for p in problems)


def test_surrogate_pairs_written_as_escapes_are_characters_not_problems(tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(_case(question="😀 𠀀 한국어 \\\\ud800 literal")), encoding="utf-8")  # ensure_ascii: pairs
    assert "\\ud83d\\ude00" in path.read_text(encoding="utf-8")
    assert load_cases([path])[0].case.question == "😀 𠀀 한국어 \\\\ud800 literal"


@pytest.mark.parametrize("value, searched", [
    ("😀 𠀀", False), ("한국어 \ud7ff", False), ("plain", False),  # pairs, and escapes below the surrogates
    ("a\ud800", True), ("\udc00", True), ("\ude00\ud83d", True), ("😀\udbff", True),
])
def test_only_a_text_with_an_unpaired_surrogate_escape_is_searched(value, searched):
    # the decoded values are searched (in Python) only when the text may hold a lone surrogate: json.dumps
    # writes every emoji and Hangul syllable as escapes, and a file of them must not pay for a search
    from citeaudit.jsonio import StrictJson

    reader = StrictJson()
    assert reader.decode(json.dumps({"q": value})) == {"q": value}
    assert reader.noticed is searched


def test_score_refuses_a_lone_surrogate_with_a_located_error_and_no_traceback(runner, tmp_path):
    for name in ("cases.json", "cases.jsonl"):
        path = tmp_path / name
        text = _with_lone_surrogate(_case())
        path.write_text(text if name.endswith(".json") else json.dumps(json.loads(text)) + "\n", encoding="utf-8")
        result = runner.invoke(main, ["score", str(path), "--out", str(tmp_path / "run.json")])
        assert result.exit_code == 2, result.output
        assert f"question: {LONE}" in result.output and "Traceback" not in result.output
        assert not (tmp_path / "run.json").exists()


def test_a_lone_surrogate_in_a_run_log_is_a_located_problem(tmp_path, runner):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(_case()) + "\n", encoding="utf-8")
    for name in ("run.json", "run.jsonl"):
        log = tmp_path / name
        assert runner.invoke(main, ["score", str(cases), "--out", str(log)]).exit_code == 0
        log.write_text(log.read_text(encoding="utf-8").replace('"q?"', '"\\ud800?"'), encoding="utf-8")
        problems = _problems(lambda: read_runlog(log) if name == "run.json" else list(stream_entries(log)))
        assert any(str(log) in p and LONE in p for p in problems), problems


def _broken_fixture(tmp_path: Path, name: str, field: str) -> tuple[Path, int]:
    """A copy of a fixture with "\\ud800" at the start of its first `field` text, and that line."""
    text = (FORMATS / name).read_text(encoding="utf-8")
    at = text.index(f'"{field}": "') + len(f'"{field}": "')
    path = tmp_path / name
    path.write_text(text[:at] + "\\ud800" + text[at:], encoding="utf-8")
    return path, text.count("\n", 0, at) + 1


@pytest.mark.parametrize("fmt, name, field, shown", [
    ("alce", "alce_asqa_result.json", "question", "data[0].qa_pairs[0].question"),
    ("ragchecker", "ragchecker_output.json", "query", "results[0].query"),
    ("expertqa", "expertqa_rand_val_sample.jsonl", "question", "question"),
    ("ragas", "ragas_samples.jsonl", "user_input", "user_input"),
])
def test_a_lone_surrogate_in_another_tools_file_is_located_in_its_terms(tmp_path, fmt, name, field, shown):
    path, line = _broken_fixture(tmp_path, name, field)
    problems = _problems(lambda: load_cases([path], fmt=fmt))
    assert f"{path}:{line}: {shown}: {LONE}" in problems, problems


def test_a_lone_surrogate_in_a_ragas_csv_list_cell_is_located(tmp_path):
    text = (FORMATS / "ragas_results.csv").read_text(encoding="utf-8")
    path = tmp_path / "ragas_results.csv"
    path.write_text(text.replace("['P7 operating manual, version 2.", "['\\ud800P7 operating manual, version 2.", 1),
                    encoding="utf-8")
    assert f"{path}:2: retrieved_contexts[0]: {LONE}" in _problems(lambda: load_cases([path], fmt="ragas"))


# --- a case id given twice --------------------------------------------------------------------------


def test_a_case_id_given_twice_names_both_lines_read_whole_or_streamed(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(_case(i)) for i in ["c1", "c2", "c3", "c1", "c2", "c1"]) + "\n",
                    encoding="utf-8")
    expected = [f"{path}:4: id: case id 'c1' is also the id of the case at line 1",
                f"{path}:5: id: case id 'c2' is also the id of the case at line 2",
                f"{path}:6: id: case id 'c1' is also the id of the case at line 1"]
    assert _problems(lambda: load_cases([path])) == _problems(lambda: _streamed(path)) == expected


def test_a_case_id_given_twice_in_a_json_list_points_at_both_id_fields(tmp_path):
    path = tmp_path / "cases.json"
    text = json.dumps([_case("c1"), _case("c2"), _case("c1")], indent=1)
    path.write_text(text, encoding="utf-8")
    starts = [n for n, line in enumerate(text.splitlines(), 1) if line == " {"]  # where each case starts
    second_id = [n for n, line in enumerate(text.splitlines(), 1) if '"id": "c1"' in line][1]
    assert _problems(lambda: load_cases([path])) == [
        f"{path}:{second_id}: cases[2].id: case id 'c1' is also the id of the case at line {starts[0]}"]


def test_a_case_id_given_twice_among_other_problems_is_reported_with_them(tmp_path):
    path = tmp_path / "cases.jsonl"
    bad = make_case([{"text": "x", "citations": ["S9"]}], id="c9")
    path.write_text("\n".join(json.dumps(c) for c in [_case("c1"), bad, _case("c1")]) + "\n", encoding="utf-8")
    problems = _problems(lambda: load_cases([path]))
    assert problems == _problems(lambda: _streamed(path))
    assert problems[0].startswith(f"{path}:2: answers[0].statements[0].citations[0]: unknown passage 'S9'")
    assert problems[1] == f"{path}:3: id: case id 'c1' is also the id of the case at line 1"


def test_a_case_id_given_twice_in_another_tools_file_names_the_records(tmp_path):
    lines = (FORMATS / "ragas_samples.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "ragas.jsonl"
    path.write_text("\n".join(lines + lines[:1]) + "\n", encoding="utf-8")
    problems = _problems(lambda: load_cases([path], fmt="ragas", id_field="user_input"))
    assert problems == [f"{path}:{len(lines) + 1}: case id {json.loads(lines[0])['user_input']!r} is also the id "
                        "of the case at line 1"]

