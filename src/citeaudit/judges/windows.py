"""Cut long passages into overlapping windows on sentence boundaries; never truncate silently.

A model reads at most so many tokens. A passage that does not fit is cut into windows of whole
sentences (`citeaudit.text.rule_sentence_spans`: the edges the judges were measured with), each window
overlapping the previous one by a sentence, so that a claim supported across a sentence boundary is
still seen whole. Only a single sentence longer than the budget is cut inside the sentence, and the
window says so (`cut=True`).

Cutting a passage asks for the token count of many of its spans (each sentence, each growing window).
`TokenSpans` answers them from ONE offset-mapped encoding of the passage instead of encoding every
span again, and gives the token ids of a window so the pair need not be encoded again either. Its
counts are exact, not estimates: a span edge that falls inside a word (where encoding the span alone
could give other word pieces) is answered by encoding the span, as before.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from citeaudit.records import SourcePassage
from citeaudit.text import rule_sentence_spans


# Told (windows read, windows in all) after each forward pass of a model judge's batch: a passage of
# megabytes is thousands of windows, minutes for one pair, and a command shows how far it is
# (`prepare`'s progress bar). Unset, nothing is told.
_window_progress: ContextVar[Callable[[int, int], None] | None] = ContextVar("window_progress", default=None)


@contextmanager
def windows_told(report: Callable[[int, int], None]) -> Iterator[None]:
    """Within the block, every model judge of this thread tells `report(done, total)` how many of its
    batch's windows it has read."""
    token = _window_progress.set(report)
    try:
        yield
    finally:
        _window_progress.reset(token)


def window_reporter() -> Callable[[int, int], None]:
    """What a judge calls after each forward pass: the reporter set by `windows_told`, or nothing."""
    return _window_progress.get() or (lambda done, total: None)


@dataclass(frozen=True)
class Window:
    passage: str  # passage id
    start: int  # character offsets into the passage text
    end: int
    text: str
    cut: bool = False


class Encoding(Protocol):
    """What `TokenSpans` reads of a `tokenizers.Encoding` (made without special tokens)."""

    ids: list[int]
    offsets: list[tuple[int, int]]
    word_ids: list[int | None]


class TokenSpans:
    """Token counts and ids of any span of one text, from a single encoding of the whole text.

    Valid for tokenizers that split words apart before cutting them into pieces (BERT's WordPiece:
    whitespace and punctuation end a word, and normalising is per character): a span whose edges fall
    between two words holds exactly the tokens the whole text has there. An edge inside a word or a
    token, or an encoding holding a token of no word, is answered by `count` on the span's text (the
    exact count) and gives no ids.
    """

    def __init__(self, text: str, encoding: Encoding, count: Callable[[str], int]):
        self.text = text
        words = encoding.word_ids
        self._whole_words = None not in words
        # compact arrays: a judge remembers thousands of these
        self.ids = array("l", encoding.ids)
        starts, ends = zip(*encoding.offsets) if encoding.offsets else ((), ())
        self._starts, self._ends = array("l", starts), array("l", ends)
        self._words = array("l", words if self._whole_words else [-1 if w is None else w for w in words])
        self._exact = count

    def _between_words(self, edge: int) -> bool:
        """No token straddles `edge`, and the tokens either side of it belong to different words."""
        if edge <= 0 or edge >= len(self.text):
            return True
        k = bisect_left(self._starts, edge)  # the first token starting at or after the edge
        if k == 0 or k == len(self._starts):
            return k == 0 or self._ends[k - 1] <= edge
        return self._ends[k - 1] <= edge and self._words[k - 1] != self._words[k]

    def _tokens(self, start: int, end: int) -> tuple[int, int] | None:
        """The token range of text[start:end], or None where the single encoding cannot say."""
        if not (self._whole_words and self._between_words(start) and self._between_words(end)):
            return None
        return bisect_left(self._starts, start), bisect_right(self._ends, end)

    def count(self, start: int, end: int) -> int:
        found = self._tokens(start, end)
        if found is None:
            return self._exact(self.text[start:end])
        return max(0, found[1] - found[0])

    def token_ids(self, start: int, end: int) -> list[int] | None:
        """The ids encoding text[start:end] alone gives, or None where that needs its own encoding."""
        found = self._tokens(start, end)
        return None if found is None else self.ids[found[0]:found[1]].tolist()


