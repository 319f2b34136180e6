"""Streamed score, prepare and export: the same figures, errors and store as the loaded path, with memory
that does not grow with the input (a generated million-pair file, measured by the test itself)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from citeaudit.cli import main
from citeaudit.errors import RunLogError
from citeaudit.examples import EXAMPLE_FILES, example_text
from citeaudit.judges import JudgmentStore
from citeaudit.run.log import is_stream, read_runlog, rescore, stream_entries
from citeaudit.run.results import results_of

from helpers import killed_inside_nth_write, make_case

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from synthetic import PAIRS_PER_CASE, make_case as synthetic_case, write_cases  # noqa: E402

CLI = str(Path(sys.executable).with_name("citeaudit"))


@pytest.fixture
def runner():
    return CliRunner()


def _jsonl(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    return path


def _results_from_lines(text: str) -> dict:
    """The results of `score --format jsonl`, put back together in the shape of `--format json`."""
    *body, end = [json.loads(line) for line in text.splitlines()]
    return {"citeaudit_version": end["citeaudit_version"], "judge": end["judge"], "settings": end["settings"],
            "cases": [line["case"] for line in body], "answers": [a for line in body for a in line["answers"]],
            "summary": end["summary"]}


def _example_cases() -> list[dict]:
    """The worked examples' cases (answers given as statements and as raw text to parse), as JSON."""
    out = []
    for name in EXAMPLE_FILES:
        data = json.loads(example_text(name))
        out += data if isinstance(data, list) else data.get("cases", [data])
    assert any(a.get("text") and not a.get("statements") for c in out for a in c["answers"])  # raw text to parse
    return out


# --- the same figures ------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [[], ["--alce-zero-precision", "--k", "1,2"], ["--metrics", "support,coverage"],
                                     ["--conventions", "alce"]], ids=["default", "alce-zero", "metrics", "alce"])
def test_streamed_results_equal_the_loaded_results(runner, tmp_path, options):
    cases = _jsonl(tmp_path / "c.jsonl", [synthetic_case(i) for i in range(30)])
    whole = runner.invoke(main, ["score", str(cases), "--format", "json", *options])
    streamed = runner.invoke(main, ["score", str(cases), "--format", "jsonl", *options])
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert _results_from_lines(streamed.stdout) == json.loads(whole.stdout)


def test_streamed_results_of_the_examples_equal_the_loaded_results(runner, tmp_path):
    """The examples hold parsed answers (the parser enters the signature) and several systems."""
    cases = _jsonl(tmp_path / "examples.jsonl", _example_cases())
    whole = runner.invoke(main, ["score", str(cases), "--format", "json"])
    streamed = runner.invoke(main, ["score", str(cases), "--format", "jsonl"])
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    expected = json.loads(whole.stdout)
    assert any("parse:" in r["signature"] for r in expected["summary"]["all"].values())
    assert _results_from_lines(streamed.stdout) == expected


def test_a_label_given_in_another_case_answers_as_it_does_loaded(runner, tmp_path):
    """Labels are about texts: a pair labelled only in a later case, and one labelled twice (the last
    explanation wins), are judged as the loaded curated judge judges them."""
    first, second = synthetic_case(0), synthetic_case(1)
    moved = first["labels"].pop(0)
    second["sources"] += [dict(s, id=f"X{s['id']}") for s in first["sources"][:2]]
    second["labels"].append(dict(moved, passages=[f"X{p}" for p in moved["passages"]]))
    again = first["labels"][2]  # the second statement's cited set
    assert again["claim"] == first["answers"][0]["statements"][1]["text"] and len(again["passages"]) == 2
    second["sources"] += [dict(s, id=f"X{s['id']}") for s in first["sources"][2:3]]
    second["labels"].append(dict(again, passages=[f"X{p}" for p in again["passages"]], explanation="said again, later"))
    cases = _jsonl(tmp_path / "c.jsonl", [first, second])
    whole = runner.invoke(main, ["score", str(cases), "--format", "json"])
    streamed = runner.invoke(main, ["score", str(cases), "--format", "jsonl"])
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert _results_from_lines(streamed.stdout) == json.loads(whole.stdout)
    assert "said again, later" in streamed.stdout


