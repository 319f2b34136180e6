"""SearchBudget: what an agent loop consults before each search; verify states gaps as limitations once it is spent."""

from __future__ import annotations

import json

import pytest

from citeaudit import InputError, SearchBudget, verify
from citeaudit.examples import load_example
from citeaudit.judges import CuratedJudge
from citeaudit.run.log import read_runlog

ANSWER_A = "The continuous limit is 80 °C [D1]. Eco reduces annual energy by 15% [D3]."


@pytest.fixture(scope="module")
def archive_and_judge():
    p7 = load_example("p7_archive.json")[0]
    return {pid: p.text for pid, p in p7.passages.items()}, CuratedJudge.from_cases([p7])


def test_counts_searches_until_spent():
    budget = SearchBudget(max_searches=2)
    spent = 0
    while budget.allow():
        budget.spend()
        spent += 1
    assert (spent, budget.used, budget.exhausted, budget.stopped) == (2, 2, True, True)


def test_cost_limit():
    budget = SearchBudget(max_cost=1.0)
    assert budget.allow(0.6)
    budget.spend(0.6)
    assert not budget.allow(0.6)  # this search would pass the limit
    assert budget.allow(0.4) and not budget.exhausted
    budget.spend(0.4)
    assert budget.exhausted and not budget.allow() and budget.cost == pytest.approx(1.0)


def test_no_limit_is_never_exhausted():
    budget = SearchBudget()
    for _ in range(100):
        assert budget.allow()
        budget.spend(5)
    assert not budget.exhausted and not budget.stopped and budget.used == 100


def test_zero_budget_allows_nothing():
    budget = SearchBudget(max_searches=0)
    assert budget.exhausted and not budget.allow() and budget.stopped


@pytest.mark.parametrize("kwargs, field", [
    ({"max_searches": -1}, "max_searches"), ({"max_searches": 1.5}, "max_searches"),
    ({"max_cost": float("nan")}, "max_cost"), ({"max_searches": True}, "max_searches"), ({"max_cost": "3"}, "max_cost"),
])
def test_bad_limits_are_named(kwargs, field):
    with pytest.raises(InputError) as err:
        SearchBudget(**kwargs)
    assert f"SearchBudget: {field}:" in str(err.value)


def test_negative_cost_is_refused():
    with pytest.raises(InputError, match="cost"):
        SearchBudget().spend(-1)


def test_open_budget_leaves_gaps_open(archive_and_judge):
    archive, judge = archive_and_judge
    budget = SearchBudget(max_searches=3)
    budget.spend()
    result = verify(ANSWER_A, archive, judge, budget=budget)
    assert result.limitations == [] and not result.gaps[0].limitation
    assert (result.search.searches, result.search.exhausted, result.search.stopped_by_budget) == (1, False, False)


def test_spent_budget_states_gaps_as_limitations(archive_and_judge):
    archive, judge = archive_and_judge
    budget = SearchBudget(max_searches=2)
    while budget.allow():
        budget.spend()
    result = verify(ANSWER_A, archive, judge, budget=budget)
    assert result.decision == "revise"
    assert result.limitations == ["After 2 searches, the sources do not establish that Eco reduces annual energy by 15%."]
    assert result.gaps[0].limitation and result.supported_answer.endswith(result.limitations[0])
    assert result.search.model_dump() == {"searches": 2, "cost": 0.0, "max_searches": 2, "max_cost": None,
                                          "exhausted": True, "stopped_by_budget": True}
    assert "budget spent, it stopped the search" in result.render()


def test_run_log_keeps_the_search_record(tmp_path, archive_and_judge):
    archive, judge = archive_and_judge
    budget = SearchBudget(max_searches=1, max_cost=2.5)
    budget.spend(0.5)
    budget.allow()
    result = verify(ANSWER_A, archive, judge, budget=budget)
    result.write_log(tmp_path / "run.json")
    raw = json.loads((tmp_path / "run.json").read_text())
    assert raw["search"] == {"searches": 1, "cost": 0.5, "max_searches": 1, "max_cost": 2.5, "exhausted": True,
                             "stopped_by_budget": True}
    log = read_runlog(tmp_path / "run.json")
    assert not log.edited and log.search.searches == 1  # the checksum covers it
