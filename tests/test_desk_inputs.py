"""What the desk opens: a run log (whole or streamed) is told from case files by its content."""

from __future__ import annotations

import json
from pathlib import Path

from citeaudit.cli import desk_session, main
from citeaudit.run.log import is_run_log

SOURCE = "schema_version"  # a source id: the case file holds the run log's key as a JSON string


def _case(claim: str = "A run log opens with its schema version.") -> dict:
    return {
        "id": "c1", "question": "What does a run log open with?",
        "sources": [{"id": SOURCE, "version": "v1", "text": "A run log opens with its schema version."}],
        "answers": [{"id": "a1", "statements": [{"id": "s1", "text": claim, "citations": [SOURCE]}]}],
        "labels": [{"claim": claim, "passages": [SOURCE], "label": "full"}],
    }


def test_a_case_file_that_quotes_a_run_logs_field_is_read_as_cases(tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(_case()), encoding="utf-8")
    assert '"schema_version"' in cases.read_text(encoding="utf-8")[:4096]
    assert not is_run_log(cases)
    session = desk_session([str(cases)])
    assert list(session.cases) == ["c1"] and session.source == str(cases)


def test_a_run_log_and_a_streamed_run_log_are_read_as_run_logs(tmp_path, runner):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(_case()) + "\n", encoding="utf-8")
    for name in ("run.json", "run.jsonl"):
        run = tmp_path / name
        result = runner.invoke(main, ["score", str(cases), "--out", str(run)])
        assert result.exit_code == 0, result.output
        assert is_run_log(run)
        session = desk_session([str(run)])
        assert list(session.cases) == ["c1"] and session.source == str(run)
        assert session.judge_status.note  # only a run log's session says how its judge was made again


def test_other_files_are_no_run_logs(tmp_path):
    for name, text in [("list.json", json.dumps([_case()])), ("empty.json", ""), ("broken.json", '{"schema_versi'),
                       ("key.json", json.dumps({"cases": [_case()], "schema_version": 4}))]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert not is_run_log(path), name
    assert not is_run_log(Path(tmp_path / "missing.json"))
