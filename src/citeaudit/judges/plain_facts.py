"""What a text says, as the plain reading (judges/plain.py) compares it: its content words (English stems and
Chinese content characters, each read through the word groups of judges/plain_words.py), its numbers with their
units, its times of day and whether it is negated; and an evidence passage cut into clauses, each clause into
its items ("成人60元", "学生30元"), each figure with its key, the words that say what it is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from citeaudit.judges.guard import _same_value, masked_not_negating
from citeaudit.judges.plain_words import (BINARY, STOP_CHARS, STOP_EXTRA, Time, canonical, in_base, ranges, rival_words,
                                          stem, times, unit_forms)
from citeaudit.quantities import CONTRASTIVE, NEGATION_EN, NEGATION_ZH, Quantity, normalise, quantities
from citeaudit.text import HAN_RUN, STOP_WORDS, has_han

# "while swimming", "while charging the battery": during, not a contrast ("while operating profit fell")
_DURING = r"\s+\w+ing(?:\s+(?:or|and|the|a|an|it|in|on|at|with|to|your|its|this|that)\b|\s*[,.;]|\s*$)"
# Where a clause ends: sentence punctuation (not after "a.m.", "e.g.", "Dr.", "approx."), and the words that open a
# contrasting clause
CLAUSE_END = re.compile(r"(?<!\b[ap]\.m)(?<!\be\.g)(?<!\bi\.e)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bNo)(?<!\bSt)(?<!\bvs)"
                        r"(?<!\bapprox)(?<!\bincl)(?<!\bexcl)(?<!\bca)"  # "Full charge time: approx. 45 min"
                        rf"[.;!?]+(?:\s+|$)|[。；！？;\n]+|,?\s+(?:while(?!{_DURING})|whereas|but|although|though)\s+|"
                        r"[,，]\s*(?:而|但|但是|却|然而|不过)", re.I)
_STOPS = ".;!?。；！？\n"  # a sentence's end, after which a clause begins afresh
# Where a clause's items end: a spec sheet's or a price list's ("成人60元，学生30元")
ITEM_END = re.compile(r"(?:,(?!\d{3}(?!\d))|[，、|｜])\s*")  # not the comma of "1,200 W"
# A title a passage opens with: before its first colon or dash
_TITLE_END = re.compile(r"\s*(?:[:：]|\s[—–-]\s|—)")
_BRACKETED = re.compile(r"\s*[【\[]([^】\]]+)[】\]]")  # "【锦程洗衣机 XQ-80】洗涤羊毛衣物…"
WORD = re.compile(r"[a-z0-9]+[#+]*")  # "c#" and "c++" are not "c"
# besides the guard's contrasts ("not only"), a negation that bounds rather than denies
_NOT_THAN = re.compile(r"\s+(?:more|less|longer|later|earlier)\s+than\b", re.I)
# what a thing is, 无 and all (无线耳机 is wireless, 无人机 a drone): its 无 is a word, as 有 of 有线 is not
_ZH_THINGS = r"无线|无人机|无绳"
# bounds and hedges; what no limit allows (不限次数), what a material is (不锈钢, 不粘涂层), a thing, "whatever"
_ZH_BOUND = re.compile(r"不(?:超过|少于|低于|高于|多于|大于|小于|足|满)|几乎(?:没有|没|不)|不受?限制?|无限制?|不锈钢|不粘|"
                       rf"无论|{_ZH_THINGS}")
_EN_HEDGE = re.compile(r"\b(?:almost|nearly|virtually) (?:no|none|never|nothing)\b|\b(?:hardly|barely|scarcely)\b", re.I)
_NEGATION_CHAR = re.compile("[不没未无非否别勿禁]")
NAMED_ONCE_CLAUSES = 6  # a passage this short is about one thing, named once (a web page names many)
TITLE_WORDS = 8  # a title is short: at most this many words (twice as many Chinese characters)
# a clause that goes on about what the clause before it is about ("…splash resistant, but it is not
# waterproof", "…具备防溅功能，但并不防水") holds that clause's words too
_GOES_ON = re.compile(r"(?:it|they|this|these|he|she|its|their)\b|[并也却仍不没未已还都就只]", re.I)
# what a bare number labels: 4号站台, 3楼; "platform 4", "gate 12"
_LABEL_ZH = re.compile(r"\s*(号|楼|层|路|站|排|座|期|届|号线)")
_LABEL_EN = re.compile(r"\b(platform|gate|room|floor|line|route|bus|track|level|terminal|seat|row|table|bay|door|exit|"
                       r"stop|step|chapter|page|section|aisle|hall|stand|pier|berth|lane|zone)\s*(?:no\.?\s*)?$", re.I)
# the values before a number that share its key: a range's first end ("50℃ 至 55℃"), a list's earlier values
# ("800W/1200W/2000W", "1、2、3档")
_RANGE_START = re.compile(r"(?:\s*[\d.,]+\s*\S{0,3}?\s*(?:至|到|~|-|–|—|to|/|、|或|or)\s*)+$")
_CLOSING = re.compile(r"\s*(闭馆|关门|停业|歇业|休息)")
_WEEKDAY_NUMERAL = re.compile(r"(?:周|期|拜)[一二三四五六日天]")  # 周六只在上午开放: a day, not six of something
_COUNTED = re.compile(r"\s+([A-Za-z]{3,})\b")
_NOT_COUNTED = STOP_WORDS | STOP_EXTRA | {"and", "or", "to", "per", "times", "each", "every"}


@dataclass
class Facts:
    """What a text says, as the plain reading compares it."""

    words: set[str]  # English stems and Chinese content characters, of canonical forms
    numbers: list[Quantity]  # offsets into the prepared text
    times: list[Time]
    rivals: dict[str, set[str]]  # rival-set name -> its words here
    negated: bool
    written: str  # the text as its numbers and times were read (their offsets are into it)
    ranges: list[tuple[Time, Time]] = field(default_factory=list)  # "from 9 am to 6 pm"
    _items: list[Facts] | None = field(default=None, repr=False, compare=False)  # clause_items, read once


def prepared(text: str) -> tuple[str, list[Time], list[Quantity], str]:
    """The text with unit forms read (2100瓦 -> 2100 W), its times, its numbers, and the text without either."""
    text = unit_forms(normalise(text))
    found_times = times(text)
    masked = _blank(text, [(t.start, t.end) for t in found_times])
    numbers = [_counted(q, masked) for q in quantities(masked, wide=True)
               if not _WEEKDAY_NUMERAL.match(masked, max(0, q.start - 1), q.start + 1)]
    # 闭馆 after a time is when it closes (22:00闭馆), after a day or a date that it is closed (周一闭馆,
    # 5月1日闭馆): the time is blanked below, so its closing word is told apart here
    for t in found_times:
        closing = _CLOSING.match(masked, t.end)
        if closing:
            masked = masked[:closing.start(1)] + "打烊" + masked[closing.end(1):]
    return text, found_times, numbers, _blank(masked, [(q.start, q.end) for q in numbers])


def _counted(q: Quantity, text: str) -> Quantity:
    """A bare number with what it counts as its unit, so that another number of the same counts is its rival:
    "platform 4" and "platform 7", 4号站台 and 7号站台."""
    if q.unit is not None:
        return q
    after = _LABEL_ZH.match(text, q.end)
    before = _LABEL_EN.search(text[:q.start])
    counted = _COUNTED.match(text, q.end)  # "12 levels" is no 12 watts
    label = (after.group(1) if after else before.group(1).lower() if before
             else stem(counted.group(1).lower()) if counted and counted.group(1).lower() not in _NOT_COUNTED else None)
    return replace(q, unit="#" + label) if label else q


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    for a, b in sorted(spans, reverse=True):
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def facts(text: str) -> Facts:
    """What `text` says: its words, numbers, times, ranges, rivals, whether it is negated."""
    # a short text is read again as a clause's item, a claim's part, a title: the same text, the same facts
    # (no one changes a Facts once read; its items are filled in once, the same for every reader); a long one
    # (a whole passage) is kept by its passage, and would hold memory here
    return _remembered(text) if len(text) <= REMEMBERED_LENGTH else _read(text)


REMEMBERED_LENGTH = 2000


@lru_cache(maxsize=2048)
def _remembered(text: str) -> Facts:
    return _read(text)


def forget() -> None:
    """Empty the memory of texts and passages read."""
    _remembered.cache_clear()
    passage_of.cache_clear()
    names_in.cache_clear()


def _read(text: str) -> Facts:
    text, found_times, numbers, bare = prepared(text)
    said = canonical(bare)
    plain = without_negation(said)
    words = {stem(w) if w.isalpha() else w for w in WORD.findall(plain)
             if w not in STOP_WORDS and w not in STOP_EXTRA and not w.isdigit()}
    words.update(c for run in HAN_RUN.findall(plain) for c in run if c not in STOP_CHARS)
    rivals = rival_words(plain, words)
    spans = ranges(text, found_times)
    if spans:  # hours are when something is open: "Monday–Friday 09:00–18:00"
        words.update(("开", "门") if has_han(text) else ("open",))
    return Facts(words, numbers, found_times, rivals, negated(said, has_han(text)), text, spans)


def without_negation(text: str) -> str:
    """`text` with its negations taken out ("cannot" -> "can", 不允许 -> 允许): whether a claim and a clause
    are negated is compared apart, and a negation must not hide that they say the same words."""
    if has_han(text):
        masked = re.sub(_ZH_THINGS, lambda m: "\u3000" * len(m.group(0)), masked_not_negating(text))
        return "".join(c if m == "\u3000" or not _NEGATION_CHAR.match(c) else "" for c, m in zip(text, masked))
    return NEGATION_EN.sub(lambda m: "can" if m.group(0).lower() == "cannot" else " ", text)


def negated(text: str, zh: bool) -> bool:
    if zh:
        masked = _ZH_BOUND.sub(lambda m: "\u3000" * len(m.group(0)), masked_not_negating(text))
        return bool(NEGATION_ZH.search(masked) or "禁" in masked)
    text = _EN_HEDGE.sub(" ", text)  # "almost no", "hardly": a hedge, not a denial
    return any(not (CONTRASTIVE.match(text, m.end()) or _NOT_THAN.match(text, m.end()))
               for m in NEGATION_EN.finditer(text))


def matched(q: Quantity, theirs: list[Quantity]) -> Quantity | None:
    """The quantity of `theirs` that is `q`: the same value in the same unit, or in another unit of the same measure
    (1,150 grams = 1.15 kg, 2 kW = 2000 W), or one of the two without a unit."""
    measured = q.unit is not None and any(same_kind(q, e) for e in theirs)  # then a bare number is something else
    return next((e for e in theirs if _same_value(q, e) and _near(q.value, e.value)
                 and (e.unit == q.unit or q.unit is None or e.unit is None and not measured)
                 or same_measure(q, e)), None)


def _near(a: float, b: float) -> bool:
    """Within a tenth of each other: a claim rounds its figure (15 % for 14.8 %), but "2 litres" is not "1.5 L",
    though 1.5 rounds to 2."""
    return a == b or abs(a - b) <= 0.1 * max(abs(a), abs(b))


def same_measure(q: Quantity, e: Quantity) -> bool:
    """Whether two quantities in different units of one measure have one value (in either step of data sizes)."""
    if q.unit == e.unit:
        return False
    for steps in (None, BINARY):
        (a, unit), (b, other) = in_base(q.value, q.unit, steps), in_base(e.value, e.unit, steps)
        if unit is not None and unit == other and abs(a - b) <= 1e-9 + 1e-6 * abs(a):
            return True
    return False


def same_kind(q: Quantity, e: Quantity) -> bool:
    """Whether two quantities measure one thing (so that another value is a rival): the same unit, or units of
    one measure (g and kg)."""
    return q.unit is not None and (e.unit == q.unit or in_base(1, q.unit)[1] == in_base(1, e.unit)[1])


def rival_words_of(said: Facts) -> set[str]:
    return set().union(*said.rivals.values()) if said.rivals else set()


def characters(words: set[str]) -> set[str]:
    """Rival words as the words of a Facts hold them: English stems as they are, Chinese words as characters."""
    return {c for w in words for c in (w if has_han(w) else [w])}


def size(text: str) -> float:
    """A text's length in words, a Chinese character counting half."""
    return len(WORD.findall(text.lower())) + len("".join(HAN_RUN.findall(text))) / 2


