"""What a judge has seen (judges/seen.py): the claims a judge directory records that its judge trained and
was calibrated on, written with the judge (judge-v1's from the shared data, an adapted or recalibrated
judge's from its base's) and no part of its signature; `validate-judge` and `agree` say how many of the
labelled claims the judge has seen, with the figures on the unseen ones beside the rest.

tests/fixtures/seen_claims_sample.jsonl holds 12 real Factcheck-GPT rows: 6 whose claim falls in the
train split judge-v1 trained on (5 claims, one with two passages) and 6 from the test split it never read."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from citeaudit.cli import main  # noqa: E402
from citeaudit.errors import JudgeSetupError  # noqa: E402
from citeaudit.files.labelled import load_rows  # noqa: E402
from citeaudit.judges import build_judge, parse_judge  # noqa: E402
from citeaudit.judges.model import shipped_model_dir  # noqa: E402
from citeaudit.judges.seen import FILE_NAME, claim_key, read_seen, write_seen  # noqa: E402
from citeaudit.records import directory_sha256  # noqa: E402
from citeaudit.stats import balanced_accuracy  # noqa: E402
from citeaudit.training.data import split_of  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "seen_claims_sample.jsonl"
# judge-v1's signature before its directory recorded its claims: judgment stores are keyed by it
JUDGE_V1 = ("model:judge-v1[onnx:judge-v1@1#61a844ac4e8c|max=256|map=full=full,partial=partial,none=none,"
            "contradicts=contradicts]|guard=on@4|plain=on@5|pick=support|cal=on|zh=judge-v2#cdb7d1dfca78+short=e5-onnx#1571fc982750@2|"
            "band=0.13|sets=parts")
ONNX = "model_int8.onnx"


def judge_copy(tmp_path: Path, name: str = "judge") -> Path:
    """The shipped judge's files in a folder of the test's, without its record of claims; the model
    linked to, not copied."""
    d = tmp_path / name
    d.mkdir()
    for f in shipped_model_dir().iterdir():
        if f.name == ONNX:
            (d / ONNX).symlink_to(f)
        elif f.name != FILE_NAME:
            shutil.copyfile(f, d / f.name)
    return d


def _seen_in_v1(claim: str) -> bool:
    return split_of(claim) in ("train", "dev")


# --- the claims and the file ---------------------------------------------------------------------------


def test_a_claim_key_is_the_claim_however_it_is_written():
    from citeaudit.text import normalise_claim
    from citeaudit.training import data

    assert data.normalise_claim is normalise_claim  # still importable where the split is made
    key = claim_key("The  Tower [2] is TALL.")
    assert key == claim_key("the tower is tall") and len(key) == 16 and int(key, 16) >= 0
    assert key != claim_key("The tower is short.")


def test_the_file_is_the_same_bytes_for_the_same_claims_and_reads_back(tmp_path):
    keys = [claim_key(c) for c in ("Alpha holds.", "Beta holds.", "Gamma holds.")]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert read_seen(tmp_path / "a") is None  # no file: nothing recorded
    one = write_seen(tmp_path / "a", keys, "train split of x")
    two = write_seen(tmp_path / "b", [*reversed(keys), keys[0]], "train split of x")
    assert one.name == FILE_NAME and one.read_bytes() == two.read_bytes()
    assert one.read_bytes()[4:8] == b"\0\0\0\0"  # gzip's time stamp: none
    assert gzip.decompress(one.read_bytes()).decode().splitlines() == [
        "# citeaudit trained-on claims v1: train split of x", *sorted(keys)]
    seen = read_seen(tmp_path / "a")
    assert seen.covers == "train split of x" and seen.keys == frozenset(keys)
    assert seen.has_seen("ALPHA holds") and not seen.has_seen("Delta holds.")
    assert [p.name for p in (tmp_path / "a").iterdir()] == [FILE_NAME]  # nothing left beside it


# mtime=0: the same bytes, so the same test ids, in every test worker (a second apart, they differ)
@pytest.mark.parametrize("data, said", [
    (b"not gzip", "cannot read it as gzipped text"),
    (gzip.compress(b"abc\n", mtime=0), "line 1: expected the header '# citeaudit trained-on claims v1: WHAT IT COVERS'"),
    (gzip.compress(b"# citeaudit trained-on claims v1: x\n0123456789abcdef\nnot a key\n", mtime=0),
     "line 3: expected a claim key (16 hex digits), found 'not a key'"),
    (gzip.compress(b"# citeaudit trained-on claims v1: x\n\xff\n", mtime=0), "not UTF-8 text"),
    (gzip.compress(b"# citeaudit trained-on claims v1: x\n", mtime=0)[:-6], "a truncated or damaged gzip file"),
])
def test_a_damaged_file_is_named_with_what_is_wrong(tmp_path, data, said):
    (tmp_path / FILE_NAME).write_bytes(data)
    with pytest.raises(JudgeSetupError) as err:
        read_seen(tmp_path)
    assert str(err.value).startswith(f"{tmp_path / FILE_NAME}: {said}")


def test_the_record_is_no_part_of_the_judges_signature(tmp_path):
    assert (shipped_model_dir() / FILE_NAME).is_file()
    assert build_judge(parse_judge("model")).signature == JUDGE_V1
    d = judge_copy(tmp_path)
    without = directory_sha256(d)
    write_seen(d, [claim_key("Alpha holds.")], "made up")
    assert directory_sha256(d) == without  # skipped by name ...
    (d / "notes.txt").write_text("x")
    assert directory_sha256(d) != without  # ... and only it


def test_the_shipped_judge_records_the_claims_judge_v1_trained_and_was_calibrated_on():
    seen = read_seen(shipped_model_dir())
    assert seen.covers == ("train split (training), dev split (calibration) of wice, expertqa, factcheck_gpt "
                           "(shared data, split by claim); en")
    assert len(seen.keys) == 2457  # 2194 claims of the train split, 263 of the dev split (English)
    rows = [*load_rows(SAMPLE), *load_rows(FIXTURES / "judge_validation_sample.jsonl")]
    assert {r.source for r in rows} == {"wice", "expertqa", "factcheck_gpt", "citecheck"}
    for r in rows:
        assert seen.has_seen(r.claim) == (r.lang != "zh" and _seen_in_v1(r.claim)), r.id
    assert sum(seen.has_seen(r.claim) for r in load_rows(SAMPLE)) == 6  # the train rows; the test rows not


def test_trained_claims_are_read_from_the_splits_named(tmp_path):
    from citeaudit.errors import TrainingError
    from citeaudit.training.seen_claims import main, trained_claims

    claims = [f"Claim number {i} holds." for i in range(40)]

    def write(path: str, rows: list[dict]) -> None:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))

    write("factcheck_gpt/subtask3_claim_evidence_stance.jsonl",
          [{"claim": c, "evidence": "Some evidence.", "stance": "irrelevant"} for c in claims[:20]])
    write("wice/oracle_chunks__claim__dev.jsonl",
          [{"claim": c, "evidence": ["Some evidence."], "label": "supported", "meta": {"id": f"w{i}"}}
           for i, c in enumerate(claims[20:])])
    for name in ("rand_val", "rand_test", "domain_val", "domain_test"):
        write(f"expertqa/{name}.jsonl", [])
    write("citecheck/dev.jsonl", [{"idx": 1, "statement": claims[0], "quote": "[1] 证据。", "label": 1}])
    train_fc = {claim_key(c) for c in claims[:20] if split_of(c) == "train"}
    assert 0 < len(train_fc) < 20
    assert trained_claims(tmp_path, ["factcheck_gpt"], ["en"], ["train"]) == train_fc
    both = {claim_key(c) for c in claims if split_of(c) in ("train", "dev")}
    assert trained_claims(tmp_path, ["factcheck_gpt", "wice"], ["en"], ["train", "dev"]) == both
    with pytest.raises(TrainingError, match="--sources: one or more of wice, expertqa, factcheck_gpt, citecheck, "
                                            "got nowhere"):
        trained_claims(tmp_path, ["nowhere"], ["en"], ["train"])
    main([str(tmp_path), "--sources", "factcheck_gpt,wice", "--languages", "en", "--splits", "train,dev",
          "--data-dir", str(tmp_path)])
    written = read_seen(tmp_path)
    assert written.keys == both
    assert written.covers == ("train split (training), dev split (calibration) of factcheck_gpt, wice "
                              "(shared data, split by claim); en")


# --- validate-judge ------------------------------------------------------------------------------------


def test_validate_judge_says_how_many_claims_the_judge_has_seen(runner, tmp_path):
    predictions = tmp_path / "p.jsonl"
    result = runner.invoke(main, ["validate-judge", str(SAMPLE), "--judge", "model", "--format", "json",
                                  "--resamples", "50", "--predictions", str(predictions)])
    assert result.exit_code == 0, result.output
    seen = json.loads(result.stdout)["seen"]
    assert (seen["claims"], seen["of"]) == (5, 11)  # 6 seen rows, one claim with two passages
    assert seen["covers"].startswith("train split (training), dev split (calibration) of wice")
    assert seen["file"] == str(shipped_model_dir() / FILE_NAME)
    assert (seen["unseen"]["n"], seen["seen"]["n"]) == (6, 6)
    # the unseen figures are those of the rows whose claim is in the test split, from the judge's own labels
    rows = {r.id: r for r in load_rows(SAMPLE)}
    judged = [json.loads(line) for line in predictions.read_text().splitlines()]
    for part, wanted in (("unseen", False), ("seen", True)):
        mine = [p for p in judged if _seen_in_v1(rows[p["id"]].claim) == wanted]
        assert seen[part]["n_full"] == sum(p["gold"] == "full" for p in mine)
        assert seen[part]["balanced_accuracy"] == pytest.approx(
            balanced_accuracy([p["gold"] == "full" for p in mine], [p["label"] == "full" for p in mine]))
    text = runner.invoke(main, ["validate-judge", str(SAMPLE), "--judge", "model", "--resamples", "50"]).output
    assert "\nthe judge has seen 5 of 11 labelled claims (trained or calibrated on them)\n" in text
    assert "\n  its directory records the claims of: train split (training), dev split (calibration)" in text
    assert "\nunseen claims         6      3  " in text and "\nseen claims           6      3  " in text


def test_validate_judge_of_a_directory_that_records_no_claims_says_unknown(runner, tmp_path):
    d = judge_copy(tmp_path)
    args = ["validate-judge", str(SAMPLE), "--judge", f"model:path={d}", "--resamples", "20"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "\nthe judge has seen: unknown (the judge directory records no training claims)\n" in result.output
    assert "unseen claims" not in result.output
    found = json.loads(runner.invoke(main, [*args, "--format", "json"]).stdout)["seen"]
    assert found == {"claims": None, "of": 11, "unknown": "the judge directory records no training claims"}
    # a record of other claims: every figure is on claims the judge has not seen, and no table says it twice
    write_seen(d, [claim_key("A claim of no row.")], "made up")
    result = runner.invoke(main, args)
    assert ("\nthe judge has seen 0 of 11 labelled claims (trained or calibrated on them)\n"
            "  its directory records the claims of: made up\n"
            "  so every figure here is on claims it has not seen\n") in result.output
    assert "unseen claims" not in result.output
    # a record written into it: two of the test-split claims
    unseen = [r.claim for r in load_rows(SAMPLE) if not _seen_in_v1(r.claim)]
    write_seen(d, [claim_key(c) for c in unseen[:2]], "made up")
    found = json.loads(runner.invoke(main, [*args, "--format", "json"]).stdout)["seen"]
    assert (found["claims"], found["of"], found["covers"]) == (2, 11, "made up")
    assert (found["unseen"]["n"], found["seen"]["n"]) == (10, 2)
    embedding = runner.invoke(main, ["validate-judge", str(SAMPLE), "--judge", "embedding", "--resamples", "20"])
    assert "\nthe judge has seen: unknown (embedding reads no judge directory)\n" in embedding.output


# six Chinese CiteCheck rows of the dev split: judge-v2, which judges the model judge's Chinese pairs, was
# calibrated on them; judge-v1 never read them
def _chinese_rows():
    rows = [r for r in load_rows(FIXTURES / "judge_validation_sample.jsonl") if r.lang == "zh"][:6]
    assert len(rows) == 6 and all(split_of(r.claim) == "dev" for r in rows)
    return rows


def test_a_judge_that_hands_chinese_pairs_to_judge_v2_has_seen_what_judge_v2_learnt_from(runner, tmp_path):
    from citeaudit.judges.model import CHINESE_MODEL_NAME
    from citeaudit.judges.registry import chinese_judge_directory

    data = tmp_path / "zh.jsonl"
    data.write_text("".join(json.dumps({"id": r.id, "claim": r.claim, "label": r.label, "lang": "zh",
                                        "passages": [{"id": p.id, "text": p.text} for p in r.passages]},
                                       ensure_ascii=False) + "\n" for r in _chinese_rows()))

    def seen(judge: str) -> dict:
        result = runner.invoke(main, ["validate-judge", str(data), "--judge", judge, "--format", "json",
                                      "--resamples", "1"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["seen"]

    found = seen("model")
    assert (found["claims"], found["of"]) == (6, 6)
    assert found["covers"].endswith("; and its Chinese pairs go to judge-v2, whose directory records: train split "
                                    "(training), dev split (calibration) of wice, expertqa, factcheck_gpt, citecheck "
                                    "(shared data, split by claim); en, zh")
    # the embedding route read none of them, and judge-v1's record has none
    assert (seen("model:zh=embedding")["claims"], seen("model:zh=embedding")["of"]) == (0, 6)
    assert chinese_judge_directory("embedding@3#abc") is None
    assert chinese_judge_directory(JUDGE_V1) == (CHINESE_MODEL_NAME, shipped_model_dir(CHINESE_MODEL_NAME))
    # agree, from a run's log: the same
    cases, labels = _case_and_labels(tmp_path, _chinese_rows())
    run = _score(runner, cases, "model", tmp_path / "run.json")
    result = runner.invoke(main, ["agree", run, "--labels", str(labels), "--format", "json", "--resamples", "1"])
    assert result.exit_code == 0, result.output
    assert (json.loads(result.stdout)["seen"]["claims"], json.loads(result.stdout)["seen"]["of"]) == (6, 6)
    # adapt-judge's cross-validated figures, on a base that hands Chinese pairs to judge-v2: the same
    from citeaudit.training.seen_claims import unseen_figures

    rows = _chinese_rows()
    judged = {"base": [None] * 6}
    alone = unseen_figures(shipped_model_dir(), rows, [True] * 6, judged, lambda gold, j: {"n": len(gold)})
    assert (alone["claims"], alone["of"]) == (0, 6)
    with_v2 = unseen_figures(shipped_model_dir(), rows, [True] * 6, judged, lambda gold, j: {"n": len(gold)},
                             chinese_judge_directory(JUDGE_V1))
    assert (with_v2["claims"], with_v2["of"]) == (6, 6)


def test_what_a_judge_and_its_chinese_judge_have_seen_is_known_only_when_both_records_are(tmp_path):
    from citeaudit.judges.seen import SeenClaims, merged

    own = SeenClaims(tmp_path / "a", frozenset({claim_key("Alpha holds.")}), "made up")
    other = SeenClaims(tmp_path / "b", frozenset({claim_key("甲成立。")}), "also made up")
    both = merged(own, other, "judge-v2")
    assert both.has_seen("Alpha holds.") and both.has_seen("甲成立。") and not both.has_seen("Beta holds.")
    assert both.file == own.file
    assert merged("no record", other, "judge-v2") == "no record"
    assert merged(own, "the judge directory x is not here", "judge-v2") == (
        "judge-v2, which judges its Chinese pairs: the judge directory x is not here")


def test_calibrate_judge_adds_its_rows_claims_to_the_record(runner, tmp_path):
    d = judge_copy(tmp_path)
    rows = [r for r in load_rows(FIXTURES / "judge_validation_sample.jsonl") if r.lang == "en"]
    picked = [r for r in rows if r.label == "full"][:10] + [r for r in rows if r.label != "full"][:10]
    data = tmp_path / "cal.jsonl"
    data.write_text("".join(json.dumps({"id": r.id, "claim": r.claim, "label": r.label, "source": r.source,
                                        "passages": [{"id": p.id, "text": p.text} for p in r.passages]}) + "\n"
                            for r in picked))
    assert runner.invoke(main, ["calibrate-judge", str(data), "--model", str(d)]).exit_code == 0
    assert read_seen(d) is None  # nothing recorded before: still unknown, not just these claims
    write_seen(d, [claim_key("Alpha holds.")], "made up")
    result = runner.invoke(main, ["calibrate-judge", str(data), "--model", str(d)])
    assert result.exit_code == 0, result.output
    seen = read_seen(d)
    assert seen.keys == {claim_key("Alpha holds."), *(claim_key(r.claim) for r in picked)}
    assert seen.covers.startswith("made up; calibrate-judge on cal.jsonl (sha256 ")
    assert f"added the rows' claims to {d / FILE_NAME}" in result.output


# --- agree ---------------------------------------------------------------------------------------------


def test_a_judge_holding_an_adapted_judge_v2_has_seen_what_that_one_learnt_from(runner, tmp_path):
    # judge-v1 with a judge-v2 inside it (as adapt-judge writes it for a team's Chinese labels), that one
    # recording two of the six Chinese claims: validate-judge and agree count those two as seen
    rows = _chinese_rows()
    judge = tmp_path / "my-judge"
    shutil.copytree(shipped_model_dir(), judge)
    shutil.copytree(shipped_model_dir("judge-v2"), judge / "judge-v2-adapted")
    write_seen(judge / "judge-v2-adapted", [claim_key(r.claim) for r in rows[:2]], "made up")
    config = json.loads((judge / "config.json").read_text())
    (judge / "config.json").write_text(json.dumps({**config, "chinese_judge": "judge-v2-adapted"}))
    (judge / "model_card.json").unlink()  # its recorded config.json hash is the shipped one's
    data = tmp_path / "zh.jsonl"
    data.write_text("".join(json.dumps({"id": r.id, "claim": r.claim, "label": r.label, "lang": "zh",
                                        "passages": [{"id": p.id, "text": p.text} for p in r.passages]},
                                       ensure_ascii=False) + "\n" for r in rows))
    spec = f"model:path={judge}"
    result = runner.invoke(main, ["validate-judge", str(data), "--judge", spec, "--format", "json", "--resamples", "1"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["seen"]
    assert (found["claims"], found["of"]) == (2, 6)
    assert found["covers"].endswith("; and its Chinese pairs go to judge-v2-adapted, whose directory records: made up")
    cases, labels = _case_and_labels(tmp_path, rows)
    run = _score(runner, cases, spec, tmp_path / "run.json")
    result = runner.invoke(main, ["agree", run, "--labels", str(labels), "--format", "json", "--resamples", "1"])
    assert result.exit_code == 0, result.output
    assert (json.loads(result.stdout)["seen"]["claims"], json.loads(result.stdout)["seen"]["of"]) == (2, 6)


def _case_and_labels(tmp_path: Path, rows=None) -> tuple[Path, Path]:
    """The sample (or `rows`) as a case (each row's claim a statement citing its passage) and as labelled
    pairs."""
    rows = load_rows(SAMPLE) if rows is None else rows
    case = {"id": "t", "question": "q?",
            "sources": [{"id": f"S{i}", "version": "v1", "text": r.passages[0].text} for i, r in enumerate(rows, 1)],
            "answers": [{"id": "a", "statements": [{"text": r.claim, "citations": [f"S{i}"]}
                                                   for i, r in enumerate(rows, 1)]}]}
    (tmp_path / "cases.json").write_text(json.dumps(case))
    (tmp_path / "labels.jsonl").write_text("".join(
        json.dumps({"id": r.id, "claim": r.claim, "label": r.label,
                    "passages": [{"id": f"S{i}", "text": r.passages[0].text}]}) + "\n"
        for i, r in enumerate(rows, 1)))
    return tmp_path / "cases.json", tmp_path / "labels.jsonl"


def _score(runner, cases: Path, judge: str, out: Path) -> str:
    result = runner.invoke(main, ["score", str(cases), "--judge", judge, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return str(out)


def test_agree_says_how_many_of_the_labelled_claims_the_runs_judge_has_seen(runner, tmp_path):
    cases, labels = _case_and_labels(tmp_path)
    run = _score(runner, cases, "model", tmp_path / "run.json")
    result = runner.invoke(main, ["agree", run, "--labels", str(labels), "--format", "json", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    seen = found["seen"]
    assert (seen["claims"], seen["of"]) == (5, 11)
    assert (seen["unseen"]["n"], seen["seen"]["n"]) == (6, 6)
    assert seen["unseen"]["n"] + seen["seen"]["n"] == found["n_all"]
    for part in ("unseen", "seen"):
        assert 0 <= seen[part]["balanced_accuracy"] <= 1 and len(seen[part]["balanced_accuracy_ci"]) == 2
    text = runner.invoke(main, ["agree", run, "--labels", str(labels), "--resamples", "50"]).output
    assert "\nthe judge has seen 5 of 11 labelled claims (trained or calibrated on them)\n" in text
    assert "\nunseen claims, every pair                   6  " in text
    assert "\nseen claims, every pair                     6  " in text
    # several runs: each run's judge says it
    other = _score(runner, cases, "embedding", tmp_path / "other.json")
    several = runner.invoke(main, ["agree", run, other, "--labels", str(labels), "--resamples", "20"]).output
    assert "\n       the judge has seen 5 of 11 labelled claims (trained or calibrated on them)\n" in several
    assert "\n       unseen claims, every pair            6  " in several
    assert "\n       the judge has seen: unknown (embedding reads no judge directory)\n" in several


def test_agree_says_unknown_when_the_runs_judge_directory_is_not_the_one_it_signed(runner, tmp_path):
    cases, labels = _case_and_labels(tmp_path)
    d = judge_copy(tmp_path)
    write_seen(d, [claim_key(r.claim) for r in load_rows(SAMPLE)][:3], "made up")
    run = _score(runner, cases, f"model:path={d}", tmp_path / "run.json")

    def seen() -> dict:
        result = runner.invoke(main, ["agree", run, "--labels", str(labels), "--format", "json", "--resamples", "1"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["seen"]

    found = seen()
    assert (found["claims"], found["of"]) == (2, 11)  # the first two rows share their claim
    (d / "calibration.json").write_text((d / "calibration.json").read_text() + "\n")  # another judge now
    assert seen()["unknown"] == f"the judge directory {d} is not the one the run's judge signs (its files differ)"
    shutil.rmtree(d)
    assert seen()["unknown"] == f"the judge directory {d} is not here"
