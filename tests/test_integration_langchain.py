"""CitationGuard in real LangChain chains (langchain-core, no stand-ins), the plain guard function, and the
example app in examples/verify_before_deliver, all with the shipped offline judge `model`."""

from __future__ import annotations

import asyncio
import json
import runpy
import subprocess
import sys
from operator import itemgetter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("onnxruntime")  # the model judge

from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402
from langchain_core.tracers.context import collect_runs  # noqa: E402

from citeaudit.errors import InputError  # noqa: E402
from citeaudit.integrations.core import judge_for  # noqa: E402
from citeaudit.integrations.guard import ABSTENTION, AnswerGuard, guard_answer  # noqa: E402
from citeaudit.integrations.langchain import CitationGuard  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "examples" / "verify_before_deliver" / "app.py"
CORPUS = {p.stem: p.read_text(encoding="utf-8").strip() for p in (APP.parent / "corpus").glob("*.txt")}

WARRANTY_DRAFT = "The Aero 2 has a two-year limited warranty [1]. The warranty also covers accidental damage [1]."
WARRANTY_REVISED = ("The Aero 2 has a two-year limited warranty [1]. "
                    "The sources do not establish that the warranty also covers accidental damage.")


def docs(*ids: str) -> list[Document]:
    return [Document(page_content=CORPUS[i], id=i) for i in ids]


@pytest.fixture(scope="module")
def judge():
    return judge_for("model")  # built once for the module: loading it takes about a second


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(str(APP))  # the app's retriever, recorded model and chain, not run


@pytest.fixture(scope="module")
def app(example):
    return example["build_app"]()  # CitationGuard(chain, judge="model"): the spec, built on first use


def rag_chain(llm, retrieved: tuple[str, ...]):
    """A retrieval chain as LCEL writes one: {"question"} -> {"question", "context", "answer"}."""
    retriever = RunnableLambda(lambda question: docs(*retrieved))
    prompt = ChatPromptTemplate.from_template("Sources:\n{context}\n\nQuestion: {question}")
    return (RunnablePassthrough.assign(context=itemgetter("question") | retriever)
            .assign(answer=prompt | llm | StrOutputParser()))


# --- the Runnable in a real LCEL chain ---------------------------------------------------------------


def test_guard_around_a_chain_revises_an_unsupported_claim(judge):
    guard = CitationGuard(rag_chain(FakeListChatModel(responses=[WARRANTY_DRAFT]), ("warranty", "app")), judge=judge)
    out = guard.invoke({"question": "What does the warranty cover?"})
    assert (out["decision"], out["answer"], out["original"]) == ("revise", WARRANTY_REVISED, WARRANTY_DRAFT)
    assert out["question"] == "What does the warranty cover?" and out["support"] == "1/2 (50.0 %)"
    [claim] = out["failing_claims"]
    assert (claim["text"], claim["citations"], claim["label"]) == ("The warranty also covers accidental damage.",
                                                                   ["1"], "none")
    assert claim["reason"].startswith("the judge labels it none (p(support) 0.")
    assert (claim["evidence"]["context"], claim["evidence"]["source_id"]) == ("1", "warranty")
    assert claim["evidence"]["quote"].startswith("The Aero 2 comes with a two-year limited warranty")
    assert [d.id for d in out["contexts"]] == ["warranty", "app"]
    assert out["verification"].decision == "revise" and "|invalid:count|" in out["signature"]
    assert out["signature"].startswith("verify|judge:model:") and "|cite:order|version:" in out["signature"]
    json.dumps({k: v for k, v in out.items() if k not in ("contexts", "verification")})  # JSON-ready


@pytest.mark.parametrize("question, decision, delivered", [
    ("How often should I replace the filter?", "deliver",
     "Replace the filter every 12 months, or sooner when the filter light turns red [1]."),
    ("What does the warranty cover?", "revise", WARRANTY_REVISED),
    ("How loud is the Aero 2 on its lowest fan setting?", "revise",
     "The Aero 2 runs at 24 decibels on its lowest fan setting [2]."),  # kept, citing the note that supports it
    ("Can I control the Aero 2 with Alexa?", "abstain",
     f"{ABSTENTION} The sources do not establish that the Aero 2 can be controlled by voice with Alexa."),
])
def test_each_decision_with_the_model_judge(app, question, decision, delivered):
    out = app.invoke({"question": question})
    assert (out["decision"], out["answer"]) == (decision, delivered)
    assert out["answer"] == out["original"] if decision == "deliver" else out["answer"] != out["original"]
    assert bool(out["failing_claims"]) == (decision != "deliver")


