"""The OpenTelemetry trace reader (`--from otel`) on traces that LangChain and OpenInference's instrumentation
really record (tests/otel_traces.py builds them at test time, so a change in those libraries' conventions
fails here), written as a collector's OTLP JSON and in Phoenix's export shapes; hostile files get located
problems, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit.errors import InputError, SkippedRecordsWarning
from citeaudit.files.loading import load_cases
from citeaudit.files.readers import read
from citeaudit.parse.resolve import Reading, resolve
from citeaudit.records import Case

for module in ("langchain_core", "openinference.instrumentation.langchain", "opentelemetry.sdk",
               "opentelemetry.exporter.otlp.proto.common", "google.protobuf"):
    pytest.importorskip(module)

import otel_traces as T  # noqa: E402  (after the skips: it imports those libraries)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LIMIT_80 = "The continuous operating temperature limit of the P7 is 80 °C [1]. The P7 weighs 4.2 kg [2]."
ONE = T.Run("What is the continuous operating temperature limit of the P7?", [[T.MANUAL_V3, T.CATALOGUE]],
            LIMIT_80)
TWO_RETRIEVERS = T.Run("How long did the Eco mode pilot run?", [[T.CATALOGUE], [T.PILOT]],
                       "The P7 has an Eco operating mode [1]. Its pilot ran for 30 days [2].")


@pytest.fixture(scope="module")
def one_trace():
    return T.langchain_spans([ONE])


def _hex(span_id: int) -> str:
    return f"{span_id:016x}"


def _kind(span) -> str | None:
    return (span.attributes or {}).get("openinference.span.kind")


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _otlp_file(tmp_path: Path, spans, name: str = "traces.jsonl") -> str:
    return _write(tmp_path, name, T.jsonl(T.otlp_json(trace) for trace in T.traces(spans)))


def _problems(path: str, **options) -> list[str]:
    with pytest.raises(InputError) as err:
        read("otel", path, **options)
    return [str(p) for p in err.value.problems]


def _citations(case: dict) -> list[tuple[str, list[str], list[str]]]:
    """(text, citations, invalid citations) of each statement of the case's answer, once resolved."""
    resolved, problems = resolve(Case.model_validate(case), Reading(invalid_citations="count"))
    assert problems == []
    return [(st.text, st.citations, st.invalid_citations) for st in resolved.case.answers[0].statements]


def _line_of(path: str, needle: str) -> int:
    text = Path(path).read_text(encoding="utf-8")
    return text.count("\n", 0, text.index(needle)) + 1


def _attribute_index(request: dict, span_name: str, key: str) -> tuple[int, int]:
    """(index of the span named `span_name` in the request's first scope, index of its attribute `key`)."""
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    k = next(i for i, s in enumerate(spans) if s["name"] == span_name)
    return k, next(i for i, a in enumerate(spans[k]["attributes"]) if a["key"] == key)


# --- a LangChain trace, as a collector writes it ----------------------------------------------------------


def test_a_langchain_trace_becomes_a_case(tmp_path, one_trace):
    path = _otlp_file(tmp_path, one_trace)
    [record] = read("otel", path)
    root = next(s for s in one_trace if s.parent is None)
    [retriever] = [s for s in one_trace if _kind(s) == "RETRIEVER"]
    [llm] = [s for s in one_trace if _kind(s) == "LLM"]
    r = _hex(retriever.context.span_id)
    trace_id = f"{root.context.trace_id:032x}"
    case = record.case
    assert (record.line, record.where) == (1, f"resourceSpans[0].scopeSpans[0].spans[{one_trace.index(root)}]")
    assert {k: v for k, v in case.items() if k != "metadata"} == {
        "id": trace_id,
        "question": ONE.question,
        "sources": [{"id": f"{r}-1", "text": T.MANUAL_V3,
                     "metadata": {"span_id": r, "span_name": "ListRetriever", "rank": 1}},
                    {"id": f"{r}-2", "text": T.CATALOGUE,
                     "metadata": {"span_id": r, "span_name": "ListRetriever", "rank": 2}}],
        "ranking": [f"{r}-1", f"{r}-2"],
        "answers": [{"id": "answer", "system": T.SERVICE, "text": LIMIT_80}],
    }
    assert case["metadata"] == {
        "from": "otel", "format": "otlp", "trace_id": trace_id,
        "root": {"span_id": _hex(root.context.span_id), "name": "RunnableSequence", "kind": "CHAIN"},
        "markers": "order",
        "question_from": {"span_id": _hex(root.context.span_id), "attribute": "input.value"},
        "answer_from": {"span_id": _hex(llm.context.span_id), "name": "FakeListChatModel",
                        "attribute": "llm.output_messages"},
        "retrievers": [{"span_id": r, "name": "ListRetriever", "documents": 2}],
        "service": T.SERVICE,
    }
    # [n] is the n-th retrieved document: LangChain's instrumentation records no document ids
    assert _citations(case) == [
        ("The continuous operating temperature limit of the P7 is 80 °C.", [f"{r}-1"], []),
        ("The P7 weighs 4.2 kg.", [f"{r}-2"], [])]
    assert Case.model_validate(json.loads(Case.model_validate(case).model_dump_json())) == Case.model_validate(case)


