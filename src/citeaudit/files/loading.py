"""Read case files (JSON or JSONL) and report every problem as `file:line: path.to.field: message`.

A JSON file holds one case, a list of cases, or `{"cases": [...]}`; a JSONL file holds one case per
line. All problems in all records are collected before anything is raised.

JSON is read more strictly than the json module reads it: a key given twice, NaN or Infinity, a number
too large to hold, a lone surrogate (`"\\ud800"`), and nesting deeper than MAX_DEPTH levels are problems
like any other, located at their line, never a silently kept value or a traceback. The checks cost
little: the json module's C scanner does the reading, its hooks only note what they meet, and a decoded
value is searched only when one did. A byte-order mark at the start of a file is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path as FsPath
from typing import Any

from pydantic import ValidationError

from citeaudit.errors import InputError, MissingDecomposition, Problem, format_path, validation_problems
from citeaudit.jsonio import (ENCODING, MAX_DEPTH, JsonPiece, StrictJson, decode_error, deeper_than, read_text,
                              refused)
from citeaudit.records import Case
from citeaudit.parse.resolve import Path, Reading, ResolvedCase, resolve

# --- files -----------------------------------------------------------------------------------------


def read_json_file(path: str | FsPath) -> Any:
    """A whole JSON file (a run log, a list of sources), read as strictly as a case file: any problem is an
    InputError naming the file and line. Each piece of its top levels (see `StrictJson.read_file`) may nest
    MAX_DEPTH levels, so a run log holds any case a case file may."""
    name = str(path)
    text = read_text(path)
    reader = StrictJson()
    try:
        data, spans = reader.read_file(text)
    except json.JSONDecodeError as err:
        raise InputError([decode_error(name, err)]) from None
    except RecursionError:
        raise InputError([JsonPiece(text).too_deep(name)]) from None
    holders = {key[:-1] for key in spans if key}
    problems = [JsonPiece(text, start, end).too_deep(name, key) for key, (start, end) in spans.items()
                if key not in holders and deeper_than(MAX_DEPTH, text, start, end)]
    if not problems and reader.noticed:
        whole = JsonPiece(text)
        problems = [Problem(name, whole.line(key), format_path(key), message) for key, message in refused(data)]
    if problems:
        raise InputError(sorted(problems, key=lambda p: p.line or 0))
    return data


_CaseRecord = tuple[Any, Path, JsonPiece]  # a decoded case record, its path as shown in messages, its text


def _records(file: str, text: str) -> tuple[list[_CaseRecord], list[Problem]]:
    """Split a file into decoded case records; records with a JSON problem are left out, reported."""
    if not text.strip():
        return [], [Problem(file, None, "", "file is empty: expected a case, a list of cases, or JSON lines")]
    reader = StrictJson()
    if not file.endswith(".jsonl"):
        try:
            return _json_records(file, text, reader)
        except json.JSONDecodeError as err:
            # Several top-level values on separate lines: read it as JSON lines.
            if err.msg != "Extra data":
                return [], [decode_error(file, err)]
        except RecursionError:
            return [], [JsonPiece(text).too_deep(file)]
    return _json_lines(file, text, reader)


def _json_records(file: str, text: str, reader: StrictJson) -> tuple[list[_CaseRecord], list[Problem]]:
    data, spans = reader.read_file(text)
    if isinstance(data, list):
        keys: list[Path] = [(i,) for i in range(len(data))]
    elif isinstance(data, dict) and isinstance(data.get("cases"), list) and "question" not in data:
        if getattr(data, "repeated", None):  # the wrapper's own keys: which "cases" was meant?
            whole = JsonPiece(text)
            return [], [Problem(file, whole.line((key,)), key, f"duplicate key '{key}'") for key in data.repeated]
        extra = [key for key in data if key != "cases"]
        if extra:  # a misspelt or misplaced field would otherwise be dropped without a word
            whole = JsonPiece(text)
            return [], [Problem(file, whole.line((key,)), key, "unexpected key beside 'cases' (the wrapper holds "
                                                               "only 'cases'; put per-case fields inside each case)")
                        for key in extra]
        keys = [("cases", i) for i in range(len(data["cases"]))]
    else:
        keys = [()]
    records: list[_CaseRecord] = []
    problems: list[Problem] = []
    line, counted = 1, 0
    for key in keys:
        start, end = spans[key]
        line += text.count("\n", counted, start)  # counted on from the last record: linear in the file
        counted = start
        value = data
        for part in key:
            value = value[part]
        shown = ("cases", key[-1]) if key else ()
        piece = JsonPiece(text, start, end, line)
        found = piece.json_problems(file, value, shown, reader.noticed)
        problems += found
        if not found:
            records.append((value, shown, piece))
    return records, problems


def _json_lines(file: str, text: str, reader: StrictJson) -> tuple[list[_CaseRecord], list[Problem]]:
    records: list[_CaseRecord] = []
    problems: list[Problem] = []
    # "\n" only: str.splitlines would also break at U+2028 and friends, which JSON strings may hold raw.
    for n, line in enumerate(text.split("\n"), 1):
        record, found = _json_line(file, n, line, reader)
        problems += found
        if record is not None:
            records.append(record)
    return records, problems


def _json_line(file: str, n: int, line: str, reader: StrictJson) -> tuple[_CaseRecord | None, list[Problem]]:
    """Line `n` of a JSON lines file, decoded (None for a blank line or one with a JSON problem)."""
    line = line.removesuffix("\r")
    if not line.strip():
        return None, []
    piece = JsonPiece(line, line=n)
    try:
        value = reader.decode(line)
    except json.JSONDecodeError as err:
        return None, [decode_error(file, err, n - 1)]
    except RecursionError:
        return None, [piece.too_deep(file)]
    found = piece.json_problems(file, value, (), reader.noticed)
    return (None if found else (value, (), piece)), found


def parse_cases(file: str, text: str, reading: Reading = Reading()) -> list[ResolvedCase]:
    """Validate and resolve every case in `text`; raise InputError listing all problems."""
    raw, problems = _records(file, text)
    return _resolved(file, [(record, shown, piece.line) for record, shown, piece in raw], problems, reading)


class _CaseIds:
    """The case ids of one file as its cases are read: an id read again is a problem at its line, naming
    the line where the case that has it first starts. Only that line is kept per id (no field is located
    in a sound file, and a streamed file is not held)."""

    def __init__(self, file: str, id_field: Path = ("id",)):
        self.file, self.id_field = file, id_field  # id_field: () where the id is made, not read from a field
        self.first: dict[str, int | None] = {}

    def check(self, rc: ResolvedCase, shown: Path, line_of: Callable[..., int | None]) -> list[Problem]:
        """[] for an id not read before, else the problem of reading it again."""
        if rc.id not in self.first:
            self.first[rc.id] = line_of()
            return []
        first = self.first[rc.id]
        where = f"of the case at line {first}" if first is not None else "of an earlier case"
        return [Problem(self.file, line_of(self.id_field), format_path(shown + self.id_field),
                        f"case id '{rc.id}' is also the id {where}")]


def _resolved(file: str, records: list[tuple[Any, tuple[str | int, ...], Callable[..., int | None]]],
              problems: list[Problem], reading: Reading, id_field: Path = ("id",)) -> list[ResolvedCase]:
    """Validate and resolve records (value, path shown in messages, line of a path within it)."""
    cases: list[ResolvedCase] = []
    ids = _CaseIds(file, id_field)
    for record, shown, line_of in records:
        resolved, found = _resolve_record(file, record, shown, line_of, reading)
        problems += found
        if resolved is not None:
            problems += ids.check(resolved, shown, line_of)
            cases.append(resolved)
    if not problems and not cases:
        problems.append(Problem(file, None, "", "no cases found"))
    if problems:
        raise InputError(sorted(problems, key=lambda p: p.line or 0))
    return cases


def _resolve_record(file: str, record: Any, shown: tuple[str | int, ...], line_of: Callable[..., int | None],
                    reading: Reading) -> tuple[ResolvedCase | None, list[Problem]]:
    """One decoded record validated and resolved: the case, or None and its problems."""
    if not isinstance(record, dict):
        return None, [Problem(file, line_of(), format_path(shown), "a case must be a JSON object")]
    try:
        case = Case.model_validate(record)
    except ValidationError as err:
        return None, validation_problems(err, file, shown, line_of)
    try:
        resolved, found = resolve(case, reading)
    except MissingDecomposition as err:  # a replayed claim split is missing: say where the answer is
        line = line_of(getattr(err, "path", ()))
        raise MissingDecomposition(f"{file}:{line}: {err}" if line else f"{file}: {err}") from None
    if found:
        return None, [Problem(file, line_of(path), format_path(shown + path), message) for path, message in found]
    resolved.origin = f"{file}:{line_of()}" if line_of() else file
    return resolved, []


def read_other_format(fmt: str, path: str, reading: Reading, **options: Any) -> list[ResolvedCase]:
    """Cases from another tool's file (ALCE, RAGChecker, RAGAS, ExpertQA, OpenTelemetry traces: readers/), validated and
    resolved like citeaudit's own, each problem located at the original record's line."""
    from citeaudit.files.readers import READERS, read

    records = read(fmt, path, **options)

    def line_of(line: int | None) -> Callable[..., int | None]:
        return lambda path=(): line

    cases = _resolved(path, [(r.case, _shown(r.where), line_of(r.line)) for r in records], [], reading, id_field=())
    finish = READERS[fmt].resolved
    return [finish(rc) for rc in cases] if finish else cases


def _shown(where: str) -> tuple[str | int, ...]:
    """"data[3]" -> ("data", 3): a record's place in its file, as a path prefix for messages."""
    parts: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", where):
        parts.append(int(index) if index else name)
    return tuple(parts)


