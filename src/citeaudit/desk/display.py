"""What the desk sends for display when a text is long: a passage folded around its evidence spans, a
question or statement cut with a note of how much is left out. The page stays responsive and narrow
whatever the input (a 1 MB passage, a 20 MB question); scoring always reads the whole text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MAX_TEXT_SHOWN = 20_000  # a question, statement or claim longer than this is cut (an edit allows 20,000)
MAX_PASSAGE_SHOWN = 20_000  # a cited passage longer than this is folded around its evidence
CONTEXT = 1_500  # characters kept either side of an evidence span, and at a folded passage's start
PREVIEW = 600  # a passage card in the map shows its start only


def clip_text(text: str, limit: int = MAX_TEXT_SHOWN) -> str:
    """`text`, or its start and a note of how many characters are left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text) - limit:,} more characters not shown]"


def preview(text: str, limit: int = PREVIEW) -> dict[str, Any]:
    """A passage card's text: its start, with its whole length when cut."""
    if len(text) <= limit:
        return {"text": text}
    return {"text": text[:limit] + " …", "length": len(text)}


def fold_passage(text: str, spans: Iterable[Mapping[str, Any]], limit: int = MAX_PASSAGE_SHOWN,
                 context: int = CONTEXT, quotes: Iterable[str] = ()) -> dict[str, Any]:
    """A cited passage as the inspector shows it: whole when short; otherwise `pieces` (each with its
    `start` offset in the passage, so evidence spans still point into them): the passage's start and
    each evidence span with `context` characters either side, overlapping pieces merged. A judgment
    without a span (curated labels give none) is folded around where the statement's own words
    (`quotes`) appear in the passage, when they do."""
    if len(text) <= limit:
        return {"text": text}
    spans = list(spans)
    if not spans:
        for quote in quotes:
            at = text.find(quote) if quote.strip() else -1
            if at >= 0:
                spans.append({"start": at, "end": at + len(quote)})
    windows = [(0, context)]
    for span in spans:
        start, end = int(span.get("start", 0)), int(span.get("end", 0))
        if 0 <= start < end <= len(text):
            windows.append((max(0, start - context), min(len(text), end + context)))
    merged: list[list[int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces, budget = [], limit
    for start, end in merged:
        if budget <= 0:
            break
        end = min(end, start + budget)  # many spans: the pieces together stay within the limit
        pieces.append({"start": start, "text": text[start:end]})
        budget -= end - start
    return {"text": None, "length": len(text), "pieces": pieces}
