"""Exports of a scoring run for other tools: one row per claim and citation (CSV, JSON Lines,
Parquet, a pandas DataFrame), and a results file in RAGChecker's shape.

Every value is read from the run log as it was written: nothing is judged or scored again. The
columns of a claims export are `COLUMNS`, in that order, under names that do not change; docs/exports.md
describes each one and maps citeaudit's measures onto RAGChecker's.

pandas and pyarrow are optional (`pip install 'citeaudit[formats]'`): they are imported only by the
exports that need them (`extras.require`).

The rows themselves are built in `citeaudit.metrics.rows` (re-exported here), below the run log and
scoring, so that `RunLog` and `Report` can offer them as DataFrames without importing this module.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citeaudit.errors import DestinationError, ExportError
from citeaudit.files.destinations import temporary_beside
from citeaudit.extras import require
from citeaudit.iteration import chunks
from citeaudit.metrics import names as N
from citeaudit.metrics.rows import (COLUMN_NAMES, COLUMNS, Column, claim_rows, claims_frame, report_frame,
                           report_rows, rows_frame, stream_claim_rows)

__all__ = [
    "CLAIM_FORMATS", "COLUMNS", "COLUMN_NAMES", "Column", "claim_rows", "claims_format", "claims_frame",
    "parquet_schema", "ragchecker_results", "report_frame", "report_rows", "rows_frame", "stream_claim_rows",
    "write_claims", "write_rows",
]

CLAIM_FORMATS = (".csv", ".jsonl", ".parquet")

_PARQUET_BATCH = 10_000  # rows held in memory at once while writing Parquet
# UTF-8 with a byte-order mark: Excel opens a CSV without one in the system's legacy code page, which
# turns Chinese (or "°C") into mojibake; with it, every spreadsheet reads UTF-8. Python reads it back
# with encoding="utf-8-sig", pandas and the csv readers of R and spreadsheets skip it themselves.
CSV_ENCODING = "utf-8-sig"


# --- files ------------------------------------------------------------------------------------------


def claims_format(path: str | Path) -> str:
    """The format a claims export is written in, from the file's suffix: ".csv", ".jsonl" or ".parquet"."""
    suffix = Path(path).suffix.lower()
    if suffix not in CLAIM_FORMATS:
        given = f"'{suffix}'" if suffix else "no suffix"
        raise ExportError(f"{path}: unknown export format ({given}); name a file ending in "
                               f"{', '.join(CLAIM_FORMATS[:-1])} or {CLAIM_FORMATS[-1]}")
    return suffix


def write_claims(log: Any, path: str | Path) -> int:
    """Write the claim rows of a run log to `path` in the format its suffix names, whole or not at all.
    Returns the number of rows written."""
    return write_rows(claim_rows(log), path)


def write_rows(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write claim rows (`claim_rows`, `report_rows`) to `path` in the format its suffix names."""
    fmt = claims_format(path)
    if fmt == ".parquet":
        return _write_parquet(rows, Path(path))
    if fmt == ".csv":  # the csv module writes its own line ends
        return _write_text(rows, Path(path), _write_csv, newline="", encoding=CSV_ENCODING)
    return _write_text(rows, Path(path), _write_jsonl)


@contextmanager
def _replacing(path: Path) -> Iterator[str]:
    """A temporary file beside `path` to write; renamed into place when the block ends, removed when
    it fails (the target is never left half-written)."""
    fd, temporary = temporary_beside(path)  # its descriptor stays open: it holds the lock that marks the file live
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as err:
        Path(temporary).unlink(missing_ok=True)
        raise DestinationError(f"could not write claims export {path} ({err.strerror or err})") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


def _write_text(rows: Iterable[dict[str, Any]], path: Path, write, newline: str | None = None,
                encoding: str = "utf-8") -> int:
    """Write rows as they come to a temporary file beside `path`, renamed into place once all are written."""
    with _replacing(path) as temporary, open(temporary, "w", encoding=encoding, newline=newline) as fh:
        return write(rows, fh)


# A cell a spreadsheet would run as a formula ("=HYPERLINK(...)", "@SUM(...)", "-2+3"), or whose first
# character it may drop (TAB, CR): OWASP's list for CSV injection.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_TEXT_COLUMNS = tuple(c.name for c in COLUMNS if c.type == "str")


def _spreadsheet_safe(row: dict[str, Any]) -> dict[str, Any]:
    """The row for a spreadsheet to show rather than run: a text cell that starts like a formula gets a
    single quote before it, which makes it text to the spreadsheet. Numbers stay numbers (a negative
    figure is no formula). The row itself is left as it is (copied when a cell changes). About 2 µs a
    row, against 6 µs for the csv module to write it."""
    safe = row
    for name in _TEXT_COLUMNS:
        value = row.get(name)
        if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
            if safe is row:
                safe = dict(row)
            safe[name] = "'" + value
    return safe


def _write_csv(rows: Iterable[dict[str, Any]], fh: io.TextIOBase) -> int:
    # Lines end in CRLF, as RFC 4180 has them: the csv module quotes a field holding a character of its
    # line end, so a claim holding CR or LF stays one field (with "\n" alone, Python 3.11 left CR unquoted).
    writer = csv.DictWriter(fh, fieldnames=COLUMN_NAMES, lineterminator="\r\n")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow(_spreadsheet_safe(row))  # None is written as an empty field
        count += 1
    return count


def _write_jsonl(rows: Iterable[dict[str, Any]], fh: io.TextIOBase) -> int:
    count = 0
    for row in rows:
        fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        count += 1
    return count


def _pyarrow():
    require("pyarrow.parquet", "formats", "a Parquet export")
    return require("pyarrow", "formats", "a Parquet export")


def parquet_schema():
    """The claims export's columns as a pyarrow schema (strings, 64-bit integers and floats, all nullable)."""
    pa = _pyarrow()
    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
    return pa.schema([pa.field(c.name, types[c.type]) for c in COLUMNS])


def _write_parquet(rows: Iterable[dict[str, Any]], path: Path) -> int:
    """Write rows in batches to a temporary file beside `path`, then rename it into place."""
    pa = _pyarrow()
    schema = parquet_schema()
    count = 0
    with _replacing(path) as temporary, pa.parquet.ParquetWriter(temporary, schema) as writer:
        for batch in chunks(rows, _PARQUET_BATCH):
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=schema))
            count += len(batch)
    return count




