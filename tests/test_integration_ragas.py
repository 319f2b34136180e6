"""citeaudit's RAGAS metric, run by the installed RAGAS itself (evaluate, the single-sample score and
an experiment), offline: no LLM, no embeddings, no key. RAGAS reads RAGAS_DO_NOT_TRACK once, so it is
set before RAGAS is imported; a test fails if anything opens a network connection (`offline`).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import warnings

import pytest

os.environ["RAGAS_DO_NOT_TRACK"] = "true"

ragas = pytest.importorskip("ragas")
pytest.importorskip("onnxruntime")  # the shipped model judge

from ragas import Dataset, EvaluationDataset, SingleTurnSample, experiment  # noqa: E402
from ragas.metrics import BaseMetric, SingleTurnMetric  # noqa: E402
from ragas.metrics.result import MetricResult  # noqa: E402

from citeaudit.cli import main  # noqa: E402
from citeaudit.errors import InputError  # noqa: E402
from citeaudit.integrations.core import check_citations, judge_for  # noqa: E402
from citeaudit.integrations.ragas import TRACE, CitationSupport  # noqa: E402
from helpers import HARNESS_ANSWER as ANSWER, HARNESS_CONTEXTS as CONTEXTS, HARNESS_FAILING as FAILING  # noqa: E402
from helpers import HARNESS_QUESTION as QUESTION, HARNESS_UNSURE as UNSURE  # noqa: E402
from helpers import HARNESS_UNSURE_CONTEXT as UNSURE_CONTEXT  # noqa: E402

ROWS = [{"user_input": QUESTION, "response": ANSWER, "retrieved_contexts": CONTEXTS},
        {"user_input": "Does Eco save energy?", "response": UNSURE, "retrieved_contexts": [UNSURE_CONTEXT]}]


@pytest.fixture(scope="module")
def judge():
    return judge_for("model")



def evaluate(rows, metric):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # RAGAS 0.4 points to its experiments
        return ragas.evaluate(EvaluationDataset.from_list(rows), metrics=[metric], show_progress=False)


def test_both_of_ragas_metric_interfaces():
    assert issubclass(CitationSupport, SingleTurnMetric)  # what ragas.evaluate takes
    assert issubclass(CitationSupport, BaseMetric)  # what experiments call: ascore -> MetricResult


def test_evaluate_needs_no_llm_and_gives_the_cli_figure(judge, runner, tmp_path, offline):
    result = evaluate(ROWS, CitationSupport())  # the default judge, "model"
    scores = result.to_pandas()["citation_support"].tolist()
    assert scores[0] == check_citations(QUESTION, ANSWER, CONTEXTS, judge).score == 0.5
    assert math.isnan(scores[1])  # not scored: RAGAS's value for a row without a score
    assert result["citation_support"][0] == 0.5
    # the same rows read by `citeaudit score --from ragas`, as RAGAS writes them
    path = tmp_path / "rows.jsonl"
    EvaluationDataset.from_list(ROWS).to_jsonl(str(path))
    out = runner.invoke(main, ["score", str(path), "--from", "ragas", "--judge", "model", "--format", "json"])
    assert out.exit_code == 0, out.output
    support = [a["metrics"]["support"] for a in json.loads(out.stdout)["answers"]]
    assert [s["value"] for s in support] == [0.5, None]


def test_evaluate_keeps_the_reason_and_metadata_in_the_traces(judge, offline):
    result = evaluate(ROWS, CitationSupport(judge=judge))
    half = dict(result.traces[0]["citation_support"])[TRACE]["output"]
    assert half["reason"].startswith("support 1/2 (50.0 %)") and f"'{FAILING}' cites [2]: none" in half["reason"]
    assert half["reason"].endswith(f"judge {judge.signature}")
    expected = check_citations(QUESTION, ANSWER, CONTEXTS, judge).metadata()
    assert {k: v for k, v in half.items() if k != "reason"} == expected
    unsure = dict(result.traces[1]["citation_support"])[TRACE]["output"]
    assert unsure["reason"].startswith("not scored: support n/a") and unsure["not_scored"] == 1


def test_the_single_sample_score(judge, offline):
    metric = CitationSupport(judge=judge)
    sample = SingleTurnSample(**ROWS[0])
    assert asyncio.run(metric.single_turn_ascore(sample)) == 0.5
    assert math.isnan(metric.single_turn_score(SingleTurnSample(**ROWS[1])))


def test_ascore_gives_a_metric_result_with_reason_and_metadata(judge):
    metric = CitationSupport(judge=judge)
    result = asyncio.run(metric.ascore(**ROWS[0], reference="ignored: a column this metric does not read"))
    assert isinstance(result, MetricResult) and result.value == 0.5
    assert f"'{FAILING}' cites [2]: none" in result.reason
    assert result.traces["output"] == check_citations(QUESTION, ANSWER, CONTEXTS, judge).metadata()
    unsure = metric.score(**ROWS[1])
    assert math.isnan(unsure.value) and unsure.reason.startswith("not scored: ")
    assert "'Eco reduces annual energy by 15%.' cites [1]: not scored" in unsure.reason


def test_an_experiment_calls_it_as_ragas_own_metrics(judge, offline):
    metric = CitationSupport(judge=judge)
    dataset = Dataset(name="p7", backend="inmemory")
    for row in ROWS:
        dataset.append(row)

    @experiment()
    async def citations(row):
        result = await metric.ascore(**row)
        return {"user_input": row["user_input"], "citation_support": result.value, "reason": result.reason}

    rows = list(asyncio.run(citations.arun(dataset, name="citations")))
    by_question = {r["user_input"]: r for r in rows}
    assert by_question[QUESTION]["citation_support"] == 0.5
    assert math.isnan(by_question["Does Eco save energy?"]["citation_support"])


def test_cite_id_reads_retrieved_context_ids(judge, offline):
    answer = ("The continuous operating temperature limit is 80 °C [manual-v3]. "
              "The P7 was designed in Finland [catalogue].")
    row = {**ROWS[0], "response": answer, "retrieved_context_ids": ["manual-v3", "catalogue"]}
    result = evaluate([row], CitationSupport(judge=judge, cite="id"))
    assert result.to_pandas()["citation_support"].tolist() == [0.5]
    # cite=id needs the ids: RAGAS's own check of the columns refuses the dataset before judging
    with pytest.raises(ValueError, match=r"requires the following additional columns \['retrieved_context_ids'\]"):
        evaluate(ROWS[:1], CitationSupport(judge=judge, cite="id"))
    # under cite=order the ids are kept, the markers numbered
    assert CitationSupport(judge=judge).score(**{**ROWS[0], "retrieved_context_ids": [7, 8]}).value == 0.5


SAMPLE = "sample (user_input \"What is the P7's temperature limit, and where was it designed?\")"


@pytest.mark.parametrize(("row", "message"), [
    ({**ROWS[0], "response": "The limit is 80 °C [3]."},
     f"{SAMPLE}: response: character 19: citation marker '[3]': unknown passage id '3' (known: 1, 2)"),
    ({**ROWS[0], "retrieved_contexts": None}, f"{SAMPLE}: retrieved_contexts: missing: this metric reads it"),
    ({**ROWS[0], "retrieved_context_ids": ["a"]}, f"{SAMPLE}: retrieved_context_ids: 1 ids for 2 retrieved contexts"),
])
def test_bad_input_names_the_sample_and_field(judge, row, message):
    with pytest.raises(InputError) as err:
        CitationSupport(judge=judge).score(**row)
    assert str(err.value) == message


def test_a_failing_row_is_nan_in_evaluate(judge, offline):
    # RAGAS's own convention for a row whose metric raised: NaN, the others scored
    result = evaluate([ROWS[0], {**ROWS[0], "response": "The limit is 80 °C [3]."}], CitationSupport(judge=judge))
    scores = result.to_pandas()["citation_support"].tolist()
    assert scores[0] == 0.5 and math.isnan(scores[1])


def test_an_unknown_cite_is_refused():
    with pytest.raises(InputError, match=r"^CitationSupport: cite: unknown cite 'position' \(known: order, id\)$"):
        CitationSupport(judge="model", cite="position")
