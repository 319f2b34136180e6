"""Find citation markers in an answer and map them to passage ids.

A *marker* is a bracket whose every comma-separated item looks like a passage id:

    [1]  [1, 2]  [1-3]  [D1]  [S2,S3]  [D1-D3]  【1】  ［1］  [^1]  [^1^]

An item looks like an id when it is digits (``12``), letters followed by digits (``D1``, ``S12``),
a range of either (``1-3``, ``D1-D3``, ``D1-3``), or exactly one of the case's passage ids. Any
other bracket (``[sic]``, ``[citation needed]``, ``[TfO]``, ``[a, b]``) is ordinary text. Brackets
inside Markdown code (`` `x[1]` `` or fenced blocks) and on reference-definition lines
(``[1]: https://...``) are never markers.

Markers separated only by spaces or tabs (``[1][2]``, ``[1] [2]``) form one *cluster*: the
parser treats a cluster as one unit when it decides which sentence and which clause it belongs to.

How a numeric item is read (``numbering``):

* ``"id"``: always as a passage id, literally (``[2]`` cites the passage whose id is ``"2"``).
* ``"position"``: as a 1-based position in ``source_ids`` (``[2]`` cites ``source_ids[1]``).
* ``"auto"`` (default): literally when *any* source id is all digits, else by position. So with ids
  ``["1", "2"]`` or ``["3", "1", "2"]``, ``[1]`` cites ``"1"`` (a literal match wins); with ids
  ``["D1", "D2"]``, ``[1]`` cites ``"D1"``. The choice is made once per answer, never per marker:
  mixing the two readings inside one answer would silently misread ``[1]`` when the ids are, say,
  ``["12", "7", "3"]``; instead that answer gets an "unknown id" error.

Items with letters (``D1``) are always read literally.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

NUMBERINGS = ("auto", "position", "id")

# A bracket body: no nested brackets, no newline, short. Footnote carets are allowed on both sides
# (``[^1]`` Markdown footnotes, ``[^1^]`` as Bing chat writes them).
_BRACKET = re.compile(
    r"\[\^?(?P<a>[^\[\]\n^]{1,120})\^?\]"  # [..] [^..] [^..^]
    r"|【(?P<b>[^【】\n]{1,120})】"  # full-width lenticular brackets
    r"|［(?P<c>[^［］\n]{1,120})］"  # full-width square brackets
)
_ITEM_SEP = re.compile(r"\s*[,，、;；]\s*")
_ID = r"[A-Za-z]{0,4}\d+"
_ID_TOKEN = re.compile(r"(?P<prefix>[A-Za-z]{0,4})(?P<num>\d+)")
_RANGE = re.compile(
    rf"(?P<lo>{_ID})\s*[-\u2010-\u2015~～]\s*(?P<hi>{_ID})"  # 1-3, 1–3, D1-D3, D1-3
)
_SINGLE = re.compile(_ID)
_MAX_RANGE = 200  # a longer range is almost certainly not a citation ([1-1000])

# Inline code and fenced code blocks: brackets there are code (``arr[1]``), not citations.
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]+`", re.S)
# A Markdown reference or footnote definition: "[1]: https://..." or "[^1]: text" at line start.
_DEFINITION_LINE = re.compile(r"(?m)^[ \t]{0,3}\[\^?[^\[\]\n^]{1,40}\^?\]:[ \t].*$")


@dataclass(frozen=True)
class Marker:
    """One bracket that cites passages. ``start``/``end`` index the original answer text."""

    start: int
    end: int
    raw: str
    ids: tuple[str, ...]
    invalid: tuple[str, ...] = ()  # items naming no passage, as "[9]" (kept only when counted)


@dataclass(frozen=True)
class Cluster:
    """Adjacent markers ("[1][2]", "[1] [2]") treated as one unit; ids de-duplicated in order."""

    start: int
    end: int
    markers: tuple[Marker, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for m in self.markers for i in m.ids))

    @property
    def invalid(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for m in self.markers for i in m.invalid))


@dataclass(frozen=True)
class MarkerProblem:
    offset: int
    message: str


def excluded_regions(text: str) -> list[tuple[int, int]]:
    """Stretches of the answer where brackets are never markers (code, reference definitions)."""
    regions = [m.span() for m in _CODE.finditer(text)]
    regions += [m.span() for m in _DEFINITION_LINE.finditer(text)]
    return sorted(regions)


def definition_lines(text: str) -> list[tuple[int, int]]:
    """Reference/footnote definition lines ("[1]: https://..."): not statements of the answer."""
    return [m.span() for m in _DEFINITION_LINE.finditer(text)]


class _Reader:
    """Turns bracket items into passage ids, collecting problems instead of raising."""

    def __init__(self, source_ids: Sequence[str], numbering: str):
        if numbering not in NUMBERINGS:
            raise ValueError(f"numbering must be one of {', '.join(NUMBERINGS)}, not {numbering!r}")
        self.ids = list(source_ids)
        self.known = set(self.ids)
        if numbering == "auto":
            numbering = "id" if any(i.isdigit() for i in self.ids) else "position"
        self.by_position = numbering == "position"

    def is_item(self, item: str) -> bool:
        """Does this bracket item look like a citation (whether or not the id exists)?"""
        return item in self.known or bool(_SINGLE.fullmatch(item) or _RANGE.fullmatch(item))

    def resolve(self, item: str) -> tuple[list[str], str | None]:
        """The passage ids an item names, or an error message."""
        if item in self.known and not (self.by_position and item.isdigit()):
            return [item], None  # a literal id, whatever its shape ("D1", "1", "returns-policy")
        rng = _RANGE.fullmatch(item)
        if rng:
            lo, hi = _ID_TOKEN.fullmatch(rng["lo"]), _ID_TOKEN.fullmatch(rng["hi"])
            assert lo and hi
            prefix = lo["prefix"]
            if hi["prefix"] not in ("", prefix):
                return [], f"range '{item}' mixes prefixes '{prefix}' and '{hi['prefix']}'"
            a, b = int(lo["num"]), int(hi["num"])
            if b < a:
                return [], f"range '{item}' runs backwards"
            if b - a >= _MAX_RANGE:
                return [], f"range '{item}' is too long to be a citation"
            out: list[str] = []
            for n in range(a, b + 1):
                ids, err = self.resolve(f"{prefix}{n}")
                if err:
                    return [], f"in range '{item}': {err}"
                out += ids
            return out, None
        if item.isdigit() and self.by_position:
            n = int(item)
            if 1 <= n <= len(self.ids):
                return [self.ids[n - 1]], None
            have = f"only {len(self.ids)} passage id(s) are given" if self.ids else "no passage ids are given"
            return [], f"citation [{item}] points to passage {n} by position, but {have}"
        known = ", ".join(self.ids[:8]) + (", ..." if len(self.ids) > 8 else "")
        return [], f"unknown passage id '{item}' (known: {known or 'none'})"


def find_markers(
    text: str, source_ids: Sequence[str], numbering: str = "auto", keep_invalid: bool = False
) -> tuple[list[Marker], list[MarkerProblem]]:
    """Every citation marker in ``text`` with its passage ids, and every marker that cannot be read.

    Problems are collected, not raised, so that a caller can report all of them at once. With
    ``keep_invalid``, an item that names no passage (``[9]`` with five passages, ``[2019]``) is no
    problem: its marker keeps it in ``invalid`` (as ``"[9]"``), to be counted as a citation that
    supports nothing.
    """
    reader = _Reader(source_ids, numbering)
    skip = excluded_regions(text)
    markers: list[Marker] = []
    problems: list[MarkerProblem] = []
    for m in _BRACKET.finditer(text):
        if any(a <= m.start() < b for a, b in skip):
            continue
        body = (m["a"] or m["b"] or m["c"] or "").strip()
        items = [i for i in _ITEM_SEP.split(body)]
        if not items or not all(i and reader.is_item(i) for i in items):
            continue  # ordinary bracketed text
        ids: list[str] = []
        errors: list[str] = []
        invalid: list[str] = []
        for item in items:
            got, err = reader.resolve(item)
            if err:
                errors.append(err)
                invalid.append(f"[{item}]")
            ids += got
        if errors and not keep_invalid:
            problems.append(MarkerProblem(m.start(), f"citation marker '{m.group()}': " + "; ".join(errors)))
            continue
        markers.append(Marker(m.start(), m.end(), m.group(), tuple(dict.fromkeys(ids)), tuple(dict.fromkeys(invalid))))
    return markers, problems


def cluster_markers(text: str, markers: Sequence[Marker]) -> list[Cluster]:
    """Group markers separated only by spaces/tabs into clusters, in text order."""
    clusters: list[list[Marker]] = []
    for m in markers:
        if clusters and text[clusters[-1][-1].end : m.start].strip(" \t") == "":
            clusters[-1].append(m)
        else:
            clusters.append([m])
    return [Cluster(c[0].start, c[-1].end, tuple(c)) for c in clusters]