def clauses(text: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of `text`, as `read` cuts it."""
    spans, at = [], 0
    for m in CLAUSE_END.finditer(text):
        if m.start() > at:
            spans.append((at, m.start()))
        at = m.end()
    if at < len(text):
        spans.append((at, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def title_of(text: str) -> str:
    """The short title a passage opens with ("Harbin X2 vacuum" of "Harbin X2 vacuum — Weight: 2.8 kg"), or ""."""
    bracketed = _BRACKETED.match(text)
    m = _TITLE_END.search(text)
    head = bracketed.group(1) if bracketed else text[:m.start()] if m else ""
    if not head.strip():
        return ""
    size = len(HAN_RUN.findall(head) and "".join(HAN_RUN.findall(head))) / 2 + len(WORD.findall(head.lower()))
    return head if size <= TITLE_WORDS else ""


def clause_items(here: Facts) -> list[Facts]:
    """A clause's items ("成人60元", "学生30元"), each read (once: every rule of the reading asks)."""
    if here._items is None:
        here._items = [facts(piece) for piece in ITEM_END.split(here.written) if piece.strip()]
    return here._items


def key_of(item: Facts, e: Quantity) -> set[str]:
    """The words that say what a number of an item is: those just before it ("学生" of "学生30元", "students"
    of "students EUR 8"; not "冰川系列冰箱" of "冰川系列冰箱整机保修24个月", whose key is 整机保修)."""
    # the second end of a range, and a list's later values, have the first's key: "水温设定在 50℃ 至 55℃"
    before = _RANGE_START.sub("", item.written[:e.start])
    before = re.sub(r"[\s:：=–—-]+$", "", before)
    segment = re.split(r"[:：,，、;；()（）\[\]【】]|\s[–—-]\s", before)[-1]
    key = segment[-4:] if has_han(segment[-1:] or "") else " ".join(segment.split()[-3:])
    return facts(key).words


@dataclass
class Passage:
    """One evidence text cut into clauses once, each clause's facts read when first asked."""

    evidence: str
    spans: list[tuple[int, int]]
    title: Facts | None
    _facts: dict[int, Facts] = field(default_factory=dict)

    def around(self, i: int, named: bool = False) -> set[str]:
        """The words a clause is read with besides its own: the title's, those of the clause it goes on about,
        and with `named`, the names the passage gave before it where it names nothing itself (a manual names
        its product once: "Wash the Brisko jar by hand. Do not place the jar in the dishwasher.")."""
        words = set(self.title.words) if self.title else set()
        if i > 0 and _GOES_ON.match(self.text(i).lstrip()) and self.evidence[self.spans[i - 1][1]] not in _STOPS:
            words |= self.facts(i - 1).words
        if named and len(self.spans) <= NAMED_ONCE_CLAUSES and not names_in(self.text(i)):
            words |= set().union(*(self.facts(j).words & names_in(self.text(j)) for j in range(i)))
        return words

    def text(self, i: int) -> str:
        a, b = self.spans[i]
        return self.evidence[a:b]

    def facts(self, i: int) -> Facts:
        if i not in self._facts:
            self._facts[i] = facts(self.text(i))
        return self._facts[i]

    @cached_property
    def whole(self) -> Facts:
        """The facts of the whole passage."""
        return facts(self.evidence)

    @cached_property
    def entries(self) -> list[tuple[set[str], Quantity, int]]:
        """Each figure with a unit in the passage, with the words that say what it is (its key) and its clause."""
        return [(key_of(item, e), e, i) for i in range(len(self.spans)) for item in clause_items(self.facts(i))
                for e in item.numbers if e.unit is not None and not e.unit.startswith("#")]


# a name within an English sentence (not its first word) or a model code: "the Brisko jar", "SH-1", "LQ312"
_NAME = re.compile(r"(?<=[\w,'’)—–→-] )[A-Z][\w'’-]*|(?<![\w.-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z\d][\w-]*")


@lru_cache(maxsize=256)
def names_in(text: str) -> frozenset[str]:
    """The words of the names and model codes of an English text, as its facts hold them."""
    return frozenset().union(*(facts(m.group(0)).words for m in _NAME.finditer(text)))


# A passage is read for every claim that cites it, and again in every cited set it belongs to; a few of
# them are kept cut (a long passage is long: few, not many)
@lru_cache(maxsize=8)
def passage_of(evidence: str) -> Passage:
    spans = clauses(evidence)
    title = title_of(evidence)
    return Passage(evidence, spans, facts(title) if title and len(spans) > 0 else None)
