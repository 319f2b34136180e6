"""The plain reading: what a careful reader sees at once in one clause of the evidence.

A support answer is full of short plain sentences that restate one clause of a manual or a spec sheet:
"Hold the reset button for 8 seconds." against "To restore factory settings, hold the reset button for
8 seconds."; "The laptop weighs 1.3 kg." against "Specifications — Weight: 1.3 kg; Battery: 72 Wh". A
careful reader needs no model for these, and a small model gets them wrong often enough (judge-v1
p(full) 0.12 for the first) to matter. Nor does a reader need one for "The tablet is waterproof."
against "… but it is not waterproof", or for "Press the red button." against "Press the green button."

`read(claim, evidence)` cuts the evidence into clauses (at . ; ! ? and their Chinese forms, and before
"while", "whereas", "but", 而, 但, 却, so that "the council approved the budget; the mayor had opposed it"
does not hold "the mayor approved the budget"), and each clause into items at its commas. A short title
the passage opens with ("Harbin X2 vacuum — Weight: 2.8 kg", 【锦程洗衣机 XQ-80】) counts as part of every
clause: a spec sheet names its product once. So, in a passage of at most six clauses, do the names and model
codes of the clauses before one that names nothing itself ("Wash the Brisko jar by hand. Do not place the
jar in the dishwasher."), for holding the claim only: a rival or a denial is read in the clause as it stands.
Then, in this order:

1. A clause that holds every content word of the claim decides:
   * `full` when every number and time of the claim has its value there, the claim and the clause are both
     negated or both not (what a negated clause excepts it does not negate: "Pets are not allowed, except
     assistance dogs" holds "Assistance dogs are allowed"), and no rival stands in it (below);
   * `contradicts` when one of the two is negated and the clause is not much longer than the claim, or it
     gives a number or a range of times of the claim another value, or binds the claim's number to another
     item ("成人60元，学生30元" for "学生票价为60元").
   A clause that holds every word but the kind of thing the claim names, where the passage leaves it out
   between the name and the claim's next word ("The Brisko blender jar …" against "the Brisko jar"), is read
   as holding the claim, for `full` only.
2. Otherwise the clause that holds most of the claim is read for a rival:
   * `contradicts`: another value of one of the claim's measures ("for 3 seconds" / "for 8 seconds",
     "1.5 kg" / "1,150 grams"), another time, another word of a closed set where the claim's is missing (a
     colour, a day, how often, a side, a direction of change: "grew" / "fell"), another button or menu
     path ("the Mode button" for "the Fan button", "Profile > Security" for "Profile > Notifications");
   * `none`: another tier ("Basic" for "Pro"), group of people (成人 for 学生), measure ("maximum load" for
     "weighs", 洗涤容量 for 烘干容量), role, branch (城北店 for 滨江店), person ("Marie Curie" for "Pierre
     Curie", 李医生 for 王医生), model ("Kestrel 7" for "Kestrel 5") or name ("Westbrook" for "Eastgate").
3. Then the claim's figures are read: `full` when each is the value of a list item the claim names ("The
   desk top is 1.2 m wide and 0.6 m deep." against "Desk width: 120 cm; Depth: 60 cm"), when the clause
   gives them and all the claim's other words but the one naming what the passage, a spec sheet, never
   names ("The laptop weighs 1.3 kg." against "Weight: 1.3 kg"), or when they anchor an instruction whose
   other words the clause holds but for one or two ("按住童锁键三秒即可锁定面板" against "长按“童锁”键3秒，
   面板按键即被锁定").
4. Last, what is denied or missing: `contradicts` when a short clause holds all but one word of the claim
   and negates it; `partial` when a part of the claim joined by "and" (，并, 还, …) has no word in the
   evidence, or a number it does not give, while the rest is there ("three brightness levels and a USB
   port" against a lamp with three brightness levels).

Nothing is said where none of these reads the pair: it is the model's. A `none` or `partial` reading, and
the `contradicts` of step 4, only overrule a `full` of the model (`Reading.decides` is False: the reading
sees that something is missing or denied, not that the rest is supported); the others decide.

Words are compared as a careful reader compares them (judges/plain_words.py): lower-cased, stop words
out, English words stemmed ("stored" = "store") and read through small groups of same-meaning words
("shipping" = "delivery", 周一至周五 = 工作日); Chinese as single content characters, so that word order
and compounds do not matter (重 in 重量); numbers as quantities, with spec-sheet units ("2100瓦" = "2100
W") and times of day ("6 pm" = "18:00" = 下午6点); a symbol kept ("C#" is not "C"); negations set aside
(不允许 holds 允许's words; whether each side is negated is compared apart). A claim needs at least two
content words besides its numbers: "It is 8." says too little to be read this way. The reading is pure
Python and deterministic; the model judge applies it after calibration and before the qualifier guard
(`model:plain=off` leaves it out), says in the explanation when it changed a label, and takes the
`uncertain` mark off a guess it confirms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from citeaudit.judges.guard import MONTHS, _unmarked
from citeaudit.judges import plain_facts
from citeaudit.judges.plain_facts import (Facts, Passage, characters, clause_items, facts, key_of, matched, names_in,
                                          passage_of, prepared, rival_words_of, same_kind, size, title_of,
                                          without_negation)
from citeaudit.judges.plain_words import RIVAL_SETS, STOP_CHARS, TITLE_EN, TITLED_NAME, Time, canonical, in_base
from citeaudit.quantities import normalise, quantities
from citeaudit.text import HAN_RUN, NOT_NAMES, STOP_WORDS, has_han

MIN_WORDS = 2
# The version of the reading, signed with the judge (model:…|plain=on@5): a change here changes judgments.
VERSION = 5
NEAR_SHARE = 0.75  # of the claim's words in one clause: the clause is about what the claim is about
PART_SHARE = 0.6  # of the rest of a claim's words, for a part with none of its words to be the part missing
RIVAL_SHARE = 0.5  # of the claim's other words, for a clause with a rival word to be about the claim
JOINED_WORDS = 16  # a claim longer than this is no plain sentence: its parts are the model's to read
FIGURED_WORDS = 24  # an instruction with its figures may be longer
FIGURED_SHARE = 0.85  # of a Chinese claim's characters, where its figures anchor it
_FULL_NAME = re.compile(r"(?<![\w-])([A-Z][a-z]+)[ \t]+([A-Z][a-z]+(?:['’]s)?)(?![\w-])")
# an exception turns a negation round for what it names
_EXCEPTION = re.compile(r"\b(?:except|excepting|apart from|other than|unless|with the exception of|aside from)\b|"
                        r"除外|除了|以外|除[\u4e00-\u9fff]{1,6}外", re.I)
# where a claim joins two facts ("… three brightness levels and a USB port", "…40分钟，并配有三种刷头")
_JOIN = re.compile(r",?\s+(?:and also|as well as|and|plus)\s+|[,，]\s*(?:并且|并|且|还|同时|另外|此外)|[，,；;]|并且|并配", re.I)
# words that frame a sentence rather than state a fact of it
_FRAMING = re.compile(r"(?:on the other hand|in (?:certain|some|many|most) (?:cases|contexts)|for example|for instance|"
                      r"however|in addition|furthermore|moreover|therefore|in general|overall|"
                      r"by (?:their|his|her|its|our) own account|according to .{1,40}|\w+ing\b.*|"
                      r"同时|具体来说|具体而言|此外|另外|因此|所以|然而|而且|例如|比如|总之|首先|其次|最后|一般来说)[.。,，]?",
                      re.I)
# a model's name: letters and a number written together ("T30", "HX-12", "疾风5电动自行车")
# a model: "T20", "疾风7" (a number that counts or dates something, 6月 or 9日至, is none)
_MODEL = re.compile(r"(?<![A-Za-z0-9])([A-Z]{1,4})-?(\d{1,4})(?![\d.,])|([\u4e00-\u9fff]{2})(?<![年月日号至到于])(\d{1,3})"
                    r"(?=[\u4e00-\u9fff])(?![年月日号点时分秒周个次岁倍元人名件台])")
_NAMED_NUMBER = re.compile(r"\b([A-Z][a-z]{2,}) (\d{1,3})\b(?![.,:]\d)")  # "Kestrel 5", not "Weight 5 kg"
_CAPITALISED = re.compile(r"(?<=[a-z,;'’] )([A-Z][a-z]{2,})\b")  # a capitalised word within a sentence


# --- the reading ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    label: str  # "full", "contradicts", "none" or "partial"
    start: int  # the clause, as offsets into the evidence
    end: int
    reason: str
    # False: the reading sees that something is missing or denied, not what the rest says; it overrules a
    # `full` only
    decides: bool = True


def forget() -> None:
    """Empty the reading's memory of texts it has read (a benchmark that times reading new text)."""
    plain_facts.forget()
    _models.cache_clear()
    _proper_nouns.cache_clear()


