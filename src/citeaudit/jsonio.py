"""JSON read more strictly than the json module reads it.

A key given twice, NaN or Infinity, a number too large to hold, and a lone surrogate (`"\\ud800"`, half
of a UTF-16 pair: no character, and no UTF-8 can hold it) are noted while decoding (the json module
would keep the last value, read Infinity, keep the half character until writing fails, or fail with a
traceback), so that a reader can report each at its path like any other input problem. The checks cost little: the json module's C scanner does
the reading, its hooks only note what they meet, and a decoded value is searched only when one did.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator
from json.decoder import scanstring
from pathlib import Path as FsPath
from typing import Any

from citeaudit.errors import InputError, Problem, format_path

Path = tuple[str | int, ...]
Spans = dict[Path, tuple[int, int]]


class _RepeatedKeys(dict):
    """An object whose text gives a key more than once (the json module would keep the last value)."""

    __slots__ = ("repeated",)


class _Refused:
    """Stands in for a value JSON text can spell but a case cannot hold: NaN, Infinity, a huge number."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's own four; str.isspace knows many more
# A lone surrogate can enter a decoded text only through an escape: a high one (\uD800-\uDBFF) not followed
# by a low one (\uDC00-\uDFFF), or a low one on its own (a pair decodes to one character, as json.dumps
# writes an emoji). Where the text has no such escape (nearly always), no decoded string is searched.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD](?:([89abAB])|[c-fC-F])[0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _may_hold_lone_surrogate(text: str) -> bool:
    """Whether the JSON `text` has a surrogate escape that is not half of a pair (an escaped backslash
    before "ud800" counts too: it only costs a search)."""
    for match in _SURROGATE_ESCAPE.finditer(text):
        high, low = match.group(1), match.group(2)
        if not (high and low):
            return True
    return False


def lone_surrogate(text: str) -> str | None:
    """What refuses a text holding a lone surrogate (half of a UTF-16 pair, no character: it cannot be
    written as UTF-8), or None."""
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    return (f"lone surrogate \\u{ord(found.group()):04x} at character {found.start()} (half of a UTF-16 pair, "
            "not a character)")


def _skip_space(text: str, pos: int) -> int:
    return _WHITESPACE.match(text, pos).end()


def _expect(char: str, text: str, pos: int) -> int:
    if not text.startswith(char, pos):
        raise json.JSONDecodeError(f"Expecting {char!r}", text, pos)
    return pos + 1


def _clip(number: str) -> str:
    return number if len(number) <= 24 else f"{number[:12]}…({len(number)} characters)"


class StrictJson:
    """Decodes JSON, noting what the json module would let through silently or fail on with a traceback."""

    def __init__(self) -> None:
        self.noticed = False  # a hook met something to report: only then is the decoded value searched
        self._decoder = json.JSONDecoder(object_pairs_hook=self._object, parse_constant=self._constant,
                                         parse_float=self._float, parse_int=self._int)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        self.noticed = True
        flagged = _RepeatedKeys(obj)
        flagged.repeated = [key for key, n in Counter(key for key, _ in pairs).items() if n > 1]
        return flagged

    def _constant(self, name: str) -> _Refused:
        self.noticed = True
        return _Refused(f"{name} is not allowed (JSON has no NaN or Infinity)")

    def _float(self, number: str) -> float | _Refused:
        value = float(number)
        if math.isinf(value):  # 1e999: the json module would read it as Infinity
            self.noticed = True
            return _Refused(f"number {_clip(number)} is too large")
        return value

    def _int(self, number: str) -> int | _Refused:
        try:
            return int(number)
        except ValueError:  # longer than Python converts (sys.get_int_max_str_digits())
            self.noticed = True
            return _Refused(f"integer of {len(number.lstrip('-'))} digits is too long "
                            f"(at most {sys.get_int_max_str_digits()})")

    def decode(self, text: str) -> Any:
        self.noticed = _may_hold_lone_surrogate(text)
        return self._decoder.decode(text)

    def read_file(self, text: str) -> tuple[Any, Spans]:
        """Decode a whole file, noting where each piece of its top levels starts and ends: the file's value
        at (), each item of a top-level array, and each member of a top-level object and item of its arrays.
        A case record is one of these pieces, so it can be checked and located on its own."""
        self.noticed = _may_hold_lone_surrogate(text)
        spans: Spans = {}
        start = _skip_space(text, 0)
        try:
            if text.startswith("[", start):
                value, end = self._array(text, start, (), spans)
            elif text.startswith("{", start):
                value, end = self._members(text, start, spans)
            else:
                value, end = self._decoder.raw_decode(text, start)
            if _skip_space(text, end) != len(text):
                raise json.JSONDecodeError("Extra data", text, end)
        except json.JSONDecodeError:
            self.decode(text)  # the json module's own message names the problem best
            raise
        spans[()] = (start, end)
        return value, spans

    def _array(self, text: str, pos: int, path: Path, spans: Spans) -> tuple[list[Any], int]:
        items: list[Any] = []
        pos = _skip_space(text, pos + 1)
        if text.startswith("]", pos):
            return items, pos + 1
        while True:
            item, end = self._decoder.raw_decode(text, pos)
            spans[path + (len(items),)] = (pos, end)
            items.append(item)
            pos = _skip_space(text, end)
            if text.startswith("]", pos):
                return items, pos + 1
            pos = _skip_space(text, _expect(",", text, pos))

    def _members(self, text: str, pos: int, spans: Spans) -> tuple[dict[str, Any], int]:
        pairs: list[tuple[str, Any]] = []
        pos = _skip_space(text, pos + 1)
        if text.startswith("}", pos):
            return self._object(pairs), pos + 1
        while True:
            key, pos = scanstring(text, _expect('"', text, pos))
            pos = _skip_space(text, _expect(":", text, _skip_space(text, pos)))
            if text.startswith("[", pos):
                value, end = self._array(text, pos, (key,), spans)
            else:
                value, end = self._decoder.raw_decode(text, pos)
            spans[(key,)] = (pos, end)
            pairs.append((key, value))
            pos = _skip_space(text, end)
            if text.startswith("}", pos):
                return self._object(pairs), pos + 1
            pos = _skip_space(text, _expect(",", text, pos))


