"""The `openai:MODEL` judge against a local stub server: labels, evidence, retries, failures that never
turn into a guessed label, budgets, concurrency, signatures and offline replay through the store."""

from __future__ import annotations

import socket
import time

import pytest

from citeaudit.cli import main
from citeaudit.errors import JudgeError, JudgeSetupError
from citeaudit.examples import load_example
from citeaudit.judges import Judgments, JudgmentStore, Request, judgment_key
from citeaudit.judges import remote
from citeaudit.judges.remote import (
    PROMPTS, BatchJudgeError, OpenAIJudge, Prompt, locate_quote,
)
from citeaudit.metrics import plan_requests, score_cases
from citeaudit.records import Evidence, SourcePassage
from citeaudit.report.render import to_json

from citeaudit.testing import OpenAIStub

S1 = "Standard items can be returned up to 30 days after delivery."
S2 = "Clearance items are final sale and cannot be returned."
STANDARD = "Standard items can be returned within 30 days of delivery."


def passage(pid: str, text: str) -> SourcePassage:
    return SourcePassage(pid, f"doc-{pid}", "v1", text, 0, len(text))


P1, P2 = passage("S1", S1), passage("S2", S2)


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch):
    # Nothing here may reach a real endpoint or send a real key.
    for name in ("CITEAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY", "CITEAUDIT_OPENAI_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def make(stub: OpenAIStub, **options) -> OpenAIJudge:
    settings = dict(base_url=stub.url, timeout=2, max_retries=2, backoff_base=0.001, backoff_max=0.01)
    settings.update(options)
    return OpenAIJudge("stub-model", **settings)


# --- labels and evidence --------------------------------------------------------------------------


def test_labels_evidence_offsets_and_the_request_sent(stub):
    judge = make(stub)
    full = judge.judge(STANDARD, [P1])
    assert full.label == "full" and full.judge == judge.signature
    assert full.evidence == Evidence(passage="S1", start=9, end=30)
    assert S1[9:30] == "items can be returned"
    assert full.explanation == "stub rule gave full."
    assert judge.judge("This claim is partly about returns.", [P1]).label == "partial"
    assert judge.judge("Returns contradict the policy.", [P2, P1]).label == "contradicts"
    silent = judge.judge("An unrelated claim.", [P1])
    assert silent.label == "none" and silent.evidence is None and "dropped" not in silent.explanation

    body = stub.bodies[0]
    assert body["model"] == "stub-model" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["content"] == PROMPTS["1"].system
    assert f'<passage id="S1">\n{S1}\n</passage>' in body["messages"][1]["content"]
    assert "Authorization" not in stub.headers[0]  # a local server needs no key
    # Passages are presented sorted by id, whatever the citation order.
    user = stub.bodies[2]["messages"][1]["content"]
    assert user.index('id="S1"') < user.index('id="S2"')
    assert stub.count == 4 and judge.requests_sent == 4 and judge.tokens_used == 2000


def test_raw_responses_are_kept_under_the_judgment_key(stub):
    judge = make(stub)
    judge.judge(STANDARD, [P1])
    key = judgment_key(Request.of(STANDARD, [P1]), judge.signature)
    raw = judge.responses[key]
    assert raw["model"] == "stub-model" and '"label": "full"' in raw["choices"][0]["message"]["content"]


def test_quote_not_in_the_passage_keeps_the_label_and_drops_the_evidence(stub):
    judge = make(stub)
    stub.push(("answer", {"label": "full", "evidence": {"passage": "S1", "quote": "within 90 days"},
                          "explanation": "It says so."}))
    j = judge.judge(STANDARD, [P1])
    assert j.label == "full" and j.evidence is None
    assert j.explanation.startswith("It says so.") and "quote not found in passage S1" in j.explanation
    stub.push(("answer", {"label": "partial", "evidence": {"passage": "S9", "quote": "30 days"},
                          "explanation": "Close."}))
    j = judge.judge(STANDARD, [P1])
    assert j.label == "partial" and j.evidence is None and "'S9', which was not given" in j.explanation


def test_quote_matching_tolerates_whitespace_and_code_fences(stub):
    assert locate_quote("a  b\nc d", "b c") == (3, 6)
    assert locate_quote("abc", "zzz") is None and locate_quote("abc", "  ") is None
    judge = make(stub)
    stub.push(("answer", {"label": "full", "evidence": {"passage": "S1", "quote": " up  to 30\ndays "},
                          "explanation": "x"}), "fenced")
    assert judge.judge(STANDARD, [P1]).evidence == Evidence(passage="S1", start=31, end=44)
    assert S1[31:44] == "up to 30 days"
    assert judge.judge(STANDARD, [P1]).label == "full"


# --- retries --------------------------------------------------------------------------------------


def test_retries_429_500_and_timeouts_then_succeeds(stub):
    sleeps: list[float] = []
    judge = make(stub, timeout=0.3, max_retries=3, sleep=sleeps.append)
    stub.push(("429", 0), "500", "timeout")
    started = time.monotonic()
    assert judge.judge(STANDARD, [P1]).label == "full"
    assert stub.count == 4 and judge.requests_sent == 4
    assert sleeps[0] == 0  # Retry-After: 0
    assert all(0 < s <= 0.01 for s in sleeps[1:]) and len(sleeps) == 3  # backoff with jitter, capped
    assert time.monotonic() - started < 1.5


def test_retry_after_is_honoured_and_capped(stub):
    sleeps: list[float] = []
    judge = make(stub, sleep=sleeps.append, retry_after_max=5)
    stub.push(("429", 1), ("429", 120))
    assert judge.judge(STANDARD, [P1]).label == "full"
    assert sleeps == [1.0, 5.0] and stub.count == 3


def test_retry_after_really_waits(stub):
    judge = make(stub)
    stub.push(("429", 1))
    started = time.monotonic()
    judge.judge(STANDARD, [P1])
    assert 0.9 <= time.monotonic() - started < 3 and stub.count == 2


def test_gives_up_after_max_retries(stub):
    judge = make(stub, max_retries=2)
    stub.push("500", "500", "500", "ok")
    with pytest.raises(JudgeError, match=r"HTTP 500.*gave up after 3 attempts") as err:
        judge.judge(STANDARD, [P1])
    assert STANDARD in str(err.value) and stub.count == 3


def test_connection_refused_is_retried_then_an_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_base=0.001)
    with pytest.raises(JudgeError, match="connection to 127.0.0.1.* failed.*gave up after 2 attempts"):
        judge.judge(STANDARD, [P1])
    assert judge.requests_sent == 2


