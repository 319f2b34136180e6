"""What every reader shares: the record it yields, strict JSON and JSON lines with lines located, and a
checked view of one input record that reports each problem at its field's line, in the input's own terms.

A reader checks the fields it maps (type, presence, non-empty source text) itself, so that a malformed
row is reported as `run.json:12: data[3].docs[1].text: field required`, naming the original field,
rather than as a field of the case it would have become.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from citeaudit.errors import InputError, Problem, format_path
from citeaudit.jsonio import MAX_DEPTH, JsonPiece, StrictJson, decode_error, read_text, refused
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.records import Statement

Path = tuple[str | int, ...]
LineOf = Callable[[Path], "int | None"]

_MISSING: Any = object()


@dataclass(frozen=True)
class ReadRecord:
    """One case read from another tool's file, and where it came from."""

    case: dict[str, Any]  # a case in citeaudit's JSON form, validated later with Case.model_validate
    line: int | None  # the line where the record starts (JSON lines: its line), or None (Parquet, Arrow)
    where: str  # the record in the original file's terms: "data[3]", "results[0]", "rows[5]", or ""


@dataclass(frozen=True)
class Reader:
    """A format citeaudit reads: its name, a one-line description, and its options (name -> meaning)."""

    name: str
    description: str
    options: Mapping[str, str]
    read: Callable[..., list[ReadRecord]]  # read(path, **options)
    # what the reader does to each case once it is resolved (its raw answers parsed), if anything
    resolved: Callable[[ResolvedCase], ResolvedCase] | None = None


def cite_every_passage(rc: ResolvedCase) -> ResolvedCase:
    """The case with every claim of every answer citing every passage of the case, in order: the reading
    of answers written without markers whose generator saw every passage. Statements that claim
    nothing (abstentions, greetings, headings) still cite nothing."""
    every = list(rc.passages)

    def citing(st: Statement) -> Statement:
        if st.kind != "claim":
            return st
        claims = None if st.claims is None else [c.model_copy(update={"citations": None}) for c in st.claims]
        return st.model_copy(update={"citations": every, "claims": claims})

    answers = [a.model_copy(update={"statements": [citing(st) for st in a.statements]}) for a in rc.case.answers]
    rc.case = rc.case.model_copy(update={"answers": answers})
    return rc


# --- options -----------------------------------------------------------------------------------------