def test_a_citation_corrected_says_what_it_is_kept_with(app):
    out = app.invoke({"question": "How loud is the Aero 2 on its lowest fan setting?"})
    [claim] = out["failing_claims"]
    assert (claim["citations"], claim["kept_with"], claim["evidence"]["source_id"]) == (["1"], ["2"], "power")
    assert claim["sentence"] == out["answer"]


def test_batch_judges_every_answer_as_invoke_does(app):
    """`batch` runs the chains on threads; the answers are judged one at a time, each as `invoke` judges it."""
    questions = ["How often should I replace the filter?", "What does the warranty cover?",
                 "Can I control the Aero 2 with Alexa?", "What does the warranty cover?"]
    batched = app.batch([{"question": q} for q in questions], config={"max_concurrency": 4})
    assert [o["decision"] for o in batched] == ["deliver", "revise", "abstain", "revise"]
    single = [app.invoke({"question": q}) for q in questions]
    assert [(o["answer"], o["failing_claims"]) for o in batched] == [(o["answer"], o["failing_claims"]) for o in single]


def test_ainvoke_gives_what_invoke_gives(app):
    question = {"question": "What does the warranty cover?"}
    out = asyncio.run(app.ainvoke(question))
    assert (out["decision"], out["answer"]) == ("revise", WARRANTY_REVISED)


def test_the_chain_runs_as_the_guards_child_in_a_trace(app):
    with collect_runs() as runs:
        app.with_config(run_name="verified answer").invoke({"question": "What does the warranty cover?"})
    [root] = runs.traced_runs
    assert root.name == "verified answer" and root.outputs["decision"] == "revise"
    names = set()
    todo = list(root.child_runs)
    while todo:
        run = todo.pop()
        names.add(run.name)
        todo += run.child_runs
    assert {"KeywordRetriever", "RecordedChatModel", "ChatPromptTemplate"} <= names


def test_types_come_from_the_wrapped_chain(app):
    assert app.get_input_schema().model_json_schema()["properties"].keys() == {"question"}
    assert app.OutputType == dict[str, Any]
    assert app.get_name() == "CitationGuard"


def test_check_after_a_chain_reads_the_question_from_its_output(judge):
    chain = rag_chain(FakeListChatModel(responses=[WARRANTY_DRAFT]), ("warranty", "app"))
    out = (chain | CitationGuard.check(judge=judge)).invoke({"question": "What does the warranty cover?"})
    assert (out["question"], out["decision"], out["answer"]) == ("What does the warranty cover?", "revise",
                                                                WARRANTY_REVISED)


def test_create_retrieval_chain_shape_and_a_chat_message_answer(judge):
    """{"input", "context", "answer"} as create_retrieval_chain returns it, the answer left a message."""
    chain = RunnableLambda(lambda x: {"input": x["input"], "context": docs("warranty", "app"),
                                      "answer": AIMessage(content=WARRANTY_DRAFT)})
    out = CitationGuard(chain, judge=judge, question_key="input").invoke({"input": "What does the warranty cover?"})
    assert (out["question"], out["decision"], out["answer"]) == ("What does the warranty cover?", "revise",
                                                                WARRANTY_REVISED)


def test_a_pair_and_plain_texts(judge):
    draft = "Replace the filter every 12 months [1]."
    out = CitationGuard(lambda q: (draft, [CORPUS["filters"], CORPUS["app"]]), judge=judge).invoke("How often?")
    assert (out["question"], out["decision"], out["answer"]) == ("How often?", "deliver", draft)


