"""Human-labelled rows (DATA), the input of `citeaudit validate-judge` and `calibrate-judge`: JSON lines,
one row a line::

    {"id": "...", "claim": "...", "passages": [{"id": "...", "text": "..."}],
     "label": "full|partial|none|contradicts", "source": "...", "lang": "..."}

`source` and `lang` are optional. Every bad row is reported, each problem as `file:line: field: message`;
unknown fields, duplicate row ids and duplicate passage ids within a row are errors, and so are NaN
and Infinity (not JSON). Lines are split on "\\n" only, so a string holding U+2028 stays one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from citeaudit.errors import InputError, Problem, format_path, validation_problems
from citeaudit.jsonio import ENCODING, StrictJson, refused
from citeaudit.records import LABELS, SourcePassage
from citeaudit.parse.resolve import ResolvedCase

ROW_FIELDS = ("claim", "id", "lang", "label", "passages", "source")


@dataclass(frozen=True)
class Row:
    """One labelled (claim, passages) pair; `line` is where it was read, for messages only."""

    id: str
    claim: str
    passages: tuple[SourcePassage, ...]
    label: str
    source: str | None = None
    lang: str | None = None
    line: int | None = field(default=None, compare=False)


# --- the row format, as pydantic models --------------------------------------------------------------
# Validators keep citeaudit's own messages ("missing or not a non-empty string", "unknown field ...")
# rather than pydantic's generic ones; a missing field reaches them as None (validate_default).


def _non_empty_string(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("missing or not a non-empty string")
    return value


def _optional_string(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _unknown_field(expected: str):
    def reject(value: Any) -> Any:
        raise ValueError(f"unknown field (expected {expected})")

    return reject


NonEmptyString = Annotated[str, BeforeValidator(_non_empty_string)]
OptionalString = Annotated[str | None, BeforeValidator(_optional_string)]


def _required() -> Any:
    return Field(None, validate_default=True)


class PassageFields(BaseModel):
    # every field that is not declared is an extra, and each extra fails on its own path
    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, Annotated[Any, BeforeValidator(_unknown_field("id, text"))]] = Field(init=False)

    id: NonEmptyString = _required()
    text: NonEmptyString = _required()

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("must be an object with 'id' and 'text'")
        return value


class RowFields(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, Annotated[Any, BeforeValidator(
        _unknown_field("one of: " + ", ".join(ROW_FIELDS)))]] = Field(init=False)

    id: NonEmptyString = _required()
    claim: NonEmptyString = _required()
    passages: list[PassageFields] = _required()
    label: str = _required()
    source: OptionalString = None
    lang: OptionalString = None

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"a row must be a JSON object, got {type(value).__name__}")
        return value

    @field_validator("passages", mode="before")
    @classmethod
    def _non_empty_list(cls, value: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise ValueError("missing or not a non-empty list")
        return value

    @field_validator("passages")
    @classmethod
    def _unique_passage_ids(cls, passages: list[PassageFields]) -> list[PassageFields]:
        first: dict[str, int] = {}
        for i, p in enumerate(passages):
            if p.id in first:
                raise ValueError(f"duplicate passage id '{p.id}' (passages[{first[p.id]}] and passages[{i}])")
            first[p.id] = i
        return passages

    @field_validator("label", mode="before")
    @classmethod
    def _a_label(cls, value: Any) -> Any:
        if value not in LABELS:
            raise ValueError(f"must be one of {', '.join(LABELS)}, got {value!r}")
        return value

    def row(self, line: int | None) -> Row:
        passages = tuple(SourcePassage(id=p.id, doc_id=f"{self.id}/{p.id}", version=None, text=p.text, start=0,
                                       end=len(p.text)) for p in self.passages)
        return Row(self.id, self.claim, passages, self.label, self.source, self.lang, line)


# --- reading -----------------------------------------------------------------------------------------


def _parse_line(text: str, file: str, n: int) -> tuple[Row | None, list[Problem]]:
    reader = StrictJson()  # a repeated key, NaN, Infinity or a huge number is a problem, not a value
    try:
        data = reader.decode(text)
    except json.JSONDecodeError as err:
        return None, [Problem(file, n, "", f"not valid JSON: {err.msg} (column {err.colno})")]
    except RecursionError:
        return None, [Problem(file, n, "", "not valid JSON: nested too deeply")]
    found = [Problem(file, n, format_path(path), f"not valid JSON: {message}")
             for path, message in (refused(data) if reader.noticed else ())]
    if found:
        return None, found
    try:
        return RowFields.model_validate(data).row(n), []
    except ValidationError as err:
        return None, validation_problems(err, file, line_of=lambda loc: n)


def parse_rows(lines: Sequence[str], file: str = "<data>") -> list[Row]:
    """Rows from JSON lines (blank lines skipped); raises InputError with every problem found."""
    rows: list[Row] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row, found = _parse_line(line, file, n)
        problems += found
        if row is None:
            continue
        if row.id in first_line:
            problems.append(Problem(file, n, "id", f"duplicate id '{row.id}' (first on line {first_line[row.id]})"))
        first_line.setdefault(row.id, n)
        rows.append(row)
    if not rows and not problems:
        problems.append(Problem(file, None, "", "no rows"))
    if problems:
        raise InputError(problems)
    return rows


def load_rows(path: str | Path) -> list[Row]:
    """Read and check a DATA file; every bad row is reported as file:line: field: message."""
    p = Path(path)
    try:
        text = p.read_text(encoding=ENCODING)
    except OSError as err:
        raise InputError([Problem(str(path), None, "", f"cannot read: {err.strerror or err}")]) from None
    except UnicodeDecodeError as err:
        raise InputError([Problem(str(path), None, "", f"not UTF-8: {err.reason}")]) from None
    # "\n" only: str.splitlines would also break at U+2028 and friends, which JSON strings may hold raw
    return parse_rows(text.split("\n"), str(path))


def label_cases(cases: Sequence[ResolvedCase], rows: Sequence[Row]) -> tuple[list[ResolvedCase], list[Row]]:
    """Give the curated judge human labels from rows: a row becomes a curated label of every case that
    holds each of its passages, matched by id *and* text (for an ALCE file, the id is the marker
    number and the text is the document's text without its title). Returns the cases with the labels
    added beside their own, and the rows no case matched."""
    from citeaudit.records import CuratedLabel

    # rows by their first passage: a case is tried only against rows one of its passages can start
    by_first: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        by_first.setdefault((row.passages[0].id, row.passages[0].text), []).append(i)
    matched: set[int] = set()
    out = []
    for rc in cases:
        added = []
        candidates = sorted(i for p in rc.passages.values() for i in by_first.get((p.id, p.text), ()))
        for i in candidates:
            row = rows[i]
            if all(p.id in rc.passages and rc.passages[p.id].text == p.text for p in row.passages):
                added.append(CuratedLabel(claim=row.claim, passages=[p.id for p in row.passages], label=row.label,
                                          explanation=f"human label, row {row.id}"))
                matched.add(i)
        if added:
            rc = ResolvedCase(rc.case.model_copy(update={"labels": [*rc.case.labels, *added]}), rc.passages,
                              rc.origin, rc.parsed)
        out.append(rc)
    return out, [row for i, row in enumerate(rows) if i not in matched]
