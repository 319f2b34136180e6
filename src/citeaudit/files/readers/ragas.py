"""RAGAS evaluation datasets (Es et al., 2024; github.com/explodinggradients/ragas): single-turn samples
with `user_input` (or `question`), `response` (`answer`), `retrieved_contexts` (`contexts`), and
optionally `reference` (`ground_truth`), `reference_contexts`, `retrieved_context_ids` and
`reference_context_ids`, read from JSON lines, a JSON list, CSV (list columns written as JSON or as
Python lists, as pandas and RAGAS write them), Parquet, or a Hugging Face dataset folder written by
`save_to_disk` (Parquet and dataset folders need pyarrow: the `arrow` extra).

Each row becomes a case: its retrieved contexts are the sources "1", "2", ... in retrieved order (the
ranking), its reference contexts the gold documents, its response one answer given as text.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import sys
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path as FsPath
from typing import Any

from citeaudit.errors import InputError, Problem
from citeaudit.extras import require
from citeaudit.jsonio import lone_surrogate
from citeaudit.files.readers.common import (
    Fields,
    JsonDocument,
    Reader,
    ReadRecord,
    option_text,
    others,
    raise_problems,
    read_json_lines,
    read_text,
)

OPTIONS = {
    "system": "the system name of every answer (default: the file or folder name without its extension)",
    "id_field": "the column that holds each row's case id (default: none; the row's index from 0)",
    "split": "for a saved DatasetDict folder: the split to read (default: its only split)",
}
# Each case field, and the columns that may hold it: RAGAS's current name first, then its older one.
_QUESTION = ("user_input", "question")
_RESPONSE = ("response", "answer")
_CONTEXTS = ("retrieved_contexts", "contexts")
# Columns that hold lists: a CSV cell of one is the list written as text.
_LIST_COLUMNS = {"retrieved_contexts", "contexts", "reference_contexts", "retrieved_context_ids",
                 "reference_context_ids", "multi_responses", "ground_truths"}

Row = tuple[Fields, int]  # a row, checked field by field, and its index in the file


def read(path: str, system: str | None = None, id_field: str | None = None,
         split: str | None = None) -> list[ReadRecord]:
    system = option_text(path, "system", system) or FsPath(path).stem
    id_field = option_text(path, "id_field", id_field)
    split = option_text(path, "split", split)
    rows, problems = _rows(path, split)
    records = []
    for fields, index in rows:
        case = None if fields.problems else _case(fields, index, system, id_field)
        problems += fields.problems
        if case is not None and not fields.problems:
            records.append(ReadRecord(case, fields.line, fields.where))
    raise_problems(problems)
    return records


# --- rows, from each kind of file ---------------------------------------------------------------------


def _rows(path: str, split: str | None) -> tuple[list[Row], list[Problem]]:
    target = FsPath(path)
    if target.is_dir():
        return _table_rows(path, _dataset_folder(path, split)), []
    if split is not None:
        raise InputError([Problem(path, None, "", "option split applies to a saved dataset folder only")])
    suffix = target.suffix.lower()
    if suffix == ".csv":
        return _csv_rows(path)
    if suffix == ".parquet":
        return _table_rows(path, _parquet(path)), []
    if suffix == ".json":
        return _json_rows(path)
    if suffix == ".jsonl":
        return _json_lines_rows(path)
    raise InputError([Problem(path, None, "", "a RAGAS dataset is read from .jsonl, .json, .csv or .parquet, or "
                                              "from a folder written by save_to_disk")])


def _json_lines_rows(path: str) -> tuple[list[Row], list[Problem]]:
    rows: list[Row] = []
    problems: list[Problem] = []
    for got in read_json_lines(path):
        if isinstance(got, Problem):
            problems.append(got)
        else:
            _, value, line_of = got
            rows.append((Fields(path, value, (), line_of), len(rows)))
    return rows, problems


def _json_rows(path: str) -> tuple[list[Row], list[Problem]]:
    doc = JsonDocument(path)
    if not isinstance(doc.data, list):
        raise InputError([Problem(path, 1, "", "expected a list of rows (or JSON lines, one row a line)")])
    rows: list[Row] = []
    problems: list[Problem] = []
    for i, value in enumerate(doc.data):
        found = doc.problems_in((i,), value)
        if found:
            problems += found
        else:
            rows.append((Fields(path, value, (i,), doc.line_of((i,))), i))
    return rows, problems


@contextmanager
def _long_csv_fields() -> Iterator[None]:
    """A retrieved context can be longer than the csv module's default cell limit (128 KiB)."""
    before = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _csv_rows(path: str) -> tuple[list[Row], list[Problem]]:
    text = read_text(path)  # a byte-order mark, as spreadsheet programs write, is skipped
    rows: list[Row] = []
    problems: list[Problem] = []
    with _long_csv_fields():
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            header = next(reader, None)
            if header is None:
                raise InputError([Problem(path, None, "", "file is empty")])
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                raise InputError([Problem(path, 1, name, "column named twice in the header") for name in repeated])
            end = reader.line_num
            for cells in reader:
                start, end = end + 1, reader.line_num
                if not cells:  # a blank line
                    continue
                index = len(rows)

                def line_of(_: tuple = (), start: int = start) -> int:
                    return start

                fields = Fields(path, {}, (), line_of)
                if len(cells) != len(header):
                    fields.problem((), f"the row has {len(cells)} cells, the header names {len(header)} columns")
                else:
                    fields.value = {name: _cell(fields, name, cell) for name, cell in zip(header, cells)}
                rows.append((fields, index))
        except csv.Error as err:
            problems.append(Problem(path, reader.line_num, "", f"malformed CSV: {err}"))
    return rows, problems


