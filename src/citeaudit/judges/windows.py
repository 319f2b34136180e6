"""Cut long passages into overlapping windows on sentence boundaries; never truncate silently.

A model reads at most so many tokens. A passage that does not fit is cut into windows of whole
sentences (`citeaudit.text.rule_sentence_spans`: the edges the judges were measured with), each window
overlapping the previous one by a sentence, so that a claim supported across a sentence boundary is
still seen whole. Only a single sentence longer than the budget is cut inside the sentence, and the
window says so (`cut=True`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..records import SourcePassage
from ..text import rule_sentence_spans


@dataclass(frozen=True)
class Window:
    passage: str  # passage id
    start: int  # character offsets into the passage text
    end: int
    text: str
    cut: bool = False


def _cut_sentence(text: str, start: int, end: int, count: Callable[[str], int], budget: int) -> list[tuple[int, int]]:
    """Split one over-long sentence at word boundaries into pieces that fit."""
    pieces, piece_start = [], start
    words = [m.end() for m in re.finditer(r"\S+", text[start:end])]
    last_fit = None
    for w_end in words:
        stop = start + w_end
        if count(text[piece_start:stop]) <= budget:
            last_fit = stop
            continue
        if last_fit is None:  # a single "word" over budget (CJK runs): cut by characters
            last_fit = piece_start + max(1, budget)
        pieces.append((piece_start, last_fit))
        piece_start, last_fit = last_fit, None
        while piece_start < stop and text[piece_start].isspace():
            piece_start += 1
        if count(text[piece_start:stop]) <= budget:
            last_fit = stop
    if piece_start < end:
        pieces.append((piece_start, end))
    return pieces


def passage_windows(passage: SourcePassage, count: Callable[[str], int], budget: int,
                    overlap: int = 1) -> list[Window]:
    """Windows of whole sentences within `budget` tokens (by `count`), overlapping by `overlap` sentences."""
    text = passage.text
    if count(text) <= budget:
        return [Window(passage.id, 0, len(text), text)]
    units: list[tuple[int, int, bool]] = []
    for s, e in rule_sentence_spans(text):
        if count(text[s:e]) <= budget:
            units.append((s, e, False))
        else:
            units += [(ps, pe, True) for ps, pe in _cut_sentence(text, s, e, count, budget)]
    windows, i = [], 0
    while i < len(units):
        j = i + 1
        while j < len(units) and count(text[units[i][0] : units[j][1]]) <= budget:
            j += 1
        s, e = units[i][0], units[j - 1][1]
        windows.append(Window(passage.id, s, e, text[s:e], any(u[2] for u in units[i:j])))
        if j >= len(units):
            break
        i = max(i + 1, j - overlap)
    return windows


def set_windows(passages: Sequence[SourcePassage], count: Callable[[str], int], budget: int,
                joiner: str = "\n") -> list[list[Window]]:
    """What a model reads for a cited set: the whole set at once when it fits (ALCE joins the cited
    passages), else each window of each passage on its own. Each item is a list of windows to join."""
    whole = joiner.join(p.text for p in passages)
    if count(whole) <= budget:
        return [[Window(p.id, 0, len(p.text), p.text) for p in passages]]
    return [[w] for p in passages for w in passage_windows(p, count, budget)]
