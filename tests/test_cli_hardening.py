"""The command line against what goes wrong around the scoring: unwritable outputs, hand-edited or
broken run logs, control characters on the way to a terminal, and case-file wrappers with stray keys."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.text import visible_controls


def _case(claim: str = "Eco lowers energy use.", case_id: str = "c1", answer_id: str = "a1",
          question: str = "What does Eco do?") -> dict:
    return {
        "id": case_id, "question": question,
        "sources": [{"id": "S1", "version": "v1", "text": "Eco mode lowers energy use."}],
        "answers": [{"id": answer_id, "statements": [{"id": "s1", "text": claim, "citations": ["S1"]}]}],
        "labels": [{"claim": claim, "passages": ["S1"], "label": "full"}],
    }


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def case_file(tmp_path) -> Path:
    return _write(tmp_path / "cases.json", _case())


@pytest.fixture
def run_log(tmp_path, runner, case_file) -> Path:
    out = tmp_path / "run.json"
    assert runner.invoke(main, ["score", str(case_file), "--out", str(out)]).exit_code == 0
    return out


# --- outputs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--out", "--store"])
def test_score_refuses_a_destination_in_a_missing_folder_before_scoring(runner, case_file, tmp_path, option):
    missing = tmp_path / "no-such-folder" / "file"
    result = runner.invoke(main, ["score", str(case_file), option, str(missing)])
    assert result.exit_code == 2, result.output
    assert f"{option} {missing}: folder {missing.parent} does not exist" in result.output
    assert "summary" not in result.output  # refused before any work, not after it
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("option", ["--store", "--list"])
def test_prepare_refuses_a_destination_in_a_missing_folder(runner, case_file, tmp_path, option):
    store = tmp_path / "store.db"
    missing = tmp_path / "gone" / "x"
    args = ["prepare", str(case_file), "--store", str(missing if option == "--store" else store)]
    if option == "--list":
        args += ["--list", str(missing)]
    result = runner.invoke(main, args)
    assert result.exit_code == 2 and f"{option} {missing}: folder" in result.output
    assert not store.exists()  # nothing was judged or recorded first


def test_report_refuses_an_output_in_a_missing_folder(runner, run_log, tmp_path):
    missing = tmp_path / "gone" / "report.html"
    result = runner.invoke(main, ["report", str(run_log), "-o", str(missing)])
    assert result.exit_code == 2 and f"--output {missing}: folder" in result.output


def test_a_finished_scoring_is_kept_when_its_log_cannot_be_written(runner, case_file, tmp_path, monkeypatch):
    import citeaudit.files.destinations as outputs

    target = tmp_path / "run.json"
    real = outputs._write_atomically

    def failing_for_target(path, text):
        if Path(path) == target:
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(outputs, "_write_atomically", failing_for_target)
    result = runner.invoke(main, ["score", str(case_file), "--out", str(target)])
    assert result.exit_code == 2
    kept = next(tmp_path.glob("run.*.json"))
    assert f"could not write run log {target} (No space left on device); it was written to {kept} instead" \
        in result.output
    assert json.loads(kept.read_text(encoding="utf-8"))["results"]["summary"]  # the whole log, readable
    assert "summary" in result.output  # and the figures were printed all the same


def test_an_interrupted_write_leaves_no_half_file(tmp_path, monkeypatch):
    import os

    from citeaudit.files.destinations import write_output

    target = tmp_path / "report.md"
    target.write_text("old report", encoding="utf-8")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_output(target, "new report", "report")
    assert target.read_text(encoding="utf-8") == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # the temporary file is gone too


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_every_output_file_gets_the_mode_the_umask_gives(runner, case_file, tmp_path, umask):
    """Outputs are written to a temporary file and renamed: the file must end with 0666 less the umask,
    as any other tool's output would, not the temporary file's private 0600."""
    import os

    written = {"log": tmp_path / "run.json", "stream": tmp_path / "run.jsonl", "list": tmp_path / "pairs.jsonl",
               "report": tmp_path / "report.md", "export": tmp_path / "claims.csv"}
    old = os.umask(umask)
    try:
        commands = [["score", str(case_file), "--out", str(written["log"])],
                    ["score", str(case_file), "--out", str(written["stream"])],
                    ["prepare", str(case_file), "--store", str(tmp_path / "s.db"), "--list", str(written["list"])],
                    ["report", str(written["log"]), "--format", "markdown", "-o", str(written["report"])],
                    ["export", str(written["log"]), "--to", str(written["export"])]]
        for args in commands:
            result = runner.invoke(main, args)
            assert result.exit_code == 0, (args, result.output)
    finally:
        os.umask(old)
    assert {name: oct(path.stat().st_mode & 0o777) for name, path in written.items()} == \
        {name: oct(0o666 & ~umask) for name in written}


# --- run logs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    ({"schema_version": "1"}, 'schema_version: expected an integer (1, 2, 3, 4, 5), got "1"'),
    ({"schema_version": [1]}, "schema_version: expected an integer (1, 2, 3, 4, 5), got [1]"),
    ({"schema_version": 1, "settings": [3]}, "settings: Input should be a valid dictionary"),
    ({"settings": "garbage"}, "settings: Input should be a valid dictionary"),
    ({"results": [1, 2]}, "results: Input should be a valid dictionary"),
])
@pytest.mark.parametrize("command", ["report", "review", "rescore"])
def test_a_broken_run_log_is_a_located_error(runner, run_log, case_file, change, message, command):
    data = json.loads(run_log.read_text(encoding="utf-8"))
    data.update(change)
    _write(run_log, data)
    args = [command, str(run_log)] + (["--sources", str(case_file)] if command == "review" else [])
    result = runner.invoke(main, args)
    assert result.exit_code == 2, result.output
    assert str(run_log) in result.output and message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("command", ["repair", "rescore"])
def test_a_case_of_the_log_that_no_longer_resolves_is_located_in_the_log(runner, case_file, tmp_path, command, stream):
    run_log = tmp_path / ("run.jsonl" if stream else "run.json")
    assert runner.invoke(main, ["score", str(case_file), "--out", str(run_log)]).exit_code == 0
    # the one case (in the document, or on the line after a stream's header) cites a passage it does not hold
    text = run_log.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()] if stream else [json.loads(text)]
    case = records[1]["case"] if stream else records[0]["cases"][0]
    case["answers"][0]["statements"][0]["citations"] = ["D9"]
    run_log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = runner.invoke(main, [command, str(run_log)])
    assert result.exit_code == 2, result.output
    assert (f"citeaudit: {run_log}: case c1: answers[0].statements[0].citations[0]: unknown passage 'D9'\n"
            "the run log's cases do not resolve: it was changed after it was written") in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def _edit_support(run_log: Path) -> None:
    """Change the stored support figures by hand, as someone editing the file would."""
    data = json.loads(run_log.read_text(encoding="utf-8"))
    results = data["results"]
    for figures in (results["answers"][0]["metrics"], results["summary"]["all"],
                    *results["summary"]["by_system"].values()):
        assert (figures["support"]["numerator"], figures["support"]["denominator"]) == (1, 1)
        figures["support"].update(numerator=0, value=0.0)
    _write(run_log, data)


def test_an_edited_run_log_is_reported_as_edited_and_shown_as_stored_in_every_format(runner, run_log):
    clean = runner.invoke(main, ["report", str(run_log), "--format", "text"])
    assert clean.exit_code == 0 and "changed after it was written" not in clean.output
    _edit_support(run_log)
    outputs = {}
    for fmt in ("text", "markdown", "json", "html"):
        result = runner.invoke(main, ["report", str(run_log), "--format", fmt])
        assert result.exit_code == 0
        assert f"warning: {run_log} was changed after it was written" in result.output
        outputs[fmt] = result.output
    # as stored, in every format: the hand-edited 0/1, never recomputed to 1/1
    assert "0/1 (0.0 %)" in outputs["text"] and "0/1 (0.0 %)" in outputs["markdown"]
    assert '"numerator": 0' in outputs["json"]
    assert 'id="edited"' in outputs["html"]


def test_a_log_written_by_citeaudit_verifies(run_log):
    from citeaudit.run.log import read_runlog

    log = read_runlog(run_log)
    assert log.checksum and len(log.checksum) == 64 and not log.edited


# --- terminals -----------------------------------------------------------------------------------

HOSTILE_CLAIM = "Eco lowers \x1b]0;owned\x07energy\x1b[2J use [red]now[/red]."
HOSTILE_ID = "gnp\u202e.exe"


@pytest.fixture
def hostile_run(tmp_path, runner) -> tuple[Path, Path]:
    cases = _write(tmp_path / "hostile.json", _case(HOSTILE_CLAIM, case_id=HOSTILE_ID, answer_id="a\x9b1",
                                                      question="q\x1b[31m?"))
    out = tmp_path / "hostile.run.json"
    result = runner.invoke(main, ["score", str(cases), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return cases, out


def _assert_shown_not_obeyed(output: str) -> None:
    assert not any(c in output for c in ("\x1b", "\x07", "\x9b", "\u202e")), repr(output)
    assert "\\x1b]0;owned\\x07" in output or "\\x1b[2J" in output


@pytest.mark.parametrize("command", [
    ["score", "{cases}"],
    ["score", "{cases}", "--format", "markdown"],
    ["report", "{run}", "--format", "text"],
    ["report", "{run}", "--format", "markdown"],
    ["compare", "{run}", "{edited}", "--allow-mismatch"],  # curated labels differ: so do the judges
    ["review", "{run}", "--sources", "{changed}"],
])
def test_control_characters_from_the_input_are_shown_not_obeyed(runner, hostile_run, tmp_path, command):
    cases, run = hostile_run
    changed = json.loads(cases.read_text(encoding="utf-8"))
    changed["sources"][0]["text"] = "Eco mode now raises energy use."
    changed_path = _write(tmp_path / "changed.json", changed)
    other = tmp_path / "other.run.json"
    relabelled = json.loads(cases.read_text(encoding="utf-8"))
    relabelled["labels"][0]["label"] = "none"
    runner.invoke(main, ["score", str(_write(tmp_path / "relabelled.json", relabelled)), "--out", str(other)])
    args = [a.format(cases=cases, run=run, edited=other, changed=changed_path) for a in command]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    _assert_shown_not_obeyed(result.output)


def test_rich_markup_in_a_claim_is_printed_literally(runner, hostile_run):
    cases, _ = hostile_run
    result = runner.invoke(main, ["score", str(cases)], terminal_width=300)
    assert "[red]now[/red]" in result.output


def test_an_error_message_quoting_the_input_shows_its_control_characters(runner, tmp_path):
    bad = _case()
    bad["answers"][0]["statements"][0]["citations"] = ["S\x1b[2J9"]
    result = runner.invoke(main, ["validate", str(_write(tmp_path / "bad.json", bad))])
    assert result.exit_code == 2 and "S\\x1b[2J9" in result.output and "\x1b" not in result.output


TITLE = "\x1b]0;owned\x07"  # an OSC sequence: sets the terminal's window title


@pytest.mark.parametrize("command", [
    ["verify", "{cases}", "--answer", "nope"],  # the answers the file holds are listed
    ["verify", "{cases}"],  # several answers: they are listed
    ["verify", "{cases}", "--answer", f"x{TITLE}\u202e"],
    ["score", "{folder}"],
    ["validate", "{folder}"],
    [f"sc{TITLE}ore"],
    ["score", f"--{TITLE}"],
    ["score", "{cases}", "--k", f"1,{TITLE}"],
])
def test_a_usage_error_quoting_the_input_shows_its_control_characters(runner, tmp_path, command):
    case = _case(answer_id=f"a{TITLE}\u202e")
    case["answers"].append({**case["answers"][0], "id": "b\x07\x9b"})
    cases = _write(tmp_path / "cases.json", case)
    folder = tmp_path / f"dir{TITLE}"
    folder.mkdir()
    result = runner.invoke(main, [a.format(cases=cases, folder=folder) for a in command])
    assert result.exit_code == 2, result.output
    assert "Error:" in result.output
    assert not any(c in result.output for c in ("\x1b", "\x07", "\x9b", "\u202e")), repr(result.output)
    assert "\\x1b]0;owned\\x07" in result.output or "\\x07" in result.output


def test_visible_controls_keeps_newlines_tabs_and_ordinary_text():
    assert visible_controls("a\tb\nc — 中文 é") == "a\tb\nc — 中文 é"
    assert visible_controls("\x00\x7f\u200f\u2066") == "\\x00\\x7f\\u200f\\u2066"


# --- case files ----------------------------------------------------------------------------------

def test_visible_controls_shows_noncharacters_and_lone_surrogates_as_escapes():
    shown = visible_controls("a\ufffe\uffff\ufdd0\U0001fffe\ud800b")
    assert shown == "a\\ufffe\\uffff\\ufdd0\\U0001fffe\\ud800b"
    assert shown.encode("utf-8")  # a lone surrogate left in would fail on the way to the terminal


def test_a_stray_key_beside_cases_is_refused_with_its_line(runner, tmp_path):
    path = tmp_path / "wrapped.json"
    path.write_text('{\n "cases": [' + json.dumps(_case()) + '],\n "judge": "model"\n}\n', encoding="utf-8")
    result = runner.invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:3: judge: unexpected key beside 'cases'" in result.output


def test_jsonl_strings_may_hold_next_line_and_line_separator_characters(runner, tmp_path):
    first = _case(question="first\u0085line \u2028 here")
    lines = [json.dumps(first, ensure_ascii=False), json.dumps(_case(case_id="c2"), ensure_ascii=False), '{"id": 3}']
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:3: id: Input should be a valid string" in result.output  # the third line, counted on \n only
    assert f"{path}:1" not in result.output and f"{path}:2" not in result.output


@pytest.mark.parametrize("args, message", [
    (["--judge", "embedding:5"], "thr expects a number > 0 and <= 1, got '5'"),
])
def test_out_of_range_judge_options_are_refused(runner, case_file, args, message):
    result = runner.invoke(main, ["score", str(case_file), *args])
    assert result.exit_code == 2 and message in result.output


@pytest.mark.parametrize("value", ["-5", "0"])
def test_validate_judge_refuses_a_resample_count_below_one(runner, value):
    data = Path(__file__).parent / "fixtures" / "judge_validation_sample.jsonl"
    result = runner.invoke(main, ["validate-judge", str(data), "--judge", "curated", "--resamples", value])
    assert result.exit_code == 2 and f"--resamples': {value} is not in the range x>=1" in result.output


@pytest.mark.parametrize("args, message", [
    (["--host", "0.0.0.0"], "--host 0.0.0.0 is not a loopback address. The desk has no authentication"),
    (["--port", "99999"], "--port must be between 1 and 65535"),
])
def test_the_desk_refuses_to_start_unsafely_or_impossibly(runner, args, message):
    pytest.importorskip("fastapi")
    result = runner.invoke(main, ["desk", "--no-open", *args])
    assert result.exit_code == 2 and message in result.output and "desk on" not in result.output


def test_a_desk_without_its_extra_is_a_setup_error_not_a_verify_decision(runner, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn fails as when it is not installed
    result = runner.invoke(main, ["desk", "--no-open"])
    assert result.exit_code == 2 and "pip install 'citeaudit[desk]'" in result.output


@pytest.mark.parametrize("args, message", [
    (["--steps", "0"], "--steps': 0 is not in the range x>=1"),
    (["--lr", "-1e-5"], "--lr': -1e-05 is not in the range x>0"),
    (["--lr", "0"], "--lr': 0.0 is not in the range x>0"),
    (["--time-budget", "-3"], "--time-budget': -3.0 is not in the range x>0"),
])
def test_train_judge_refuses_nonsense_before_training(runner, tmp_path, args, message):
    result = runner.invoke(main, ["train-judge", str(tmp_path / "out"), *args])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "out").exists()


# --- run logs edited and their checksum taken out ------------------------------------------------

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("golden, how, note", [
    ("p7.runlog.v3.json", "removed", "its checksum was removed"),
    ("p7.runlog.v4.json", "removed", "its checksum was removed"),
    ("p7.runlog.json", "removed", "its checksum was removed"),
    ("p7.runlog.json", "null", "its checksum was removed"),
    ("p7.runlog.json", "kept", "its checksum does not match"),
    # logs of schema 1 and 2 never had a checksum: read unchecked, as they always were
    ("p7.runlog.v1.json", "removed", None),
    ("p7.runlog.v2.json", "removed", None),
])
def test_a_log_of_schema_3_or_later_without_its_checksum_is_edited(tmp_path, golden, how, note):
    from citeaudit.run.log import read_runlog

    data = json.loads((GOLDEN / golden).read_text(encoding="utf-8"))
    data["results"]["summary"]["all"]["support"]["numerator"] += 1  # a figure edited by hand
    if how == "removed":
        data.pop("checksum", None)
    elif how == "null":
        data["checksum"] = None
    log = read_runlog(_write(tmp_path / "run.json", data))
    assert (log.edited, log.edit_note) == (note is not None, note)


def _without_checksum(run_log: Path) -> Path:
    data = json.loads(run_log.read_text(encoding="utf-8"))
    del data["checksum"]
    return _write(run_log, data)


def _trailer_edited(stream: Path) -> Path:
    """The streamed log with its trailer's summary changed by hand (the checksum does not cover it)."""
    lines = stream.read_text(encoding="utf-8").splitlines()
    trailer = json.loads(lines[-1])
    trailer["summary"]["all"]["support"].update(numerator=0, value=0.0)
    lines[-1] = json.dumps(trailer)
    stream.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return stream


