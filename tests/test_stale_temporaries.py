"""Temporary files that interrupted writes leave beside an output (`.NAME.XXXXXXXX.tmp`): the next write to
the same path removes the stale ones, and never a live writer's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.files.destinations import STALE_AFTER, remove_stale_temporaries, temporary_beside, write_output
from citeaudit.run.log import StreamWriter

from helpers import make_case

HOURS_AGO = 2 * 3600


def _left(folder: Path, name: str, age: float) -> Path:
    """A file as an interrupted write leaves it, last changed `age` seconds ago."""
    path = folder / name
    path.write_text("half an output", encoding="utf-8")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_the_next_write_removes_only_stale_temporaries_of_its_own_path(tmp_path):
    stale = _left(tmp_path, ".report.md.0badcafe.tmp", HOURS_AGO)
    fresh = _left(tmp_path, ".report.md.1badcafe.tmp", 60)  # another writer, a minute ago: perhaps alive
    just_stale = _left(tmp_path, ".report.md.2badcafe.tmp", STALE_AFTER + 60)
    kept = [_left(tmp_path, name, HOURS_AGO) for name in (
        ".other.md.0badcafe.tmp",  # another output's
        ".report.md.notatemp.tmp", ".report.md.0BADCAFE.tmp", ".report.md.0badcafe.tmp.bak",  # not named as ours
        "report.md.0badcafe.tmp",  # not hidden
    )]
    write_output(tmp_path / "report.md", "new report", "report")
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "new report"
    assert not stale.exists() and not just_stale.exists()
    assert fresh.exists() and all(p.exists() for p in kept)


@contextmanager
def _live_writer(code: str, target: Path) -> Iterator[Path]:
    """A process running `code` on `target`, alive until the block ends (then killed, as kill -9 would):
    the path it prints first."""
    writer = subprocess.Popen([sys.executable, "-c", code, str(target)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        yield Path(writer.stdout.readline().strip())
    finally:
        writer.kill()
        writer.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows keeps an open file from removal by itself")
def test_a_live_writer_keeps_its_file_however_old_and_a_killed_ones_is_removed(tmp_path):
    target = tmp_path / "run.jsonl"
    code = ("import sys, os; from citeaudit.files.destinations import temporary_beside\n"
            "fd, name = temporary_beside(sys.argv[1]); os.write(fd, b'{}'); print(name, flush=True)\n"
            "sys.stdin.read()")
    with _live_writer(code, target) as name:
        os.utime(name, (time.time() - HOURS_AGO,) * 2)  # a slow run: nothing written for two hours
        write_output(target, "another output", "run log")
        assert name.exists()  # its writer holds it
    write_output(target, "again", "run log")
    assert not name.exists()  # killed: no lock, unchanged for two hours
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]


@pytest.mark.skipif(sys.platform == "win32", reason="Windows keeps an open file from removal by itself")
def test_a_streamed_log_being_written_in_this_process_is_kept(tmp_path):
    target = tmp_path / "run.jsonl"
    stream = StreamWriter(target)
    try:
        os.utime(stream._temporary, (time.time() - HOURS_AGO,) * 2)
        fd, other = temporary_beside(target)
        os.close(fd)
        assert Path(stream._temporary).exists()
        os.unlink(other)
    finally:
        stream.abort()


@pytest.mark.skipif(sys.platform == "win32", reason="no flock on Windows: the hour alone decides")
def test_a_temporary_folder_is_kept_while_its_writer_lives_or_anything_in_it_changed(tmp_path):
    target = tmp_path / "judge"
    code = ("import sys; from citeaudit.files.destinations import temporary_folder_beside\n"
            "with temporary_folder_beside(sys.argv[1], '--out') as work:\n"
            "    (work / 'part').write_text('half'); print(work, flush=True); sys.stdin.read()")
    with _live_writer(code, target) as work:
        for path in (work / "part", work):
            os.utime(path, (time.time() - HOURS_AGO,) * 2)
        assert remove_stale_temporaries(target) == [] and work.exists()  # its writer holds it
    os.utime(work / "part")  # changed a moment ago: the folder's own time is not all that counts
    assert remove_stale_temporaries(target) == [] and work.exists()
    os.utime(work / "part", (time.time() - HOURS_AGO,) * 2)
    os.utime(work, (time.time() - HOURS_AGO,) * 2)
    assert remove_stale_temporaries(target) == [work] and list(tmp_path.iterdir()) == []


def test_score_removes_what_a_killed_score_left(runner, tmp_path):
    cases = tmp_path / "cases.json"
    claim = "Eco lowers energy use."
    cases.write_text(json.dumps(make_case([{"text": claim, "citations": ["S1"]}],
                                          labels=[{"claim": claim, "passages": ["S1"], "label": "full"}])),
                     encoding="utf-8")
    left = _left(tmp_path, ".run.json.0123abcd.tmp", HOURS_AGO)
    assert runner.invoke(main, ["score", str(cases), "--out", str(tmp_path / "run.json")]).exit_code == 0
    assert not left.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["cases.json", "run.json"]
