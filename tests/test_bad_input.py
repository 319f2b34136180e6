"""Bad input that JSON itself lets through, or that crashes a reader: each is one located problem
(`file:line: path: message`, exit code 2 at the command line), never a traceback and never a value
silently kept or changed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from citeaudit import jsonio
from citeaudit.cli import main
from citeaudit.errors import InputError
from citeaudit.files.loading import MAX_DEPTH, load_cases, parse_cases, read_json_file

from helpers import make_case

GOLDEN_RUN = Path(__file__).parent / "golden" / "p7.runlog.json"
GOOD = make_case([{"id": "s1", "text": "x", "citations": ["S1"]}])
TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH} levels)"
INT_DIGITS = sys.get_int_max_str_digits()


def _text(case: dict) -> str:
    return json.dumps(case, indent=1)


def _line(text: str, needle: str, occurrence: int = 1) -> int:
    """The line of the `occurrence`-th appearance of `needle` in `text`."""
    pos = -1
    for _ in range(occurrence):
        pos = text.index(needle, pos + 1)
    return text.count("\n", 0, pos) + 1


def _with_metadata(raw_json: str) -> tuple[str, int]:
    """A case whose first document's metadata `x` is `raw_json` (spelt as is), and that line."""
    case = {**GOOD, "sources": [{"id": "S1", "text": "passage", "metadata": {"x": "@@"}}]}
    text = _text(case)
    return text.replace('"@@"', raw_json), _line(text, '"@@"')


CITED = {"id": "S1", "text": "the passage the answer cites"}


def _with_document(doc: dict, needle: str) -> tuple[str, int]:
    """A case whose first document is `doc` (the answer cites the second), and the line of `needle`."""
    text = _text({**GOOD, "sources": [doc, CITED]})
    return text, _line(text, needle)


def _passage(**fields) -> dict:
    return {"id": "D", "text": "hello world", "passages": [{"id": "P", **fields}]}


def _deep_metadata(depth: int):
    return lambda: ("cases.json", *_with_metadata("[" * depth + "]" * depth), "", TOO_DEEP)


def _refused_number(raw: str, message: str):
    return lambda: ("cases.json", *_with_metadata(raw), "sources[0].metadata.x", message)


def _repeated_field():
    text = _text(GOOD).replace('"text": "x"', '"text": "x",\n     "text": "y"')
    return "cases.json", text, _line(text, '"text": "y"'), "answers[0].statements[0].text", "duplicate key 'text'"


def _repeated_wrapper_key():
    text = '{"cases": [' + json.dumps(GOOD) + '],\n "cases": [' + json.dumps({**GOOD, "id": "u"}) + "]}"
    return "cases.json", text, 2, "cases", "duplicate key 'cases'"


def _jsonl(second_line: str) -> str:
    return json.dumps({**GOOD, "id": "first"}) + "\n" + second_line + "\n"


def _repeated_statement_id():
    text = _text(make_case([{"id": "s1", "text": "x", "citations": ["S1"]}, {"id": "s1", "text": "y"}]))
    return ("cases.json", text, _line(text, '"id": "s1"', 2), "answers[0].statements[1].id",
            "statement id 's1' is used twice in this answer")


def _span(span, field: str, message: str):
    def build():
        text = _text({**GOOD, "sources": [_passage(span=span), CITED]})
        needle = f'"{field}"' if field != "span" else '"span"'
        path = "sources[0].passages[0].span" + ("" if field == "span" else f".{field}")
        return "cases.json", text, _line(text, needle), path, message
    return build


def _blank(doc: dict, needle: str, path: str, message: str = "must not be empty or only whitespace"):
    return lambda: ("cases.json", *_with_document(doc, needle), path, message)