def read(claim: str, evidence: str) -> Reading | None:
    """What one clause of `evidence` plainly says of `claim`, or None. The clause's offsets are into
    `evidence` as given."""
    claim = _unmarked(normalise(claim))
    said = facts(claim)
    if len(said.words) < MIN_WORDS:
        return None
    passage = passage_of(evidence)
    shares = [(len(said.words & (passage.facts(i).words | passage.around(i))) / len(said.words), i)
              for i in range(len(passage.spans))]
    if not shares:
        return None
    # a clause holds the claim with the names the passage gave before it; a rival or a denial is read in the
    # clause as it stands ("The report gives no annual energy estimate" denies no "Eco" of an earlier clause)
    unheld = [said.words - passage.facts(i).words - passage.around(i, True) - _ordered(said, passage.facts(i))
              for i in range(len(passage.spans))]
    verdicts = [_verdict(claim, said, passage, i) for i, missing in enumerate(unheld) if not missing]
    decided = (next((v for v in verdicts if v and v.label == "full"), None) or next((v for v in verdicts if v), None)
               or _kind_unsaid(claim, said, passage, shares, unheld))
    if decided is not None:
        return decided
    # the nearest clause; of two as near, the one with the claim's figures, then the first
    best_share, _, minus = max((share, _figures_in(said, passage.facts(i)), -i) for share, i in shares)
    best = -minus
    # a part never mentioned is read once: the figures of the rest do not make the claim full ("… weighs 4.2 kg
    # and has a washable filter"), and it is the last word when nothing else is said
    part = _missing_part(claim, said, passage)
    return (_rival_number(said, passage, best, best_share) or _rival_word(claim, said, passage, best, best_share)
            or _spec_sheet(claim, said, passage) or _unnamed(claim, said, passage, best)
            or (None if part else _figured(claim, said, passage, best)) or _denied_nearly(said, passage, best)
            or part)


# --- a clause that holds the whole claim ------------------------------------------------------------------


def _kind_unsaid(claim: str, said: Facts, passage: Passage, shares: list[tuple[float, int]],
                 unheld: list[set[str]]) -> Reading | None:
    """`full` where a clause holds every word of the claim but the kind of thing it names, which the passage
    leaves out after the name ("The Brisko blender jar is not dishwasher safe." against "Wash the Brisko jar by
    hand. Do not place the jar in the dishwasher."); `unheld`: each clause's missing words, names carried."""
    if has_han(claim) or size(claim) > JOINED_WORDS:  # a plain English sentence names one thing
        return None
    for _, i in sorted(shares, reverse=True):
        missing = unheld[i]
        if not 0 < len(missing) <= 2 or not _named_kind(claim, missing, passage.evidence, strict=True):
            continue
        verdict = _verdict(claim, replace(said, words=said.words - missing), passage, i)
        if verdict is not None and verdict.label == "full":
            return replace(verdict, reason=f"the clause '{passage.text(i).strip()}' holds every word of the claim but "
                                           f"'{min(missing)}', which the passage leaves out between a name and the "
                                           "word after it")
    return None


# the words of an English sentence, as a name and the kind of thing after it are read
_WORDS = re.compile(r"[\w'’-]+")


