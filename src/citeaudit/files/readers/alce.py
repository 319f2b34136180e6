"""ALCE result files (Gao et al., 2023; github.com/princeton-nlp/ALCE), as its run.py writes them and its
eval.py reads them: `{"args": {...}, "data": [{"question", "output", "docs": [{"title", "text", ...}],
...}], ...}`.

Each item of `data` becomes a case: its documents are the sources "1", "2", ... in order (ALCE cites
`[n]` as the n-th document, 1-based, so numeric ids read its markers literally), their order is the
ranking, and `output` is one answer given as text.
"""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any

from citeaudit.files.readers.common import Fields, JsonDocument, Reader, ReadRecord, option_flag, option_text, others, read_items, wrapped_list

OPTIONS = {
    "system": "the system name of every answer (default: args.model, else the file name without its extension)",
    "keep_prompt": "keep each item's 'prompt' (the whole few-shot prompt) in the case metadata (default: false)",
}
_ID_FIELDS = ("id", "sample_id")  # QAMPARI items carry "id", ASQA items "sample_id"; ELI5 items neither


def read(path: str, system: str | None = None, keep_prompt: Any = False) -> list[ReadRecord]:
    system = option_text(path, "system", system)
    keep_prompt = option_flag(path, "keep_prompt", keep_prompt)
    doc = JsonDocument(path)
    items = wrapped_list(path, doc, "data", "not an ALCE result file: expected an object with 'data' "
                                            "(the list of items) and 'args'", "items")
    run = others(doc.data, {"data"})
    system = system or _model(run.get("args")) or FsPath(path).stem
    return read_items(path, doc, "data", items, lambda fields, i: _case(fields, i, system, run, keep_prompt))


def _model(args: Any) -> str | None:
    model = args.get("model") if isinstance(args, dict) else None
    return model if isinstance(model, str) and model.strip() else None


def _case(f: Fields, index: int, system: str, run: dict[str, Any], keep_prompt: bool) -> dict[str, Any] | None:
    if not f.is_object():
        return None
    item: dict[str, Any] = f.value
    question = f.text(("question",))
    answers = _answers(f, system)
    sources = _sources(f)
    case_id = next((f.identifier((key,)) for key in _ID_FIELDS if item.get(key) is not None), str(index))
    if f.problems:
        return None
    mapped = {"question", "output", "docs"} | (set() if keep_prompt else {"prompt"})
    return {
        "id": case_id,
        "question": question,
        "sources": sources,
        "ranking": [s["id"] for s in sources],
        "answers": answers,
        "metadata": {"from": "alce", "index": index, "fields": others(item, mapped), "run": run},
    }


def _answers(f: Fields, system: str) -> list[dict[str, Any]]:
    """`output` is one answer; a list of outputs (run.py --num_samples) is one answer per sample."""
    output = f.get(("output",), None)
    if isinstance(output, str):
        return [{"id": "output", "system": system, "text": output}]
    if isinstance(output, list) and output:
        texts = [f.text(("output", k)) for k in range(len(output))]
        return [{"id": f"output-{k + 1}", "system": system, "text": t} for k, t in enumerate(texts)]
    f.problem(("output",), "field required" if output is None else
              "empty list: no output to read" if output == [] else "expected a text or a list of texts")
    return []


def _sources(f: Fields) -> list[dict[str, Any]]:
    docs = f.items(("docs",))
    if docs is None:
        return []
    if not docs:
        f.problem(("docs",), "no documents: a case needs at least one source")
    sources = []
    for j, d in enumerate(docs):
        if not f.is_object(("docs", j)):
            continue
        # eval.py judges a QA-extracted document by its "sent", any other by its "text".
        key = "sent" if "sent" in d else "text"
        text = f.text(("docs", j, key), source=True)
        title = f.text(("docs", j, "title"), required=False)
        source: dict[str, Any] = {"id": str(j + 1), "text": text}
        if title is not None:
            source["title"] = title
        extra = others(d, {"title", key})
        if extra:
            source["metadata"] = extra
        sources.append(source)
    return sources


READER = Reader(
    name="alce",
    description="ALCE result files ({'args', 'data': [{'question', 'output', 'docs'}]}); [n] cites the n-th doc",
    options=OPTIONS,
    read=read,
)