BAD_INPUT = [
    # 1. nesting: past MAX_DEPTH, and past what the json module itself can follow
    pytest.param(lambda: ("cases.json", "[" * 100_000 + "]" * 100_000, 1, "", TOO_DEEP), id="deep-array"),
    pytest.param(lambda: ("cases.json", "[" * 100_000, 1, "", TOO_DEEP), id="deep-unclosed"),
    pytest.param(_deep_metadata(MAX_DEPTH - 3), id="deep-metadata"),  # one level past: 4 come before
    pytest.param(_deep_metadata(5_000), id="deep-metadata-past-json"),
    pytest.param(lambda: ("cases.jsonl", _jsonl("[" * 50_000 + "]" * 50_000), 2, "", TOO_DEEP), id="deep-jsonl"),
    # 2. an integer longer than Python converts
    pytest.param(_refused_number("1" * (INT_DIGITS + 700), f"integer of {INT_DIGITS + 700} digits is too long "
                                 f"(at most {INT_DIGITS})"), id="huge-int",
                 marks=pytest.mark.skipif(INT_DIGITS == 0, reason="this Python converts integers of any length")),
    # 3. a key given twice
    pytest.param(_repeated_field, id="repeated-key"),
    pytest.param(lambda: ("cases.jsonl", _jsonl(json.dumps(GOOD).replace('"id": "t"', '"id": "t", "id": "u"')),
                          2, "id", "duplicate key 'id'"), id="repeated-key-jsonl"),
    pytest.param(_repeated_wrapper_key, id="repeated-wrapper-key"),
    # 4. two statements of one answer with one id
    pytest.param(_repeated_statement_id, id="repeated-statement-id"),
    # 5. span offsets are integers, not booleans, strings or floats
    pytest.param(_span({"start": True, "end": 5}, "start", "Input should be a valid integer"), id="span-bool"),
    pytest.param(_span({"start": "0", "end": 5}, "start", "Input should be a valid integer"), id="span-string"),
    pytest.param(_span({"start": 0, "end": 5.0}, "end", "Input should be a valid integer"), id="span-float"),
    pytest.param(_span([True, 5], "span", "Input should be a valid dictionary or instance of Span"),
                 id="span-bool-list"),
    pytest.param(_span(["0", "5"], "span", "Input should be a valid dictionary or instance of Span"),
                 id="span-string-list"),
    # 6. text a judge would be given with nothing in it
    pytest.param(_blank({"id": "D", "text": ""}, '"text": ""', "sources[0].text"), id="empty-document"),
    pytest.param(_blank({"id": "D", "text": " \n\t"}, '"text": " ', "sources[0].text"), id="blank-document"),
    pytest.param(_blank({"id": "D", "passages": [{"id": "P", "text": "  "}]}, '"text": "  "',
                        "sources[0].passages[0].text"), id="blank-passage"),
    pytest.param(_blank(_passage(span={"start": 5, "end": 6}), '"span"', "sources[0].passages[0].span",
                        "span [5, 6) holds no text (empty or only whitespace)"), id="span-over-a-space"),
    pytest.param(_blank(_passage(span={"start": 3, "end": 3}), '"span"', "sources[0].passages[0].span",
                        "span [3, 3) holds no text (empty or only whitespace)"), id="empty-span"),
    # 8. NaN and the infinities are not JSON
    pytest.param(_refused_number("NaN", "NaN is not allowed (JSON has no NaN or Infinity)"), id="nan"),
    pytest.param(_refused_number("Infinity", "Infinity is not allowed (JSON has no NaN or Infinity)"), id="inf"),
    pytest.param(_refused_number("-Infinity", "-Infinity is not allowed (JSON has no NaN or Infinity)"), id="-inf"),
    pytest.param(_refused_number("1e999", "number 1e999 is too large"), id="overflowing-float"),
    pytest.param(lambda: ("cases.json", _text(GOOD).replace('"q?"', "NaN"), _line(_text(GOOD), '"q?"'), "question",
                          "NaN is not allowed (JSON has no NaN or Infinity)"), id="nan-as-question"),
]


def _expected(file: Path, line: int, path: str, message: str) -> str:
    return f"{file}:{line}: {path}: {message}" if path else f"{file}:{line}: {message}"


@pytest.mark.parametrize("build", BAD_INPUT)
def test_bad_input_is_one_located_problem(build, tmp_path):
    name, text, line, path, message = build()
    file = tmp_path / name
    file.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_cases([file])
    assert [str(p) for p in info.value.problems] == [_expected(file, line, path, message)]


@pytest.mark.parametrize("build", BAD_INPUT)
def test_bad_input_exits_2_at_the_command_line(build, tmp_path, runner):
    name, text, line, path, message = build()
    file = tmp_path / name
    file.write_text(text, encoding="utf-8")
    result = runner.invoke(main, ["validate", str(file)])
    assert result.exit_code == 2, result.output
    assert _expected(file, line, path, message) in result.output
    assert "Traceback" not in result.output


def test_every_bad_record_is_reported_and_the_good_ones_are_not(tmp_path):
    lines = [
        json.dumps({**GOOD, "id": "one"}).replace('"id": "one"', '"id": "one", "id": "two"'),
        json.dumps({**GOOD, "id": "c", "sources": [{"id": "S1", "text": "p", "metadata": {"x": "@@"}}]})
        .replace('"@@"', "NaN"),
        json.dumps({**GOOD, "id": "d"}),
        "[" * 10_000,
        json.dumps({**GOOD, "id": "e", "sources": [_passage(span={"start": False, "end": 5}), CITED]}),
    ]
    file = tmp_path / "cases.jsonl"
    file.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_cases([file])
    assert [str(p) for p in info.value.problems] == [
        f"{file}:1: id: duplicate key 'id'",
        f"{file}:2: sources[0].metadata.x: NaN is not allowed (JSON has no NaN or Infinity)",
        f"{file}:4: {TOO_DEEP}",
        f"{file}:5: sources[0].passages[0].span.start: Input should be a valid integer",
    ]