def load_cases(paths: Iterable[str | FsPath], reading: Reading = Reading(), fmt: str | None = None,
               **options: Any) -> list[ResolvedCase]:
    """Load cases from files (citeaudit's format, or another tool's with `fmt`: see readers/); problems
    from all files are reported together."""
    cases: list[ResolvedCase] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            if fmt and fmt != "citeaudit":
                cases.extend(read_other_format(fmt, str(path), reading, **options))
            else:
                cases.extend(parse_cases(str(path), read_text(path), reading))
        except InputError as err:
            problems.extend(err.problems)
    if problems:
        raise InputError(problems)
    seen: dict[str, str] = {}
    for c in cases:
        if c.id in seen:
            problems.append(Problem(c.origin, None, "id", f"case id '{c.id}' is also used at {seen[c.id]}"))
        seen.setdefault(c.id, c.origin)
    if problems:
        raise InputError(problems)
    return cases


# --- one case at a time ------------------------------------------------------------------------------


def streamable(paths: Iterable[str | FsPath], fmt: str | None = None) -> bool:
    """Can these files be read one case at a time? Citeaudit's own JSON lines files can."""
    return (not fmt or fmt == "citeaudit") and all(str(p).endswith(".jsonl") for p in paths)


def each_case(paths: Iterable[str | FsPath], reading: Reading = Reading()) -> Iterator[ResolvedCase]:
    """The cases of `load_cases(paths)`, yielded as they are read: a JSON lines file is read one line at a
    time and never held whole (any other file is read whole). Every valid case is yielded; once all files
    are read, the problems are raised as one InputError, exactly those `load_cases` reports. A consumer
    that must not act on a bad file reads it through once to check it, and again to use it."""
    paths = list(paths)
    problems: list[Problem] = []
    first_seen: dict[str, str] = {}  # case id -> where it was first read (across files; one file checks its own)
    across: list[Problem] = []
    for path in paths:
        try:
            for rc in _each_case_in(str(path), reading):
                if len(paths) > 1:
                    if rc.id in first_seen:
                        across.append(Problem(rc.origin, None, "id",
                                              f"case id '{rc.id}' is also used at {first_seen[rc.id]}"))
                    first_seen.setdefault(rc.id, rc.origin)
                yield rc
        except InputError as err:
            problems.extend(err.problems)
    if problems:
        raise InputError(problems)
    if across:
        raise InputError(across)


