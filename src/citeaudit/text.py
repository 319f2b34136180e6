"""Plain-text helpers shared by the parser and the judges: sentences, how Chinese a text is, content words.

This module sits at the bottom of the package (it imports nothing from citeaudit), so every layer can
use the same sentence splitter and the same character classes.

Sentences, as character spans of the text with whitespace excluded:
  * `sentence_spans`: pysbd's (it keeps "Dr. Smith", "v3.1", "e.g.", "15.5 %" and "U.S." whole, and
    knows Chinese sentence ends), with every line break a boundary too; remembered per text, as pysbd
    is slow. The answer parser builds on it (parse/segment.py adds its repairs for markers, lists and
    quotes);
  * `rule_sentence_spans`: a few fixed rules, fast. The judges cut passages into windows on these
    edges, the ones their figures and stored judgments were made with (see its docstring).

Three measures of "Chinese" are kept, each where it was calibrated:
  * `detect_language(text)`: "zh" when CJK characters (Han, kana, CJK and full-width punctuation) are at least
    a fifth of CJK + Latin letters. The answer parser uses it to pick its rules;
  * `han_share(text)`: the share of letters that are Han characters. The model judge routes a pair to
    the embedding judge at 0.3;
  * `has_han(text)`: any Han character at all. The qualifier guard reads Chinese negation then.
And `content_language(text)`, on `han_share`: the language the reports and the desk declare for a text
(its HTML `lang`); `majority_language` a page's, from its answers'.

`normalise_claim` is a claim's identity: the shared data is split by it, and a judge directory names
the claims its judge learnt from by it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

import pysbd

# Han ideographs: CJK Unified Ideographs and Extension A.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_HAN_CHAR = re.compile(f"[{_HAN}]")
HAN_RUN = re.compile(f"[{_HAN}]+")
# Han ideographs, CJK punctuation, kana, compatibility ideographs, full-width forms.
_CJK_CHAR = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")


# --- how Chinese is a text ----------------------------------------------------------------------


def detect_language(text: str) -> str:
    """``"zh"`` when CJK characters make up at least a fifth of the letters, else ``"en"``.

    A word of English is counted as its letters, so a Chinese answer quoting "Eco" or "80 °C" stays
    Chinese, and an English answer quoting one Chinese name stays English.
    """
    cjk = len(_CJK_CHAR.findall(text))
    latin = len(_LATIN_LETTER.findall(text))
    return "zh" if cjk and cjk >= 0.2 * (cjk + latin) else "en"


def han_share(text: str) -> float:
    """Han characters as a share of the letters of `text` (0.0 for a text without letters)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if _HAN_CHAR.match(c)) / len(letters)


# A Han character carries about a word, an English word about five letters: Han at a fifth of the letters
# is about half the words.
CONTENT_HAN_SHARE = 0.2
# Characters a text's language is told from: enough to tell, and a passage of megabytes costs no more.
LANGUAGE_SAMPLE = 2000


def content_language(text: str) -> str:
    """``"zh"`` when Han characters are at least a fifth of the letters of `text` (about half its words),
    else ``"en"``: the language a page declares for the text (read from its first `LANGUAGE_SAMPLE`
    characters). A Chinese answer naming "Transformer" or "80 °C" stays Chinese; an English one naming 张三
    stays English; a text without letters is English."""
    return "zh" if han_share(text[:LANGUAGE_SAMPLE]) >= CONTENT_HAN_SHARE else "en"


def majority_language(languages: Iterable[str], default: str = "en") -> str:
    """The language most of `languages` are (a page's, from its answers'); `default` on a tie or when
    there are none."""
    counts: dict[str, int] = {}
    for lang in languages:
        counts[lang] = counts.get(lang, 0) + 1
    best = max(counts.values(), default=0)
    leaders = [lang for lang, n in counts.items() if n == best]
    return leaders[0] if len(leaders) == 1 else default


def has_han(text: str) -> bool:
    """Whether `text` holds any Han character."""
    return _HAN_CHAR.search(text) is not None


# --- content words ------------------------------------------------------------------------------

# The one list of English words that carry no content; a module that needs more keeps a named extension.
STOP_WORDS = frozenset("""a an the of in on at to for by with and or but is are was were be been being that this
these those it its as from has have had which who whom what when where how than then there their they he she
his her we our you your i not no""".split())
# Capitalised at a sentence's start, these are still no names: stop words, determiners, quantifiers and
# the prepositions and conjunctions a sentence opens with.
NOT_NAMES = STOP_WORDS | frozenset("""them one some any all each every many most none several both either neither
such if while after before during since""".split())
_WORD = re.compile(r"[a-z0-9]+")
_LATIN_WORD = re.compile(r"[A-Za-z][\w'’\-]*")


def capitalised_names(text: str) -> set[str]:
    """Capitalised words, lower-cased, except words that are never names ("The", "Some", "If")."""
    out = set()
    for m in _LATIN_WORD.finditer(text):
        w = m.group()
        if w[0].isupper() and w.lower() not in NOT_NAMES:
            out.add(re.sub(r"['’]s?$", "", w.lower()))  # "Obama's" names Obama
    return out


