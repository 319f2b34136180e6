"""Recorded judgments: keyed by everything that can change them, resumable, replay-only on demand."""

from __future__ import annotations

import json
import sqlite3
import threading
import warnings

import pytest

from citeaudit.cli import main
from citeaudit.errors import CiteauditError, EditedRecordWarning, JudgeError, MissingJudgment
from citeaudit.judges import Judgments, JudgmentStore, RecordedJudge, Request, judgment_key
from citeaudit.metrics import Settings, plan_requests, score_cases
from citeaudit.records import Judgment, SourcePassage

from helpers import SetJudge, load, make_case

CASE = make_case([{"text": "a", "citations": ["S1", "S2"]}, {"text": "b", "citations": ["S3"]},
                  {"text": "c", "citations": ["S1", "S2", "S3"]}])
SUP = {"a": [{"S1"}], "b": [{"S3"}], "c": [{"S1", "S2"}]}


def _p(text="t", version="v1", pid="S1", start=0):
    return SourcePassage(pid, "D", version, text, start, start + len(text))


@pytest.mark.parametrize("change", [
    lambda: Request.of("other text", [_p()]),
    lambda: Request.of("x", [_p(text="changed")]),
    lambda: Request.of("x", [_p(version="v2")]),
    lambda: Request.of("x", [_p(start=5)]),
    lambda: Request.of("x", [_p(), _p(pid="S2")]),
])
def test_key_changes_with_anything_that_can_change_a_judgment(change):
    assert judgment_key(Request.of("x", [_p()]), "j@1") != judgment_key(change(), "j@1")


def test_key_changes_with_judge_signature_not_citation_order():
    a, b = _p(), _p(pid="S2")
    assert judgment_key(Request.of("x", [a, b]), "j@1") == judgment_key(Request.of("x", [b, a]), "j@1")
    assert judgment_key(Request.of("x", [a]), "j@1") != judgment_key(Request.of("x", [a]), "j@2")


class FlakyJudge(SetJudge):
    """Fails after `budget` judgments, like a run interrupted half-way."""

    def __init__(self, *args, budget: int):
        super().__init__(*args)
        self.budget = budget

    def judge(self, text, passages):
        if self.budget == 0:
            raise JudgeError("interrupted")
        self.budget -= 1
        return super().judge(text, passages)


def test_interrupted_run_resumes_without_repeating_a_judgment(tmp_path):
    cases = load(CASE)
    store = JudgmentStore(tmp_path / "j.db")
    with pytest.raises(JudgeError):
        score_cases(cases, Judgments(FlakyJudge(SUP, budget=3), store))
    assert len(store) == 3
    resumed = SetJudge(SUP)
    done = score_cases(cases, Judgments(resumed, store))
    fresh = score_cases(cases, Judgments(SetJudge(SUP)))
    assert {k: str(v) for k, v in done.summary().items()} == {k: str(v) for k, v in fresh.summary().items()}
    first_three = len(store) - len(resumed.calls)
    assert first_three == 3 and len(set(resumed.calls)) == len(resumed.calls)


def test_replay_reads_only_the_store_and_stops_on_a_missing_judgment(tmp_path):
    cases = load(CASE)
    store = JudgmentStore(tmp_path / "j.db")
    live = score_cases(cases, Judgments(SetJudge(SUP), store))
    replayed = score_cases(cases, Judgments(RecordedJudge(store, SetJudge.signature)))
    assert str(replayed.summary()) == str(live.summary())
    with pytest.raises(MissingJudgment, match="no recorded judgment by other@1 for claim 'a'"):
        score_cases(cases, Judgments(RecordedJudge(store, "other@1")))


class BatchSetJudge(SetJudge):
    """A SetJudge that also judges in batches and remembers their sizes."""

    def __init__(self, *args):
        super().__init__(*args)
        self.batches: list[int] = []

    def judge_batch(self, requests):
        self.batches.append(len(requests))
        return [self.judge(r.text, r.passages) for r in requests]


def test_fill_judges_every_planned_pair_once_in_batches(tmp_path):
    cases = load(CASE)
    requests = plan_requests(cases)
    # a: set, 2 alone, 2 without (= alone) -> 3; b: 1; c: set, 3 alone, 3 without -> 7
    assert len(requests) == 11
    store = JudgmentStore(tmp_path / "j.db")
    judge = BatchSetJudge(SUP)
    assert Judgments(judge, store).fill(requests, batch_size=4) == 11
    assert judge.batches == [4, 4, 3]
    assert len(judge.calls) == len(set(judge.calls)) == 11
    again = BatchSetJudge(SUP)
    assert Judgments(again, store).fill(requests) == 0 and again.batches == [] and again.calls == []
    # the store alone now scores the cases as a live judge does
    replayed = score_cases(cases, Judgments(RecordedJudge(store, judge.signature)), Settings())
    live = score_cases(cases, Judgments(SetJudge(SUP)), Settings())
    assert str(replayed.summary()) == str(live.summary())