def _named_kind(claim: str, missing: set[str], evidence: str, strict: bool = False) -> bool:
    """Whether the missing words are one or two lower-case words of an English claim right after a name the
    evidence gives, which name the kind of thing named ("The Halden air purifier" against "Halden AP-300"),
    and the evidence names no other kind after that name ("The Kiro mouse" is not "The Kiro K7 keyboard").
    `strict`: the evidence follows the name with the claim's word after the kind ("the Brisko jar" for "The
    Brisko blender jar"), so that the kind is all it leaves out."""
    words = _WORDS.findall(claim)
    at = [k for k, w in enumerate(words) if facts(w).words & missing]
    if not 0 < len(at) <= 2 or len(at) != len(missing) or at[-1] - at[0] != len(at) - 1 or at[0] == 0:
        return False
    name = words[at[0] - 1]
    if not name[:1].isupper() or name.lower() not in evidence.lower() or not all(words[k].islower() for k in at):
        return False
    following = _word_after(name, evidence)
    if strict:
        return at[-1] + 1 < len(words) and following is not None and bool(
            facts(following).words & facts(words[at[-1] + 1]).words)
    return following is None or following in _SHEET_WORDS or following in STOP_WORDS


def _verdict(claim: str, said: Facts, passage: Passage, i: int) -> Reading | None:
    """What a clause holding every word of the claim says of it."""
    clause, here = passage.text(i), passage.facts(i)
    title = passage.title
    theirs = here.numbers + (title.numbers if title else [])
    for q in said.numbers:
        if matched(q, theirs) is not None:
            continue
        rivals = [e for e in theirs if same_kind(q, e)]
        return _rival(passage, i, rivals[0].text, q.text) if rivals else None  # no rival: the model reads it
    for k, t in enumerate(said.times):
        if not any(t.same(e) for e in here.times + (title.times if title else [])):
            return _rival(passage, i, _time_text(here, 0), _time_text(said, k)) if here.times else None
    ranged = _rival_range(said, passage, i)  # a range is its two ends together
    if ranged is not None or any(not any(a.same(c) and b.same(d) for c, d in here.ranges) for a, b in said.ranges):
        return ranged
    bound = _bound_elsewhere(said, here)
    if bound is not None:
        return _rival(passage, i, *bound)
    other = _other_rival(said, passage, i)
    if other is not None:
        return other
    name = _rival_name(claim, _item_about(said, here).written)
    if name is not None:
        return _reading("none", passage, i, f"the clause '{clause.strip()}' says it of {name[0]}, the claim of {name[1]}")
    # what a negated clause excepts, it does not negate ("not allowed, except assistance dogs")
    negated = _negated_about(said, here) != _about_exception(said.words, clause)
    if negated != said.negated:
        if len(here.words) > 2 * len(said.words) + 4:
            return None  # a long clause may negate something else than the claim
        if said.negated and _denied_with_its_figures(said, passage, i):
            return None  # "Trains run from 08:00 to 22:00. There is no service before 08:00."
        what = "negates it" if not said.negated else "does not negate it"
        return _reading("contradicts", passage, i, f"the clause '{clause.strip()}' holds every word of the claim and {what}")
    return _reading("full", passage, i, f"every word of the claim is in the clause '{clause.strip()}'"
                    + (f" (and the title '{title_of(passage.evidence).strip()}')" if title and not said.words <= here.words
                       else ""))


def _denied_with_its_figures(said: Facts, passage: Passage, i: int) -> bool:
    """Whether another clause of the passage is negated and gives every figure of the negated claim."""
    if not (said.times or any(q.unit for q in said.numbers)):
        return False
    for j in range(len(passage.spans)):
        there = passage.facts(j)
        if j != i and there.negated and all(any(t.same(e) for e in there.times) for t in said.times) and all(
                matched(q, there.numbers) is not None for q in said.numbers if q.unit):
            return True
    return False


def _bound_elsewhere(said: Facts, here: Facts) -> tuple[str, str] | None:
    """A number of the claim that the clause gives in one item, while a word the claim sets beside it is in
    another item with another value of that unit ("成人60元，学生30元" for "学生票价为60元"): (theirs, the claim's)."""
    items = clause_items(here)
    if len(items) < 2:
        return None
    for q in said.numbers:
        holding = [item for item in items if matched(q, item.numbers) is not None]
        if not holding:
            continue
        held = set().union(*(h.words for h in holding))
        for item in items:
            if item in holding:
                continue
            for e in item.numbers:
                if (same_kind(q, e) and not any(matched(other, [e]) for other in said.numbers)
                        and said.words & key_of(item, e) - held):
                    return e.text, q.text
    return None


def _other_rival(said: Facts, passage: Passage, i: int) -> Reading | None:
    """A word of a closed set that the clause has where the claim has another of the set, the claim's own
    missing from it: another colour, day, tier, measure, role."""
    title = passage.title
    here = passage.facts(i)
    found = {**(title.rivals if title else {}), **_items_of(said, here).rivals}
    # who did what is said item by item: "市议会…批准了这项预算，市长此前反对…" has the council approve
    found["role"] = _item_about(said, here).rivals.get("role", set())
    # a measure is a figure's: "power" in "the power button" is none, "Power: 550 W" is one
    units = {q.unit for q in said.numbers if q.unit is not None}
    # with figures of two units, which measure is which is not read ("sleeps three people and weighs 2.1 kg")
    found["measure"] = set().union(*(item.rivals.get("measure", set()) for item in clause_items(here)
                                     if any(e.unit in units for e in item.numbers))) if len(units) == 1 else set()
    for rival in RIVAL_SETS:
        ours = said.rivals.get(rival.name, set())
        theirs = found.get(rival.name, set()) - ours
        unsaid = ours - found.get(rival.name, set())  # the claim's word the clause has another of the set for
        if ours and theirs and unsaid:
            return _reading(rival.label, passage, i, f"the clause '{passage.text(i).strip()}' has "
                                                     f"'{sorted(theirs)[0]}' where the claim has '{sorted(unsaid)[0]}'")
    return None


