"""Real OpenTelemetry traces of a small RAG application, for the otel reader's tests (tests/test_otel_reader.py).

The spans come from the libraries that write them in production: LangChain runs a retrieval chain (an
in-memory retriever, langchain_core's FakeListChatModel answering) under openinference-instrumentation-
langchain's `LangChainInstrumentor`, or OpenInference's own tracer records one by hand (`OITracer`, the way
an application instruments itself), into opentelemetry-sdk's `InMemorySpanExporter`. They are then written:

- as OTLP JSON, what an OpenTelemetry collector's `file` exporter writes (one `ExportTraceServiceRequest` a
  line): encoded by opentelemetry-exporter-otlp-proto-common's `encode_spans`, turned into JSON by
  protobuf's `MessageToDict`, with the two deviations the OTLP specification asks of JSON (trace and span
  ids in hex, enums as integers; docs/specification.md#json-protobuf-encoding of opentelemetry-proto);
- as protobuf's own JSON mapping (`MessageToJson`: ids in base64, enums by name), which some exporters write;
- in the shapes Phoenix exports spans in. Phoenix is not installed here: these are converted by this module
  from the same spans, following Phoenix's schema (its REST API's `Span` model of
  `GET /v1/projects/{project}/spans`, its `span_json_encoder`, and the columns of `get_spans_dataframe`),
  not written by Phoenix.

The tests build their files at test time, so a change in those libraries' conventions fails a test.
`tests/fixtures/formats/otel_langchain_rag.jsonl` was written by this module:

    python tests/otel_traces.py tests/fixtures/formats/otel_langchain_rag.jsonl
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from datetime import datetime, timezone
from typing import Any

from google.protobuf.json_format import MessageToDict, MessageToJson
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from openinference.instrumentation import OITracer, TraceConfig, get_llm_attributes, get_retriever_attributes
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

SERVICE = "p7-assistant"
MANUAL_V3 = "P7 operating manual, version 3. The continuous operating temperature limit is 80 °C."
CATALOGUE = "Product catalogue. The P7 offers an Eco operating mode."
PILOT = "Eco mode pilot report. The pilot observed P7 machines in Eco mode for 30 days."
PROMPT = ("Answer from the numbered context, citing it as [n].\n\nContext:\n{context}\n\nQuestion: {question}")


@dataclass(frozen=True)
class Run:
    """One question put to the chain: what each retriever returns (a list per retriever; none: a chain
    without retrieval), and the answer the fake model gives. `key`: the chain takes a dict input, the
    question under this key (and a user id beside it), as `chain.invoke({"question": ...})` does."""

    question: str
    retrieved: Sequence[Sequence[str | Document]]
    answer: str
    key: str | None = None


class ListRetriever(BaseRetriever):
    """An in-memory retriever: returns its documents, whatever the query."""

    documents: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
        return list(self.documents)


def _documents(items: Sequence[str | Document]) -> list[Document]:
    return [item if isinstance(item, Document) else Document(page_content=item) for item in items]


def _numbered(documents: list[Document]) -> str:
    return "\n".join(f"[{n}] {d.page_content}" for n, d in enumerate(documents, 1))


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _chain(run: Run) -> Any:
    """LangChain's usual retrieval chain, `{"context": retriever | format, "question": passthrough} | prompt |
    model | parser`; several retrievers run one after the other, their documents numbered in that order."""
    retrievers = [ListRetriever(documents=_documents(docs)) for docs in run.retrieved]
    model = FakeListChatModel(responses=[run.answer])
    question: Any = RunnablePassthrough() if run.key is None else itemgetter(run.key)
    if not retrievers:
        return {"context": RunnableLambda(lambda _: "none"), "question": question} | ChatPromptTemplate.from_template(
            PROMPT) | model | StrOutputParser()
    retrieve: Any = retrievers[0] if len(retrievers) == 1 else RunnableLambda(
        lambda q, config: [d for r in retrievers for d in r.invoke(q, config=config)])
    return ({"context": question | retrieve | _numbered, "question": question}
            | ChatPromptTemplate.from_template(PROMPT) | model | StrOutputParser())


def _input(run: Run) -> Any:
    return run.question if run.key is None else {run.key: run.question, "user": "u-17"}


def langchain_spans(runs: Iterable[Run], genai: bool = False, session: bool = False) -> list[ReadableSpan]:
    """The spans LangChainInstrumentor records for each run of a retrieval chain (`_chain`): retrievers,
    the prompt, the chat model, the output parser, one trace a run. `genai`: OpenInference also writes the
    OpenTelemetry GenAI attributes (TraceConfig(enable_genai_semconv=True)). `session`: the runs are one
    trace, each chain called in turn by an outer function (a RunnableLambda, a CHAIN span)."""
    provider, exporter = _provider()
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider, config=TraceConfig(enable_genai_semconv=genai))
    runs = list(runs)
    try:
        if session:
            RunnableLambda(lambda _, config: [_chain(run).invoke(_input(run), config=config) for run in runs],
                           name="session").invoke(runs[0].question)
        else:
            for run in runs:
                _chain(run).invoke(_input(run))
    finally:
        instrumentor.uninstrument()
    return list(exporter.get_finished_spans())


def manual_spans(question: str, retrieved: Sequence[Sequence[dict[str, Any]]], answer: str) -> list[ReadableSpan]:
    """One trace recorded by hand with OpenInference's tracer, as an application instruments itself: a
    chain span, one retriever span per list of documents (`{"id", "content", "score", "metadata"}`, as
    OpenInference's `Document`), then an LLM span with the answer."""
    provider, exporter = _provider()
    tracer = OITracer(provider.get_tracer("rag-app"), config=TraceConfig())
    with tracer.start_as_current_span("answer-question", openinference_span_kind="chain") as root:
        root.set_input(question)
        for n, documents in enumerate(retrieved, 1):
            with tracer.start_as_current_span(f"search-{n}", openinference_span_kind="retriever") as span:
                span.set_input(question)
                span.set_attributes(get_retriever_attributes(documents=[dict(d) for d in documents]))
        with tracer.start_as_current_span("generate", openinference_span_kind="llm") as llm:
            llm.set_attributes(get_llm_attributes(model_name="fake-model",
                                                  input_messages=[{"role": "user", "content": question}],
                                                  output_messages=[{"role": "assistant", "content": answer}]))
        root.set_output(answer)
    return list(exporter.get_finished_spans())


def traces(spans: Iterable[ReadableSpan]) -> list[list[ReadableSpan]]:
    """The spans grouped by trace, traces in the order their first span ended."""
    out: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        out.setdefault(span.context.trace_id, []).append(span)
    return list(out.values())


# --- OTLP JSON ---------------------------------------------------------------------------------------------


def protobuf_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The ExportTraceServiceRequest of `spans` in protobuf's standard JSON mapping (base64 ids, enum names)."""
    return json.loads(MessageToJson(encode_spans(spans)))


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The ExportTraceServiceRequest of `spans` as OTLP JSON, as a collector's file exporter writes it."""
    data = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for item in (span, *span.get("links", [])):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in item:
                            item[key] = base64.b64decode(item[key]).hex()
    return data


def genai_only(request: dict[str, Any]) -> dict[str, Any]:
    """An OTLP request keeping only the GenAI attributes (`gen_ai.*`) of its spans: a trace as an
    instrumentation that writes the OpenTelemetry GenAI conventions alone records it."""
    request = json.loads(json.dumps(request))
    for resource_spans in request["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                span["attributes"] = [a for a in span.get("attributes", []) if a["key"].startswith("gen_ai.")]
    return request


def jsonl(records: Iterable[Any]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


# --- Phoenix's shapes, converted from the same spans --------------------------------------------------------

# attributes Phoenix stores as objects though OpenInference writes them as JSON text (its JSON_STRING_ATTRIBUTES)
_JSON_TEXT = ("document.metadata", "llm.prompt_template.variables", "metadata", "tool.parameters")
# OpenInference's list attributes: a DataFrame column holds their items, each keyed by the rest of the name
_LISTS = ("retrieval.documents", "llm.input_messages", "llm.output_messages")


def _loaded(key: str, value: Any) -> Any:
    if key.endswith(_JSON_TEXT) and isinstance(value, str):
        try:
            return json.loads(value) or value
        except ValueError:
            return value
    return value


def _nested(flat: dict[str, Any]) -> dict[str, Any]:
    """`retrieval.documents.0.document.content` -> {"retrieval": {"documents": [{"document": {...}}]}}."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        node = tree
        parts = key.split(".")
        for part, following in zip(parts, parts[1:]):
            node = node.setdefault(part, {})
        node[parts[-1]] = _loaded(key, value)

    def lists(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        node = {k: lists(v) for k, v in node.items()}
        if node and all(k.isdigit() for k in node):
            return [node[k] for k in sorted(node, key=int)]
        return node

    return lists(tree)


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    """A nested object as dotted keys, lists of objects by index (Phoenix's REST API writes them so)."""
    out: dict[str, Any] = {}
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict) for v in value)):
            out.update(_flat(value, name))
        else:
            out[name] = value
    return out


def _iso(nanos: int | None) -> str | None:
    return None if nanos is None else datetime.fromtimestamp(nanos / 1e9, tz=timezone.utc).isoformat()


def _status(span: ReadableSpan) -> str:
    return span.status.status_code.name  # UNSET, OK, ERROR


def _ids(span: ReadableSpan) -> tuple[str, str, str | None]:
    parent = span.parent.span_id if span.parent is not None else None
    return (f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}",
            None if parent is None else f"{parent:016x}")


def phoenix_span(span: ReadableSpan) -> dict[str, Any]:
    """A span as Phoenix's span JSON (span_json_encoder, and one span of `spans_to_jsonl`): the attributes
    nested as Phoenix stores them, JSON-text metadata loaded."""
    trace_id, span_id, parent_id = _ids(span)
    attributes = dict(span.attributes or {})
    return {"name": span.name, "context": {"trace_id": trace_id, "span_id": span_id},
            "span_kind": attributes.get("openinference.span.kind", "UNKNOWN"), "parent_id": parent_id,
            "start_time": _iso(span.start_time), "end_time": _iso(span.end_time), "status_code": _status(span),
            "status_message": span.status.description or "", "attributes": _nested(attributes),
            "events": [{"name": e.name, "timestamp": _iso(e.timestamp), "attributes": dict(e.attributes or {})}
                       for e in span.events],
            "conversation": None}


def phoenix_rest_page(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """A page of Phoenix's REST API, `GET /v1/projects/{project}/spans`: its Span model, the attributes
    flattened to dotted keys and openinference.span.kind moved to span_kind."""
    data = []
    for span in spans:
        record = phoenix_span(span)
        attributes = _flat(record["attributes"])
        record["span_kind"] = attributes.pop("openinference.span.kind", "UNKNOWN")
        record["attributes"] = attributes
        del record["conversation"]
        data.append({"id": f"U3Bhbjo{len(data) + 1}", **record})
    return {"data": data, "next_cursor": None}


def _any_value(value: Any) -> dict[str, Any]:
    """An attribute value as Phoenix's OtlpAnyValue model writes it: every field, the unset ones null."""
    fields: dict[str, Any] = dict.fromkeys(("array_value", "bool_value", "bytes_value", "double_value",
                                            "int_value", "kvlist_value", "string_value"))
    if isinstance(value, bool):
        fields["bool_value"] = value
    elif isinstance(value, int):
        fields["int_value"] = value
    elif isinstance(value, float):
        fields["double_value"] = value
    elif isinstance(value, (list, tuple)):
        fields["array_value"] = {"values": [_any_value(v) for v in value]}
    else:
        fields["string_value"] = str(value)
    return fields


def phoenix_otlpv1_page(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """A page of Phoenix's REST API `GET /v1/projects/{project}/spans/otlpv1`: its OtlpSpan model, OTLP's
    fields in snake_case, ids in hex, the attributes flattened to dotted keys, unset fields null."""
    data = []
    for span in spans:
        trace_id, span_id, parent_id = _ids(span)
        attributes = _flat(_nested(dict(span.attributes or {})))
        data.append({"attributes": [{"key": k, "value": _any_value(v)} for k, v in attributes.items()],
                     "dropped_attributes_count": None, "dropped_events_count": None, "dropped_links_count": None,
                     "end_time_unix_nano": span.end_time, "events": None, "flags": None,
                     "kind": "SPAN_KIND_INTERNAL", "links": None, "name": span.name, "parent_span_id": parent_id,
                     "span_id": span_id, "start_time_unix_nano": span.start_time,
                     "status": {"code": {"UNSET": 0, "OK": 1, "ERROR": 2}[_status(span)], "message": None},
                     "trace_id": trace_id, "trace_state": None})
    return {"data": data, "next_cursor": None}


def phoenix_dataframe_row(span: ReadableSpan) -> dict[str, Any]:
    """A row of Phoenix's spans DataFrame (`get_spans_dataframe`) as pandas' `to_json(orient="records",
    lines=True)` writes it: `context.span_id` and `context.trace_id` columns, an `attributes.` column per
    semantic convention (a list convention's items keyed by the rest of their names), times in epoch
    milliseconds."""
    trace_id, span_id, parent_id = _ids(span)
    columns: dict[str, Any] = {}
    for key, value in (span.attributes or {}).items():
        head = next((name for name in _LISTS if key.startswith(name + ".")), None)
        if head is None:
            columns[key] = _loaded(key, value)
            continue
        index, _, rest = key[len(head) + 1:].partition(".")
        items = columns.setdefault(head, {})
        items.setdefault(int(index), {})[rest] = _loaded(rest, value)
    for head in _LISTS:
        if head in columns:
            columns[head] = [columns[head][i] for i in sorted(columns[head])]
    return {"name": span.name, "span_kind": (span.attributes or {}).get("openinference.span.kind", "UNKNOWN"),
            "parent_id": parent_id, "start_time": span.start_time // 1_000_000,
            "end_time": span.end_time // 1_000_000 if span.end_time else None, "status_code": _status(span),
            "status_message": span.status.description or "", "events": [],
            "context.span_id": span_id, "context.trace_id": trace_id,
            **{f"attributes.{k}": v for k, v in columns.items()}}


# --- the checked-in example -----------------------------------------------------------------------------------

EXAMPLE_RUNS = (
    Run("What is the continuous operating temperature limit of the P7?", [[MANUAL_V3, CATALOGUE]],
        "The continuous operating temperature limit of the P7 is 80 °C [1]. The P7 weighs 4.2 kg [2]."),
    Run("How long did the Eco mode pilot run?", [[CATALOGUE], [PILOT]],
        "The P7 has an Eco operating mode [1], and its pilot ran for 30 days [2]."),
)


def example_file() -> str:
    """tests/fixtures/formats/otel_langchain_rag.jsonl: two LangChain traces, one request a line."""
    return jsonl(otlp_json(trace) for trace in traces(langchain_spans(EXAMPLE_RUNS)))


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(example_file())