def test_documents_of_several_retrievers_are_numbered_in_the_order_the_retrievers_started(tmp_path):
    spans = T.langchain_spans([TWO_RETRIEVERS])
    retrievers = sorted((s for s in spans if _kind(s) == "RETRIEVER"), key=lambda s: s.start_time)
    first, second = (_hex(s.context.span_id) for s in retrievers)
    [record] = read("otel", _otlp_file(tmp_path, spans))
    assert [(s["id"], s["text"]) for s in record.case["sources"]] == [(f"{first}-1", T.CATALOGUE),
                                                                      (f"{second}-1", T.PILOT)]
    assert record.case["ranking"] == [f"{first}-1", f"{second}-1"]
    assert [c for _, c, _ in _citations(record.case)] == [[f"{first}-1"], [f"{second}-1"]]
    assert [r["documents"] for r in record.case["metadata"]["retrievers"]] == [1, 1]


def test_spans_out_of_order_and_spread_over_lines_read_the_same(tmp_path, one_trace):
    """A collector writes a trace's spans as they end, in batches: the reader orders them itself."""
    in_order = read("otel", _otlp_file(tmp_path, one_trace, "in_order.jsonl"))[0].case
    scattered = T.jsonl(T.otlp_json([span]) for span in reversed(one_trace))  # one span a line, root first
    [record] = read("otel", _write(tmp_path, "scattered.jsonl", scattered))
    assert record.case == in_order
    assert (record.line, record.where) == (1, "resourceSpans[0].scopeSpans[0].spans[0]")  # the root's line


def test_each_trace_is_a_case_in_the_order_of_its_root_span(tmp_path):
    spans = T.langchain_spans([ONE, TWO_RETRIEVERS])
    path = _otlp_file(tmp_path, spans)
    records = read("otel", path)
    assert [r.case["question"] for r in records] == [ONE.question, TWO_RETRIEVERS.question]
    assert [r.line for r in records] == [1, 2]
    cases = load_cases([path], Reading(invalid_citations="count"), "otel")
    assert [c.origin for c in cases] == [f"{path}:1", f"{path}:2"]


# --- every export shape ------------------------------------------------------------------------------------


