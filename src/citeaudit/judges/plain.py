"""The plain reading: what a careful reader sees at once in one clause of the evidence.

A support answer is full of short plain sentences that restate one clause of a manual or a spec sheet:
"Hold the reset button for 8 seconds." against "To restore factory settings, hold the reset button for
8 seconds." A careful reader needs no model for that pair, and a small model gets it wrong often enough
(judge-v1 p(full) 0.12) to matter. Nor does a reader need one for "The tablet is waterproof." against
"… but it is not waterproof": the same words, negated.

`read(claim, evidence)` cuts the evidence into clauses (at . ; : ! ? and their Chinese forms, and before
"while", "whereas", "but", 而, 但, 却, so that "the council approved the budget; the mayor had opposed it"
does not hold "the mayor approved the budget"). When a clause holds *every* content word of the claim,
the reading says:

* `full` when every number of the claim has its value there, and the claim and the clause are both
  negated or both not;
* `contradicts` when one of the two is negated and the other is not ("is waterproof" / "is not
  waterproof") in a clause not much longer than the claim (a long one may negate something else), or
  when a number of the claim is missing from the clause and the clause gives the same unit another
  value ("for 8 seconds" / "for 3 seconds");
* nothing when the claim is about what the clause excepts ("Assistance dogs are allowed." against "Pets
  are not allowed, except assistance dogs"), or a number of the claim is not there with no rival.

A clause that says `full` wins over one that says otherwise. When no clause holds every word, one case
is still read: a number of the claim that is nowhere in the evidence, where the clause holding at least
three quarters of the claim's words gives the same unit another value (`contradicts`: "请按住电源键3秒
重启平板" against "如需重启平板，请按住电源键10秒"). Everything else is the model's to read.

Content words are those of the calibration (lower-cased, stop words out, cut to six letters; Chinese as
character bigrams), with numbers read as quantities ("two hours" = "2 hours"), a plural "s" dropped, a
symbol kept ("C#" is not "C") and negations set aside (不允许 holds 允许's words; whether each side is
negated is compared apart). A claim needs at least two content words besides its numbers: "It is 8."
says too little to be read this way. The reading is pure Python and deterministic; the model judge
applies it after calibration and before the qualifier guard (`model:plain=off` leaves it out), says in
the explanation when it changed a label, and takes the `uncertain` mark off a guess it confirms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from citeaudit.judges.guard import _claim_negation, _same_value, _unmarked, masked_not_negating
from citeaudit.quantities import CONTRASTIVE, NEGATION_EN, NEGATION_ZH, Quantity, normalise, quantities
from citeaudit.text import STOP_WORDS, has_han

# Where a clause ends: sentence and clause punctuation, and the words that open a contrasting clause
_CLAUSE_END = re.compile(r"[.;:!?]+(?:\s+|$)|[。；：！？;\n]+|,?\s+(?:while|whereas|but|although|though)\s+|"
                         r"[,，]\s*(?:而|但|但是|却|然而|不过)", re.I)
_WORD = re.compile(r"[a-z0-9]+[#+]*")  # "c#" and "c++" are not "c"
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
# besides the guard's contrasts ("not only"), a negation of the evidence that bounds rather than denies
_NOT_THAN = re.compile(r"\s+(?:more|less|longer|later|earlier)\s+than\b", re.I)
# an exception turns a negation round for what it names
_EXCEPTION = re.compile(r"\b(?:except|excepting|apart from|other than|unless)\b|除外|除了|以外", re.I)
_NEGATION_CHAR = re.compile("[不没未无非否别勿禁]")
MIN_WORDS = 2
# The version of the reading, signed with the judge (model:…|plain=on@1): a change here changes judgments.
VERSION = 1
NEAR_SHARE = 0.75  # of the claim's words in one clause: the clause is about what the claim is about


@dataclass(frozen=True)
class Reading:
    label: str  # "full" or "contradicts"
    start: int  # the clause, as offsets into the evidence
    end: int
    reason: str


def _words(text: str) -> set[str]:
    """Content words with the numbers taken out (they are compared as quantities)."""
    text = normalise(text)
    for q in sorted(quantities(text), key=lambda q: -q.start):  # offsets into the normalised text
        text = text[:q.start] + " " * (q.end - q.start) + text[q.end:]
    lowered = _without_negation(text).lower()
    words = {w.removesuffix("s")[:6] if len(w) > 3 and w.isalnum() else w for w in _WORD.findall(lowered)
             if w not in STOP_WORDS and not w.isdigit()}
    for run in _HAN_RUN.findall(lowered):
        words.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return words


def _without_negation(text: str) -> str:
    """`text` with its negations taken out ("cannot" -> "can", 不允许 -> 允许): whether a claim and a clause
    are negated is compared apart, and a negation must not hide that they say the same words."""
    if has_han(text):
        masked = masked_not_negating(text)
        return "".join(c if m == "\u3000" or not _NEGATION_CHAR.match(c) else "" for c, m in zip(text, masked))
    return NEGATION_EN.sub(lambda m: "can" if m.group(0).lower() == "cannot" else " ", text)


def clauses(text: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of `text`, as `read` cuts it."""
    spans, at = [], 0
    for m in _CLAUSE_END.finditer(text):
        if m.start() > at:
            spans.append((at, m.start()))
        at = m.end()
    if at < len(text):
        spans.append((at, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


@dataclass
class _Clauses:
    """One evidence text cut into clauses once: each clause's span and its normalised lower-case text (what a
    claim's words are first looked for in), its content words when first asked, and the text's numbers."""

    evidence: str
    spans: list[tuple[int, int]]
    lowered: list[str]
    _word_sets: dict[int, set[str]] = field(default_factory=dict)
    _numbers: list[Quantity] | None = None

    def text(self, i: int) -> str:
        a, b = self.spans[i]
        return self.evidence[a:b]

    def words(self, i: int) -> set[str]:
        if i not in self._word_sets:
            self._word_sets[i] = _words(self.text(i))
        return self._word_sets[i]

    def numbers(self) -> list[Quantity]:
        if self._numbers is None:
            self._numbers = quantities(self.evidence)
        return self._numbers


# A passage is read for every claim that cites it, and again in every cited set it belongs to; a few of
# them are kept cut (a long passage is long: few, not many)
@lru_cache(maxsize=8)
def _clauses_of(evidence: str) -> _Clauses:
    spans = clauses(evidence)
    return _Clauses(evidence, spans, [normalise(evidence[a:b]).lower() for a, b in spans])


def _negated(text: str, zh: bool) -> bool:
    if zh:
        masked = masked_not_negating(text)
        return bool(NEGATION_ZH.search(masked) or "禁" in masked)
    return any(not (CONTRASTIVE.match(text, m.end()) or _NOT_THAN.match(text, m.end()))
               for m in NEGATION_EN.finditer(text))


def _about_exception(claim_words: set[str], clause: str) -> bool:
    """Whether the claim is about what the clause excepts: "Assistance dogs are allowed." against "Pets are
    not allowed, except assistance dogs" (a claim about pets is still denied)."""
    cue = _EXCEPTION.search(clause)
    if cue is None:
        return False
    return bool(claim_words & (_words(clause[cue.end():]) - _words(clause[:cue.start()])))


def read(claim: str, evidence: str) -> Reading | None:
    """What one clause of `evidence` plainly says of `claim`, or None when no clause holds all its words.
    The clause's offsets are into `evidence` as given."""
    claim = _unmarked(normalise(claim))
    wanted = _words(claim)
    if len(wanted) < MIN_WORDS:
        return None
    index = _clauses_of(evidence)
    # a clause's words are read only when the claim's show in its text (never fewer there than among its
    # words, and cheap to count: a long passage has many clauses)
    near = [i for i, lowered in enumerate(index.lowered)
            if sum(w in lowered for w in wanted) / len(wanted) >= NEAR_SHARE]
    holding = [i for i in near if wanted <= index.words(i)]
    claim_numbers = quantities(claim)
    if not holding:
        return _rival_number(wanted, claim_numbers, index, near)
    zh = has_han(claim)
    claim_negated = _claim_negation(claim) is not None
    verdicts = [_verdict(wanted, claim_numbers, claim_negated, index, i, zh) for i in holding]
    # a clause that says it plainly is enough; else the first that says otherwise
    return next((v for v in verdicts if v and v.label == "full"), None) or next((v for v in verdicts if v), None)


def _rival_number(wanted: set[str], claim_numbers: list[Quantity], index: _Clauses, near: list[int]) -> Reading | None:
    """`contradicts` when a number of the claim is nowhere in the evidence and the clause that holds most of
    the claim's words (at least NEAR_SHARE of them) gives the same unit another value: "请按住电源键3秒重启平板"
    against "如需重启平板，请按住电源键10秒"."""
    if not claim_numbers:
        return None
    missing = [q for q in claim_numbers
               if q.unit is not None and not any(_same_value(q, e) for e in index.numbers())]
    if not missing:
        return None
    share, i = max(((len(wanted & index.words(i)) / len(wanted), i) for i in near), default=(0.0, None))
    if i is None or share < NEAR_SHARE:
        return None
    theirs = quantities(index.text(i))
    for q in missing:
        rivals = [e for e in theirs if e.unit == q.unit]
        if rivals:
            return _rival(index, i, rivals[0], q)
    return None


def _rival(index: _Clauses, i: int, theirs: Quantity, q: Quantity) -> Reading:
    a, b = index.spans[i]
    return Reading("contradicts", a, b, f"the clause '{index.text(i).strip()}' gives {theirs.text} where the "
                                        f"claim says {q.text}")


def _verdict(claim_words: set[str], claim_numbers: list[Quantity], claim_negated: bool, index: _Clauses, i: int,
             zh: bool) -> Reading | None:
    clause = index.text(i)
    a, b = index.spans[i]
    theirs = quantities(clause)
    for q in claim_numbers:
        if any(_same_value(q, e) and (e.unit == q.unit or e.unit is None or q.unit is None) for e in theirs):
            continue
        rivals = [e for e in theirs if e.unit == q.unit and q.unit is not None]
        if rivals:
            return _rival(index, i, rivals[0], q)
        return None  # a number the clause does not give: the model reads it
    if _negated(clause, zh) != claim_negated:
        if _about_exception(claim_words, clause) or len(index.words(i)) > 2 * len(claim_words) + 4:
            return None  # a long clause may negate something else than the claim
        said = "negates it" if not claim_negated else "does not negate it"
        return Reading("contradicts", a, b, f"the clause '{clause.strip()}' holds every word of the claim and {said}")
    return Reading("full", a, b, f"every word of the claim is in the clause '{clause.strip()}'")
