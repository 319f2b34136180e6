"""OpenTelemetry traces of RAG applications: OTLP JSON, as an OpenTelemetry collector's `file` exporter
writes it (one `ExportTraceServiceRequest` a line: `resourceSpans[].scopeSpans[].spans[]`), or Phoenix's
span exports (its span JSON lines, its REST API's pages of spans, its spans DataFrame written as JSON
records), read with the OpenInference and the OpenTelemetry GenAI semantic conventions.

Each trace becomes a case, or each span that option `root` picks. The question is the root span's input,
the sources are the documents its retriever spans returned, numbered in order across the retrievers by
their start times (the ranking), and the answer is the output of the last LLM span to end, given as
text: its citation markers are read as every reader's answers are. A marker `[n]` names the n-th
retrieved document (`cite=order`, the default: LangChain's instrumentation records no document ids, and
RAG prompts number their contexts), or a document's own id (`cite=id`). docs/readers.md lists every
attribute read.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path as FsPath
from typing import Any

from citeaudit.errors import InputError, Problem, SkippedRecordsWarning, format_path
from citeaudit.files.readers.common import (Fields, JsonDocument, Reader, ReadRecord, kind_of, option_choice, option_text,
                                            raise_problems, read_json_lines)
from citeaudit.jsonio import StrictJson, read_text

OPTIONS = {
    "cite": "what a marker names: order (default: [n] is the n-th retrieved document of the case, counted across "
            "its retriever spans by start time) or id (a document's own id, document.id or the GenAI id)",
    "root": "the span each case starts from: an OpenInference span kind (CHAIN, AGENT, ...) or a span name "
            "(default: the trace's root span)",
    "answer": "where the answer is read: llm (default: the output of the last LLM span to end, else the root's "
              "output) or root (the root span's output)",
    "question_key": "the field of a JSON input (input.value) that holds the question (default: question, query "
                    "or input, the first present)",
    "system": "the system name of every answer (default: the root's service.name, else the file name)",
    "incomplete": "a trace that gives no case (no retriever span, no retrieved document, no question or no "
                  "answer): error (default) or skip (left out, and counted in a warning)",
}
CITE = ("order", "id")
ANSWER = ("llm", "root")
INCOMPLETE = ("error", "skip")
SPAN_KINDS = ("CHAIN", "LLM", "RETRIEVER", "EMBEDDING", "AGENT", "TOOL", "RERANKER", "GUARDRAIL", "EVALUATOR",
              "PROMPT", "DECISION", "UNKNOWN")  # OpenInference's; any other root= value is a span name
# gen_ai.operation.name values of a model call (OpenTelemetry GenAI conventions)
GENAI_LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
QUESTION_KEYS = ("question", "query", "input")  # a JSON input's question, the first of these present
ANSWER_KEYS = ("answer", "output", "result", "text")  # a JSON output's answer, likewise
JSON_MIME = "application/json"

_NOT_THIS_FORMAT = ("not an OpenTelemetry trace export: expected OTLP JSON ({\"resourceSpans\": [...]}, one request "
                    "a line, as a collector's file exporter writes it) or Phoenix spans ({\"context\": {\"trace_id\", "
                    "\"span_id\"}, \"span_kind\", \"attributes\", ...})")
_ABSENT: Any = object()
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_INTEGER = re.compile(r"-?[0-9]+")
_DIGITS = 40  # far more than a 64-bit integer's 20: a longer one is no OTLP integer

Path = tuple[str | int, ...]
LineOf = Callable[..., "int | None"]


def _clip(value: Any) -> str:
    """A value as a message shows it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- attributes, whatever their layout ----------------------------------------------------------------


class Node:
    """Span attributes as one tree, whatever the layout they came in: OTLP's flat dotted keys
    (`retrieval.documents.0.document.content`), Phoenix's nested objects and lists, or a DataFrame's
    half-flattened columns. Each value keeps the path of the field it was read from, for messages."""

    __slots__ = ("key", "value", "path", "children")

    def __init__(self, key: str = ""):
        self.key = key  # the dotted attribute key, "retrieval.documents.0.document.content"
        self.value: Any = _ABSENT
        self.path: Path = ()
        self.children: dict[str, Node] = {}

    def add(self, parts: list[str], value: Any, path: Path, locate: bool = True) -> None:
        """Add `value` at the dotted `parts` under this node. Objects and lists of objects are walked
        (their fields located by `path` when `locate`); a null is no value, as Phoenix reads it."""
        if value is None:
            return
        if isinstance(value, dict):
            for key, item in value.items():
                self.add(parts + str(key).split("."), item, path + (key,) if locate else path, locate)
            return
        if isinstance(value, list) and any(isinstance(item, dict) for item in value):
            for i, item in enumerate(value):
                self.add(parts + [str(i)], item, path + (i,) if locate else path, locate)
            return
        node = self
        for part in parts:
            node = node.children.setdefault(part, Node(f"{node.key}.{part}" if node.key else part))
        if node.value is _ABSENT:  # the first of two values at one key is kept
            node.value, node.path = value, path

    def get(self, dotted: str) -> Node | None:
        node: Node | None = self
        for part in dotted.split("."):
            node = node.children.get(part) if node is not None else None
        return node

    def value_at(self, dotted: str) -> Any:
        node = self.get(dotted)
        return _ABSENT if node is None else node.value

    def indexed(self) -> list[Node]:
        """The items of a list held as numbered children (`documents.0`, `documents.1`), in order."""
        return [self.children[k] for k in sorted((k for k in self.children if k.isdigit()), key=int)]

    def plain(self) -> Any:
        """The subtree as JSON values (metadata, kept as it is)."""
        if not self.children:
            return None if self.value is _ABSENT else self.value
        if self.value is not _ABSENT:
            return self.value
        return {key: child.plain() for key, child in self.children.items()}


