"""Uncertain judgments and the cascade: the first judge's unsure pairs, and only those, go to the second;
uncertain judgments are counted apart in every figure, never as full or none."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.errors import JudgeSetupError
from citeaudit.judges import Judgments, make_judge
from citeaudit.judges.cascade import CascadeJudge, split_cascade
from citeaudit.files.loading import parse_cases
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.records import Judgment

from citeaudit.testing import OpenAIStub


class Unsure:
    """Full for every claim; uncertain for claims containing "maybe"."""

    name = "unsure"
    signature = "unsure@test"

    def __init__(self):
        self.asked: list[str] = []

    def judge(self, text, passages):
        self.asked.append(text)
        return Judgment(label="full", judge=self.signature, scores={"support": 0.55 if "maybe" in text else 0.9},
                        uncertain=True if "maybe" in text else None)


class Sure:
    name = "sure"
    signature = "sure@test"

    def __init__(self):
        self.asked: list[str] = []

    def judge(self, text, passages):
        self.asked.append(text)
        return Judgment(label="none", judge=self.signature, explanation="it says otherwise")


SOURCES = [{"id": "D1", "text": "The limit is 80 C."}]
STATEMENTS = [{"text": "The limit is 80 C.", "citations": ["D1"]},
              {"text": "It may maybe run hotter.", "citations": ["D1"]}]


def _cases():
    return parse_cases("c.json", json.dumps({"id": "c", "question": "q?", "sources": SOURCES,
                                             "answers": [{"id": "a", "statements": STATEMENTS}]}))


def test_only_the_uncertain_pairs_reach_the_second_judge_and_each_says_who_decided():
    first, second = Unsure(), Sure()
    cascade = CascadeJudge(first, second)
    cases = _cases()
    answer = score_cases(cases, Judgments(cascade), Settings()).answers[0]
    assert second.asked == ["It may maybe run hotter."]
    assert [c.judgment.decided_by for c in answer.claims] == ["unsure@test", "sure@test"]
    assert [c.label for c in answer.claims] == ["full", "none"]
    assert answer.claims[1].judgment.explanation.startswith("escalated: unsure was unsure (p(support)=0.550")
    assert {c.judgment.judge for c in answer.claims} == {"cascade[unsure@test > sure@test]"}


def test_uncertain_judgments_are_counted_apart_in_every_figure():
    cases = _cases()
    answer = score_cases(cases, Judgments(Unsure()), Settings()).answers[0]
    ratios = answer.ratios()
    assert (ratios[N.SUPPORT].numerator, ratios[N.SUPPORT].denominator) == (1, 1)  # not 2 of 2, not 1 of 2
    assert (ratios[N.CITATION_RECALL].numerator, ratios[N.CITATION_RECALL].denominator) == (1, 1)
    assert answer.label_counts() == {"full": 1, "partial": 0, "none": 0, "contradicts": 0, "uncertain": 1}
    assert answer.claims[1].label == "uncertain"
    assert answer.claims[1].explanation.startswith("the judge's best guess is full")


def test_a_human_tail_leaves_the_hard_pairs_uncertain_for_review():
    cascade = CascadeJudge(Unsure(), None)
    answer = score_cases(_cases(), Judgments(cascade), Settings()).answers[0]
    hard = answer.claims[1].judgment
    assert hard.uncertain and "awaiting human review" in hard.explanation
    assert cascade.signature == "cascade[unsure@test > human]" and cascade.escalated == 1


def test_a_cascade_spec_splits_where_a_judge_name_follows_a_comma():
    known = {"model", "openai", "embedding"}.__contains__
    assert split_cascade("model:guard=off,threads=2,openai:gpt-4o", known) == ["model:guard=off,threads=2",
                                                                                "openai:gpt-4o"]
    assert split_cascade("model,human", known) == ["model", "human"]


@pytest.mark.parametrize("spec", ["cascade:model", "cascade:human,model", "cascade:model,embedding,openai:x"])
def test_a_cascade_needs_two_judges_and_a_person_only_last(spec):
    with pytest.raises(JudgeSetupError, match="cascade"):
        make_judge(spec, [])


@pytest.mark.slow
@pytest.mark.parametrize("band, escalated", [("0.5", "all"), ("0", "none")])
def test_the_model_cascades_to_a_remote_judge(runner, tmp_path, monkeypatch, band, escalated):
    """End to end from the CLI, the remote judge served by the local stub: with the widest band every
    pair escalates (the plain reading off: a pair it reads is decided, whatever the band); with none, no
    request is sent."""
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", "http://127.0.0.1:9")  # replaced below
    runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    with OpenAIStub() as stub:
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
        result = runner.invoke(main, ["score", str(tmp_path / "cases" / "returns_desk.json"), "--format", "json",
                                      "--judge", f"cascade:model:band={band},plain=off,openai:stub-model"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        # an uncited claim is judged by no judge at all (rule:no-citation): no decider
        deciders = {c["judgment"].get("decided_by", "").split(":")[0] for a in data["answers"] for c in a["claims"]}
        if escalated == "all":
            assert stub.count > 0 and deciders == {"openai", ""}
        else:
            assert stub.count == 0 and deciders == {"model", ""}