def test_nesting_up_to_the_limit_is_read(tmp_path):
    # case object, sources, document, metadata: four levels before the arrays
    text, _ = _with_metadata("[" * (MAX_DEPTH - 4) + "]" * (MAX_DEPTH - 4))
    (rc,) = parse_cases("cases.json", text)
    assert len(json.dumps(rc.case.sources[0].metadata["x"])) == 2 * (MAX_DEPTH - 4)
    # a run log holds such a case a level or two further down, and is still read
    log = tmp_path / "run.json"
    log.write_text(json.dumps({"schema_version": 2, "cases": [json.loads(text)]}), encoding="utf-8")
    assert read_json_file(log)["cases"][0]["id"] == "t"


# --- 7. JSON lines end at "\n" only ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["cases.jsonl", "cases.json"])
def test_json_line_strings_may_hold_line_separators(name, tmp_path, runner):
    question = "one\u2028two\u2029three\x85four\x0bfive"
    cases = [{**GOOD, "id": "a", "question": question}, {**GOOD, "id": "b"}]
    file = tmp_path / name
    file.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n", encoding="utf-8")
    loaded = load_cases([file])
    assert [rc.case.question for rc in loaded] == [question, "q?"]
    assert [rc.origin for rc in loaded] == [f"{file}:1", f"{file}:2"]
    assert runner.invoke(main, ["validate", str(file)]).exit_code == 0


def test_json_lines_may_end_in_crlf():
    text = "\r\n".join(json.dumps({**GOOD, "id": i, "question": "a\u2028b"}, ensure_ascii=False) for i in "xy")
    assert [rc.id for rc in parse_cases("cases.jsonl", text + "\r\n")] == ["x", "y"]
    with pytest.raises(InputError) as info:
        parse_cases("cases.jsonl", text + "\r\n{bad\r\n")
    assert str(info.value.problems[0]).startswith("cases.jsonl:3: malformed JSON")


# --- run logs and source lists are read as strictly -------------------------------------------------


def _edited_run(old: str, new: str) -> tuple[str, int]:
    text = GOLDEN_RUN.read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new, 1), _line(text, old)


@pytest.mark.parametrize("old, new, path, message", [
    ('"scores": null', '"scores": NaN', "judgments[0].judgment.scores",
     "NaN is not allowed (JSON has no NaN or Infinity)"),
    ('"label": "full",', '"label": "full", "label": "none",', "cases[0].labels[0].label", "duplicate key 'label'"),
    ('"metadata": {}', '"metadata": {"n": ' + "9" * (INT_DIGITS + 1) + "}", "cases[0].sources[0].metadata.n",
     f"integer of {INT_DIGITS + 1} digits is too long (at most {INT_DIGITS})"),
    ('"raw": null', '"raw": ' + "[" * 5_000 + "]" * 5_000, "", TOO_DEEP),  # past the json module: no path
    ('"raw": null', '"raw": ' + "[" * 200 + "]" * 200, "judgments[0]", TOO_DEEP),
])
def test_run_logs_are_read_strictly(old, new, path, message, tmp_path, runner):
    text, line = _edited_run(old, new)
    run = tmp_path / "run.json"
    run.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_json_file(run)
    assert [str(p) for p in info.value.problems] == [_expected(run, line, path, message)]
    result = runner.invoke(main, ["rescore", str(run)])
    assert result.exit_code == 2 and _expected(run, line, path, message) in result.output


def test_review_sources_are_read_strictly(tmp_path, runner):
    sources = tmp_path / "sources.json"
    sources.write_text('[{"id": "D1",\n  "text": "x", "text": "y"}]', encoding="utf-8")
    result = runner.invoke(main, ["review", str(GOLDEN_RUN), "--sources", str(sources)])
    assert result.exit_code == 2
    assert f"{sources}:2: [0].text: duplicate key 'text'" in result.output


# --- the checks cost a sound file nothing it did not need ------------------------------------------


def test_a_sound_file_is_read_without_locating_any_field(tmp_path, monkeypatch):
    def no_line_map(text):
        raise AssertionError("a sound file needs no field's line")

    monkeypatch.setattr(jsonio, "line_map", no_line_map)
    file = tmp_path / "cases.json"
    text = _text([{**GOOD, "id": f"c{i}"} for i in range(3)])
    file.write_text(text, encoding="utf-8")
    starts = [_line(text, '"id": "c%d"' % i) - 1 for i in range(3)]  # the line of each case's "{"
    assert [rc.origin for rc in load_cases([file])] == [f"{file}:{line}" for line in starts]