# --- the same errors -------------------------------------------------------------------------------


def test_conflicting_labels_in_two_cases_are_reported_as_when_loaded(runner, tmp_path):
    first, second = synthetic_case(0), synthetic_case(1)
    second["sources"] += [dict(s, id=f"X{s['id']}") for s in first["sources"]]
    label = first["labels"][0]
    other = next(x for x in ("full", "partial", "none") if x != label["label"])
    second["labels"].append(dict(label, passages=[f"X{p}" for p in label["passages"]], label=other))
    cases = _jsonl(tmp_path / "c.jsonl", [first, second])
    whole = runner.invoke(main, ["score", str(cases), "--format", "json"])
    streamed = runner.invoke(main, ["score", str(cases), "--format", "jsonl"])
    assert whole.exit_code == streamed.exit_code == 2
    assert streamed.stderr == whole.stderr and f"conflicting label '{other}'" in streamed.stderr
    assert streamed.stdout == ""


def test_a_line_that_fails_when_read_again_is_reported_as_when_read_first(tmp_path):
    """The second pass reads faster; a file changed since the first is still reported line by line."""
    from citeaudit.errors import InputError
    from citeaudit.files.loading import each_case, each_checked_case

    good = _jsonl(tmp_path / "c.jsonl", [synthetic_case(i) for i in range(3)])
    assert [rc.origin for rc in each_checked_case([good])] == [rc.origin for rc in each_case([good])]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_bad_lines().split("\n")[2] + "\n", encoding="utf-8")  # a citation naming no passage
    with pytest.raises(InputError) as first:
        list(each_case([bad]))
    with pytest.raises(InputError) as again:
        list(each_checked_case([bad]))
    assert str(again.value) == str(first.value) and "S99" in str(again.value)


def _bad_lines() -> str:
    good = make_case([{"text": "x", "citations": ["S1"]}], labels=[{"claim": "x", "passages": ["S1"], "label": "full"}])
    return "\n".join([
        json.dumps(good),
        '{"id": "t2", "question": ',
        json.dumps(make_case([{"text": "x", "citations": ["S99"]}], id="t3")),
        "",
        json.dumps(make_case([{"citations": ["S1"]}], id="t4")),
        "[1, 2]",
        json.dumps({**good, "id": "t6", "ranking": ["S1", "S1"]}),
    ]) + "\n"


DUPLICATE_IDS = "".join(json.dumps(make_case([{"text": "x"}], id=i)) + "\n" for i in ("d", "e", "d", "e"))


@pytest.mark.parametrize("text", [_bad_lines(), "", "  \n\n", DUPLICATE_IDS, "\r\n".join(_bad_lines().split("\n"))],
                         ids=["located", "empty", "blank", "duplicate ids", "CRLF"])
def test_errors_are_located_exactly_as_when_loaded(runner, tmp_path, text):
    cases = tmp_path / "bad.jsonl"
    cases.write_text(text, encoding="utf-8")
    whole = runner.invoke(main, ["score", str(cases), "--format", "json"])
    out = tmp_path / "run.jsonl"
    streamed = runner.invoke(main, ["score", str(cases), "--out", str(out)])
    assert whole.exit_code == streamed.exit_code == 2
    assert streamed.stderr == whole.stderr and "bad.jsonl" in streamed.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [cases]  # no log, not even half of one