SHAPES = {
    "otlp-jsonl": lambda spans: ("traces.jsonl", T.jsonl([T.otlp_json(spans)])),
    "otlp-indented": lambda spans: ("trace.json", json.dumps(T.otlp_json(spans), indent=2)),
    "protobuf-json": lambda spans: ("traces.jsonl", T.jsonl([T.protobuf_json(spans)])),
    "phoenix-spans-jsonl": lambda spans: ("spans.jsonl", T.jsonl(T.phoenix_span(s) for s in spans)),
    "phoenix-spans-list": lambda spans: ("spans.json", json.dumps([T.phoenix_span(s) for s in spans], indent=1)),
    "phoenix-rest-page": lambda spans: ("page.json", json.dumps(T.phoenix_rest_page(spans), indent=2)),
    "phoenix-otlpv1-page": lambda spans: ("otlpv1.json", json.dumps(T.phoenix_otlpv1_page(spans))),
    "phoenix-dataframe": lambda spans: ("spans_df.jsonl", T.jsonl(T.phoenix_dataframe_row(s) for s in spans)),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_export_shape_reads_the_same_case(tmp_path, one_trace, shape):
    expected = read("otel", _otlp_file(tmp_path, one_trace))[0].case
    name, text = SHAPES[shape](one_trace)
    [record] = read("otel", _write(tmp_path, name, text), system=T.SERVICE)
    case = record.case
    for key in ("id", "question", "sources", "ranking", "answers"):
        assert case[key] == expected[key], key
    for key in ("root", "question_from", "answer_from", "retrievers"):
        assert case["metadata"][key] == expected["metadata"][key], key
    # Phoenix's otlpv1 page holds OTLP spans (without their resource)
    assert case["metadata"]["format"] == ("phoenix" if shape.startswith("phoenix") and "otlp" not in shape
                                          else "otlp")


def test_a_phoenix_export_names_the_system_by_the_file(tmp_path, one_trace):
    """Phoenix's span shapes carry no resource, so no service.name."""
    path = _write(tmp_path, "prod-spans.jsonl", T.jsonl(T.phoenix_span(s) for s in one_trace))
    assert read("otel", path)[0].case["answers"][0]["system"] == "prod-spans"


def test_phoenix_document_metadata_is_kept(tmp_path):
    run = T.Run(ONE.question, [[T.Document(page_content=T.MANUAL_V3, metadata={"source": "manual-v3.pdf",
                                                                                  "page": 4})]],
                "The limit is 80 °C [1].")
    spans = T.langchain_spans([run])
    for name, text in (SHAPES["otlp-jsonl"](spans), SHAPES["phoenix-rest-page"](spans),
                       SHAPES["phoenix-dataframe"](spans)):
        [source] = read("otel", _write(tmp_path, name, text))[0].case["sources"]
        assert source["metadata"]["metadata"] == {"source": "manual-v3.pdf", "page": 4}, name


# --- the GenAI conventions -----------------------------------------------------------------------------------


def test_a_trace_with_only_the_genai_conventions(tmp_path):
    """The GenAI attributes OpenInference writes beside its own (enable_genai_semconv), read alone: the
    documents from gen_ai.retrieval.documents, the answer from gen_ai.output.messages, the question from the
    retriever's gen_ai.retrieval.query.text (the root span of such a trace records no input)."""
    spans = T.langchain_spans([ONE], genai=True)
    text = T.jsonl(T.genai_only(T.otlp_json(trace)) for trace in T.traces(spans))
    assert "retrieval.documents.0" not in text and "gen_ai.retrieval.documents" in text
    [record] = read("otel", _write(tmp_path, "genai.jsonl", text))
    expected = read("otel", _otlp_file(tmp_path, T.langchain_spans([ONE])))[0].case
    case = record.case
    assert case["question"] == ONE.question
    assert [s["text"] for s in case["sources"]] == [s["text"] for s in expected["sources"]]
    assert case["answers"][0]["text"] == LIMIT_80
    assert case["metadata"]["question_from"]["attribute"] == "gen_ai.retrieval.query.text"
    assert case["metadata"]["answer_from"]["attribute"] == "gen_ai.output.messages"
    assert [c for _, c, _ in _citations(case)] == [[s["id"]] for s in case["sources"]]


def test_genai_documents_that_are_no_json_list_of_documents(tmp_path, one_trace):
    spans = T.langchain_spans([ONE], genai=True)
    request = T.genai_only(T.otlp_json(spans))
    k, a = _attribute_index(request, "ListRetriever", "gen_ai.retrieval.documents")
    value = request["resourceSpans"][0]["scopeSpans"][0]["spans"][k]["attributes"][a]["value"]
    at = f"resourceSpans[0].scopeSpans[0].spans[{k}].attributes[{a}].value"
    value["stringValue"] = value["stringValue"][:-5]  # the JSON text cut short
    path = _write(tmp_path, "cut.jsonl", T.jsonl([request]))
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:1: {at}: gen_ai.retrieval.documents: expected JSON, got text that is not (")
    value["stringValue"] = json.dumps([T.MANUAL_V3, T.CATALOGUE])
    path = _write(tmp_path, "texts.jsonl", T.jsonl([request]))
    assert _problems(path) == [
        f"{path}:1: {at}: gen_ai.retrieval.documents: expected a list of documents ({{\"id\", \"content\", ...}}), "
        f"got {[T.MANUAL_V3, T.CATALOGUE]!r:.57}..."]


def test_a_dual_written_trace_is_read_by_its_openinference_attributes(tmp_path):
    [record] = read("otel", _otlp_file(tmp_path, T.langchain_spans([ONE], genai=True)))
    assert record.case["metadata"]["answer_from"]["attribute"] == "llm.output_messages"
    assert [s["text"] for s in record.case["sources"]] == [T.MANUAL_V3, T.CATALOGUE]


# --- options: cite, root, answer, question_key -------------------------------------------------------------


def _manual(tmp_path) -> tuple[str, list]:
    spans = T.manual_spans(
        "What is the continuous operating temperature limit of the P7?",
        [[{"id": "manual-v3", "content": T.MANUAL_V3, "score": 0.92, "metadata": {"page": 4}},
          {"id": "catalogue", "content": T.CATALOGUE, "score": 0.41}],
         [{"id": "manual-v3", "content": T.MANUAL_V3, "score": 0.88}, {"id": "pilot", "content": T.PILOT}]],
        "The limit is 80 °C [manual-v3]. The pilot ran for 30 days [pilot].")
    return _otlp_file(tmp_path, spans, "manual.jsonl"), spans


def test_cite_id_names_sources_by_their_own_ids(tmp_path):
    path, spans = _manual(tmp_path)
    [record] = read("otel", path, cite="id")
    case = record.case
    first = _hex(next(s for s in spans if s.name == "search-1").context.span_id)
    # manual-v3 retrieved twice, with the same text: one source, at its first rank
    assert [(s["id"], s["metadata"].get("score")) for s in case["sources"]] == [
        ("manual-v3", 0.92), ("catalogue", 0.41), ("pilot", None)]
    assert case["sources"][0]["metadata"] == {"span_id": first, "span_name": "search-1", "rank": 1, "score": 0.92,
                                              "metadata": {"page": 4}, "document_id": "manual-v3"}
    assert case["metadata"]["markers"] == "id"
    assert [c for _, c, _ in _citations(case)] == [["manual-v3"], ["pilot"]]


def test_a_score_that_is_no_number_is_kept_as_protobuf_writes_it(tmp_path):
    """doubleValue "NaN" (a failed relevance score): kept as its text, since JSON has no NaN."""
    path, _ = _manual(tmp_path)
    request = json.loads(Path(path).read_text(encoding="utf-8"))
    k, a = _attribute_index(request, "search-1", "retrieval.documents.0.document.score")
    request["resourceSpans"][0]["scopeSpans"][0]["spans"][k]["attributes"][a]["value"] = {"doubleValue": "NaN"}
    case = read("otel", _write(tmp_path, "nan.jsonl", T.jsonl([request])))[0].case
    assert case["sources"][0]["metadata"]["score"] == "NaN"
    assert json.loads(json.dumps(case, allow_nan=False)) == case


def test_cite_order_keeps_the_document_ids_in_metadata(tmp_path):
    path, spans = _manual(tmp_path)
    case = read("otel", path)[0].case
    assert [s["metadata"]["document_id"] for s in case["sources"]] == ["manual-v3", "catalogue", "manual-v3", "pilot"]
    # sources numbered, "[manual-v3]" names none of them, and is not shaped like a marker: ordinary text
    assert [(c, inv) for _, c, inv in _citations(case)] == [([], []), ([], [])]


def test_cite_id_without_document_ids_is_located(tmp_path, one_trace):
    path = _otlp_file(tmp_path, one_trace)
    request = json.loads(Path(path).read_text(encoding="utf-8"))
    k, a = _attribute_index(request, "ListRetriever", "retrieval.documents.0.document.content")
    k, b = _attribute_index(request, "ListRetriever", "retrieval.documents.1.document.content")
    span = f"resourceSpans[0].scopeSpans[0].spans[{k}]"
    hint = "cite=id names sources by their ids; read the documents by position with cite=order"
    assert _problems(path, cite="id") == [
        f"{path}:1: {span}.attributes[{a}].value: retrieval.documents.0.document: no document id: {hint}",
        f"{path}:1: {span}.attributes[{b}].value: retrieval.documents.1.document: no document id: {hint}"]


def test_root_picks_the_spans_cases_start_from(tmp_path):
    """One trace, a session calling the chain twice: by default one case (the session's input, every
    retrieved document, the last answer); root=RunnableSequence (a span name) makes a case of each chain."""
    second = T.Run("How long did the Eco mode pilot run?", [[T.PILOT]], "It ran for 30 days [1].")
    spans = T.langchain_spans([ONE, second], session=True)
    path = _otlp_file(tmp_path, spans)
    [whole] = read("otel", path)
    assert (whole.case["question"], whole.case["answers"][0]["text"]) == (ONE.question, second.answer)
    assert [s["text"] for s in whole.case["sources"]] == [T.MANUAL_V3, T.CATALOGUE, T.PILOT]
    assert read("otel", path, root="CHAIN")[0].case == whole.case  # the outermost CHAIN is the session
    chains = read("otel", path, root="RunnableSequence")
    trace_id = whole.case["id"]
    roots = sorted((s for s in spans if s.name == "RunnableSequence" and s.parent is not None
                    and next(p for p in spans if p.context.span_id == s.parent.span_id).name == "session"),
                   key=lambda s: s.start_time)
    assert [r.case["id"] for r in chains] == [f"{trace_id}-{_hex(s.context.span_id)}" for s in roots]
    assert [(r.case["question"], r.case["answers"][0]["text"], [s["text"] for s in r.case["sources"]])
            for r in chains] == [(ONE.question, LIMIT_80, [T.MANUAL_V3, T.CATALOGUE]),
                                 (second.question, second.answer, [T.PILOT])]


def test_answer_root_reads_the_root_spans_output(tmp_path, one_trace):
    [record] = read("otel", _otlp_file(tmp_path, one_trace), answer="root")
    root = next(s for s in one_trace if s.parent is None)
    assert record.case["answers"][0]["text"] == LIMIT_80
    assert record.case["metadata"]["answer_from"] == {"span_id": _hex(root.context.span_id),
                                                      "name": "RunnableSequence", "attribute": "output.value"}


def test_a_json_input_gives_its_question_field(tmp_path):
    run = T.Run(ONE.question, ONE.retrieved, LIMIT_80, key="question")
    path = _otlp_file(tmp_path, T.langchain_spans([run]))
    assert read("otel", path)[0].case["question"] == ONE.question
    assert read("otel", path, question_key="user")[0].case["question"] == "u-17"
    request = json.loads(Path(path).read_text(encoding="utf-8"))
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    k = next(i for i, s in enumerate(spans) if "parentSpanId" not in s)
    _, a = _attribute_index(request, spans[k]["name"], "input.value")
    assert _problems(path, question_key="topic") == [
        f"{path}:1: resourceSpans[0].scopeSpans[0].spans[{k}].attributes[{a}].value: input.value: a JSON input "
        "without a text field topic: name the field that holds the question with question_key=KEY"]


def test_unknown_options_and_values_are_refused(tmp_path, one_trace):
    path = _otlp_file(tmp_path, one_trace)
    assert _problems(path, cite="position") == [f"{path}: option cite='position': expected one of order, id"]
    assert _problems(path, incomplete="drop") == [f"{path}: option incomplete='drop': expected one of error, skip"]
    assert _problems(path, source_ids="x") == [
        f"{path}: unknown option 'source_ids' for the otel reader (known: cite, root, answer, question_key, system, "
        "incomplete)"]


# --- incomplete traces ----------------------------------------------------------------------------------------


def test_a_trace_without_a_retriever_span_is_located_or_left_out_when_asked(tmp_path):
    """A chat turn without retrieval (its JSON input has no question field: not read, the trace is no RAG
    trace whatever its input)."""
    chat = T.Run("Hello?", [], "Hello! How can I help?", key="message")
    spans = T.langchain_spans([ONE, chat])
    path = _otlp_file(tmp_path, spans)
    root = next(s for s in T.traces(spans)[1] if s.parent is None)
    k = T.traces(spans)[1].index(root)
    message = (f"trace {root.context.trace_id:032x}: no retriever span under root span 'RunnableSequence' "
               "(openinference.span.kind RETRIEVER, or gen_ai.operation.name retrieval): a case needs retrieved "
               "documents")
    assert _problems(path) == [f"{path}:2: resourceSpans[0].scopeSpans[0].spans[{k}]: {message}; to leave such "
                               "traces out, read with incomplete=skip"]
    with pytest.warns(SkippedRecordsWarning) as caught:
        records = read("otel", path, incomplete="skip")
    assert [r.case["question"] for r in records] == [ONE.question]
    assert str(caught[0].message) == f"{path}: 1 trace(s) left out (incomplete=skip); the first, at line 2: {message}"
    only_chat = _otlp_file(tmp_path, T.langchain_spans([chat]), "chat.jsonl")
    with pytest.warns(SkippedRecordsWarning):
        assert _problems(only_chat, incomplete="skip") == [
            f"{only_chat}: every trace was left out (incomplete=skip): 1 trace(s), none with retrieved documents, a "
            "question and an answer"]


def test_a_retriever_that_returned_nothing_and_a_trace_without_answer(tmp_path, one_trace):
    request = T.otlp_json(one_trace)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for span in spans:
        span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith("retrieval.documents.")]
    path = _write(tmp_path, "empty.jsonl", T.jsonl([request]))
    [problem] = _problems(path)
    assert problem.endswith("the retriever spans under root span 'RunnableSequence' returned no document "
                            "(retrieval.documents, gen_ai.retrieval.documents): a case needs at least one source; "
                            "to leave such traces out, read with incomplete=skip")
    request = T.otlp_json(one_trace)
    for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"] = [a for a in span["attributes"]
                              if not a["key"].startswith(("llm.output_messages", "output."))]
    path = _write(tmp_path, "no_answer.jsonl", T.jsonl([request]))
    [problem] = _problems(path)
    assert "no answer: no LLM span under root span 'RunnableSequence', nor root span 'RunnableSequence', has an " \
           "output (llm.output_messages, gen_ai.output.messages, gen_ai.completion or output.value)" in problem


