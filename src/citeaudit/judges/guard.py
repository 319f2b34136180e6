"""The qualifier guard: deterministic checks that stop a `full` whose claim carries a qualifier the
evidence does not.

A model judge reads "Eco reduces annual energy by 15%" against "downtime fell by 15% over 30 days"
and sees the same topic and the same number. The guard looks at what a small model is worst at:

* numbers (with their unit, percent sign or scale word): every number of the claim must occur in the
  evidence with the same value (after normalisation: "thirty" = 30, "1.5 million" = 1,500,000,
  "百分之十五" = 15%, "80 °C" = "80°C", "1,200" = 1200) and, when the claim has a percent sign or a
  unit, with that percent / unit;
* attachment (percentages and money only): when a number does occur, the quantity it is attached to in the claim (the content
  words next to it) must appear near some occurrence of it in the evidence. "15% … energy" vs
  "downtime fell by 15%" is a mismatch;
* years / dates, month names and versions ("v2.3", "Python 3.11") are numbers and words that must
  have a counterpart too;
* negation: a claim that says "not / never / no / 不 / 没有 …" needs some negation in the evidence.

`check(claim, evidence)` returns None (nothing wrong found) or a GuardFinding naming the mismatch.
It is pure Python (no model) and says nothing about claims without qualifiers. A guard that cannot
run raises JudgeError naming the claim: a judgment is never passed as checked when it was not.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from ..errors import JudgeError
from ..text import has_han, rule_sentence_spans

# --- number words ----------------------------------------------------------------------------------

_UNITS_EN = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS_EN = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
           "trillion": 1_000_000_000_000}
_SCALE_SUFFIX = {"k": 1_000, "m": 1_000_000, "bn": 1_000_000_000, "b": 1_000_000_000}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10}
_NUMBER_WORD = re.compile(
    r"\b(?:(?:%s|%s)(?:[\s-]+(?:%s|%s|and))*)\b" % (
        "|".join(list(_UNITS_EN) + list(_TENS_EN)), "|".join(_SCALES),
        "|".join(list(_UNITS_EN) + list(_TENS_EN)), "|".join(_SCALES)), re.I)

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?:点[零〇一二三四五六七八九]+)?")

MONTHS = ("january february march april may june july august september october november december").split()
# capitalised only: "may" the verb is not a month
_MONTH = re.compile(r"\b(%s|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b" % "|".join(m.title() for m in MONTHS))

# percent and units (normalised keys); a unit attached to a number must have a counterpart
_PERCENT = re.compile(r"^\s*(?:%|percent\b|per\s*cent\b|pct\b|percentage points?\b|個百分點|个百分点)", re.I)
_UNIT_ALIASES = {
    "°c": "°c", "℃": "°c", "degrees celsius": "°c", "degree celsius": "°c", "celsius": "°c", "摄氏度": "°c",
    "°f": "°f", "℉": "°f", "fahrenheit": "°f",
    "km": "km", "kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km", "公里": "km",
    "m": "m", "metres": "m", "meters": "m", "metre": "m", "meter": "m", "米": "m",
    "cm": "cm", "mm": "mm", "miles": "mi", "mile": "mi", "mi": "mi",
    "kg": "kg", "kilograms": "kg", "kilogram": "kg", "公斤": "kg", "千克": "kg",
    "g": "g", "grams": "g", "gram": "g", "克": "g", "mg": "mg", "lb": "lb", "lbs": "lb", "pounds": "lb",
    "tonnes": "t", "tons": "t", "tonne": "t", "ton": "t", "吨": "t",
    "ms": "ms", "milliseconds": "ms", "s": "s", "sec": "s", "seconds": "s", "second": "s", "秒": "s",
    "minutes": "min", "minute": "min", "min": "min", "mins": "min", "分钟": "min",
    "hours": "h", "hour": "h", "hrs": "h", "h": "h", "小时": "h",
    "days": "d", "day": "d", "天": "d", "日": "d", "weeks": "wk", "week": "wk", "周": "wk",
    "months": "mo", "month": "mo", "个月": "mo", "years": "yr", "year": "yr", "yrs": "yr", "年": "yr",
    "kwh": "kwh", "mwh": "mwh", "gwh": "gwh", "kw": "kw", "mw": "mw", "gw": "gw", "w": "w", "watts": "w",
    "v": "v", "volts": "v", "mb": "mb", "gb": "gb", "tb": "tb", "kb": "kb", "mbps": "mbps", "gbps": "gbps",
    "ghz": "ghz", "mhz": "mhz", "hz": "hz",
    "$": "usd", "usd": "usd", "dollars": "usd", "dollar": "usd", "美元": "usd", "€": "eur", "eur": "eur",
    "euros": "eur", "£": "gbp", "gbp": "gbp", "pounds sterling": "gbp", "元": "cny", "yuan": "cny", "rmb": "cny",
}
_UNIT_AFTER = re.compile(r"^\s*(%s)(?![a-z])" % "|".join(
    re.escape(u) for u in sorted(_UNIT_ALIASES, key=len, reverse=True) if u not in ("$", "€", "£")), re.I)
_CURRENCY_BEFORE = re.compile(r"(?:\$|€|£|US\$|USD\s?|EUR\s?)\s*$", re.I)

_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|none|nor|neither|nobody|nothing|nowhere|without|cannot|can't|won't|don't|doesn't|"
    r"didn't|isn't|aren't|wasn't|weren't|hasn't|haven't|hadn't|shouldn't|wouldn't|couldn't|lack(?:s|ed|ing)?|"
    r"fail(?:s|ed|ing)?|unable|absent|denied|denies|refused?|neglected)\b|n't\b", re.I)
_NEGATION_ZH = re.compile(r"不|没有|没|未|无|非|否|别|勿")

_STOP = set("""a an the of in on at to for by from with and or as is are was were be been being this that these
those it its their his her our your my we they he she you i than then over under about around approximately
nearly almost some more less up down per each every into out new also which who whom whose what when where
while after before during since until within across between among through via has have had will would can could
may might should must do does did so such only just very most least many much few several all any both other
increase increases increased increasing decrease decreases decreased reduce reduces reduced reducing reduction
rise rises rose risen fall falls fell fallen grow grows grew grown growth drop drops dropped cut cuts lower
lowered higher raise raised gain gained lost lose loses improve improves improved boost boosted total
percent per cent pct year years annual annually day days month months week weeks""".split())
_WORD = re.compile(r"[^\W\d_]+", re.U)


_ATTACHED_UNITS = {"%", "usd", "eur", "gbp", "cny"}


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str | None  # normalised unit key, "%" for percent, None for a bare number
    text: str
    start: int
    end: int
    precision: float = 0.0  # the place of the last written digit (1 for "15", 0.1 for "1.5", 1e5 for "1.5 million")


@dataclass(frozen=True)
class GuardFinding:
    kind: str  # "number" | "unit" | "attachment" | "date" | "negation"
    reason: str

    def __str__(self) -> str:
        return self.reason


def normalise(text: str) -> str:
    """NFKC (full-width digits and ％ to ASCII), unify dashes, drop thin spaces."""
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2009", " ").replace("\u202f", " ").replace("−", "-")


def _words_to_number(phrase: str) -> float | None:
    total, current, seen = 0, 0, False
    for w in re.split(r"[\s-]+", phrase.lower()):
        if w == "and" or not w:
            continue
        if w in _UNITS_EN:
            current += _UNITS_EN[w]
        elif w in _TENS_EN:
            current += _TENS_EN[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w in _SCALES:
            total += (current or 1) * _SCALES[w]
            current = 0
        else:
            return None
        seen = True
    return float(total + current) if seen else None


def _cn_to_number(s: str) -> float | None:
    if "点" in s:
        whole, _, frac = s.partition("点")
        w = _cn_to_number(whole) if whole else 0.0
        if w is None:
            return None
        digits = "".join(str(_CN_DIGITS.get(c, "")) for c in frac)
        return float(f"{int(w)}.{digits}") if digits else w
    if all(c in _CN_DIGITS for c in s):  # digit by digit: 二〇二三
        return float("".join(str(_CN_DIGITS[c]) for c in s)) if len(s) > 1 or s in _CN_DIGITS else None
    total, section, digit = 0, 0, 0
    for c in s:
        if c in _CN_DIGITS:
            digit = _CN_DIGITS[c]
        elif c in _CN_SMALL:
            section += (digit or 1) * _CN_SMALL[c]
            digit = 0
        elif c in _CN_BIG:
            total = (total + section + digit) * _CN_BIG[c]
            section, digit = 0, 0
    return float(total + section + digit)


_NUMERIC = re.compile(r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\d])")
_VERSION = re.compile(r"(?<![A-Za-z0-9_.])v?(\d+\.\d+(?:\.\d+)+)(?![\d])", re.I)


def _scale_after(text: str, end: int) -> tuple[float, int]:
    m = re.match(r"\s*(thousand|million|billion|trillion|bn|k|m|万|亿|千)(?![a-z])", text[end:], re.I)
    if not m:
        return 1.0, end
    word = m.group(1).lower()
    factor = _SCALES.get(word) or _SCALE_SUFFIX.get(word) or _CN_BIG.get(word) or _CN_SMALL.get(word) or 1
    # 'm' right after a number is metres far more often than millions: only with a currency before it
    if word == "m" and not _CURRENCY_BEFORE.search(text[:end].rsplit(" ", 1)[0] + " "):
        return 1.0, end
    return float(factor), end + m.end()


def _unit_after(text: str, end: int) -> tuple[str | None, int]:
    rest = text[end:]
    m = _PERCENT.match(rest)
    if m:
        return "%", end + m.end()
    m = re.match(r"\s*(°\s*[cf]|℃|℉)", rest, re.I)
    if m:
        return ("°c" if m.group(1).lower().endswith("c") or m.group(1) == "℃" else "°f"), end + m.end()
    m = _UNIT_AFTER.match(rest)
    if m:
        return _UNIT_ALIASES[m.group(1).lower()], end + m.end()
    return None, end


def quantities(text: str) -> list[Quantity]:
    """Every number in `text` with its unit (normalised), digits, number words and Chinese numerals."""
    text = normalise(text)
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    for m in _VERSION.finditer(text):
        found.append(Quantity(float("nan"), "version:" + m.group(1), m.group(0), m.start(), m.end()))
        taken.append((m.start(), m.end()))
    spans: list[tuple[int, int, float]] = []
    for m in _NUMERIC.finditer(text):
        if not free(m.start(), m.end()) or re.search(r"[A-Za-z]-$", text[max(0, m.start() - 2):m.start()]):
            continue  # identifiers such as COVID-19 are names, not quantities
        value = float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))
        spans.append((m.start(), m.end(), value, 10.0 ** -len(m.group(2) or "")))
    for m in _NUMBER_WORD.finditer(text):
        value = _words_to_number(m.group(0))
        if m.group(0).lower() == "one":  # mostly a pronoun ("the one that", "one of"), rarely a count
            continue
        if value is not None and free(m.start(), m.end()):
            spans.append((m.start(), m.end(), value, 1.0))
    for m in _CN_NUMBER.finditer(text):
        s = m.group(0)
        if len(s) == 1 and s in "一两":  # 一 / 两 alone is mostly an article ("一个", "两者")
            if not re.match(r"\s*(?:%|个?百分点|年|月|日|天|倍|次|万|亿)", text[m.end():]):
                continue
        value = _cn_to_number(s)
        if value is not None and free(m.start(), m.end()):
            spans.append((m.start(), m.end(), value, _precision(s, 1.0)))
    for m in re.finditer(r"百分之([零〇一二两三四五六七八九十百点]+|\d+(?:\.\d+)?)", text):
        raw = m.group(1)
        value = float(raw) if raw[0].isdigit() else _cn_to_number(raw)
        if value is not None:
            found.append(Quantity(value, "%", m.group(0), m.start(), m.end(), _precision(raw, 1.0)))
            taken.append((m.start(), m.end()))
            spans = [s for s in spans if s[1] <= m.start() or s[0] >= m.end()]
    for start, end, value, precision in sorted(spans):
        if not free(start, end):
            continue
        factor, after = _scale_after(text, end)
        unit, after = _unit_after(text, after)
        if unit is None and _CURRENCY_BEFORE.search(text[max(0, start - 5):start]):
            unit = {"$": "usd", "€": "eur", "£": "gbp"}.get(text[start - 1], "usd")
        found.append(Quantity(value * factor, unit, text[start:after].strip(), start, after, precision * factor))
        taken.append((start, after))
    return sorted(found, key=lambda q: q.start)


def _precision(raw: str, default: float) -> float:
    if "." in raw:
        return 10.0 ** -len(raw.split(".", 1)[1])
    if "点" in raw:
        return 10.0 ** -len(raw.split("点", 1)[1])
    return default


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


def _context_words(text: str, q: Quantity, before: int, after: int) -> dict[str, str]:
    """Content words next to a number: {stem: word as written}."""
    left = _WORD.findall(text[:q.start])[-before:]
    right = _WORD.findall(text[q.end:])[:after]
    return {_stem(w): w.lower() for w in left + right if w.lower() not in _STOP and len(w) > 2}


_CJK_STOP = set("减少 降低 增加 增长 提高 下降 上升 约为 大约 达到 左右 超过 不到 以上 以下 之间 其中 相比 比例 百分 分之 个月 年度".split())


def _cjk_context(text: str, q: Quantity, before: int, after: int) -> dict[str, str]:
    """CJK character bigrams next to a number (Chinese has no spaces to split words on)."""
    left = re.sub(r"[^\u4e00-\u9fff]", "", text[max(0, q.start - before * 2):q.start])[-before:]
    right = re.sub(r"[^\u4e00-\u9fff]", "", text[q.end:q.end + after * 2])[:after]
    grams = {g for part in (left, right) for g in (part[i:i + 2] for i in range(len(part) - 1))}
    return {g: g for g in grams if g not in _CJK_STOP and not _CN_NUMBER.search(g)}


def _sentence_of(text: str, e: Quantity) -> tuple[str, Quantity]:
    """The sentence holding `e`, and `e` re-based onto it (a number's quantity is in its own sentence)."""
    start, end = next(((a, b) for a, b in rule_sentence_spans(text) if a <= e.start < b), (0, len(text)))
    return text[start:end], Quantity(e.value, e.unit, e.text, e.start - start, e.end - start, e.precision)


def check(claim: str, evidence: str, attachment: bool = True) -> GuardFinding | None:
    """The first qualifier of `claim` without a counterpart in `evidence`, or None."""
    try:
        return _check(normalise(claim), normalise(evidence), attachment)
    except Exception as err:  # a bug: a guard that did not run must not pass for one that found nothing
        raise JudgeError(f"qualifier guard failed on claim {claim!r}: {err!r}") from err


def _check(claim: str, evidence: str, attachment: bool) -> GuardFinding | None:
    ev_q = quantities(evidence)
    for q in quantities(claim):
        if q.unit and q.unit.startswith("version:"):
            version = q.unit.split(":", 1)[1]
            if not any(e.unit == q.unit for e in ev_q) and version not in evidence:
                return GuardFinding("number", f"the claim's version '{q.text}' does not occur in the evidence")
            continue
        same = [e for e in ev_q if _same_value(q, e)]
        if not same:
            kind = "date" if q.unit is None and 1000 <= q.value <= 2100 and q.value == int(q.value) else "number"
            what = "year" if kind == "date" else "number"
            return GuardFinding(kind, f"the claim's {what} '{q.text}' has no counterpart in the evidence")
        if q.unit is not None and not any(e.unit == q.unit or e.unit is None and q.unit not in ("%",) and
                                          _unit_nearby(evidence, e, q.unit) for e in same):
            units = sorted({e.unit or "no unit" for e in same})
            return GuardFinding("unit", f"'{q.text}' is in the claim with unit '{q.unit}', the evidence has "
                                        f"{q.value:g} only with {', '.join(units)}")
        is_year = q.unit is None and 1000 <= q.value <= 2100 and q.value == int(q.value)
        # attachment only for percentages and money: a bare number ("1.5 million people") is too often
        # paraphrased around ("population"), and a physical unit (°C, days, km) already says what is measured
        if attachment and not is_year and q.unit in _ATTACHED_UNITS:
            cjk = has_han(claim)
            context = _cjk_context(claim, q, 6, 4) if cjk else _context_words(claim, q, 4, 3)
            if context:
                near = [(_cjk_context if cjk else _context_words)(*_sentence_of(evidence, e), 12 if cjk else 8,
                                                                  12 if cjk else 8) for e in same]
                if not any(context.keys() & n.keys() for n in near):
                    theirs = sorted({w for n in near for k, w in n.items() if k not in context})[:4]
                    return GuardFinding(
                        "attachment",
                        f"'{q.text}' in the claim is about {', '.join(sorted(context.values()))}; in the evidence "
                        f"{q.value:g}{'%' if q.unit == '%' else ''} is attached to "
                        f"{', '.join(theirs) if theirs else 'something else'}")
    for m in _MONTH.finditer(claim):
        month = m.group(1).lower()[:3]
        if not re.search(r"\b" + month, evidence, re.I):
            return GuardFinding("date", f"the claim's month '{m.group(1)}' has no counterpart in the evidence")
    neg = _NEGATION_ZH.search(claim) if has_han(claim) else _NEGATION_EN.search(claim)
    if neg:
        ev_neg = _NEGATION_ZH.search(evidence) if has_han(evidence) else _NEGATION_EN.search(evidence)
        if not ev_neg and not (has_han(evidence) and _NEGATION_EN.search(evidence)):
            return GuardFinding("negation", f"the claim is negated ('{neg.group(0)}'), the evidence has no negation")
    return None


def _unit_nearby(evidence: str, e: Quantity, unit: str) -> bool:
    """A unit written a word away from its number ('30 full days', '$ 5')."""
    window = evidence[max(0, e.start - 6): e.end + 24].lower()
    return any(key in window and value == unit for key, value in _UNIT_ALIASES.items() if len(key) > 2 or key in "$€£")
