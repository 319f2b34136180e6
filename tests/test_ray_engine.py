"""`prepare --engine ray`: the same store and the same scores as the local engine, bit for bit, and
resumable like it. One local Ray (two CPUs) serves the whole module: starting Ray takes seconds."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest
import ray  # the ray extra, part of dev: CI runs these tests
from click.testing import CliRunner

from citeaudit.cli import main

from citeaudit.testing import OpenAIStub

from helpers import killed_inside_nth_write


STORE_COLUMNS = "key, judge, text, passages, judgment"  # every column but the time it was written
CURATED_SETS = ["returns_desk", "p7_archive", "p7_archive_zh"]  # every listed pair has a curated label
# One xdist worker takes the whole module (`--dist loadgroup` in the Makefile): one Ray start, not two.
pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module", autouse=True)
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("cases")
    assert CliRunner().invoke(main, ["examples", "--write", str(folder)]).exit_code == 0
    return {path.stem: str(path) for path in folder.glob("*.json")}


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch):
    for name in ("CITEAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY", "CITEAUDIT_OPENAI_BASE_URL", "OPENAI_BASE_URL",
                 "CITEAUDIT_OPENAI_MAX_REQUESTS", "CITEAUDIT_OPENAI_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def prepare(files: list[str], judge: str, store, *options: str):
    return run("prepare", *files, "--judge", judge, "--store", str(store), *options)


def rows(store) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute(f"SELECT {STORE_COLUMNS} FROM judgments ORDER BY key").fetchall()


def replayed(files: list[str], judge: str, store) -> str:
    result = run("score", *files, "--judge", judge, "--store", str(store), "--replay", "--format", "json")
    assert result.exit_code == 0, result.output
    return result.stdout


def recorded_keys(store) -> list[str]:
    """The keys in a store another process is writing (read-only; none before its table exists)."""
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return [key for (key,) in db.execute("SELECT key FROM judgments")]
    except sqlite3.OperationalError:  # the table is not created yet
        return []


def without_response_ids(stored: list[tuple]) -> list[tuple]:
    """Rows with the stub's response id (a counter of requests served) taken out of each raw response."""
    out = []
    for *columns, judgment in stored:
        parsed = json.loads(judgment)
        assert parsed["raw"].pop("id").startswith("chatcmpl-stub-")
        out.append((*columns, parsed))
    return out


def asked(result) -> int:
    """The judge calls a prepare reports ("N pairs listed; judge asked M; ...")."""
    return int(result.stderr.rsplit("judge asked ", 1)[1].split(";")[0])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the same store and the same scores -----------------------------------------------------------


@pytest.mark.parametrize("block_size", ["3", "1000"])
def test_curated_judge_fills_the_same_store_as_the_local_engine(cases, tmp_path, block_size):
    files = [cases[name] for name in CURATED_SETS]
    local = prepare(files, "curated", tmp_path / "local.db", "--all")
    on_ray = prepare(files, "curated", tmp_path / "ray.db", "--engine", "ray", "--workers", "2",
                     "--block-size", block_size)
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    assert asked(on_ray) == asked(local) == len(rows(tmp_path / "local.db")) == 28
    assert rows(tmp_path / "ray.db") == rows(tmp_path / "local.db")
    assert replayed(files, "curated", tmp_path / "ray.db") == replayed(files, "curated", tmp_path / "local.db")


def test_model_judge_scores_are_identical_bit_for_bit(cases, tmp_path):
    """The shipped model judge, one model per actor: the same probabilities to the last bit."""
    files = [cases["returns_desk"]]
    assert prepare(files, "model", tmp_path / "local.db", "--all").exit_code == 0
    on_ray = prepare(files, "model", tmp_path / "ray.db", "--engine", "ray", "--workers", "2", "--block-size", "5")
    assert on_ray.exit_code == 0, on_ray.output
    stored = rows(tmp_path / "ray.db")
    assert len(stored) == 18 and all('"scores":{' in judgment for *_, judgment in stored)
    assert stored == rows(tmp_path / "local.db")
    assert replayed(files, "model", tmp_path / "ray.db") == replayed(files, "model", tmp_path / "local.db")


def test_alce_conventions_build_the_titled_judge_on_every_worker(cases, tmp_path):
    files = [cases["p7_archive"]]
    options = ("--conventions", "alce")
    assert prepare(files, "model", tmp_path / "local.db", "--all", *options).exit_code == 0
    on_ray = prepare(files, "model", tmp_path / "ray.db", "--engine", "ray", "--workers", "2", *options)
    assert on_ray.exit_code == 0, on_ray.output
    stored = rows(tmp_path / "ray.db")
    assert stored and all(judge.endswith("|passages=alce-title") for _, judge, *_ in stored)
    assert stored == rows(tmp_path / "local.db")


# --- resumption ------------------------------------------------------------------------------------


def test_a_partly_filled_store_is_completed_asking_only_for_the_rest(cases, tmp_path):
    store = tmp_path / "store.db"
    files = [cases[name] for name in CURATED_SETS]
    partial = asked(prepare(files, "curated", store, "--all", "--metrics", "support"))  # the claims' sets only
    first = rows(store)
    assert 0 < partial == len(first) < 28
    on_ray = prepare(files, "curated", store, "--engine", "ray", "--workers", "2", "--block-size", "3")
    assert on_ray.exit_code == 0, on_ray.output
    assert asked(on_ray) == 28 - partial
    assert set(first) <= set(rows(store))
    assert prepare(files, "curated", tmp_path / "local.db", "--all").exit_code == 0
    assert rows(store) == rows(tmp_path / "local.db")
    again = prepare(files, "curated", store, "--engine", "ray")
    assert again.exit_code == 0 and asked(again) == 0


