"""`--claims SPEC` on score, prepare and validate: the openai: claim splitter from the command line, its
splits recorded by prepare and replayed offline by score, its signature in the run's, and `store check`
on the recorded splits."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.parse.lm_decompose import decomposition_key
from citeaudit.run.log import read_runlog
from citeaudit.testing import OpenAIStub

STATEMENT = "Downtime fell by 15% in the pilot, which ran for 30 days."
SPLITS = {STATEMENT: ["Downtime fell by 15% in the pilot.", "The pilot ran for 30 days."]}
CASE = {
    "id": "pilot", "question": "What did the Eco pilot find?",
    "sources": [{"id": "D1", "text": "The continuous operating temperature limit is 80 °C."},
                {"id": "D3", "text": "The pilot observed machines in Eco mode for 30 days. Downtime fell by 15% "
                                     "in the pilot."}],
    "answers": [{"id": "A", "text": f"{STATEMENT[:-1]} [D3]. The limit is 80 °C [D1]."}],
}
STATEMENT_TAG = re.compile(r"<statement>\n(.*?)\n</statement>", re.S)


class SplitServer(OpenAIStub):
    """The stand-in server, also answering the claim splitter: SPLITS, else the statement whole."""

    def __init__(self):
        super().__init__()
        self.statements: list[str] = []

    def _respond(self, body):
        found = STATEMENT_TAG.search(body["messages"][-1]["content"])
        if found is None:
            return super()._respond(body)  # a judge's request
        self.statements.append(found.group(1))
        content = json.dumps({"claims": SPLITS.get(found.group(1), [found.group(1)])})
        reply = {"id": "chatcmpl-split", "object": "chat.completion", "model": body.get("model"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}]}
        return 200, {}, json.dumps(reply).encode()


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch):
    for name in ("CITEAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY", "CITEAUDIT_OPENAI_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CITEAUDIT_OPENAI_MAX_RETRIES", "0")


@pytest.fixture
def server(monkeypatch):
    with SplitServer() as stub:
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
        yield stub


def write_cases(folder: Path, streamed: bool, case: dict = CASE) -> Path:
    path = folder / ("cases.jsonl" if streamed else "case.json")
    path.write_text(json.dumps(case, ensure_ascii=False) + ("\n" if streamed else ""), encoding="utf-8")
    return path


def claims_of(log_path: Path) -> list[list[str]]:
    """Each parsed statement's claim texts (the statement's own text when it was not split)."""
    log = read_runlog(log_path)
    return [[c.text for c in st.claims] if st.claims else [st.text]
            for case in log.cases for answer in case.answers for st in answer.statements]


OPENAI = ["--judge", "openai:stub-model", "--claims", "openai:stub-model"]


@pytest.mark.parametrize("streamed", [False, True], ids=["loaded", "streamed"])
def test_prepare_records_the_splits_and_score_replays_them_with_the_server_gone(runner, server, tmp_path, streamed):
    cases, store = write_cases(tmp_path, streamed), str(tmp_path / "store.sqlite")
    suffix = ".jsonl" if streamed else ".json"
    live = runner.invoke(main, ["score", str(cases), *OPENAI, "--out", str(tmp_path / f"live{suffix}")])
    assert live.exit_code == 0, live.output
    prepared = runner.invoke(main, ["prepare", str(cases), *OPENAI, "--store", store])
    assert prepared.exit_code == 0, prepared.output
    assert STATEMENT in server.statements
    server.close()
    asked = server.count
    replayed = runner.invoke(main, ["score", str(cases), *OPENAI, "--store", store, "--replay",
                                    "--out", str(tmp_path / f"replayed{suffix}")])
    assert replayed.exit_code == 0, replayed.output
    assert server.count == asked  # nothing was sent
    assert claims_of(tmp_path / f"replayed{suffix}") == claims_of(tmp_path / f"live{suffix}") == [
        ["Downtime fell by 15% in the pilot", "The pilot ran for 30 days"], ["The limit is 80 °C."]]
    live_signature = read_runlog(tmp_path / f"live{suffix}").signature
    signature = read_runlog(tmp_path / f"replayed{suffix}").signature
    assert signature == live_signature
    assert signature.claims.startswith("openai:stub-model@1#") and signature.claims.endswith("|fallback=rule@1")
    assert f"|base={server.url.split('/')[2]}|" in signature.claims


def test_the_signature_names_the_splitter_in_every_format(runner, server, tmp_path):
    cases = write_cases(tmp_path, streamed=False)
    text = runner.invoke(main, ["score", str(cases), *OPENAI])
    assert text.exit_code == 0, text.output
    assert "claims:openai:stub-model@1#" in text.output
    lines = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=True)), *OPENAI, "--format", "jsonl"])
    assert lines.exit_code == 0, lines.output
    summary = json.loads(lines.output.splitlines()[-1])["summary"]["all"]
    assert "|claims:openai:stub-model@1#" in summary["support"]["signature"]


def test_without_the_option_nothing_changes(runner, tmp_path):
    cases = write_cases(tmp_path, streamed=False)
    options = ["--missing-labels", "skip", "--format", "json"]
    default = runner.invoke(main, ["score", str(cases), *options])
    rule = runner.invoke(main, ["score", str(cases), *options, "--claims", "rule"])
    assert default.exit_code == rule.exit_code == 0
    assert default.output == rule.output
    assert "|claims:rule@1|" in default.output and "openai" not in default.output
    none = runner.invoke(main, ["score", str(cases), *options, "--claims", "none"])
    assert none.exit_code == 0 and "|claims:none|" in none.output


@pytest.mark.parametrize(("command", "spec", "message"), [
    ("score", "llm", "unknown claim splitter 'llm'; known: rule, none, openai:MODEL"),
    ("prepare", "llm", "unknown claim splitter 'llm'"),
    ("validate", "rules", "unknown claim splitter 'rules'"),
    ("score", "openai:", "needs a model name: openai:MODEL"),
    ("score", "openai:gpt-4o-mini", "no API key"),  # a hosted endpoint and no key: refused before any work
])
def test_a_bad_spec_is_bad_input(runner, tmp_path, command, spec, message):
    args = [command, str(write_cases(tmp_path, streamed=False)), "--claims", spec]
    if command == "prepare":
        args += ["--store", str(tmp_path / "store.sqlite")]
    result = runner.invoke(main, args)
    assert result.exit_code == 2
    assert "Invalid value for '--claims'" in result.output and message in result.output


def test_alce_conventions_split_no_claims(runner, tmp_path):
    result = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=False)), "--conventions", "alce",
                                  "--claims", "none"])
    assert result.exit_code == 2 and "without splitting claims" in result.output


def test_replay_needs_a_store(runner, server, tmp_path):
    result = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=False)), *OPENAI, "--replay"])
    assert result.exit_code == 2 and "--replay needs --store" in result.output


def test_validate_checks_the_spec_and_sends_nothing(runner, server, tmp_path):
    result = runner.invoke(main, ["validate", str(write_cases(tmp_path, streamed=False)),
                                  "--claims", "openai:stub-model"])
    assert result.exit_code == 0 and "ok: 1 case(s), 1 answer(s)" in result.output
    assert server.count == 0


@pytest.mark.parametrize("streamed", [False, True], ids=["loaded", "streamed"])
def test_a_split_missing_from_the_store_stops_a_replay_naming_the_answer(runner, server, tmp_path, streamed):
    store = str(tmp_path / "store.sqlite")
    assert runner.invoke(main, ["prepare", str(write_cases(tmp_path, streamed)), *OPENAI, "--store", store]).exit_code == 0
    edited = {**CASE, "answers": [{"id": "A", "text": "The pilot ran for 31 days and downtime fell [D3]."}]}
    cases = write_cases(tmp_path, streamed, edited)
    result = runner.invoke(main, ["score", str(cases), *OPENAI, "--store", store, "--replay"])
    assert result.exit_code == 3
    assert f"{cases}:1: case 'pilot': answers[0].text: no recorded claim split by openai:stub-model@1#" in result.output
    assert "'The pilot ran for 31 days and downtime fell.'" in result.output


def test_a_rejected_split_is_said_and_the_rule_splitter_takes_over(runner, server, tmp_path, monkeypatch):
    monkeypatch.setitem(SPLITS, "The limit is 80 °C.", ["The limit is 90 °C."])  # a split that changes a number
    result = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=False)), *OPENAI,
                                  "--out", str(tmp_path / "run.json")])
    assert result.exit_code == 0, result.output
    assert "claims: 1 statement(s) split by rule@1 instead of openai:stub-model@1#" in result.output
    assert "split rejected: drops number 80; adds number 90" in result.output
    assert claims_of(tmp_path / "run.json")[1] == ["The limit is 80 °C."]


# --- a splitter that reached no model -----------------------------------------------------------


@pytest.fixture
def nowhere(monkeypatch) -> str:
    """A base URL on this machine where nothing listens: every request fails at once."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", url)
    return url