def _node(value: Any, key: str, path: Path) -> Node:
    """A parsed JSON value as a tree under `key`, every field located at `path` (the text it came from)."""
    root = Node()
    root.add(key.split("."), value, path, locate=False)
    return root.get(key) or Node(key)


# --- one span ---------------------------------------------------------------------------------------------


@dataclass
class Span:
    """One span of the file, read and located."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int  # nanoseconds since 1970
    end: int | None
    kind: str | None  # OpenInference span kind, upper case
    attributes: Node
    events: list[tuple[str, Node]]
    service: str | None  # the resource's service.name (OTLP)
    fields: Fields = field(repr=False)
    order: int = 0  # place in the file
    shape: str = "otlp"  # otlp or phoenix
    raw: Any = field(default=None, repr=False)

    @property
    def operation(self) -> str | None:
        op = self.attributes.value_at("gen_ai.operation.name")
        return op if isinstance(op, str) else None

    @property
    def is_retriever(self) -> bool:
        return self.kind == "RETRIEVER" or self.operation == "retrieval"

    @property
    def is_llm(self) -> bool:
        return self.kind == "LLM" or self.operation in GENAI_LLM_OPERATIONS

    def problem(self, path: Path, message: str) -> None:
        self.fields.problem(path, message)


def _kind_name(value: Any) -> str:
    # OTLP tells intValue from doubleValue, so its messages do too
    return "an integer" if isinstance(value, int) and not isinstance(value, bool) else kind_of(value)


def _key(value: dict[str, Any], camel: str) -> str:
    """OTLP's field name as the record spells it: lowerCamelCase (OTLP JSON), or the proto's snake_case
    (protobuf's JSON parsers accept it, and Phoenix's OTLP endpoint writes it)."""
    if camel in value:
        return camel
    snake = re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), camel)
    return snake if snake in value else camel


def _id(f: Fields, path: Path, size: int, what: str, required: bool = True) -> str | None:
    """A trace or span id as lowercase hex: OTLP JSON writes it in hex, protobuf's own JSON mapping in
    base64; the byte length tells them apart."""
    value = f.get(path, None)
    if value is None or value == "":
        if required:
            f.problem(path, "field required" if value is None else f"empty {what}")
        return None
    if not isinstance(value, str):
        f.problem(path, f"expected a {what} as text, got {_kind_name(value)}")
        return None
    text = value.strip()
    if len(text) == 2 * size and _HEX.fullmatch(text):
        hex_id = text.lower()
    elif len(text) == 4 * ((size + 2) // 3) and _BASE64.fullmatch(text):
        try:
            hex_id = base64.b64decode(text, validate=True).hex()
        except (binascii.Error, ValueError):
            hex_id = ""
    else:
        hex_id = ""
    if len(hex_id) != 2 * size:
        f.problem(path, f"expected a {what}: {2 * size} hex digits (OTLP JSON), or {size} bytes in base64 "
                        f"(protobuf's JSON mapping), got {_clip(value)}")
        return None
    if not hex_id.strip("0"):
        f.problem(path, f"an all-zero {what} is invalid")
        return None
    return hex_id


def _nanos(f: Fields, path: Path, required: bool) -> int | None:
    value = f.get(path, None)
    if value is None:
        if required:
            f.problem(path, "field required")
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= _DIGITS:
        return int(value)
    f.problem(path, f"expected nanoseconds since 1970 (an integer, or its decimal text), got {_clip(value)}")
    return None


def _any_value(f: Fields, path: Path, value: Any) -> Any:
    """An OTLP AnyValue decoded: a text, boolean, integer, number, list or object; _ABSENT when empty or
    holding only fields unknown here (ignored, as OTLP/JSON receivers must)."""
    if not isinstance(value, dict):
        f.problem(path, f"expected an AnyValue object ({{\"stringValue\": ...}}), got {_kind_name(value)}")
        return _ABSENT
    known = [k for k in value if _camel(k) in _ANY_VALUE and value[k] is not None]  # a null field is unset
    if not known:
        return _ABSENT
    if len(known) > 1:
        f.problem(path, f"an AnyValue holds one value, got {', '.join(known)}")
        return _ABSENT
    key = known[0]
    return _ANY_VALUE[_camel(key)](f, path + (key,), value[key])


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def _string(f: Fields, path: Path, v: Any) -> Any:
    if isinstance(v, str):
        return v
    f.problem(path, f"expected a text, got {_kind_name(v)}")
    return _ABSENT


def _bool(f: Fields, path: Path, v: Any) -> Any:
    if isinstance(v, bool):
        return v
    f.problem(path, f"expected true or false, got {_kind_name(v)}")
    return _ABSENT


def _int(f: Fields, path: Path, v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and _INTEGER.fullmatch(v) and len(v) <= _DIGITS:  # int64 is written as its decimal text
        return int(v)
    f.problem(path, f"expected an integer (or its decimal text), got {_clip(v)}")
    return _ABSENT


NOT_FINITE = ("NaN", "Infinity", "-Infinity")  # as protobuf's JSON writes them; kept as text: JSON has no NaN


def _double(f: Fields, path: Path, v: Any) -> Any:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        if v in NOT_FINITE:
            return v
        try:
            number = float(v)  # a number written as text
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return number
    f.problem(path, f"expected a number, got {_clip(v)}")
    return _ABSENT


def _values(f: Fields, path: Path, v: Any) -> Any:
    """The `values` list of an arrayValue or a kvlistValue, or _ABSENT (the problem noted)."""
    if not isinstance(v, dict):
        f.problem(path, f"expected an object with 'values', got {_kind_name(v)}")
        return _ABSENT
    items = v.get("values", [])
    if not isinstance(items, list):
        f.problem(path + ("values",), f"expected a list, got {_kind_name(items)}")
        return _ABSENT
    return items


def _array(f: Fields, path: Path, v: Any) -> Any:
    items = _values(f, path, v)
    if items is _ABSENT:
        return _ABSENT
    out = [_any_value(f, path + ("values", i), item) for i, item in enumerate(items)]
    return [None if item is _ABSENT else item for item in out]


def _kvlist(f: Fields, path: Path, v: Any) -> Any:
    items = _values(f, path, v)
    if items is _ABSENT:
        return _ABSENT
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        key, item = _key_value(f, path + ("values", i), kv)
        if key is not None and item is not _ABSENT:
            out[key] = item
    return out


def _bytes(f: Fields, path: Path, v: Any) -> Any:
    return _string(f, path, v)  # kept as its base64 text


_ANY_VALUE: dict[str, Callable[[Fields, Path, Any], Any]] = {
    "stringValue": _string, "boolValue": _bool, "intValue": _int, "doubleValue": _double,
    "arrayValue": _array, "kvlistValue": _kvlist, "bytesValue": _bytes}


def _key_value(f: Fields, path: Path, kv: Any) -> tuple[str | None, Any]:
    if not isinstance(kv, dict):
        f.problem(path, f"expected an attribute ({{\"key\", \"value\"}}), got {_kind_name(kv)}")
        return None, _ABSENT
    key = kv.get("key")
    if not isinstance(key, str) or not key:
        f.problem(path + ("key",), "field required" if key is None else f"expected an attribute key, got {_clip(key)}")
        return None, _ABSENT
    return key, _any_value(f, path + ("value",), kv.get("value", {}))


def _otlp_attributes(f: Fields, path: Path) -> Node:
    node = Node()
    seen: dict[str, int] = {}
    for i, kv in enumerate(f.items(path, required=False) or []):
        key, value = _key_value(f, path + (i,), kv)
        if key is None:
            continue
        if key in seen:
            f.problem(path + (i, "key"), f"attribute '{key}' is given twice (also {path[-1]}[{seen[key]}])")
            continue
        seen[key] = i
        if value is not _ABSENT:
            node.add(key.split("."), value, path + (i, "value"), locate=False)
    return node


def _otlp_span(f: Fields, service: str | None, order: int) -> Span | None:
    v = f.value
    trace_id = _id(f, (_key(v, "traceId"),), 16, "trace id")
    span_id = _id(f, (_key(v, "spanId"),), 8, "span id")
    parent_id = _id(f, (_key(v, "parentSpanId"),), 8, "span id", required=False)
    name = f.text((_key(v, "name"),), required=False) or ""
    start = _nanos(f, (_key(v, "startTimeUnixNano"),), required=True)
    end = _nanos(f, (_key(v, "endTimeUnixNano"),), required=False)
    attributes = _otlp_attributes(f, (_key(v, "attributes"),))
    events = []
    for e, event in enumerate(f.items((_key(v, "events"),), required=False) or []):
        path = (_key(v, "events"), e)
        if f.is_object(path):
            events.append((f.text(path + (_key(event, "name"),), required=False) or "",
                           _otlp_attributes(f, path + (_key(event, "attributes"),))))
    kind = _oi_kind(f, attributes)
    if trace_id is None or span_id is None or start is None:
        return None
    return Span(trace_id, span_id, parent_id, name, start, end, kind, attributes, events, service, f, order,
                "otlp", v)


def _oi_kind(f: Fields, attributes: Node, given: Any = _ABSENT) -> str | None:
    """The OpenInference span kind: Phoenix's span_kind, else the openinference.span.kind attribute."""
    if given is not _ABSENT and given is not None:
        if isinstance(given, str):
            return given.strip().upper()
        f.problem(("span_kind",), f"expected a text, got {_kind_name(given)}")
        return None
    node = attributes.get("openinference.span.kind")
    if node is None or node.value is _ABSENT:
        return None
    if not isinstance(node.value, str):
        f.problem(node.path, f"openinference.span.kind: expected a text, got {_kind_name(node.value)}")
        return None
    return node.value.strip().upper()


