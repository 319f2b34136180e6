"""Exports of a scoring run for other tools: one row per claim and citation (CSV, JSON Lines,
Parquet, a pandas DataFrame), and a results file in RAGChecker's shape.

Every value is read from the run log as it was written: nothing is judged or scored again. The
columns of a claims export are `COLUMNS`, in that order, under names that do not change; docs/exports.md
describes each one and maps citeaudit's measures onto RAGChecker's.

pandas and pyarrow are optional (`pip install 'citeaudit[formats]'`): they are imported only by the
exports that need them.

This module reads a run log or a report through their attributes and imports neither module, so that
`RunLog` and `Report` can offer these exports as methods.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DestinationError, ExportError
from .iteration import chunks
from .metrics import names as N

FORMATS_EXTRA = "pip install 'citeaudit[formats]'"


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # "str", "int" or "float"; every column may be empty (None)
    description: str


COLUMNS: tuple[Column, ...] = (
    Column("case", "str", "case id"),
    Column("answer", "str", "answer id"),
    Column("system", "str", "system that gave the answer (the answer id when none is named)"),
    Column("statement_index", "int", "position of the claim's statement in the answer, from 0"),
    Column("claim_index", "int", "position of the claim in its statement, from 0"),
    Column("claim_id", "str", "the claim's id as given in the input (empty when it has none)"),
    Column("claim_text", "str", "the claim as judged"),
    Column("citation_index", "int", "position of the citation among the claim's citations, from 0 "
                                    "(empty when the claim cites nothing)"),
    Column("citation", "str", "id of the cited passage (empty when the claim cites nothing)"),
    Column("passage_doc", "str", "document of the cited passage"),
    Column("passage_version", "str", "version of that document"),
    Column("passage_start", "int", "start of the passage in the document's text (characters)"),
    Column("passage_end", "int", "end of the passage in the document's text (characters, exclusive)"),
    Column("passage_sha256", "str", "SHA-256 of the passage's text"),
    Column("label", "str", "full, partial, none or contradicts: the claim against all its cited passages "
                           "together (the same on each of the claim's rows); uncertain or unjudged when counted apart"),
    Column("best_guess", "str", "the judge's label, also when it is uncertain of it"),
    Column("judge", "str", "signature of the judge (or rule) that gave the label"),
    Column("decided_by", "str", "in a cascade, the judge whose verdict it is"),
    Column("explanation", "str", "the judge's explanation"),
    Column("evidence_passage", "str", "passage the judgment rests on, when the judge points at one"),
    Column("evidence_start", "int", "start of the evidence in that passage (characters)"),
    Column("evidence_end", "int", "end of the evidence in that passage (characters, exclusive)"),
    Column("p_full", "float", "the judge's probability of `full`, when it gives class scores"),
    Column("support", "float", "the answer's support: claims labelled full / claims"),
    Column("support_numerator", "int", "claims of the answer labelled full"),
    Column("support_denominator", "int", "claims of the answer"),
    Column("citation_recall", "float", "the answer's citation recall (ALCE)"),
    Column("citation_precision", "float", "the answer's citation precision (ALCE)"),
    Column("coverage", "float", "the answer's coverage: required facts conveyed by a supported claim / "
                                "required facts"),
)
COLUMN_NAMES = tuple(c.name for c in COLUMNS)
CLAIM_FORMATS = (".csv", ".jsonl", ".parquet")

_PARQUET_BATCH = 10_000  # rows held in memory at once while writing Parquet


# --- rows -------------------------------------------------------------------------------------------


def claim_rows(log: Any) -> Iterator[dict[str, Any]]:
    """One row per claim and citation of a run log (`citeaudit.runlog.RunLog`), answers in the log's
    order; a claim without citations gives one row with empty citation and passage fields."""
    passages = {(p.case, p.id): p.model_dump() for p in log.passages}
    for answer in log.results.answers:
        yield from _answer_rows(answer.case, answer.answer, answer.system, answer.claims, answer.metrics, passages)


def stream_claim_rows(entries: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The rows of `claim_rows` from a streamed run log read one case at a time (the `CaseEntry`s of
    `citeaudit.runlog.stream_entries`; other lines are passed over): memory holds one case."""
    for entry in entries:
        if not hasattr(entry, "answers"):
            continue
        passages = {(p.case, p.id): p.model_dump() for p in entry.passages}
        for answer in entry.answers:
            yield from _answer_rows(answer.case, answer.answer, answer.system, answer.claims, answer.metrics,
                                    passages)


def report_rows(report: Any) -> Iterator[dict[str, Any]]:
    """The rows of `claim_rows` for a report just scored (`citeaudit.metrics.Report`), before any run
    log is written."""
    passages = {(rc.id, pid): p.identity() for rc in report.cases for pid, p in rc.passages.items()}
    for answer in report.answers:
        yield from _answer_rows(answer.case_id, answer.answer_id, answer.system, answer.claims, answer.ratios(),
                                passages)