# --- hostile files ------------------------------------------------------------------------------------------


def test_malformed_spans_are_all_located(tmp_path, one_trace):
    request = T.otlp_json(one_trace)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    llm, c = _attribute_index(request, "FakeListChatModel", "openinference.span.kind")
    spans[llm]["attributes"][c]["value"] = {"stringValue": 7}
    spans[llm]["attributes"].append({"key": "llm.model_name", "value": {"stringValue": "m", "intValue": "1"}})
    spans[llm]["attributes"].append({"key": "llm.model_name", "value": {"stringValue": "n"}})
    spans[0]["traceId"] = "abc"
    spans[1]["startTimeUnixNano"] = "soon"
    spans[2]["parentSpanId"] = 42
    path = _write(tmp_path, "bad.jsonl", T.jsonl([request]))
    at = "resourceSpans[0].scopeSpans[0].spans"
    n = len(spans[llm]["attributes"])
    assert sorted(_problems(path)) == sorted([
        f"{path}:1: {at}[0].traceId: expected a trace id: 32 hex digits (OTLP JSON), or 16 bytes in base64 "
        "(protobuf's JSON mapping), got 'abc'",
        f"{path}:1: {at}[1].startTimeUnixNano: expected nanoseconds since 1970 (an integer, or its decimal text), "
        "got 'soon'",
        f"{path}:1: {at}[2].parentSpanId: expected a span id as text, got an integer",
        f"{path}:1: {at}[{llm}].attributes[{c}].value.stringValue: expected a text, got an integer",
        f"{path}:1: {at}[{llm}].attributes[{n - 2}].value: an AnyValue holds one value, got stringValue, intValue",
        f"{path}:1: {at}[{llm}].attributes[{n - 1}].key: attribute 'llm.model_name' is given twice (also "
        f"attributes[{n - 2}])",
    ])