def _phoenix_time(f: Fields, path: Path, required: bool) -> int | None:
    value = f.get(path, None)
    if value is None:
        if required:
            f.problem(path, "field required")
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e15:
        return int(value * 1_000_000)  # epoch milliseconds: pandas' to_json writes a datetime column so
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
            return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    f.problem(path, f"expected a time: ISO 8601 text (as Phoenix writes it) or epoch milliseconds (as pandas' "
                    f"to_json writes a datetime), got {_clip(value)}")
    return None


def _phoenix_id(f: Fields, path: Path, required: bool, hint: str = "") -> str | None:
    value = f.get(path, None)
    if value is None or value == "":
        if required:
            f.problem(path, ("field required" if value is None else "empty id") + hint)
        return None
    if not isinstance(value, str):
        f.problem(path, f"expected an id as text, got {_kind_name(value)}")
        return None
    return value.strip().lower()


_DATAFRAME_HINT = ("; Phoenix's spans DataFrame has the span id as its index too: write it with "
                   "df.reset_index() or keep its context.span_id column")


def _phoenix_span(f: Fields, order: int) -> Span | None:
    v = f.value
    if "context" in v:
        context_ok = f.is_object(("context",))
        trace_id = _phoenix_id(f, ("context", "trace_id"), True) if context_ok else None
        span_id = _phoenix_id(f, ("context", "span_id"), True) if context_ok else None
    else:  # a DataFrame row: context.trace_id and context.span_id columns
        trace_id = _phoenix_id(f, ("context.trace_id",), True)
        span_id = _phoenix_id(f, ("context.span_id",), True, _DATAFRAME_HINT)
    parent_id = _phoenix_id(f, ("parent_id",), False)
    name = f.text(("name",), required=False) or ""
    start = _phoenix_time(f, ("start_time",), required=True)
    end = _phoenix_time(f, ("end_time",), required=False)
    attributes = Node()
    if v.get("attributes") is not None:
        if isinstance(v["attributes"], dict):
            attributes.add([], v["attributes"], ("attributes",))
        else:
            f.problem(("attributes",), f"expected an object, got {_kind_name(v['attributes'])}")
    for key, value in v.items():  # a DataFrame's attribute columns
        if key.startswith("attributes."):
            attributes.add(key[len("attributes."):].split("."), value, (key,))
    events = []
    for e, event in enumerate(_phoenix_events(f)):
        path = ("events", e)
        if f.is_object(path):
            node = Node()
            if isinstance(event.get("attributes"), dict):
                node.add([], event["attributes"], path + ("attributes",))
            events.append((event.get("name") if isinstance(event.get("name"), str) else "", node))
    kind = _oi_kind(f, attributes, v.get("span_kind", _ABSENT))
    if trace_id is None or span_id is None or start is None:
        return None
    return Span(trace_id, span_id, parent_id, name, start, end, kind, attributes, events, None, f, order,
                "phoenix", v)