def test_cli_prepare_then_replay(runner, tmp_path):
    assert runner.invoke(main, ["examples", "--write", str(tmp_path)]).exit_code == 0
    cases = tmp_path / "returns_desk.json"
    db = tmp_path / "j.db"
    result = runner.invoke(main, ["prepare", str(cases), "--store", str(db), "--list", str(tmp_path / "l.jsonl")])
    assert result.exit_code == 0, result.output
    assert "judge asked" in result.output
    listed = [json.loads(l) for l in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert listed and all(l["passages"][0]["version"] == "sachin-demo-v1" for l in listed)
    replay = runner.invoke(main, ["score", str(cases), "--store", str(db), "--replay", "--format", "json"])
    assert replay.exit_code == 0, replay.output
    live = runner.invoke(main, ["score", str(cases), "--format", "json"])
    assert json.loads(replay.output)["summary"] == json.loads(live.output)["summary"]
    empty = runner.invoke(main, ["score", str(cases), "--store", str(tmp_path / "empty.db"), "--replay"])
    assert empty.exit_code == 3 and "no recorded judgment" in empty.output


class HalfBatchJudge(SetJudge):
    """A batch judge that judges every other pair, then reports the failures (like a remote judge)."""

    def judge_batch(self, requests):
        done = [self.judge(r.text, r.passages) if i % 2 == 0 else None for i, r in enumerate(requests)]
        err = JudgeError(f"{done.count(None)} pairs failed")
        err.judgments = done
        raise err


def test_fill_keeps_what_a_failing_batch_did_judge(tmp_path):
    cases = load(CASE)
    requests = plan_requests(cases)
    store = JudgmentStore(tmp_path / "j.db")
    judgments = Judgments(HalfBatchJudge(SUP), store)
    with pytest.raises(JudgeError, match="pairs failed"):
        judgments.fill(requests, batch_size=len(requests))
    assert len(store) == (len(requests) + 1) // 2 == judgments.asked


# --- several runs on one store ---------------------------------------------------------------------


def test_opening_a_new_store_waits_while_another_creator_holds_the_write_lock(tmp_path):
    # Another run creating the same store holds its write lock; SQLite fails the WAL switch at once
    # (it does not wait where waiting could deadlock), so opening must retry rather than crash.
    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        store = JudgmentStore(path)
    finally:
        release.join()
        other.close()
    assert len(store) == 0
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


class RacedJudge(SetJudge):
    """While it judges, another run (a second handle on the same file) records a different judgment
    of the same pair first."""

    def __init__(self, *args, other: JudgmentStore):
        super().__init__(*args)
        self.other = other

    def judge(self, text, passages):
        self.other.put(Request.of(text, passages), Judgment(label="partial", judge=self.signature,
                                                            explanation="recorded by the other run"))
        return super().judge(text, passages)


def test_a_pair_judged_by_two_runs_at_once_is_stored_once_and_both_use_the_stored_one(tmp_path):
    store = JudgmentStore(tmp_path / "j.db")
    judgments = Judgments(RacedJudge(SUP, other=JudgmentStore(tmp_path / "j.db")), store)
    got = judgments.get("a", [_p(pid="S1")])
    assert (got.label, got.explanation) == ("partial", "recorded by the other run")
    assert judgments.asked == 1 and len(store) == 1
    assert store.get(Request.of("a", [_p(pid="S1")]), SetJudge.signature) == got


class SharingBatchJudge(BatchSetJudge):
    """Before its first batch returns, another run records the judgments of the next four pairs."""

    def __init__(self, *args, other: JudgmentStore, upcoming):
        super().__init__(*args)
        self.other = other
        self.upcoming = upcoming

    def judge_batch(self, requests):
        if not self.batches:
            for r in self.upcoming:
                self.other.put(r, SetJudge(SUP).judge(r.text, r.passages))
        return super().judge_batch(requests)


def test_fill_reads_the_store_again_for_each_batch(tmp_path):
    requests = plan_requests(load(CASE))
    store = JudgmentStore(tmp_path / "j.db")
    judge = SharingBatchJudge(SUP, other=JudgmentStore(tmp_path / "j.db"), upcoming=requests[4:8])
    settled = []
    assert Judgments(judge, store).fill(requests, batch_size=4, progress=settled.append) == 7
    assert judge.batches == [4, 3]  # the four the other run recorded are not judged again
    asked = {(text, ids) for text, ids in judge.calls}
    assert not asked & {(r.text, frozenset(r.passage_ids)) for r in requests[4:8]}
    assert len(store) == 11 and sum(settled) == 11


# --- broken store files ----------------------------------------------------------------------------


def _sqlite_file(path, *statements):
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("make, says", [
    pytest.param(lambda p: p.write_text("key,judgment\nabc,full\n"), "not an SQLite database", id="text"),
    pytest.param(lambda p: _sqlite_file(p, "CREATE TABLE judgments (id INTEGER, verdict TEXT)"),
                 "its 'judgments' table has columns id, verdict", id="foreign-judgments-table"),
    pytest.param(lambda p: _sqlite_file(p, "CREATE TABLE notes (x)", "INSERT INTO notes VALUES (1)"),
                 "it holds tables notes, not a 'judgments' table", id="other-tables-only"),
])
def test_a_file_that_is_not_a_store_is_refused_by_name_and_left_unchanged(tmp_path, runner, make, says):
    path = tmp_path / "j.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(CiteauditError) as caught:
        JudgmentStore(path)
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"{path}: not a citeaudit judgment store ({says}")
    assert path.read_bytes() == before and not (tmp_path / "j.db-wal").exists()
    assert runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")]).exit_code == 0
    cases = str(tmp_path / "cases" / "returns_desk.json")
    for args in (["prepare", cases, "--store", str(path)], ["score", cases, "--store", str(path)],
                 ["store", "check", str(path)]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
        assert f"citeaudit: {path}: not a citeaudit judgment store ({says}" in result.output


def _corrupt(path, key, column, value):
    db = sqlite3.connect(path)
    db.execute(f"UPDATE judgments SET {column} = ? WHERE key = ?", (value, key))
    db.commit()
    db.close()


@pytest.mark.parametrize("value, says", [
    pytest.param("{not json", "judgment is not a valid Judgment: Invalid JSON", id="not-json"),
    pytest.param(json.dumps({"label": "maybe", "judge": SetJudge.signature}),
                 "judgment is not a valid Judgment: label: Input should be 'full', 'partial', 'none' or 'contradicts'",
                 id="bad-label"),
    pytest.param(json.dumps({"label": "full", "judge": "other@1"}), "the judgment is by 'other@1'", id="other-judge"),
])
def test_a_corrupt_row_is_reported_with_the_file_and_its_key_when_read(tmp_path, value, says):
    request = Request.of("a", [_p()])
    store = JudgmentStore(tmp_path / "j.db")
    store.put(request, SetJudge(SUP).judge(request.text, request.passages))
    key = judgment_key(request, SetJudge.signature)
    _corrupt(tmp_path / "j.db", key, "judgment", value)
    with pytest.raises(CiteauditError) as caught:
        store.get(request, SetJudge.signature)
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"{tmp_path / 'j.db'}: row with key {key}: {says}")


