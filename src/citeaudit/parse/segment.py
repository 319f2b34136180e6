"""Split an answer into sentences with pysbd, and credit each citation cluster to one sentence.

Markers are taken out before pysbd sees the text (a map keeps the original offsets), so pysbd
never has to guess what "[1]." or "【3】。" or "belief?[7]\"" is. Both "text [1]. Next" and
"text. [1] Next" then read "text . Next" / "text.  Next", and the cluster is credited to the
sentence it closes: a cluster belongs to the last sentence that starts at or before it. The one
exception is a cluster that starts a new line ("...end.\\n[2] Next line"): it opens the sentence on
that line. A cluster inside a list enumerator ("include:\\n\\n1[2]. Text", as post-hoc citation
systems write it) is not at the start of its line and closes the line before.

pysbd already keeps "Dr. Smith", "v3.1", "e.g.", "15.5 %", "U.S." intact. Its output is repaired
where it splits after an abbreviation it does not know ("Approx. 15 %", "Sect. 4.2", "temp. is"):

* a segment that starts with a lower-case letter is glued to the one before when that one ends in
  a period on the same line;
* a segment that starts with a digit is glued to the one before when that one ends in a known
  abbreviation ("Fig.", "No.", "Sect.", "approx.", ...);
* in Chinese, ASCII punctuation glued to the next character ("Inc.的", "iPad?”的") is no boundary;
* a closing quote or bracket at the start of a segment goes to the segment before, and a quotation
  cut at an inner "！"/"?" is glued up to its closing quote mark;
* a lone enumerator ("1.") is glued to the item it numbers.

Every line break is a boundary (pysbd's own behaviour), except where a line is clearly wrapped
mid-sentence: it ends without sentence punctuation and the next line starts in lower case. A list
bullet, enumerator or heading mark that opens a line ("- ", "1. ", "# ", Chinese "1、", "（1）") is
not part of the sentence; mid-line, only a numeric enumerator is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from citeaudit.text import sentence_spans
from citeaudit.parse.markers import Cluster

# Lower-cased, without the final period. Only used to glue a split before a digit or lower case.
ABBREVIATIONS = frozenset(
    """al approx art c ca cf ch co corp dept dr e.g ed eds eq eqs est etc excl fig figs i.e inc incl
    jan feb mar apr jun jul aug sep sept oct nov dec jr ltd max min mr mrs ms no nos op p para pp prof
    ref refs resp rev sec sect sr st temp u.s vol vols vs""".split()
)

# A list bullet, enumerator or heading mark at the start of a line.
_PREFIX_EN = re.compile(r"(?:#{1,6}|[-*+•·]|\d{1,3}[ \t]*[.)]|[a-zA-Z]\)|\(\d{1,3}\)|\(?[ivx]{1,4}\))[ \t]+")
_PREFIX_ZH = re.compile(
    r"(?:#{1,6}[ \t]+|[-*+•·][ \t]*|\d{1,3}(?:[.](?!\d)|[、)）])[ \t]*|[（(]\d{1,3}[)）][ \t]*"
    r"|[一二三四五六七八九十]{1,3}、[ \t]*)"
)
# Mid-line, only a numeric enumerator opens a segment ("…了解。2.了解命令…", "... steps. 3. Test"):
# a "-" there may be a minus sign.
_ENUMERATOR_EN = re.compile(r"\d{1,2}[.)][ \t]+(?=\S)")
_ENUMERATOR_ZH = re.compile(r"\d{1,2}(?:[.](?!\d)|[、)）])[ \t]*(?=\S)")
_SENTENCE_END = ".!?:;。！？：；…"


@dataclass
class Sentence:
    """One sentence of the answer: its content range and the clusters credited to it."""

    start: int  # first character of the content (after any list bullet) in the original text
    end: int  # one past the last character of the content (closing markers not included)
    prefix: str = ""  # the bullet/enumerator/heading mark stripped from the front, if any
    line_alone: bool = False  # the sentence is the whole of its line
    clusters: list[Cluster] = field(default_factory=list)
    span_end: int = -1  # ``end`` widened over the markers that directly close the sentence

    @property
    def span(self) -> tuple[int, int]:
        """The sentence as written, with the markers that directly close it.

        A marker credited to the sentence but not adjacent to it (one inside a list enumerator,
        "include:\\n1[2]. Text") is left out: the span covers text and closing markers only.
        """
        return self.start, max(self.end, self.span_end)


@dataclass(frozen=True)
class _View:
    """The answer as pysbd sees it: markers and ignored lines removed, with a map back.

    ``origin[i]`` is the offset in the answer of ``text[i]``.
    """

    text: str
    origin: tuple[int, ...]

    def to_answer(self, a: int, b: int) -> tuple[int, int]:
        return self.origin[a], self.origin[b - 1] + 1


def _view(text: str, clusters: Sequence[Cluster], blank: Sequence[tuple[int, int]]) -> _View:
    drops = sorted([(c.start, c.end, True) for c in clusters] + [(a, b, False) for a, b in blank])
    out: list[str] = []
    origin: list[int] = []
    i = 0
    for a, b, is_marker in drops:
        if b <= i:
            continue
        for j in range(i, a):
            out.append(text[j])
            origin.append(j)
        for j in range(max(a, i), b):  # an ignored line keeps its line break
            if text[j] == "\n":
                out.append("\n")
                origin.append(j)
        # "end.[1]Next": keep a space so that pysbd still sees the sentence boundary
        if is_marker and out and out[-1] in ".!?" and b < len(text) and text[b].isalnum():
            out.append(" ")
            origin.append(a)
        i = b
    for j in range(i, len(text)):
        out.append(text[j])
        origin.append(j)
    return _View("".join(out), tuple(origin))


def _join_wrapped_lines(view: str) -> str:
    """Replace a line break by a space where a sentence obviously continues on the next line."""
    chars = list(view)
    for m in re.finditer(r"(\S)[ \t]*\n[ \t]*(?=[a-z])", view):
        if m.group(1) not in _SENTENCE_END:
            chars[m.start() + m.group().index("\n")] = " "
    return "".join(chars)


def _last_word(s: str) -> str:
    words = s.split()
    return words[-1].lower().rstrip(".").lstrip("([\"'") if words else ""


def _glue(view: str, ranges: list[tuple[int, int]], lang: str) -> list[tuple[int, int]]:
    """Repair pysbd's splits: after unknown abbreviations, after lone enumerators, inside quotes,
    and before a closing quote or bracket."""
    out: list[tuple[int, int]] = []
    for a, b in ranges:
        if out:
            pa, pb = out[-1]
            gap = view[pb:a]
            same_line = "\n" not in gap
            # A closing quote or bracket that pysbd put at the start of the next segment closes
            # the previous one: "……。”这类的话" -> "……。”" | "这类的话".
            while same_line and a < b and view[a] in _CLOSERS and not gap.strip(" \t"):
                a += 1
                pb = a
            while a < b and view[a].isspace():
                a += 1
            out[-1] = (pa, pb)
            if a >= b:
                continue
            prev, nxt = view[pa:pb], view[a:b]
            if lang == "zh":
                # "DNStinationInc.的", "(Robert Downey Jr.)扮演", "“你会买新款 iPad?”的投票",
                # "migrate到.NET": ASCII punctuation glued to the next character does not end a
                # Chinese sentence.
                glue = same_line and not gap and (
                    _ZH_ASCII_END.search(prev) is not None or (prev.endswith(".") and nxt[0].isascii())
                )
            else:
                glue = same_line and prev.endswith(".") and (
                    nxt[0].islower() or (nxt[0].isdigit() and _last_word(prev) in ABBREVIATIONS)
                )
            # A lone enumerator ("1.") is the start of the next item, not a sentence.
            glue = glue or (same_line and re.fullmatch(r"\d{1,3}[.)、]|[-*•]", prev) is not None)
            # A quotation cut at an inner "！" or "?" runs on to its closing mark on the same line.
            if not glue and same_line and _open_quote(prev):
                eol = view.find("\n", a)
                glue = _closes_quote(view[a : eol if eol >= 0 else len(view)])
            if glue:
                out[-1] = (pa, b)
                continue
        out.append((a, b))
    return out


_ZH_ASCII_END = re.compile(r"(?:[A-Za-z]\.|[?!])[”’」』）)\]】》]*$")
_CLOSERS = "”’」』）)】》"
_QUOTES = {"“": "”", "「": "」", "『": "』"}


def _open_quote(s: str) -> bool:
    return any(s.count(o) > s.count(c) for o, c in _QUOTES.items())


def _closes_quote(s: str) -> bool:
    return any(c in s for c in _QUOTES.values())


def split_sentences(
    text: str, clusters: Sequence[Cluster], lang: str, blank: Sequence[tuple[int, int]] = ()
) -> list[Sentence]:
    """Sentences of ``text`` with the clusters credited to each. ``blank`` ranges are ignored."""
    view = _view(text, clusters, blank)
    seen = view.text if lang == "zh" else _join_wrapped_lines(view.text)
    ranges = _glue(seen, sentence_spans(seen, lang), lang)

    prefix_re = _PREFIX_ZH if lang == "zh" else _PREFIX_EN
    enumerator_re = _ENUMERATOR_ZH if lang == "zh" else _ENUMERATOR_EN
    sentences: list[Sentence] = []
    for a, b in ranges:
        line_start = seen[seen.rfind("\n", 0, a) + 1 : a].strip() == ""
        prefix = ""
        m = (prefix_re if line_start else enumerator_re).match(seen, a, b)
        if m and m.end() < b:
            prefix = m.group().strip()
            a = m.end()
        nl = seen.find("\n", b)
        line_end = seen[b : nl if nl >= 0 else len(seen)].strip() == ""
        start, end = view.to_answer(a, b)
        sentences.append(Sentence(start, end, prefix, line_start and line_end))

    _credit(text, clusters, sentences)
    return sentences


def _credit(text: str, clusters: Sequence[Cluster], sentences: list[Sentence]) -> None:
    """Credit every cluster to the sentence it closes (or, at a line start, the one it opens)."""
    if not sentences:
        return
    starts = [s.start for s in sentences]
    j = 0
    for c in clusters:
        while j + 1 < len(sentences) and starts[j + 1] <= c.start:
            j += 1
        k = j
        if c.start < sentences[0].start:
            k = 0
        elif (
            c.start >= sentences[j].end
            and j + 1 < len(sentences)
            and "\n" in text[sentences[j].end : c.start]
            and text[text.rfind("\n", 0, c.start) + 1 : c.start].strip() == ""
            and "\n" not in text[c.end : sentences[j + 1].start]
        ):
            # The cluster opens the next line ("\\n[2] Text"). One inside a list enumerator
            # ("...include:\\n\\n1[2]. Text", as post-hoc citers write it) still closes the line before.
            k = j + 1
        sentence = sentences[k]
        sentence.clusters.append(c)
        # Widen the span over markers that directly follow the sentence (only whitespace between).
        reach = max(sentence.end, sentence.span_end)
        if c.start >= reach and text[reach : c.start].strip() == "":
            sentence.span_end = c.end