def _phoenix_events(f: Fields) -> list[Any]:
    events = f.get(("events",), None)
    if isinstance(events, str):  # a DataFrame cell may hold the list as JSON text
        try:
            events = json.loads(events)
        except ValueError:
            events = None
    return events if isinstance(events, list) else []


# --- the file: every span in it ---------------------------------------------------------------------------


@dataclass
class _Found:
    spans: list[Span] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    strangers: list[Problem] = field(default_factory=list)  # records that are neither OTLP nor Phoenix spans
    order: int = 0


def _is_phoenix_span(value: dict[str, Any]) -> bool:
    return isinstance(value.get("context"), dict) or "context.span_id" in value or "context.trace_id" in value


def _is_otlp_span(value: dict[str, Any]) -> bool:
    return any(k in value for k in ("spanId", "span_id")) and any(k in value for k in ("traceId", "trace_id"))


def _walk(path: str, value: Any, prefix: Path, line_of: Callable[[Path], LineOf], found: _Found) -> None:
    """Every span in `value` (an OTLP request, a Phoenix span, a page or list of them), located."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _walk(path, item, prefix + (i,), line_of, found)
        return
    if isinstance(value, dict) and any(k in value for k in ("resourceSpans", "resource_spans")):
        _request(path, value, prefix, line_of, found)
        return
    if isinstance(value, dict) and isinstance(value.get("data"), list):  # a page of Phoenix's REST API
        for i, item in enumerate(value["data"]):
            _walk(path, item, prefix + ("data", i), line_of, found)
        return
    if isinstance(value, dict) and (_is_phoenix_span(value) or _is_otlp_span(value)):
        f = Fields(path, value, prefix, line_of(prefix))
        found.order += 1
        span = _phoenix_span(f, found.order) if _is_phoenix_span(value) else _otlp_span(f, None, found.order)
        found.problems += f.problems
        if span is not None and not f.problems:
            found.spans.append(span)
        return
    keys = ", ".join(list(value)[:6]) if isinstance(value, dict) else ""
    got = f"an object with keys {keys}" if keys else _kind_name(value)
    found.strangers.append(Problem(path, line_of(prefix)(()), format_path(prefix), f"{_NOT_THIS_FORMAT}; got {got}"))


def _request(path: str, value: dict[str, Any], prefix: Path, line_of: Callable[[Path], LineOf],
             found: _Found) -> None:
    """One ExportTraceServiceRequest: resourceSpans[].scopeSpans[].spans[]."""
    f = Fields(path, value, prefix, line_of(prefix))
    rs_key = _key(value, "resourceSpans")
    for r, resource_spans in enumerate(f.items((rs_key,)) or []):
        rp: Path = (rs_key, r)
        if not f.is_object(rp):
            continue
        service = _service(f, rp + (_key(resource_spans, "resource"),))
        ss_key = _key(resource_spans, "scopeSpans")
        for s, scope_spans in enumerate(f.items(rp + (ss_key,), required=False) or []):
            sp = rp + (ss_key, s)
            if not f.is_object(sp):
                continue
            for k, _ in enumerate(f.items(sp + ("spans",), required=False) or []):
                kp = sp + ("spans", k)
                if not f.is_object(kp):
                    continue
                span_f = Fields(path, f.get(kp), prefix + kp, line_of(prefix + kp))
                found.order += 1
                span = _otlp_span(span_f, service, found.order)
                found.problems += span_f.problems
                if span is not None and not span_f.problems:
                    found.spans.append(span)
    found.problems += f.problems


def _service(f: Fields, path: Path) -> str | None:
    resource = f.get(path, None)
    if not isinstance(resource, dict):
        return None
    name = _otlp_attributes(f, path + (_key(resource, "attributes"),)).value_at("service.name")
    return name if isinstance(name, str) and name and not name.startswith("unknown_service") else None


def _spans(path: str) -> list[Span]:
    """Every span in the file, read and located; every malformed span raised at once."""
    text = read_text(path)
    if not text.strip():
        raise InputError([Problem(path, None, "", "file is empty")])
    found = _Found()
    if _json_lines(text):
        for got in read_json_lines(path):
            if isinstance(got, Problem):
                found.problems.append(_cut_short(got, text))
                continue
            n, value, _ = got
            _walk(path, value, (), lambda prefix, n=n: (lambda p=(): n), found)
    else:
        try:
            doc = JsonDocument(path)
        except InputError as err:
            raise InputError([_cut_short(p, text) for p in err.problems]) from None
        found.problems += doc.problems_in((), doc.data)
        if not found.problems:
            _walk(path, doc.data, (), doc.line_of, found)
    if not found.spans and not found.problems:
        raise InputError(found.strangers[:1] or [Problem(path, 1, "", "no spans in the file")])
    raise_problems(found.problems + found.strangers)
    return found.spans


def _json_lines(text: str) -> bool:
    """JSON lines, one request (or span) a line, when the first non-blank line is a JSON value of its own;
    else one JSON document (an indented request, a list of spans, a page of them)."""
    first = next(line for line in text.split("\n") if line.strip())
    try:
        StrictJson().decode(first.removesuffix("\r"))
    except (ValueError, RecursionError):
        return False
    return True


def _cut_short(problem: Problem, text: str) -> Problem:
    """A malformed last line in a file that does not end with a newline: an export cut short."""
    lines = text.rstrip("\n").split("\n")
    if problem.line == len(lines) and not text.endswith("\n") and problem.message.startswith("malformed JSON"):
        return Problem(problem.file, problem.line, problem.path,
                       problem.message + "; the file ends inside this line: was the export cut short?")
    return problem


# --- traces: cases -------------------------------------------------------------------------------------


@dataclass
class _Options:
    cite: str
    root: str | None
    answer: str
    question_key: str | None
    system: str | None
    incomplete: str
    stem: str


@dataclass(frozen=True)
class _Incomplete:
    """Why a trace cannot become a case: no retriever span, no retrieved document, no question or no answer."""

    message: str


def read(path: str, cite: str = "order", root: str | None = None, answer: str = "llm",
         question_key: str | None = None, system: str | None = None,
         incomplete: str = "error") -> list[ReadRecord]:
    opts = _Options(cite=option_choice(path, "cite", cite, CITE), root=option_text(path, "root", root),
                    answer=option_choice(path, "answer", answer, ANSWER),
                    question_key=option_text(path, "question_key", question_key),
                    system=option_text(path, "system", system),
                    incomplete=option_choice(path, "incomplete", incomplete, INCOMPLETE), stem=FsPath(path).stem)
    spans = _spans(path)
    problems: list[Problem] = []
    traces = _traces(spans, problems)
    records: list[tuple[tuple[int, int], ReadRecord]] = []
    skipped: list[Problem] = []
    for trace_id, trace in traces.items():
        roots = _roots(trace, opts.root)
        if not roots:
            first = min(trace.values(), key=lambda s: s.order)
            message = (f"trace {trace_id}: no span of kind or name '{opts.root}' (root=)" if opts.root else
                       f"trace {trace_id}: no root span: every span's parent is a span of the trace (a cycle)")
            _left_out(first, message, opts, problems, skipped)
            continue
        for top in roots:
            case_id = trace_id if len(roots) == 1 else f"{trace_id}-{top.span_id}"
            case = _case(case_id, top, trace, opts)
            found = [p for span in trace.values() for p in span.fields.problems]
            for span in trace.values():
                span.fields.problems = []
            problems += found
            if found:
                continue
            if isinstance(case, _Incomplete):
                _left_out(top, case.message, opts, problems, skipped)
            elif case is not None:
                records.append(((top.fields.line or 0, top.order), ReadRecord(case, top.fields.line, top.fields.where)))
    raise_problems(problems)
    if skipped:
        first = skipped[0]
        warnings.warn(SkippedRecordsWarning(
            f"{path}: {len(skipped)} trace(s) left out (incomplete=skip); the first, at line {first.line}: "
            f"{first.message}"), stacklevel=2)
    if not records and skipped:
        raise InputError([Problem(path, None, "", f"every trace was left out (incomplete=skip): {len(skipped)} "
                                                  f"trace(s), none with retrieved documents, a question and an "
                                                  f"answer")])
    return [record for _, record in sorted(records, key=lambda r: r[0])]


def _left_out(span: Span, message: str, opts: _Options, problems: list[Problem], skipped: list[Problem]) -> None:
    problem = Problem(span.fields.file, span.fields.line, span.fields.where, message)
    if opts.incomplete == "skip":
        skipped.append(problem)
    else:
        problems.append(Problem(problem.file, problem.line, problem.path,
                                message + "; to leave such traces out, read with incomplete=skip"))


def _traces(spans: list[Span], problems: list[Problem]) -> dict[str, dict[str, Span]]:
    """The spans of each trace, by span id, traces in the order their first span appears. A span given
    twice (an exporter's retry) is read once; twice with different content is a problem."""
    traces: dict[str, dict[str, Span]] = {}
    for span in sorted(spans, key=lambda s: s.order):
        trace = traces.setdefault(span.trace_id, {})
        first = trace.get(span.span_id)
        if first is None:
            trace[span.span_id] = span
        elif first.raw != span.raw:
            where = f"line {first.fields.line}" + (f", {first.fields.where}" if first.fields.where else "")
            problems.append(Problem(span.fields.file, span.fields.line, span.fields.where,
                                    f"span {span.span_id} of trace {span.trace_id} is also at {where}, with "
                                    f"other content"))
    return traces


def _children(trace: dict[str, Span]) -> dict[str, list[Span]]:
    children: dict[str, list[Span]] = {}
    for span in trace.values():
        if span.parent_id is not None and span.parent_id in trace and span.parent_id != span.span_id:
            children.setdefault(span.parent_id, []).append(span)
    for items in children.values():
        items.sort(key=_started)
    return children


def _started(span: Span) -> tuple[int, int]:
    return span.start, span.order


def _ended(span: Span) -> tuple[int, int, int]:
    return span.end if span.end is not None else span.start, span.start, span.order


def _roots(trace: dict[str, Span], root: str | None) -> list[Span]:
    """The spans cases start from: the trace's top spans (no parent, or a parent the export lacks, as
    Phoenix reads an orphan), or with `root`, the outermost spans of that kind or name."""
    tops = sorted((s for s in trace.values() if s.parent_id is None or s.parent_id not in trace
                   or s.parent_id == s.span_id), key=_started)
    if root is None:
        return tops
    by_kind = root.upper() in SPAN_KINDS
    children = _children(trace)
    found, stack, seen = [], list(reversed(tops)), set()
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        if (span.kind == root.upper()) if by_kind else (span.name == root):
            found.append(span)
            continue  # an outermost match: the spans under it belong to its case
        stack.extend(reversed(children.get(span.span_id, [])))
    return sorted(found, key=_started)


def _subtree(top: Span, trace: dict[str, Span]) -> list[Span]:
    children = _children(trace)
    out, stack, seen = [], [top], set()
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        out.append(span)
        stack.extend(reversed(children.get(span.span_id, [])))
    return out


@dataclass
class _Document:
    span: Span
    rank: int  # 1 = the retriever's first
    text: str
    own_id: str | None
    node: Node
    title: str | None
    metadata: dict[str, Any]


def _case(case_id: str, top: Span, trace: dict[str, Span],
          opts: _Options) -> dict[str, Any] | _Incomplete | None:
    """The case of the spans under `top`, why there is none, or None after a problem (noted on the spans).
    A trace without a retriever span is no RAG trace: left out (or refused) before anything else is read."""
    spans = _subtree(top, trace)
    name = f"root span '{top.name}'" if top.name else "the root span"
    retrievers = sorted((s for s in spans if s.is_retriever), key=_started)
    if not retrievers:
        return _Incomplete(f"trace {top.trace_id}: no retriever span under {name} (openinference.span.kind "
                          f"RETRIEVER, or gen_ai.operation.name retrieval): a case needs retrieved documents")
    documents = [d for r in retrievers for d in _documents(r)]
    question, question_from = _question(top, retrievers, opts.question_key)
    answer, answer_from = _answer(top, sorted((s for s in spans if s.is_llm), key=_ended), opts.answer)
    if _failed(spans):
        return None
    if not documents:
        return _Incomplete(f"trace {top.trace_id}: the retriever spans under {name} returned no document "
                          f"(retrieval.documents, gen_ai.retrieval.documents): a case needs at least one source")
    if question is None:
        return _Incomplete(f"trace {top.trace_id}: no question: {name} has no input.value or gen_ai.input.messages, "
                          f"and no retriever span records its query")
    if answer is None:
        where = name if opts.answer == "root" else f"no LLM span under {name}, nor {name},"
        return _Incomplete(f"trace {top.trace_id}: no answer: {where} has an output (llm.output_messages, "
                          f"gen_ai.output.messages, gen_ai.completion or output.value)")
    sources = _sources(documents, opts.cite)
    if sources is None:
        return None
    metadata: dict[str, Any] = {
        "from": "otel", "format": top.shape, "trace_id": top.trace_id,
        "root": {"span_id": top.span_id, "name": top.name, "kind": top.kind},
        "markers": opts.cite,
        "question_from": question_from, "answer_from": answer_from,
        "retrievers": [{"span_id": r.span_id, "name": r.name,
                        "documents": sum(1 for d in documents if d.span is r)} for r in retrievers],
    }
    if top.service:
        metadata["service"] = top.service
    return {
        "id": case_id,
        "question": question,
        "sources": sources,
        "ranking": [s["id"] for s in sources],
        "answers": [{"id": "answer", "system": opts.system or top.service or opts.stem, "text": answer}],
        "metadata": metadata,
    }


def _failed(spans: list[Span]) -> bool:
    return any(span.fields.problems for span in spans)


def _sources(documents: list[_Document], cite: str) -> list[dict[str, Any]] | None:
    """The case's sources in retrieved order. cite=order: named by span id and rank (stable, and never a
    number, so that `[n]` is read as the n-th); cite=id: by the documents' own ids."""
    sources: list[dict[str, Any]] = []
    by_id: dict[str, _Document] = {}
    ok = True
    for d in documents:
        metadata = {"span_id": d.span.span_id, "span_name": d.span.name, "rank": d.rank, **d.metadata}
        if d.own_id is not None:
            metadata["document_id"] = d.own_id
        if cite == "order":
            source_id = f"{d.span.span_id}-{d.rank}"
        else:
            if d.own_id is None:
                d.span.problem(_where(d.node), f"{d.node.key}: no document id: cite=id names sources by their ids; "
                                            f"read the documents by position with cite=order")
                ok = False
                continue
            source_id = d.own_id
            first = by_id.get(source_id)
            if first is not None:
                if first.text != d.text:
                    d.span.problem(_where(d.node), f"{d.node.key}: document id '{source_id}' is also the id of "
                                                f"document {first.rank} of span {first.span.span_id}, with other "
                                                f"text; read the documents by position with cite=order")
                    ok = False
                continue  # the same document retrieved twice: one source, at its first rank
            by_id[source_id] = d
        source: dict[str, Any] = {"id": source_id, "text": d.text, "metadata": metadata}
        if d.title:
            source["title"] = d.title
        sources.append(source)
    return sources if ok else None


# --- what the spans say -------------------------------------------------------------------------------


def _text(span: Span, node: Node | None, *, source: bool = False) -> str | None:
    """A text attribute, or None when absent; a problem when it is of another type (or, for a source,
    empty)."""
    if node is None or node.value is _ABSENT:
        return None
    if not isinstance(node.value, str):
        span.problem(node.path, f"{node.key}: expected a text, got {_kind_name(node.value)}")
        return None
    if source and not node.value.strip():
        span.problem(node.path, f"{node.key}: empty text: a source needs text to be judged against")
        return None
    return node.value


def _structured(span: Span, node: Node | None) -> Node | None:
    """An attribute the conventions define as structured, given structured or as JSON text."""
    if node is None:
        return None
    if not isinstance(node.value, str):
        return node if node.children or node.value is not _ABSENT else None
    try:
        value = json.loads(node.value)
    except ValueError as err:
        span.problem(node.path, f"{node.key}: expected JSON, got text that is not ({err.msg})")
        return None
    return _node(value, node.key, node.path)


def _json_field(node: Node, keys: tuple[str, ...], chosen: str | None) -> str | None:
    """The text a JSON input or output holds: the text itself, or the first of `keys` (or `chosen`)."""
    try:
        value = json.loads(node.value)
    except ValueError:
        return node.value  # not JSON after all: the text as it is
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ((chosen,) if chosen else keys):
            if isinstance(value.get(key), str):
                return value[key]
    return None


def _question(top: Span, retrievers: list[Span], question_key: str | None) -> tuple[str | None, dict[str, Any]]:
    """The root's input.value (a JSON input's question field), else its last user message in
    gen_ai.input.messages, else the query of the first retriever span."""
    value = top.attributes.get("input.value")
    if (_text(top, value) or "").strip():
        assert value is not None
        if top.attributes.value_at("input.mime_type") == JSON_MIME:
            question = _json_field(value, QUESTION_KEYS, question_key)
            if question is None:
                keys = question_key or f"{', '.join(QUESTION_KEYS[:-1])} or {QUESTION_KEYS[-1]}"
                top.problem(value.path, f"input.value: a JSON input without a text field {keys}: name the field "
                                        f"that holds the question with question_key=KEY")
                return None, {}
        else:
            question = value.value
        return question, {"span_id": top.span_id, "attribute": "input.value"}
    message = _last_message(top, _structured(top, top.attributes.get("gen_ai.input.messages")), "user")
    if message is not None:
        return message, {"span_id": top.span_id, "attribute": "gen_ai.input.messages"}
    for r in retrievers:
        for key in ("gen_ai.retrieval.query.text", "input.value"):
            node = r.attributes.get(key)
            if key == "input.value" and r.attributes.value_at("input.mime_type") == JSON_MIME:
                continue
            text = _text(r, node)
            if text is not None and text.strip():
                return text, {"span_id": r.span_id, "attribute": key}
    return None, {}


def _parts_text(span: Span, parts: Node | None) -> str | None:
    """The text parts of a GenAI message, joined."""
    if parts is None:
        return None
    texts = []
    for part in parts.indexed():
        if part.value_at("type") == "text":
            text = _text(span, part.get("content"))
            if text is not None:
                texts.append(text)
    return "\n".join(texts) if texts else None


def _last_message(span: Span, messages: Node | None, role: str) -> str | None:
    if messages is None:
        return None
    for message in reversed(messages.indexed()):
        if message.value_at("role") == role:
            return _parts_text(span, message.get("parts"))
    return None


def _output(span: Span) -> tuple[str | None, str]:
    """A span's output text, and the attribute it came from."""
    first = next(iter(span.attributes.get("llm.output_messages").indexed()), None) \
        if span.attributes.get("llm.output_messages") else None
    if first is not None:
        message = first.get("message")
        text = _text(span, message.get("content")) if message else None
        if text is None and message is not None and message.get("contents") is not None:
            contents = message.get("contents")
            assert contents is not None
            parts = [_text(span, c.get("message_content.text")) for c in contents.indexed()
                     if c.value_at("message_content.type") in ("text", _ABSENT)]
            text = "\n".join(p for p in parts if p is not None) or None
        if text is not None:
            return text, "llm.output_messages"
    messages = _structured(span, span.attributes.get("gen_ai.output.messages"))
    if messages is not None:
        for message in messages.indexed():
            text = _parts_text(span, message.get("parts"))
            if text is not None:
                return text, "gen_ai.output.messages"
    completion = _completion(span, span.attributes.get("gen_ai.completion"))
    if completion is None:
        for name, attributes in span.events:
            if name == "gen_ai.content.completion":
                completion = _completion(span, attributes.get("gen_ai.completion"))
                if completion is not None:
                    break
    if completion is not None:
        return completion, "gen_ai.completion"
    value = span.attributes.get("output.value")
    if _text(span, value) is not None:
        assert value is not None
        if span.attributes.value_at("output.mime_type") == JSON_MIME:
            text = _json_field(value, ANSWER_KEYS, None)
            if text is not None:
                return text, "output.value"
        else:
            return value.value, "output.value"
    return None, ""


def _completion(span: Span, node: Node | None) -> str | None:
    """gen_ai.completion: OpenLLMetry's gen_ai.completion.0.content, or the conventions' older attribute
    (a text, or the messages as JSON: [{"role": "assistant", "content": ...}])."""
    if node is None:
        return None
    if node.children:
        first = next(iter(node.indexed()), None)
        return _text(span, first.get("content")) if first is not None else None
    text = _text(span, node)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, list) and value and isinstance(value[0], dict) and isinstance(value[0].get("content"), str):
        return value[0]["content"]
    return value if isinstance(value, str) else text


