"""The MLflow scorer against MLflow itself: called directly, inside `mlflow.genai.evaluate` with a local
file store, and on a trace whose retrieval was recorded as a RETRIEVER span. The figures must be the ones
`check_citations` gives for the same case, judged by the shipped model judge."""

from __future__ import annotations

import json
import os

import pytest

# MLflow decides when it is first imported whether to send usage data; these tests send nothing
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
mlflow = pytest.importorskip("mlflow")
pytest.importorskip("mlflow.genai")
pytest.importorskip("onnxruntime")  # the shipped model judge

from mlflow.entities import Document, SpanType  # noqa: E402

from citeaudit.errors import InputError  # noqa: E402
from citeaudit.integrations.core import check_citations  # noqa: E402
from citeaudit.integrations.mlflow import (  # noqa: E402
    NOT_SCORED_CODE, CitationSupport, citation_support, trace_contexts)
from citeaudit.records import Judgment  # noqa: E402

QUESTION = "How heavy is the P7 pump?"
CONTEXTS = ["The P7 pump weighs 4.2 kg and runs at up to 80 °C.", "The warranty lasts two years."]
DOCS = {"P7": CONTEXTS[0], "W": CONTEXTS[1]}
# one claim its citation supports, one it does not: support 1/2
ANSWER = "The P7 pump weighs 4.2 kg [1]. The P7 pump is made in Norway [2]."
ANSWER_BY_ID = "The P7 pump weighs 4.2 kg [P7]. The P7 pump is made in Norway [W]."
FAILING = "The P7 pump is made in Norway."


@pytest.fixture(scope="module")
def expected():
    return check_citations(QUESTION, ANSWER, CONTEXTS, "model")


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    """A local file store under tmp_path (mlflow-skinny has no SQLite store: that needs alembic, which
    comes with the full `mlflow` package); nothing leaves the machine."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 refuses a file store without it
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    yield tmp_path
    mlflow.set_tracking_uri(previous)


def metadata_values(feedback) -> dict:
    """MLflow keeps an assessment's metadata as strings; the scorer wrote lists and mappings as JSON."""
    out = {}
    for key, value in feedback.metadata.items():
        if key.startswith("mlflow."):
            continue
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def test_called_directly_it_gives_check_citations_figure_reason_and_metadata(expected):
    feedback = citation_support(inputs={"question": QUESTION}, outputs=ANSWER, expectations={"contexts": CONTEXTS})
    assert expected.score == 0.5
    assert feedback.value == expected.score
    assert feedback.error is None
    assert feedback.rationale == expected.reason()
    assert f"{FAILING!r} cites [2]: none" in feedback.rationale
    assert metadata_values(feedback) == expected.metadata()
    assert (feedback.source.source_type, feedback.source.source_id) == ("CODE", "citeaudit:model")
    assert feedback.name == "citation_support"


def test_contexts_may_come_with_the_inputs(expected):
    feedback = citation_support(inputs={"question": QUESTION, "contexts": CONTEXTS}, outputs={"answer": ANSWER})
    assert feedback.value == expected.score and feedback.rationale == expected.reason()


def test_an_answer_without_claims_is_not_scored_never_0_or_1():
    feedback = citation_support.run(inputs=QUESTION, outputs="", expectations={"contexts": CONTEXTS})
    assert feedback.value is None
    assert feedback.error.error_code == NOT_SCORED_CODE
    assert feedback.error.error_message == "not scored: the answer makes no claim"
    assert metadata_values(feedback)["scored_claims"] == 0


class UnsureJudge:
    """A judge that is never sure: every claim is counted apart."""

    name = "unsure"
    signature = "unsure@1"

    def judge(self, text, passages):
        return Judgment(label="full", judge=self.signature, uncertain=True)


def test_claims_the_judge_was_unsure_of_are_not_scored():
    feedback = CitationSupport(judge=UnsureJudge())(inputs=QUESTION, outputs=ANSWER,
                                                    expectations={"contexts": CONTEXTS})
    assert feedback.value is None
    assert feedback.error.error_message == "not scored: the judge was unsure of all 2 claims"
    assert "2 of 2 claims not scored" in feedback.rationale
    assert feedback.source.source_id == "citeaudit:unsure"


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"outputs": ANSWER}, "expectations['contexts']"),  # no contexts anywhere
    ({"outputs": {"text": ANSWER}, "expectations": {"contexts": CONTEXTS}}, "outputs"),  # no answer it can read
])
def test_bad_input_is_a_located_error(kwargs, path):
    with pytest.raises(InputError) as err:
        citation_support(inputs={"question": QUESTION}, **kwargs)
    assert str(err.value).startswith(f"mlflow scorer: {path}: ")