@pytest.mark.parametrize("command", ["score", "score --out run.jsonl", "score --out run.json", "prepare"])
def test_a_splitter_whose_every_request_failed_is_a_judge_failure(runner, nowhere, tmp_path, command):
    name, *rest = command.split()
    args = [name, str(write_cases(tmp_path, streamed="jsonl" in command)), "--claims", "openai:stub-model",
            *[str(tmp_path / r) if r.startswith("run.") else r for r in rest]]
    if name == "prepare":
        args += ["--store", str(tmp_path / "store.sqlite")]
    result = runner.invoke(main, args)
    assert result.exit_code == 3, result.output
    assert ("openai claim splitter (openai:stub-model@1#b5fdfcc1fd93|base=127.0.0.1:"
            in result.output and "the request failed for every one of the 2 statement(s) to split" in result.output)
    assert "connection to 127.0.0.1:" in result.output  # the first reason
    assert "write --claims openai:stub-model,fallback=rule" in result.output
    assert not list(tmp_path.glob("run.*"))  # stopped before anything was judged or written


def test_the_rule_splitter_splits_every_statement_when_asked_to(runner, nowhere, tmp_path):
    result = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=False)), "--claims",
                                  "openai:stub-model,fallback=rule", "--missing-labels", "skip",
                                  "--out", str(tmp_path / "run.json")])
    assert result.exit_code == 0, result.output
    assert "claims: 2 statement(s) split by rule@1 instead of openai:stub-model@1#" in result.output
    # fallback=rule changes no split: the signature is the splitter's as without it
    assert read_runlog(tmp_path / "run.json").signature.claims.endswith("|fallback=rule@1")