def _items_of(said: Facts, here: Facts) -> Facts:
    """The part of a clause that a claim's numbers point to: of "16GB内存，1TB固态硬盘", the item that holds the
    claim's 1TB (its other items' measures are not the claim's rivals); the whole clause when none does."""
    items = clause_items(here)
    holding = [item for item in items if any(matched(q, [e for e in item.numbers if e.unit is not None]) is not None
                                             for q in said.numbers if q.unit is not None)]
    if len(items) < 2 or not holding:
        return here
    return facts("，".join(item.written for item in holding))


def _negated_about(said: Facts, here: Facts) -> bool:
    """Whether the clause negates what the claim is about: a negated item of it holds a word of the claim that
    no item without a negation holds ("…具备防溅功能，并不防水" denies 防水; "整机保修2年，…人为损坏不在保修范围内"
    does not deny 保修), unless that item is about a rival of the claim's ("周一至周五 9:00—17:00，周末…休息"
    does not deny "工作日…营业")."""
    items = clause_items(here)
    if len(items) < 2:
        return here.negated
    affirmed = set().union(*(item.words | rival_words_of(item) for item in items if not item.negated))
    ours = said.words | rival_words_of(said)
    for item in items:
        if not item.negated or not (ours & (item.words | rival_words_of(item))) - affirmed:
            continue
        if any(said.rivals[name] and item.rivals.get(name) and not said.rivals[name] & item.rivals[name]
               for name in said.rivals):
            continue  # about another day, tier, measure: its negation is not the claim's
        return True
    return False


def _item_about(said: Facts, here: Facts) -> Facts:
    """The item of a clause that holds most of the claim's words ("李医生…担任心内科主任" of "李医生…担任心内科主任，
    王医生…加入该科室" for "王医生是心内科主任")."""
    return max(clause_items(here), key=lambda item: len(said.words & item.words), default=here)


def _about_exception(claim_words: set[str], clause: str) -> bool:
    """Whether the claim is about what the clause excepts: "Assistance dogs are allowed." against "Pets are
    not allowed, except assistance dogs" (a claim about pets is still denied)."""
    cue = _EXCEPTION.search(clause)
    if cue is None:
        return False
    return bool(claim_words & (facts(clause[cue.end():]).words - facts(clause[:cue.start()]).words))


# --- rivals: another value, another of a closed set, another name --------------------------------------------


def _rival_number(said: Facts, passage: Passage, i: int, share: float) -> Reading | None:
    """`contradicts` when a number or time of the claim is nowhere in the evidence and the clause that holds
    most of the claim's words (at least NEAR_SHARE of them) gives the same unit another value:
    "请按住电源键3秒重启平板" against "如需重启平板，请按住电源键10秒"."""
    if share < NEAR_SHARE:
        return None
    everywhere = passage.whole
    here = passage.facts(i)
    for q in said.numbers:
        if q.unit is None or matched(q, everywhere.numbers) is not None:
            continue
        rivals = [e for e in here.numbers + (passage.title.numbers if passage.title else []) if same_kind(q, e)]
        if rivals:
            return _rival(passage, i, rivals[0].text, q.text)
    for k, t in enumerate(said.times):
        if here.times and not any(t.same(e) for e in everywhere.times):
            return _rival(passage, i, _time_text(here, 0), _time_text(said, k))
    order = _out_of_order(said, here)
    if order is not None:
        return _rival(passage, i, *order)
    return _rival_range(said, passage, i, everywhere)


# the first and the last of a list of times, as a timetable gives them without the word
_ORDER = {"first": 0, "last": -1}


def _listed(said: Facts, here: Facts) -> list[Time]:
    """The clause's times in order, where the claim gives one time and the clause a list of them; else []."""
    return sorted(here.times, key=lambda e: e.minutes) if len(said.times) == 1 and len(here.times) >= 2 else []


def _ordered(said: Facts, here: Facts) -> set[str]:
    """"first" or "last" of a claim with one time, where the clause lists times and the claim's is its earliest
    or latest: a timetable says which departure is the first without the word ("The first ferry … leaves at
    7:15 am." against "departures (weekdays): 07:15, 09:45, 12:30")."""
    listed = _listed(said, here)
    return {word for word, k in _ORDER.items()
            if listed and word in said.words and said.times[0].same(listed[k])}


def _out_of_order(said: Facts, here: Facts) -> tuple[str, str] | None:
    """The clause's first (last) time where the claim gives another of its times as the first (last):
    (theirs, the claim's)."""
    listed = _listed(said, here)
    if not any(said.times[0].same(e) for e in listed):
        return None
    for word, k in _ORDER.items():
        if word in said.words and word not in here.words and not said.times[0].same(listed[k]):
            theirs, ours = _time_text(here, here.times.index(listed[k])), _time_text(said, 0).rstrip(". ")
            return f"{theirs} as the {word}", f"{ours} as the {word}"
    return None


def _rival_range(said: Facts, passage: Passage, i: int, everywhere: Facts | None = None) -> Reading | None:
    """`contradicts` when a range of times of the claim is not one of the evidence's, and the clause gives
    ranges: 10:30–14:00 and 17:00–21:00 do not hold 14:00–17:00."""
    here = passage.facts(i)
    for a, b in said.ranges:
        if here.ranges and not any(a.same(c) and b.same(d) for c, d in (everywhere or here).ranges):
            return _rival(passage, i, ", ".join(_range_text(c, d) for c, d in here.ranges), _range_text(a, b))
    return None


