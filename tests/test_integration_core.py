"""integrations/core: what every harness adapter returns, equal to `citeaudit score` on the same case."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest
from click.testing import CliRunner

from citeaudit.cli import main
from citeaudit.errors import InputError
from citeaudit.integrations.core import NOT_SCORED, check_citations, context_documents, judge_for
from citeaudit.records import Judgment, SourcePassage

QUESTION = "What does the P7 weigh, and how many fans does it have?"
ANSWER = "The P7 weighs 4.2 kg [1]. It has two fans [2]."
CONTEXTS = ["Specifications of the P7. Weight: 4.2 kg. Height: 31 cm.",
            "The P7 is cooled by a single fan at the back."]


class UnsureJudge:
    """A judge that is sure of nothing: every label falls in its uncertain band."""

    name = "unsure"
    signature = "unsure@1"

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return Judgment(label="full", judge=self.signature, scores={"support": 0.5}, uncertain=True)


class LabelJudge:
    """A judge that labels each claim from a table: a stand-in where the model's labels are not the point."""

    name = "table"
    signature = "table@1"

    def __init__(self, labels: dict[str, str]):
        self.labels = labels

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return Judgment(label=self.labels[text], judge=self.signature)


@pytest.fixture(scope="module")
def model_judge():
    pytest.importorskip("onnxruntime")
    return judge_for("model")


def test_contexts_in_every_shape_become_numbered_documents():
    plain = context_documents(["a", "b"])
    assert plain == [{"id": "1", "text": "a"}, {"id": "2", "text": "b"}]
    given = context_documents([{"id": "doc-9", "text": "a"}, {"page_content": "b", "id": 4}])
    assert given == [{"id": "1", "text": "a", "metadata": {"id": "doc-9"}},
                     {"id": "2", "text": "b", "metadata": {"id": "4"}}]
    assert context_documents({"x": "a", "y": "b"}, cite="id") == [{"id": "x", "text": "a"}, {"id": "y", "text": "b"}]


def test_langchain_documents_are_read_by_their_page_content():
    documents = pytest.importorskip("langchain_core.documents")
    docs = [documents.Document(page_content="a", id="d1"), documents.Document(page_content="b", metadata={"id": "d2"})]
    assert context_documents(docs, cite="id") == [{"id": "d1", "text": "a"}, {"id": "d2", "text": "b"}]


@pytest.mark.parametrize("contexts, cite, where, says", [
    ("one string", "order", "", "expected the retrieved contexts"),
    (["a", 3], "order", "[1]", "expected a context's text, got int"),
    (["a", {"id": "x"}], "order", "[1]", "got dict"),
    (["a"], "id", "[0]", "cite=id needs every context's id"),
    (["a"], "rank", "cite", "unknown cite 'rank' (known: order, id)"),
])
def test_bad_contexts_are_located(contexts, cite, where, says):
    with pytest.raises(InputError) as err:
        context_documents(contexts, cite)
    problem = err.value.problems[0]
    assert problem.path == where and says in problem.message


def test_uncited_marker_is_a_located_error_not_a_traceback():
    with pytest.raises(InputError) as err:
        check_citations(QUESTION, "It is heavy [3].", CONTEXTS, LabelJudge({}))
    assert "citation marker '[3]': unknown passage id '3' (known: 1, 2)" in str(err.value)


def test_score_counts_and_reason_come_from_the_judgments():
    judge = LabelJudge({"The P7 weighs 4.2 kg.": "full", "It has two fans.": "contradicts"})
    result = check_citations(QUESTION, ANSWER, CONTEXTS, judge)
    assert (result.support.numerator, result.support.denominator, result.score) == (1, 2, 0.5)
    assert [(c.citations, c.label, c.supported) for c in result.claims] == [(("1",), "full", True),
                                                                              (("2",), "contradicts", False)]
    assert result.decision == "revise"
    assert result.reason().startswith("support 1/2 (50.0 %): claim 1 'The P7 weighs 4.2 kg.' cites [1]: full")
    meta = result.metadata()
    assert meta["labels"] == {"full": 1, "contradicts": 1} and meta["judge_signature"] == "table@1"
    assert meta["signature"].startswith("support|judge:table@1|") and json.dumps(meta)


def test_claims_the_judge_is_unsure_of_are_not_scored_never_zero_or_one():
    result = check_citations(QUESTION, ANSWER, CONTEXTS, UnsureJudge())
    assert result.score is None and result.support.denominator == 0
    assert len(result.not_scored) == 2 and result.metadata()["not_scored"] == 2
    assert f"2 of 2 claims {NOT_SCORED}" in result.reason() and f"cites [1]: {NOT_SCORED}" in result.reason()


def test_an_empty_answer_is_an_abstention_not_full_support():
    result = check_citations(QUESTION, "", CONTEXTS, LabelJudge({}))
    assert result.score is None and result.claims == () and "abstention" in result.reason()


def test_the_model_judge_gives_the_figure_citeaudit_score_gives(model_judge, tmp_path):
    result = check_citations(QUESTION, ANSWER, CONTEXTS, model_judge)
    case = {"id": "q1", "question": QUESTION, "sources": context_documents(CONTEXTS),
            "answers": [{"id": "a", "text": ANSWER}]}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    out = CliRunner().invoke(main, ["score", str(path), "--judge", "model", "--format", "json"])
    assert out.exit_code == 0, out.output
    support = json.loads(out.output)["summary"]["all"]["support"]
    assert (support["numerator"], support["denominator"]) == (result.support.numerator, result.support.denominator)
    assert support["signature"] == result.signature
    assert result.score == 0.5  # the weight is supported; "two fans" cited to "a single fan" is not
    assert result.claims[1].label != "full" and result.judge_signature.startswith("model:judge-v1")


@pytest.mark.parametrize("adapter, library, extra", [
    ("deepeval", "deepeval.metrics", "deepeval"), ("ragas", "ragas.metrics.base", "ragas"),
    ("mlflow", "mlflow.genai", "mlflow"), ("inspect_ai", "inspect_ai", "inspect"),
    ("langchain", "langchain_core.runnables", "langchain")])
def test_without_its_library_an_adapter_names_the_extra_to_install(monkeypatch, adapter, library, extra):
    import importlib
    import sys

    from citeaudit.errors import MissingExtra

    monkeypatch.setitem(sys.modules, library, None)  # as if the harness were not installed
    monkeypatch.delitem(sys.modules, f"citeaudit.integrations.{adapter}", raising=False)
    with pytest.raises(MissingExtra, match=rf"needs {re.escape(library)}, .*: pip install 'citeaudit\[{extra}\]'$"):
        importlib.import_module(f"citeaudit.integrations.{adapter}")
