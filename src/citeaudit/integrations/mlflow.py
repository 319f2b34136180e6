"""citeaudit's support figure as an MLflow GenAI scorer (docs/integrations.md).

    import mlflow
    from citeaudit.integrations.mlflow import citation_support

    mlflow.genai.evaluate(data=[{"inputs": {"question": "How heavy is the P7?"},
                                 "outputs": "The P7 weighs 4.2 kg [1].",
                                 "expectations": {"contexts": ["The P7 weighs 4.2 kg."]}}],
                          scorers=[citation_support])

The scorer reads what `mlflow.genai.evaluate` hands every scorer: the question from `inputs`, the answer
from `outputs` and the retrieved contexts, in this order of preference: `expectations[contexts_key]`,
`inputs[contexts_key]`, then the documents of the trace's RETRIEVER spans (MLflow's own convention for
retrieval; the top-level ones, in the order they started, so `[n]` names the n-th document retrieved).
It returns one `Feedback`: the support figure as its value, `CitationResult.reason()` as its rationale,
the counts, per-claim labels and signatures as its metadata. When no claim could be scored the value is
None and the Feedback carries an `AssessmentError` (code NOT_SCORED): MLflow's aggregates skip it and its
evaluation summary counts it among the scorer's failures, so an unscored answer never reads as 0 or 1.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

from citeaudit.errors import InputError, Problem
from citeaudit.extras import require
from citeaudit.integrations.core import DEFAULT_JUDGE, NOT_SCORED, CitationResult, check_citations, judge_for

require("mlflow.genai", "mlflow", "the MLflow scorer")

from mlflow.entities import AssessmentError, AssessmentSource, Feedback, SpanType  # noqa: E402
from mlflow.genai.scorers import Scorer  # noqa: E402

__all__ = ["CONTEXTS_KEY", "NOT_SCORED_CODE", "CitationSupport", "citation_support", "feedback"]

CONTEXTS_KEY = "contexts"  # where the retrieved contexts are looked for in expectations and inputs
NOT_SCORED_CODE = "NOT_SCORED"  # the AssessmentError code of an answer no claim of which could be scored
QUESTION_KEYS = ("question", "query", "input", "request")  # inputs as a mapping: the first one present
ANSWER_KEYS = ("answer", "response", "output", "content")  # outputs as a mapping: the first text among them
WHERE = "mlflow scorer"  # the `file` of an InputError raised here: a scorer's arguments are no file


class CitationSupport(Scorer):
    """Scores an answer's cited claims against its retrieved contexts with a citeaudit judge.

    judge: a judge spec (`model`, the shipped offline judge; `openai:MODEL`, ...), built once per scorer,
        or a judge already built (`core.judge_for`).
    cite: `order` (`[n]` names the n-th context) or `id` (markers name the contexts' own ids).
    contexts_key: the key of `expectations` or `inputs` that holds the contexts.
    store: a judgment store file (docs/runs.md), read first and filled with what the judge is asked."""

    name: str = "citation_support"
    description: str | None = "citeaudit support: supported cited claims / claims the judge was sure of"
    judge: Any = DEFAULT_JUDGE  # a spec, or a Judge
    cite: str = "order"
    contexts_key: str = CONTEXTS_KEY
    store: str | Path | None = None

    _built: Any = PrivateAttr(default=None)
    # mlflow.genai.evaluate scores rows in parallel threads; one judge is built and used by one at a time
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __call__(self, *, inputs: Any = None, outputs: Any = None, expectations: dict[str, Any] | None = None,
                 trace: Any = None) -> Feedback:
        question = _question(_resolved(inputs, trace, "inputs"))
        answer = _answer(_resolved(outputs, trace, "outputs"))
        contexts = find_contexts(inputs, expectations, trace, self.contexts_key)
        with self._lock:
            if self._built is None:
                self._built = judge_for(self.judge)
            result = check_citations(question, answer, contexts, self._built, cite=self.cite, store=self.store)
        return feedback(result, name=self.name, judge=self.judge if isinstance(self.judge, str) else self.judge.name)


def feedback(result: CitationResult, name: str = "citation_support", judge: str = DEFAULT_JUDGE) -> Feedback:
    """citeaudit's verdict as an MLflow Feedback: the support figure, the reason, the metadata as strings
    (MLflow keeps an assessment's metadata as a map of strings: lists and mappings as JSON text). `judge`
    names the judge in the source's id (`citeaudit:model`); its whole signature is in the metadata."""
    metadata = {key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                for key, value in result.metadata().items()}
    source = AssessmentSource(source_type="CODE", source_id=f"citeaudit:{judge}")
    if result.score is None:
        error = AssessmentError(error_code=NOT_SCORED_CODE,
                                error_message=f"{NOT_SCORED}: {_why_not_scored(result)}")
        return Feedback(name=name, value=None, error=error, rationale=result.reason(), metadata=metadata,
                        source=source)
    return Feedback(name=name, value=result.score, rationale=result.reason(), metadata=metadata, source=source)


def _why_not_scored(result: CitationResult) -> str:
    if not result.claims:
        return "the answer makes no claim"
    return f"the judge was unsure of all {len(result.claims)} claims"


def _resolved(value: Any, trace: Any, what: str) -> Any:
    """A value MLflow did not pass, read from the trace's root span as MLflow's own scorers read it."""
    if value is not None or trace is None:
        return value
    from mlflow.genai.utils.trace_utils import resolve_inputs_from_trace, resolve_outputs_from_trace

    return (resolve_inputs_from_trace if what == "inputs" else resolve_outputs_from_trace)(value, trace)


def _question(inputs: Any) -> str:
    """The question is recorded with the verdict; judging does not need it, so none is no error."""
    if inputs is None:
        return ""
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for key in QUESTION_KEYS:
            if isinstance(inputs.get(key), str):
                return inputs[key]
    from mlflow.genai.utils.trace_utils import parse_inputs_to_str

    return parse_inputs_to_str(inputs)  # chat messages: the last one's content


def _answer(outputs: Any) -> str:
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, Mapping):
        for key in ANSWER_KEYS:
            if isinstance(outputs.get(key), str):
                return outputs[key]
        if any(key in outputs for key in ("choices", "messages", "output")):
            from mlflow.genai.utils.trace_utils import parse_outputs_to_str

            return parse_outputs_to_str(outputs)  # a chat completion, messages or a Responses API output
    shown = "nothing" if outputs is None else type(outputs).__name__
    raise InputError([Problem(WHERE, None, "outputs", f"expected the answer: a text, a mapping with one of "
                                                      f"{', '.join(ANSWER_KEYS)}, or a chat completion; "
                                                      f"got {shown}")])


def find_contexts(inputs: Any, expectations: Mapping[str, Any] | None, trace: Any,
                  key: str = CONTEXTS_KEY) -> Any:
    """The retrieved contexts: given explicitly (expectations first, then inputs) or recorded in the trace."""
    for where, given in (("expectations", expectations), ("inputs", inputs)):
        if isinstance(given, Mapping) and given.get(key) is not None:
            return given[key]
    found = trace_contexts(trace) if trace is not None else []
    if not found:
        raise InputError([Problem(WHERE, None, f"expectations[{key!r}]", f"no retrieved contexts: give them in "
                                                                         f"expectations[{key!r}] or "
                                                                         f"inputs[{key!r}], or record the "
                                                                         "retrieval as a RETRIEVER span of "
                                                                         "the trace")])
    return found


def trace_contexts(trace: Any) -> list[dict[str, Any]]:
    """The documents of the trace's top-level RETRIEVER spans, in the order the spans started. A
    RETRIEVER span inside another is part of that one's retrieval, as MLflow's RetrievalGroundedness
    reads a trace. Each document keeps its id (MLflow's own reader keeps only its text and doc_uri; cite=id
    needs the id), and a span whose outputs are not a list of documents is an error, not skipped."""
    spans = {span.span_id: span for span in trace.data.spans}

    def nested(span: Any) -> bool:
        parent = spans.get(span.parent_id)
        while parent is not None:
            if parent.span_type == SpanType.RETRIEVER:
                return True
            parent = spans.get(parent.parent_id)
        return False

    retrievers = sorted((s for s in trace.search_spans(span_type=SpanType.RETRIEVER) if not nested(s)),
                        key=lambda s: s.start_time_ns)
    documents: list[dict[str, Any]] = []
    problems = []
    for span in retrievers:
        outputs = span.outputs
        if isinstance(outputs, str):
            try:
                outputs = json.loads(outputs)
            except json.JSONDecodeError:
                pass
        where = f"span {span.name!r} ({span.span_id}).outputs"
        if not isinstance(outputs, Sequence) or isinstance(outputs, (str, bytes)):
            problems.append(Problem(f"trace {trace.info.trace_id}", None, where,
                                    f"a RETRIEVER span's outputs must be a list of documents "
                                    f"({{page_content, metadata, id}}), got {type(outputs).__name__}"))
            continue
        for n, doc in enumerate(outputs):
            text = doc.get("page_content", doc.get("content")) if isinstance(doc, Mapping) else None
            if not isinstance(text, str):
                problems.append(Problem(f"trace {trace.info.trace_id}", None, f"{where}[{n}]",
                                        "expected a document with its text in page_content"))
                continue
            documents.append({"id": doc.get("id"), "text": text} if doc.get("id") is not None else {"text": text})
    if problems:
        raise InputError(problems)
    return documents


citation_support = CitationSupport()
"""The scorer with the shipped offline judge (`model`) and contexts under "contexts"."""