# --- RAGChecker -------------------------------------------------------------------------------------

# Where citeaudit's measures go among RAGChecker's three metric groups (docs/exports.md says why):
# these to the overall group, recall@k and facts@k to the retriever's, the rest to the generator's.
OVERALL_MEASURES = (N.COVERAGE, N.ABSTENTION)
RAGCHECKER_GROUPS = ("overall_metrics", "retriever_metrics", "generator_metrics")


def ragchecker_results(log: Any, system: str | None = None) -> dict[str, Any]:
    """The answers of one system of a run log as RAGChecker's results file: `results`, one per answer
    (query_id, query, gt_answer, response, retrieved_context, metrics), and `metrics` grouped as
    RAGChecker groups them. Only citeaudit's own measures are filled, under their own names; RAGChecker's
    measures that citeaudit does not compute are left out. `system` may be omitted when the run holds one."""
    chosen = _one_system(log, system)
    cases = {c.id: c for c in log.cases}
    retrieval = {c.id: c.retrieval for c in log.results.cases}
    answers = [a for a in log.results.answers if a.system == chosen]
    results = [_ragchecker_result(cases[a.case], a, retrieval.get(a.case, {})) for a in answers]
    answered = list(dict.fromkeys(a.case for a in answers))
    summary = {**log.results.summary.by_system[chosen], **_summed([retrieval.get(c, {}) for c in answered])}
    return {"results": results, "metrics": _grouped(summary)}


def _one_system(log: Any, system: str | None) -> str:
    systems = list(log.results.summary.by_system)
    if system is None and len(systems) == 1:
        return systems[0]
    if system in systems:
        return system
    listed = ", ".join(systems) or "none"
    if system is None:
        raise ExportError(f"a RAGChecker results file holds one system, and this run holds several "
                               f"({listed}): choose one with --system")
    raise ExportError(f"system {system!r} is not in this run (its systems: {listed})")


def _ragchecker_result(case: Any, answer: Any, retrieval: Mapping[str, Any]) -> dict[str, Any]:
    measures = {**answer.metrics, **retrieval}
    return {
        "query_id": str(case.metadata.get("query_id", case.id)),
        "query": case.question,
        "gt_answer": _gt_answer(case),
        "response": _response(case, answer),
        "retrieved_context": _retrieved_context(case),
        "metrics": {name: r.value for name, r in measures.items() if r.value is not None},
    }


def _gt_answer(case: Any) -> str:
    """The reference answer a reader kept from the original data (the ragchecker reader keeps it among
    the original `fields`), else the required facts, in order."""
    fields = case.metadata.get("fields")
    kept = case.metadata.get("gt_answer", fields.get("gt_answer") if isinstance(fields, dict) else None)
    return kept if isinstance(kept, str) else " ".join(f.text for f in case.facts)


def _response(case: Any, answer: Any) -> str:
    """The answer's text as given, else its statements joined."""
    given = next((a.text for a in case.answers if a.id == answer.answer), None)
    return given if given is not None else " ".join(s.text for s in answer.statements)


def _retrieved_context(case: Any) -> list[dict[str, str]] | None:
    """The ranked documents with their texts, best first; None when the case has no ranking."""
    if case.ranking is None:
        return None
    docs = {d.id: d for d in case.sources}
    return [{"doc_id": doc_id, "text": _document_text(docs[doc_id])} for doc_id in case.ranking if doc_id in docs]


def _document_text(doc: Any) -> str:
    if doc.text is not None:
        return doc.text
    return "\n\n".join(p.text for p in doc.passages if p.text is not None)


def _summed(per_case: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Retrieval figures over the given cases: counts summed, as citeaudit sums them."""
    out: dict[str, Any] = {}
    for figures in per_case:
        for name, record in figures.items():
            out[name] = out[name] + record.ratio() if name in out else record.ratio()
    return out


def _group_of(name: str) -> str:
    if N.parse_at_k(name):
        return "retriever_metrics"
    return "overall_metrics" if name in OVERALL_MEASURES else "generator_metrics"


def _grouped(summary: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Defined figures in percent with one decimal, as RAGChecker shows its groups."""
    groups: dict[str, dict[str, float]] = {g: {} for g in RAGCHECKER_GROUPS}
    for name, ratio in summary.items():
        if ratio.value is not None:
            groups[_group_of(name)][name] = round(100 * ratio.value, 1)
    return groups
