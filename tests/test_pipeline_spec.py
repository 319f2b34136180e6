"""The typed judge spec and the one judgment-source builder: a spec is parsed once, refused with the
option's name and the allowed values, kept in the run log beside the judge's signature, and every kind of
judge built again from a log's stored spec signs exactly as the run's judge did."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.errors import JudgeSetupError, UnknownJudge
from citeaudit.examples import load_example
from citeaudit.judges import judgment_source, parse_judge, run_judge
from citeaudit.judges.source import Judgments
from citeaudit.run.log import read_runlog


@pytest.mark.parametrize("text, message", [
    ("curated:garbage", "the curated judge takes no options"),
    ("curated:x=1", "the curated judge takes no options"),
    ("embedding:-3", "thr expects a number > 0 and <= 1, got '-3'"),
    ("model:band=5", "band expects a number within 0..0.5, got '5'"),
    ("model:nope=1", "unknown option 'nope'"),
    ("openai:m,timeout=0", "timeout expects a number > 0"),
    ("openai:m,api_key=sk-123", "unknown option 'api_key'"),  # a secret is never an option
    ("cascade:curated,human", "the first judge (curated) is never unsure"),
    ("cascade:model", "name two judges"),
    ("hf:", "give the model directory"),
])
def test_a_bad_spec_is_refused_naming_the_option_and_what_is_allowed(text, message):
    with pytest.raises(JudgeSetupError, match=re.escape(message)):
        parse_judge(text)


def test_an_unknown_judge_lists_the_known_ones():
    with pytest.raises(UnknownJudge, match="known judges: cascade, curated, embedding, hf, model, onnx, openai"):
        parse_judge("foo")


def test_remote_and_local_options_are_given_in_the_spec_with_the_environment_as_default(monkeypatch):
    monkeypatch.setenv("CITEAUDIT_OPENAI_TIMEOUT", "12")
    monkeypatch.setenv("CITEAUDIT_THREADS", "3")
    spec = parse_judge("openai:llama3.1:8b,max_requests=5,base_url=http://127.0.0.1:9/v1")
    assert spec.options.head == "llama3.1:8b"  # a model name keeps its colons
    assert (spec.options["max_requests"], spec.options["timeout"]) == (5, 12.0)  # the environment: a default
    assert parse_judge("openai:m,timeout=2").options["timeout"] == 2.0  # the spec wins over it
    judge = run_judge("openai:m,base_url=http://127.0.0.1:9/v1,concurrency=2")
    assert (judge.host, judge.concurrency) == ("127.0.0.1:9", 2)
    local = parse_judge("hf:/models/nli::LABEL_0=none,threads=2,LABEL_1=full")
    assert local.options.head == "/models/nli" and local.options["threads"] == 2
    assert dict(local.options.labels) == {"LABEL_0": "none", "LABEL_1": "full"}
    assert parse_judge("onnx:/m").options["threads"] == 3


def test_the_spec_says_what_building_needs():
    assert parse_judge("curated").reads_cases and parse_judge("curated").labels_only
    assert not parse_judge("model").reads_cases
    cascade = parse_judge("cascade:model:guard=off,threads=2,human")
    assert [str(p) if p else None for p in cascade.parts] == ["model:guard=off,threads=2", None]
    assert cascade.to_record()["parts"][1] == {"spec": "human", "kind": "human"}


def test_judgment_source_is_the_one_builder():
    cases = load_example("returns_desk.json")
    source = judgment_source("curated", cases)
    assert isinstance(source, Judgments) and source.spec.kind == "curated" and not source.batched
    with pytest.raises(JudgeSetupError, match="--replay needs --store"):
        judgment_source("curated", cases, replay=True)
    titled = judgment_source("embedding", cases, conventions="alce")
    assert titled.signature.endswith("|passages=alce-title")
    assert judgment_source("curated", cases, conventions="alce").signature.startswith("curated@")


def _scored(runner, tmp_path, spec: str):
    runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    run = tmp_path / "run.json"
    result = runner.invoke(main, ["score", str(tmp_path / "cases" / "returns_desk.json"), "--judge", spec,
                                  "--out", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    return read_runlog(run)


def _rebuilt_signature(log, cases=()):
    spec = parse_judge(log.judge_spec.spec)
    return run_judge(spec, cases, log.settings.conventions).signature


@pytest.mark.parametrize("spec", ["curated", "model:guard=off,threads=1", "embedding:thr=0.9",
                                  "cascade:model:band=0.2,human"])
def test_each_local_kind_is_built_again_from_the_logs_spec_with_the_same_signature(runner, tmp_path, spec):
    if spec != "curated":
        pytest.importorskip("onnxruntime")
    log = _scored(runner, tmp_path, spec)
    assert log.judge_spec.spec == spec and log.judge_spec.kind == spec.partition(":")[0]
    assert _rebuilt_signature(log, load_example("returns_desk.json")) == log.judge


def test_the_remote_kind_is_built_again_from_the_logs_spec(runner, tmp_path, monkeypatch):
    from citeaudit.testing import OpenAIStub

    with OpenAIStub() as stub:
        log = _scored(runner, tmp_path, f"openai:stub-model,base_url={stub.url},max_requests=100")
    assert log.judge_spec.options["max_requests"] == 100 and log.judge_spec.head == "stub-model"
    assert "api_key" not in json.dumps(log.judge_spec.model_dump())
    assert _rebuilt_signature(log) == log.judge


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hf", "onnx"])
def test_hf_and_onnx_are_built_again_from_the_logs_spec(runner, tmp_path, kind):
    pytest.importorskip("torch")
    import tiny_models

    hf = tiny_models.build_hf(tmp_path / "tiny-nli")
    path = hf if kind == "hf" else tiny_models.export_onnx(hf, tmp_path / "tiny-nli-onnx")
    log = _scored(runner, tmp_path, f"{kind}:{path}::entailment=full,neutral=none,contradiction=contradicts,threads=1")
    assert log.judge_spec.labels == {"entailment": "full", "neutral": "none", "contradiction": "contradicts"}
    assert _rebuilt_signature(log) == log.judge


def test_a_streamed_log_keeps_the_spec_in_its_header(runner, tmp_path):
    runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    cases = tmp_path / "cases" / "returns_desk.json"
    jsonl = tmp_path / "cases.jsonl"
    jsonl.write_text("\n".join(json.dumps(c) for c in json.loads(cases.read_text())) + "\n"
                     if cases.read_text().lstrip().startswith("[") else json.dumps(json.loads(cases.read_text())) + "\n")
    run = tmp_path / "run.jsonl"
    assert runner.invoke(main, ["score", str(jsonl), "--out", str(run)]).exit_code == 0
    header = json.loads(run.read_text().splitlines()[0])
    assert header["stream"] == "header" and header["judge_spec"]["spec"] == "curated"
    assert read_runlog(run).judge_spec.kind == "curated"


def test_the_judges_command_shows_every_option_with_its_help(runner):
    out = runner.invoke(main, ["judges"]).output
    assert "  band                 half-width of the uncertain band" in out
    assert "openai:MODEL,max_requests=..." in out and "hf:PATH::threads=..." in out
    assert "default 30.0, or CITEAUDIT_OPENAI_TIMEOUT" in out


BAD_SPECS = [
    ("curated:garbage", "the curated judge takes no options"),
    ("curated:x=1", "the curated judge takes no options"),
    ("cascade:curated,human", "the first judge (curated) is never unsure"),
    ("model:band=5", "band expects a number within 0..0.5, got '5'"),
    ("model:guard=off,guard=on", "guard is given twice"),
    # a cosine threshold of 0 or below would call every pair `full`
    ("embedding:-1", "thr expects a number > 0 and <= 1, got '-1'"),
    ("embedding:0", "thr expects a number > 0 and <= 1, got '0'"),
    ("openai:m,max_cost=1", "max_cost needs price_per_1k_tokens"),
    ("onnx:dir::LABEL_0=none,LABEL_0=full", "LABEL_0 is given twice"),
]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A case file and its run log, for the commands that read one."""
    folder = tmp_path_factory.mktemp("scored")
    case = folder / "p7.json"
    case.write_text(json.dumps(load_example("p7_archive.json")[0].case.model_dump(mode="json")), encoding="utf-8")
    from click.testing import CliRunner

    assert CliRunner().invoke(main, ["score", str(case), "--out", str(folder / "run.json")]).exit_code == 0
    return case, folder / "run.json"


