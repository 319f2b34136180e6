"""Split a statement into atomic claims, only where that is safe.

The ``Decomposer`` protocol
---------------------------
A decomposer has one method::

    decompose(statement_text: str, lang: str) -> list[tuple[int, int]] | list[str]

``statement_text`` is the cleaned statement (citation markers removed, whitespace collapsed);
``lang`` is ``"en"``, ``"zh"`` or another pysbd language code. Return either

* ``(start, end)`` character ranges into ``statement_text``, one per claim, in order and not
  overlapping (the parser trims whitespace and closing punctuation from each); or
* the claim texts. Each is looked up in ``statement_text`` (in order, whitespace-insensitively); a
  claim found there gets offsets and the citations placed inside it, one that is not (an LLM's
  rephrasing) keeps ``offsets=None`` and inherits the statement's citations.

Returning a single claim (or nothing) leaves the statement whole. An LLM-backed decomposer fits by
implementing this method; ``RuleDecomposer`` is the default and ``NoDecomposer`` never splits.

The rules of ``RuleDecomposer``
-------------------------------
English: a statement is cut at ``;`` or at ``and``/``but`` (with or without a comma) only when both
sides are full clauses with their own subject and verb:

    "The limit is 80 °C and Eco saves 15 % energy"  -> "The limit is 80 °C" | "Eco saves 15 % energy"

and never when that is uncertain:

* the right side has no subject of its own ("returned within 30 days and in original packaging",
  "must be returned and must be unused"), no verb ("between 10 and 20 °C", "15 % in winter and
  10 % in summer", "... resource deficiencies, and the continued influence of local elites"), or a
  pronoun or possessive for subject ("... and it applies to all models", "... but their value is
  volatile": the claim would not stand alone);
* the statement opens with a condition or an introductory phrase ("If ...", "When ...",
  "In 2020, ...", "According to ..."), which may govern both halves, or the left part contains a
  subordinate, relative or reported clause ("..., because ... and ...", "a patient who has ... and
  ...", "the study found that ... and ...");
* the joint is inside parentheses or quotes, belongs to "between ... and" / "both ... and", follows
  "such as"/"including", or closes an enumeration ("A, B, and C ...": another comma shortly before
  a ", and" joint).

Verbs are recognised without a tagger: auxiliaries and modals, common irregular past forms, and an
"-s" form between a noun-like word and a following word ("Eco saves energy"); "-ed" forms are not
trusted (as often participles: "compared to", "based on"). A subject is at most four words (before
an "-s" verb: one word, with or without a determiner), starts with a determiner, a pronoun, a
capitalised word or a number, and contains no comma, conjunction, preposition or relative pronoun.
Anything else counts as "unsure" and the statement stays whole: the rules trade recall for
precision, since a wrong split produces claims that no passage can support.

Chinese: a statement is cut only at a full-width semicolon "；", outside brackets and quotes, when
each part has at least five characters and the statement is not a colon-introduced list
("原因有：A；B；C" stays whole). Commas (，并且/而且) are never cut: without a parser the subject of
a Chinese clause is too often implicit. Other languages are left whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Decomposer(Protocol):
    def decompose(self, statement_text: str, lang: str) -> Sequence[tuple[int, int]] | Sequence[str]:
        """Claims of one statement, as ranges into ``statement_text`` or as texts."""
        ...


class NoDecomposer:
    """Keeps every statement whole (one claim per statement)."""

    signature = "none"

    def decompose(self, statement_text: str, lang: str) -> list[tuple[int, int]]:
        return [(0, len(statement_text))]


class RuleDecomposer:
    """Splits coordinated independent clauses; see the module docstring for the rules."""

    signature = "rule@1"  # bump when a rule changes which claims a statement yields

    def decompose(self, statement_text: str, lang: str) -> list[tuple[int, int]]:
        if lang == "zh":
            return _split_zh(statement_text)
        if lang == "en":
            return _split_en(statement_text)
        return [(0, len(statement_text))]


# ---------------------------------------------------------------------------------------------
# English

_AUX = frozenset(
    """is are was were be been has have had can could will would shall should may might must does do
    did remains remain remained seems seemed appears appeared becomes became isn't aren't wasn't
    weren't hasn't haven't hadn't doesn't don't didn't can't cannot won't wouldn't shouldn't
    couldn't isn’t aren’t wasn’t weren’t hasn’t haven’t doesn’t don’t didn’t can’t won’t""".split()
)
# Past forms that are rarely nouns or adjectives ("set", "cut", "left", "found" are left out).
_IRREGULAR = frozenset(
    """rose fell grew took made gave went came began brought built ran said told thought knew wrote
    chose drove broke spoke sent bought caught taught fought sought showed""".split()
)
_DETERMINERS = frozenset(
    """the a an this that these those its their his her our my your each every some many most all
    both no any several such another either neither other""".split()
)
_PRONOUNS = frozenset("it they he she we i you this that these those them one".split())
_POSSESSIVES = frozenset("its their his her our my your whose".split())
_RELATIVES = frozenset("that which who whom whose".split())
_PREPOSITIONS = frozenset(
    """in on at by for with within without from to of between over under after before during into
    through per than as about above below across around including via against among since until upon
    onto toward towards beyond despite like near""".split()
)
_SUBORDINATORS = frozenset(
    """if when whenever unless although though because since while whereas once until whether
    provided where after before as""".split()
)
_NOT_SUBJECT = _PREPOSITIONS | _SUBORDINATORS | frozenset(
    """and or but nor so then also not only even more less most least very much such which who whom
    whose according however therefore thus moreover additionally furthermore""".split()
)
_MAX_SUBJECT = 4  # words before the verb; a longer subject is too often a fragment of a list
_WORD = re.compile(r"\w(?:[\w'’.\-]*\w)?|[^\w\s]")
_JOINT = re.compile(r"\s*;\s*|,?\s+(?:and|but)\s+")
_OPEN = {"(": ")", "[": "]", "{": "}", "“": "”", "‘": "’"}


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _base(word: str) -> str:
    """Lower-cased, without a clitic: "I'll" -> "i", "sector's" -> "sector"."""
    return re.split(r"['’]", word.lower())[0]