def _rival_word(claim: str, said: Facts, passage: Passage, i: int, share: float) -> Reading | None:
    """A word of a closed set that the clause holding most of the claim has where the claim has another, the
    claim's own missing from it: another colour, day, tier, measure, person."""
    around = passage.facts(i).words | passage.around(i)
    rest = said.words - characters(rival_words_of(said))  # the words a rival stands beside
    other = _other_rival(said, passage, i)
    if other is not None and rest and len(rest & around) / len(rest) >= RIVAL_SHARE:
        return other
    control = _rival_control(claim, passage.text(i)) if rest and len(rest & around) / len(rest) >= RIVAL_SHARE else None
    if control is not None:
        return _reading("contradicts", passage, i, f"the clause '{passage.text(i).strip()}' says {control[0]} where "
                                                   f"the claim says {control[1]}")
    name = _rival_name(claim, passage.text(i)) or _rival_person(claim, said, passage, i)
    if name is None and size(claim) <= JOINED_WORDS:  # a plain sentence: one thing, named once
        named = rest - facts(" ".join(_CAPITALISED.findall(claim))).words  # the rest but the claim's names
        name = _rival_model(claim, passage) or (_rival_proper_noun(claim, passage) if len(named) >= 2 and len(
            named & around) / len(named) >= NEAR_SHARE else None)
    if name is not None and share >= RIVAL_SHARE:
        return _reading("none", passage, i, f"the clause '{passage.text(i).strip()}' says it of {name[0]}, "
                                            f"the claim of {name[1]}")
    return None


# a control a manual names: a quoted label before "button" or 键, a capitalised one ("the Fan button"), two
# characters before 键 (童锁键); a menu path ("Profile > Security")
_CONTROL = re.compile(r"[“\"'‘]([^”\"'’]{1,20})[”\"'’]\s*(?:button|key|switch|tab|icon|键|按钮|按键|开关)|"
                      r"\b([A-Z][\w/+-]*(?: [A-Z][\w/+-]*)?)\s+(?:button|key|switch|tab|icon)\b|"
                      r"([\u4e00-\u9fff]{2})(?:键|按钮|按键)")
_SEGMENT = r"(?:“[^”]{1,12}”|\"[^\"]{1,12}\"|[\w-]+(?: [\w-]+){0,2})"
_PATH = re.compile(rf"{_SEGMENT}(?:(?:\s+[>＞→]\s+|\s*[＞→]\s*|(?<=”)\s*>\s*(?=“)){_SEGMENT})+")


def _rival_control(claim: str, clause: str) -> tuple[str, str] | None:
    """Another button or another menu path where the claim names one: "the Mode button" for "the Fan button",
    "Profile > Security" for "Profile > Notifications"."""
    def controls(text: str) -> set[str]:
        return {next(g for g in m.groups() if g).strip().lower() for m in _CONTROL.finditer(normalise(text))}

    def path(text: str) -> set[str]:
        found = _PATH.search(normalise(text))
        if not found:
            return set()
        first, *rest = [seg.strip(" “”\"'‘’「」").lower() for seg in re.split(r"[>＞→]", found.group(0))]
        return {first.split()[-1] if first.split() else first, *rest}  # "go to Profile > …": the menu is "profile"

    ours, theirs = controls(claim), controls(clause)
    lowered = normalise(clause).lower()
    if ours and theirs and not any(c in lowered for c in ours):
        return f"'{sorted(theirs)[0]}'", f"'{sorted(ours)[0]}'"
    ours, theirs = path(claim), path(clause)
    if len(ours) > 1 and theirs and not ours <= theirs:
        return " > ".join(sorted(theirs)), " > ".join(sorted(ours))
    return None


def _rival_name(claim: str, clause: str) -> tuple[str, str] | None:
    """Another person where the claim names one: a capitalised word before or after a name the two share
    ("Marie Curie" for "Pierre Curie"), or another surname before the same title (李医生 for 王医生)."""
    zh = {(m.group(1), m.group(2)) for m in TITLED_NAME.finditer(claim)}
    theirs = {(m.group(1), m.group(2)) for m in TITLED_NAME.finditer(clause)}
    for surname, title in zh - theirs:
        other = [s for s, t in theirs if t == title and s != surname]
        if other:
            return other[0] + title, surname + title
    titled = {(m.group(1).lower().rstrip("."), m.group(2)) for m in TITLE_EN.finditer(claim)}
    for title, name in titled:
        if name.lower() in clause.lower():
            continue
        other = [m.group(2) for m in TITLE_EN.finditer(clause) if m.group(1).lower().rstrip(".") == title]
        if other:
            return f"{title.title()} {other[0]}", f"{title.title()} {name}"
    ours, others = _names(claim), _names(clause)
    theirs = {name for pair in others for name in pair}
    for first, last in ours - others:  # "Pierre Curie" where the clause has "Marie Curie"
        if first not in theirs:
            rival = sorted(f for f, ln in others if ln == last and f not in {n for pair in ours for n in pair})
            if rival:
                return f"{rival[0]} {last}".title(), f"{first} {last}".title()
    return None


def _rival_person(claim: str, said: Facts, passage: Passage, i: int) -> tuple[str, str] | None:
    """Another person by whom the clause says done what the plain claim says a person does, the claim's person
    not in the clause: "Dr. Amira Tolland teaches the Tuesday first-aid class." against "Tuesday 18:30 first-aid
    class, taught by nurse Owen Pratley. Wednesday 10:00 yoga, led by Dr. Amira Tolland." (the claim's other
    words, not its names, are what make the clause about the claim)."""
    if size(claim) > JOINED_WORDS:
        return None
    clause, lowered, ours = normalise(passage.text(i)), claim.lower(), _names(claim)
    absent = sorted(pair for pair in ours if not any(w in clause.lower() for w in pair))
    # the doer: a name after "by", or after "by" and a role ("by architect Helena Drost")
    doers = [m.group(0) for m in _FULL_NAME.finditer(clause)
             if re.search(r"\bby(?: [a-z]+)?\s*$", clause[:m.start()]) and not any(
                 w.lower() in lowered for w in m.groups())]
    if not absent or not doers:
        return None
    # the claim's other words, its other names among them ("the Brookfield Community Garden" is what makes the
    # clause about the claim)
    rest = said.words - facts(" ".join(w for pair in absent for w in pair)).words
    around = passage.facts(i).words | passage.around(i)
    if len(rest) < 3 or len(rest & around) / len(rest) < RIVAL_SHARE:
        return None
    written = next((m.group(0) for m in _FULL_NAME.finditer(claim) if _name_key(*m.groups()) == absent[0]),
                   " ".join(absent[0]).title())  # as the claim writes it ("Alma Reyes", not "Alma Reye")
    return doers[0], written


