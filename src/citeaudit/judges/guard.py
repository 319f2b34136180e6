"""The qualifier guard: deterministic checks that stop a `full` whose claim carries a qualifier the
evidence does not.

A model judge reads "Eco reduces annual energy by 15%" against "downtime fell by 15% over 30 days"
and sees the same topic and the same number. The guard looks at what a small model is worst at. Each
check is a rule with its own name (the `kind` of the finding it gives), so that each can be measured
on its own (benchmarks/guard_rules.py):

* `year`: a year in numerals must occur in the evidence with the same value ("2021" is not "2020";
  "1904-05" holds 1905; "a thousand", "1.6 thousand" and "两千" are numbers, not years); a decade holds
  its years ("the 1980s" and 1986);
* `day`: the same for the day of a date ("May 12", "12 May", "4月12日");
* `version`: "v2.3.1", "Python 3.11": the version as written;
* `count`: a number written as a word that counts things ("three components") is a mismatch only when
  the evidence counts the same noun otherwise ("four components") and never as the claim does. A count
  the evidence leaves unsaid is the model's to read: "these three components" counts what the text
  around it lists, "two black holes" what the evidence names one by one. A number word joined to a word
  ("two-point perspective", "a five-year career") names a kind of thing: a mismatch only when the
  evidence joins the word to other numbers and never to the claim's ("three-point");
* `name`: a number that is part of a name ("Article 5", "Windows 10", "World War 2", "type 2") is no
  quantity.
  It is a mismatch only when the evidence names the same thing with another number ("Windows 11",
  "World War I"); a name the evidence does not mention is left to the model;
* `unit`: a claim number with a unit ("300 m") must not have only other units in the evidence ("300
  feet"); a number the evidence gives without a unit leaves the unit unsaid ("aged 10-24"), except
  for a percentage, which needs its percent sign ("16%" is not "16 of them");
* `attachment` (percentages and money only): the quantity a number is attached to in the claim (the
  content words next to it) must appear in the sentence of some occurrence of it in the evidence.
  "15% … energy" vs "downtime fell by 15%" is a mismatch; words that name the same measure are one
  ("share" and "proportion", 占有率 and 份额). Not run on Chinese claims (`RULES_ZH`);
* `month`: a month name of the claim must occur in the evidence;
* `negation`: a claim that says "not / never / no / 不 / 没有 …" needs some negation in the evidence.
  Not every negation word negates the claim: "not only", "not just" contrast; "not necessarily", "not
  always", "not the only" limit; "not a replacement for cement but rather an additive" takes the
  negation back (the claim asserts the additive); "if he had not returned" is a condition; 非常, 不断,
  未来 only look negated.

Numbers are compared after normalisation: "thirty" = 30, "1.5 million" = 1,500,000, "百分之十五" = 15%,
"80 °C" = "80°C", "1,200" = 1200, "53 879" = 53879, "19th" = "nineteenth"; a number glued to a word,
"legs2", counts in the evidence. A Chinese numeral is a number before a measure word or on its own
("三天", "三千五百万"), never inside a word ("千山翠", "十分", "万一"). "one" alone is never a number
("one of", "no one", "one-point", "defined as one and …"): it is a pronoun or a determiner far more
often than a count. Citation markers ("[1]", "[2, 3]") are never quantities: they are dropped from
claim and evidence first.

Three more rules were measured and are not run by default (`TRIED_RULES`; see docs/model-judge.md):
`number` (any other number of the claim, "38 chromosomes", "20%", "60 days", must occur in the
evidence; a bound or a round figure is met by what it says: "over 10 hours" by 12 hours,
"approximately $17.9 million" by $17.5 million, within a tenth), right too rarely on the model's
`full`s of the dev split; `negated-in-evidence` (the evidence negates what the claim asserts: "could
allow the UK to benefit" vs "will not be able to benefit") and `scope` (the evidence narrows the
claim's subject: "the law allows" vs "Islamic law allows").

`check(claim, evidence)` returns None (nothing wrong found) or a GuardFinding naming the mismatch;
`check(..., rules={"year"})` runs only the rules named. A finding on a Chinese claim names the phrase
the number stands in ("the claim's year '2011年' (清华大学在2011年进入全球50强) has no counterpart in the
evidence"). It is pure Python (no model) and says nothing about claims without qualifiers. A guard that
cannot run raises JudgeError naming the claim: a judgment is never passed as checked when it was not.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection
from dataclasses import dataclass

from citeaudit.errors import JudgeError
# numbers, units and negations are found as the claim splitter finds them (quantities.py), read as the
# guard's rules were measured (no `wide` units, every number word, lexical negations)
from citeaudit.quantities import CN_NUMBER as _CN_NUMBER
from citeaudit.quantities import CN_PLACE as _CN_PLACE
from citeaudit.quantities import CONTRASTIVE as _CONTRASTIVE
from citeaudit.quantities import NEGATION_EN as _NEGATION_EN
from citeaudit.quantities import NEGATION_ZH as _NEGATION_ZH
from citeaudit.quantities import TENS_EN as _TENS_EN
from citeaudit.quantities import Quantity, evidence_quantities, normalise, quantities  # noqa: F401 - importable here
from citeaudit.text import STOP_WORDS, has_han, rule_sentence_spans

# --- number words ----------------------------------------------------------------------------------

_ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth".split())}
_ORDINAL_TENS = {w: 10 * (i + 2) for i, w in enumerate(
    "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split())}
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th)\b", re.I)
MONTHS = ("january february march april may june july august september october november december").split()
# capitalised only: "may" the verb is not a month
_MONTH = re.compile(r"\b(%s|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b" % "|".join(m.title() for m in MONTHS))

# The stop words and, for the guard's rules, the words a number is never "about": quantifiers, modals,
# trend verbs and units. "but", "how", "no", "not" and "there" stay content words here, as the rules were
# measured with them.
_STOP = (STOP_WORDS - {"but", "how", "no", "not", "there"}) | set("""my over under about around approximately
nearly almost some more less up down per each every into out new
also whose while after before during since until within across between among through via will would can
could may might should must do does did so such only just very most least many much few several all any both
other increase increases increased increasing decrease decreases decreased reduce reduces reduced reducing
reduction rise rises rose risen fall falls fell fallen grow grows grew grown growth drop drops dropped cut
cuts lower lowered higher raise raised gain gained lost lose loses improve improves improved boost boosted
total percent per cent pct year years annual annually day days month months week weeks""".split())
_WORD = re.compile(r"[^\W\d_]+", re.U)


_ATTACHED_UNITS = {"%", "usd", "eur", "gbp", "cny"}

# A citation marker is a pointer, not a quantity: "in 1848 [1][2]", "[3, 4]", "[5-7]".
_CITATION_MARKER = re.compile(r"\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]")

# A number right after one of these words, or after a capitalised word that is not one of _NAME_STOP,
# is part of a name ("Article 5", "Windows 10", "iPhone 12"), not a quantity.
_REFERENCE_NOUNS = set("""article section chapter clause paragraph rule passage part figure fig table page step
phase stage type level grade class category season episode series volume vol book act scene verse psalm
amendment room gate platform route highway interstate flight channel""".split())
_NAME_STOP = _STOP | set("""only just exactly roughly around circa since till until over under below above almost
nearly approximately about some another all last next top but yet if though although because however thus
hence there here these those""".split()) | set(MONTHS) | {m.lower() for m in (
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split())}
_NAME_WORD = re.compile(r"(?:^|(?<=[\s(\"'“‘/]))([A-Za-z][A-Za-z'’.-]*[A-Za-z])\s+$")
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}

# The version of the rules: what a judge's signature says the guard was (1: before the rules were split
# and the name, count, citation-marker, contrast, ordinal and unit misfires fixed; 2: before the misfires
# on "one", counts, hyphenated number words, negations that do not negate, decades and bounds were fixed,
# the day of a date got its own rule and the number rule was switched off; 3: before Chinese numerals inside
# words ("千山翠", "十分") were read as numbers, "两千" as a year, 份额 as another measure than 占有率, and the
# rules for Chinese claims were measured on their own).
VERSION = 4

# The rules `check` runs (the number rules for each number of the claim in turn, then month and negation);
# TRIED_RULES were measured, found wanting (docs/model-judge.md) and run only when asked for.
RULES = ("version", "name", "year", "day", "count", "unit", "attachment", "month", "negation")
TRIED_RULES = ("number", "negated-in-evidence", "scope")
# A claim with Han characters runs the rules right 3 times in 4 on Chinese rows (docs/model-judge.md, "The
# guard on Chinese claims"): not `attachment`, whose character bigrams say too little of what a number measures.
RULES_ZH = tuple(rule for rule in RULES if rule != "attachment")


@dataclass(frozen=True)
class GuardFinding:
    kind: str  # the rule that found it: one of RULES or TRIED_RULES
    reason: str

    def __str__(self) -> str:
        return self.reason


def _same_value(q: Quantity, e: Quantity) -> bool:
    """Equal, or equal at the precision the claim is written in (a claim may round: 15% for 14.8%,
    1.2 million for 1,234,000; but 2021 is not 2020 and 3.11 is not 3.12)."""
    a, b = q.value, e.value
    if a != a or b != b:  # nan (versions)
        return False
    if math.isinf(a) or math.isinf(b):  # beyond a float's range: compare the digits as written
        return _digits(q.text) == _digits(e.text)
    return a == b or abs(a - b) <= (q.precision or 0) / 2 + 1e-9


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _stem(w: str) -> str:
    w = w.lower()
    return w[:5] if len(w) > 5 else w


# Words that name the same measure, for the attachment rule: a percentage of market share is one of 份额,
# 占有率 or 占比 ("share", "proportion") whichever the evidence says. Each word's key is its group's first.
_SAME_MEASURE = {word: group[0] for group in (
    ("share", "shares", "proportion", "占有率", "市占率", "份额", "占比", "比重"),
    ("revenue", "revenues", "turnover", "sales", "营收", "营业收入", "营业额", "销售额"),
    ("profit", "profits", "earnings", "利润", "净利", "盈利"),
    ("price", "prices", "价格", "售价", "定价", "价钱"),
    ("population", "inhabitants", "人口", "居民"),
) for word in group}
_SAME_MEASURE_ZH = re.compile("|".join(sorted(filter(has_han, _SAME_MEASURE), key=len, reverse=True)))


def _context_words(text: str, q: Quantity, before: int, after: int) -> dict[str, str]:
    """Content words next to a number: {stem: word as written}, and {measure: word} for a word that names one
    of _SAME_MEASURE ("proportion" is also "share")."""
    words = [w.lower() for w in _WORD.findall(text[:q.start])[-before:] + _WORD.findall(text[q.end:])[:after]
             if w.lower() not in _STOP and len(w) > 2]
    return {_stem(w): w for w in words} | {_SAME_MEASURE[w]: w for w in words if w in _SAME_MEASURE}


_CJK_STOP = set("减少 降低 增加 增长 提高 下降 上升 约为 大约 达到 左右 超过 不到 以上 以下 之间 其中 相比 比例 百分 分之 个月 年度".split())


def _cjk_context(text: str, q: Quantity, before: int, after: int) -> dict[str, str]:
    """CJK character bigrams next to a number (Chinese has no spaces to split words on), and the measures
    its words name (占有率 and 份额 are both "share")."""
    left = re.sub(r"[^\u4e00-\u9fff]", "", text[max(0, q.start - before * 2):q.start])[-before:]
    right = re.sub(r"[^\u4e00-\u9fff]", "", text[q.end:q.end + after * 2])[:after]
    grams = {g for part in (left, right) for g in (part[i:i + 2] for i in range(len(part) - 1))}
    measures = {_SAME_MEASURE[w]: w for part in (left, right) for w in _SAME_MEASURE_ZH.findall(part)}
    return {g: g for g in grams if g not in _CJK_STOP and not _CN_NUMBER.search(g)} | measures


# Where a Chinese phrase ends: punctuation (the claim is NFKC-normalised: "，" is ","), except a decimal
# point or a thousands separator ("21.7%", "1,500"), and line breaks
_PHRASE_END = re.compile(r"(?<!\d)[.,]|[.,](?!\d)|[;:!?()\[\]\"'“”‘’「」《》、。\n]")
_WHOLE_CLAUSE = 24  # characters: a longer clause is shown around the number


def _zh_phrase(text: str, start: int, end: int, before: int = 10, after: int = 8) -> str:
    """text[start:end] with the words around it, as a reviewer reads a Chinese claim: its clause whole when
    short ("该品牌在中国市场的占有率为21.7%"), else up to `before` characters before it and `after` after, "…"
    where cut (never inside a run of Latin letters or digits: "50强", not "5…")."""
    ends = [m.start() for m in _PHRASE_END.finditer(text)]
    lo = max((i + 1 for i in ends if i < start), default=0)
    hi = min((i for i in ends if i >= end), default=len(text))
    if hi - lo <= _WHOLE_CLAUSE:
        return text[lo:hi].strip()
    clause = lo, hi
    lo, hi = max(lo, start - before), min(hi, end + after)
    while 0 < lo < start and text[lo - 1:lo + 1].isascii() and text[lo - 1:lo + 1].isalnum():
        lo -= 1
    while end < hi < len(text) and text[hi - 1:hi + 1].isascii() and text[hi - 1:hi + 1].isalnum():
        hi += 1
    return ("…" if lo > clause[0] else "") + text[lo:hi].strip() + ("…" if hi < clause[1] else "")


def _where(claim: str, q: Quantity) -> str:
    """For a Chinese claim, the phrase a number stands in, to follow it in a message: " (市场占有率为21.7%)"
    (an English message names the number, or its content words, alone)."""
    if not has_han(claim):
        return ""
    phrase = _zh_phrase(claim, q.start, q.end)
    return f" ({phrase})" if phrase != q.text else ""


def _sentence_of(text: str, e: Quantity) -> tuple[str, Quantity]:
    """The sentence holding `e`, and `e` re-based onto it (a number's quantity is in its own sentence)."""
    start, end = next(((a, b) for a, b in rule_sentence_spans(text) if a <= e.start < b), (0, len(text)))
    return text[start:end], Quantity(e.value, e.unit, e.text, e.start - start, e.end - start, e.precision)


def check(claim: str, evidence: str, attachment: bool = True,
          rules: Collection[str] | None = None) -> GuardFinding | None:
    """The first qualifier of `claim` without a counterpart in `evidence`, or None.

    `rules` names the rules to run (default: RULES, RULES_ZH for a claim with Han characters; TRIED_RULES
    only when named); `attachment=False` leaves the attachment rule out."""
    wanted = set(rules if rules is not None else RULES_ZH if has_han(claim) else RULES)
    unknown = wanted - set(RULES) - set(TRIED_RULES)
    if unknown:
        raise JudgeError(f"unknown qualifier guard rule(s): {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(RULES + TRIED_RULES)}")
    if not attachment:
        wanted.discard("attachment")
    try:
        return _check(_unmarked(normalise(claim)), _unmarked(normalise(evidence)), wanted)
    except Exception as err:  # a bug: a guard that did not run must not pass for one that found nothing
        raise JudgeError(f"qualifier guard failed on claim {claim!r}: {err!r}") from err


def _unmarked(text: str) -> str:
    """`text` without citation markers ("in 1848 [1][2]" -> "in 1848  ")."""
    return _CITATION_MARKER.sub(" ", text)


def _check(claim: str, evidence: str, rules: set[str]) -> GuardFinding | None:
    ev_q = evidence_quantities(evidence)
    for q in quantities(claim):
        finding = _check_quantity(claim, evidence, q, ev_q, rules)
        if finding is not None:
            return finding
    for rule in ("month", "negation", "negated-in-evidence", "scope"):
        if rule in rules:
            finding = _TEXT_RULES[rule](claim, evidence)
            if finding is not None:
                return finding
    return None


def _check_quantity(claim: str, evidence: str, q: Quantity, ev_q: list[Quantity],
                    rules: set[str]) -> GuardFinding | None:
    """Whether one number of the claim has its counterpart: value, then unit, then attachment."""
    if q.unit and q.unit.startswith("version:"):
        version = q.unit.split(":", 1)[1]
        if "version" in rules and not any(e.unit == q.unit for e in ev_q) and version not in evidence:
            return GuardFinding("version", f"the claim's version '{q.text}'{_where(claim, q)} does not occur "
                                           "in the evidence")
        return None
    same = [e for e in ev_q if _same_value(q, e)]
    if not same:
        return _without_counterpart(claim, evidence, q, ev_q, rules)
    # a number without a unit in the evidence ("aged 10-24", "800-1400之间") leaves the unit unsaid, which
    # is no mismatch; a percent sign is the exception, as "16%" is not "16 of them"
    if "unit" in rules and q.unit is not None and not any(
            e.unit == q.unit or e.unit is None and q.unit != "%" for e in same):
        units = sorted({e.unit or "no unit" for e in same})
        return GuardFinding("unit", f"'{q.text}'{_where(claim, q)} is in the claim with unit '{q.unit}', the "
                                    f"evidence has {q.value:g} only with {', '.join(units)}")
    # attachment only for percentages and money: a bare number ("1.5 million people") is too often
    # paraphrased around ("population"), and a physical unit (°C, days, km) already says what is measured
    if "attachment" in rules and not _is_year(q) and q.unit in _ATTACHED_UNITS:
        return _attachment(claim, evidence, q, same)
    return None


def _is_year(q: Quantity) -> bool:
    # a year is written in numerals, whole ("1999", "二〇二三"): "a thousand machines", "1.6 thousand copies",
    # "1,500 people" and "两千人" are numbers, not years
    return (q.unit is None and not q.words and 1000 <= q.value <= 2100 and q.value == int(q.value)
            and q.precision == 1 and not re.search(r"[.,]", q.text) and not _CN_PLACE.search(q.text))


_MONTH_BEFORE = re.compile(r"\b(?:%s)\.?\s*$" % "|".join(m.title() for m in MONTHS) + r"|\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|"
                           r"Sep|Sept|Oct|Nov|Dec)\.?\s*$")
_MONTH_AFTER = re.compile(r"(?:st|nd|rd|th)?\s+(?:of\s+)?(?:%s|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b"
                          % "|".join(m.title() for m in MONTHS))


def _is_day(claim: str, q: Quantity) -> bool:
    """Whether `q` is the day of a date: "August 22", "22 August", "22nd of August", "4月12日"."""
    if q.words or q.precision != 1 or not 1 <= q.value <= 31:
        return False
    if q.unit == "d" and q.text.endswith("日"):
        return claim[:q.start].rstrip().endswith("月")
    return q.unit is None and bool(_MONTH_BEFORE.search(claim, 0, q.start) or _MONTH_AFTER.match(claim, q.end))


# a decade ("the 1980s", "late 1890s"): the number reader takes its "s" for seconds
_DECADE = re.compile(r"\d{3}0\s?s")


def _in_decade(e: Quantity, q: Quantity) -> bool:
    return e.value == int(e.value) and q.value <= e.value < q.value + 10 and (e.unit is None or e.unit == q.unit)


def _without_counterpart(claim: str, evidence: str, q: Quantity, ev_q: list[Quantity],
                         rules: set[str]) -> GuardFinding | None:
    """The finding for a claim number whose value the evidence lacks, by what kind of number it is."""
    name = _name_before(claim, q)
    if name is not None and q.precision >= 1:
        return _name_mismatch(evidence, name, q) if "name" in rules else None
    if name is not None:  # "Python 3.11": a version written after its name
        kind = "version"
    elif q.unit == "s" and _DECADE.fullmatch(q.text):  # "the 1980s" holds 1986
        kind = "year"
        if any(_in_decade(e, q) for e in ev_q):
            return None
    elif _is_year(q):
        kind = "year"
    elif q.words and re.match(r"-[A-Za-z]", claim[q.end:q.end + 2]):  # "two-point", "five-year"
        return _compound_mismatch(claim, evidence, q) if "count" in rules else None
    elif q.words and q.unit is None and 2 <= q.value <= 20 and q.value == int(q.value):
        return _count_mismatch(claim, evidence, q, ev_q) if "count" in rules else None
    else:
        if _ORDINAL_SUFFIX.match(claim, q.end) and q.value in _ordinal_words(evidence):
            return None
        if _within_bound(claim, q, ev_q):
            return None
        kind = "day" if _is_day(claim, q) else "number"
    if kind not in rules:
        return None
    return GuardFinding(kind, f"the claim's {kind} '{q.text}'{_where(claim, q)} has no counterpart in the "
                              "evidence")


# What a claim puts before a number to say it is a bound or a round figure: "over 5,000", "up to 20%",
# "approximately 17.9 million". Evidence within the bound (up to ten times past it) or within a tenth of
# a round figure is its counterpart.
_AT_MOST = re.compile(r"\b(?:under|less than|fewer than|below|up to|at most|no more than|not more than|maximum of)\s*$", re.I)
_AT_LEAST = re.compile(r"\b(?:over|more than|above|at least|exceeding|in excess of|upwards of|greater than|"
                       r"minimum of)\s*$", re.I)
_ABOUT = re.compile(r"\b(?:about|approximately|approx\.|around|nearly|almost|roughly|some|circa|an? estimated|"
                    r"estimated)\s*$|~\s*$", re.I)
_CURRENCY_SIGN = re.compile(r"(?:US\$|\$|€|£|USD\s?|EUR\s?)\s*$", re.I)


def _within_bound(claim: str, q: Quantity, ev_q: list[Quantity]) -> bool:
    """Whether the claim gives its number as a bound or a round figure that an evidence number meets."""
    before = _CURRENCY_SIGN.sub("", claim[max(0, q.start - 40):q.start])
    values = [e.value for e in ev_q if (e.unit == q.unit or e.unit is None) and not _is_year(e)
              and e.value == e.value and not math.isinf(e.value)]
    if not values or q.value <= 0 or math.isinf(q.value):
        return False
    if _AT_MOST.search(before):
        return any(q.value / 10 <= v <= q.value for v in values)
    if _AT_LEAST.search(before):
        return any(q.value <= v <= q.value * 10 for v in values)
    if _ABOUT.search(before):
        return any(abs(v - q.value) <= q.value / 10 for v in values)
    return False


def _attachment(claim: str, evidence: str, q: Quantity, same: list[Quantity]) -> GuardFinding | None:
    """The claim's words next to a percentage or sum must be near one of its occurrences in the evidence."""
    cjk = has_han(claim)
    context = _cjk_context(claim, q, 6, 4) if cjk else _context_words(claim, q, 4, 3)
    if not context:
        return None
    # in the evidence, the whole sentence of each occurrence: "Kung Fu Panda opened at number one, grossing
    # $60.2 million in its opening weekend" is about the film, however far its name is from the sum
    near = [(_cjk_context if cjk else _context_words)(*_sentence_of(evidence, e), len(evidence), len(evidence))
            for e in same]
    if any(context.keys() & n.keys() for n in near):
        return None
    if cjk:  # character bigrams mean nothing to a reader: the phrases the number stands in do
        e = same[0]
        return GuardFinding("attachment", f"the claim's '{q.text}'{_where(claim, q)} measures something else "
                                          f"in the evidence ({_zh_phrase(evidence, e.start, e.end)})")
    theirs = sorted({w for n in near for k, w in n.items() if k not in context})[:4]
    return GuardFinding(
        "attachment",
        f"'{q.text}' in the claim is about {', '.join(sorted(set(context.values())))}; in the evidence "
        f"{q.value:g}{'%' if q.unit == '%' else ''} is attached to "
        f"{', '.join(theirs) if theirs else 'something else'}")


# --- names with numbers -----------------------------------------------------------------------------


def _name_before(claim: str, q: Quantity) -> str | None:
    """The name a bare number in digits belongs to ("Article" for "Article 5", "Windows" for "Windows 10")."""
    if q.unit is not None or q.words or _is_year(q) or re.match(r"-[A-Za-z]", claim[q.end:q.end + 2]):
        return None  # "24-hour", "3-year-old": a quantity; "NeurIPS 2017", "Euro 2016": an edition's year
    m = _NAME_WORD.search(claim, 0, q.start)
    if m is None or re.search(r"['’]s$", m.group(1)):  # "the Theatre's 24 hours": a possessive is no name
        return None
    word = m.group(1)
    lower = word.lower()
    if lower in _REFERENCE_NOUNS:
        return word
    if word != lower and lower not in _NAME_STOP:
        return word
    return None


def _name_mismatch(evidence: str, name: str, q: Quantity) -> GuardFinding | None:
    """A mismatch only when the evidence gives the same name one other number ("Windows 11" for "Windows
    10"); evidence that numbers several ("Rule 4", "Rule 5", ...) is about a series the claim's is one of."""
    flags = re.I if name.lower() in _REFERENCE_NOUNS else 0
    pattern = re.compile(r"(?<![A-Za-z])%s\s+(\d+(?:\.\d+)?|[IVXLC]+)\b" % re.escape(name), flags)
    numbers = {_name_number(m.group(1)): m.group(1) for m in pattern.finditer(evidence)}
    if len(numbers) != 1 or q.value in numbers:
        return None
    return GuardFinding("name", f"the claim's '{name} {q.text}' is '{name} {next(iter(numbers.values()))}' "
                                f"in the evidence")


def _name_number(text: str) -> float:
    """'12' -> 12, 'II' -> 2, 'XIV' -> 14."""
    if text[0].isdigit():
        return float(text)
    values = [_ROMAN[c] for c in text]
    return float(sum(-v if v < nxt else v for v, nxt in zip(values, values[1:] + [0])))


# --- counts -----------------------------------------------------------------------------------------

# a count whose noun is followed by its list: "three components: …", "two brothers, namely …"
_COUNTED_LIST = re.compile(r"(?:\s+[^\s,.;:!?]+){1,4}?\s*(?::|\s[—–-]\s|,?\s+namely\b)", re.I)


def _introduces_list(claim: str, q: Quantity) -> bool:
    """Whether the claim lists as many items as it counts ("three components: A…, B… and C…"): the items
    are what the evidence must support then, and the model reads them. Items may be long here: the
    list's start is marked, so only commas, semicolons and a last 'and' / 'or' divide them."""
    m = _COUNTED_LIST.match(claim, q.end)
    if m is None:
        return False
    body = re.split(r"[.!?](?:\s|$)", claim[m.end():], maxsplit=1)[0]
    parts = [p.strip() for p in re.split(r"[,;]", body) if p.strip()]
    if parts and not re.match(r"(?:and|or)\b", parts[-1]) and re.search(r"\s(?:and|or)\s", parts[-1]):
        parts.append("")  # "B and C": two items
    return len(parts) >= int(q.value)


def _count_mismatch(claim: str, evidence: str, q: Quantity, ev_q: list[Quantity]) -> GuardFinding | None:
    """A count written as a word ("three components") is a mismatch only when the evidence counts the same
    noun otherwise ("four components") and never as the claim does. A count the evidence leaves unsaid
    is no mismatch: "these three components" counts what the text around it lists, "two black holes"
    what the evidence names one by one."""
    if _introduces_list(claim, q):
        return None
    noun = _counted_noun(claim, q.end)
    if noun is None:
        return None
    theirs = {int(e.value): e.text for e in ev_q if _counts(e) and _counted_noun(evidence, e.end) == noun}
    if not theirs or int(q.value) in theirs:
        return None
    return GuardFinding("count", f"the claim's count '{q.text}' of {noun} has no counterpart in the evidence, "
                                 f"which counts {', '.join(sorted(theirs.values()))}")


def _counts(e: Quantity) -> bool:
    return e.unit is None and e.value == int(e.value) and 2 <= e.value < 1000 and not _is_year(e)


def _counted_noun(text: str, end: int) -> str | None:
    """The noun a count ending at `end` counts, singular and lower-case ("three main components" ->
    "component", "two supermassive black holes" -> "hole"): the last of up to four words after it, up to
    a stop word or a punctuation mark."""
    noun, at = None, end
    for m in itertools.islice(_WORD.finditer(text, end), 4):
        if re.search(r"[^\s]", text[at:m.start()]) or m.group(0).lower() in _STOP:
            break
        noun, at = m.group(0).lower(), m.end()
    return _singular(noun) if noun else None


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|z)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _compound_mismatch(claim: str, evidence: str, q: Quantity) -> GuardFinding | None:
    """A number word joined to a word by a hyphen ("two-point perspective", "a five-year career") names a
    kind of thing, not a count: a mismatch only when the evidence joins the same word to other numbers
    ("three-point") and never to the claim's."""
    head = re.match(r"-([A-Za-z]+)", claim[q.end:]).group(1)
    theirs = {}
    for m in re.finditer(r"(?<![\w-])([A-Za-z]+|\d+)\s*-\s*%s\b" % re.escape(head), evidence, re.I):
        value = float(m.group(1)) if m.group(1).isdigit() else _word_value(m.group(1))
        if value is not None:
            theirs[value] = m.group(0)
    if not theirs or q.value in theirs:
        return None
    return GuardFinding("count", f"the claim's '{q.text}-{head}' is {', '.join(sorted(theirs.values()))} in the "
                                 f"evidence")