def test_attributes_of_the_wrong_type_for_their_convention_are_located(tmp_path, one_trace):
    request = T.otlp_json(one_trace)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    k, a = _attribute_index(request, "ListRetriever", "retrieval.documents.0.document.content")
    spans[k]["attributes"][a]["value"] = {"intValue": "80"}  # a document's text given as a number
    spans[k]["attributes"].append({"key": "retrieval.documents.1.document.score", "value": {"boolValue": True}})
    llm, c = _attribute_index(request, "FakeListChatModel", "llm.output_messages.0.message.content")
    spans[llm]["attributes"][c]["value"] = {"arrayValue": {"values": [{"stringValue": "80 °C"}]}}
    path = _write(tmp_path, "types.jsonl", T.jsonl([request]))
    at = "resourceSpans[0].scopeSpans[0].spans"
    assert sorted(_problems(path)) == sorted([
        f"{path}:1: {at}[{k}].attributes[{a}].value: retrieval.documents.0.document.content: expected a text, "
        "got an integer",
        f"{path}:1: {at}[{k}].attributes[{len(spans[k]['attributes']) - 1}].value: "
        "retrieval.documents.1.document.score: expected a number, got a boolean",
        f"{path}:1: {at}[{llm}].attributes[{c}].value: llm.output_messages.0.message.content: expected a text, "
        "got a list",
    ])


