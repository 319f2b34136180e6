"""The openai:MODEL claim splitter: checked splits, fallback to the rule splitter, recorded and replayed."""

from __future__ import annotations

import json

import pytest

from citeaudit.errors import JudgeSetupError, MissingDecomposition
from citeaudit.judges import JudgmentStore
from citeaudit.parse import RuleDecomposer, claim_splitter_signature, parse_answer
from citeaudit.parse.lm_decompose import (OpenAIDecomposer, check_split, decomposition_key, make_decomposer,
                                          parse_claims)
from citeaudit.testing import OpenAIStub

STATEMENT = "The continuous limit is 80 °C unless Eco mode is on, and Eco mode saves 15 % energy."
GOOD = ["The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves 15 % energy."]
SPLIT = [c.rstrip(".") for c in GOOD]  # what the decomposer returns: claims end without a period


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch):
    for name in ("CITEAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY", "CITEAUDIT_OPENAI_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub():
    with OpenAIStub(answer=lambda claim, passages: {}) as server:  # every answer is scripted
        yield server


def claims(*texts: str) -> tuple[str, str]:
    return ("content", json.dumps({"claims": list(texts)}))


def make(stub: OpenAIStub, **options) -> OpenAIDecomposer:
    settings = dict(base_url=stub.url, timeout=2, max_retries=1, backoff_base=0.001, backoff_max=0.01)
    settings.update(options)
    return OpenAIDecomposer("stub-model", **settings)


# --- checking a split ---------------------------------------------------------------------------


@pytest.mark.parametrize(("proposed", "problem"), [
    (GOOD, None),
    (["The continuous limit is 80 °C.", "Eco mode saves 15 % energy."], "drops condition word unless"),
    (["The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves energy."], "drops number 15; drops unit %"),
    (["The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves 15 % energy per year."],
     "adds condition word per"),
    (["The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves 15 % energy in 12 months."],
     "adds number 12; adds unit months"),
    (["The continuous limit is 80 °C unless Eco mode is on.", "Eco mode does not save 15 % energy."],
     "adds condition word not"),
    (["The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves 20 % energy."],
     "drops number 15; adds number 20"),
    (["The continuous limit set by Bosch is 80 °C unless Eco mode is on.", "Eco mode saves 15 % energy."],
     "adds name bosch"),
    ([], "no claims"),
])
def test_a_split_keeps_every_number_unit_and_condition_and_adds_none(proposed, problem):
    assert check_split(STATEMENT, proposed) == problem


def test_negations_and_thousands_separators_are_compared_by_meaning():
    statement = "Returns aren't accepted after 1,000 days and refunds take 5 days."
    assert check_split(statement, ["Returns are not accepted after 1000 days.", "Refunds take 5 days."]) is None
    assert check_split(statement, ["Returns are accepted after 1000 days.", "Refunds take 5 days."]) == \
        "drops condition word not"


@pytest.mark.parametrize("unit", ["acres", "hectares", "decades", "mph", "ml", "bytes", "‰"])
def test_unit_words_the_guard_does_not_read_are_units_of_a_split(unit):
    statement = "The site covers 40 km."
    assert check_split(statement, [f"The site covers 40 {unit}."]) == f"drops unit km; adds unit {unit}"


def test_a_unit_written_another_way_is_the_same_unit_and_shown_as_written():
    statement = "Eco mode saves 15 % energy within 30 days."
    assert check_split(statement, ["Eco mode saves 15 percent energy within 30 days."]) is None
    assert check_split(statement, ["Eco mode saves 15 % energy within 30 hrs."]) == "drops unit days; adds unit hrs"


def test_a_split_reads_digits_and_grammatical_negations_only():
    # number words and words that deny by meaning ("lacks") are the guard's reading, not a split's
    assert check_split("The kit has three parts.", ["The kit has 3 parts."]) == "adds number 3"
    assert check_split("The kit lacks a charger.", ["The kit lacks a charger and has no cable."]) == \
        "adds condition word no"
    assert check_split("It doesn’t ship.", ["It does not ship."]) is None


def test_chinese_conditions_and_numbers_are_checked():
    statement = "除非包装未拆封，否则不予退货；退款在5天内到账。"
    assert check_split(statement, ["除非包装未拆封，否则不予退货。", "退款在5天内到账。"]) is None
    assert "drops number 5" in check_split(statement, ["除非包装未拆封，否则不予退货。", "退款很快到账。"])


@pytest.mark.parametrize("content", ['{"claims": "one"}', '{"claims": ["a", ""]}', "[1, 2]", "not json"])
def test_an_answer_that_is_not_a_list_of_claims_is_malformed(content):
    from citeaudit.errors import MalformedAnswer

    with pytest.raises(MalformedAnswer):
        parse_claims({"choices": [{"message": {"content": content}}]})


# --- asking the model ---------------------------------------------------------------------------


def test_a_valid_split_is_used_with_its_claims_placed_in_the_statement(stub):
    stub.push(claims(*GOOD))
    splitter = make(stub)
    statements = parse_answer(STATEMENT.replace("energy.", "energy [2].").replace("°C ", "°C [1] "),
                              ["1", "2"], decomposer=splitter)
    got = [(c.text, c.citations) for c in statements[0].claims]
    assert got == [("The continuous limit is 80 °C unless Eco mode is on", ["1"]),
                   ("Eco mode saves 15 % energy", ["2"])]
    assert [c.offsets is not None for c in statements[0].claims] == [True, True]
    body = stub.bodies[0]
    assert body["model"] == "stub-model" and body["temperature"] == 0
    assert STATEMENT.replace("energy.", "energy.") in body["messages"][1]["content"]
    assert splitter.fallbacks == [] and splitter.asked == 1


def test_a_rephrased_claim_keeps_the_statements_citations(stub):
    stub.push(claims("The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves 15 % of energy."))
    text = "The continuous limit is 80 °C unless Eco mode is on, and Eco mode saves 15 % energy [1]."
    [statement] = parse_answer(text, ["1"], decomposer=make(stub))
    assert [c.text for c in statement.claims] == ["The continuous limit is 80 °C unless Eco mode is on",
                                                  "Eco mode saves 15 % of energy"]
    assert [c.offsets is None for c in statement.claims] == [False, True]  # the second is not in the text
    assert [c.citations for c in statement.claims] == [None, None]  # both inherit [1]
    assert statement.citations == ["1"]


def test_an_invented_number_is_rejected_and_the_rule_splitter_takes_over(stub):
    stub.push(claims("The continuous limit is 80 °C unless Eco mode is on.", "Eco mode saves 20 % energy."))
    splitter = make(stub)
    assert splitter.decompose(STATEMENT, "en") == RuleDecomposer().decompose(STATEMENT, "en")
    assert [f.reason for f in splitter.fallbacks] == ["split rejected: drops number 15; adds number 20"]


def test_an_http_error_falls_back_after_the_retries(stub):
    stub.push("500", "500")
    splitter = make(stub, max_retries=1)
    assert splitter.decompose(STATEMENT, "en") == RuleDecomposer().decompose(STATEMENT, "en")
    assert stub.count == 2
    [fallback] = splitter.fallbacks
    assert fallback.reason.startswith("request failed: openai claim splitter (stub-model at 127.0.0.1:")
    assert "HTTP 500" in fallback.reason and "gave up after 2 attempts" in fallback.reason


def test_a_refused_request_is_not_retried_and_falls_back(stub):
    stub.push("401")
    splitter = make(stub, max_retries=3)
    splitter.decompose(STATEMENT, "en")
    assert stub.count == 1 and "HTTP 401" in splitter.fallbacks[0].reason


def test_a_malformed_answer_is_retried(stub):
    stub.push(("content", "sure! here are the claims"), claims(*GOOD))
    splitter = make(stub)
    assert splitter.decompose(STATEMENT, "en") == SPLIT
    assert stub.count == 2


# --- recording and replaying --------------------------------------------------------------------


def test_splits_are_recorded_and_replayed_offline(tmp_path):
    path = tmp_path / "store.sqlite"
    with OpenAIStub(answer=lambda c, p: {}) as stub:
        stub.push(claims(*GOOD), claims("The continuous limit is 80 °C.", "Eco mode saves 15 % energy."))
        url = stub.url
        first = make(stub, store=JudgmentStore(path))
        other = "The continuous limit is 80 °C and Eco mode saves 15 % energy."
        assert first.decompose(STATEMENT, "en") == SPLIT
        assert first.decompose(other, "en") == ["The continuous limit is 80 °C", "Eco mode saves 15 % energy"]
        assert first.decompose(STATEMENT, "en") == SPLIT  # the store answers: no third request
        assert stub.count == 2
    # The server is gone: replay gives the same claims without a request.
    again = OpenAIDecomposer("stub-model", base_url=url, store=JudgmentStore(path), replay=True)
    assert again.decompose(STATEMENT, "en") == SPLIT
    assert again.decompose(other, "en") == ["The continuous limit is 80 °C", "Eco mode saves 15 % energy"]
    assert again.asked == 0
    with pytest.raises(MissingDecomposition, match="no recorded claim split by openai:stub-model@1#"):
        again.decompose("Another statement and another claim.", "en")
    # Another model, or another endpoint, is another splitter: nothing of this one is replayed.
    with pytest.raises(MissingDecomposition):
        OpenAIDecomposer("other-model", base_url=url, store=JudgmentStore(path), replay=True).decompose(STATEMENT, "en")


def test_a_rejected_split_replays_as_a_fallback_and_a_failed_request_is_asked_again(tmp_path):
    path = tmp_path / "store.sqlite"
    with OpenAIStub(answer=lambda c, p: {}) as stub:
        stub.push(claims("The limit is 80 °C.", "Eco mode saves 20 % energy."), "500", claims(*GOOD))
        splitter = make(stub, store=JudgmentStore(path), max_retries=0)
        rejected = "The limit is 80 °C and Eco mode saves 15 % energy."
        splitter.decompose(rejected, "en")
        splitter.decompose(STATEMENT, "en")  # HTTP 500: falls back, recorded as a failed request
        assert len(splitter.fallbacks) == 2
        replayed = OpenAIDecomposer("stub-model", base_url=stub.url, store=JudgmentStore(path), replay=True)
        replayed.decompose(rejected, "en")
        replayed.decompose(STATEMENT, "en")
        assert [f.reason.split(":")[0] for f in replayed.fallbacks] == ["split rejected", "request failed"]
        retried = make(stub, store=JudgmentStore(path))
        assert retried.decompose(rejected, "en") == RuleDecomposer().decompose(rejected, "en")  # not asked again
        assert retried.decompose(STATEMENT, "en") == SPLIT  # the failed request is asked again, and recorded
        assert stub.count == 3
    assert OpenAIDecomposer("stub-model", base_url=stub.url, store=JudgmentStore(path),
                            replay=True).decompose(STATEMENT, "en") == SPLIT


# --- identity -----------------------------------------------------------------------------------


def test_the_signature_names_model_prompt_endpoint_and_fallback(stub):
    splitter = make(stub)
    signature = claim_splitter_signature(splitter)
    assert signature.startswith("openai:stub-model@1#")
    assert signature.endswith(f"|base={stub.url.split('/')[2]}|fallback=rule@1")
    from citeaudit.metrics.signature import Signature, parse_rendered

    rendered = Signature(judge="curated@1", parser="p", claims=signature, version="0").render("support")
    assert parse_rendered(rendered)[1]["claims"] == signature


def test_make_decomposer_reads_specs_and_the_environment(monkeypatch, stub):
    assert isinstance(make_decomposer("rule"), RuleDecomposer)
    assert claim_splitter_signature(make_decomposer("none")) == "none"
    monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("CITEAUDIT_OPENAI_MAX_RETRIES", "0")
    splitter = make_decomposer("openai:stub-model")
    assert splitter.client.base_url == stub.url and splitter.client.max_retries == 0
    with pytest.raises(JudgeSetupError, match="unknown claim splitter 'llm'"):
        make_decomposer("llm")
    with pytest.raises(JudgeSetupError, match="replaying claim splits needs the store"):
        OpenAIDecomposer("m", base_url=stub.url, replay=True)


def test_the_signature_shown_in_the_docs_is_the_real_one():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "parsing.md").read_text(encoding="utf-8")
    assert OpenAIDecomposer("gpt-4o-mini", api_key="unused").signature in docs


