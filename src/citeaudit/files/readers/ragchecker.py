"""RAGChecker files (Ru et al., 2024; github.com/amazon-science/RAGChecker): its checking input, and its
output, which adds claims and metrics to the same records: `{"results": [{"query_id", "query",
"gt_answer", "response", "retrieved_context": [{"doc_id", "text"}]}]}`.

Each result becomes a case: its retrieved contexts are the sources, in retrieved order (the ranking),
named by their `doc_id` or by position; `response` is one answer given as text.

RAGChecker responses seldom carry citation markers; option `cite` says what they cite. `markers` (the
default): what their markers say, often nothing. `all`: every claim of the response cites every
retrieved context (`cite_every_passage`, once the response is parsed). `entailed`: the claims are
RAGChecker's own `response_claims`, each citing the contexts its checker found to entail it
(`retrieved2response[claim][context] == "Entailment"`, as RAGChecker's faithfulness reads it), and the
checker's verdicts become curated labels, so that the `curated` judge replays RAGChecker and any other
judge can be set beside it. The case's metadata notes the reading (`cite`), and the run's signature
names it.
"""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any

from citeaudit.errors import InputError, Problem
from citeaudit.files.readers.common import (Fields, JsonDocument, Reader, ReadRecord, cite_every_passage, option_choice,
                                            option_text, others, read_items, wrapped_list)
from citeaudit.parse.resolve import ResolvedCase

OPTIONS = {
    "system": "the system name of every answer (default: the file name without its extension)",
    "source_ids": "how sources are named: doc_id (each context's doc_id), position ('1', '2', ... in retrieved "
                  "order), or auto (default: doc_id when any context in the file has one, else position)",
    "cite": "what each response cites: markers (default: the citation markers written in it, often none), all "
            "(every claim cites every retrieved context), or entailed (RAGChecker's own response_claims, each "
            "citing the contexts that entail it in retrieved2response; an output file only)",
}
SOURCE_IDS = ("auto", "doc_id", "position")
CITE = ("markers", "all", "entailed")
_POSITION_HINT = "or read contexts by position (source_ids=position)"
# What RAGChecker's checker answers for a (context, claim) pair; only the first makes a claim faithful.
ENTAILMENT = "Entailment"
_ENTAILED_FIELDS = ("response_claims", "retrieved2response")
_ENTAILED_HINT = ("cite=entailed reads the claims and entailment checks of RAGChecker's output (response_claims, "
                  "retrieved2response); read a checking input with cite=all or cite=markers")


def read(path: str, system: str | None = None, source_ids: str = "auto", cite: str = "markers") -> list[ReadRecord]:
    system = option_text(path, "system", system) or FsPath(path).stem
    source_ids = option_choice(path, "source_ids", source_ids, SOURCE_IDS)
    cite = option_choice(path, "cite", cite, CITE)
    doc = JsonDocument(path)
    results = wrapped_list(path, doc, "results", "not a RAGChecker file: expected an object with 'results' "
                                                 "(the list of RAG results)", "results")
    if source_ids == "auto":
        source_ids = "doc_id" if any(_has_doc_id(r) for r in results) else "position"
    if cite == "entailed" and results and not any(_has_checks(r) for r in results):
        # a checking input: one problem for the file rather than two for every result
        raise InputError([Problem(path, doc.line_of(("results",))(), "results",
                                  f"no result has response_claims or retrieved2response: {_ENTAILED_HINT}")])
    run = others(doc.data, {"results"})
    return read_items(path, doc, "results", results,
                      lambda fields, i: _case(fields, i, system, source_ids, cite, run))


def resolved(rc: ResolvedCase) -> ResolvedCase:
    """A case once its response is parsed: with cite=all, every claim cites every retrieved context."""
    return cite_every_passage(rc) if rc.case.metadata.get("cite") == "all" else rc


def _has_checks(result: Any) -> bool:
    return isinstance(result, dict) and any(result.get(key) is not None for key in _ENTAILED_FIELDS)


def _has_doc_id(result: Any) -> bool:
    contexts = result.get("retrieved_context") if isinstance(result, dict) else None
    return isinstance(contexts, list) and any(isinstance(c, dict) and c.get("doc_id") is not None for c in contexts)


