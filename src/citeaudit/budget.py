"""A search budget for agent loops: a stopping rule for "search again until a citation looks right".

    budget = SearchBudget(max_searches=3, max_cost=1.0)
    while gaps and budget.allow():
        budget.spend(cost_of_this_search)
        ...search, re-cite, verify again...
    result = verify(answer, sources, judge=judge, budget=budget)   # gaps left become stated limitations

The budget only counts; the agent decides what a search costs (one call, tokens, money). Once it is
spent, `verify` reports what the sources still do not establish instead of inviting another search.
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from citeaudit.errors import InputError, Problem


def _limit(name: str, value: float | None) -> Problem | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return Problem("SearchBudget", None, name, f"expected a finite number >= 0 or None, got {value!r}")
    return None


class SearchBudget:
    """How many searches an agent may make, and how much they may cost together (None: no limit)."""

    def __init__(self, max_searches: int | None = None, max_cost: float | None = None):
        problems = [p for p in (_limit("max_searches", max_searches), _limit("max_cost", max_cost)) if p]
        if max_searches is not None and not problems and int(max_searches) != max_searches:
            problems.append(Problem("SearchBudget", None, "max_searches", f"expected a whole number, got {max_searches!r}"))
        if problems:
            raise InputError(problems)
        self.max_searches = None if max_searches is None else int(max_searches)
        self.max_cost = max_cost
        self.used = 0  # searches made
        self.cost = 0.0  # their cost, summed
        self.refused = 0  # times allow() said no: the budget stopped the loop at least once when > 0

    @property
    def exhausted(self) -> bool:
        """No search is left: the count is reached, or the cost is."""
        return ((self.max_searches is not None and self.used >= self.max_searches)
                or (self.max_cost is not None and self.cost >= self.max_cost))

    def allow(self, cost: float = 0.0) -> bool:
        """May the agent make one more search (of this expected cost)? A refusal is remembered."""
        over_cost = self.max_cost is not None and cost > 0 and self.cost + cost > self.max_cost
        if self.exhausted or over_cost:
            self.refused += 1
            return False
        return True

    def spend(self, cost: float = 0.0) -> None:
        """Count one search made, and what it cost."""
        problem = _limit("cost", cost)
        if problem:
            raise InputError([problem])
        self.used += 1
        self.cost += cost

    @property
    def stopped(self) -> bool:
        """Whether the budget refused a search the agent asked for."""
        return self.refused > 0

    def __repr__(self) -> str:
        return (f"SearchBudget(max_searches={self.max_searches}, max_cost={self.max_cost}, used={self.used}, "
                f"cost={self.cost:g}, exhausted={self.exhausted})")


class SearchRecord(BaseModel):
    """How an agent's search budget was used: kept with a verification and in its run log."""

    model_config = ConfigDict(extra="forbid")

    searches: int
    cost: float
    max_searches: int | None = None
    max_cost: float | None = None
    exhausted: bool
    stopped_by_budget: bool  # the budget refused a search the agent asked for

    @classmethod
    def of(cls, budget: SearchBudget) -> SearchRecord:
        return cls(searches=budget.used, cost=budget.cost, max_searches=budget.max_searches,
                   max_cost=budget.max_cost, exhausted=budget.exhausted, stopped_by_budget=budget.stopped)


# The run log's field for it: left out of a log written without a budget, so such logs read as before.
OptionalSearchRecord = Annotated[SearchRecord | None, Field(exclude_if=lambda value: value is None)]
