"""`citeaudit agree`: a run's judge against a team's own labels, on a small run whose figures are
computed by hand here; the labels from labelled pairs, the desk's review export, a curated run, case
files or another tool's files (ExpertQA); unmatched labels, claims a rule labelled, bad input, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citeaudit.run.agree import Labels, RunClaim, agree, claims_of_log, compare, figures, load_labels
from citeaudit.cli import main
from citeaudit.cli.agree import agree_cmd
from citeaudit.errors import InputError
from citeaudit.files.labelled import parse_rows
from citeaudit.judges import make_judge
from citeaudit.metrics.scoring import ClaimResult
from citeaudit.records import LABELS, Judgment
from citeaudit.run.log import read_runlog

from helpers import SetJudge, load, make_case, write_run

# Until the main group lists it, the tests attach the command themselves (add_command is idempotent).
main.add_command(agree_cmd)

# claim text, cited passage, the run's curated label (None: unjudged), the human label (None: none given)
CLAIMS = [
    ("Alpha holds.", "S1", "full", "full"),
    ("Beta holds.", "S2", "full", "full"),
    ("Gamma holds.", "S3", "full", "partial"),
    ("Delta holds.", "S4", "none", "none"),
    ("Epsilon holds.", "S5", "partial", "none"),
    ("Zeta holds.", "S6", "contradicts", "contradicts"),
    ("Eta holds.", "S7", None, "none"),  # unjudged: listed apart, not counted
    ("Theta holds.", "S8", "full", None),  # no human label
]
SOURCES = tuple(f"S{i}" for i in range(1, 9))


def _case() -> dict:
    statements = [{"text": text, "citations": [p]} for text, p, _, _ in CLAIMS]
    labels = [{"claim": text, "passages": [p], "label": auto} for text, p, auto, _ in CLAIMS if auto]
    # a second answer repeats Alpha word for word on the same passage: one pair, counted once
    again = {"id": "b", "statements": [{"text": "Alpha holds.", "citations": ["S1"]}]}
    return make_case(statements, sources=SOURCES, answers_extra=[again], labels=labels)


def _row(id_, text, passage, label, passage_text=None):
    return {"id": id_, "claim": text, "passages": [{"id": passage, "text": passage_text or f"passage {passage}"}],
            "label": label}


def _rows() -> list[dict]:
    rows = [_row(f"l{i}", text, p, human) for i, (text, p, _, human) in enumerate(CLAIMS, 1) if human]
    rows.append(_row("other-text", "Alpha holds.", "S1", "full", passage_text="a passage the run never cited"))
    rows.append(_row("other-claim", "Iota holds.", "S1", "full"))
    return rows


def _write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def run(tmp_path, runner) -> str:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(_case()), encoding="utf-8")
    out = tmp_path / "run.json"
    result = runner.invoke(main, ["score", str(cases), "--missing-labels", "skip", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return str(out)


@pytest.fixture
def labels(tmp_path) -> str:
    return _write_jsonl(tmp_path / "human.jsonl", _rows())


# --- the figures, by hand -----------------------------------------------------------------------------

# Counted pairs (human, judge): Alpha (full, full), Beta (full, full), Gamma (partial, full),
# Delta (none, none), Epsilon (none, partial), Zeta (contradicts, contradicts): 4 of 6 agree.
# Human marginals: full 2, partial 1, none 2, contradicts 1; judge: full 3, partial 1, none 1,
# contradicts 1. Chance agreement pe = (2*3 + 1*1 + 2*1 + 1*1) / 36 = 10/36, so
# kappa = (24/36 - 10/36) / (1 - 10/36) = 14/26 = 7/13.
# Full vs rest, human as gold: both human-full pairs found (1.0); 3 of the 4 others not called full
# (0.75): balanced accuracy 0.875.
KAPPA = 7 / 13


def test_figures_on_a_constructed_run(run, labels):
    result = agree(read_runlog(run), load_labels(labels), resamples=200, seed=1)
    assert (result["n"], result["agree"]) == (6, 4)
    assert result["agreement"] == pytest.approx(4 / 6)
    assert result["kappa"] == pytest.approx(KAPPA)
    assert result["balanced_accuracy"] == pytest.approx(0.875)
    assert result["undefined"] is None
    expected = {g: {p: 0 for p in LABELS} for g in LABELS}
    for g, p in [("full", "full"), ("full", "full"), ("partial", "full"), ("none", "none"), ("none", "partial"),
                 ("contradicts", "contradicts")]:
        expected[g][p] += 1
    assert result["confusion"] == expected
    for name in ("agreement", "kappa", "balanced_accuracy"):
        lo, hi = result[f"{name}_ci"]
        assert lo <= result[name] <= hi


def test_disagreements_and_what_is_left_out(run, labels):
    result = agree(read_runlog(run), load_labels(labels), resamples=50)
    assert [(d["text"], d["citations"], d["human"], d["judge"], d["labels"]) for d in result["disagreements"]] == [
        ("Gamma holds.", ["S3"], "partial", "full", ["l3"]),
        ("Epsilon holds.", ["S5"], "none", "partial", ["l5"])]
    assert result["disagreements"][0]["claims"] == ["t/a claim 3.1"]
    assert [(p["text"], p["human"], p["judge"], p["not_counted"]) for p in result["not_counted"]] == [
        ("Eta holds.", "none", "unjudged", "unjudged")]
    # the label with another passage text and the label of a claim the run does not make match nothing
    assert result["unmatched_labels"] == ["other-text", "other-claim"]
    assert result["unlabelled_claims"] == 1  # Theta


def test_a_claim_repeated_in_two_answers_is_one_pair(run, labels):
    found = compare(claims_of_log(read_runlog(run)), load_labels(labels).rows, resamples=0)
    alpha = next(p for p in found.pairs if p.text == "Alpha holds.")
    assert alpha.claims == ["t/a claim 1.1", "t/b claim 1.1"]
    assert found.figures["n"] == 6


def test_reviewers_who_differ_are_listed_apart(run, tmp_path):
    path = _write_jsonl(tmp_path / "two.jsonl", [*_rows(), _row("zeta-again", "Zeta holds.", "S6", "none")])
    result = agree(read_runlog(run), load_labels(path), resamples=50)
    assert result["n"] == 5
    zeta = next(p for p in result["not_counted"] if p["text"] == "Zeta holds.")
    assert (zeta["human"], zeta["not_counted"], zeta["labels"]) == ("contradicts / none", "reviewers differ",
                                                                     ["l6", "zeta-again"])


def test_an_uncertain_judgment_is_listed_apart():
    def claim(text, judgment):
        shown = ClaimResult(statement=0, index=0, id=None, text=text, citations=["S1"], facts=[], judgment=judgment)
        return RunClaim("c", "a", 0, 0, text, ("S1",), ("passage S1",), judgment, shown.label, shown.explanation)

    sure = Judgment(label="full", judge="j")
    unsure = Judgment(label="full", judge="j", uncertain=True, explanation="p(support) 0.52")
    rows = parse_rows([json.dumps(_row(x, f"{x}.", "S1", "none")) for x in "ABC"])
    found = compare([claim("A.", sure), claim("B.", unsure), claim("C.", sure)], rows, resamples=0)
    assert [(p.text, p.judge, p.not_counted) for p in found.not_counted] == [("B.", "uncertain", "uncertain")]
    assert found.not_counted[0].explanation == "the judge's best guess is full; p(support) 0.52"
    assert (found.figures["n"], found.figures["agree"]) == (2, 0)
    assert [p.text for p in found.disagreements] == ["A.", "C."]


@pytest.mark.parametrize("count", [0, 1])
def test_fewer_than_two_pairs_leave_the_figures_undefined(run, tmp_path, count):
    path = _write_jsonl(tmp_path / "few.jsonl", _rows()[:count] + [_row("nothing", "Iota holds.", "S1", "full")])
    result = agree(read_runlog(run), load_labels(path), resamples=50)
    assert result["n"] == count
    assert all(result[k] is None for k in ("agreement", "agreement_ci", "kappa", "kappa_ci", "balanced_accuracy"))
    assert result["undefined"] == f"needs at least 2 claims with a human and a judge label; {count} so far"


def test_figures_threshold_and_no_resamples():
    out = figures(["full", "none", "none"], ["full", "none", "full"], resamples=0, min_pairs=3)
    assert (out["n"], out["agree"], out["agreement_ci"], out["kappa_ci"]) == (3, 2, None, None)
    # po = 2/3; human full 1/3 none 2/3, judge full 2/3 none 1/3: pe = 2/9 + 2/9 = 4/9; kappa = (2/9)/(5/9)
    assert out["kappa"] == pytest.approx(0.4)
    assert figures(["full", "none"], ["full", "none"], min_pairs=3)["kappa"] is None


# --- the desk's export as the labels --------------------------------------------------------------------


def _desk_export(tmp_path, reviewers=(("maya", "none", "partial"),)) -> str:
    pytest.importorskip("fastapi")
    from citeaudit.cli import desk_session
    from citeaudit.run.log import write_runlog

    session = desk_session(())
    for reviewer, first, second in reviewers:
        session.set_human_label("returns-desk", "original", 0, 0, first, "S2 has no window", reviewer)
        session.set_human_label("returns-desk", "original", 1, 0, second, "", reviewer)
    path = tmp_path / "desk-run.json"
    write_runlog(path, session.export())
    return str(path)


def test_the_desk_export_is_read_as_labels(tmp_path):
    path = _desk_export(tmp_path)
    labels = load_labels(path)
    assert labels.format == "desk export"
    assert [(r.claim, [p.id for p in r.passages], r.label, r.source) for r in labels.rows] == [
        ("Standard items may be returned within 30 days of delivery.", ["S2"], "none", "human:maya"),
        ("A receipt is required to return a standard item.", ["S2"], "partial", "human:maya")]
    # the export is a run log too: its own claims against its own human labels
    result = agree(read_runlog(path), labels, resamples=50)
    # (none, none) agrees, (partial, full) does not; po = 1/2, pe = 1/4 (only `none` on both sides),
    # kappa = (1/2 - 1/4) / (3/4) = 1/3
    assert (result["n"], result["agree"]) == (2, 1)
    assert result["kappa"] == pytest.approx(1 / 3)
    receipt = result["disagreements"][0]
    assert (receipt["human"], receipt["judge"]) == ("partial", "full")
    # the receipt claim is made, on the same passage, in three answers
    assert receipt["claims"] == ["returns-desk/original claim 2.1", "returns-desk/repaired claim 2.1",
                                 "returns-desk/padded claim 2.1"]
    assert result["unmatched_labels"] == []


def test_desk_reviewers_who_differ(tmp_path):
    path = _desk_export(tmp_path, (("maya", "none", "partial"), ("ana", "none", "full")))
    result = agree(read_runlog(path), load_labels(path), resamples=50)
    assert (result["n"], result["agree"]) == (1, 1)  # both say none; the receipt pair is in dispute
    assert [(p["human"], p["not_counted"]) for p in result["not_counted"]] == [("full / partial", "reviewers differ")]
    assert result["kappa"] is None


def test_a_run_log_of_another_judge_is_bad_labels(run, tmp_path):
    judged = write_run(tmp_path / "set-run.json", load(_case()), SetJudge({}))
    with pytest.raises(InputError) as err:
        load_labels(judged)
    assert str(err.value) == (f"{judged}: judgments: no human labels: the run was judged by set@test; labels come "
                              "from a desk export (judgments whose judge starts with 'human:'), a run scored with "
                              "the curated judge, case files with labels, or labelled pairs")


@pytest.fixture
def streamed_run(tmp_path, runner) -> str:
    """The run of `run`, scored from JSON lines into a streamed run log."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(_case()) + "\n", encoding="utf-8")
    out = tmp_path / "run.jsonl"
    result = runner.invoke(main, ["score", str(cases), "--missing-labels", "skip", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return str(out)


def test_a_streamed_run_log_is_read_like_a_whole_one(run, streamed_run, labels, runner):
    from citeaudit.run.log import is_stream

    assert is_stream(streamed_run) and not is_stream(run)
    outputs = []
    for log in (streamed_run, run):
        result = runner.invoke(main, ["agree", log, "--labels", labels, "--format", "json", "--resamples", "50"])
        assert result.exit_code == 0, result.output
        outputs.append(json.loads(result.output))
    assert (outputs[0]["n"], outputs[0]["agree"]) == (6, 4)
    assert outputs[0]["kappa"] == pytest.approx(KAPPA)
    assert outputs[0] == outputs[1]


def test_a_streamed_run_log_given_as_labels_is_read_as_a_run_log(streamed_run, run):
    # recognised as a run log (a curated one: its judgments are the labels), not read as labelled pairs
    labels = load_labels(streamed_run)
    assert labels.format == "curated run log"
    assert labels.rows == load_labels(run).rows


# --- bad input and the command line ---------------------------------------------------------------------


def test_bad_label_rows_are_located(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_row("a", "Alpha holds.", "S1", "full")) + "\n"
                    + json.dumps(_row("b", "Beta holds.", "S2", "maybe")) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_labels(path)
    assert [str(p) for p in err.value.problems] == [
        f"{path}:2: label: must be one of full, partial, none, contradicts, got 'maybe'",
        f"{path}:3: not valid JSON: Expecting property name enclosed in double quotes (column 2)"]


def test_cli_text(run, labels, runner):
    result = runner.invoke(main, ["agree", run, "--labels", labels, "--resamples", "50"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "pairs with both labels (n)    6\n" in out
    assert f"kappa (4 labels)              {KAPPA:.3f} [" in out
    assert "agreement (same label)        0.667 [" in out
    assert "BAcc (full vs rest)           0.875 [" in out
    assert "partial                1           0           0           0\n" in out
    assert "disagreements (2):\n  [t/a claim 3.1] Gamma holds.\n    cites S3: human partial, judge full" in out
    assert "not counted, unjudged (1):\n  [t/a claim 7.1] Eta holds.\n    cites S7: human none, judge unjudged" in out
    assert "human labels that matched no claim: 2 (other-text, other-claim)\n" in out
    assert "claims of the run with no human label: 1\n" in out
    assert "intervals: bootstrap 95 % (percentile, 50 resamples, seed 0)" in out


def test_intervals_draw_pairs_that_share_a_passage_together(tmp_path, runner):
    # 48 claims, two citing each of 24 passages: 24 groups. The run (curated) and the person disagree on
    # both claims of the first three passages.
    cited = [f"S{k}" for k in range(24) for _ in range(2)]
    run_labels = ["full" if i % 4 < 2 else "none" for i in range(48)]
    human = [("none" if label == "full" else "full") if i < 6 else label for i, label in enumerate(run_labels)]
    statements = [{"text": f"Claim {i} holds.", "citations": [p]} for i, p in enumerate(cited)]
    case = make_case(statements, sources=tuple(dict.fromkeys(cited)),
                     labels=[{"claim": f"Claim {i} holds.", "passages": [p], "label": label}
                             for i, (p, label) in enumerate(zip(cited, run_labels))])
    (tmp_path / "cases.json").write_text(json.dumps(case), encoding="utf-8")
    out = tmp_path / "run.json"
    assert runner.invoke(main, ["score", str(tmp_path / "cases.json"), "--out", str(out)]).exit_code == 0
    labels = _write_jsonl(tmp_path / "h.jsonl", [_row(f"h{i}", f"Claim {i} holds.", p, label)
                                                 for i, (p, label) in enumerate(zip(cited, human))])

    def found(path=labels, *extra) -> dict:
        result = runner.invoke(main, ["agree", str(out), "--labels", path, "--format", "json",
                                      "--resamples", "300", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    grouped, single = found(), found(labels, "--resample-by", "pairs")
    assert grouped["resampling"] == {"by": "groups", "units": 24, "largest": 2}
    assert single["resampling"] == {"by": "pairs", "units": 48}
    assert grouped["agreement"] == single["agreement"] == pytest.approx(42 / 48)
    # a claim's twin agrees or disagrees with it: drawing them apart claims more certainty than there is
    width = {k: r["agreement_ci"][1] - r["agreement_ci"][0] for k, r in (("groups", grouped), ("pairs", single))}
    assert width["groups"] > 1.2 * width["pairs"]
    text = runner.invoke(main, ["agree", str(out), "--labels", labels, "--resamples", "50"]).output
    assert text.endswith("intervals: bootstrap 95 % (percentile, 50 resamples, seed 0), drawing whole groups of "
                         "pairs that share a claim or a passage: 24 groups, the largest 2 pairs\n")
    # the labels of four passages only: 4 groups, too few to draw whole: a jackknife beside the pairs one by one
    few = _write_jsonl(tmp_path / "few.jsonl", [_row(f"h{i}", f"Claim {i} holds.", p, label)
                                                for i, (p, label) in enumerate(zip(cited, human)) if i < 8])
    assert found(few)["resampling"] == {"by": "jackknife", "units": 4, "largest": 2}


def test_cli_json_and_the_same_seed_gives_the_same_intervals(run, labels, runner):
    args = ["agree", run, "--labels", labels, "--format", "json", "--resamples", "50", "--seed", "3"]
    first = json.loads(runner.invoke(main, args).output)
    assert first == json.loads(runner.invoke(main, args).output)
    assert (first["n"], first["labels"]["format"], first["labels"]["rows"]) == (6, "labelled pairs", 9)
    assert first["kappa"] == pytest.approx(KAPPA)


def test_cli_undefined_figures_say_n_a(run, tmp_path, runner):
    path = _write_jsonl(tmp_path / "one.jsonl", _rows()[:1])
    result = runner.invoke(main, ["agree", run, "--labels", path])
    assert result.exit_code == 0, result.output
    assert "kappa (4 labels)              n/a\n" in result.output
    assert "figures n/a: needs at least 2 claims with a human and a judge label; 1 so far" in result.output


def test_cli_bad_input_exits_2(run, tmp_path, runner):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_row("a", "Alpha holds.", "S1", "maybe")) + "\n", encoding="utf-8")
    result = runner.invoke(main, ["agree", run, "--labels", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:1: label: must be one of" in result.output
    not_a_log = tmp_path / "labels-as-run.json"
    not_a_log.write_text("[]", encoding="utf-8")
    result = runner.invoke(main, ["agree", str(not_a_log), "--labels", str(bad)])
    assert result.exit_code == 2 and "not a citeaudit run log" in result.output
    assert runner.invoke(main, ["agree", run]).exit_code == 2  # --labels is required


def test_labels_object_is_what_agree_reads(run):
    rows = parse_rows([json.dumps(r) for r in _rows()], "inline")
    result = agree(read_runlog(run), Labels("inline", "labelled pairs", rows), resamples=20)
    assert result["labels"] == {"file": "inline", "format": "labelled pairs", "rows": 9}


# --- a dataset's own labels: a curated run, case files, another tool's files ------------------------------

# The `_case()` claims judged by another judge: Alpha and Beta full, every other claim none.
OTHER_JUDGE = SetJudge({"Alpha holds.": [{"S1"}], "Beta holds.": [{"S2"}]})
# Against the curated labels of `_case()` (Eta has none): Alpha, Beta and Delta agree; Gamma (full/none),
# Epsilon (partial/none), Zeta (contradicts/none) and Theta (full/none) do not.
OTHER_PAIRS = 7
OTHER_AGREE = 3


def _figures_of(result: dict) -> dict:
    """What two sources of the same labels must agree on (the labels' ids name their source)."""
    kept = ("n", "agree", "agreement", "kappa", "balanced_accuracy", "confusion", "unlabelled_claims",
            "unlabelled_by_rule")
    return {**{k: result[k] for k in kept}, "unmatched": len(result["unmatched_labels"]),
            "pairs": sorted((p["text"], p["human"], p["judge"]) for p in (*result["disagreements"],
                                                                          *result["not_counted"]))}


@pytest.fixture
def other_run(tmp_path) -> str:
    return write_run(tmp_path / "other.json", load(_case()), OTHER_JUDGE)


def test_a_curated_run_log_gives_its_judgments_as_labels(run, other_run):
    labels = load_labels(run)
    assert labels.format == "curated run log"
    # every pair the curated judge labelled (Alpha once, though two answers make it); Eta has no label
    assert sorted((r.claim, [p.id for p in r.passages], r.label) for r in labels.rows) == sorted(
        (text, [p], auto) for text, p, auto, _ in CLAIMS if auto)
    result = agree(read_runlog(other_run), labels, resamples=0)
    assert (result["n"], result["agree"]) == (OTHER_PAIRS, OTHER_AGREE)
    assert result["unlabelled_claims"] == 1 and result["unmatched_labels"] == []  # Eta


def test_case_files_with_labels_are_labels(run, other_run, tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(_case(), indent=1), encoding="utf-8")
    labels = load_labels(cases)
    assert (labels.format, len(labels.rows)) == ("case file", 7)
    from_cases = agree(read_runlog(other_run), labels, resamples=50)
    from_run = agree(read_runlog(other_run), load_labels(run), resamples=50)
    assert _figures_of(from_cases) == _figures_of(from_run)
    lines = tmp_path / "cases.jsonl"  # JSON lines of cases are cases too, not labelled pairs
    lines.write_text(json.dumps(_case()) + "\n", encoding="utf-8")
    assert load_labels(lines).format == "case file"


def test_a_case_file_without_labels_is_refused(tmp_path):
    path = tmp_path / "bare.json"
    path.write_text(json.dumps({**_case(), "labels": []}), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_labels(path)
    assert str(err.value) == (f"{path}: labels: no case has labels (each case's `labels`: the human labels the "
                              "curated judge reads)")


EXPERTQA = Path(__file__).parent / "fixtures" / "formats" / "expertqa_rand_val_sample.jsonl"


def test_expert_labels_from_the_dataset_or_its_curated_run(tmp_path, runner):
    """ExpertQA's experts' labels, read from the file itself (--from expertqa) or from the run that scored
    it with the curated judge, give the same agreement; claims that cite nothing are no judge's to agree on."""
    from citeaudit.cli.common import load_inputs

    experts = tmp_path / "experts.json"
    scored = runner.invoke(main, ["score", "--from", "expertqa", str(EXPERTQA), "--metrics", "support",
                                  "--missing-labels", "skip", "--out", str(experts)])
    assert scored.exit_code == 0, scored.output
    cases = load_inputs([str(EXPERTQA)], fmt="expertqa")
    everything_full = SetJudge({c.text: [set()] for rc in cases for a in rc.case.answers for s in a.statements
                                for c in s.atomic_claims()})
    other = write_run(tmp_path / "other.json", cases, everything_full)
    outputs = []
    for extra in ([str(experts)], [str(EXPERTQA), "--from", "expertqa"]):
        result = runner.invoke(main, ["agree", other, "--labels", *extra, "--format", "json", "--resamples", "20"])
        assert result.exit_code == 0, result.output
        outputs.append(json.loads(result.output))
    from_run, from_file = outputs
    assert (from_run["labels"]["format"], from_file["labels"]["format"]) == ("curated run log", "expertqa file")
    assert _figures_of(from_run) == _figures_of(from_file)
    labels = read_runlog(experts).results.summary.labels
    # every claim the experts labelled and that cites something is a pair; the judge calls each full
    assert from_file["n"] == sum(labels[x] for x in LABELS) - from_file["unlabelled_by_rule"]
    assert from_file["agree"] == labels["full"]
    assert from_file["unlabelled_by_rule"] > 0


def test_reader_options_reach_the_reader_and_need_from(run, runner):
    result = runner.invoke(main, ["agree", run, "--labels", str(EXPERTQA), "--from", "expertqa", "--option", "x=1"])
    assert result.exit_code == 2 and "unknown option 'x' for the expertqa reader" in result.output
    result = runner.invoke(main, ["agree", run, "--labels", run, "--option", "x=1"])
    assert result.exit_code == 2 and "reader options need --from FORMAT" in result.output


def test_claims_a_rule_labelled_are_no_pair_and_are_counted_apart(tmp_path, runner):
    # two claims cite nothing: a rule labels them none, whoever the judge; they agree with nothing
    statements = [{"text": "Alpha holds.", "citations": ["S1"]}, {"text": "Beta holds.", "citations": ["S2"]},
                  {"text": "Kappa holds.", "citations": []}, {"text": "Lambda holds.", "citations": []}]
    case = make_case(statements, labels=[{"claim": "Alpha holds.", "passages": ["S1"], "label": "full"},
                                         {"claim": "Beta holds.", "passages": ["S2"], "label": "none"}])
    curated = write_run(tmp_path / "curated.json", load(case), make_judge("curated", load(case)))
    other = write_run(tmp_path / "other.json", load(case), SetJudge({"Alpha holds.": [{"S1"}]}))
    result = agree(read_runlog(other), load_labels(curated), resamples=0)
    assert (result["n"], result["agree"], result["unlabelled_claims"], result["unlabelled_by_rule"]) == (2, 2, 2, 2)
    out = runner.invoke(main, ["agree", other, "--labels", curated]).output
    assert ("claims of the run with no human label: 2\n  of which a rule labelled (they cite nothing, or name no "
            "passage; no judge was asked): 2\n") in out


def test_the_figures_on_the_claims_the_judge_has_not_seen(run, labels, tmp_path):
    from citeaudit.judges.seen import SeenClaims, claim_key
    from citeaudit.run.agree import seen_pairs

    judged = compare(claims_of_log(read_runlog(run)), load_labels(labels).rows).judged
    seen = SeenClaims(tmp_path / "trained_on.txt.gz", frozenset({claim_key("alpha holds"), claim_key("Gamma holds.")}),
                      "made up")
    found = seen_pairs(seen, judged, resamples=100, seed=1)
    assert (found["claims"], found["of"], found["covers"]) == (2, 6, "made up")
    # seen: Alpha (full, full), Gamma (partial, full): full 1 of 1 found, the rest 0 of 1 kept: BAcc 1/2.
    # unseen: Beta (full, full), Delta (none, none), Epsilon (none, partial), Zeta (contradicts, contradicts):
    # full 1 of 1, the rest 3 of 3 not full: BAcc 1; 3 of 4 the same label
    assert (found["seen"]["n"], found["seen"]["balanced_accuracy"], found["seen"]["agreement"]) == (
        2, pytest.approx(0.5), pytest.approx(0.5))
    assert (found["unseen"]["n"], found["unseen"]["balanced_accuracy"], found["unseen"]["agreement"]) == (
        4, pytest.approx(1.0), pytest.approx(0.75))
    # the run's judge (curated: the cases' own labels) reads no judge directory
    assert agree(read_runlog(run), load_labels(labels), resamples=10)["seen"] == {
        "claims": None, "of": 6, "unknown": "curated reads no judge directory"}


# --- every pair, unsure ones at the judge's best guess, and several runs on the same pairs ---------------


class TableJudge:
    """Gives each claim text the label its table names, marked uncertain where the table says so; a text
    not in the table is `none`, sure."""

    name = "table"

    def __init__(self, table: dict[str, tuple[str, bool]], signature: str = "table@test"):
        self.table, self.signature = table, signature

    def judge(self, text, passages) -> Judgment:
        label, unsure = self.table.get(text, ("none", False))
        return Judgment(label=label, judge=self.signature, uncertain=True if unsure else None)


def _table_run(path, table, drop=(), signature="table@test") -> str:
    """The `_case()` claims (less the texts in `drop`) judged by a TableJudge, as a run log."""
    case = _case()
    case["answers"][0]["statements"] = [s for s in case["answers"][0]["statements"] if s["text"] not in drop]
    return write_run(path, load(case), TableJudge(table, signature))


SURE = {"Alpha holds.": ("full", False), "Beta holds.": ("full", False), "Gamma holds.": ("full", False),
        "Delta holds.": ("none", False), "Epsilon holds.": ("partial", False),
        "Zeta holds.": ("contradicts", False), "Eta holds.": ("none", False), "Theta holds.": ("full", False)}


def _unsure(table, **changes):
    """`table` with the claims named (their first word) given another label, marked uncertain."""
    return {**table, **{f"{word.capitalize()} holds.": (label, True) for word, label in changes.items()}}


# The seven labelled pairs (human: Alpha full, Beta full, Gamma partial, Delta none, Epsilon none, Zeta
# contradicts, Eta none; Theta has no label), judged by a TableJudge; figures by hand.
# - sure of all: Gamma (partial/full) and Epsilon (none/partial) disagree: 5 of 7 agree; BAcc (full vs
#   rest): human-full 2 of 2 found, 4 of the 5 others not called full (Gamma is): (1 + 0.8) / 2 = 0.9.
# - unsure of Alpha (guess full) and Beta (guess none): confident pairs Gamma..Eta, 3 of 5 agree, no
#   human-full pair among them so BAcc is the others' recall, 4/5; every pair: 4 of 7 agree, BAcc
#   (1/2 + 4/5) / 2 = 0.65. Kappa over every pair: both sides full 2, partial 1, none 3, contradicts 1,
#   pe = (4 + 1 + 9 + 1) / 49 = 15/49, po = 28/49, kappa = 13/34.
# - unsure of every pair (the same guesses as sure of all): no confident pair, so those figures are
#   undefined; every pair's are those of "sure of all".
EVERY_PAIR_TABLE = [
    # name, judge table, n, agree, BAcc, n_all, agree_all, BAcc_all, coverage
    ("sure of all", SURE, 7, 5, 0.9, 7, 5, 0.9, 1.0),
    ("unsure of two", _unsure(SURE, alpha="full", beta="none"), 5, 3, 0.8, 7, 4, 0.65, 5 / 7),
    ("unsure of every pair", {t: (label, True) for t, (label, _) in SURE.items()}, 0, 0, None, 7, 5, 0.9, 0.0),
]


@pytest.mark.parametrize("name, table, n, agree_, bacc, n_all, agree_all, bacc_all, coverage", EVERY_PAIR_TABLE,
                         ids=[row[0] for row in EVERY_PAIR_TABLE])
def test_every_pair_counts_an_unsure_pair_at_its_best_guess(tmp_path, name, table, n, agree_, bacc, n_all,
                                                              agree_all, bacc_all, coverage):
    path = _table_run(tmp_path / "run.json", table)
    result = agree(read_runlog(path), load_labels(_write_jsonl(tmp_path / "h.jsonl", _rows())), resamples=20)
    assert (result["n"], result["agree"], result["n_all"], result["agree_all"]) == (n, agree_, n_all, agree_all)
    assert result["balanced_accuracy"] == (None if bacc is None else pytest.approx(bacc))
    assert result["balanced_accuracy_all"] == pytest.approx(bacc_all)
    assert result["agreement_all"] == pytest.approx(agree_all / n_all)
    assert result["coverage"] == pytest.approx(coverage)
    lo, hi = result["balanced_accuracy_all_ci"]
    assert lo <= bacc_all <= hi
    # the unsure pairs are still listed apart, each with its best guess
    labelled = {text for text, _, _, human in CLAIMS if human}
    assert sorted((p["text"], p["best_guess"]) for p in result["not_counted"] if p["not_counted"] == "uncertain") \
        == sorted((text, label) for text, (label, unsure) in table.items() if unsure and text in labelled)


def test_every_pair_kappa_by_hand(tmp_path):
    path = _table_run(tmp_path / "run.json", _unsure(SURE, alpha="full", beta="none"))
    result = agree(read_runlog(path), load_labels(_write_jsonl(tmp_path / "h.jsonl", _rows())), resamples=0)
    assert result["kappa_all"] == pytest.approx(13 / 34)
    assert result["undefined_all"] is None


def test_cli_text_names_both_figures_and_the_coverage(tmp_path, runner):
    path = _table_run(tmp_path / "run.json", _unsure(SURE, alpha="full", beta="none"))
    labels = _write_jsonl(tmp_path / "h.jsonl", _rows())
    out = runner.invoke(main, ["agree", path, "--labels", labels, "--resamples", "50"]).output
    assert ("confident pairs only (a pair the judge was unsure of left out):\n"
            "pairs with both labels (n)    5\n"
            "agreement (same label)        0.600 [") in out
    assert ("every pair (unsure → best guess):\n"
            "pairs with both labels (n)    7\n"
            "agreement (same label)        0.571 [") in out
    assert "BAcc (full vs rest)           0.650 [" in out
    assert "coverage (share not unsure)   5/7 (71.4 %)\n" in out
    data = json.loads(runner.invoke(main, ["agree", path, "--labels", labels, "--format", "json",
                                           "--resamples", "50"]).output)
    assert (data["n_all"], data["coverage"]) == (7, pytest.approx(5 / 7))
    assert data["balanced_accuracy_all"] == pytest.approx(0.65) and len(data["balanced_accuracy_all_ci"]) == 2
    assert {"agreement_all", "agreement_all_ci", "kappa_all", "kappa_all_ci", "agree_all", "undefined_all"} <= set(data)


# Two runs unsure of different pairs, the second over a case without Eta (so it never judged Eta):
# the same pairs are the six both judged, Alpha..Zeta.
# - run 1, unsure of Alpha (full) and Beta (none): confident Gamma (partial/full), Delta, Epsilon
#   (none/partial), Zeta: 2 of 4 agree, BAcc the others' recall 3/4; every pair 3 of 6 agree, BAcc
#   (1/2 + 3/4) / 2 = 0.625.
# - run 2, unsure of Gamma (full) and Epsilon (none), Zeta none: confident Alpha, Beta, Delta, Zeta
#   (contradicts/none): 3 of 4 agree, BAcc (1 + 1) / 2 = 1; every pair 4 of 6, BAcc (1 + 3/4) / 2 = 0.875.
# Run 2's every-pair BAcc minus run 1's: 0.25.
RUN_1 = _unsure(SURE, alpha="full", beta="none")
RUN_2 = _unsure({**SURE, "Zeta holds.": ("none", False)}, gamma="full", epsilon="none")


@pytest.fixture
def two_runs(tmp_path) -> tuple[str, str, str]:
    first = _table_run(tmp_path / "one.json", RUN_1, signature="one@test")
    second = _table_run(tmp_path / "two.json", RUN_2, drop=("Eta holds.",), signature="two@test")
    return first, second, _write_jsonl(tmp_path / "h.jsonl", _rows())


def test_several_runs_are_measured_on_the_same_pairs(two_runs):
    from citeaudit.run.agree import agree_runs

    first, second, labels = two_runs
    alone = agree(read_runlog(first), load_labels(labels), resamples=0)
    assert alone["n_all"] == 7  # run 1 alone also counts Eta, which run 2 never judged
    result = agree_runs([(first, read_runlog(first)), (second, read_runlog(second))], load_labels(labels),
                        resamples=200, seed=1)
    assert (result["pairs"], result["left_out"]) == (6, 1)
    one, two = result["runs"]
    assert (one["run"], one["judge"], two["judge"]) == (first, "one@test", "two@test")
    assert [(r["n"], r["agree"], r["n_all"], r["agree_all"]) for r in (one, two)] == [(4, 2, 6, 3), (4, 3, 6, 4)]
    assert [r["balanced_accuracy"] for r in (one, two)] == [pytest.approx(0.75), pytest.approx(1.0)]
    assert [r["balanced_accuracy_all"] for r in (one, two)] == [pytest.approx(0.625), pytest.approx(0.875)]
    assert [r["coverage"] for r in (one, two)] == [pytest.approx(4 / 6)] * 2
    assert (one["balanced_accuracy_all_difference"], one["balanced_accuracy_all_difference_ci"]) == (None, None)
    assert two["balanced_accuracy_all_difference"] == pytest.approx(0.25)
    lo, hi = two["balanced_accuracy_all_difference_ci"]
    assert lo <= 0.25 <= hi
    # one run alone, on all its pairs, gives what `agree` gives it: the same pairs, in the same order
    (solo,) = agree_runs([(first, read_runlog(first))], load_labels(labels), resamples=200, seed=1)["runs"]
    alone = agree(read_runlog(first), load_labels(labels), resamples=200, seed=1)
    assert {k: solo[k] for k in alone if k in solo} == {k: alone[k] for k in solo if k in alone}


def test_cli_several_runs_one_table(two_runs, runner):
    first, second, labels = two_runs
    result = runner.invoke(main, ["agree", first, second, "--labels", labels, "--resamples", "50"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"run 1: {first} (judge: one@test)\nrun 2: {second} (judge: two@test)\n" in out
    assert "the same pairs for every run: 6 (labelled pairs that every run judged, unsure included)\n" in out
    assert "left out: 1 (labelled pairs some run judged and another did not)\n" in out
    # each row: n and BAcc after the row's title (41 characters)
    rows = [line[41:].split()[:2] for line in out.splitlines()
            if line.startswith(("run 1  ", "run 2  ", "       every"))]
    assert rows == [["4", "0.750"], ["6", "0.625"], ["4", "1.000"], ["6", "0.875"]]
    assert len(re.findall(r"\n {7}coverage \(share not unsure\) +4/6 \(66\.7 %\)\n", out)) == 2
    assert "every pair's BAcc minus run 1's (paired bootstrap over the same pairs):\nrun 2 - run 1  +0.250 [" in out
    data = json.loads(runner.invoke(main, ["agree", first, second, "--labels", labels, "--format", "json",
                                           "--resamples", "50"]).output)
    assert data["pairs"] == 6
    assert [(r["n_all"], r["coverage"]) for r in data["runs"]] == [(6, pytest.approx(4 / 6))] * 2
    assert data["runs"][1]["balanced_accuracy_all"] == pytest.approx(0.875)
    assert data["runs"][1]["balanced_accuracy_all_difference"] == pytest.approx(0.25)


def test_cli_several_runs_bad_run_exits_2(two_runs, tmp_path, runner):
    first, _, labels = two_runs
    not_a_log = tmp_path / "nothing.json"
    not_a_log.write_text("[]", encoding="utf-8")
    result = runner.invoke(main, ["agree", first, str(not_a_log), "--labels", labels])
    assert result.exit_code == 2 and "not a citeaudit run log" in result.output


def test_several_runs_with_no_pair_in_common_say_why(two_runs, tmp_path, runner):
    first, second, _ = two_runs
    only_eta = _write_jsonl(tmp_path / "eta.jsonl", [_row("eta", "Eta holds.", "S7", "none")])  # run 2 lacks Eta
    result = runner.invoke(main, ["agree", first, second, "--labels", only_eta, "--resamples", "20"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "the same pairs for every run: 0 (" in out and "left out: 1 (" in out
    assert "coverage (share not unsure)" in out and "n/a (no pair judged)\n" in out
    assert "       figures n/a: needs at least 2 claims with a human and a judge label; 0 so far\n" in out
    assert "run 2 - run 1  n/a\n" in out