def _verb_at(words: list[str], k: int) -> bool:
    """Is words[k] a finite verb? Auxiliaries, modals and common irregular pasts are; so is an
    "-s" word between a noun-like word and its object ("Eco saves energy"). "-ed" words are not
    trusted: they are as often participles ("compared to", "based on")."""
    w = words[k]
    wl = w.lower()
    if wl in _AUX:
        return True
    prev = words[k - 1].lower() if k else ""
    if k == 0 or prev in _DETERMINERS or prev in _POSSESSIVES or prev in _PREPOSITIONS:
        return False
    if not any(ch.isalpha() for ch in prev):
        return False  # after a number or a symbol a word is a unit or a noun: "30 days", "15 % savings"
    if wl in _IRREGULAR:
        return True
    nxt = words[k + 1].lower() if k + 1 < len(words) else ""
    if not (w.isalpha() and w.islower() and len(wl) > 3 and nxt[:1].isalnum()):
        return False
    if nxt in {"of", "and", "or"} or nxt.endswith("ing"):
        return False  # "results of", "helicopters being": a plural noun, not a verb
    return wl.endswith("s") and not wl.endswith(("ss", "us", "is", "ics", "ous"))


def _clause_verb(words: list[str], *, right: bool) -> str:
    """Does this stretch start with a short subject followed by a finite verb?

    Returns "" (no), "strong" (an auxiliary, modal or irregular past) or "weak" (an "-s" form).
    """
    if ":" in words:  # "Label: the clause" (a list item's label)
        words = words[len(words) - words[::-1].index(":") :]
    if len(words) < 2:
        return ""
    first = words[0]
    fl = _base(first)
    if fl in _NOT_SUBJECT or fl.endswith("ing") or _verb_at(words, 0):
        return ""
    if right and (fl in _PRONOUNS or fl in _POSSESSIVES):
        return ""  # "... and it applies to all models": the claim would not stand alone
    if not (fl in _DETERMINERS or fl in _PRONOUNS or fl in _POSSESSIVES or fl == "there"
            or first[0].isupper() or first[0].isdigit()):
        return ""  # a bare lower-case noun phrase ("prices rose") is too easily a fragment
    for k in range(1, min(len(words), _MAX_SUBJECT + 1)):
        w = words[k]
        wl = _base(w)
        if not w[0].isalnum() or wl in {"and", "or", "but"} or wl in _RELATIVES:
            return ""  # punctuation, a coordinated or a relative subject: unsure
        if wl in _PRONOUNS or wl in _PREPOSITIONS:
            # "the influences it had" (a reduced relative clause), "the development of targeted
            # therapies" (a noun phrase whose last word looks like a verb): unsure
            return ""
        if _verb_at(words, k):
            if wl in _AUX or wl in _IRREGULAR:
                return "strong"
            # an "-s" verb is only trusted right after a one-word subject, with or without a
            # determiner ("Eco saves", "the alarm sounds"); "Hergé's estate managers Moulinsart"
            # and "the estate managers Moulinsart" are noun phrases
            return "weak" if k == 1 or (k == 2 and fl in _DETERMINERS) else ""
    return ""