EDIT_COMMANDS = {
    "report text": ["report", "{run}", "--format", "text"],
    "report markdown": ["report", "{run}", "--format", "markdown"],
    "report json": ["report", "{run}", "--format", "json"],
    "compare": ["compare", "{run}", "{run}"],
    "export": ["export", "{run}", "--to", "{tmp}/claims.csv"],
    "rescore": ["rescore", "{run}"],
    "review": ["review", "{run}", "--sources", "{cases}"],
    "agree": ["agree", "{run}", "--labels", "{labels}"],
}


@pytest.mark.parametrize("kind", ["document without checksum", "stream with an edited trailer"])
@pytest.mark.parametrize("command", EDIT_COMMANDS)
def test_every_command_that_reads_a_log_warns_when_it_was_edited(runner, tmp_path, case_file, kind, command):
    stream = kind.startswith("stream")
    run = tmp_path / ("run.jsonl" if stream else "run.json")
    assert runner.invoke(main, ["score", str(case_file), "--out", str(run)]).exit_code == 0
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "r1", "claim": "Eco lowers energy use.", "label": "full",
                                  "passages": [{"id": "S1", "text": "Eco mode lowers energy use."}]}) + "\n")
    args = [a.format(run=run, tmp=tmp_path, cases=case_file, labels=labels) for a in EDIT_COMMANDS[command]]
    clean = runner.invoke(main, args)
    assert clean.exit_code == 0 and "changed after it was written" not in clean.output, clean.output
    _trailer_edited(run) if stream else _without_checksum(run)
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    note = "its trailer's count or summary is not its cases'" if stream else "its checksum was removed"
    assert f"warning: {run} was changed after it was written ({note}" in result.output