def test_errors_across_files_and_a_bad_encoding_are_reported_as_when_loaded(runner, tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", [make_case([{"text": "x"}], id="same")])
    b = _jsonl(tmp_path / "b.jsonl", [make_case([{"text": "x"}], id="same")])
    c = tmp_path / "c.jsonl"
    c.write_bytes(json.dumps(make_case([{"text": "x"}], id="c")).encode() + b"\n\xff\n")
    for files in ([a, b], [a, c], [a, tmp_path / "missing.jsonl"]):
        args = [str(f) for f in files]
        whole = runner.invoke(main, ["score", *args, "--format", "json"])
        streamed = runner.invoke(main, ["score", *args, "--format", "jsonl"])
        assert whole.exit_code == streamed.exit_code == 2
        assert streamed.stderr == whole.stderr and streamed.stdout == ""


def test_json_or_markdown_output_with_a_streamed_log_is_refused(runner, tmp_path):
    cases = _jsonl(tmp_path / "c.jsonl", [synthetic_case(0)])
    result = runner.invoke(main, ["score", str(cases), "--out", str(tmp_path / "run.jsonl"), "--format", "markdown"])
    assert result.exit_code == 2 and "citeaudit report" in result.output


# --- the streamed run log --------------------------------------------------------------------------


def _stable(log) -> dict:
    data = json.loads(log.model_dump_json())
    for key in ("created", "checksum"):
        data.pop(key)
    data["judgments"] = sorted(data["judgments"], key=lambda j: json.dumps(j, sort_keys=True))
    return data


def test_a_streamed_log_reads_as_the_loaded_log_and_every_command_takes_it(runner, tmp_path):
    cases = _jsonl(tmp_path / "c.jsonl", _example_cases() + [synthetic_case(i) for i in range(5)])
    assert runner.invoke(main, ["score", str(cases), "--out", str(tmp_path / "whole.json")]).exit_code == 0
    result = runner.invoke(main, ["score", str(cases), "--out", str(tmp_path / "run.jsonl")])
    assert result.exit_code == 0, result.output
    assert "support" in result.stdout and "run log written" in result.stderr
    stream, whole = tmp_path / "run.jsonl", tmp_path / "whole.json"
    assert is_stream(stream) and not is_stream(whole)
    assert _stable(read_runlog(stream)) == _stable(read_runlog(whole))
    assert results_of(rescore(read_runlog(stream))[0]) == results_of(rescore(read_runlog(whole))[0])
    for args in (["report", str(stream), "--format", "json"], ["rescore", str(stream), "--format", "json"]):
        a = runner.invoke(main, args)
        b = runner.invoke(main, [args[0], str(whole), *args[2:]])
        assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout
    assert runner.invoke(main, ["compare", str(stream), str(whole)]).exit_code == 0
    for name in ("claims.csv", "claims.jsonl"):
        assert runner.invoke(main, ["export", str(stream), "--to", str(tmp_path / f"s-{name}")]).exit_code == 0
        assert runner.invoke(main, ["export", str(whole), "--to", str(tmp_path / f"w-{name}")]).exit_code == 0
        assert (tmp_path / f"s-{name}").read_bytes() == (tmp_path / f"w-{name}").read_bytes()


def test_a_streamed_log_is_checked_line_by_line(runner, tmp_path):
    cases = _jsonl(tmp_path / "c.jsonl", [synthetic_case(i) for i in range(3)])
    log = tmp_path / "run.jsonl"
    assert runner.invoke(main, ["score", str(cases), "--out", str(log)]).exit_code == 0
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    assert [json.loads(x).get("stream") for x in lines] == ["header", None, None, None, "end"]
    assert not read_runlog(log).edited

    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(lines).replace('"label":"full"', '"label":"none"', 1), encoding="utf-8")
    assert read_runlog(edited).edited
    warned = runner.invoke(main, ["export", str(edited), "--to", str(tmp_path / "x.csv")])
    assert warned.exit_code == 0 and "was changed after it was written" in warned.stderr

    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")
    with pytest.raises(RunLogError, match="ends before its trailer"):
        read_runlog(cut)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:2]) + '{"case": {}}\n' + "".join(lines[3:]), encoding="utf-8")
    result = runner.invoke(main, ["report", str(bad), "--format", "json"])
    assert result.exit_code == 2 and f"{bad}:3: case.id: Field required" in result.stderr
    newer = tmp_path / "newer.jsonl"
    newer.write_text(lines[0].replace('"schema_version":5', '"schema_version":99') + "".join(lines[1:]))
    with pytest.raises(RunLogError, match="schema_version 99 is not supported"):
        list(stream_entries(newer))