def test_a_marker_naming_no_retrieved_context_is_a_failing_claim(judge):
    """A generated [3] with two contexts retrieved is the model's mistake: a gap, not an exception."""
    draft = "Replacement filters are sold separately [3]."
    out = CitationGuard(lambda q: (draft, docs("filters", "app")), judge=judge).invoke("Where are filters sold?")
    [claim] = out["failing_claims"]
    assert claim["reason"] == "cites [3], which names no passage" and claim["citations"] == []
    # the other retrieved note supports it: kept, citing that note
    assert (out["decision"], claim["kept_with"]) == ("revise", ["1"])
    assert out["answer"] == "Replacement filters are sold separately [1]."
    with pytest.raises(InputError, match=r"unknown passage id '3'"):
        CitationGuard(lambda q: (draft, docs("filters", "app")), judge=judge, invalid_citations="error").invoke("q")


# --- bad shapes: an InputError naming the key ------------------------------------------------------------


@pytest.mark.parametrize("output, expected", [
    (42, "CitationGuard: expected the chain to return a mapping with 'answer' and 'context' (as "
         "create_retrieval_chain returns), or an (answer, contexts) pair; got int"),
    ([1, 2, 3], "got a list of 3"),
    ({"answer": "x [1]."}, "CitationGuard: context: the chain's output has no 'context' (its keys: answer); "
                           "set contexts_key to the key that holds it"),
    ({"context": []}, "CitationGuard: answer: the chain's output has no 'answer' (its keys: context)"),
    ({"answer": "x [1].", "context": None}, "CitationGuard: context: no retrieved contexts (None)"),
    ({"answer": "x [1].", "context": []}, "CitationGuard: context: no retrieved contexts (an empty list)"),
    ({"answer": "x [1].", "context": [Document(page_content="x"), 7]},
     "CitationGuard: context[1]: expected a context's text, got int"),
    ({"answer": 3, "context": ["x"], "question": ["q"]}, "CitationGuard: question: expected the question's text, "
                                                         "got list\nCitationGuard: answer: expected the answer's text"),
    (("x [1].", "not a list"), "CitationGuard: output[1]: expected the retrieved contexts"),
])
def test_bad_chain_outputs_are_located(judge, output, expected):
    guard = CitationGuard(RunnableLambda(lambda _: output), judge=judge)
    with pytest.raises(InputError) as err:
        guard.invoke({"question": "q"})
    assert expected in str(err.value)
    assert guard.batch([{"question": "q"}], return_exceptions=True)[0].__class__ is InputError


@pytest.mark.parametrize("options, field", [({"cite": "rank"}, "cite"), ({"invalid_citations": "drop"},
                                                                        "invalid_citations"),
                                            ({"abstention": 3}, "abstention"), ({"policy": 0.5}, "policy"),
                                            ({"policy": "partial=maybe"}, "partial"), ({"judge": 1}, "judge")])
def test_bad_options_are_refused_when_the_guard_is_made(options, field):
    with pytest.raises(InputError, match=rf": {field}: "):
        CitationGuard(RunnableLambda(lambda x: x), **options)


# --- the plain function, for any framework -------------------------------------------------------------------


@pytest.mark.parametrize("contexts", [
    [CORPUS["warranty"], CORPUS["app"]],
    [{"id": "warranty", "text": CORPUS["warranty"]}, {"id": "app", "text": CORPUS["app"]}],
    docs("warranty", "app"),
], ids=["texts", "mappings", "documents"])
def test_guard_answer_reads_every_kind_of_context(judge, contexts):
    checked = guard_answer("What does the warranty cover?", WARRANTY_DRAFT, contexts, judge=judge)
    assert (checked.decision, checked.answer, checked.original, checked.revised) == (
        "revise", WARRANTY_REVISED, WARRANTY_DRAFT, True)
    assert str(checked.support) == "1/2 (50.0 %)" and checked.verification.gaps[0].label == "none"
    assert checked.failing_claims[0].evidence.source_id == (None if isinstance(contexts[0], str) else "warranty")