def _word_value(word: str) -> float | None:
    """'three' -> 3, 'one' -> 1 (a number word alone), else None."""
    if word.lower() == "one":  # the number reader takes "one" alone for a pronoun
        return 1.0
    found = quantities(word)
    return found[0].value if len(found) == 1 and found[0].text == word else None


def _ordinal_words(text: str) -> set[float]:
    """The values of the ordinals written as words in `text` ("nineteenth" -> 19, "twenty-first" -> 21)."""
    values: set[float] = set()
    ordinals = "|".join(list(_ORDINALS) + list(_ORDINAL_TENS))
    for m in re.finditer(r"\b(?:(%s)[\s-]+)?(%s)\b" % ("|".join(_TENS_EN), ordinals), text, re.I):
        tens = _TENS_EN.get((m.group(1) or "").lower(), 0)
        word = m.group(2).lower()
        values.add(float(tens + _ORDINALS.get(word, 0) + _ORDINAL_TENS.get(word, 0)))
    return values


# --- words: months, negation, scope -----------------------------------------------------------------


def _month(claim: str, evidence: str) -> GuardFinding | None:
    for m in _MONTH.finditer(claim):
        month = m.group(1).lower()[:3]
        if not re.search(r"\b" + month, evidence, re.I):
            return GuardFinding("month", f"the claim's month '{m.group(1)}' has no counterpart in the evidence")
    return None