def test_store_check_counts_judgments_and_lists_every_bad_row(runner, tmp_path):
    assert runner.invoke(main, ["examples", "--write", str(tmp_path)]).exit_code == 0
    cases, db = str(tmp_path / "returns_desk.json"), tmp_path / "j.db"
    assert runner.invoke(main, ["prepare", cases, "--store", str(db)]).exit_code == 0
    store = JudgmentStore(db)
    n, (judge,) = len(store), {j for (j,) in store._db.execute("SELECT judge FROM judgments")}
    keys = [k for (k,) in store._db.execute("SELECT key FROM judgments ORDER BY key")]
    store.close()
    good = runner.invoke(main, ["store", "check", str(db)])
    assert good.exit_code == 0, good.output
    assert good.output == f"{db}: {n} judgments, 0 bad\n  {judge}  {n}\n"

    _corrupt(db, keys[0], "judgment", "{not json")
    _corrupt(db, keys[1], "text", "edited by hand")
    bad = runner.invoke(main, ["store", "check", str(db)])
    assert bad.exit_code == 2
    assert bad.output.splitlines()[:4] == [
        f"{db}: {n} judgments, 2 bad", f"  {judge}  {n}", "bad rows (key: problem):",
        f"  {keys[0]}: judgment is not a valid Judgment: Invalid JSON: key must be a string at line 1 column 2",
    ]
    assert bad.output.splitlines()[4] == f"  {keys[1]}: key does not match the row's text, passages and judge"
    assert f"citeaudit: {db}: 2 bad rows" in bad.output

    replay = runner.invoke(main, ["score", cases, "--store", str(db), "--replay"])
    assert replay.exit_code == 2 and isinstance(replay.exception, SystemExit)
    assert f"citeaudit: {db}: row with key {keys[0]}: judgment is not a valid Judgment" in replay.output


