"""Read case files (JSON or JSONL) and report every problem as `file:line: path.to.field: message`.

A JSON file holds one case, a list of cases, or `{"cases": [...]}`; a JSONL file holds one case per
line. All problems in all records are collected before anything is raised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path as FsPath
from typing import Any

from pydantic import ValidationError

from .errors import InputError, Problem, format_path, validation_problems
from .records import Case
from .resolve import Path, ResolvedCase, resolve


class _Locator:
    """Maps a path inside a parsed JSON text to its line (1-based), backing off to the parent."""

    def __init__(self, text: str, line_offset: int = 0):
        self._text = text
        self._offset = line_offset
        self._map: dict[str, int] | None = None

    def line(self, path: Path) -> int:
        if self._map is None:
            from json_source_map import calculate

            self._map = {k: v.value_start.line for k, v in calculate(self._text).items()}
        parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
        while True:
            pointer = "".join("/" + p for p in parts)
            if pointer in self._map:
                return self._map[pointer] + 1 + self._offset
            if not parts:
                return 1 + self._offset
            parts.pop()


def read_json_file(path: str | FsPath) -> Any:
    """A whole JSON file; a missing file or malformed JSON is an InputError naming the file and line."""
    name = str(path)
    try:
        return json.loads(FsPath(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError([Problem(name, None, "", "file not found")]) from None
    except (UnicodeDecodeError, IsADirectoryError, PermissionError) as err:
        raise InputError([Problem(name, None, "", f"cannot read: {err}")]) from None
    except json.JSONDecodeError as err:
        raise InputError([_decode_error(name, err)]) from None


def _decode_error(file: str, err: json.JSONDecodeError, line_offset: int = 0) -> Problem:
    return Problem(file, err.lineno + line_offset, "", f"malformed JSON: {err.msg} (column {err.colno})")


def _records(file: str, text: str) -> tuple[list[tuple[Any, _Locator, Path]], list[Problem]]:
    """Split a file into raw case records, each with a locator and its path prefix."""
    if not text.strip():
        return [], [Problem(file, None, "", "file is empty: expected a case, a list of cases, or JSON lines")]
    is_jsonl = file.endswith(".jsonl")
    if not is_jsonl:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            # Several top-level values on separate lines: read it as JSON lines.
            if err.msg != "Extra data":
                return [], [_decode_error(file, err)]
            is_jsonl = True
        else:
            loc = _Locator(text)
            if isinstance(data, list):
                return [(rec, loc, (i,)) for i, rec in enumerate(data)], []
            if isinstance(data, dict) and isinstance(data.get("cases"), list) and "question" not in data:
                return [(rec, loc, ("cases", i)) for i, rec in enumerate(data["cases"])], []
            return [(data, loc, ())], []
    records, problems = [], []
    for n, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            records.append((json.loads(line), _Locator(line, n), ()))
        except json.JSONDecodeError as err:
            problems.append(_decode_error(file, err, n))
    return records, problems


def _display_prefix(prefix: Path) -> Path:
    return ("cases",) + prefix[-1:] if prefix else ()


def parse_cases(file: str, text: str) -> list[ResolvedCase]:
    """Validate and resolve every case in `text`; raise InputError listing all problems."""
    raw, problems = _records(file, text)
    cases: list[ResolvedCase] = []
    for record, loc, prefix in raw:
        shown = _display_prefix(prefix)
        if not isinstance(record, dict):
            problems.append(Problem(file, loc.line(prefix), format_path(shown), "a case must be a JSON object"))
            continue
        try:
            case = Case.model_validate(record)
        except ValidationError as err:
            problems += validation_problems(err, file, shown, lambda path: loc.line(prefix + path))
            continue
        resolved, found = resolve(case)
        for path, message in found:
            problems.append(Problem(file, loc.line(prefix + path), format_path(shown + path), message))
        if not found:
            resolved.origin = f"{file}:{loc.line(prefix)}"
            cases.append(resolved)
    if not problems and not cases:
        problems.append(Problem(file, None, "", "no cases found"))
    if problems:
        raise InputError(sorted(problems, key=lambda p: p.line or 0))
    ids = [c.id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError([Problem(file, None, "", f"case id '{d}' is used twice") for d in dup])
    return cases


def load_cases(paths: Iterable[str | FsPath]) -> list[ResolvedCase]:
    """Load cases from files; problems from all files are reported together."""
    cases: list[ResolvedCase] = []
    problems: list[Problem] = []
    for path in paths:
        name = str(path)
        try:
            text = FsPath(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            problems.append(Problem(name, None, "", "file not found"))
            continue
        except (UnicodeDecodeError, IsADirectoryError, PermissionError) as err:
            problems.append(Problem(name, None, "", f"cannot read: {err}"))
            continue
        try:
            cases.extend(parse_cases(name, text))
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
