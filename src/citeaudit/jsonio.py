"""JSON read more strictly than the json module reads it.

A key given twice, NaN or Infinity, and a number too large to hold are noted while decoding (the json
module would keep the last value, read Infinity, or fail with a traceback), so that a reader can report
each at its path like any other input problem. The checks cost little: the json module's C scanner does
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
from typing import Any

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
        self.noticed = False
        return self._decoder.decode(text)

    def read_file(self, text: str) -> tuple[Any, Spans]:
        """Decode a whole file, noting where each piece of its top levels starts and ends: the file's value
        at (), each item of a top-level array, and each member of a top-level object and item of its arrays.
        A case record is one of these pieces, so it can be checked and located on its own."""
        self.noticed = False
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
    """Every repeated key and refused value in a decoded value, with its path (searched without recursion)."""
    stack: list[tuple[Any, Path]] = [(value, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Refused):
            yield path, value.message
        elif isinstance(value, dict):
            for key in getattr(value, "repeated", ()):
                yield path + (key,), f"duplicate key '{key}'"
            stack.extend((v, path + (k,)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(value))