def test_a_store_made_before_splits_were_recorded_replays_as_missing(tmp_path):
    import sqlite3

    from citeaudit.judges.store import SCHEMA

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(SCHEMA)  # a judgments table only, as older stores have
    old = JudgmentStore(path, create=False)
    assert old.get_decomposition("any key") is None
    with pytest.raises(MissingDecomposition):
        OpenAIDecomposer("m", base_url="http://127.0.0.1:9/v1", store=old, replay=True).decompose(STATEMENT, "en")


def test_a_statement_is_split_once_per_run_and_its_fallback_listed_once(stub):
    stub.push(claims("The limit is 80 °C.", "Eco mode saves 20 % energy."))
    splitter = make(stub)
    statement = "The limit is 80 °C and Eco mode saves 15 % energy."
    first = splitter.decompose(statement, "en")
    assert splitter.decompose(statement, "en") == first  # a streamed run reads its input twice
    assert stub.count == 1 and splitter.asked == 1 and len(splitter.fallbacks) == 1
    assert splitter.fallback_note() == (
        f"1 statement(s) split by rule@1 instead of {splitter.model_signature} "
        f"(first: '{statement}': split rejected: drops number 15; adds number 20)")
    assert make(stub).fallback_note() is None


def test_the_language_is_recorded_with_the_outcome(stub, tmp_path):
    stub.push(claims(*GOOD))
    store = JudgmentStore(tmp_path / "store.sqlite")
    splitter = make(stub, store=store)
    splitter.decompose(STATEMENT, "en")
    recorded = store.get_decomposition(decomposition_key(STATEMENT, "en", splitter.model_signature))
    assert recorded["lang"] == "en" and recorded["claims"] == GOOD


def test_a_hosted_endpoint_without_a_key_is_refused_unless_replaying(tmp_path):
    with pytest.raises(JudgeSetupError, match=r"openai claim splitter \(gpt-4o-mini at api.openai.com\): no API key"):
        OpenAIDecomposer("gpt-4o-mini")
    OpenAIDecomposer("gpt-4o-mini", store=JudgmentStore(tmp_path / "store.sqlite"), replay=True)