def test_the_desk_warns_about_a_log_without_its_checksum(run_log, capsys):
    pytest.importorskip("fastapi")
    from citeaudit.cli import desk_session

    desk_session([str(_without_checksum(run_log))])
    assert f"warning: {run_log} was changed after it was written (its checksum was removed)" in capsys.readouterr().err


def test_a_streamed_log_is_read_with_the_summary_its_cases_sum_to(runner, tmp_path, case_file):
    from citeaudit.run.log import read_runlog

    run = tmp_path / "run.jsonl"
    assert runner.invoke(main, ["score", str(case_file), "--out", str(run)]).exit_code == 0
    log = read_runlog(_trailer_edited(run))
    assert log.edited
    support = log.results.summary.all["support"]
    assert (support.numerator, support.denominator) == (1, 1)  # the cases' 1/1, not the trailer's 0/1
    report = runner.invoke(main, ["report", str(run), "--format", "json"])
    shown = json.loads(report.stdout)["summary"]["all"]["support"]
    assert (shown["numerator"], shown["denominator"]) == (1, 1)


def test_the_html_report_says_how_the_log_is_known_to_be_edited(runner, run_log):
    result = runner.invoke(main, ["report", str(_without_checksum(run_log)), "--format", "html"])
    assert result.exit_code == 0
    assert 'id="edited">This run log was changed after it was written (its checksum was removed)' in result.stdout