def _case(f: Fields, index: int, system: str, source_ids: str, cite: str,
          run: dict[str, Any]) -> dict[str, Any] | None:
    if not f.is_object():
        return None
    case_id = f.identifier(("query_id",))
    question = f.text(("query",))
    response = f.text(("response",))
    f.text(("gt_answer",), required=False)  # kept as it is, but it must be a text when given
    sources = _sources(f, source_ids)
    answer: dict[str, Any] = {"id": "response", "system": system, "text": response}
    labels: list[dict[str, Any]] = []
    if cite == "entailed":
        answer["statements"] = _entailed_claims(f, [s["id"] for s in sources], response)
        labels = _checker_labels(answer["statements"])
    if f.problems:
        return None
    metadata = {"from": "ragchecker", "index": index, "source_ids": source_ids}
    if cite != "markers":  # noted only when it changes the reading, so that default cases read as they did
        metadata["cite"] = cite
    return {
        "id": case_id,
        "question": question,
        "sources": sources,
        "ranking": [s["id"] for s in sources],
        "answers": [answer],
        **({"labels": labels} if labels else {}),
        "metadata": {**metadata, "fields": others(f.value, {"query", "response", "retrieved_context"}), "run": run},
    }


def _entailed_claims(f: Fields, source_ids: list[str | None], response: str | None) -> list[dict[str, Any]]:
    """RAGChecker's response claims as statements, each citing the contexts that entail it:
    `retrieved2response` holds, for each response claim, the checker's label against each retrieved
    context in order. A claim no context entails cites nothing."""
    missing = [key for key in _ENTAILED_FIELDS if f.get((key,), None) is None]
    for key in missing:
        f.problem((key,), f"field required: {_ENTAILED_HINT}")
    claims = None if missing else f.items(("response_claims",))
    checks = None if missing else f.items(("retrieved2response",))
    if claims is None or checks is None:
        return []
    if len(checks) != len(claims):
        f.problem(("retrieved2response",), f"expected one list of labels per response claim ({len(claims)}), "
                                          f"got {len(checks)}")
        return []
    statements = []
    for c in range(len(claims)):
        text = _claim_text(f, ("response_claims", c))
        verdicts = f.texts(("retrieved2response", c))
        if verdicts is not None and len(verdicts) != len(source_ids):
            f.problem(("retrieved2response", c), f"expected one label per retrieved context ({len(source_ids)}), "
                                                 f"got {len(verdicts)}")
        elif text is not None and verdicts is not None:
            cited = [sid for sid, verdict in zip(source_ids, verdicts) if verdict == ENTAILMENT]
            statements.append({"id": f"c{c + 1}", "text": text, "citations": cited})
    if not claims and response and response.strip():
        # RAGChecker found no claim: the response stands as one statement that claims nothing
        statements.append({"text": response.strip(), "kind": "other"})
    return statements


def _checker_labels(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """RAGChecker's verdicts as curated labels: each context of a claim's cited set entails it, so the set
    does, and so does each part of it a citation measure asks about (each context alone, the set without
    each one)."""
    labels: dict[tuple[str, frozenset[str]], dict[str, Any]] = {}
    for st in statements:
        cited = st.get("citations") or []
        for part in (cited, *([c] for c in cited), *([other for other in cited if other != c] for c in cited)):
            if part:
                labels.setdefault((st["text"], frozenset(part)), {
                    "claim": st["text"], "passages": part, "label": "full",
                    "explanation": "RAGChecker's checker: each of these contexts entails the claim"})
    return list(labels.values())


def _claim_text(f: Fields, path: tuple[str | int, ...]) -> str | None:
    """A response claim as text: a (subject, relation, object) triplet joined by spaces, or a text."""
    value = f.get(path)
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        text = " ".join(part.strip() for part in value if part.strip())
    elif isinstance(value, str):
        text = value.strip()
    else:
        f.problem(path, "expected a claim: a text, or a list of texts (a triplet)")
        return None
    if not text:
        f.problem(path, "empty claim")
        return None
    return text


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
    resolved=resolved,
)