# What is no negation the evidence must repeat: a limiter ("not necessarily", "not always", "not the only":
# the claim says less, not the opposite), a negation that a contrast takes back in its sentence ("not a
# replacement for cement but rather an additive": the claim asserts the additive; "不是…而是"), one in a
# condition ("if he had not returned", "as good, if not better"), and Chinese words that hold a negation's
# character without negating (非常 "very", 不断 "constantly", 未来 "future", 无论 "whatever", …).
_LIMITER = re.compile(r"\s+(?:necessarily|always|entirely|completely|exclusively|all|the\s+(?:only|sole))\b", re.I)
# "but" opening a clause of its own ("…, but it reduced stays") asserts both: only a "but" that goes on with
# the same subject takes the negation back
_TAKEN_BACK = re.compile(r"[^.;!?]*?\b(?:rather|instead|but(?!\s+(?:it|they|he|she|we|i|you|this|these|those|there|"
                         r"its|his|her|their|our|my)\b))\b", re.I)
_CONDITION = re.compile(r"\b(?:if|unless|whether)\b[^,;:.!?]*$", re.I)
_ZH_NOT_NEGATING = re.compile("非常|无论|不仅|不但|不断|未来|别人|无疑|否则|不同|不少|不过|不久|不管|不错|特别|区别|"
                              "分别|差别|别的|无数|除非|是否|能否|可否|与否|非凡|无比|未必|不得不|不是所有|并非所有")