# --- the output folder removed while the work goes on --------------------------------------------

def _two_cases(tmp_path: Path) -> Path:
    return _write(tmp_path / "cases.json", [_case(), _case("Eco saves money.", case_id="c2")])


def _remove_after_first(monkeypatch, cls, method: str, folder: Path) -> None:
    """Remove `folder` (with the temporary file being written in it) once `cls.method` has run once."""
    import shutil

    real = getattr(cls, method)

    def then_remove(self, *args):
        real(self, *args)
        shutil.rmtree(folder, ignore_errors=True)

    monkeypatch.setattr(cls, method, then_remove)


def _folder_that_vanishes(tmp_path, monkeypatch, cls, method):
    """Two cases to score, an output folder removed once `cls.method` has run once, and the current
    folder (where the fallback copy goes) apart from both."""
    cases = _two_cases(tmp_path)
    folder, work = tmp_path / "out", tmp_path / "work"
    folder.mkdir(), work.mkdir()
    monkeypatch.chdir(work)
    _remove_after_first(monkeypatch, cls, method, folder)
    return cases, folder, work


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_a_streamed_log_whose_folder_vanished_is_kept_with_its_checksum(runner, tmp_path, monkeypatch, fmt):
    from citeaudit.run.log import read_runlog
    from citeaudit.run.outputs import StreamLog

    cases, folder, work = _folder_that_vanishes(tmp_path, monkeypatch, StreamLog, "case")
    target = folder / "run.jsonl"
    result = runner.invoke(main, ["score", str(cases), "--out", str(target), "--format", fmt])
    assert result.exit_code == 2 and not folder.exists()
    (kept,) = work.glob("run.*.jsonl")  # beside the target is gone: the current folder
    assert f"could not write run log {target} (No such file or directory); it was written to {kept} instead" \
        in result.output
    log = read_runlog(kept)
    assert not log.edited and len(log.cases) == 2  # whole, and its checksum right
    # and the figures were printed all the same
    if fmt == "text":
        assert "2 case(s), 2 answer(s)" in result.output and "support                  2/2 (100.0 %)" in result.output
    else:
        assert json.loads(result.stdout.splitlines()[-1])["summary"]["all"]["support"]["numerator"] == 2


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_a_streamed_log_whose_folder_vanished_before_the_first_case_is_kept(runner, tmp_path, monkeypatch, fmt):
    """The folder goes after `--out` was checked and the input read, before the log's file is made: the
    file is made where the log will be kept instead, and the run ends as when it goes later."""
    from citeaudit.run.log import read_runlog
    from citeaudit.run.pipeline import Run

    cases, folder, work = _folder_that_vanishes(tmp_path, monkeypatch, Run, "__init__")
    target = folder / "run.jsonl"
    result = runner.invoke(main, ["score", str(cases), "--out", str(target), "--format", fmt])
    assert result.exit_code == 2 and not folder.exists()
    (kept,) = work.glob("run.*.jsonl")
    assert f"could not write run log {target} (No such file or directory); it was written to {kept} instead" \
        in result.output
    log = read_runlog(kept)
    assert not log.edited and len(log.cases) == 2
    assert [p.name for p in work.iterdir()] == [kept.name]  # no temporary file left beside it
    if fmt == "text":
        assert "2 case(s), 2 answer(s)" in result.output and "support                  2/2 (100.0 %)" in result.output
    else:
        assert json.loads(result.stdout.splitlines()[-1])["summary"]["all"]["support"]["numerator"] == 2