def _answer(top: Span, llms: list[Span], answer: str) -> tuple[str | None, dict[str, Any]]:
    """answer=llm: the output of the LLM span that ended last, else the root's; answer=root: the root's."""
    if answer == "llm" and llms:
        last = llms[-1]
        text, attribute = _output(last)
        if text is not None:
            return text, {"span_id": last.span_id, "name": last.name, "attribute": attribute}
    text, attribute = _output(top)
    if text is not None:
        return text, {"span_id": top.span_id, "name": top.name, "attribute": attribute}
    return None, {}


def _documents(span: Span) -> list[_Document]:
    """A retriever span's documents: OpenInference's retrieval.documents.N.document.*, else the GenAI
    gen_ai.retrieval.documents list (a span dual-written with both is read by the first)."""
    found: list[_Document | None] = []
    documents = span.attributes.get("retrieval.documents")
    if documents is not None and documents.indexed():
        for item in documents.indexed():
            d = item.get("document") or Node(f"{item.key}.document")
            found.append(_document(span, int(item.key.rsplit(".", 1)[-1]) + 1, d, d.get("content"), d.get("id"),
                                   d.get("score"), d.get("metadata"), d.get("name"),
                                   {"content", "id", "score", "metadata", "name"}, "document.content"))
    else:
        genai = _structured(span, span.attributes.get("gen_ai.retrieval.documents"))
        if genai is not None and genai.value is not _ABSENT:
            span.problem(genai.path, f"{genai.key}: expected a list of documents ({{\"id\", \"content\", ...}}), "
                                     f"got {_clip(genai.value)}")
        for j, item in enumerate(genai.indexed() if genai is not None else []):
            found.append(_document(span, j + 1, item, item.get("content"), item.get("id"), item.get("score"),
                                   item.get("metadata"), None, {"content", "id", "score", "metadata"}, "content"))
    return [d for d in found if d is not None]


