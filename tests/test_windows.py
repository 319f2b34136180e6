"""Passage windowing and the bounded cache judges remember windows and token counts in (no model needed:
a whitespace token count stands in for a tokenizer)."""

from __future__ import annotations

import pytest

from citeaudit.judges.cache import BoundedCache
from citeaudit.judges.windows import passage_windows, set_windows
from citeaudit.records import SourcePassage
from citeaudit.text import rule_sentence_spans


def words(text: str) -> int:
    return len(text.split())


def _p(text: str, pid: str = "P") -> SourcePassage:
    return SourcePassage(pid, "D", "v", text, 0, len(text))


@pytest.mark.parametrize("text, spans", [
    ("One. Two! Three?", ["One.", "Two!", "Three?"]),
    ("Version 3.1 ships. Dr. Smith agrees, e.g. on Fig. 2.", ["Version 3.1 ships.", "Dr. Smith agrees, e.g. on Fig. 2."]),
    ("First one. second one!  Third?\nFourth", ["First one.", "second one!", "Third?", "Fourth"]),
    ("He said “stop.” Then left.", ["He said “stop.”", "Then left."]),
    ("上限为80 °C。试点持续30天！", ["上限为80 °C。", "试点持续30天！"]),
    ("No end", ["No end"]),
    ("Energy fell 15%; downtime fell 10%.", ["Energy fell 15%;", "downtime fell 10%."]),
    ("Costs rose (see Fig. 3). Then fell.", ["Costs rose (see Fig. 3).", "Then fell."]),
])
def test_the_sentences_windows_are_made_of(text, spans):
    assert [text[s:e] for s, e in rule_sentence_spans(text)] == spans
    if len(spans) > 1:  # too long whole, every sentence fits alone: a window per sentence
        windows = passage_windows(_p(text), len, budget=max(map(len, spans)) + 1, overlap=0)
        assert [w.text for w in windows] == spans


def test_window_edges_are_sentence_edges():
    text = "Alpha is first; beta is second. Gamma follows.\nDelta ends it."
    edges = {e for _, e in rule_sentence_spans(text)} | {s for s, _ in rule_sentence_spans(text)}
    windows = passage_windows(_p(text), words, budget=4)
    assert len(windows) > 1 and not any(w.cut for w in windows)
    assert all(w.start in edges and w.end in edges for w in windows)
    # a semicolon ends a sentence here, as when the model judge was measured
    assert windows[0].text == "Alpha is first;"