class FlakyServer(SplitServer):
    """Fails the request for one statement (HTTP 500), splits the others."""

    def _respond(self, body):
        if "The limit is 80 °C." in body["messages"][-1]["content"]:
            return 500, {}, b"overloaded"
        return super()._respond(body)


def test_an_occasional_failed_request_still_falls_back_for_that_statement(runner, tmp_path, monkeypatch):
    with FlakyServer() as stub:
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", stub.url)
        result = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=False)), "--claims",
                                      "openai:stub-model", "--missing-labels", "skip",
                                      "--out", str(tmp_path / "run.json")])
    assert result.exit_code == 0, result.output
    assert "claims: 1 statement(s) split by rule@1" in result.output and "HTTP 500" in result.output
    assert claims_of(tmp_path / "run.json") == [[c.rstrip(".") for c in SPLITS[STATEMENT]], ["The limit is 80 °C."]]


@pytest.mark.parametrize("option", ["concurrency=2", "prompt=2", "fallback=none", "fallback=rule,fallback=rule"])
def test_splitter_options_it_would_not_use_are_refused(runner, tmp_path, option):
    result = runner.invoke(main, ["score", str(write_cases(tmp_path, streamed=False)), "--claims",
                                  f"openai:stub-model,base_url=http://127.0.0.1:9/v1,{option}"])
    assert result.exit_code == 2 and "Invalid value for '--claims'" in result.output
    assert f"bad openai judge option '{option.split(',')[-1]}'" in result.output