def _cut_sentence(text: str, start: int, end: int, count: Callable[[int, int], int], budget: int) -> list[tuple[int, int]]:
    """Split one over-long sentence at word boundaries into pieces that fit (`count(s, e)`: tokens in
    text[s:e]); a "word" longer than the budget alone (a run of Chinese without spaces) is cut into as
    many characters as fit, however many pieces that takes."""
    pieces, piece_start = [], start
    last_fit = None
    for m in re.finditer(r"\S+", text[start:end]):
        stop = start + m.end()
        while count(piece_start, stop) > budget and stop - piece_start > 1:  # one character cannot be cut
            if last_fit is None:
                last_fit = _characters_that_fit(piece_start, stop, count, budget)
            pieces.append((piece_start, last_fit))
            piece_start, last_fit = last_fit, None
            while piece_start < stop and text[piece_start].isspace():
                piece_start += 1
        last_fit = stop
    if piece_start < end:
        pieces.append((piece_start, end))
    return pieces


def _characters_that_fit(start: int, stop: int, count: Callable[[int, int], int], budget: int) -> int:
    """The end of the longest text[start:end] (end < stop, at least one character) within `budget`: a
    character is mostly one token, sometimes more (or a word-start piece comes first)."""
    end = max(start + 1, min(stop - 1, start + budget))
    while end > start + 1 and count(start, end) > budget:
        end -= 1
    return end


def passage_windows(passage: SourcePassage, count: Callable[[str], int], budget: int,
                    overlap: int = 1, spans: TokenSpans | None = None) -> list[Window]:
    """Windows of whole sentences within `budget` tokens (by `count`), overlapping by `overlap` sentences.
    With `spans` (the passage's `TokenSpans`), spans are counted from its one encoding: the same counts."""
    text = passage.text
    span_count = spans.count if spans is not None else (lambda s, e: count(text[s:e]))
    if span_count(0, len(text)) <= budget:
        return [Window(passage.id, 0, len(text), text)]
    units: list[tuple[int, int, bool]] = []
    for s, e in rule_sentence_spans(text):
        if span_count(s, e) <= budget:
            units.append((s, e, False))
        else:
            units += [(ps, pe, True) for ps, pe in _cut_sentence(text, s, e, span_count, budget)]
    windows, i = [], 0
    while i < len(units):
        j = i + 1
        while j < len(units) and span_count(units[i][0], units[j][1]) <= budget:
            j += 1
        s, e = units[i][0], units[j - 1][1]
        windows.append(Window(passage.id, s, e, text[s:e], any(u[2] for u in units[i:j])))
        if j >= len(units):
            break
        i = max(i + 1, j - overlap)
    return windows


def set_windows(passages: Sequence[SourcePassage], count: Callable[[str], int], budget: int,
                joiner: str = "\n", spans: Callable[[SourcePassage], TokenSpans] | None = None) -> list[list[Window]]:
    """What a model reads for a cited set: the whole set at once when it fits (ALCE joins the cited
    passages), else each window of each passage on its own. Each item is a list of windows to join.
    With `spans` (a passage's `TokenSpans`) and a whitespace joiner, the set's count is the sum of its
    passages' counts (whitespace ends a word, so joining adds and merges no token)."""
    if spans is not None and joiner.isspace():
        whole_count = sum(spans(p).count(0, len(p.text)) for p in passages)
    else:
        whole_count = count(joiner.join(p.text for p in passages))
    if whole_count <= budget:
        return [[Window(p.id, 0, len(p.text), p.text) for p in passages]]
    return [[w] for p in passages
            for w in passage_windows(p, count, budget, spans=spans(p) if spans is not None else None)]