def _document(span: Span, rank: int, node: Node, content: Node | None, own_id: Node | None, score: Node | None,
              metadata: Node | None, name: Node | None, mapped: set[str], content_key: str) -> _Document | None:
    if content is None or content.value is _ABSENT:
        span.problem(_where(node), f"{node.key}: no {content_key}: a retrieved document needs its "
                                                     f"text to be judged against")
        return None
    text = _text(span, content, source=True)
    doc_id = None
    if own_id is not None and own_id.value is not _ABSENT:
        if isinstance(own_id.value, (str, int)) and not isinstance(own_id.value, bool) and str(own_id.value).strip():
            doc_id = str(own_id.value)
        else:
            span.problem(own_id.path, f"{own_id.key}: expected a text or an integer id, got {_clip(own_id.value)}")
    kept: dict[str, Any] = {}
    if score is not None and score.value is not _ABSENT:
        if (isinstance(score.value, (int, float)) and not isinstance(score.value, bool)) or score.value in NOT_FINITE:
            kept["score"] = score.value
        else:
            span.problem(score.path, f"{score.key}: expected a number, got {_kind_name(score.value)}")
    if metadata is not None:
        kept["metadata"] = _metadata(metadata)
    title = _text(span, name)
    for key, child in node.children.items():
        if key not in mapped:
            kept[key] = child.plain()
    if text is None:
        return None
    return _Document(span, rank, text, doc_id, node, title, kept)


def _where(node: Node) -> Path:
    """Where a node was read: its own field, else the first field under it."""
    if node.path:
        return node.path
    for child in node.children.values():
        inner = _where(child)
        if inner:
            return inner
    return ()


def _metadata(node: Node) -> Any:
    """A document's metadata: OpenInference writes it as JSON text, Phoenix as an object."""
    if isinstance(node.value, str):
        try:
            return json.loads(node.value)
        except ValueError:
            return node.value
    return node.plain()


READER = Reader(
    name="otel",
    description="OpenTelemetry traces: OTLP JSON (a collector's file exporter) or Phoenix span exports, read "
                "with the OpenInference and GenAI conventions; one case per trace",
    options=OPTIONS,
    read=read,
)
