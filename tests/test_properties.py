"""Invariants that must hold for any input (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.judges import Judgments
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N

from helpers import SetJudge, load, make_case

PASSAGES = ["S1", "S2", "S3", "S4"]
TEXTS = ["a", "b", "c", "d"]
FACTS = [{"id": f"f{i}", "text": f"fact {i}", "passages": [p]} for i, p in enumerate(PASSAGES)]

statement = st.fixed_dictionaries({
    "text": st.sampled_from(TEXTS),
    "citations": st.lists(st.sampled_from(PASSAGES), max_size=4, unique=True),
    "kind": st.sampled_from(["claim", "claim", "claim", "abstention", "other"]),
    "facts": st.lists(st.sampled_from([f["id"] for f in FACTS]), max_size=2, unique=True),
})
answers = st.lists(st.lists(statement, max_size=5), min_size=1, max_size=4)
supports = st.dictionaries(st.sampled_from(TEXTS),
                           st.lists(st.sets(st.sampled_from(PASSAGES), min_size=1, max_size=2), max_size=3))


def _clean(st_: dict) -> dict:
    return st_ if st_["kind"] == "claim" else {"text": st_["text"], "kind": st_["kind"]}


def build(answer_list, facts=FACTS) -> dict:
    case = make_case([], sources=PASSAGES, facts=facts, ranking=PASSAGES[::-1], gold_documents=PASSAGES[:2])
    case["answers"] = [{"id": f"a{i}", "statements": [_clean(s) for s in sts]} for i, sts in enumerate(answer_list)]
    return case


def report(case, sup, **kw):
    return score_cases(load(case), Judgments(SetJudge(sup)), Settings(ks=(1, 2, 4), **kw))


def all_values(rep):
    for r in rep.answers:
        yield from r.ratios().values()
    yield from rep.summary().values()
    yield from rep.retrieval_summary().values()


@settings(max_examples=120, deadline=None)
@given(answers, supports, st.sampled_from(["n/a", "zero"]))
def test_every_ratio_is_in_unit_interval_or_undefined(answer_list, sup, convention):
    for ratio in all_values(report(build(answer_list), sup, no_citation_precision=convention)):
        assert ratio.value is None or 0.0 <= ratio.value <= 1.0
        assert ratio.value is not None or ratio.reason


def _summary_values(rep):
    return {k: (v.numerator, v.denominator) for k, v in rep.summary().items()}


@settings(max_examples=80, deadline=None)
@given(answers, supports, st.randoms(use_true_random=False))
def test_order_of_answers_and_of_citations_does_not_matter(answer_list, sup, rnd: random.Random):
    base = report(build(answer_list), sup)
    shuffled = [[{**s, "citations": rnd.sample(s["citations"], len(s["citations"]))} for s in sts]
                for sts in answer_list]
    rnd.shuffle(shuffled)
    other = report(build(shuffled), sup)
    assert _summary_values(base).keys() == _summary_values(other).keys()
    for k, (num, den) in _summary_values(base).items():
        o_num, o_den = _summary_values(other)[k]
        assert abs(num - o_num) < 1e-9 and den == o_den, k


@settings(max_examples=80, deadline=None)
@given(st.lists(statement, max_size=5), supports, st.sampled_from(TEXTS), st.sampled_from(PASSAGES),
       st.sampled_from([f["id"] for f in FACTS]))
def test_adding_a_supported_claim_never_lowers_coverage(sts, sup, text, passage, fact):
    sup = {**sup, text: [*sup.get(text, []), {passage}]}
    before = report(build([sts]), sup).answers[0].ratios()[N.COVERAGE]
    extra = {"text": text, "citations": [passage], "kind": "claim", "facts": [fact]}
    after = report(build([[*sts, extra]]), sup).answers[0].ratios()[N.COVERAGE]
    assert after.numerator >= before.numerator and after.denominator == before.denominator


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["abstention", "other"]), max_size=4), supports)
def test_an_answer_without_claims_never_scores_full_support(kinds, sup):
    case = build([[{"text": "t", "kind": k} for k in kinds]])
    r = report(case, sup).answers[0]
    assert r.abstained
    assert r.ratios()[N.SUPPORT].value is None
    assert r.ratios()[N.COVERAGE].value == 0.0