def _inside_brackets_or_quotes(text: str, pos: int) -> bool:
    stack: list[str] = []
    straight = 0
    for ch in text[:pos]:
        if ch == '"':
            straight += 1
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
    return bool(stack) or straight % 2 == 1


def _split_en(text: str) -> list[tuple[int, int]]:
    whole = [(0, len(text))]
    words = _words(text)
    if not words or words[0].lower() in _NOT_SUBJECT:
        return whole  # opens with a condition or an introductory phrase that may govern every part
    joints = [m for m in _JOINT.finditer(text) if not _inside_brackets_or_quotes(text, m.start())]
    if not joints:
        return whole
    cuts: list[tuple[int, int]] = []  # (end of left part, start of right part)
    left_start = 0
    for i, joint in enumerate(joints):
        right_end = joints[i + 1].start() if i + 1 < len(joints) else len(text)
        left = _words(text[left_start : joint.start()])
        right = _words(text[joint.end() : right_end])
        lowered = {w.lower() for w in left}
        phrase = lowered & {"between", "both", "either", "including", "like"}
        if phrase or "such as" in text[left_start : joint.start()]:
            continue  # "between 10 and 20", "such as A, B and C": the joint is inside a phrase
        if "," in joint.group() and "," in left[-8:]:
            continue  # "..., a target market, and a set of ...": an enumeration, not two clauses
        if lowered & (_SUBORDINATORS - {"as", "after", "before", "since", "until"}) or lowered & _RELATIVES:
            # a subordinate, relative or reported clause ("if ...", "who has ...", "found that ...")
            # may reach over the joint
            continue
        if not (_clause_verb(right, right=True) and _clause_verb(left, right=False)):
            continue
        cuts.append((joint.start(), joint.end()))
        left_start = joint.end()
    if not cuts:
        return whole
    spans = []
    start = 0
    for left_end, right_start in cuts:
        spans.append((start, left_end))
        start = right_start
    spans.append((start, len(text)))
    return spans


# ---------------------------------------------------------------------------------------------
# Chinese

_ZH_OPEN = {"（": "）", "(": ")", "“": "”", "「": "」", "『": "』", "《": "》", "【": "】", "[": "]"}


def _split_zh(text: str) -> list[tuple[int, int]]:
    whole = [(0, len(text))]
    if "；" not in text:
        return whole
    cuts = []
    stack: list[str] = []
    for i, ch in enumerate(text):
        if ch in _ZH_OPEN:
            stack.append(_ZH_OPEN[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
        elif ch == "；" and not stack:
            cuts.append(i)
    if not cuts or any(c in text[: cuts[0]] for c in "：:"):
        return whole  # a colon-introduced list: the parts are fragments of one statement
    bounds = [-1] + cuts + [len(text)]
    spans = [(a + 1, b) for a, b in zip(bounds, bounds[1:])]
    content = re.compile(r"[\w\u4e00-\u9fff]")
    if any(len(content.findall(text[a:b])) < 5 for a, b in spans):
        return whole
    return spans