def each_checked_case(paths: Iterable[str | FsPath], reading: Reading = Reading()) -> Iterator[ResolvedCase]:
    """The cases of files that `each_case` has read through without a problem, read again faster: each JSON
    line is decoded and validated in one step by pydantic (`Case.model_validate_json`), and nothing is
    searched for problems already ruled out (keys given twice, NaN, ids used twice). A line that fails to
    validate or resolve all the same (the file changed since) is read the careful way, so its problems are
    reported as usual."""
    for path in paths:
        file = str(path)
        if not file.endswith(".jsonl"):
            yield from parse_cases(file, read_text(file), reading)
            continue
        with open(file, encoding=ENCODING) as fh:
            for n, line in enumerate(fh, 1):
                if line.isspace() or not line:
                    continue
                try:
                    rc, found = resolve(Case.model_validate_json(line), reading)
                except (ValidationError, MissingDecomposition):
                    rc, found = None, True
                if found:
                    rc = _checked_again(file, n, line.removesuffix("\n"), reading)
                rc.origin = f"{file}:{n}"
                yield rc


def _checked_again(file: str, n: int, line: str, reading: Reading) -> ResolvedCase:
    """Line `n` read as `each_case` reads it: its case, or an InputError with its problems."""
    record, problems = _json_line(file, n, line, StrictJson())
    rc = None
    if record is not None:
        value, shown, piece = record
        rc, problems = _resolve_record(file, value, shown, piece.line, reading)
    if rc is None:
        raise InputError(sorted(problems, key=lambda p: p.line or 0))
    return rc


def _each_case_in(file: str, reading: Reading) -> Iterator[ResolvedCase]:
    if not file.endswith(".jsonl"):
        yield from parse_cases(file, read_text(file), reading)
        return
    reader = StrictJson()
    problems: list[Problem] = []
    ids = _CaseIds(file)
    blank, count = True, 0
    try:
        # Text mode reads newlines as read_text does ("\r\n" and "\r" become "\n"), so lines are numbered alike.
        with open(file, encoding=ENCODING) as fh:
            for n, line in enumerate(fh, 1):
                line = line.removesuffix("\n")
                blank = blank and not line.strip()
                record, found = _json_line(file, n, line, reader)
                problems += found
                if record is None:
                    continue
                value, shown, piece = record
                rc, found = _resolve_record(file, value, shown, piece.line, reading)
                problems += found
                if rc is None:
                    continue
                count += 1
                problems += ids.check(rc, shown, piece.line)
                yield rc
    except (OSError, UnicodeDecodeError):
        read_text(file)  # raises the problem as reading the file whole reports it
        raise
    if blank:
        raise InputError([Problem(file, None, "", "file is empty: expected a case, a list of cases, or JSON lines")])
    if not problems and not count:
        problems.append(Problem(file, None, "", "no cases found"))
    if problems:
        raise InputError(sorted(problems, key=lambda p: p.line or 0))
