"""A scored run as a table: one row per claim and citation, from a run log, its streamed entries or a
report just scored, under the columns of `COLUMNS` (docs/exports.md describes each one).

Rows are read through attributes, so this module imports neither the run log nor scoring: `Report`
and `RunLog` offer them as DataFrames, and `citeaudit.report.exports` writes them to files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from citeaudit.extras import require
from citeaudit.metrics import names as N


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
    Column("support", "float", "the answer's support: claims labelled full / claims judged"),
    Column("support_numerator", "int", "claims of the answer labelled full"),
    Column("support_denominator", "int", "claims of the answer judged (those uncertain or unjudged are "
                                         "counted apart)"),
    Column("citation_recall", "float", "the answer's citation recall (ALCE)"),
    Column("citation_precision", "float", "the answer's citation precision (ALCE)"),
    Column("coverage", "float", "the answer's coverage: required facts conveyed by a supported claim / "
                                "required facts"),
    Column("repair_action", "str", "in the run log of repaired answers (`citeaudit repair --log`): replace, add, "
                                   "drop, none_found or budget_spent (empty when the claim needed no repair)"),
    Column("original_citations", "str", "the claim's citations as the answer gave them, before the repair "
                                        "(ids joined by ', ')"),
    Column("suggested_citations", "str", "the citations the repair proposes, now the claim's (ids joined by ', '; "
                                         "empty when none was found)"),
)
CITATIONS_JOINED_BY = ", "
COLUMN_NAMES = tuple(c.name for c in COLUMNS)

# --- rows -------------------------------------------------------------------------------------------


def claim_rows(log: Any) -> Iterator[dict[str, Any]]:
    """One row per claim and citation of a run log (`citeaudit.run.log.RunLog`), answers in the log's
    order; a claim without citations gives one row with empty citation and passage fields."""
    passages = {(p.case, p.id): p.model_dump() for p in log.passages}
    for answer in log.results.answers:
        yield from _answer_rows(answer.case, answer.answer, answer.system, answer.claims, answer.metrics, passages)


def stream_claim_rows(entries: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The rows of `claim_rows` from a streamed run log read one case at a time (the `CaseEntry`s of
    `citeaudit.run.log.stream_entries`; other lines are passed over): memory holds one case."""
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
        tail = {**_judgment_fields(claim.judgment), **figures, **_repair_fields(getattr(claim, "repair", None))}
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


def _repair_fields(repair: Any) -> dict[str, Any]:
    """A repaired claim's action and citations before and after (a log's `repair` record; None elsewhere)."""
    if repair is None:
        return {"repair_action": None, "original_citations": None, "suggested_citations": None}
    suggested = repair.suggested
    return {"repair_action": repair.action, "original_citations": CITATIONS_JOINED_BY.join(repair.original),
            "suggested_citations": CITATIONS_JOINED_BY.join(suggested) if suggested is not None else None}


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


# --- pandas -----------------------------------------------------------------------------------------


def claims_frame(log: Any):
    """The claim rows of a run log as a pandas DataFrame with the columns of `COLUMNS`, typed as pandas'
    nullable string, Int64 and Float64 (an empty field is <NA>)."""
    return rows_frame(claim_rows(log))


def report_frame(report: Any):
    """The claim rows of a report just scored, as a pandas DataFrame (see `claims_frame`)."""
    return rows_frame(report_rows(report))


def rows_frame(rows: Iterable[dict[str, Any]]):
    pandas = require("pandas", "formats", "a DataFrame")
    dtypes = {"str": "string", "int": "Int64", "float": "Float64"}
    frame = pandas.DataFrame.from_records(rows, columns=list(COLUMN_NAMES))
    return frame.astype({c.name: dtypes[c.type] for c in COLUMNS})