_ZH_TAKEN_BACK = re.compile(r"[^。；！？]*?而是")


def masked_not_negating(text: str) -> str:
    """`text` with the Chinese words that hold a negation's character without negating (非常, 不断, 未来, …)
    blanked, each character by an ideographic space: offsets stay as they were."""
    return _ZH_NOT_NEGATING.sub(lambda m: "\u3000" * len(m.group(0)), text)


def _claim_negation(claim: str) -> re.Match[str] | None:
    """The first negation of the claim that the evidence must repeat, or None."""
    if has_han(claim):
        masked = masked_not_negating(claim)
        return next((m for m in _NEGATION_ZH.finditer(masked) if not _ZH_TAKEN_BACK.match(masked, m.end())), None)
    for m in _NEGATION_EN.finditer(claim):
        if (_CONTRASTIVE.match(claim, m.end()) or _LIMITER.match(claim, m.end())
                or _TAKEN_BACK.match(claim, m.end()) or _CONDITION.search(claim, 0, m.start())):
            continue
        return m
    return None


def _negation(claim: str, evidence: str) -> GuardFinding | None:
    neg = _claim_negation(claim)
    if neg is None:
        return None
    ev_neg = _NEGATION_ZH.search(evidence) if has_han(evidence) else _NEGATION_EN.search(evidence)
    if ev_neg or has_han(evidence) and _NEGATION_EN.search(evidence):
        return None
    where = f", in {_zh_phrase(claim, neg.start(), neg.end())}" if has_han(claim) else ""
    return GuardFinding("negation", f"the claim is negated ('{neg.group(0)}'{where}), the evidence has no negation")