# --- failures are errors, never labels ------------------------------------------------------------


@pytest.mark.parametrize("behaviour, problem", [
    ("malformed", "not valid JSON"),
    ("wrong_label", "label: Input should be 'full', 'partial', 'none' or 'contradicts'"),
    ("missing_fields", "evidence: Field required"),
    (("content", "Yes, it is supported."), "not valid JSON"),
    (("content", '["full"]'), "not a JSON object"),
    (("answer", {"label": "full", "evidence": None, "explanation": ""}), "explanation: String should have"),
])
def test_malformed_answers_are_retried_then_an_error(stub, behaviour, problem):
    judge = make(stub, max_retries=1)
    stub.push(behaviour, behaviour)
    with pytest.raises(JudgeError) as err:
        judge.judge(STANDARD, [P1])
    message = str(err.value)
    assert problem in message and repr(STANDARD) in message and "gave up after 2 attempts" in message
    assert stub.count == 2 and not judge.responses


def test_a_malformed_answer_then_a_good_one_succeeds(stub):
    judge = make(stub, max_retries=1)
    stub.push("wrong_label")
    assert judge.judge(STANDARD, [P1]).label == "full" and stub.count == 2


@pytest.mark.parametrize("status, text", [("401", "Incorrect API key"), ("404", "model not found"),
                                          ("400", "bad request")])
def test_client_errors_fail_at_once_with_status_and_body(stub, status, text):
    judge = make(stub, max_retries=3)
    stub.push(status)
    with pytest.raises(JudgeError, match=rf"HTTP {status} from .*{text}"):
        judge.judge(STANDARD, [P1])
    assert stub.count == 1


def test_401_stops_the_rest_of_a_batch_without_sending(stub):
    judge = make(stub, concurrency=1)
    stub.push("401")
    with pytest.raises(BatchJudgeError) as err:
        judge.judge_batch([Request.of(f"claim {i}", [P1]) for i in range(5)])
    assert stub.count == 1 and len(err.value.failures) == 5
    assert "not sent: an earlier request failed with HTTP 401" in str(err.value)


def test_a_hosted_endpoint_needs_a_key_but_replay_does_not():
    judge = OpenAIJudge("gpt-x", base_url="https://api.example.com/v1")
    assert judge.signature.endswith("|base=api.example.com")  # building it needs no key
    with pytest.raises(JudgeError, match="no API key for api.example.com: set CITEAUDIT_OPENAI_API_KEY"):
        judge.judge(STANDARD, [P1])
    assert judge.requests_sent == 0


