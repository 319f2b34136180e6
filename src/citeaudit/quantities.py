"""Finding numbers, units and negations in text: what the qualifier guard (judges/guard.py) compares
between a claim and its evidence, and what the claim splitter (parse/lm_decompose.py) checks a proposed
split keeps. One vocabulary of units (`UNITS`) for both; where the splitter reads differently from the
guard, a parameter says so (`wide`: more unit words; `words=False`: digits only, no number words or
Chinese numerals; `lexical=False`: grammatical negations only), so that the guard's readings, part of
its measured and versioned rules, stay as they were.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# --- number words ----------------------------------------------------------------------------------

_UNITS_EN = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
TENS_EN = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
           "trillion": 1_000_000_000_000}
_SCALE_SUFFIX = {"k": 1_000, "m": 1_000_000, "bn": 1_000_000_000, "b": 1_000_000_000}
_WORDS = "|".join(list(_UNITS_EN) + list(TENS_EN) + list(_SCALES))
# "and" joins number words ("one hundred and five") and nothing else: "defined as one and have" is "one"
_NUMBER_WORD = re.compile(r"\b(?:%s)(?:[\s-]+(?:and[\s-]+)?(?:%s))*\b" % (_WORDS, _WORDS), re.I)

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?:点[零〇一二三四五六七八九]+)?")
# a place value: a year is written digit by digit ("二〇二三年"), "两千" and "千年" are numbers
CN_PLACE = re.compile(r"[十百千万亿]")
# What a Chinese numeral counts with: a measure word or a unit ("三天", "千年", "万人"). A numeral character
# is also a character of words ("千山翠", a colour; "万一", "in case"; "十分", "very"; "四川"; "统一六国"):
# alone, or led by a place value, it is a number only before one of these or after 第 ("第三").
_CN_MEASURE = re.compile(r"\s*(?:%|个?百分点|分之|分钟|小时|世纪|年代|周年|摄氏度|公里|公斤|千克|美元|[多余来几个位名人"
                         r"家种项条件只头匹台辆架艘座所栋层本册张篇部集首次回遍倍成岁届期季场轮批组类级号年月日天周秒"
                         r"米克吨斤亩元块万亿])")
# 一 and 两 alone are mostly an article ("一个", "一种", "两者"): a number only before these
_CN_ONE_MEASURE = re.compile(r"\s*(?:%|个?百分点|年|月|日|天|倍|次|万|亿)")


# percent and units: one vocabulary, written form -> normalised key
_PERCENT = re.compile(r"^\s*(?:%|percent\b|per\s*cent\b|pct\b|percentage points?\b|個百分點|个百分点)", re.I)
UNITS = {
    "°c": "°c", "℃": "°c", "degrees celsius": "°c", "degree celsius": "°c", "celsius": "°c", "摄氏度": "°c",
    "°f": "°f", "℉": "°f", "fahrenheit": "°f",
    "km": "km", "kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km", "公里": "km",
    "m": "m", "metres": "m", "meters": "m", "metre": "m", "meter": "m", "米": "m",
    "cm": "cm", "mm": "mm", "miles": "mi", "mile": "mi", "mi": "mi", "feet": "ft", "foot": "ft", "ft": "ft",
    "inches": "inch", "inch": "inch",
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
    # read only when asked (`wide=True`: the claim splitter, the plain reading): the guard's rules were measured
    # without them
    "percentage": "%", "°": "°", "‰": "‰", "¥": "jpy", "μg": "μg", "oz": "oz", "ml": "ml", "l": "l", "wh": "wh",
    "mv": "mv", "khz": "khz", "secs": "s", "hr": "h", "decade": "decade", "decades": "decade",
    "century": "century", "centuries": "century", "mph": "mph", "kph": "km/h", "km/h": "km/h", "acre": "acre",
    "acres": "acre", "hectare": "ha", "hectares": "ha", "kelvin": "k", "bit": "bit", "bits": "bit",
    "byte": "byte", "bytes": "byte", "mah": "mah", "lpm": "l/min", "db": "db", "km2": "km2", "m2": "m2",
}
WIDE_ONLY = frozenset(list(UNITS)[list(UNITS).index("percentage"):])
_SIGNS = ("$", "€", "£", "¥")  # written before the number


def _unit_after_pattern(wide: bool) -> re.Pattern[str]:
    return re.compile(r"^\s*(%s)(?![a-z])" % "|".join(
        re.escape(u) for u in sorted(UNITS, key=len, reverse=True)
        if u not in _SIGNS and (wide or u not in WIDE_ONLY)), re.I)


_UNIT_AFTER = {False: _unit_after_pattern(False), True: _unit_after_pattern(True)}
_CURRENCY_BEFORE = {False: re.compile(r"(?:\$|€|£|US\$|USD\s?|EUR\s?)\s*$", re.I),
                    True: re.compile(r"(?:\$|€|£|¥|US\$|USD\s?|EUR\s?)\s*$", re.I)}


# Negation words: the grammatical ones, and words that deny by their meaning ("lacks", "refused"), which
# the guard reads too and the claim splitter (`lexical=False`) does not.
_NEGATION_GRAMMATICAL = (r"not|no|never|none|nor|without|cannot|can't|won't|don't|doesn't|didn't|isn't|aren't|"
                         r"wasn't|weren't|hasn't|haven't|hadn't|shouldn't|wouldn't|couldn't")
_NEGATION_LEXICAL = r"neither|nobody|nothing|nowhere|lack(?:s|ed|ing)?|fail(?:s|ed|ing)?|unable|absent|denied|denies|refused?|neglected"
NEGATION_EN = re.compile(r"\b(?:%s|%s)\b|n't\b" % (_NEGATION_GRAMMATICAL, _NEGATION_LEXICAL), re.I)
NEGATION_ZH = re.compile(r"不|没有|未|没|无|非|否|别|勿")
_GRAMMATICAL = {False: re.compile(r"\b(?:%s)\b|n't\b" % _NEGATION_GRAMMATICAL, re.I), True: re.compile(r"不|没有|未")}


def negation_pattern(zh: bool, lexical: bool = True) -> re.Pattern[str]:
    """What finds the negations of an English or a Chinese text; `lexical=False`: grammatical ones only."""
    if lexical:
        return NEGATION_ZH if zh else NEGATION_EN
    return _GRAMMATICAL[zh]


# Contrast, not negation: "not only X but Y", "doesn't just affect": the claim still asserts X.
CONTRASTIVE = re.compile(r"\s+(?:only|just|merely|simply|solely)\b|\s+to\s+mention\b|\s+matter\b", re.I)


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str | None  # normalised unit key, "%" for percent, None for a bare number
    text: str
    start: int
    end: int
    precision: float = 0.0  # the place of the last written digit (1 for "15", 0.1 for "1.5", 1e5 for "1.5 million")
    words: bool = False  # written as words ("thirty"), not digits
    unit_text: str = ""  # the unit as written ("months", "%", "°C"), for messages


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
        elif w in TENS_EN:
            current += TENS_EN[w]
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
            total = ((total + section + digit) or 1) * _CN_BIG[c]  # "万人": ten thousand people
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
    if word == "m" and not _CURRENCY_BEFORE[False].search(text[:end].rsplit(" ", 1)[0] + " "):
        return 1.0, end
    return float(factor), end + m.end()


def _unit_after(text: str, end: int, wide: bool = False) -> tuple[str | None, int]:
    rest = text[end:]
    m = _PERCENT.match(rest)
    if m:
        return "%", end + m.end()
    m = re.match(r"\s*(°\s*[cf]|℃|℉)", rest, re.I)
    if m:
        return ("°c" if m.group(1).lower().endswith("c") or m.group(1) == "℃" else "°f"), end + m.end()
    m = _UNIT_AFTER[wide].match(rest)
    if m:
        return UNITS[m.group(1).lower()], end + m.end()
    return None, end


def quantities(text: str, words: bool = True, wide: bool = False) -> list[Quantity]:
    """Every number in `text` with its unit (normalised), digits, number words and Chinese numerals;
    `words=False`: digits only; `wide`: the unit words of `WIDE_ONLY` too."""
    text = normalise(text)
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    for m in _VERSION.finditer(text):
        found.append(Quantity(float("nan"), "version:" + m.group(1), m.group(0), m.start(), m.end()))
        taken.append((m.start(), m.end()))
    spans: list[tuple[int, int, float, float, bool]] = []
    for m in _NUMERIC.finditer(text):
        if not free(m.start(), m.end()) or re.search(r"[A-Za-z]-$", text[max(0, m.start() - 2):m.start()]):
            continue  # identifiers such as COVID-19 are names, not quantities
        value = float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))
        spans.append((m.start(), m.end(), value, 10.0 ** -len(m.group(2) or ""), False))
    for m in _NUMBER_WORD.finditer(text) if words else ():
        value = _words_to_number(m.group(0))
        if m.group(0).lower() == "one":  # mostly a pronoun ("the one that", "one of"), rarely a count
            continue
        if value is not None and free(m.start(), m.end()):
            spans.append((m.start(), m.end(), value, 1.0, True))
    for m in CN_NUMBER.finditer(text) if words else ():
        s = m.group(0)
        if not _cn_numeral_is_number(text, m):
            continue
        value = _cn_to_number(s)
        if value is not None and free(m.start(), m.end()):
            spans.append((m.start(), m.end(), value, _precision(s, 1.0), False))
    for m in re.finditer(r"百分之([零〇一二两三四五六七八九十百点]+|\d+(?:\.\d+)?)", text):
        raw = m.group(1)
        if not (words or raw[0].isdigit()):
            continue
        value = float(raw) if raw[0].isdigit() else _cn_to_number(raw)
        if value is not None:
            found.append(Quantity(value, "%", m.group(0), m.start(), m.end(), _precision(raw, 1.0), unit_text="百分之"))
            taken.append((m.start(), m.end()))
            spans = [s for s in spans if s[1] <= m.start() or s[0] >= m.end()]
    for start, end, value, precision, written in sorted(spans):
        if not free(start, end):
            continue
        factor, scaled = _scale_after(text, end)
        unit, after = _unit_after(text, scaled, wide)
        unit_text = text[scaled:after].strip()
        currency = _CURRENCY_BEFORE[wide].search(text[max(0, start - 5):start]) if unit is None else None
        if currency:
            unit = UNITS[text[start - 1]] if text[start - 1] in _SIGNS else "usd"
            unit_text = currency.group(0).strip()
        if (unit == "yr" and text[end:after].strip() == "年" and factor == 1 and 1000 <= value <= 2100
                and not CN_PLACE.search(text[start:end])):
            unit = None  # "2011年", "二〇一一年" are the year 2011; "千年" and "两千年" are years counted
        found.append(Quantity(value * factor, unit, text[start:after].strip(), start, after, precision * factor,
                              written, unit_text if unit else ""))
        taken.append((start, after))
    return sorted(found, key=lambda q: q.start)


def _cn_numeral_is_number(text: str, m: re.Match[str]) -> bool:
    """Whether a run of Chinese numerals is a number: one that reads as a number on its own ("三千五百万",
    "十五", "三点五", "二〇二三"), or any run before a measure word or a unit or after 第; not a character
    of a word ("千山翠", "万一", "十分", "四大", "统一六国")."""
    s = m.group(0)
    if s in ("一", "两"):
        return _CN_ONE_MEASURE.match(text, m.end()) is not None
    if len(s) == 2 and all(c in _CN_DIGITS for c in s):  # "一一" (one by one), "统一六国", "五六个" (five or six)
        return False
    if _CN_MEASURE.match(text, m.end()) or text[max(0, m.start() - 1):m.start()] == "第":
        return True
    # on its own, a run led by a digit or 十 with a place value or a decimal point ("十五", "三千五百万",
    # "三点五"), or a year's digits ("二〇二三"); a run led by a place value ("百万", "万一") needs a measure
    return (len(s) > 1 and (s[0] in _CN_DIGITS or s[0] == "十")
            and (CN_PLACE.search(s) is not None or "点" in s or len(s) > 2))


def evidence_quantities(text: str) -> list[Quantity]:
    """The quantities of `text`, and what else can stand for a claim's number in evidence: digits glued
    to letters ("legs2 – Active motion", "COVID-19"), the end of a year range ("1904–05" holds 1905) and
    thousands set off by spaces ("53 879")."""
    text = normalise(text)
    found = quantities(text)
    for m in re.finditer(r"(?<=[A-Za-z])(\d+)(?![\d.,]\d)", text):
        found.append(Quantity(float(m.group(1)), None, m.group(0), m.start(), m.end(), 1.0))
    for m in re.finditer(r"\b(1\d|20)\d{2}\s*[-–/]\s*(\d{2})\b(?![-–/.,]?\d)", text):
        found.append(Quantity(float(m.group(1) + m.group(2)), None, m.group(0), m.start(), m.end(), 1.0))
    for m in re.finditer(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d]|[.,]\d)", text):  # thousands set off by spaces
        found.append(Quantity(float(m.group(0).replace(" ", "")), None, m.group(0), m.start(), m.end(), 1.0))
    return found


def _precision(raw: str, default: float) -> float:
    if "." in raw:
        return 10.0 ** -len(raw.split(".", 1)[1])
    if "点" in raw:
        return 10.0 ** -len(raw.split("点", 1)[1])
    return default

