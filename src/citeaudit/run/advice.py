"""Advice for one failing claim, from what its judgment records: the qualifier guard's finding (the
mismatched number, unit, year, month, negation) when there is one, else the judge's label and the
diagnosed cause. A claim with no specific finding gets a neutral line rather than a guess."""

from __future__ import annotations

import re
from dataclasses import dataclass

from citeaudit.records import Judgment

# As judges/model.py appends it: "; qualifier guard (KIND): REASON -> LABEL, not full"
_GUARD_NOTE = re.compile(r"qualifier guard \(([a-z-]+)\): (.*?) -> (?:partial|none), not full")
_QUOTED = re.compile(r"'([^']{1,80})'")

# What to do about each guard rule's finding (judges/guard.py names the rules).
_GUARD_ACTION = {
    "number": "state the number the passage gives, or cite a passage that gives this one",
    "year": "state the year the passage gives, or cite a passage for this year",
    "version": "state the version the passage names, or cite the passage for this version",
    "count": "state the count the passage gives, or list what is counted",
    "unit": "state the quantity in the passage's unit, or cite a passage with this unit",
    "attachment": "the number is in the passage but measures something else: say what it measures there, "
                  "or cite the passage for this quantity",
    "name": "the passage names another one: check which one the claim means",
    "month": "state the month the passage gives, or cite a passage for this month",
    "negation": "the claim denies what the passage does not: check the claim's polarity",
    "negated-in-evidence": "the passage denies what the claim asserts: correct or drop the claim",
    "scope": "the passage says it of a narrower subject: narrow the claim to it",
}

_CAUSE_ACTION = {
    "not_retrieved": "Its evidence was never retrieved: fix search or filters so the documenting passage "
                     "reaches the answer.",
    "retrieved_not_cited": "The passage that documents it was retrieved, but another was cited: cite the "
                           "documenting passage.",
    "uncited": "It carries no citation: cite its evidence or drop it.",
    "contradicted": "The judge found the cited passage says otherwise: correct or drop the claim.",
}

NEUTRAL = ("The judge found no support in the cited passage; no specific mismatch was recorded: read its "
           "explanation and the passage side by side.")


@dataclass(frozen=True)
class GuardNote:
    kind: str
    reason: str


def guard_notes(explanation: str | None) -> list[GuardNote]:
    """The guard's findings recorded in a judgment's explanation."""
    return [GuardNote(m.group(1), m.group(2)) for m in _GUARD_NOTE.finditer(explanation or "")]


def quoted(reason: str) -> list[str]:
    """The quantities a guard reason quotes ('15%', '2021'): what to highlight in the passage."""
    return _QUOTED.findall(reason)


def claim_advice(judgment: Judgment | None, cause: str | None, evidence: list[str] = ()) -> str:
    """One line of advice for a claim; empty for a claim that needs none. `evidence`: the passages of
    the required facts the claim names, which the causes about evidence point to."""
    if judgment is None:
        return "Not judged: the run log holds no judgment for this claim."
    if judgment.uncertain:
        return (f"The judge was unsure (its best guess, {judgment.label}, is shown and counted apart): "
                "a person should decide, in the desk's review, or a stronger judge "
                "(e.g. --judge cascade:model,openai:MODEL).")
    if cause is None:
        return ""
    notes = guard_notes(judgment.explanation)
    if notes:
        return " ".join(f"Qualifier guard ({n.kind}): {n.reason}; {_GUARD_ACTION.get(n.kind, 'check it')}."
                        for n in notes)
    if cause in ("not_retrieved", "retrieved_not_cited") and evidence:
        named = ", ".join(evidence)
        if cause == "not_retrieved":
            return f"Its evidence ({named}) was never retrieved: fix search or filters so that it reaches the answer."
        return f"The passage that documents it ({named}) was retrieved, but another was cited: cite {named}."
    if cause in _CAUSE_ACTION:
        return _CAUSE_ACTION[cause]
    if judgment.label == "partial":
        return ("The judge found the cited passage supports part of the claim: narrow the claim to what it "
                "says, or cite a passage for the rest.")
    return NEUTRAL
