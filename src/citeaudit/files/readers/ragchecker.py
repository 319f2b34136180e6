"""RAGChecker files (Ru et al., 2024; github.com/amazon-science/RAGChecker): its checking input, and its
output, which adds claims and metrics to the same records: `{"results": [{"query_id", "query",
"gt_answer", "response", "retrieved_context": [{"doc_id", "text"}]}]}`.

Each result becomes a case: its retrieved contexts are the sources, in retrieved order (the ranking),
named by their `doc_id` or by position; `response` is one answer given as text.
"""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any

from citeaudit.files.readers.common import Fields, JsonDocument, Reader, ReadRecord, option_choice, option_text, others, read_items, wrapped_list

OPTIONS = {
    "system": "the system name of every answer (default: the file name without its extension)",
    "source_ids": "how sources are named: doc_id (each context's doc_id), position ('1', '2', ... in retrieved "
                  "order), or auto (default: doc_id when any context in the file has one, else position)",
}
SOURCE_IDS = ("auto", "doc_id", "position")
_POSITION_HINT = "or read contexts by position (source_ids=position)"


def read(path: str, system: str | None = None, source_ids: str = "auto") -> list[ReadRecord]:
    system = option_text(path, "system", system) or FsPath(path).stem
    source_ids = option_choice(path, "source_ids", source_ids, SOURCE_IDS)
    doc = JsonDocument(path)
    results = wrapped_list(path, doc, "results", "not a RAGChecker file: expected an object with 'results' "
                                                 "(the list of RAG results)", "results")
    if source_ids == "auto":
        source_ids = "doc_id" if any(_has_doc_id(r) for r in results) else "position"
    run = others(doc.data, {"results"})
    return read_items(path, doc, "results", results, lambda fields, i: _case(fields, i, system, source_ids, run))


def _has_doc_id(result: Any) -> bool:
    contexts = result.get("retrieved_context") if isinstance(result, dict) else None
    return isinstance(contexts, list) and any(isinstance(c, dict) and c.get("doc_id") is not None for c in contexts)


def _case(f: Fields, index: int, system: str, source_ids: str, run: dict[str, Any]) -> dict[str, Any] | None:
    if not f.is_object():
        return None
    case_id = f.identifier(("query_id",))
    question = f.text(("query",))
    response = f.text(("response",))
    f.text(("gt_answer",), required=False)  # kept as it is, but it must be a text when given
    sources = _sources(f, source_ids)
    if f.problems:
        return None
    return {
        "id": case_id,
        "question": question,
        "sources": sources,
        "ranking": [s["id"] for s in sources],
        "answers": [{"id": "response", "system": system, "text": response}],
        "metadata": {"from": "ragchecker", "index": index, "source_ids": source_ids,
                     "fields": others(f.value, {"query", "response", "retrieved_context"}), "run": run},
    }


def _sources(f: Fields, source_ids: str) -> list[dict[str, Any]]:
    contexts = f.items(("retrieved_context",))
    if contexts is None:
        return []
    if not contexts:
        f.problem(("retrieved_context",), "no retrieved context: a case needs at least one source")
    sources: list[dict[str, Any]] = []
    first_of: dict[str, int] = {}
    for j, context in enumerate(contexts):
        path = ("retrieved_context", j)
        if not f.is_object(path):
            continue
        text = f.text(path + ("text",), source=True)
        if source_ids == "position":
            source = {"id": str(j + 1), "text": text, "metadata": others(context, {"text"})}
        else:
            source_id = _doc_id(f, path, first_of)
            source = {"id": source_id, "text": text, "metadata": others(context, {"doc_id", "text"})}
        if not source["metadata"]:
            del source["metadata"]
        sources.append(source)
    return sources


def _doc_id(f: Fields, path: tuple[str | int, ...], first_of: dict[str, int]) -> str | None:
    """A context's doc_id as its source id: present, and not used by another context of the result."""
    if f.get(path + ("doc_id",), None) is None:
        f.problem(path + ("doc_id",), f"field required: sources are named by doc_id; give every context one, "
                                      f"{_POSITION_HINT}")
        return None
    doc_id = f.identifier(path + ("doc_id",))
    if doc_id is None:
        return None
    if doc_id in first_of:
        f.problem(path + ("doc_id",), f"doc_id '{doc_id}' is also the doc_id of retrieved_context"
                                      f"[{first_of[doc_id]}]: sources need distinct names; {_POSITION_HINT}")
    first_of.setdefault(doc_id, path[1])  # type: ignore[arg-type]
    return doc_id


READER = Reader(
    name="ragchecker",
    description="RAGChecker input or output files ({'results': [{'query_id', 'query', 'response', "
                "'retrieved_context'}]})",
    options=OPTIONS,
    read=read,
)