def test_guard_answer_with_the_contexts_own_ids(judge):
    draft = "The Aero 2 has a two-year limited warranty [warranty]. The warranty also covers accidental damage [app]."
    checked = guard_answer("q", draft, docs("warranty", "app"), judge=judge, cite="id", repair=False)
    assert checked.decision == "revise" and checked.failing_claims[0].citations == ("app",)
    assert checked.answer.startswith("The Aero 2 has a two-year limited warranty [warranty]. ")
    assert "|cite:id|" in checked.signature


def test_the_abstention_is_the_callers_to_choose(judge):
    draft = "The Aero 2 can be controlled by voice with Alexa [1]."
    contexts = docs("app", "power")
    assert guard_answer("q", draft, contexts, judge=judge, abstention="I can't answer that.").answer == \
        "I can't answer that."
    called = guard_answer("q", draft, contexts, judge=judge, abstention=lambda v: f"{len(v.gaps)} gap(s).")
    assert (called.decision, called.answer) == ("abstain", "1 gap(s).")
    own = guard_answer("q", "The sources do not say whether it works with Alexa.", contexts, judge=judge)
    assert (own.decision, own.answer) == ("abstain", "The sources do not say whether it works with Alexa.")


def test_a_lenient_policy_delivers_the_draft(judge):
    checked = guard_answer("q", WARRANTY_DRAFT, docs("warranty", "app"), judge=judge, policy="max_unsupported=0.5")
    assert (checked.decision, checked.answer) == ("deliver", WARRANTY_DRAFT)
    assert len(checked.failing_claims) == 1  # delivered, still listed


def test_answer_guard_builds_its_judge_once(judge):
    guard = AnswerGuard("model")
    first = guard("q", WARRANTY_DRAFT, docs("warranty", "app"))
    assert guard.judge is guard.judge  # the same judge for every later call
    assert guard("q", WARRANTY_DRAFT, docs("warranty", "app")).answer == first.answer == WARRANTY_REVISED


def test_guard_answer_bad_input_is_located(judge):
    with pytest.raises(InputError) as err:
        guard_answer(1, None, {"a": 2}, judge=judge)
    assert str(err.value).splitlines() == [
        "guard_answer: question: expected the question's text, got int",
        "guard_answer: answer: expected the answer's text, got NoneType",
        "guard_answer: contexts[0]: expected a context's text, got int"]


# --- imports -----------------------------------------------------------------------------------------------


def test_the_plain_guard_imports_no_langchain():
    code = ("import sys, citeaudit.integrations.guard; "
            "print(sorted(m for m in sys.modules if m.startswith('langchain')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- the example app, end to end ---------------------------------------------------------------------------


def test_the_example_app_prints_the_revised_answer(capsys):
    runpy.run_path(str(APP), run_name="__main__")
    printed = capsys.readouterr().out
    blocks = printed.strip().split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [
        "Q: How often should I replace the filter?", "Q: What does the warranty cover?",
        "Q: How loud is the Aero 2 on its lowest fan setting?", "Q: Can I control the Aero 2 with Alexa?"]
    warranty = blocks[1].splitlines()
    assert f"  draft:     {WARRANTY_DRAFT}" in warranty
    assert "  decision:  revise (the draft's support 1/2 (50.0 %))" in warranty
    assert "  failing:   'The warranty also covers accidental damage.' cites [1]: none" in warranty
    assert warranty[-1] == f"  delivered: {WARRANTY_REVISED}"
    assert "covers accidental damage [1]" not in warranty[-1]  # the unsupported claim is not delivered
    assert "  decision:  deliver" in blocks[0] and "  decision:  abstain" in blocks[3]
    assert "    kept:    with [2], which supports it" in blocks[2]
    runpy.run_path(str(APP), run_name="__main__")
    assert capsys.readouterr().out == printed  # the same output on every run


# --- the docs page ---------------------------------------------------------------------------------------


def test_the_docs_page_blocks_run_in_order():
    """docs/integrations.md's LangChain section: its Python blocks, in order, in one namespace, and what
    they show."""
    import re

    page = ROOT / "docs" / "integrations.md"
    section = page.read_text(encoding="utf-8").split("\n## LangChain", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)
    assert namespace["out"]["decision"] == "revise" and namespace["alexa"].decision == "abstain"