_EVIDENCE_NEGATION = re.compile(r"\b(?:not|never|cannot|no longer|unable to|fail(?:s|ed)? to)\b|n't\b", re.I)
# words between a negation and what it negates: "will not *be able to* benefit"
# ("not a chemical" negates a noun phrase, not the claim's predicate: articles are no fillers)
_NEGATION_FILLERS = set("""be been being able to have has had yet ever always even really also get go going
necessarily fully directly""".split())
_CONDITIONAL = re.compile(r"\b(?:if|whether|unless)\b", re.I)


def _negated_in_evidence(claim: str, evidence: str) -> GuardFinding | None:
    """The claim asserts what the evidence only ever says with a negation in front ("could allow the UK to
    benefit" vs "will not be able to benefit"), in a sentence that shares another of the claim's words."""
    if has_han(claim) or has_han(evidence) or _NEGATION_EN.search(claim) or _CONDITIONAL.search(claim):
        return None  # a conditional claim ("if a risk exists") asserts nothing the evidence could deny
    claim_stems = {_stem(w) for w in _WORD.findall(claim) if w.lower() not in _STOP and len(w) > 2}
    for cue in _EVIDENCE_NEGATION.finditer(evidence):
        if _CONTRASTIVE.match(evidence, cue.end()):
            continue
        word = _negated_word(evidence, cue.end())
        if word is None or _stem(word.group(0)) not in claim_stems:
            continue
        stem = _stem(word.group(0))
        sentence, _ = _sentence_of(evidence, Quantity(0.0, None, "", word.start(), word.end()))
        shared = {_stem(w) for w in _WORD.findall(sentence) if w.lower() not in _STOP and len(w) > 2} & claim_stems
        if len(shared - {stem}) >= 1 and not _asserted(evidence, stem):
            return GuardFinding("negated-in-evidence",
                                f"the claim says '{word.group(0)}'; the evidence says "
                                f"'{evidence[cue.start():word.end()]}'")
    return None


