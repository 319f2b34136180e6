"""Short plain claims made from real passages, for training: what a support answer says in one line.

The public attribution sets hold long references and encyclopaedic claims; a support answer is full of
short plain sentences that restate one sentence of a manual or a spec sheet: an instruction, a figure
with its unit, a negation. A judge trained on the public sets alone misses them ("Hold the power button
for 10 seconds." against "To reset the P7, hold the power button for 10 seconds." judged `none`). These
pairs teach the missing case from the training rows' own text, in English and Chinese:

| derived claim | from a sentence S of the passage | label |
|---|---|---|
| `copy` | S itself | full |
| `clause` | one clause of S (a leading "To …," / "如需…，" dropped, or the part before "; " / "；") | full |
| `head` | the part of S before its first comma, when that part is a sentence of its own | full |
| `number` | S with one number changed | contradicts |
| `unit` | S with a unit swapped for another of its kind (seconds → minutes, kg → g, 元 → 美元) | contradicts |
| `negation` | S with its negation added or removed | contradicts |
| `name` | S with a capitalised name swapped for a name from another passage (English) | none |
| `swap` | S with one content word swapped for one from the sentences around it ("red" for "green") | none |
| `antonym` | S with a word swapped for its opposite (rose → fell, before → after, 增加 → 减少) | contradicts |
| `second` | S joined with a clause from another passage ("… and …", "…，并且…") | partial |
| `elsewhere` | a sentence of another passage of the same source | none |

The passage the pair is read with is the window of sentences around S (up to four), as a cited passage
would be. Only the *train* split's rows are drawn from (training/data.py splits by claim), so no dev or
test passage is seen. `benchmarks/data/plain_support.jsonl`, the hand-written pairs the judge is
measured on, is never read here; `tests/test_augment.py` checks that none of its claims or passages
appears in a mix.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

from citeaudit.text import STOP_WORDS, has_han, rule_sentence_spans

KINDS = ("copy", "clause", "head", "number", "unit", "negation", "name", "swap", "antonym", "second", "elsewhere")
LABELS = {"copy": "full", "clause": "full", "head": "full", "number": "contradicts", "unit": "contradicts",
          "negation": "contradicts", "name": "none", "swap": "none", "antonym": "contradicts", "second": "partial",
          "elsewhere": "none"}

# sentences outside these lengths (characters) make poor one-line claims
_SHORTEST, _LONGEST = {False: 25, True: 8}, {False: 220, True: 90}

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)(?![\w])|(?<=[^\d])(\d+(?:\.\d+)?)(?=[%％]|[^\x00-\x7f])")
_UNIT_SWAPS = [
    # (pattern, replacement choices): both directions are in the table
    ("seconds", ("minutes", "hours")), ("minutes", ("seconds", "hours")), ("hours", ("minutes", "days")),
    ("days", ("weeks", "months")), ("weeks", ("days", "months")), ("months", ("weeks", "years")),
    ("years", ("months", "decades")), ("kg", ("g", "lb")), ("km", ("m", "miles")), ("miles", ("km",)),
    ("metres", ("kilometres", "feet")), ("meters", ("kilometers", "feet")), ("percent", ("points",)),
    ("million", ("billion", "thousand")), ("billion", ("million", "trillion")), ("dollars", ("euros",)),
    ("秒", ("分钟", "小时")), ("分钟", ("秒", "小时")), ("小时", ("分钟", "天")), ("公斤", ("克", "吨")),
    ("公里", ("米", "英里")), ("万", ("亿", "千")), ("亿", ("万",)), ("元", ("美元", "欧元")), ("个月", ("年", "周")),
    ("年", ("个月",)), ("every day", ("every week", "every month")), ("every week", ("every day", "every month")),
    ("every month", ("every week", "every year")), ("daily", ("weekly", "monthly")), ("weekly", ("daily", "monthly")),
    ("monthly", ("weekly", "yearly")), ("每天", ("每周", "每月")), ("每周", ("每天", "每月")), ("每月", ("每周", "每年")),
]
# a word and its opposite, both ways: what a sentence says turned round ("revenue rose" / "revenue fell")
_OPPOSITES_EN = [("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"), ("rose", "fell"),
                 ("rise", "fall"), ("rises", "falls"), ("higher", "lower"), ("more", "less"), ("before", "after"),
                 ("above", "below"), ("allowed", "prohibited"), ("open", "closed"), ("maximum", "minimum"),
                 ("larger", "smaller"), ("largest", "smallest"), ("won", "lost"),
                 ("gained", "lost"), ("north", "south"), ("east", "west"), ("older", "younger"), ("early", "late"),
                 ("earlier", "later"), ("longer", "shorter"), ("faster", "slower"), ("better", "worse"),
                 ("required", "optional"), ("included", "excluded"), ("inside", "outside"), ("true", "false")]
_OPPOSITES_ZH = [("增加", "减少"), ("增长", "下降"), ("上升", "下降"), ("提高", "降低"), ("之前", "之后"), ("以前", "以后"),
                 ("允许", "禁止"), ("最高", "最低"), ("以上", "以下"), ("高于", "低于"), ("多于", "少于"), ("最大", "最小"),
                 ("开放", "关闭"), ("打开", "关闭"), ("胜", "负"), ("北", "南"), ("东", "西"), ("早于", "晚于"),
                 ("更长", "更短"), ("更快", "更慢"), ("包括", "不包括"), ("必须", "无需"), ("成功", "失败"), ("赢得", "输掉")]
_EN_NEGATE = [(re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|has|have|had)\b(?! not)"), r"\1 not"),
              (re.compile(r"\b(does|did|do)\b(?! not)"), r"\1 not")]
_EN_UNNEGATE = [(re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|has|have|had|does|did|do) not\b"), r"\1"),
                (re.compile(r"\bcannot\b"), "can"), (re.compile(r"\bnever\b"), "always")]
_ZH_NEGATE = [("可以", "不可以"), ("能够", "不能"), ("需要", "不需要"), ("应该", "不应该"), ("是", "不是"), ("有", "没有"),
              ("会", "不会"), ("能", "不能")]
_ZH_UNNEGATE = [("不可以", "可以"), ("不能", "能"), ("不需要", "需要"), ("不是", "是"), ("没有", "有"), ("不会", "会"),
                ("禁止", "允许"), ("无需", "需要"), ("不", "")]
# Han pairs that are grammar, not content: swapping them makes a broken sentence, not a wrong claim
_ZH_SWAP_STOP = set("我们 他们 可以 进行 以及 一个 这个 那个 没有 不是 就是 因为 所以 但是 如果 其中 之后 之前 已经 通过 对于 "
                    "关于 由于 作为 成为 还是 或者 而且 并且 以上 以下 自己 这些 那些 什么 如何 为了".split())
_EN_SWAP_STOP = STOP_WORDS | set("""also will would could should must shall might into about after before over under
more most less only just very such each every some than then them been were does done make made said
says like well here there where while whose other another first last many much""".split())
_EN_LEADING = re.compile(r"^(?:To|If|When|Before|After|Once|In order to|For)\b[^,]{3,80},\s*(?P<rest>.+)$")
_ZH_LEADING = re.compile(r"^(?:如需|如果|为了|要|若|在|当)[^，]{2,30}，(?P<rest>.+)$")
# a sentence whose first part is a condition or a concession: what comes before its comma is not said
_EN_SUBORDINATE = re.compile(r"^(?:If|When|Whether|Unless|Although|Though|While|Because|Since|As|After|Before|Once|"
                             r"Until|Even|Despite|In|On|At|By|For|With|Without|To|From|During|Under|Over)\b")
_ZH_SUBORDINATE = re.compile(r"^(?:如果|如|若|假如|虽然|尽管|因为|由于|当|在|为了|除了|即使|只要|只有|要是|一旦|随着|根据|对于|关于)")
_EN_WORD = re.compile(r"\b[a-z]{4,}\b")
_HAN_PAIR = re.compile(r"[\u4e00-\u9fff]{2}")
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")


def sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in rule_sentence_spans(text) if text[a:b].strip()]


def _usable(sentence: str, zh: bool) -> bool:
    return _SHORTEST[zh] <= len(sentence) <= _LONGEST[zh]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _ended(text: str, zh: bool) -> str:
    text = text.strip().rstrip(",;，；、")
    if zh:
        return text if text.endswith(("。", "！", "？")) else text + "。"
    return text if text.endswith((".", "!", "?")) else text + "."


def clause_of(sentence: str, zh: bool) -> str | None:
    """A clause that stands on its own: a leading "To …," / "如需…，" dropped, or the first of two parts."""
    m = (_ZH_LEADING if zh else _EN_LEADING).match(sentence)
    if m and len(m.group("rest")) >= (6 if zh else 20):
        return _ended(m.group("rest") if zh else _capital(m.group("rest")), zh)
    for sep in ("；", "：") if zh else ("; ", ": "):
        head, _, tail = sentence.partition(sep)
        if tail and len(head) >= (6 if zh else 12):
            return _ended(head, zh)
    return None


def head_of(sentence: str, zh: bool) -> str | None:
    """The part of a sentence before its first comma, when it says something on its own ("The tablet is
    splash resistant, but …"), never a condition or a concession ("If it rains, …")."""
    head, _, tail = sentence.partition("，" if zh else ", ")
    if not tail or (_ZH_SUBORDINATE if zh else _EN_SUBORDINATE).match(head):
        return None
    if len(head) < (6 if zh else 20) or (not zh and len(head.split()) < 4):
        return None
    return _ended(head, zh)


def with_word_swapped(sentence: str, around: Sequence[str], rng: random.Random, zh: bool) -> str | None:
    """S with one content word replaced by a content word of the sentences around it that S does not use: a
    claim about the same thing that the passage does not say ("the red button" where it says green)."""
    pattern = _HAN_PAIR if zh else _EN_WORD
    stop = _ZH_SWAP_STOP if zh else _EN_SWAP_STOP
    mine = [m for m in pattern.finditer(sentence) if m.group(0) not in stop]
    theirs = sorted({w for other in around for w in pattern.findall(other)
                     if w not in stop and w not in sentence})
    if not mine or not theirs:
        return None
    m = rng.choice(mine)
    return sentence[:m.start()] + rng.choice(theirs) + sentence[m.end():]


def with_opposite(sentence: str, rng: random.Random, zh: bool) -> str | None:
    """S with one word turned into its opposite ("revenue rose" → "revenue fell", 增加 → 减少)."""
    options = []
    for a, b in _OPPOSITES_ZH if zh else _OPPOSITES_EN:
        for old, new in ((a, b), (b, a)):
            pattern = re.escape(old) if zh else r"\b" + re.escape(old) + r"\b"
            # 不包括 holds 包括: it is turned round as a whole, never into 不不包括
            options += [(m, new) for m in re.finditer(pattern, sentence)
                        if not (new.startswith("不") and sentence[max(0, m.start() - 1):m.start()] == "不")]
    if not options:
        return None
    m, new = rng.choice(options)
    return sentence[:m.start()] + new + sentence[m.end():]


def with_number_changed(sentence: str, rng: random.Random) -> str | None:
    found = [m for m in _NUMBER.finditer(sentence)]
    if not found:
        return None
    m = rng.choice(found)
    raw = m.group(0)
    digits = raw.replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    choices = [value * 2, value + 1, value * 3, max(value - 1, 0) if value > 1 else value + 5, value * 10]
    new = rng.choice([c for c in choices if c != value])
    text = f"{new:g}" if "." in raw else str(int(round(new)))
    return sentence[:m.start()] + text + sentence[m.end():]


def with_unit_swapped(sentence: str, rng: random.Random, zh: bool) -> str | None:
    options = []
    for unit, replacements in _UNIT_SWAPS:
        if has_han(unit) != zh:
            continue
        # a Chinese unit must end its word: 20年代 ("the 1920s") holds no year to swap
        pattern = re.compile(r"(?<=\d)\s?" + re.escape(unit) + (r"(?![代级龄度])" if zh else r"\b"))
        for m in pattern.finditer(sentence):
            options.append((m, unit, replacements))
    if not options:
        return None
    m, unit, replacements = rng.choice(options)
    spacing = m.group(0)[: len(m.group(0)) - len(unit)]
    return sentence[:m.start()] + spacing + rng.choice(replacements) + sentence[m.end():]


def with_negation_flipped(sentence: str, rng: random.Random, zh: bool) -> str | None:
    if zh:
        for old, new in _ZH_UNNEGATE:
            if old in sentence:
                return sentence.replace(old, new, 1)
        hits = [(old, new) for old, new in _ZH_NEGATE if old in sentence]
        if hits:
            old, new = rng.choice(hits)
            return sentence.replace(old, new, 1)
        return None
    for pattern, new in _EN_UNNEGATE:
        if pattern.search(sentence):
            return pattern.sub(new, sentence, count=1)
    for pattern, new in _EN_NEGATE:
        if pattern.search(sentence):
            return pattern.sub(new, sentence, count=1)
    return None


def with_name_swapped(sentence: str, names: Sequence[str], rng: random.Random) -> str | None:
    found = [m for m in _NAME.finditer(sentence)]
    if not found or not names:
        return None
    m = rng.choice(found)
    other = rng.choice(names)
    if other == m.group(1) or other in sentence:
        return None
    return sentence[:m.start(1)] + other + sentence[m.end(1):]


def joined(first: str, second: str, zh: bool) -> str:
    a = first.strip().rstrip("。.!！?？")
    if zh:
        return a + "，并且" + second.strip().rstrip("。") + "。"
    b = second.strip().rstrip(".!?")
    return f"{a}, and {b[:1].lower() + b[1:] if not b[:2].isupper() else b}."


def derived_pairs(passages: Iterable[tuple[str, str]], per_kind: int, seed: int = 0,
                  lang: str = "en") -> list[dict]:
    """Up to `per_kind` pairs of each kind from (source, passage text) pairs of one language, as mix
    examples ({"premise", "hypothesis", "label", "source", "kind"})."""
    zh = lang == "zh"
    rng = random.Random(seed)
    pool = []  # (source, sentences of the passage, index of a usable sentence)
    for source, text in passages:
        sents = sentences(text)
        for i, s in enumerate(sents):
            if _usable(s, zh):
                pool.append((source, sents, i))
    rng.shuffle(pool)
    names = sorted({m.group(1) for _, sents, i in pool[:5000] for m in _NAME.finditer(sents[i])}) if not zh else []
    out: list[dict] = []
    made = dict.fromkeys(KINDS, 0)
    for n, (source, sents, i) in enumerate(pool):
        if all(made[k] >= per_kind for k in KINDS if not (zh and k == "name")):
            break
        s = sents[i]
        other_source, other_sents, other_i = pool[(n * 7919 + 1) % len(pool)]
        kinds = [k for k in KINDS if made[k] < per_kind and not (zh and k == "name")]
        rng.shuffle(kinds)
        before, after = rng.randint(0, min(2, i)), rng.randint(0, min(2, len(sents) - i - 1))
        around = sents[i - before:i] + sents[i + 1:i + after + 1]  # the passage the claim is read with, but S
        for kind in kinds:
            claim = None
            if kind == "copy":
                claim = s
            elif kind == "clause":
                claim = clause_of(s, zh)
            elif kind == "head":
                claim = head_of(s, zh)
            elif kind == "number":
                claim = with_number_changed(s, rng)
            elif kind == "unit":
                claim = with_unit_swapped(s, rng, zh)
            elif kind == "negation":
                claim = with_negation_flipped(s, rng, zh)
            elif kind == "name":
                claim = with_name_swapped(s, names, rng)
            elif kind == "swap":
                claim = with_word_swapped(s, around or sents[:i] + sents[i + 1:], rng, zh)
            elif kind == "antonym":
                claim = with_opposite(s, rng, zh)
            elif kind == "second":
                other = other_sents[other_i]
                if other_sents is not sents and _usable(other, zh):
                    claim = joined(s, clause_of(other, zh) or other, zh)
            elif kind == "elsewhere":
                if other_sents is not sents and other_source == source:
                    claim = other_sents[other_i]
            if kind == "copy" or (claim and claim != s):  # every other kind must change the sentence
                made[kind] += 1
                premise = ("" if zh else " ").join(sents[i - before:i + after + 1])
                out.append({"premise": premise, "hypothesis": claim, "label": LABELS[kind],
                            "source": f"derived-{lang}", "kind": "derived", "derived": kind})
                break  # one pair per sentence: the mix sees many passages, not one passage many ways
    return out
