"""The returns desk's five exercises, each loading its own starting setup with the figures to reach.

Follow, Repair, Cover, Trim and Test scope come from the built-in returns desk example; each
starting setup is one of its answers (or the Original answer with a repair already made).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from citeaudit.examples import example_text


@dataclass(frozen=True)
class Goal:
    step: str
    recall: str
    precision: str


@dataclass(frozen=True)
class Walkthrough:
    title: str
    instructions: str
    start: str  # answer id in returns_desk.json
    goals: tuple[Goal, ...]
    edits: tuple[tuple[str, list[str]], ...] = ()  # (statement id, citations) applied to the start
    variants: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (answer id, title)

    def describe(self, variant: str | None) -> dict[str, Any]:
        return {
            "title": self.title,
            "instructions": self.instructions,
            "goals": [g.__dict__ for g in self.goals if variant is None or g.step.startswith(self.variants[variant][1])],
            "variants": [{"name": k, "title": v[1]} for k, v in self.variants.items()],
        }


WALKTHROUGHS: dict[str, Walkthrough] = {
    "follow": Walkthrough(
        "Follow",
        "Select C1 and follow its thread to S2. Read the passage: it is about returns, but gives no time "
        "window. Then read S1, which does. Change nothing yet.",
        "original",
        (Goal("As found", "2/4", "2/3"),),
    ),
    "repair": Walkthrough(
        "Repair",
        "C1 cites S2, which does not give the return window. Make S1 the only citation of C1.",
        "original",
        (Goal("C1 cites S1", "3/4", "3/3"), Goal("C3 also cites S3", "4/4", "4/4")),
    ),
    "cover": Walkthrough(
        "Cover",
        "C1 is repaired. C3 states the refund rule without any citation: cite the passage that documents it.",
        "original",
        (Goal("C3 cites S3", "4/4", "4/4"),),
        edits=(("C1", ["S1"]),),
    ),
    "trim": Walkthrough(
        "Trim",
        "C1 cites S1, S2 and S3. Its claim is supported, but only S1 supports it: two citations earn no "
        "precision credit. Remove the ones that do not belong.",
        "padded",
        (Goal("As found", "4/4", "4/6"), Goal("C1 cites only S1", "4/4", "4/4")),
    ),
    "test-scope": Walkthrough(
        "Test scope",
        "Three setups. Window + receipt: C6 needs both S1 and S2; remove one and see what remains. "
        "Clearance items: the claim widens the scope to clearance items, which S5 excludes. "
        "S1 + S6: two passages that each fully support C1; both earn credit.",
        "joint-support",
        (Goal("Window + receipt", "1/1", "2/2"), Goal("Window + receipt without S2", "0/1", "0/1"),
         Goal("Clearance items", "0/1", "0/2"), Goal("S1 + S6", "1/1", "2/2")),
        variants={"window-receipt": ("joint-support", "Window + receipt"),
                  "clearance": ("overbroad-claim", "Clearance items"),
                  "two-supports": ("two-full-supports", "S1 + S6")},
    ),
}


def walkthrough_case(name: str, variant: str | None = None) -> dict[str, Any]:
    """The returns desk case reduced to the walkthrough's starting answer, with its edits applied."""
    w = WALKTHROUGHS[name]
    answer_id = w.variants[variant][0] if variant else w.start
    case = json.loads(example_text("returns_desk.json"))
    answer = copy.deepcopy(next(a for a in case["answers"] if a["id"] == answer_id))
    for statement_id, citations in w.edits:
        next(s for s in answer["statements"] if s.get("id") == statement_id)["citations"] = citations
    case["answers"] = [answer]
    case["id"] = f"returns-desk-{name}"
    return case