def _cell(fields: Fields, column: str, cell: str) -> Any:
    """A CSV cell as the value it was written from: empty is missing, a list column holds a list."""
    if cell == "":
        return None
    if column not in _LIST_COLUMNS:
        return cell
    try:
        value = json.loads(cell)
    except ValueError:
        value = _python_list(cell)
    if not isinstance(value, list):
        fields.problem((column,), "expected a list, written as JSON or as a Python list (['a', 'b'])")
        return None
    for i, item in enumerate(value):  # an escape in the cell ("\ud800") can make half a character
        message = lone_surrogate(item) if isinstance(item, str) else None
        if message:
            fields.problem((column, i), message)
            return None
    return value


def _python_list(cell: str) -> list[Any] | None:
    """A list written as Python writes one (`str(list)`, pandas' to_csv), or None. Commas are checked
    token by token first: `['a' 'b']`, as NumPy writes an array, would otherwise read as ['ab']."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(cell).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return None
    if len(tokens) < 2 or tokens[0].string != "[" or tokens[-1].string != "]":
        return None
    inner = tokens[1:-1]
    values, commas = inner[0::2], inner[1::2]
    if any(t.type not in (tokenize.STRING, tokenize.NUMBER) for t in values) or any(t.string != "," for t in commas):
        return None
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, list) else None


def _pyarrow(path: str, what: str) -> Any:
    return require("pyarrow", "formats", f"{path}: reading {what}")


def _parquet(path: str) -> list[dict[str, Any]]:
    _pyarrow(path, "Parquet files")
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as err:  # pyarrow's errors derive from these
        raise InputError([Problem(path, None, "", f"cannot read as Parquet: {err}")]) from None


def _dataset_folder(path: str, split: str | None) -> list[dict[str, Any]]:
    """The rows of a folder written by `datasets`' save_to_disk: state.json lists its Arrow files."""
    pa = _pyarrow(path, "a saved dataset folder")
    folder = FsPath(path)
    splits_file = folder / "dataset_dict.json"
    if splits_file.is_file():
        folder = folder / _split(path, splits_file, split)
    elif split is not None:
        raise InputError([Problem(path, None, "", f"option split={split!r}: the folder holds one dataset, "
                                                  "not a DatasetDict")])
    state_file = folder / "state.json"
    if not state_file.is_file():
        raise InputError([Problem(str(folder), None, "", "not a saved dataset folder: no state.json "
                                                         "(save_to_disk writes one)")])
    try:
        names = [entry["filename"] for entry in json.loads(state_file.read_text(encoding="utf-8"))["_data_files"]]
    except (ValueError, KeyError, TypeError) as err:
        raise InputError([Problem(str(state_file), None, "", f"cannot read its list of data files: {err!r}")]) from None
    rows: list[dict[str, Any]] = []
    for name in names:
        try:
            with pa.memory_map(str(folder / name)) as source:
                rows += pa.ipc.open_stream(source).read_all().to_pylist()
        except (OSError, ValueError) as err:
            raise InputError([Problem(str(folder / name), None, "", f"cannot read as Arrow: {err}")]) from None
    return rows


def _split(path: str, splits_file: FsPath, split: str | None) -> str:
    try:
        splits = json.loads(splits_file.read_text(encoding="utf-8"))["splits"]
    except (ValueError, KeyError, TypeError) as err:
        raise InputError([Problem(str(splits_file), None, "", f"cannot read its list of splits: {err!r}")]) from None
    if split is None and len(splits) == 1:
        return splits[0]
    if split in splits:
        return split
    asked = "give option split" if split is None else f"no split '{split}'"
    raise InputError([Problem(path, None, "", f"{asked} (splits: {', '.join(splits)})")])


def _table_rows(path: str, table: list[dict[str, Any]]) -> list[Row]:
    """Rows of a Parquet file or Arrow table: no lines, so each is named by its index."""
    return [(Fields(path, {k: _json_safe(v) for k, v in row.items()}, ("rows", i), lambda _=(): None), i)
            for i, row in enumerate(table)]