def test_windows_cover_every_sentence_within_budget_and_overlap():
    text = " ".join(f"Sentence number {i} is here." for i in range(12))
    windows = passage_windows(_p(text), words, budget=12)
    assert len(windows) > 1 and all(words(w.text) <= 12 for w in windows)
    assert windows[0].start == 0 and windows[-1].end == len(text)
    covered = set()
    for w in windows:
        covered |= set(range(w.start, w.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    assert all(b.start < a.end for a, b in zip(windows, windows[1:]))  # consecutive windows overlap
    assert not any(w.cut for w in windows)
    assert all(w.text == text[w.start:w.end] for w in windows)


def test_a_passage_that_fits_is_one_window():
    text = "Short. Passage."
    assert passage_windows(_p(text), words, budget=10) == [passage_windows(_p(text), words, 10)[0]]
    (window,) = passage_windows(_p(text), words, budget=10)
    assert (window.start, window.end, window.text, window.cut) == (0, len(text), text, False)


def test_an_overlong_sentence_is_cut_and_flagged():
    text = "Short one. " + " ".join(["word"] * 30) + ". Tail."
    windows = passage_windows(_p(text), words, budget=10)
    assert any(w.cut for w in windows) and all(words(w.text) <= 10 for w in windows)
    assert not windows[0].cut and windows[0].text.startswith("Short one.")


def test_a_cited_set_is_read_whole_when_it_fits():
    a, b = _p("Alpha is one."), _p("Beta is two.", "Q")
    assert [[w.passage for w in ws] for ws in set_windows([a, b], words, 20)] == [["P", "Q"]]
    assert [[w.passage for w in ws] for ws in set_windows([a, b], words, 3)] == [["P"], ["Q"]]


# --- the bounded cache --------------------------------------------------------------------------------


def test_the_cache_forgets_the_least_recently_used_entry():
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)
    assert "b" not in cache and "a" in cache and "c" in cache and len(cache) == 2
    assert cache.get("b") is None


def test_get_or_compute_computes_once_while_remembered():
    calls: list[str] = []
    cache: BoundedCache[str, int] = BoundedCache(1)

    def count(text: str) -> int:
        calls.append(text)
        return len(text)

    assert cache.get_or_compute("abc", count) == 3 and cache.get_or_compute("abc", count) == 3
    assert calls == ["abc"]
    cache.get_or_compute("de", count)
    assert cache.get_or_compute("abc", count) == 3 and calls == ["abc", "de", "abc"]


def test_a_cache_holds_at_least_one_entry():
    with pytest.raises(ValueError, match="at least 1"):
        BoundedCache(0)


# --- counting spans from one encoding ------------------------------------------------------------------


class _WordEncoding:
    """A stand-in for a tokenizer's encoding: each word a token, and a word's hyphenated parts are
    pieces of one word (so an edge at a hyphen falls inside a word)."""

    def __init__(self, text: str):
        import re

        self.ids, self.offsets, self.word_ids = [], [], []
        for w, m in enumerate(re.finditer(r"\S+", text)):
            for part in re.finditer(r"[^-]+-?", m.group()):
                self.ids.append(len(self.ids))
                self.offsets.append((m.start() + part.start(), m.start() + part.end()))
                self.word_ids.append(w)


def _pieces(text: str) -> int:
    return sum(len(w.split("-")) - w.endswith("-") for w in text.split())


def test_token_spans_count_between_words_and_ask_inside_a_word():
    from citeaudit.judges.windows import TokenSpans

    text = "Alpha beta-gamma delta. Epsilon zeta."
    asked: list[str] = []

    def exact(span: str) -> int:
        asked.append(span)
        return _pieces(span)

    spans = TokenSpans(text, _WordEncoding(text), exact)
    assert spans.count(0, len(text)) == 6 and asked == []
    assert spans.count(6, 23) == 3 and spans.token_ids(6, 23) == [1, 2, 3] and asked == []
    # an edge at the hyphen (inside "beta-gamma"): answered by counting the span itself, no ids
    assert spans.count(11, 23) == 2 and asked == ["gamma delta."]
    assert spans.token_ids(11, 23) is None
    # an edge inside a token
    assert spans.count(2, 5) == 1 and asked[-1] == "pha"


def test_windows_from_token_spans_equal_windows_from_counting_each_span():
    from citeaudit.judges.windows import TokenSpans

    text = " ".join(f"Sentence number {i} is a well-formed one." for i in range(12)) + " " + "x-y " * 20 + "end."
    passage = _p(text)
    spans = TokenSpans(text, _WordEncoding(text), _pieces)
    for budget in (5, 9, 14, 30):
        assert passage_windows(passage, _pieces, budget, spans=spans) == passage_windows(passage, _pieces, budget)
    other = _p("A short one.", "Q")
    by_text = {text: spans, other.text: TokenSpans(other.text, _WordEncoding(other.text), _pieces)}
    for budget in (8, 200):
        assert (set_windows([passage, other], _pieces, budget, spans=lambda p: by_text[p.text])
                == set_windows([passage, other], _pieces, budget))


@pytest.mark.parametrize("text", [
    "短句。" + "北京是中华人民共和国的首都也是全国的政治和文化中心" * 6 + "。尾。",  # one run of Chinese, no space
    "开头" + "收入为35亿元同比增长12%" * 8 + " 结尾",  # digits count twice: fewer characters fit a piece
])
def test_a_run_without_spaces_longer_than_the_budget_is_cut_into_pieces_that_fit(text):
    def count(span: str) -> int:  # a character a token, a digit two
        return sum(2 if ch.isdigit() else 1 for ch in span if not ch.isspace())

    windows = passage_windows(_p(text), count, budget=20)
    assert all(count(w.text) <= 20 for w in windows) and any(w.cut for w in windows)
    covered = set()
    for w in windows:
        covered |= set(range(w.start, w.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