def _name_key(first: str, last: str) -> tuple[str, str]:
    """A name as `_names` compares it: lower-cased, a possessive or plural "s" dropped."""
    return re.sub(r"(?:['’]s|s)$", "", first.lower()), re.sub(r"(?:['’]s|s)$", "", last.lower())


def _names(text: str) -> set[tuple[str, str]]:
    """Two capitalised words side by side, a first name and a last name ("Pierre Curie"), lower-cased, a
    possessive or plural "s" dropped."""
    found = set()
    for m in _FULL_NAME.finditer(text):
        first, last = _name_key(*m.groups())
        if first not in NOT_NAMES and first not in MONTHS and last not in NOT_NAMES:
            found.add((first, last))
    return found


def _rival_model(claim: str, passage: Passage) -> tuple[str, str] | None:
    """Another model of the same name: "疾风7" where the claim has "疾风5", "T20" where it has "T30"."""
    theirs = _models(passage.evidence)
    for name, number in _models(claim) - theirs:
        other = sorted(n for m, n in theirs if m == name and n != number)
        if other:
            space = "" if has_han(name) else " "
            return name + space + other[0], name + space + number
    return None


@lru_cache(maxsize=8)  # a passage is read for each claim that cites it
def _models(text: str) -> set[tuple[str, str]]:
    text = normalise(text)
    found = {(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _MODEL.finditer(text)}
    measured = {q.start for q in quantities(text, wide=True) if q.unit is not None}
    found |= {(m.group(1), m.group(2)) for m in _NAMED_NUMBER.finditer(text) if m.start(2) not in measured}
    return found


def _rival_proper_noun(claim: str, passage: Passage) -> tuple[str, str] | None:
    """A name within the claim ("Pagecorner Books' Eastgate store") that the passage never uses, where the passage
    names something the claim does not ("The Westbrook branch of Pagecorner Books")."""
    evidence = passage.evidence
    missing = sorted(w for w in _proper_nouns(claim) if w.lower() not in evidence.lower())
    others = sorted(w for w in _proper_nouns(evidence) if w.lower() not in claim.lower())
    return (others[0], missing[0]) if missing and others else None


@lru_cache(maxsize=8)
def _proper_nouns(text: str) -> frozenset[str]:
    """Capitalised words within its sentences that are no stop word or month."""
    return frozenset(w for w in _CAPITALISED.findall(text) if w.lower() not in NOT_NAMES and w.lower() not in MONTHS)


# --- figures: a list of them, an unnamed subject, an instruction anchored by them ---------------------------


def _spec_sheet(claim: str, said: Facts, passage: Passage) -> Reading | None:
    """A claim's figures read off a list of them, a spec sheet's or a price list's, item by item ("The desk top
    is 1.2 m wide and 0.6 m deep." against "Desk width: 120 cm; Depth: 60 cm"): `full` when each figure is the
    value of an item whose key words the claim uses and the rest of the claim's words are in the passage (all
    but one that the passage never uses); `contradicts` when an item keyed by the claim's words gives one of
    its figures another value ("For wool, set the iron to 200 °C." against "Wool – 150 °C; Cotton – 200 °C")."""
    # a day of a month (6月9日) is a date, not a figure a list gives
    figures = [q for q in said.numbers if q.unit is not None and not said.written[:q.start].endswith("月")]
    if not figures or said.negated or size(claim) > JOINED_WORDS:
        return None
    entries = passage.entries
    if len(entries) < 2:
        return None
    # a key's words the claim may leave unsaid: they say which figure of a thing, not what it measures
    keyed = said.words | (passage.title.words if passage.title else set()) | _KEY_QUALIFIERS
    used: set[str] = set()
    where: set[int] = set()  # the clauses the figures are read from
    for q in figures:
        ours = [(key, e, k) for key, e, k in entries if key & said.words and key <= keyed]  # the claim names it
        found = [(key, k) for key, e, k in ours if matched(q, [e]) is not None]
        if found:
            used |= set().union(*(key for key, k in found))
            where.add(found[0][1])
            continue
        rivals = [(e, k) for key, e, k in ours if same_kind(q, e)]
        # another item keyed mostly by the claim's words gives the claim's value ("total capacity 300 L (fridge
        # 210 L" for "a 300-litre capacity"): no rival
        if rivals and not any(key and 2 * len(key & said.words) >= len(key) and matched(q, [e]) is not None
                              for key, e, k in entries) and not _of_another(claim, passage):
            return _rival(passage, rivals[0][1], rivals[0][0].text, q.text)
        return None
    missing = said.words - passage.whole.words - (passage.title.words if passage.title else set())
    if missing and not _subject_word(claim, missing, passage.evidence) or _negated_about(said, passage.whole):
        return None
    start, end = passage.spans[min(where)][0], passage.spans[max(where)][1]
    return Reading("full", start, end, "each figure of the claim is the value of an item the claim names "
                                       f"({', '.join(sorted(used))}): '{passage.evidence[start:end].strip()}'")


def _of_another(claim: str, passage: Passage) -> bool:
    """Whether the passage uses none of the claim's names and model codes: a sheet of another thing ("The Orvo T5
    laptop weighs 1.5 kg." against "Torvik D18 cordless drill – … Weight: 1.4 kg."). A unit after a figure
    ("65 W") is no name."""
    # a capitalised word, but the sentence's first unless a name goes on ("Fennick Furniture's sofa", not "Late
    # cancellations")
    capitalised = " ".join(m.group(0) for m in re.finditer(r"\b[A-Z][a-z]{2,}\b", claim)
                           if m.group(0).lower() not in STOP_WORDS
                           and (claim[:m.start()].strip() or re.match(r"\s+[A-Z]", claim[m.end():])))
    said = {w for w in names_in(claim) | facts(capitalised).words if len(w) > 2 or any(ch.isdigit() for ch in w)}
    return bool(said) and not said & (passage.whole.words | (passage.title.words if passage.title else set()))


# "Screen size: 55 in", "Total capacity: 300 L", "Net weight: 1.2 kg", "Packed weight: 2.1 kg" (stemmed)
_KEY_QUALIFIERS = frozenset({"siz", "total", "overal", "net", "pack"})


def _unnamed(claim: str, said: Facts, passage: Passage, i: int) -> Reading | None:
    """`full` where a clause gives the claim's figures and says the rest but for one word that the passage never
    uses, as a spec sheet or a timetable does not name what it is about ("The laptop weighs 1.3 kg." against
    "Specifications. … Weight: 1.3 kg."; "这台笔记本重1.3公斤" against "重量1.3kg")."""
    if not (any(q.unit for q in said.numbers) or said.times):
        return None
    around = passage.facts(i).words | passage.around(i, True) | _ordered(said, passage.facts(i))
    missing = said.words - around
    # what the figure's unit measures, where the clause names no measure of that kind: "The trail is 7.5 km
    # long." against "Alder Trail: a 7.5 km walk", not "The desk is 120 cm wide." against "Length: 120 cm"
    measures = _measure_words(said)
    if missing and missing <= measures and not measures & passage.whole.words:
        verdict = _verdict(claim, replace(said, words=said.words - missing), passage, i)
        if verdict is not None and verdict.label == "full":
            return replace(verdict, reason=f"the clause '{passage.text(i).strip()}' gives the claim's figures, "
                                           f"whose unit says the {min(missing)}, and its other words")
    if (not missing or missing & passage.whole.words or missing & characters(rival_words_of(said))
            or not _subject_word(claim, missing, passage.evidence)):
        return None
    verdict = _verdict(claim, replace(said, words=said.words - missing), passage, i)
    if verdict is None or verdict.label != "full":
        return None
    return replace(verdict, reason=f"the clause '{passage.text(i).strip()}' gives the claim's figures and every word "
                                   f"but '{''.join(sorted(missing)) if has_han(claim) else min(missing)}', which the "
                                   "passage never uses: it does not name what it is about")


# the words that name what a figure's unit measures, which a figure with its unit says already
_MEASURES = {"mm": frozenset({"length", "width", "height", "depth", "长", "宽", "高", "深"}),
             "g": frozenset({"weigh", "重"}), "ml": frozenset({"capacity", "容"})}


def _measure_words(said: Facts) -> frozenset[str]:
    return frozenset().union(*(_MEASURES.get(in_base(1, q.unit)[1], frozenset()) for q in said.numbers if q.unit))


def _subject_word(claim: str, missing: set[str], evidence: str) -> bool:
    """Whether the missing words are one word of what the sentence says before its first figure, where it
    names what it is about and what that does: one English word ("The laptop weighs 1.3 kg", "The Arlo
    kettle draws 2,200 watts"), or one run of at most three Chinese characters (笔记本 of "这台笔记本重1.3公斤");
    not a word after it ("… 40 litres of diesel", "…两点到五点之间也照常营业"). After a name the evidence
    gives, the kind of thing named may be longer, two English words ("The Halden air purifier weighs 4.2
    kg" against "Halden AP-300 specifications … Weight: 4.2 kg") or five characters ending as a thing's
    name does (绿川空气净化器), where the evidence names no other kind after that name ("The Kiro mouse" is
    not "The Kiro K7 keyboard")."""
    text, found_times, numbers, bare = prepared(claim)
    first = min([q.start for q in numbers if q.unit is not None] + [t.start for t in found_times], default=len(text))
    before = facts(bare[:first]).words
    if not missing <= before:
        return False
    if not has_han(claim):
        return len(missing) == 1 or _named_kind(bare[:first], missing, evidence)
    content = [c for c in without_negation(canonical(bare[:first])) if HAN_RUN.match(c) and c not in STOP_CHARS]
    at = [k for k, c in enumerate(content) if c in missing]
    if len(at) != len(missing):
        return False
    if len(missing) <= 3:
        return at[-1] - at[0] < 3  # 吹风机, though 风 is elsewhere
    name = "".join(content[max(0, at[0] - 2):at[0]])  # the two characters of the name before the kind
    return (len(missing) <= 5 and at[-1] - at[0] == len(at) - 1 and content[at[-1]] in _KIND_END
            and len(name) == 2 and name in normalise(evidence) and not _other_kind_after(name, evidence))


# how the name of a kind of thing ends in Chinese: 净化器, 洗衣机, 滑板车, 电水壶
_KIND_END = frozenset("器机车仪表箱柜灯锅壶扇床椅桌架笔板筒罩杯瓶")
# what a spec sheet's title may say after the name of what it describes (in Chinese, the first character of
# 参数, 规格, 技术参数, 产品参数, 主要参数, 基本参数)
_SHEET_WORDS = frozenset("specifications specification specs spec technical data datasheet sheet details features "
                         "参 规 技 产 主 基".split())
_CODE = re.compile(r"[\s·-]*(?:[A-Za-z-]*\d[\w-]*|[A-Z]{2,}\b)[\s·]*")  # "AP-300", "K7", "R400", "TV"


def _other_kind_after(name: str, evidence: str) -> bool:
    """Whether the evidence, where it first gives `name`, follows it with a word that names another kind of
    thing ("keyboard"), not a spec sheet's word ("specifications") or a stop."""
    following = _word_after(name, evidence)
    return following is not None and following not in _SHEET_WORDS and following not in STOP_WORDS


def _word_after(name: str, evidence: str) -> str | None:
    """The word (a Chinese character) the evidence follows `name` with where it first gives it, past a model
    code ("Kiro K7 keyboard": "keyboard")."""
    text = normalise(evidence)
    at = text.lower().find(name.lower())
    if at < 0:
        return None
    rest = text[at + len(name):]
    while (m := _CODE.match(rest)) and m.group(0):  # past model codes
        rest = rest[m.end():]
    following = re.match(r"\s*([a-z]{3,}|[\u4e00-\u9fff])", rest)
    return following.group(1) if following else None


# the rival sets that say who or which of a kind: a word of them is never a word a figure makes needless
_WHO_OR_WHICH = ("person", "tier", "role", "branch")


def _figured(claim: str, said: Facts, passage: Passage, i: int) -> Reading | None:
    """`full` where a clause gives every figure of an instruction or a spec line and all but a word or two of its
    other words ("按住童锁键三秒即可锁定面板" against "长按“童锁”键3秒，…面板按键即被锁定"): the figures are its
    anchors, and the rules before this one have found no rival in it."""
    if not (any(q.unit for q in said.numbers) or said.times) or size(claim) > FIGURED_WORDS:
        return None
    held = said.words & (passage.facts(i).words | passage.around(i) | _ordered(said, passage.facts(i)))
    missing = said.words - held
    # a clause that holds every word was read in the first step; who or which of a kind (a group of people, a
    # tier, a role, a branch) tells the claim from its neighbours ("student" of "a monthly student membership
    # … £22" against "Off-peak monthly £22")
    if not missing or missing & characters(set().union(*(said.rivals.get(name, set()) for name in _WHO_OR_WHICH))):
        return None
    anchors = len([q for q in said.numbers if q.unit]) + len(said.times)  # each figure found makes a word less needed
    if has_han(claim):
        if len(said.words) < 8 or len(held) / len(said.words) < max(0.75, FIGURED_SHARE - 0.05 * (anchors - 1)):
            return None
    elif len(said.words) + anchors < 5 or len(missing) > min(anchors, 2):
        return None
    verdict = _verdict(claim, replace(said, words=held), passage, i)
    if verdict is None or verdict.label != "full":
        return None
    return replace(verdict, reason=f"the clause '{passage.text(i).strip()}' gives every figure of the claim and its "
                                   f"words but '{''.join(sorted(missing)) if has_han(claim) else min(missing)}'")


def _figures_in(said: Facts, here: Facts) -> int:
    """How many of the claim's numbers and times a clause gives: of two clauses as near, the one with the figures."""
    return (sum(matched(q, here.numbers) is not None for q in said.numbers)
            + sum(any(t.same(e) for e in here.times) for t in said.times))


# --- what is denied or missing ----------------------------------------------------------------------------


def _denied_nearly(said: Facts, passage: Passage, i: int) -> Reading | None:
    """`contradicts`, overruling a `full` only, where a short clause holds all but one word of the claim and
    negates it ("会员积分可以直接兑换成现金" against "会员积分…不可兑换现金"; "The drug is safe to take during
    pregnancy." against "The drug should not be taken during pregnancy")."""
    here = passage.facts(i)
    held = said.words & (here.words | passage.around(i))
    missing = said.words - held
    zh = has_han(passage.text(i))
    if (len(said.words) < 3 or len(missing) > (3 if zh else 1) or len(held) / len(said.words) < NEAR_SHARE
            or _negated_about(said, here) == said.negated or len(here.words) > 2 * len(said.words) + 4
            or _about_exception(said.words, passage.text(i))
            or said.negated and _denied_with_its_figures(said, passage, i)):
        return None
    what = "negates it" if not said.negated else "does not negate it"
    return _reading("contradicts", passage, i, f"the clause '{passage.text(i).strip()}' holds all but "
                                               f"'{''.join(sorted(missing))}' of the claim and {what}", decides=False)


def _missing_part(claim: str, said: Facts, passage: Passage) -> Reading | None:
    """`partial` when one part of a claim that joins facts is not in the evidence at all (none of its words,
    or a number the evidence does not give) while the rest of its words are."""
    parts = [p for p in _JOIN.split(claim) if p and p.strip()]
    if len(parts) < 2 or size(claim) > JOINED_WORDS:
        return None
    everywhere = passage.whole
    written = canonical(everywhere.written)  # for the character pairs of a Chinese part
    pieces = [facts(part) for part in parts]
    for k, (part, piece) in enumerate(zip(parts, pieces)):
        if not piece.words and not piece.numbers or k == 0 and len(piece.words) < 3 or _FRAMING.fullmatch(part.strip()):
            continue  # "On the other hand, …", "具体来说，…": how the sentence is framed, not a fact
        absent_words = len(piece.words) >= 2 and not (piece.words & everywhere.words) or _absent_pairs(part, written)
        absent_number = any(matched(q, everywhere.numbers) is None and not any(
            same_kind(q, e) for e in everywhere.numbers) for q in piece.numbers)
        if not (absent_words or absent_number):
            continue
        rest = set().union(*(other.words for j, other in enumerate(pieces) if j != k)) - piece.words
        if rest and len(rest & everywhere.words) / len(rest) >= PART_SHARE:
            return Reading("partial", 0, len(passage.evidence),
                           f"the part '{part.strip()}' of the claim is not in the evidence, the rest is", decides=False)
    return None


def _absent_pairs(part: str, written: str) -> bool:
    """Whether a Chinese part says nothing the evidence (its canonical text, `written`) says: two or more of its
    character pairs, none of them in the evidence ("配工作手机" where the evidence has 员工 but no 工作, no 手机)."""
    pairs = {run[k:k + 2] for run in HAN_RUN.findall(canonical(part)) for k in range(len(run) - 1)}
    pairs = {p for p in pairs if not set(p) & STOP_CHARS}
    return len(pairs) >= 2 and not any(p in written for p in pairs)


# --- how a reading is written ----------------------------------------------------------------------------


def _reading(label: str, passage: Passage, i: int, reason: str, decides: bool | None = None) -> Reading:
    a, b = passage.spans[i]
    return Reading(label, a, b, reason, label in ("full", "contradicts") if decides is None else decides)


def _rival(passage: Passage, i: int, theirs: str, ours: str) -> Reading:
    return _reading("contradicts", passage, i, f"the clause '{passage.text(i).strip()}' gives {theirs} where the "
                                               f"claim says {ours}")


def _time_text(f: Facts, k: int) -> str:
    t = f.times[k]
    return f.written[t.start:t.end].strip()


def _range_text(a: Time, b: Time) -> str:
    return f"{a.minutes // 60}:{a.minutes % 60:02d}–{b.minutes // 60}:{b.minutes % 60:02d}"
