"""An agent that checks its cited answer before sending it, and stops searching when its budget is spent.

Offline: a toy retriever over the P7 archive (four documents) and the shipped model judge
(`pip install 'citeaudit[model]'`). Run it with `python docs/examples/budget_agent.py`.

The draft is the P7 archive's answer A. For each claim the judge does not support, the agent may search
the archive once more for a passage to add to its citations: never again once the budget says no. What is still
unsupported then is stated as a limitation, not hunted for.
"""

from __future__ import annotations

import re

from citeaudit import SearchBudget, make_judge, verify
from citeaudit.examples import load_example

ARCHIVE = {p.id: p.text for p in load_example("p7_archive.json")[0].passages.values()}
STOP = {"the", "a", "an", "of", "on", "in", "by", "is", "was", "it", "and", "for", "with"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOP}


def search(query: str, exclude: set[str]) -> str | None:
    """The toy retriever: the passage sharing most words with the query, among those not tried yet."""
    ranked = sorted((p for p in ARCHIVE if p not in exclude), key=lambda p: -len(words(query) & words(ARCHIVE[p])))
    return ranked[0] if ranked else None


def draft() -> list[dict]:
    """Answer A: three claims, each with its citation."""
    return [{"id": "c1", "text": "The continuous limit is 80 °C.", "citations": ["D1"]},
            {"id": "c4", "text": "Eco reduces annual energy by 15%.", "citations": ["D3"]},
            {"id": "c5", "text": "The pilot was validated on a thousand machines.", "citations": ["D4"]}]


def run(max_searches: int = 2):
    judge = make_judge("model", [])  # built once: every verify below reuses it
    statements = draft()
    tried = {st["id"]: set(st["citations"]) for st in statements}  # passages already cited per claim
    budget = SearchBudget(max_searches=max_searches)
    while True:
        result = verify({"id": "A", "statements": statements}, ARCHIVE, judge=judge, budget=budget)
        if result.decision == "deliver" or not result.gaps:
            return result
        searched = False
        for gap in result.gaps:
            if not budget.allow():
                break
            budget.spend(1)
            found = search(gap.text, tried[gap.claim])
            if found is None:
                continue
            tried[gap.claim].add(found)
            statement = next(st for st in statements if st["id"] == gap.claim)
            statement["citations"] = sorted(tried[gap.claim])  # cite the passage found as well
            searched = True
        if not searched:  # the budget is spent (or nothing is left to try): verify once more and stop
            return verify({"id": "A", "statements": statements}, ARCHIVE, judge=judge, budget=budget)


if __name__ == "__main__":
    result = run()
    print(result.render(), end="")
