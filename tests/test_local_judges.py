"""`hf:PATH` and `onnx:PATH` judges on a tiny model the tests build (needs torch; windowing without a
model is tests/test_windows.py)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

from citeaudit.cli import main
from citeaudit.examples import EXAMPLE_FILES, load_example
from citeaudit.judges import Judgments, JudgmentStore, make_judge
from citeaudit.errors import JudgeSetupError
from citeaudit.judges.local import map_labels
from citeaudit.metrics import Settings, score_cases
from citeaudit.records import SourcePassage

import tiny_models

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    hf = tiny_models.build_hf(root / "tiny-nli")
    return {"hf": hf, "onnx": tiny_models.export_onnx(hf, root / "tiny-nli-onnx")}


def _judgments(report):
    return [(c.text, c.judgment.label, c.judgment.scores) for a in report.answers for c in a.claims]


@pytest.mark.parametrize("example", EXAMPLE_FILES)
def test_hf_and_onnx_read_the_same_weights_the_same_way(models, example):
    cases = load_example(example)
    hf = score_cases(cases, Judgments(make_judge(f"hf:{models['hf']}", cases)), Settings())
    onnx = score_cases(cases, Judgments(make_judge(f"onnx:{models['onnx']}", cases)), Settings())
    pairs = list(zip(_judgments(hf), _judgments(onnx), strict=True))
    assert any(s is not None for (_, _, s), _ in pairs)  # the model judged something
    for (t1, l1, s1), (t2, l2, s2) in pairs:
        assert t1 == t2 and l1 == l2
        assert (s1 is None) == (s2 is None)  # None: an uncited claim, labelled without a model
        assert s1 is None or all(abs(s1[k] - s2[k]) < 1e-4 for k in s1)
    if example == "returns_desk.json":
        claim = hf.answers[0].claims[0]
        assert claim.judgment.evidence.passage == "S2" and claim.judgment.scores["partial"] == 0.0


@pytest.mark.parametrize("kind", ["hf", "onnx"])
def test_cli_end_to_end_with_a_shared_store_and_no_rejudging(runner, tmp_path, models, kind):
    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    cases, db = str(tmp_path / "p7_archive.json"), str(tmp_path / "shared.db")
    spec = f"{kind}:{models[kind]}"
    first = runner.invoke(main, ["prepare", cases, "--judge", spec, "--store", db, "--all"])
    assert first.exit_code == 0, first.output
    assert "judge asked 0" not in first.output
    again = runner.invoke(main, ["prepare", cases, "--judge", spec, "--store", db])
    assert "judge asked 0;" in again.output
    replay = runner.invoke(main, ["score", cases, "--judge", spec, "--store", db, "--replay", "--format", "json"])
    assert replay.exit_code == 0, replay.output
    assert json.loads(replay.output)["judge"].startswith(f"{kind}:tiny-nli")


def test_one_store_holds_several_judges(tmp_path, models):
    cases = load_example("manual_audit.json")
    store = JudgmentStore(tmp_path / "j.db")
    for spec in (f"hf:{models['hf']}", f"onnx:{models['onnx']}", "curated"):
        score_cases(cases, Judgments(make_judge(spec, cases), store))
    per_judge = store._db.execute("SELECT COUNT(DISTINCT judge) FROM judgments").fetchone()[0]
    assert per_judge == 3


def test_signature_follows_the_model_files(tmp_path, models):
    import shutil

    copy = tmp_path / "tiny-nli"
    shutil.copytree(models["hf"], copy)
    before = make_judge(f"hf:{copy}", []).signature
    assert before.split("#")[1] == make_judge(f"hf:{models['hf']}", []).signature.split("#")[1]
    tiny_models.build_hf(copy, seed=1)  # new weights, same names
    assert make_judge(f"hf:{copy}", []).signature != before


def test_unmappable_labels_are_refused_clearly_and_can_be_mapped(tmp_path, models):
    import shutil

    copy = tmp_path / "generic"
    shutil.copytree(models["onnx"], copy)
    tiny_models.relabel(copy, {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(JudgeSetupError, match=r"cannot map the model's labels \['LABEL_0', 'LABEL_1', 'LABEL_2'\]"):
        make_judge(f"onnx:{copy}", [])
    judge = make_judge(f"onnx:{copy}::LABEL_0=full,LABEL_1=none,LABEL_2=contradicts", [])
    assert "map=LABEL_0=full,LABEL_1=none,LABEL_2=contradicts" in judge.signature


@pytest.mark.parametrize("id2label, expected", [
    ({0: "entailment", 1: "neutral", 2: "contradiction"}, {0: "full", 1: "none", 2: "contradicts"}),
    ({0: "not_entailment", 1: "entailment"}, {0: "none", 1: "full"}),
    ({0: "SUPPORTED", 1: "Not Supported"}, {0: "full", 1: "none"}),
    ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, {0: "contradicts", 1: "none", 2: "full"}),
])
def test_label_names_seen_in_nli_checkpoints(id2label, expected):
    assert map_labels(id2label) == expected


def test_missing_model_directory_is_bad_input(runner, tmp_path):
    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    result = runner.invoke(main, ["score", str(tmp_path / "p7_archive.json"), "--judge", f"hf:{tmp_path}/nope"])
    assert result.exit_code == 2 and "no model directory at" in result.output


def test_long_passages_are_windowed_with_the_cut_recorded(models):
    judge = make_judge(f"hf:{models['hf']}", [])
    long_text = " ".join(f"Standard items can be returned up to {n} days after delivery." for n in range(40))
    long_text += " " + "receipt " * 200 + "."
    verdict = judge.judge("A receipt is required.", [SourcePassage("L", "L", "v1", long_text, 0, len(long_text))])
    assert verdict.explanation.startswith("best of ") and "window(s)" in verdict.explanation
    assert int(verdict.explanation.split()[2]) > 1
    assert "was cut" in verdict.explanation
    assert 0 <= verdict.evidence.start < verdict.evidence.end <= len(long_text)


def test_token_counts_are_remembered_and_change_nothing(models):
    judge = make_judge(f"onnx:{models['onnx']}", [])
    text = " ".join(f"Standard items can be returned up to {n} days after delivery." for n in range(40))
    passage = SourcePassage("L", "L", "v1", text, 0, len(text))
    calls = []
    real = judge.backend.count
    judge.backend.count = lambda t: calls.append(t) or real(t)
    first = judge.judge("A receipt is required.", [passage])
    n_first = len(calls)
    second = judge.judge("Items can be returned.", [passage])
    assert n_first > 2 and len(calls) - n_first == 1  # only the new claim is counted
    fresh = make_judge(f"onnx:{models['onnx']}", [])
    assert fresh.judge("Items can be returned.", [passage]) == second
    assert first.evidence is not None


def test_the_hf_judge_leaves_the_environment_alone(models, monkeypatch):
    """Offline by `local_files_only`, not by setting HF_HUB_OFFLINE for the whole process."""
    import os

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    make_judge(f"hf:{models['hf']}", [])
    assert "HF_HUB_OFFLINE" not in os.environ


def test_window_size_and_threads_from_the_environment(models, monkeypatch):
    monkeypatch.setenv("CITEAUDIT_MAX_TOKENS", "64")
    monkeypatch.setenv("CITEAUDIT_THREADS", "1")
    assert "|max=64|" in make_judge(f"onnx:{models['onnx']}", []).signature
    monkeypatch.setenv("CITEAUDIT_MAX_TOKENS", "many")
    with pytest.raises(JudgeSetupError, match=r"^CITEAUDIT_MAX_TOKENS: expected a positive integer, got 'many'$"):
        make_judge(f"onnx:{models['onnx']}", [])


@pytest.fixture(scope="module")
def xlmr_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlmr")
    hf = tiny_models.build_xlmr(root / "tiny-xlmr")
    return {"hf": hf, "onnx": tiny_models.export_onnx(hf, root / "tiny-xlmr-onnx")}


@pytest.mark.parametrize("kind", ["hf", "onnx"])
def test_windows_leave_room_for_the_four_special_tokens_of_an_xlmr_pair(xlmr_models, kind):
    """`<s> window </s></s> claim </s>`: a window cut to the budget still fits the model's length."""
    from citeaudit.judges.local import CrossEncoderJudge

    judge = CrossEncoderJudge(kind, xlmr_models[kind], max_tokens=32)
    tokenizer, lengths = judge.backend.tokenizer, []
    predict = judge.backend.predict

    def recording(premises, hypotheses):
        for p, h in zip(premises, hypotheses):
            lengths.append(len(tokenizer.encode(p, h).ids if kind == "onnx" else tokenizer(p, h)["input_ids"]))
        return predict(premises, hypotheses)

    judge.backend.predict = recording
    text = " ".join(["standard items can be returned up to thirty days after delivery"] * 12) + "."
    verdict = judge.judge("a receipt is required.", [SourcePassage("L", "L", "v1", text, 0, len(text))])
    assert "was cut" in verdict.explanation
    assert max(lengths) == 32 and judge.backend.pair_specials == 4  # the cut window fills the budget exactly