def test_evaluate_logs_the_figure_and_skips_the_unscored_answer(tracking, expected):
    data = [
        {"inputs": {"question": QUESTION}, "outputs": ANSWER, "expectations": {"contexts": CONTEXTS}},
        {"inputs": {"question": QUESTION}, "outputs": "", "expectations": {"contexts": CONTEXTS}},
    ]
    result = mlflow.genai.evaluate(data=data, scorers=[citation_support])
    # MLflow's mean skips the unscored answer: it is not averaged in as 0
    assert result.metrics["citation_support/mean"] == pytest.approx(expected.score)
    rows = result.result_df.sort_values("response", ascending=False).to_dict("records")
    assert rows[0]["citation_support/value"] == expected.score
    assert rows[0]["citation_support/rationale"] == expected.reason()
    assert rows[1]["citation_support/error_message"] == "not scored: the answer makes no claim"
    # the assessments as the store keeps them, read back
    logged = [a for t in mlflow.search_traces(run_id=result.run_id, return_type="list")
              for a in t.info.assessments if a.name == "citation_support"]
    assert sorted((a.value is None, a.source.source_id) for a in logged) == [
        (False, "citeaudit:model"), (True, "citeaudit:model")]
    scored = next(a for a in logged if a.value is not None)
    assert scored.value == expected.score and metadata_values(scored) == expected.metadata()
    unscored = next(a for a in logged if a.value is None)
    assert unscored.error.error_code == NOT_SCORED_CODE


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(question: str) -> list[Document]:
    return [Document(page_content=text, id=doc_id) for doc_id, text in DOCS.items()]


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve_and_rerank(question: str) -> list[Document]:
    # a retriever inside a retriever: only the outer one's documents are the retrieved contexts
    return list(reversed(retrieve(question)))[1:] + [Document(page_content=CONTEXTS[1], id="W")]


def test_contexts_come_from_the_traces_retriever_spans(tracking, expected):
    @mlflow.trace
    def app(question: str) -> str:
        retrieve(question)
        return ANSWER

    app(QUESTION)
    trace = mlflow.get_trace(mlflow.get_last_active_trace_id(), flush=True)
    assert trace_contexts(trace) == [{"id": "P7", "text": CONTEXTS[0]}, {"id": "W", "text": CONTEXTS[1]}]
    feedback = citation_support(trace=trace)  # question and answer from the trace's root span too
    assert feedback.value == expected.score and feedback.rationale == expected.reason()


def test_a_nested_retriever_span_is_part_of_its_parents_retrieval(tracking):
    @mlflow.trace
    def app(question: str) -> str:
        retrieve_and_rerank(question)
        return ANSWER

    app(QUESTION)
    trace = mlflow.get_trace(mlflow.get_last_active_trace_id(), flush=True)
    assert trace_contexts(trace) == [{"id": "P7", "text": CONTEXTS[0]}, {"id": "W", "text": CONTEXTS[1]}]


def test_evaluate_with_a_traced_app_reads_its_retrieval_and_cites_by_id(tracking):
    @mlflow.trace
    def app(question: str) -> str:
        retrieve(question)
        return ANSWER_BY_ID

    by_id = CitationSupport(name="citation_support_by_id", cite="id")
    result = mlflow.genai.evaluate(data=[{"inputs": {"question": QUESTION}}], predict_fn=app, scorers=[by_id])
    expected = check_citations(QUESTION, ANSWER_BY_ID, DOCS, "model", cite="id")
    assert expected.score == 0.5
    assert result.metrics["citation_support_by_id/mean"] == pytest.approx(expected.score)
    row = result.result_df.to_dict("records")[0]
    assert row["citation_support_by_id/rationale"] == expected.reason()
    assert "cites [W]: none" in row["citation_support_by_id/rationale"]