def option_choice(file: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise InputError([Problem(file, None, "", f"option {name}={value!r}: expected one of {', '.join(choices)}")])
    return value


def option_flag(file: str, name: str, value: Any) -> bool:
    """A yes/no option, given as a bool or as text (options on the command line are text)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InputError([Problem(file, None, "", f"option {name}={value!r}: expected true or false")])


def option_text(file: str, name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError([Problem(file, None, "", f"option {name}={value!r}: expected a non-empty text")])
    return value


# --- reading files -----------------------------------------------------------------------------------


class JsonDocument:
    """A whole JSON file read strictly, with a line locator for each piece of its top levels (the file
    at (), each member of a top-level object, each item of a top-level array or of a member's array),
    and what strict JSON refused in it (a key given twice, NaN, a number too large), kept by path so
    that each record is reported on its own."""

    def __init__(self, path: str):
        self.file = path
        text = read_text(path)
        if not text.strip():
            raise InputError([Problem(path, None, "", "file is empty")])
        reader = StrictJson()
        try:
            self.data, spans = reader.read_file(text)
        except json.JSONDecodeError as err:
            raise InputError([decode_error(path, err)]) from None
        except RecursionError:
            raise InputError([Problem(path, None, "", f"nested too deeply (more than {MAX_DEPTH} levels)")]) from None
        self._pieces = {key: JsonPiece(text, start, end) for key, (start, end) in spans.items()}
        self._refused = list(refused(self.data)) if reader.noticed else []

    def line_of(self, prefix: Path) -> LineOf:
        """The line locator of the record at `prefix` (paths relative to the record)."""
        if prefix in self._pieces:
            return self._pieces[prefix].line
        return lambda path=(): self._line(prefix + tuple(path))

    def _line(self, key: Path) -> int:
        """The line of `key`, found in the smallest located piece that holds it."""
        for n in range(len(key), -1, -1):
            if key[:n] in self._pieces:
                return self._pieces[key[:n]].line(key[n:])
        return 1

    def problems_in(self, prefix: Path, value: Any) -> list[Problem]:
        """What strict JSON refused inside the record at `prefix`, or its nesting too deep."""
        if prefix in self._pieces:  # a record of the file's top levels: checked as a case file's are
            return self._pieces[prefix].json_problems(self.file, value, prefix, bool(self._refused))
        return [Problem(self.file, self._line(path), format_path(path), message)
                for path, message in self._refused if path[: len(prefix)] == prefix]

    def problems_outside(self, prefixes: list[Path]) -> list[Problem]:
        """What strict JSON refused outside every record (in the file's own wrapper fields)."""
        return [Problem(self.file, self._line(path), format_path(path), message) for path, message in self._refused
                if not any(path[: len(p)] == p for p in prefixes)]


def read_json_lines(path: str) -> Iterator[tuple[int, Any, LineOf] | Problem]:
    """Each non-blank line of a JSON lines file, decoded strictly: (line number, value, line locator),
    or the Problem that line has. Split at "\\n" only, as citeaudit's own JSON lines are."""
    text = read_text(path)
    reader = StrictJson()
    for n, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            value = reader.decode(line)
        except json.JSONDecodeError as err:
            yield decode_error(path, err, n - 1)
            continue
        except RecursionError:
            yield Problem(path, n, "", f"nested too deeply (more than {MAX_DEPTH} levels)")
            continue

        def line_of(_: Path = (), n: int = n) -> int:
            return n

        found = JsonPiece(line, line=n).json_problems(path, value, (), reader.noticed)
        if found:
            yield from found
        else:
            yield n, value, line_of


# --- one record, checked -----------------------------------------------------------------------------


def kind_of(value: Any) -> str:
    """What a JSON value is, for a message: "a text", "a list", "null"..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Fields:
    """One input record: reads its fields and reports each problem at the field's path and line.

    `prefix` is the record's place in its file ("data", 3), shown before every field's path;
    `line_of(path)` gives the line of a field inside the record (or None where lines mean nothing).
    """

    def __init__(self, file: str, value: Any, prefix: Path, line_of: Callable[..., int | None]):
        self.file, self.value, self.prefix, self._line_of = file, value, prefix, line_of
        self.problems: list[Problem] = []

    @property
    def line(self) -> int | None:
        return self._line_of(())

    @property
    def where(self) -> str:
        return format_path(self.prefix)

    def problem(self, path: Path, message: str) -> None:
        self.problems.append(Problem(self.file, self._line_of(path), format_path(self.prefix + path), message))

    def get(self, path: Path, default: Any = _MISSING) -> Any:
        """The value at `path` in the record, or `default` when a step is missing (no problem noted)."""
        value = self.value
        for step in path:
            if isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value):
                value = value[step]
            elif isinstance(step, str) and isinstance(value, dict) and step in value:
                value = value[step]
            else:
                return default
        return value

    def is_object(self, path: Path = ()) -> bool:
        value = self.get(path)
        if isinstance(value, dict):
            return True
        self.problem(path, "field required" if value is _MISSING else f"expected an object, got {kind_of(value)}")
        return False

    def _present(self, path: Path, required: bool, expected: str) -> Any:
        """The field's value; _MISSING when it is absent or null (a problem only when `required`, and
        one that says which: a null field is there, so "field required" would send the user looking)."""
        value = self.get(path)
        if value is None or value is _MISSING:
            if required:
                self.problem(path, "field required" if value is _MISSING else f"expected {expected}, got null")
            return _MISSING
        return value

    def text(self, path: Path, *, required: bool = True, source: bool = False) -> str | None:
        """A text field. `source`: it becomes a source's text, which must hold more than whitespace.
        An optional field may be absent or null."""
        value = self._present(path, required, "a text")
        if value is _MISSING:
            return None
        if not isinstance(value, str):
            self.problem(path, f"expected a text, got {kind_of(value)}")
            return None
        if source and not value.strip():
            self.problem(path, "empty text: a source needs text to be judged against")
            return None
        return value

    def identifier(self, path: Path, *, required: bool = True) -> str | None:
        """An id: a non-empty text, or an integer (read as its decimal text)."""
        value = self._present(path, required, "a text or an integer id")
        if value is _MISSING:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            self.problem(path, f"expected a text or an integer id, got {kind_of(value)}")
            return None
        if not value.strip():
            self.problem(path, "empty id")
            return None
        return value

    def items(self, path: Path, *, required: bool = True) -> list[Any] | None:
        """A list field (its items unchecked). An optional one may be absent or null."""
        value = self._present(path, required, "a list")
        if value is _MISSING:
            return None
        if not isinstance(value, list):
            self.problem(path, f"expected a list, got {kind_of(value)}")
            return None
        return value

    def texts(self, path: Path, *, required: bool = True, source: bool = False) -> list[str] | None:
        """A list of texts; each a source's text when `source`."""
        items = self.items(path, required=required)
        if items is None:
            return None
        before = len(self.problems)
        out = [self.text(path + (i,), source=source) for i in range(len(items))]
        return None if len(self.problems) > before else [t for t in out if t is not None]


def others(record: Mapping[str, Any], mapped: set[str]) -> dict[str, Any]:
    """The fields of `record` a reader did not map, kept as they are (in case metadata)."""
    return {key: value for key, value in record.items() if key not in mapped}


def wrapped_list(path: str, doc: JsonDocument, key: str, not_this_format: str, items: str) -> list[Any]:
    """`doc.data[key]`, a tool's list of records inside its wrapper object; a located error otherwise."""
    if not isinstance(doc.data, dict) or key not in doc.data:
        raise InputError([Problem(path, 1, "", not_this_format)])
    value = doc.data[key]
    if not isinstance(value, list):
        raise InputError([Problem(path, doc.line_of((key,))(), key, f"expected a list of {items}")])
    return value


def read_items(path: str, doc: JsonDocument, key: str, items: list[Any],
               build: Callable[[Fields, int], dict[str, Any] | None]) -> list[ReadRecord]:
    """One record per item of `doc.data[key]`, built by `build(fields, index)`; every problem of every
    item (and of the file around them) is raised together."""
    problems = doc.problems_outside([(key, i) for i in range(len(items))])
    records = []
    for i, item in enumerate(items):
        prefix = (key, i)
        found = doc.problems_in(prefix, item)
        if found:
            problems += found
            continue
        fields = Fields(path, item, prefix, doc.line_of(prefix))
        case = build(fields, i)
        problems += fields.problems
        if case is not None and not fields.problems:
            records.append(ReadRecord(case, fields.line, fields.where))
    raise_problems(problems)
    return records


def raise_problems(problems: list[Problem]) -> None:
    if problems:
        raise InputError(sorted(problems, key=lambda p: (p.line is None, p.line or 0)))