def test_a_remote_judge_keeps_its_budget_and_concurrency_and_resumes(cases, tmp_path, monkeypatch):
    """One judge instance counts the budget: the run stops after exactly max_requests requests, keeps
    every judgment they bought, and the rerun sends only the rest."""
    files = [cases["returns_desk"]]
    store = tmp_path / "ray.db"
    with OpenAIStub(delay=0.02) as stub:
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
        monkeypatch.setenv("CITEAUDIT_OPENAI_CONCURRENCY", "2")
        monkeypatch.setenv("CITEAUDIT_OPENAI_MAX_REQUESTS", "7")
        stopped = prepare(files, "openai:stub-model", store, "--engine", "ray", "--workers", "2", "--block-size", "4")
        assert stopped.exit_code == 3, stopped.output
        assert "budget exhausted: 7 requests sent, max_requests is 7" in stopped.stderr
        assert stub.count == 7 and len(rows(store)) == 7
        monkeypatch.delenv("CITEAUDIT_OPENAI_MAX_REQUESTS")
        resumed = prepare(files, "openai:stub-model", store, "--engine", "ray", "--block-size", "4")
        assert resumed.exit_code == 0, resumed.output
        assert stub.count == 18 and asked(resumed) == 11
        assert stub.max_in_flight <= 2
        assert prepare(files, "openai:stub-model", tmp_path / "local.db", "--all").exit_code == 0
    assert without_response_ids(rows(store)) == without_response_ids(rows(tmp_path / "local.db"))


def test_a_judge_failure_stops_with_the_local_engines_message_and_keeps_what_was_judged(cases, tmp_path):
    files = [cases["manual_audit"]]  # one listed pair has no curated label
    local = prepare(files, "curated", tmp_path / "local.db", "--all")
    on_ray = prepare(files, "curated", tmp_path / "ray.db", "--engine", "ray", "--block-size", "1", "--workers", "1")
    assert local.exit_code == on_ray.exit_code == 3
    assert "no curated label for claim" in on_ray.stderr
    assert on_ray.stderr.splitlines()[-1] == local.stderr.splitlines()[-1]
    # What the stopped run did record is what a local run records for those pairs (the local engine
    # without --all reaches only the pairs scoring needs, all of them labelled).
    assert prepare(files, "curated", tmp_path / "needed.db").exit_code == 0
    # (how many blocks were recorded before the failing one depends on the order Ray hands results back,
    # which a loaded machine changes: none may be; what is recorded must be right)
    kept = set(rows(tmp_path / "ray.db"))
    assert kept <= set(rows(tmp_path / "needed.db"))


# --- what a user can get wrong ---------------------------------------------------------------------


def test_without_the_extra_the_error_names_it(cases, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    result = prepare([cases["p7_archive"]], "curated", tmp_path / "s.db", "--engine", "ray")
    assert result.exit_code == 2
    assert "pip install 'citeaudit[ray]'" in result.stderr


@pytest.mark.parametrize("address, message", [
    ("nonsense", "--address 'nonsense' is not a Ray cluster address; give HOST:PORT"),
    ("http://head:6379", "is not a Ray cluster address"),
    (None, "cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused"),
])
def test_a_bad_address_is_a_clear_error(cases, tmp_path, address, message):
    port = closed_port()
    address = address or f"127.0.0.1:{port}"
    result = prepare([cases["p7_archive"]], "curated", tmp_path / "s.db", "--engine", "ray", "--address", address)
    assert result.exit_code == 2
    assert message.format(port=port) in result.stderr
    assert "Traceback" not in result.output


def test_ray_options_need_the_ray_engine(cases, tmp_path):
    result = prepare([cases["p7_archive"]], "curated", tmp_path / "s.db", "--address", "auto")
    assert result.exit_code == 2 and "--address and --workers need --engine ray" in result.output


def test_a_killed_run_keeps_its_finished_blocks_and_the_rerun_asks_only_for_the_rest(cases, tmp_path):
    """SIGKILL the driver while it records: every row it left is sound, none is judged twice."""
    files = [cases["returns_desk"], cases["p7_archive"]]
    store = tmp_path / "store.db"
    head = ray.get_runtime_context().gcs_address  # this module's Ray, as a cluster the driver joins
    command = [sys.executable, "-m", "citeaudit.cli", "prepare", *files, "--judge", "model", "--store", str(store),
               "--engine", "ray", "--address", head, "--workers", "1", "--block-size", "1"]
    driver = subprocess.run(command, capture_output=True, timeout=300, env=killed_inside_nth_write(tmp_path / "hook", 3))
    assert driver.returncode == -signal.SIGKILL, driver.stderr[-2000:]
    kept = len(recorded_keys(store))
    assert kept == 2  # killed while it recorded the third block (one row a block): that block is not kept
    assert run("store", "check", str(store)).exit_code == 0
    resumed = prepare(files, "model", store, "--engine", "ray", "--workers", "2")
    assert resumed.exit_code == 0, resumed.output
    assert asked(resumed) == 23 - kept
    assert prepare(files, "model", tmp_path / "local.db", "--all").exit_code == 0
    assert rows(store) == rows(tmp_path / "local.db")
