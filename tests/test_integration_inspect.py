"""The Inspect scorer inside a real `inspect_ai.eval`: the answers are recorded (a solver sets the model
output; no model is called), the scores are read back from the EvalLog, and they must be the ones
`check_citations` gives for the same case, judged by the shipped model judge."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("onnxruntime")  # the shipped model judge

from inspect_ai import Task, eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput  # noqa: E402
from inspect_ai.solver import TaskState, solver  # noqa: E402

from citeaudit.integrations.core import check_citations  # noqa: E402
from citeaudit.integrations.inspect_ai import (  # noqa: E402
    JUDGE_UNSURE, NO_CLAIMS, NO_RESPONSE, citation_support)
from citeaudit.records import Judgment  # noqa: E402
from helpers import outside_event_loop  # noqa: E402

QUESTION = "How heavy is the P7 pump?"
CONTEXTS = ["The P7 pump weighs 4.2 kg and runs at up to 80 °C.", "The warranty lasts two years."]
# one claim its citation supports, one it does not: support 1/2
ANSWER = "The P7 pump weighs 4.2 kg [1]. The P7 pump is made in Norway [2]."
SUPPORTED = "The P7 pump weighs 4.2 kg [1]."
FAILING = "The P7 pump is made in Norway."


@solver
def recorded_answer():
    """The answer recorded in the sample's metadata, as the model's output: no model call."""

    async def solve(state: TaskState, generate):
        state.output = ModelOutput.from_content("recorded", state.metadata["answer"])
        return state

    return solve


def sample(id: str, answer: str, contexts=CONTEXTS, key: str = "contexts") -> Sample:
    return Sample(id=id, input=QUESTION, metadata={key: contexts, "answer": answer})


def run(samples: list[Sample], log_dir, scorer=None):
    log, = outside_event_loop(inspect_eval, Task(dataset=samples, solver=recorded_answer(),
                                                 scorer=scorer or citation_support()),
                              model="mockllm/model", log_dir=str(log_dir), display="none")
    return log


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """One eval of three answers, read back from the log file it wrote."""
    log_dir = tmp_path_factory.mktemp("logs")
    log = run([sample("half", ANSWER), sample("all", SUPPORTED), sample("empty", "")], log_dir)
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def scores(log) -> dict:
    return {s.id: s.scores["citation_support"] for s in log.samples}


def test_each_score_is_check_citations_figure_with_its_reason_and_metadata(logged):
    expected = check_citations(QUESTION, ANSWER, CONTEXTS, "model")
    assert expected.score == 0.5
    score = scores(logged)["half"]
    assert score.value == expected.score
    assert score.answer == ANSWER
    assert score.explanation == expected.reason()
    assert f"{FAILING!r} cites [2]: none" in score.explanation
    assert score.metadata == expected.metadata()
    assert score.reason is None


def test_an_empty_answer_is_unscored_and_left_out_of_the_metrics(logged):
    score = scores(logged)["empty"]
    assert isinstance(score.value, float) and math.isnan(score.value)  # Score.unscored, never NOANSWER (= 0)
    assert score.reason == NO_RESPONSE
    assert score.metadata["scored_claims"] == 0
    [result] = logged.results.scores
    assert (result.scored_samples, result.unscored_samples) == (2, 1)
    supported = check_citations(QUESTION, SUPPORTED, CONTEXTS, "model")
    assert supported.score == 1.0
    metrics = {name: m.value for name, m in result.metrics.items()}
    assert metrics["mean"] == pytest.approx((0.5 + 1.0) / 2)
    # claims summed first, as `citeaudit score` sums them: (1 + 1) / (2 + 1)
    assert metrics["support"] == pytest.approx(2 / 3)
    assert "stderr" in metrics


class UnsureJudge:
    """A judge that is never sure: every claim is counted apart."""

    name = "unsure"
    signature = "unsure@1"

    def judge(self, text, passages):
        return Judgment(label="full", judge=self.signature, uncertain=True)


def test_abstentions_and_unsure_judgments_are_unscored_with_their_reason(tmp_path):
    samples = [sample("unsure", ANSWER), sample("blank", "  \n "), sample("no claim", "...")]
    log = run(samples, tmp_path, citation_support(UnsureJudge()))
    got = scores(log)
    assert all(math.isnan(score.value) for score in got.values())
    assert {id: score.reason for id, score in got.items()} == {
        "unsure": JUDGE_UNSURE, "blank": NO_RESPONSE, "no claim": NO_CLAIMS}
    assert "2 of 2 claims not scored" in got["unsure"].explanation
    [result] = log.results.scores
    assert (result.scored_samples, result.unscored_samples) == (0, 3)
    # nothing scored: every figure undefined, none 0
    assert all(math.isnan(m.value) for m in result.metrics.values()), result.metrics


def test_the_contexts_key_and_ids_can_be_chosen(tmp_path):
    docs = [{"id": "P7", "text": CONTEXTS[0]}, {"id": "W", "text": CONTEXTS[1]}]
    answer = "The P7 pump weighs 4.2 kg [P7]. The P7 pump is made in Norway [W]."
    log = run([sample("ids", answer, docs, key="retrieved")], tmp_path,
              citation_support(cite="id", contexts_key="retrieved"))
    expected = check_citations(QUESTION, answer, docs, "model", cite="id")
    score = scores(log)["ids"]
    assert (score.value, score.explanation) == (expected.score, expected.reason())


def test_missing_contexts_fail_the_sample_with_a_located_error(tmp_path):
    log = run([Sample(id="s1", input=QUESTION, metadata={"answer": ANSWER})], tmp_path)
    assert log.status == "error"
    assert "sample s1: metadata['contexts']: no retrieved contexts" in log.error.message
