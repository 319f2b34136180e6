"""citeaudit's DeepEval metric, measured and evaluated by the installed DeepEval itself, offline.

DeepEval reads its settings from the environment when it is imported and whenever they change: these
keep it from sending telemetry, from reading a .env file of the checkout and from offering its
interactive viewer after a run. Nothing here needs a login or a model key, and a test fails if anything
opens a network connection (`offline`).
"""

from __future__ import annotations

import json
import os

import pytest

os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
os.environ["DEEPEVAL_DISABLE_DOTENV"] = "1"
os.environ["DEEPEVAL_NO_INSPECT_PROMPT"] = "1"

deepeval = pytest.importorskip("deepeval")
pytest.importorskip("onnxruntime")  # the shipped model judge

from deepeval.evaluate.configs import AsyncConfig, DisplayConfig  # noqa: E402
from deepeval.metrics import BaseMetric  # noqa: E402
from deepeval.metrics.utils import copy_metrics  # noqa: E402
from deepeval.test_case import LLMTestCase, RetrievedContextData  # noqa: E402

from citeaudit.cli import main  # noqa: E402
from citeaudit.errors import InputError  # noqa: E402
from citeaudit.integrations.core import check_citations, judge_for  # noqa: E402
from citeaudit.integrations.deepeval import CitationSupport, metadata_from  # noqa: E402
from helpers import HARNESS_ANSWER as ANSWER, HARNESS_CONTEXTS as CONTEXTS, HARNESS_FAILING as FAILING  # noqa: E402
from helpers import HARNESS_QUESTION as QUESTION, HARNESS_UNSURE as UNSURE  # noqa: E402
from helpers import HARNESS_UNSURE_CONTEXT as UNSURE_CONTEXT  # noqa: E402



@pytest.fixture(scope="module")
def judge():
    return judge_for("model")



def cli_support(runner, tmp_path, answer: str, contexts: list[str]) -> float | None:
    """The support figure `citeaudit score --judge model` gives for the same question, answer and
    contexts, written as a case file in which source n is the n-th context."""
    case = {"id": "p7", "question": QUESTION, "sources": [{"id": str(n), "text": t} for n, t in enumerate(contexts, 1)],
            "answers": [{"id": "A", "text": answer}]}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    result = runner.invoke(main, ["score", str(path), "--judge", "model", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["answers"][0]["metrics"]["support"]["value"]


def test_a_real_deepeval_metric():
    assert issubclass(CitationSupport, BaseMetric)


def test_measure_gives_the_figure_citeaudit_score_gives(judge, runner, tmp_path, offline):
    metric = CitationSupport(judge=judge, threshold=0.5)
    score = metric.measure(LLMTestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=CONTEXTS))
    direct = check_citations(QUESTION, ANSWER, CONTEXTS, judge)
    assert score == metric.score == direct.score == cli_support(runner, tmp_path, ANSWER, CONTEXTS) == 0.5
    assert metric.success is True and metric.error is None and metric.is_successful() is True
    # the reason: counts, every claim with its label (the failing one named), the judge's signature
    assert metric.reason.startswith("support 1/2 (50.0 %)")
    assert f"'{FAILING}' cites [2]: none" in metric.reason
    assert metric.reason.endswith(f"judge {judge.signature}")
    # the metadata, on the metric and in the logs DeepEval keeps
    assert metric.score_breakdown == direct.metadata() == metadata_from(metric)
    assert metric.score_breakdown["labels"] == {"full": 1, "none": 1}
    assert judge.signature in metric.evaluation_model and metric.evaluation_model.endswith("|cite:order")


def test_strict_mode_is_deepevals(judge):
    metric = CitationSupport(judge=judge, threshold=0.5, strict_mode=True)
    assert metric.threshold == 1.0
    assert metric.measure(LLMTestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=CONTEXTS)) == 0.0
    assert metric.success is False and metric.score_breakdown["score"] == 0.5


@pytest.mark.parametrize(("answer", "contexts", "why"), [
    (UNSURE, [UNSURE_CONTEXT], "1 of 1 claims not scored (the judge was unsure)"),
    ("The sources do not say what the limit is.", CONTEXTS, "the answer makes no claim (an abstention)"),
])
def test_an_answer_with_no_scored_claim_is_not_scored(judge, answer, contexts, why):
    metric = CitationSupport(judge=judge)
    assert metric.measure(LLMTestCase(input=QUESTION, actual_output=answer, retrieval_context=contexts)) is None
    assert metric.score is None and metric.reason is None and metric.success is False
    assert metric.error.startswith("not scored: support n/a") and why in metric.error
    assert check_citations(QUESTION, answer, contexts, judge).score is None
    assert metadata_from(metric)["score"] is None


def test_an_unsure_claim_is_left_out_of_the_score_and_named(judge):
    answer = "The continuous operating temperature limit is 80 °C [1]. " + UNSURE.replace("[1]", "[2]")
    metric = CitationSupport(judge=judge)
    assert metric.measure(LLMTestCase(input=QUESTION, actual_output=answer,
                                      retrieval_context=[CONTEXTS[0], UNSURE_CONTEXT])) == 1.0
    assert "1 of 2 claims not scored" in metric.reason
    assert "'Eco reduces annual energy by 15%.' cites [2]: not scored" in metric.reason