def _answer_rows(case: str, answer: str, system: str, claims: Iterable[Any], metrics: Mapping[str, Any],
                 passages: Mapping[tuple[str, str], dict[str, Any]]) -> Iterator[dict[str, Any]]:
    figures = _answer_figures(metrics)
    for claim in claims:
        head = {"case": case, "answer": answer, "system": system, "statement_index": claim.statement,
                "claim_index": claim.index, "claim_id": claim.id, "claim_text": claim.text}
        tail = {**_judgment_fields(claim.judgment), **figures}
        for position, cited in enumerate(claim.citations or [None]):
            place = _citation_fields(position, cited, passages.get((case, cited)))
            yield {**head, **place, **tail}


def _citation_fields(position: int, cited: str | None, passage: dict[str, Any] | None) -> dict[str, Any]:
    # A citation that names no passage of the case (counted as invalid) keeps its id, without a passage.
    return {
        "citation_index": None if cited is None else position,
        "citation": cited,
        "passage_doc": passage["doc"] if passage else None,
        "passage_version": passage["version"] if passage else None,
        "passage_start": passage["span"][0] if passage else None,
        "passage_end": passage["span"][1] if passage else None,
        "passage_sha256": passage["sha256"] if passage else None,
    }


def _judgment_fields(judgment: Any) -> dict[str, Any]:
    if judgment is None:  # unjudged (--missing-labels skip, or --metrics without a judged measure)
        return {"label": "unjudged", "best_guess": None, "judge": None, "decided_by": None, "explanation": None,
                "evidence_passage": None, "evidence_start": None, "evidence_end": None, "p_full": None}
    evidence = judgment.evidence
    return {
        "label": "uncertain" if judgment.uncertain else judgment.label,
        "best_guess": judgment.label,
        "judge": judgment.judge,
        "decided_by": judgment.decided_by,
        "explanation": judgment.explanation,
        "evidence_passage": evidence.passage if evidence else None,
        "evidence_start": evidence.start if evidence else None,
        "evidence_end": evidence.end if evidence else None,
        "p_full": judgment.scores.get("full") if judgment.scores else None,
    }


def _answer_figures(metrics: Mapping[str, Any]) -> dict[str, Any]:
    def value(name: str) -> float | None:
        return metrics[name].value if name in metrics else None

    support = metrics.get(N.SUPPORT)
    return {
        "support": value(N.SUPPORT),
        "support_numerator": support.numerator if support else None,
        "support_denominator": support.denominator if support else None,
        "citation_recall": value(N.CITATION_RECALL),
        "citation_precision": value(N.CITATION_PRECISION),
        "coverage": value(N.COVERAGE),
    }


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
    return _write_text(rows, Path(path), _write_csv if fmt == ".csv" else _write_jsonl)


@contextmanager
def _replacing(path: Path) -> Iterator[str]:
    """A temporary file beside `path` to write; renamed into place when the block ends, removed when
    it fails (the target is never left half-written)."""
    fd, temporary = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.",
                                     suffix=".tmp")
    os.close(fd)
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as err:
        Path(temporary).unlink(missing_ok=True)
        raise DestinationError(f"could not write claims export {path} ({err.strerror or err})") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_text(rows: Iterable[dict[str, Any]], path: Path, write) -> int:
    """Write rows as they come to a temporary file beside `path`, renamed into place once all are written."""
    with _replacing(path) as temporary, open(temporary, "w", encoding="utf-8") as fh:
        return write(rows, fh)


def _write_csv(rows: Iterable[dict[str, Any]], fh: io.TextIOBase) -> int:
    # lineterminator "\n": the text is written in text mode, which gives each platform its own line end
    writer = csv.DictWriter(fh, fieldnames=COLUMN_NAMES, lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow(row)  # None is written as an empty field
        count += 1
    return count


def _write_jsonl(rows: Iterable[dict[str, Any]], fh: io.TextIOBase) -> int:
    count = 0
    for row in rows:
        fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        count += 1
    return count


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ExportError(f"Parquet exports need pyarrow: {FORMATS_EXTRA}") from None
    return pyarrow


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


# --- pandas -----------------------------------------------------------------------------------------


def claims_frame(log: Any):
    """The claim rows of a run log as a pandas DataFrame with the columns of `COLUMNS`, typed as pandas'
    nullable string, Int64 and Float64 (an empty field is <NA>)."""
    return rows_frame(claim_rows(log))


def report_frame(report: Any):
    """The claim rows of a report just scored, as a pandas DataFrame (see `claims_frame`)."""
    return rows_frame(report_rows(report))


def rows_frame(rows: Iterable[dict[str, Any]]):
    try:
        import pandas
    except ImportError:
        raise ExportError(f"DataFrames need pandas: {FORMATS_EXTRA}") from None
    dtypes = {"str": "string", "int": "Int64", "float": "Float64"}
    frame = pandas.DataFrame.from_records(rows, columns=list(COLUMN_NAMES))
    return frame.astype({c.name: dtypes[c.type] for c in COLUMNS})


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
    """The reference answer a reader kept from the original data, else the required facts, in order."""
    kept = case.metadata.get("gt_answer")
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