# --- store check ---------------------------------------------------------------------------------


def test_store_check_checks_the_recorded_splits(runner, server, tmp_path):
    store = tmp_path / "store.sqlite"
    cases = write_cases(tmp_path, streamed=False)
    assert runner.invoke(main, ["prepare", str(cases), *OPENAI, "--store", str(store)]).exit_code == 0
    good = runner.invoke(main, ["store", "check", str(store)])
    assert good.exit_code == 0, good.output
    lines = good.output.splitlines()
    header = lines.index(f"{store}: 2 claim splits, 0 bad")
    assert lines[header + 1].startswith("  openai:stub-model@1#") and lines[header + 1].endswith("  2")

    with sqlite3.connect(store) as db:
        rows = dict(db.execute("SELECT statement, key FROM decompositions"))
        added = {"claims": ["Downtime fell by 15% in the pilot.", "The pilot ran for 31 days."], "lang": "en"}
        db.execute("UPDATE decompositions SET outcome = ? WHERE key = ?", (json.dumps(added), rows[STATEMENT]))
        db.execute("UPDATE decompositions SET statement = 'The limit is 90 °C.' WHERE key = ?",
                   (rows["The limit is 80 °C."],))
    bad = runner.invoke(main, ["store", "check", str(store)])
    assert bad.exit_code == 2
    assert f"{store}: 2 claim splits, 2 bad" in bad.output
    assert (f"  {rows[STATEMENT]}: recorded claims fail the split checks: drops number 30; adds number 31"
            in bad.output)
    assert f"  {rows['The limit is 80 °C.']}: key does not match the row's statement, language and splitter" in bad.output
    assert f"citeaudit: {store}: 2 bad rows" in bad.output


def test_store_check_without_recorded_splits_says_nothing_of_them(runner, tmp_path):
    store = tmp_path / "store.sqlite"
    cases = write_cases(tmp_path, streamed=False)
    labelled = {**CASE, "answers": [{"id": "A", "statements": [{"text": "Downtime fell by 15%.", "citations": ["D3"]}]}],
                "labels": [{"claim": "Downtime fell by 15%.", "passages": ["D3"], "label": "full"}]}
    cases.write_text(json.dumps(labelled), encoding="utf-8")
    assert runner.invoke(main, ["prepare", str(cases), "--store", str(store)]).exit_code == 0
    result = runner.invoke(main, ["store", "check", str(store)])
    assert result.exit_code == 0 and "claim splits" not in result.output


def test_a_split_recorded_without_its_language_is_checked_against_english_and_chinese(tmp_path):
    from citeaudit.judges import JudgmentStore
    from citeaudit.parse.lm_decompose import check_recorded_splits

    store = JudgmentStore(tmp_path / "store.sqlite")
    for lang, statement in (("en", STATEMENT), ("zh", "停机时间减少了15%。")):
        key = decomposition_key(statement, lang, "openai:m@1#x|base=h")
        store.put_decomposition(key, "openai:m@1#x|base=h", statement, {"claims": [statement]})
    store.put_decomposition("not-a-key", "openai:m@1#x|base=h", STATEMENT, {"fallback": "split rejected: x"})
    found = check_recorded_splits(store.path)
    assert found.rows == 3
    assert found.bad == [("not-a-key", "key does not match the row's statement, language and splitter")]
