"""Several runs filling one judgment store at once: none crashes, the store ends as one run alone
leaves it, and each pair is recorded once."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import threading

import pytest

from citeaudit.cli import main
from citeaudit.judges import JudgmentStore

RUNS = 4
ROUNDS = 3
CLI = [sys.executable, "-c", "from citeaudit.cli import main; main(prog_name='citeaudit')"]


def test_many_openers_of_a_new_store_at_once_all_succeed(tmp_path):
    # SQLite refuses some of several simultaneous WAL switches at once, without waiting; opening
    # retries them. Many rounds, because a single round rarely collides.
    failures = []
    for round_ in range(100):
        path = tmp_path / f"s{round_}.db"
        start = threading.Barrier(RUNS)

        def open_store(path=path, start=start):
            start.wait()
            try:
                JudgmentStore(path).close()
            except Exception as err:  # noqa: BLE001 - every failure is collected and shown
                failures.append(f"{path.name}: {err!r}")

        threads = [threading.Thread(target=open_store) for _ in range(RUNS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


def _rows(path) -> dict[str, tuple[str, str]]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT key, judge, judgment FROM judgments")
        return {key: (judge, judgment) for key, judge, judgment in rows}
    finally:
        db.close()


def _asked(stderr: str) -> int:
    found = re.search(r"judge asked (\d+);", stderr)
    assert found, stderr
    return int(found.group(1))


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    from click.testing import CliRunner

    folder = tmp_path_factory.mktemp("cases")
    assert CliRunner().invoke(main, ["examples", "--write", str(folder)]).exit_code == 0
    return sorted(str(p) for p in folder.glob("*.json"))


def test_parallel_prepare_runs_on_a_new_store_record_each_pair_once(tmp_path, cases):
    alone = subprocess.run(CLI + ["prepare", *cases, "--store", str(tmp_path / "alone.db")],
                           capture_output=True, text=True, timeout=120)
    assert alone.returncode == 0, alone.stderr
    pairs = _asked(alone.stderr)
    expected = _rows(tmp_path / "alone.db")
    assert len(expected) == pairs > 0

    for round_ in range(ROUNDS):
        store = tmp_path / f"shared{round_}.db"
        runs = [subprocess.Popen(CLI + ["prepare", *cases, "--store", str(store)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(RUNS)]
        finished = [(run.wait(timeout=120), run.stderr.read()) for run in runs]
        for run in runs:
            run.stdout.close()
            run.stderr.close()
        assert [code for code, _ in finished] == [0] * RUNS, [err for _, err in finished]
        # The store holds exactly what one run alone records, judgment for judgment.
        assert _rows(store) == expected
        # Each pair was judged at least once; no run judged a pair twice. A pair that two runs reach at
        # the same instant is judged by both, so fewer calls than runs x pairs is not guaranteed.
        asked = [_asked(err) for _, err in finished]
        assert pairs <= sum(asked) <= RUNS * pairs and max(asked) <= pairs
        check = subprocess.run(CLI + ["store", "check", str(store)], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0 and check.stdout.startswith(f"{store}: {pairs} judgments, 0 bad"), check