def content_words(text: str) -> set[str]:
    """Lower-cased words and numbers without stop words, cut to 6 letters; Han runs as character bigrams.

    The model judge's calibration was fitted on these exact values (claim-word recall): a change here
    changes its decisions.
    """
    lowered = text.lower()
    words = {w[:6] for w in _WORD.findall(lowered) if w not in STOP_WORDS}
    for run in HAN_RUN.findall(lowered):
        words.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return words


# --- a claim's identity ---------------------------------------------------------------------------

_CITATION_MARKER = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")


def normalise_claim(text: str) -> str:
    """The form a claim is known by, whatever passage it comes with: NFKC, case-folded, without [n]
    markers, its word characters only (so spacing and punctuation do not make it another claim). The
    shared data is split by its hash (training/data.py), and a judge directory records the claims it
    learnt from by it (judges/seen.py): a change here moves claims between splits."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _CITATION_MARKER.sub(" ", text)
    return " ".join(re.findall(r"\w+", text))


# --- sentences ----------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _segmenter(lang: str) -> pysbd.Segmenter:
    return pysbd.Segmenter(language=lang, clean=False, char_span=False)


def _segment_starts(text: str, lang: str) -> list[int]:
    """Where each of pysbd's segments starts in `text`.

    pysbd with clean=False returns the text's own characters but may drop leading whitespace, so each
    segment is located from a cursor rather than by summing lengths; one it altered after all is
    located by its stripped form, or skipped (its text then stays with the segment before).
    """
    try:
        segmenter = _segmenter(lang)
    except ValueError:  # a language pysbd does not know: English rules
        segmenter = _segmenter("en")
    starts: list[int] = []
    cursor = 0
    for segment in segmenter.segment(text):
        found = text.find(segment, cursor)
        if found < 0:
            segment = segment.strip()
            found = text.find(segment, cursor)
            if found < 0 or not segment:
                continue
        starts.append(found)
        cursor = found + len(segment)
    return starts


@lru_cache(maxsize=4096)
def _spans(text: str, lang: str) -> tuple[tuple[int, int], ...]:
    starts = _segment_starts(text, lang)
    # Nothing may be lost between segments: each reaches to the start of the next.
    bounds = [0, *starts[1:], len(text)]
    spans = []
    for a, b in zip(bounds, bounds[1:]):
        for line in re.finditer(r"[^\n]+", text[a:b]):
            start, end = a + line.start(), a + line.end()
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if start < end:
                spans.append((start, end))
    return tuple(spans)


def sentence_spans(text: str, lang: str | None = None) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text` by pysbd, in order, whitespace excluded.

    Every line break ends a sentence too. Every non-space character lies in exactly one span. `lang` is
    "en", "zh" or another language pysbd knows (default: `detect_language(text)`). Spans are remembered for
    the last few thousand texts.
    """
    return list(_spans(text, lang or detect_language(text)))


# A sentence ends after . ! ? ; and any closing quote or bracket, before whitespace; after CJK 。！？；
# (no space needed); or at a line break. Common abbreviations do not end a sentence.
_RULE_END = re.compile(r"(?<=[.!?;])(?P<close>[\"'”’)\]]*)\s+|(?<=[。！？；])(?P<cjk>[\"'”’）」』]*)\s*|\n+")
_RULE_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Dr|Mr|Mrs|Ms|Prof|St|No|Fig|approx)|\b[A-Z])\.$")


def rule_sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text` by a few fixed rules (no pysbd), whitespace excluded.

    The judges cut long passages into windows on these edges. The shipped model judge's figures,
    its calibration and every stored judgment were made with them, and a judge's signature does not
    name its splitter: pysbd's edges (`sentence_spans`) would change labels under an unchanged
    signature (measured: test-split WiCE AUC 0.782 -> 0.727), so windows keep these.
    """
    spans, start = [], 0
    for m in _RULE_END.finditer(text):
        end = m.start() + len(m.group("close") or m.group("cjk") or "")  # closing quotes stay inside
        if _RULE_ABBREVIATION.search(text[start:end].rstrip("\"'”’)]")) and "\n" not in m.group():
            continue
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


# --- text shown in a terminal -------------------------------------------------------------------

# Control characters (C0 but newline and tab, DEL, C1) and the bidirectional controls: a terminal obeys
# the first (clear the screen, set the window title) and the second reorder what it shows ("gnp.exe"
# displayed as "exe.png"). Noncharacters (U+FDD0-U+FDEF, the last two code points of every plane) and
# lone surrogates are no text at all: they cannot be encoded for a terminal, and the chart renderer
# aborts the process on some of them.
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(f"{chr(plane + 0xfffe)}{chr(plane + 0xffff)}"
                                           for plane in range(0, 0x110000, 0x10000))
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     f"\ud800-\udfff{_NONCHARACTERS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible_controls(text: str) -> str:
    """`text` with every control and bidirectional-control character, noncharacter and lone surrogate
    written as its escape (ESC as `\\x1b`, RIGHT-TO-LEFT OVERRIDE as `\\u202e`, U+FFFE as `\\ufffe`),
    so what reaches a terminal is only what it shows."""
    return _HIDDEN.sub(_escape, text)
