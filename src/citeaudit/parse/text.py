"""Marker-free cleaning that remembers original offsets; language detection is citeaudit.text's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.text import detect_language
from citeaudit.parse.markers import Cluster

__all__ = ["CLOSING", "Cleaned", "clean", "detect_language"]

# Punctuation that closes a clause or sentence: no space goes before it once a marker is removed.
CLOSING = set(".,;:!?)]}%…。，；：！？、）」』》”’")


@dataclass(frozen=True)
class Cleaned:
    """A stretch of the answer with markers removed and whitespace collapsed.

    ``origin[i]`` is the offset in the original answer of ``text[i]`` (for a space standing for a
    collapsed gap: the gap's first character). ``cuts`` gives, for each cluster removed, the index
    in ``text`` where it stood.
    """

    text: str
    origin: tuple[int, ...]
    cuts: tuple[tuple[int, Cluster], ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of ``text[start:end]`` (non-empty)."""
        return self.origin[start], self.origin[end - 1] + 1


def clean(text: str, start: int, end: int, clusters: Sequence[Cluster]) -> Cleaned:
    """Clean ``text[start:end]``: drop the clusters inside it and collapse whitespace.

    A removed marker leaves a single space only when it was set off by whitespace and the next
    character is not closing punctuation, or when it was glued between two Latin words:
    "80 °C [D1]." -> "80 °C.", "X [1] and Y" -> "X and Y", "上限【1】。" -> "上限。", "A【1】B" -> "AB",
    "word[1]next" -> "word next".
    """
    inside = [c for c in clusters if start <= c.start and c.end <= end]
    out: list[str] = []
    origin: list[int] = []
    cuts: list[tuple[int, Cluster]] = []
    i = start
    k = 0
    while i < end:
        ch = text[i]
        at_marker = k < len(inside) and inside[k].start == i
        if not (at_marker or ch.isspace()):
            out.append(ch)
            origin.append(i)
            i += 1
            continue
        # A gap: a run of whitespace and markers.
        gap_start = i
        spaced = had_marker = False
        while i < end:
            if k < len(inside) and inside[k].start == i:
                cuts.append((len(out), inside[k]))
                had_marker = True
                i = inside[k].end
                k += 1
            elif text[i].isspace():
                spaced = True
                i += 1
            else:
                break
        if not out or i >= end:
            continue  # leading or trailing gap: dropped
        nxt = text[i]
        if spaced:
            # Plain whitespace before punctuation is kept ("15 %"); a removed marker's is not.
            keep = not (had_marker and nxt in CLOSING)
        else:
            # A glued marker between two Latin words ("word[1]next") still separates them.
            keep = out[-1].isascii() and out[-1].isalnum() and nxt.isascii() and nxt.isalnum()
        if keep:
            out.append(" ")
            origin.append(gap_start)
    return Cleaned("".join(out), tuple(origin), tuple(cuts))