def test_a_document_without_content_alone(tmp_path, one_trace):
    request = T.otlp_json(one_trace)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    k, b = _attribute_index(request, "ListRetriever", "retrieval.documents.1.document.content")
    spans[k]["attributes"][b] = {"key": "retrieval.documents.1.document.id", "value": {"stringValue": "d2"}}
    path = _write(tmp_path, "no_content.jsonl", T.jsonl([request]))
    assert _problems(path) == [
        f"{path}:1: resourceSpans[0].scopeSpans[0].spans[{k}].attributes[{b}].value: retrieval.documents.1.document: "
        "no document.content: a retrieved document needs its text to be judged against"]


def test_a_trace_cut_mid_line(tmp_path):
    text = T.jsonl(T.otlp_json(trace) for trace in T.traces(T.langchain_spans([ONE, TWO_RETRIEVERS])))
    cut = text[: text.index("\n") + 1 + (len(text) - text.index("\n")) // 2]  # the second line cut in half
    path = _write(tmp_path, "cut.jsonl", cut)
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:2: malformed JSON: ")
    assert problem.endswith("; the file ends inside this line: was the export cut short?")
    indented = json.dumps(T.otlp_json(T.langchain_spans([ONE])), indent=2)
    path = _write(tmp_path, "cut.json", indented[: len(indented) // 2])
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:{indented[: len(indented) // 2].count(chr(10)) + 1}: malformed JSON: ")
    assert problem.endswith("; the file ends inside this line: was the export cut short?")


def test_files_that_are_no_trace_export(tmp_path):
    ragas = _write(tmp_path, "samples.jsonl", '{"user_input": "Q", "response": "A", "retrieved_contexts": []}\n')
    assert _problems(ragas) == [
        f"{ragas}:1: not an OpenTelemetry trace export: expected OTLP JSON ({{\"resourceSpans\": [...]}}, one "
        "request a line, as a collector's file exporter writes it) or Phoenix spans ({\"context\": {\"trace_id\", "
        "\"span_id\"}, \"span_kind\", \"attributes\", ...}); got an object with keys user_input, response, "
        "retrieved_contexts"]
    numbers = _write(tmp_path, "numbers.json", "[1, 2]")
    assert _problems(numbers)[0].startswith(f"{numbers}:1: [0]: not an OpenTelemetry trace export")
    empty = _write(tmp_path, "empty.jsonl", "\n\n")
    assert _problems(empty) == [f"{empty}: file is empty"]
    no_spans = _write(tmp_path, "none.jsonl", '{"resourceSpans": []}\n')
    assert _problems(no_spans) == [f"{no_spans}:1: no spans in the file"]


def test_strict_json_and_structure_problems_are_located(tmp_path, one_trace):
    good = T.jsonl([T.otlp_json(one_trace)])
    twice = '{"resourceSpans": [], "resourceSpans": []}\n'
    not_list = '{"resourceSpans": {"scopeSpans": []}}\n'
    path = _write(tmp_path, "mixed.jsonl", good + twice + not_list)
    assert _problems(path) == [f"{path}:2: resourceSpans: duplicate key 'resourceSpans'",
                               f"{path}:3: resourceSpans: expected a list, got an object"]


def test_a_span_exported_twice_is_read_once_and_two_different_spans_with_one_id_are_refused(tmp_path, one_trace):
    request = T.otlp_json(one_trace)
    once = read("otel", _write(tmp_path, "once.jsonl", T.jsonl([request])))[0].case
    assert read("otel", _write(tmp_path, "retried.jsonl", T.jsonl([request, request])))[0].case == once
    changed = json.loads(json.dumps(request))
    span = changed["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["name"] = "renamed"
    path = _write(tmp_path, "clash.jsonl", T.jsonl([request, changed]))
    assert _problems(path) == [
        f"{path}:2: resourceSpans[0].scopeSpans[0].spans[0]: span {span['spanId']} of trace {span['traceId']} is "
        "also at line 1, resourceSpans[0].scopeSpans[0].spans[0], with other content"]


def test_a_trace_whose_spans_form_a_cycle_has_no_root(tmp_path, one_trace):
    request = T.otlp_json(one_trace)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root = next(s for s in spans if "parentSpanId" not in s)
    root["parentSpanId"] = spans[0]["spanId"] if spans[0] is not root else spans[1]["spanId"]
    path = _write(tmp_path, "cycle.jsonl", T.jsonl([request]))
    [problem] = _problems(path)
    assert problem.endswith("no root span: every span's parent is a span of the trace (a cycle); to leave such "
                            "traces out, read with incomplete=skip")


def test_a_phoenix_dataframe_written_without_its_span_ids(tmp_path, one_trace):
    rows = [{k: v for k, v in T.phoenix_dataframe_row(s).items() if k != "context.span_id"} for s in one_trace]
    path = _write(tmp_path, "df.jsonl", T.jsonl(rows))
    problems = _problems(path)
    assert len(problems) == len(rows)
    assert problems[0] == (f"{path}:1: context.span_id: field required; Phoenix's spans DataFrame has the span id as "
                           "its index too: write it with df.reset_index() or keep its context.span_id column")


def test_phoenix_spans_with_bad_times_and_attributes(tmp_path, one_trace):
    records = [T.phoenix_span(s) for s in one_trace]
    records[0]["start_time"] = "yesterday"
    records[1]["attributes"] = ["not", "an", "object"]
    path = _write(tmp_path, "spans.jsonl", T.jsonl(records))
    assert _problems(path) == [
        f"{path}:1: start_time: expected a time: ISO 8601 text (as Phoenix writes it) or epoch milliseconds (as "
        "pandas' to_json writes a datetime), got 'yesterday'",
        f"{path}:2: attributes: expected an object, got a list"]


# --- the checked-in example ----------------------------------------------------------------------------------


def _shape(case: dict) -> dict:
    """A case without what differs from one recording to the next (trace and span ids)."""
    return {"question": case["question"], "answers": case["answers"],
            "sources": [(s["text"], s["metadata"]["span_name"], s["metadata"]["rank"]) for s in case["sources"]],
            "retrievers": [(r["name"], r["documents"]) for r in case["metadata"]["retrievers"]],
            "from": [case["metadata"][k]["attribute"] for k in ("question_from", "answer_from")]}


def test_the_checked_in_example_is_what_the_generator_writes_now(tmp_path):
    """tests/fixtures/formats/otel_langchain_rag.jsonl against a fresh recording: the same cases, but for
    the ids and times each recording draws anew."""
    fixture = Path(__file__).parent / "fixtures" / "formats" / "otel_langchain_rag.jsonl"
    fresh = _write(tmp_path, "fresh.jsonl", T.example_file())
    checked_in = [_shape(r.case) for r in read("otel", str(fixture))]
    assert checked_in == [_shape(r.case) for r in read("otel", fresh)]
    assert [c["question"] for c in checked_in] == [run.question for run in T.EXAMPLE_RUNS]


# --- end to end: a trace file to figures, through the command line ----------------------------------------------


def test_score_a_trace_export_with_the_model_judge(runner, tmp_path, one_trace):
    """`citeaudit score --from otel FILE --judge model`: the claim citing the manual is supported, the claim
    citing the catalogue for the P7's weight is not."""
    from citeaudit.cli import main

    path = _otlp_file(tmp_path, one_trace)
    run = tmp_path / "run.json"
    result = runner.invoke(main, ["score", "--from", "otel", path, "--judge", "model", "--format", "json",
                                  "--out", str(run)])
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout)  # the note of where the run log went is on stderr
    [answer] = scored["answers"]
    r = _hex(next(s for s in one_trace if _kind(s) == "RETRIEVER").context.span_id)
    assert [(c["text"], c["citations"], c["judgment"]["label"]) for c in answer["claims"]] == [
        ("The continuous operating temperature limit of the P7 is 80 °C.", [f"{r}-1"], "full"),
        ("The P7 weighs 4.2 kg.", [f"{r}-2"], "none")]
    support = scored["summary"]["all"]["support"]
    assert (support["numerator"], support["denominator"]) == (1, 2)
    assert answer["system"] == T.SERVICE and scored["cases"][0]["origin"] == f"{path}:1"
    report = runner.invoke(main, ["report", str(run), "--format", "markdown"])
    assert report.exit_code == 0, report.output
    assert "| support S | 1/2 (50.0 %) |" in report.output


HOSTILE = (None, True, -1, 1.5e308, "", "x", "9" * 5000, [], {}, [{"key": "k"}], {"stringValue": {}})


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, path + (i,))


def _replaced(value, path, new):
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["otlp", "phoenix"])
def test_any_field_of_any_type_is_a_case_or_a_located_problem_never_a_traceback(tmp_path, shape):
    """Every field of a small trace (a chain, a retriever, a model call) replaced in turn by each hostile
    value: read, or refused with problems that each name the file and a line."""
    spans = T.manual_spans("Q?", [[{"id": "d1", "content": T.MANUAL_V3, "score": 0.5, "metadata": {"p": 1}}]],
                           "The limit is 80 °C [1].")
    records = [T.otlp_json(spans)] if shape == "otlp" else [T.phoenix_span(s) for s in spans]
    path = tmp_path / "hostile.jsonl"
    outcomes = {"read": 0, "refused": 0}
    for r, record in enumerate(records):
        for where in list(_paths(record))[1:]:
            for new in HOSTILE:
                changed = [*records[:r], _replaced(record, where, new), *records[r + 1:]]
                path.write_text(T.jsonl(changed), encoding="utf-8")
                try:
                    read("otel", str(path))
                    outcomes["read"] += 1
                except InputError as err:
                    assert err.problems and all(p.file == str(path) and p.line for p in err.problems), where
                    outcomes["refused"] += 1
    assert outcomes["read"] > 0 and outcomes["refused"] > 0


def test_the_command_line_says_how_many_traces_it_left_out(runner, tmp_path):
    from citeaudit.cli import main

    path = _otlp_file(tmp_path, T.langchain_spans([ONE, T.Run("Hello?", [], "Hello!")]))
    refused = runner.invoke(main, ["validate", "--from", "otel", path])
    assert refused.exit_code == 2 and "no retriever span under root span 'RunnableSequence'" in refused.output
    skipped = runner.invoke(main, ["validate", "--from", "otel", path, "--option", "incomplete=skip"])
    assert skipped.exit_code == 0, skipped.output
    assert skipped.stdout == "ok: 1 case(s), 1 answer(s)\n"
    assert f"citeaudit: warning: {path}: 1 trace(s) left out (incomplete=skip); the first, at line 2:" in skipped.stderr