def refused(value: Any) -> Iterator[tuple[Path, str]]:
    """Every repeated key, refused value and text holding a lone surrogate in a decoded value, with its
    path (searched without recursion)."""
    stack: list[tuple[Any, Path]] = [(value, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Refused):
            yield path, value.message
        elif isinstance(value, str):
            message = lone_surrogate(value)
            if message:
                yield path, message
        elif isinstance(value, dict):
            for key in getattr(value, "repeated", ()):
                yield path + (key,), f"duplicate key '{key}'"
            for key in value:
                message = lone_surrogate(key)
                if message:
                    yield path + (key,), f"key: {message}"
            stack.extend((v, path + (k,)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(value))


# --- where things are in a file ------------------------------------------------------------------
# Shared by citeaudit's own case files (loading.py) and other tools' files (readers/): the same
# nesting limit, the same file errors, the same line of a field.

# Levels of nesting one case record may use: its own fields take under ten, metadata has the rest. Well
# below what the json module, pydantic's serializer and the line locator can follow.
MAX_DEPTH = 100


# --- where things are ------------------------------------------------------------------------------

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRINGS = re.compile(_STRING)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_INNERMOST_PAIRS = re.compile(r"\[\]|\{\}")
_BRACKETS_OUTSIDE_STRINGS = re.compile(_STRING + r"|[\[\]{}]")
_LONG_DIGIT_RUNS = re.compile(f"({_STRING})|[0-9]{{100,}}")


def deeper_than(limit: int, text: str, start: int, end: int) -> bool:
    """Whether the valid JSON in text[start:end] nests more than `limit` levels (at C speed: no Python
    step per bracket, and mostly none at all: a short record has too few brackets to be that deep)."""
    if text.count("[", start, end) + text.count("{", start, end) <= limit:
        return False
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text[start:end]))
    for _ in range(limit):  # each pass removes the innermost level
        brackets = _INNERMOST_PAIRS.sub("", brackets)
        if not brackets:
            return False
    return True


def first_too_deep(text: str) -> int:
    """Where `text` first opens a level past MAX_DEPTH, valid JSON or not (0 if it never does)."""
    depth = 0
    for match in _BRACKETS_OUTSIDE_STRINGS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in ("]", "}"):
            depth -= 1
    return 0


def line_map(text: str) -> dict[str, int]:
    """JSON pointer -> 0-based line of the value, for valid JSON `text`."""
    from json_source_map import calculate

    try:
        source_map = calculate(text)
    except ValueError:  # the locator re-reads the text and cannot convert a huge integer: shorten those
        source_map = calculate(_LONG_DIGIT_RUNS.sub(lambda m: m.group(1) or "0", text))
    return {pointer: entry.value_start.line for pointer, entry in source_map.items()}


class JsonPiece:
    """The text of one JSON value inside its file, which it enters on line `line` (counted when first
    needed): finds the line of a field in it, backing off to the field's parent."""

    def __init__(self, text: str, start: int = 0, end: int | None = None, line: int | None = None):
        self._text, self._start, self._end = text, start, len(text) if end is None else end
        self._line = line
        self._map: dict[str, int] | None = None

    @property
    def source(self) -> str:
        return self._text[self._start : self._end]

    def line(self, path: Path = ()) -> int:
        if self._line is None:
            self._line = self._text.count("\n", 0, self._start) + 1
        if not path:
            return self._line
        if self._map is None:
            self._map = line_map(self.source)
        parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
        while parts:
            pointer = "".join("/" + p for p in parts)
            if pointer in self._map:
                return self._map[pointer] + self._line
            parts.pop()
        return self._line

    def json_problems(self, file: str, value: Any, shown: Path, noticed: bool) -> list[Problem]:
        """What strict JSON refuses in this piece, decoded as `value`; `noticed`: a hook met something."""
        if deeper_than(MAX_DEPTH, self._text, self._start, self._end):
            return [self.too_deep(file, shown)]
        if not noticed:
            return []
        return [Problem(file, self.line(path), format_path(shown + path), message)
                for path, message in refused(value)]

    def too_deep(self, file: str, shown: Path = ()) -> Problem:
        source = self.source
        line = self.line() + source.count("\n", 0, first_too_deep(source))
        return Problem(file, line, format_path(shown), f"nested too deeply (more than {MAX_DEPTH} levels)")


# Every text file citeaudit reads is UTF-8; a byte-order mark at its start (as Windows editors and
# spreadsheet programs write) is skipped, not read as a character: JSON has no place for one.
ENCODING = "utf-8-sig"


def read_text(path: str | FsPath) -> str:
    name = str(path)
    try:
        return FsPath(path).read_text(encoding=ENCODING)
    except FileNotFoundError:
        raise InputError([Problem(name, None, "", "file not found")]) from None
    except (UnicodeDecodeError, IsADirectoryError, PermissionError) as err:
        raise InputError([Problem(name, None, "", f"cannot read: {err}")]) from None


def decode_error(file: str, err: json.JSONDecodeError, line_offset: int = 0) -> Problem:
    return Problem(file, err.lineno + line_offset, "", f"malformed JSON: {err.msg} (column {err.colno})")