@pytest.mark.parametrize("run_async", [True, False])
def test_evaluate_runs_offline_and_keeps_reason_and_metadata(run_async, judge, tmp_path, monkeypatch, offline):
    monkeypatch.chdir(tmp_path)  # DeepEval writes its run and cache under ./.deepeval
    metric = CitationSupport()  # the default judge: "model", built once here
    cases = [LLMTestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=CONTEXTS, name="half"),
             LLMTestCase(input="Does Eco save energy?", actual_output=UNSURE, retrieval_context=[UNSURE_CONTEXT],
                         name="unsure")]
    result = deepeval.evaluate(test_cases=cases, metrics=[metric], async_config=AsyncConfig(run_async=run_async),
                               display_config=DisplayConfig(show_indicator=False, print_results=False))
    half, unsure = sorted(result.test_results, key=lambda r: r.name)
    [data] = half.metrics_data
    assert (data.name, data.score, data.success, data.error) == ("Citation Support", 0.5, True, None)
    assert f"'{FAILING}' cites [2]: none" in data.reason
    assert metadata_from(data) == check_citations(QUESTION, ANSWER, CONTEXTS, judge).metadata()
    # not scored: no score, an error that says so, a case that does not pass
    [data] = unsure.metrics_data
    assert data.score is None and data.success is False and unsure.success is False
    assert data.error.startswith("not scored:") and "'Eco reduces annual energy by 15%.'" in data.error
    assert metadata_from(data)["not_scored"] == 1
    assert (tmp_path / ".deepeval").is_dir()


def test_deepevals_copies_of_the_metric_share_its_judge(judge):
    metric = CitationSupport(judge="model", threshold=0.7, cite="id", include_reason=False)
    [copy] = copy_metrics([metric])  # what evaluate does for each test case when it runs them at once
    assert copy.judge is metric.judge
    assert (copy.threshold, copy.cite, copy.include_reason) == (0.7, "id", False)


def test_cite_id_reads_the_sources_deepeval_gives(judge):
    contexts = [RetrievedContextData(context=CONTEXTS[0], source="manual-v3"),
                RetrievedContextData(context=CONTEXTS[1], source="catalogue")]
    answer = ("The continuous operating temperature limit is 80 °C [manual-v3]. "
              "The P7 was designed in Finland [catalogue].")
    metric = CitationSupport(judge=judge, cite="id")
    assert metric.measure(LLMTestCase(input=QUESTION, actual_output=answer, retrieval_context=contexts)) == 0.5
    assert metric.score_breakdown["per_claim"][1]["citations"] == ["catalogue"]
    # under cite=order the same contexts are numbered, their sources kept
    assert CitationSupport(judge=judge).measure(
        LLMTestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=contexts)) == 0.5


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(actual_output="The limit is 80 °C [3].", retrieval_context=CONTEXTS),
     "test case 'p7': actual_output: character 19: citation marker '[3]': unknown passage id '3' (known: 1, 2)"),
    (dict(actual_output="The limit is 80 °C [1].", retrieval_context=[]), "test case 'p7': retrieval_context: "),
])
def test_bad_input_names_the_test_case_and_field(judge, kwargs, message):
    metric = CitationSupport(judge=judge)
    with pytest.raises(InputError) as err:
        metric.measure(LLMTestCase(input=QUESTION, name="p7", **kwargs))
    assert str(err.value).startswith(message)
    assert metric.error == str(err.value) and metric.score is None


def test_cite_id_without_ids_and_an_unknown_cite_are_refused(judge):
    with pytest.raises(InputError, match=r"retrieval_context\[0\]: cite=id needs every context's id"):
        CitationSupport(judge=judge, cite="id").measure(
            LLMTestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=CONTEXTS, name="p7"))
    with pytest.raises(InputError, match=r"^CitationSupport: cite: unknown cite 'position' \(known: order, id\)$"):
        CitationSupport(judge=judge, cite="position")


def test_a_missing_field_is_deepevals_missing_parameter(judge):
    from deepeval.errors import MissingTestCaseParamsError

    metric = CitationSupport(judge=judge)
    with pytest.raises(MissingTestCaseParamsError, match="retrieval_context"):
        metric.measure(LLMTestCase(input=QUESTION, actual_output=ANSWER))
    assert metric.score is None


def test_assert_test_fails_on_an_answer_not_scored(judge, tmp_path, monkeypatch, offline):
    monkeypatch.chdir(tmp_path)
    case = LLMTestCase(input="Does Eco save energy?", actual_output=UNSURE, retrieval_context=[UNSURE_CONTEXT])
    with pytest.raises(AssertionError, match=r"Citation Support \(score: None, .*error: not scored: support n/a"):
        deepeval.assert_test(case, [CitationSupport(judge=judge)])
    deepeval.assert_test(LLMTestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=CONTEXTS),
                         [CitationSupport(judge=judge, threshold=0.5)])

