"""Recorded judgments: keyed by everything that can change them, resumable, replay-only on demand."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.errors import JudgeError, MissingJudgment
from citeaudit.judges import Judgments, JudgmentStore, RecordedJudge, Request, judgment_key
from citeaudit.metrics import Settings, plan_requests, score_cases
from citeaudit.records import SourcePassage

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