def test_the_key_is_sent_as_a_bearer_token(stub, monkeypatch):
    monkeypatch.setenv("CITEAUDIT_OPENAI_API_KEY", "sk-test")
    make(stub).judge(STANDARD, [P1])
    assert stub.headers[0]["Authorization"] == "Bearer sk-test"


# --- batches, concurrency and budgets -------------------------------------------------------------


def test_batch_keeps_order_and_respects_the_concurrency_limit():
    with OpenAIStub(delay=0.05) as stub:
        judge = make(stub, concurrency=3)
        requests = [Request.of(t, [P1]) for t in [STANDARD, "unrelated one", "partly so", STANDARD + " Yes."] * 3]
        labels = [j.label for j in judge.judge_batch(requests)]
        assert labels == ["full", "none", "partial", "full"] * 3
        assert stub.count == 12 and 2 <= stub.max_in_flight <= 3


def test_a_failed_pair_does_not_lose_the_others(stub):
    judge = make(stub, concurrency=1, max_retries=0)
    stub.push("ok", "wrong_label", "ok")
    requests = [Request.of(f"claim {i} about standard items returned delivery", [P1]) for i in range(3)]
    with pytest.raises(BatchJudgeError, match="1 of 3 pairs could not be judged") as err:
        judge.judge_batch(requests)
    got = err.value.judgments
    assert got[0].label == "full" and got[1] is None and got[2].label == "full"
    assert [(i, r) for i, r, _ in err.value.failures] == [(1, requests[1])]


def test_request_budget_stops_further_requests(stub):
    judge = make(stub, concurrency=1, max_requests=3)
    with pytest.raises(BatchJudgeError) as err:
        judge.judge_batch([Request.of(f"claim {i}", [P1]) for i in range(5)])
    assert stub.count == 3 and sum(j is not None for j in err.value.judgments) == 3
    assert "budget exhausted: 3 requests sent, max_requests is 3" in str(err.value)
    with pytest.raises(JudgeError, match="budget exhausted"):
        judge.judge(STANDARD, [P1])
    assert stub.count == 3


def test_retries_count_against_the_request_budget(stub):
    judge = make(stub, max_requests=2, max_retries=5)
    stub.push("500", "500", "500")
    with pytest.raises(JudgeError, match="budget exhausted"):
        judge.judge(STANDARD, [P1])
    assert stub.count == 2


def test_cost_budget_uses_the_reported_usage(stub):
    judge = make(stub, max_cost=1.0, price_per_1k_tokens=1.0)  # 500 tokens a response: 0.5 each
    judge.judge(STANDARD, [P1])
    judge.judge(STANDARD, [P2])
    with pytest.raises(JudgeError, match=r"budget exhausted: cost 1.0000 \(1000 tokens\) reached max_cost 1.0"):
        judge.judge("third", [P1])
    assert stub.count == 2 and judge.cost == 1.0


def test_responses_without_usage_are_counted_as_unpriced(stub):
    judge = make(stub)
    stub.push("no_usage")
    judge.judge(STANDARD, [P1])
    assert judge.unpriced_responses == 1 and judge.tokens_used == 0


def test_bad_configuration_is_refused():
    with pytest.raises(JudgeSetupError, match="price_per_1k_tokens"):
        OpenAIJudge("m", base_url="http://localhost:1/v1", max_cost=1)
    with pytest.raises(JudgeSetupError, match="unknown prompt version '9'"):
        OpenAIJudge("m", base_url="http://localhost:1/v1", prompt_version="9")
    with pytest.raises(JudgeSetupError, match="model name"):
        OpenAIJudge("", base_url="http://localhost:1/v1")
    with pytest.raises(JudgeSetupError, match="not an http"):
        OpenAIJudge("m", base_url="localhost:8000")


# --- signature ------------------------------------------------------------------------------------


def test_signature_names_model_prompt_and_host(monkeypatch):
    base = "http://localhost:8000/v1"
    a = OpenAIJudge("model-a", base_url=base)
    digest = PROMPTS["1"].digest[:12]
    assert a.signature == f"openai:model-a@1#{digest}|base=localhost:8000"
    assert OpenAIJudge("model-b", base_url=base).signature != a.signature
    assert OpenAIJudge("model-a", base_url="http://127.0.0.1:8000/v1").signature != a.signature
    assert OpenAIJudge("model-a", base_url=base + "/").signature == a.signature
    monkeypatch.setitem(PROMPTS, "2", PROMPTS["1"])
    assert OpenAIJudge("model-a", base_url=base, prompt_version="2").signature != a.signature
    monkeypatch.setitem(PROMPTS, "1", Prompt(PROMPTS["1"].system + " Be brief.", PROMPTS["1"].user))
    assert OpenAIJudge("model-a", base_url=base).signature != a.signature  # same version, edited text


