"""benchmarks/adapt_files.py: the adapt and test files of the adapting measurements share no passage, the
smaller adapt files are the first rows of the larger, and the same seed draws the same rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "adapt_files.py"


def _row(i: int, source: str, passage: str) -> dict:
    return {"id": f"{source}:{i}", "claim": f"claim {i}", "label": "full" if i % 2 else "none", "source": source,
            "lang": "en", "passages": [{"id": "p", "text": passage}]}


def _splits(tmp_path: Path) -> Path:
    """Train rows citing 40 passages, some of them cited by test rows too, and another source's rows."""
    splits = tmp_path / "splits"
    splits.mkdir()
    train = [_row(i, "qa", f"passage {i % 40}") for i in range(200)] + [_row(i, "other", "x") for i in range(5)]
    dev = [_row(1000 + i, "qa", f"dev passage {i}") for i in range(10)]
    test = [_row(2000 + i, "qa", f"passage {i}") for i in range(5)] + [_row(2100, "qa", "test only")]
    for name, rows in (("train", train), ("dev", dev), ("test", test)):
        (splits / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return splits


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _texts(rows: list[dict]) -> set[str]:
    return {p["text"] for r in rows for p in r["passages"]}


def test_train_pool_leaves_out_passages_the_test_split_cites(tmp_path):
    done = _run(str(_splits(tmp_path)), "--source", "qa", "--sizes", "60,30", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    small, large, test = (_read(tmp_path / "out" / name) for name in ("adapt30.jsonl", "adapt60.jsonl", "test.jsonl"))
    assert [len(small), len(large), len(test)] == [30, 60, 6]
    assert large[:30] == small
    assert not _texts(large) & _texts(test)
    assert {r["source"] for r in large} == {"qa"}
    assert all(r["id"] for r in large) and len({r["id"] for r in large}) == 60


def test_all_pool_tests_on_every_row_sharing_no_passage(tmp_path):
    out, splits = tmp_path / "out", str(_splits(tmp_path))
    assert _run(splits, "--source", "qa", "--sizes", "50", "--pool", "all", "--out", str(out)).returncode == 0
    adapt, test = _read(out / "adapt50.jsonl"), _read(out / "test.jsonl")
    assert not _texts(adapt) & _texts(test)
    # every other qa row is a test row, but for the rest of a group the size cut (fewer than a group's 6)
    assert 0 <= 216 - 50 - len(test) < 6
    again = tmp_path / "again"
    _run(splits, "--source", "qa", "--sizes", "50", "--pool", "all", "--out", str(again))
    assert _read(again / "adapt50.jsonl") == adapt
    other_seed = tmp_path / "seed2"
    _run(splits, "--source", "qa", "--sizes", "50", "--pool", "all", "--seed", "2", "--out", str(other_seed))
    assert _read(other_seed / "adapt50.jsonl") != adapt


@pytest.mark.parametrize("args, message", [
    (["--source", "nowhere", "--sizes", "10"], "no rows of source 'nowhere'"),
    (["--source", "qa", "--sizes", "500"], "only 175 rows of qa can be drawn"),
])
def test_bad_requests_say_what_is_wrong(tmp_path, args, message):
    done = _run(str(_splits(tmp_path)), *args, "--out", str(tmp_path / "out"))
    assert done.returncode != 0 and message in done.stderr
    assert not (tmp_path / "out").exists()


def test_missing_splits_name_the_file_and_the_command(tmp_path):
    done = _run(str(tmp_path), "--source", "qa", "--out", str(tmp_path / "out"))
    assert done.returncode != 0
    assert "train.jsonl: missing" in done.stderr and "judge-data export" in done.stderr