def _negated_word(text: str, start: int) -> re.Match[str] | None:
    """The first word after a negation that is not a filler, when it is a lower-case content word in the
    same clause ("not Barack Obama" and "not. Richard" negate no predicate)."""
    for m in itertools.islice(_WORD.finditer(text, start), 4):
        lower = m.group(0).lower()
        if re.search(r"[.,;:!?()\n]", text[start:m.start()]):
            return None
        if lower in _NEGATION_FILLERS:
            continue
        return m if m.group(0) == lower and lower not in _STOP and len(lower) > 2 else None
    return None


def _asserted(evidence: str, stem: str) -> bool:
    """Whether a word of this stem occurs in the evidence without a negation among the five words before it."""
    for m in _WORD.finditer(evidence):
        if _stem(m.group(0)) == stem:
            before = " ".join(evidence[max(0, m.start() - 80):m.start()].split()[-5:])
            if not _EVIDENCE_NEGATION.search(before):
                return True
    return False


def _scope(claim: str, evidence: str) -> GuardFinding | None:
    """The claim's unqualified subject ("the law allows") occurs in the evidence only narrowed by a
    capitalised qualifier the claim lacks ("Islamic law allows")."""
    if has_han(claim):
        return None
    words = list(re.finditer(r"[A-Za-z][A-Za-z'’-]*", claim))
    claim_words = {w.group(0).lower() for w in words}
    for i in range(len(words) - 1):
        first, second = words[i].group(0), words[i + 1].group(0)
        if not (_content(first) and _content(second) and first.islower() and second.islower()):
            continue
        if i and words[i - 1].group(0).lower() not in ("the", "a", "an"):
            continue  # a subject the claim qualifies itself
        if claim[words[i].end():words[i + 1].start()] != " ":
            continue
        pattern = re.compile(r"([A-Za-z][A-Za-z'’]*)\s+%s\s+%s" % (re.escape(first), re.escape(_stem(second))), re.I)
        qualifiers = [m.group(1) for m in pattern.finditer(evidence)]
        if qualifiers and all(_narrows(q, claim_words) for q in qualifiers):
            return GuardFinding("scope", f"the claim says '{first} {second}'; the evidence says only "
                                         f"'{qualifiers[0]} {first} …'")
    return None


_PROPER_ADJECTIVE = re.compile(r"(?:ic|an|ian|ish|ese|al)$")


def _content(word: str) -> bool:
    return len(word) > 2 and word.lower() not in _STOP


def _narrows(qualifier: str, claim_words: set[str]) -> bool:
    """A proper adjective the claim does not have ("Islamic", "European", "Federal" before "law")."""
    return (qualifier[:1].isupper() and _PROPER_ADJECTIVE.search(qualifier) is not None
            and qualifier.lower() not in claim_words and qualifier.lower() not in _NAME_STOP)


_TEXT_RULES = {"month": _month, "negation": _negation, "negated-in-evidence": _negated_in_evidence,
               "scope": _scope}