def test_base_url_and_options_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://fallback:1/v1")
    assert OpenAIJudge("m").host == "fallback:1"
    monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", "http://preferred:2/v1")
    monkeypatch.setenv("CITEAUDIT_OPENAI_CONCURRENCY", "7")
    monkeypatch.setenv("CITEAUDIT_OPENAI_MAX_REQUESTS", "11")
    monkeypatch.setenv("CITEAUDIT_OPENAI_TIMEOUT", "4.5")
    judge = remote.judge_from_env("llama3.1:8b")
    assert (judge.host, judge.concurrency, judge.max_requests, judge.timeout) == ("preferred:2", 7, 11, 4.5)
    assert judge.signature.startswith("openai:llama3.1:8b@1#")
    monkeypatch.setenv("CITEAUDIT_OPENAI_CONCURRENCY", "many")
    with pytest.raises(JudgeSetupError, match="CITEAUDIT_OPENAI_CONCURRENCY: expected a positive integer, got 'many'"):
        remote.judge_from_env("m")
    monkeypatch.setenv("CITEAUDIT_OPENAI_CONCURRENCY", "0")
    with pytest.raises(JudgeSetupError, match="CITEAUDIT_OPENAI_CONCURRENCY: expected a positive integer, got '0'"):
        remote.judge_from_env("m")
    monkeypatch.setenv("CITEAUDIT_OPENAI_CONCURRENCY", "")  # empty: unset, the default
    assert remote.judge_from_env("m").concurrency == 4
    monkeypatch.delenv("CITEAUDIT_OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("CITEAUDIT_OPENAI_CONCURRENCY")
    assert remote.judge_from_env("m").host == "api.openai.com"


# --- the store: a rerun replays, offline ----------------------------------------------------------


def test_a_rerun_with_the_store_sends_nothing_and_scores_the_same(stub, tmp_path):
    cases = load_example("returns_desk.json")
    store = JudgmentStore(tmp_path / "j.db")
    first = Judgments(make(stub), store)
    report_a = score_cases(cases, first)
    sent = stub.count
    assert sent > 0 and sent == first.asked == len(store)
    labels = {j.label for _, j in first.recorded()}
    assert {"full", "none"} <= labels

    again = Judgments(make(stub), JudgmentStore(tmp_path / "j.db"))
    report_b = score_cases(cases, again)
    assert stub.count == sent and again.asked == 0
    assert to_json(report_b) == to_json(report_a)


def test_fill_with_judge_batch_then_score_from_the_store(stub, tmp_path):
    cases = load_example("returns_desk.json")
    judgments = Judgments(make(stub, concurrency=4), JudgmentStore(tmp_path / "j.db"))
    requests = plan_requests(cases)
    assert judgments.fill(requests) == len(requests) == stub.count
    score_cases(cases, Judgments(make(stub), JudgmentStore(tmp_path / "j.db")))
    assert stub.count == len(requests)


def test_cli_score_twice_with_a_store_sends_nothing_the_second_time(stub, tmp_path, runner, monkeypatch):
    monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
    result = runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    assert result.exit_code == 0, result.output
    args = ["score", str(tmp_path / "cases" / "returns_desk.json"), "--judge", "openai:stub-model",
            "--store", str(tmp_path / "j.db"), "--format", "json"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    sent = stub.count
    assert sent > 0
    second = runner.invoke(main, args)
    assert second.exit_code == 0, second.output
    assert stub.count == sent
    assert second.stdout == first.stdout
    replay = runner.invoke(main, [*args, "--replay"])
    assert replay.exit_code == 0 and stub.count == sent


def test_cli_judge_error_exits_3(stub, tmp_path, runner, monkeypatch):
    monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
    runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    stub.push("401")
    result = runner.invoke(main, ["score", str(tmp_path / "cases" / "returns_desk.json"),
                                  "--judge", "openai:stub-model"])
    # score judges in concurrent batches (concurrency 4): the requests in flight when the 401
    # arrives, and at most one more per other worker that finished before the abort was set,
    # go out; the rest of the 18 pairs are never sent.
    assert result.exit_code == 3 and "HTTP 401" in result.output and 1 <= stub.count <= 2 * 4
    assert "openai" in runner.invoke(main, ["judges"]).output


def test_the_docs_show_the_current_prompt_and_its_digest():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "remote-judges.md").read_text(encoding="utf-8")
    prompt = PROMPTS[remote.PROMPT_VERSION]
    assert prompt.system in doc and prompt.user in doc and f"#{prompt.digest[:12]}|" in doc