def _json_safe(value: Any) -> Any:
    """A table value as JSON can hold it: NaN and infinities (a metric that failed) become null, dates
    and other scalars their text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


# --- one row, one case --------------------------------------------------------------------------------


def _column(f: Fields, names: tuple[str, ...]) -> str | None:
    """The column that holds a field, of its accepted names; two of them given is a problem."""
    given = [name for name in names if f.get((name,), None) is not None]
    if len(given) > 1:
        f.problem((given[1],), f"both '{given[0]}' and '{given[1]}' are given: which one is meant?")
    if given:
        return given[0]
    # a column present but null is the one to name in "got null"
    return next((name for name in names if f.get((name,)) is None), None)


def _case(f: Fields, index: int, system: str, id_field: str | None) -> dict[str, Any] | None:
    if not f.is_object():
        return None
    question_column, response_column = _column(f, _QUESTION), _column(f, _RESPONSE)
    contexts_column = _column(f, _CONTEXTS)
    if isinstance(f.get((question_column or "",), None), list):
        f.problem((question_column,), "a multi-turn sample (a list of messages): only single-turn samples are read")
        return None
    question = f.text((question_column or _QUESTION[0],))
    response = f.text((response_column,), required=False) if response_column else None
    case_id = f.identifier((id_field,)) if id_field else str(index)
    sources = _sources(f, contexts_column or _CONTEXTS[0])
    gold, extra, unmatched = _gold(f, sources)
    if f.problems:
        return None
    metadata: dict[str, Any] = {"from": "ragas", "index": index,
                                "fields": others(f.value, {question_column, response_column, contexts_column})}
    if unmatched:
        metadata["gold_unmatched"] = unmatched
    return {
        "id": case_id,
        "question": question,
        "sources": sources + extra,
        "ranking": [s["id"] for s in sources],
        "gold_documents": gold,
        "answers": [] if response is None else [{"id": "response", "system": system, "text": response}],
        "metadata": metadata,
    }


def _sources(f: Fields, column: str) -> list[dict[str, Any]]:
    texts = f.texts((column,), source=True)
    if texts is None:
        return []
    if not texts:
        f.problem((column,), "no retrieved context: a case needs at least one source")
    ids = f.items(("retrieved_context_ids",), required=False)
    if ids is not None and len(ids) != len(texts):
        f.problem(("retrieved_context_ids",), f"{len(ids)} ids for {len(texts)} retrieved contexts")
        ids = None
    sources = []
    for k, text in enumerate(texts):
        source: dict[str, Any] = {"id": str(k + 1), "text": text}
        if ids is not None:
            source["metadata"] = {"context_id": ids[k]}
        sources.append(source)
    return sources


def _gold(f: Fields, sources: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]], list[Any]]:
    """The gold documents, the gold contexts that were not retrieved (added as sources outside the
    ranking, so recall@k counts them as missed), and the gold ids that could not be placed.

    Reference contexts given by id are matched to `retrieved_context_ids`; an id not found there takes
    the reference context at the same position, when `reference_contexts` gives one for each id. If an
    id still has no text, the row's gold set is unknown: no gold documents (recall@k is then n/a for the
    case), and the ids are kept in metadata, never counted as if they were found."""
    ref_texts = f.texts(("reference_contexts",), required=False, source=True)
    ref_ids = f.items(("reference_context_ids",), required=False)
    by_text = {s["text"].strip(): s["id"] for s in reversed(sources)}  # the first of equal texts
    by_id = {str(s["metadata"]["context_id"]): s["id"] for s in reversed(sources) if "metadata" in s}
    gold: list[str] = []
    extra: list[dict[str, Any]] = []
    unmatched: list[Any] = []

    def place(text: str, k: int) -> None:
        if text.strip() in by_text:
            gold.append(by_text[text.strip()])
            return
        source_id = f"ref-{len(extra) + 1}"
        extra.append({"id": source_id, "text": text, "metadata": {"reference_context": k}})
        by_text[text.strip()] = source_id
        gold.append(source_id)

    if ref_ids is not None:
        aligned = ref_texts if ref_texts is not None and len(ref_texts) == len(ref_ids) else None
        for k, ref_id in enumerate(ref_ids):
            if str(ref_id) in by_id:
                gold.append(by_id[str(ref_id)])
            elif aligned is not None:
                place(aligned[k], k)
            else:
                unmatched.append(ref_id)
        if unmatched:
            return [], [], unmatched
    elif ref_texts is not None:
        for k, text in enumerate(ref_texts):
            place(text, k)
    return list(dict.fromkeys(gold)), extra, []


READER = Reader(
    name="ragas",
    description="RAGAS datasets (user_input, response, retrieved_contexts, reference...) from JSONL, JSON, CSV, "
                "Parquet or a save_to_disk folder",
    options=OPTIONS,
    read=read,
)