def test_store_check_never_creates_or_changes_a_file(runner, tmp_path):
    missing = tmp_path / "missing.db"
    result = runner.invoke(main, ["store", "check", str(missing)])
    assert result.exit_code == 2 and f"citeaudit: {missing}: no such file" in result.output
    assert not missing.exists()
    empty = _sqlite_file(tmp_path / "empty.db")
    result = runner.invoke(main, ["store", "check", str(empty)])
    assert result.exit_code == 2 and "it holds no tables, not a 'judgments' table" in result.output
    assert sqlite3.connect(empty).execute("SELECT COUNT(*) FROM sqlite_master").fetchone() == (0,)


# --- judgments changed after they were recorded ----------------------------------------------------


def _prepared(runner, tmp_path):
    """The returns desk example prepared into a store: (case file, store, its keys)."""
    assert runner.invoke(main, ["examples", "--write", str(tmp_path)]).exit_code == 0
    cases, db = str(tmp_path / "returns_desk.json"), tmp_path / "j.db"
    assert runner.invoke(main, ["prepare", cases, "--store", str(db)]).exit_code == 0
    keys = [k for (k,) in sqlite3.connect(db).execute("SELECT key FROM judgments ORDER BY key")]
    return cases, db, keys


def _relabel(db, key) -> str:
    """Change a row's label to another valid one, as a hand (or a tool) editing the file would."""
    judgment = json.loads(sqlite3.connect(db).execute("SELECT judgment FROM judgments WHERE key = ?",
                                                      (key,)).fetchone()[0])
    judgment["label"] = "none" if judgment["label"] != "none" else "full"
    _corrupt(db, key, "judgment", json.dumps(judgment))
    return judgment["label"]


def test_store_check_finds_a_label_edited_to_another_valid_label(runner, tmp_path):
    cases, db, keys = _prepared(runner, tmp_path)
    _relabel(db, keys[0])
    result = runner.invoke(main, ["store", "check", str(db)])
    assert result.exit_code == 2
    assert f"  {keys[0]}: the row does not match its digest: it was changed after it was recorded" in result.output
    assert f"{db}: {len(keys)} judgments, 1 bad" in result.output


def test_a_replayed_edited_judgment_is_used_as_stored_with_a_warning(runner, tmp_path):
    cases, db, keys = _prepared(runner, tmp_path)
    before = runner.invoke(main, ["score", cases, "--store", str(db), "--replay", "--format", "json"])
    assert before.exit_code == 0 and "warning" not in before.stderr
    for key in keys:
        _relabel(db, key)
    after = runner.invoke(main, ["score", cases, "--store", str(db), "--replay", "--format", "json"])
    assert after.exit_code == 0, after.output
    # once per store, naming the first row read and how to find every other
    assert after.stderr.count("citeaudit: warning:") == 1
    assert f"citeaudit: warning: {db}: the judgment of row " in after.stderr
    assert (f" was changed after it was recorded (it does not match its digest): it is used as stored; `citeaudit "
            f"store check {db}` lists every such row") in after.stderr
    assert json.loads(after.stdout) != json.loads(before.stdout)  # the edited judgment is used as stored


def test_reading_an_edited_judgment_from_python_warns_once_per_store(tmp_path):
    request, other = Request.of("a", [_p()]), Request.of("b", [_p()])
    store = JudgmentStore(tmp_path / "j.db")
    for r in (request, other):
        store.put(r, Judgment(label="full", judge=SetJudge.signature))
        _corrupt(tmp_path / "j.db", judgment_key(r, SetJudge.signature), "judgment",
                 Judgment(label="none", judge=SetJudge.signature).model_dump_json())
    with pytest.warns(EditedRecordWarning, match=f"row {judgment_key(request, SetJudge.signature)} was changed"):
        assert store.get(request, SetJudge.signature).label == "none"  # used as stored
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.get(other, SetJudge.signature).label == "none"  # said once: `store check` lists the rest
    assert [key for key, _ in store.check().bad] == sorted(judgment_key(r, SetJudge.signature) for r in (request, other))


def test_rows_recorded_before_digests_are_counted_not_bad(runner, tmp_path):
    cases, db, keys = _prepared(runner, tmp_path)
    sqlite3.connect(db).execute("DROP TABLE digests")  # as a store written by a citeaudit without digests
    _relabel(db, keys[0])  # an edit to such a row cannot be told
    result = runner.invoke(main, ["store", "check", str(db)])
    assert result.exit_code == 0, result.output
    assert f"{db}: {len(keys)} judgments without a digest (recorded before digests were kept): a change to them " \
           "cannot be told" in result.output
    replay = runner.invoke(main, ["score", cases, "--store", str(db), "--replay"])
    assert replay.exit_code == 0 and "warning" not in replay.stderr
    # opened to write, the store gains the table: new rows have digests, old ones still none
    store = JudgmentStore(db)
    request = Request.of("a new claim", [_p()])
    store.put(request, Judgment(label="full", judge=SetJudge.signature))
    assert store.check().undigested == len(keys) and store.check().ok
