"""Metric definitions on small tables, including the degenerate cases, and ALCE's rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.judges import Judgments
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.metrics.ratio import Ratio

from helpers import SetJudge, load, make_case

FACTS = [{"id": "f1", "text": "fact one", "passages": ["S1"]}, {"id": "f2", "text": "fact two", "passages": ["S2"]}]


def score(case, judge=None, **kw):
    judge = judge or SetJudge({"x": [{"S1"}], "y": [{"S2"}], "xy": [{"S1", "S2"}]})
    return score_cases(load(case), Judgments(judge), Settings(**kw))


def ratios(case, judge=None, **kw):
    return score(case, judge, **kw).answers[0].ratios()


@pytest.mark.parametrize("statements, expected", [
    # empty answer: an abstention, never 100 % support
    ([], {N.SUPPORT: "n/a (abstention: the answer makes no claim)", N.COVERAGE: "0/2 (0.0 %)",
          N.ABSTENTION: "1/1 (100.0 %)", N.CITATION_PRECISION: "n/a (no citations)"}),
    # only an abstention statement and a heading: still no claims
    ([{"text": "The sources do not say.", "kind": "abstention"}, {"text": "Returns", "kind": "other"}],
     {N.SUPPORT: "n/a (abstention: the answer makes no claim)", N.CITATION_PRESENCE: "n/a (abstention: the answer makes no claim)"}),
    # a claim without citation scores 0 support and counts in presence
    ([{"text": "x", "facts": ["f1"]}], {N.SUPPORT: "0/1 (0.0 %)", N.CITATION_PRESENCE: "0/1 (0.0 %)",
                                       N.CITATION_RECALL: "0/1 (0.0 %)", N.COVERAGE: "0/2 (0.0 %)"}),
    # other statements are out of every denominator
    ([{"text": "Hello!", "kind": "other"}, {"text": "x", "citations": ["S1"], "facts": ["f1"]}],
     {N.SUPPORT: "1/1 (100.0 %)", N.CITATION_RECALL: "1/1 (100.0 %)", N.COVERAGE: "1/2 (50.0 %)"}),
    # explicit claims inherit the statement's citations unless given their own
    ([{"text": "x and y", "citations": ["S1", "S2"], "claims": [
        {"text": "x", "facts": ["f1"]}, {"text": "y", "citations": ["S3"], "facts": ["f2"]}]}],
     {N.SUPPORT: "1/2 (50.0 %)", N.COVERAGE: "1/2 (50.0 %)"}),
])
def test_answer_ratios(statements, expected):
    got = ratios(make_case(statements, facts=FACTS))
    assert {k: str(got[k]) for k in expected} == expected


def test_zero_required_facts_is_undefined_coverage():
    assert str(ratios(make_case([{"text": "x", "citations": ["S1"]}]))[N.COVERAGE]) == "n/a (no required facts)"


def test_alce_zero_precision_convention_changes_value_and_signature():
    case = make_case([{"text": "x"}])
    default, alce = score(case), score(case, no_citation_precision="zero")
    assert default.answers[0].ratios()[N.CITATION_PRECISION].value is None
    assert alce.answers[0].ratios()[N.CITATION_PRECISION].value == 0.0
    assert "nocite:n/a" in default.signature(N.CITATION_PRECISION)
    assert "nocite:0" in alce.signature(N.CITATION_PRECISION)
    # ALCE's per-answer mean counts the 0 under its convention, and skips the answer by default
    assert alce.summary()[N.ALCE_CITATION_PRECISION].denominator == 1
    assert default.summary()[N.ALCE_CITATION_PRECISION].denominator == 0


def test_sum_and_per_answer_mean_are_named_apart():
    case = make_case([{"text": "x", "citations": ["S1"]}], answers_extra=[
        {"id": "b", "statements": [{"text": "y", "citations": ["S1"]}, {"text": "x", "citations": ["S1"]},
                                   {"text": "y", "citations": ["S3"]}, {"text": "y", "citations": ["S1"]}]}])
    summary = score(case).summary()
    assert summary[N.CITATION_RECALL].counts() == "2/5"  # summed statements
    assert summary[N.ALCE_CITATION_RECALL].value == pytest.approx((1 + 1 / 4) / 2)  # mean of answers


def test_retrieval_needs_a_ranking_and_gold():
    rep = score(make_case([], facts=FACTS), ks=(1, 2))
    assert str(rep.retrieval["t"]["recall@1"]) == "n/a (no ranking given)"
    rep = score(make_case([], facts=FACTS, ranking=["S2", "S3", "S1"], gold_documents=["S1", "S2"]), ks=(1, 2, 3))
    got = {k: v.counts() for k, v in rep.retrieval["t"].items()}
    assert got == {"recall@1": "1/2", "facts@1": "1/2", "recall@2": "1/2", "facts@2": "1/2",
                   "recall@3": "2/2", "facts@3": "2/2"}


def test_ratio_arithmetic_and_display():
    assert str(Ratio(1, 3)) == "1/3 (33.3 %)"
    assert str(Ratio(0, 0, "no claims")) == "n/a (no claims)"
    assert (Ratio(1, 2) + Ratio(2, 3)).counts() == "3/5"
    with pytest.raises(ValueError):
        Ratio(1, 2) + Ratio(1, 2, kind="mean")


# ------------------------------------------------------------------------------------------
# ALCE's precision rule, checked against an independent reading of the algorithm (Gao et al. 2023
# §3.3): joint support first; with one citation the credit is the joint verdict; with several, a
# citation is credited unless it fails alone AND the rest still support the sentence.

def alce_reference(sentences, supports) -> tuple[int, int, int]:
    """(supported sentences, credited citations, citations) for [(text, [ids])]."""
    entail = credited = total = 0
    for text, ids in sentences:
        total += len(ids)
        joint = bool(ids) and supports(text, set(ids))
        entail += joint
        if joint and len(ids) > 1:
            for pid in ids:
                if supports(text, {pid}) or not supports(text, set(ids) - {pid}):
                    credited += 1
        else:
            credited += joint
    return entail, credited, total


PASSAGES = ["S1", "S2", "S3", "S4"]
sentence = st.tuples(st.sampled_from(["a", "b", "c"]),
                     st.lists(st.sampled_from(PASSAGES), max_size=4, unique=True))
support_sets = st.dictionaries(st.sampled_from(["a", "b", "c"]),
                               st.lists(st.sets(st.sampled_from(PASSAGES), min_size=1, max_size=3), max_size=3))


@settings(max_examples=150, deadline=None)
@given(st.lists(sentence, min_size=1, max_size=6), support_sets)
def test_precision_and_recall_match_the_alce_rule(sentences, supports):
    judge = SetJudge(supports)
    case = make_case([{"text": t, "citations": ids} for t, ids in sentences], sources=PASSAGES)
    got = ratios(case, judge)
    entail, credited, total = alce_reference(sentences, lambda t, ids: judge.judge(t, [_P(i) for i in ids]).supports)
    assert (got[N.CITATION_RECALL].numerator, got[N.CITATION_RECALL].denominator) == (entail, len(sentences))
    assert (got[N.CITATION_PRECISION].numerator, got[N.CITATION_PRECISION].denominator) == (credited, total)


class _P:
    def __init__(self, pid):
        self.id = pid