# --- prepare ---------------------------------------------------------------------------------------


def test_streamed_prepare_lists_and_stores_what_the_loaded_prepare_does(runner, tmp_path):
    rows = [synthetic_case(i) for i in range(40)]
    streamed_input = _jsonl(tmp_path / "c.jsonl", rows)
    loaded_input = tmp_path / "c.json"
    loaded_input.write_text(json.dumps(rows), encoding="utf-8")
    outs = {}
    for name, cases in (("streamed", streamed_input), ("loaded", loaded_input)):
        store, listed = tmp_path / f"{name}.db", tmp_path / f"{name}-list.jsonl"
        result = runner.invoke(main, ["prepare", str(cases), "--store", str(store), "--list", str(listed)])
        assert result.exit_code == 0, result.output
        outs[name] = (result.stderr.replace(str(store), "DB"), listed.read_text(), len(JudgmentStore(store)))
    assert outs["streamed"] == outs["loaded"]
    again = runner.invoke(main, ["prepare", str(streamed_input), "--store", str(tmp_path / "streamed.db")])
    assert "judge asked 0;" in again.stderr


def test_streamed_prepare_refuses_a_bad_input_before_judging(runner, tmp_path):
    cases = tmp_path / "bad.jsonl"
    cases.write_text(_bad_lines(), encoding="utf-8")
    store, listed = tmp_path / "j.db", tmp_path / "l.jsonl"
    result = runner.invoke(main, ["prepare", str(cases), "--store", str(store), "--list", str(listed)])
    assert result.exit_code == 2 and "bad.jsonl:2: malformed JSON" in result.stderr
    assert not listed.exists() and len(JudgmentStore(store)) == 0


@pytest.mark.slow
def test_a_killed_streamed_prepare_resumes_without_losing_or_repeating(tmp_path):
    cases = tmp_path / "c.jsonl"
    write_cases(cases, 5_000)  # each judgment is committed on its own
    full = tmp_path / "full.db"
    subprocess.run([CLI, "prepare", str(cases), "--store", str(full)], check=True, capture_output=True)
    expected = len(JudgmentStore(full))
    store = tmp_path / "j.db"
    killed = subprocess.run([CLI, "prepare", str(cases), "--store", str(store)], capture_output=True,
                            env=killed_inside_nth_write(tmp_path / "hook", expected // 3))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    # the judgment being written when the kill came is not in the store; every one before it is, whole
    assert len(JudgmentStore(store)) == expected // 3 - 1
    assert subprocess.run([CLI, "store", "check", str(store)], capture_output=True).returncode == 0
    rerun = subprocess.run([CLI, "prepare", str(cases), "--store", str(store)], check=True, capture_output=True,
                           text=True)
    assert f"judge asked {expected - expected // 3 + 1};" in rerun.stderr
    assert len(JudgmentStore(store)) == expected


# --- memory ----------------------------------------------------------------------------------------


def _peak_rss_mib(args: list[str]) -> float:
    """Run a command to completion (its output discarded); its own peak resident memory."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise AssertionError(err.read().decode()[-2000:])
    return usage.ru_maxrss / 1024


@pytest.mark.slow
def test_a_million_pairs_are_scored_in_the_memory_of_ten_thousand(tmp_path):
    """Streamed, a 10^6-pair file (about 390 MiB) is scored with at most twice the peak memory of a 10^4-pair
    file: what memory holds does not grow with the input."""
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    write_cases(small, 10_000)
    write_cases(large, 1_000_000)
    assert large.stat().st_size > 300 * 2**20
    peak_small = _peak_rss_mib([CLI, "score", str(small), "--format", "jsonl"])
    peak_large = _peak_rss_mib([CLI, "score", str(large), "--format", "jsonl"])
    assert peak_large <= 2 * peak_small, (peak_small, peak_large)
    assert PAIRS_PER_CASE == 10