def test_a_pair_list_whose_folder_vanished_is_kept(runner, tmp_path, monkeypatch):
    from citeaudit.run.pipeline import _Listing

    cases, folder, work = _folder_that_vanishes(tmp_path, monkeypatch, _Listing, "add")
    target = folder / "pairs.jsonl"
    result = runner.invoke(main, ["prepare", str(cases), "--store", str(tmp_path / "s.db"), "--list", str(target)])
    assert result.exit_code == 2
    (kept,) = work.glob("pairs.*.jsonl")
    assert f"could not write --list {target} (No such file or directory); it was written to {kept} instead" \
        in result.output
    assert [json.loads(line)["text"] for line in kept.read_text(encoding="utf-8").splitlines()] == \
        ["Eco lowers energy use.", "Eco saves money."]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_score_json_keeps_hostile_text_exactly_as_given(runner, tmp_path, fmt):
    """JSON output escapes text as JSON, never as a terminal would: parsed back, every character is there."""
    claim = 'Eco \x1b[2J\x1b]0;owned\x07 says "30 \\\\ days" \u202egnp.exe, \U0001d518 and \U0001f600 [x]\\n.'
    case_id, question = "c\u202e\x1b1", 'q "\\" \x07?'
    cases = _write(tmp_path / "hostile.json", _case(claim, case_id=case_id, question=question))
    result = runner.invoke(main, ["score", str(cases), "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "json":
        data = json.loads(result.stdout)
        (answer,), (case,) = data["answers"], data["cases"]
    else:  # the case's line, then the summary's
        line = json.loads(result.stdout.splitlines()[0])
        (answer,), case = line["answers"], line["case"]
    assert [c["text"] for c in answer["claims"]] == [claim]
    assert [s["text"] for s in answer["statements"]] == [claim]
    assert (answer["case"], case["question"]) == (case_id, question)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout  # escaped in the JSON text itself