COMMANDS = {
    "score": lambda case, run, tmp: ["score", str(case), "--out", str(tmp / "out.json")],
    "prepare": lambda case, run, tmp: ["prepare", str(case), "--store", str(tmp / "store.db")],
    "verify": lambda case, run, tmp: ["verify", str(case), "--answer", "A", "--out", str(tmp / "out.json")],
    "desk": lambda case, run, tmp: ["desk", str(case), "--no-open", "--port", "0"],
    "review --rejudge": lambda case, run, tmp: ["review", str(run), "--sources", str(case), "--rejudge"],
    "validate-judge": lambda case, run, tmp: ["validate-judge", str(Path(__file__).parent / "fixtures" /
                                                                    "judge_validation_sample.jsonl")],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("spec, message", BAD_SPECS)
def test_every_command_refuses_a_bad_judge_spec_before_any_work(runner, scored, tmp_path, monkeypatch, command,
                                                                spec, message):
    import citeaudit.desk

    monkeypatch.setattr(citeaudit.desk, "serve", lambda *a, **k: pytest.fail("the desk bound its port"))
    case, run = scored
    result = runner.invoke(main, [*COMMANDS[command](case, run, tmp_path), "--judge", spec])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert list(tmp_path.iterdir()) == []  # nothing written: no run log, no store
