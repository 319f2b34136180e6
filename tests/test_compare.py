"""compare at real size: runs named by system or file, each figure's difference with a paired bootstrap
interval over the shared answers, agreement of the two runs' labels, and the changed claims sorted by
how much the change matters."""

from __future__ import annotations

import json

import numpy as np
import pytest

from citeaudit.cli import main
from citeaudit.run.compare import ONE_RUN_RANK, change_rank, compare, comparison_json, format_comparison, run_names
from citeaudit.stats import bootstrap_interval, cohen_kappa, paired_ratio_differences

from run_copies import as_log, copied_run, resum, write


def _log(data: dict):
    return as_log(data)


def _relabel(data: dict, answer: str, claim: int, label: str) -> dict:
    record = next(a for a in data["results"]["answers"] if a["answer"] == answer)
    record["claims"][claim]["judgment"]["label"] = label
    supported = sum(c["judgment"]["label"] == "full" for c in record["claims"])
    record["metrics"]["support"].update(numerator=supported, value=supported / len(record["claims"]))
    return resum(data)


# --- the paired bootstrap --------------------------------------------------------------------------------

def test_a_paired_interval_resamples_both_runs_on_the_same_answers():
    rng = np.random.default_rng(3)
    den = rng.integers(1, 6, size=(40, 1))
    a, b = rng.integers(0, den + 1), rng.integers(0, den + 1)
    ((value, interval),) = paired_ratio_differences(a, den, b, den)
    assert value == pytest.approx(b.sum() / den.sum() - a.sum() / den.sum())

    def paired(ix):  # both ratios from the same resampled answers
        return b[ix].sum() / den[ix].sum() - a[ix].sum() / den[ix].sum()

    assert interval == pytest.approx(bootstrap_interval(paired, 40))
    assert interval[0] <= value <= interval[1]


def test_a_shared_difficulty_cancels_out_of_a_paired_interval():
    """B is A plus one supported claim in every other answer: the answers differ a lot, the runs'
    difference barely, so the paired interval is narrow where two unpaired ones would overlap."""
    rng = np.random.default_rng(0)
    den = np.full((200, 1), 4)
    a = rng.integers(0, 4, size=(200, 1))
    b = np.minimum(a + (np.arange(200) % 2)[:, None], 4)
    ((value, (lo, hi)),) = paired_ratio_differences(a, den, b, den)
    assert 0 < lo < value < hi and hi - lo < 0.06


def test_a_paired_interval_of_few_answers_spans_a_jackknife_over_them():
    """From 2 to 19 answers the percentile interval is widened to span the t interval of the difference
    recomputed with each answer left out in turn."""
    from citeaudit.stats import jackknife_interval, widest

    den = np.array([[4], [2], [3], [4], [1], [2]])
    a, b = np.array([[1], [2], [0], [3], [1], [1]]), np.array([[3], [2], [2], [4], [1], [2]])
    ((value, interval),) = paired_ratio_differences(a, den, b, den)

    def paired(ix):
        return b[ix].sum() / den[ix].sum() - a[ix].sum() / den[ix].sum()

    keep = np.arange(6)
    by_hand = jackknife_interval(value, [paired(keep[keep != i]) for i in range(6)], bounds=(-1.0, 1.0))
    assert interval == pytest.approx(widest(bootstrap_interval(paired, 6), by_hand))
    assert interval[0] < by_hand[0] + 1e-9 and interval[1] > by_hand[1] - 1e-9
    # one answer: nothing to leave out, and every resample the same
    assert paired_ratio_differences([[1]], [[2]], [[2]], [[2]]) == [(0.5, (0.5, 0.5))]


def test_an_undefined_figure_has_no_difference():
    assert paired_ratio_differences([[0]], [[0]], [[1]], [[1]]) == [(None, None)]
    assert paired_ratio_differences([], [], [], []) == []


# --- compare on runs -------------------------------------------------------------------------------------

def test_differences_are_over_the_paired_answers_and_the_figures_hold_them():
    a = copied_run(30)
    b = copied_run(30)
    for i in range(0, 30, 3):  # a third of B's answers A support one more claim
        _relabel(b, f"A-{i:05d}", 1, "full")
    result = compare(_log(a), _log(b))
    assert result.answers == (90, 90, 90)
    support = result.differences["support"]
    (_, ra, rb) = next(row for row in result.rows if row[0] == "support")
    assert support.value == pytest.approx(rb.value - ra.value) and support.value > 0
    assert support.interval[0] <= support.value <= support.interval[1]
    assert result.differences["coverage"].value == 0 and result.differences["coverage"].interval == (0.0, 0.0)
    assert compare(_log(a), _log(b)).differences == result.differences  # the seed is fixed


def test_answers_only_one_run_has_are_left_out_of_the_differences():
    a, b = copied_run(6), copied_run(4)
    result = compare(_log(a), _log(b))
    assert result.answers == (18, 12, 12)
    assert result.differences["support"].value == 0


def test_systems_of_one_run_pair_by_case():
    log = _log(copied_run(5))
    result = compare(log, log, "A", "C", "A", "C")
    assert result.answers == (5, 5, 5)
    assert result.differences["support"].value == pytest.approx(1 - 1 / 3)
    assert result.differences["support"].interval == pytest.approx((2 / 3, 2 / 3))


@pytest.mark.parametrize("a, b, rank", [
    ("full", "contradicts", 0), ("contradicts", "full", 0), ("none", "full", 1), ("full", "partial", 2),
    ("partial", "contradicts", 3), ("none", "contradicts", 3), ("partial", "none", 4), ("full", "uncertain", 5),
    ("unjudged", "none", 5), (None, "full", ONE_RUN_RANK), ("full", None, ONE_RUN_RANK),
])
def test_how_much_a_change_matters(a, b, rank):
    assert change_rank(a, b) == rank


def test_changed_claims_come_most_consequential_first_then_by_weight():
    a = copied_run(3)
    b = copied_run(3)
    _relabel(b, "A-00000", 1, "partial")       # none → partial (rank 4)
    _relabel(b, "C-00001", 0, "none")          # full → none in a three-claim answer (rank 1)
    _relabel(b, "B-00002", 0, "none")          # full → none in a one-claim answer (rank 1, weighs more)
    _relabel(b, "C-00002", 2, "contradicts")   # full → contradicts (rank 0)
    result = compare(_log(a), _log(b))
    assert [(d.where_a, d.a, d.b) for d in result.claims] == [
        ("case-00002/C-00002 claim 3.1", "full", "contradicts"),
        ("case-00002/B-00002 claim 1.1", "full", "none"),
        ("case-00001/C-00001 claim 1.1", "full", "none"),
        ("case-00000/A-00000 claim 2.1", "none", "partial"),
    ]


def test_label_agreement_on_shared_claims_counts_uncertain_apart():
    a = copied_run(4)
    b = copied_run(4)
    _relabel(b, "A-00000", 1, "partial")
    _relabel(b, "C-00003", 0, "contradicts")
    record = next(x for x in b["results"]["answers"] if x["answer"] == "C-00001")
    record["claims"][1]["judgment"]["uncertain"] = True
    resum(b)
    g = compare(_log(a), _log(b)).agreement
    labels_a = [c.label for x in _log(a).results.answers for c in x.claims]
    labels_b = [c.label for x in _log(b).results.answers for c in x.claims]
    counted = [(x, y) for x, y in zip(labels_a, labels_b) if y != "uncertain"]
    assert g["shared_claims"] == 28 and g["not_counted"] == 1 and g["n"] == 27
    assert g["agree"] == 25
    assert g["kappa"] == pytest.approx(cohen_kappa([x for x, _ in counted], [y for _, y in counted]))
    assert g["confusion"]["full"]["contradicts"] == 1 and g["confusion"]["none"]["partial"] == 1
    assert g["kappa_ci"][0] <= g["kappa"] <= g["kappa_ci"][1]


def test_label_agreement_intervals_draw_the_claims_of_an_answer_together():
    """Two runs that disagree on every claim of some answers: those claims are one piece of evidence, so
    an interval drawing answers is wider than one drawing claims; below 10 answers claims are drawn."""
    from citeaudit.run.agree import figures

    a, b = copied_run(8), copied_run(8)
    for record in b["results"]["answers"]:
        if record["answer"] in ("A-00001", "B-00003", "A-00005", "C-00006"):
            for claim in range(len(record["claims"])):
                _relabel(b, record["answer"], claim, "contradicts")
    g = compare(_log(a), _log(b)).agreement
    claims_per_answer = [len(x.claims) for x in _log(a).results.answers]
    assert g["resampling"] == {"by": "groups", "units": 24, "largest": max(claims_per_answer)}
    labels_a = [c.label for x in _log(a).results.answers for c in x.claims]
    labels_b = [c.label for x in _log(b).results.answers for c in x.claims]
    single = figures(labels_a, labels_b, 1000, 0)
    assert g["agreement"] == single["agreement"] < 1
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    assert width(g["agreement_ci"]) > width(single["agreement_ci"])
    text = format_comparison(compare(_log(a), _log(b)))
    assert (f"intervals: bootstrap, drawing whole groups of claims that share an answer: 24 groups, the largest "
            f"{max(claims_per_answer)} claims") in text
    few = compare(_log(copied_run(3)), _log(copied_run(3))).agreement
    assert few["resampling"] == {"by": "jackknife", "units": 9, "largest": max(claims_per_answer)}


def _left_unsure(data: dict, system: str, claims: tuple[int, ...], full: tuple[int, ...] = ()) -> dict:
    """Every answer of `system`: `claims` left unsure (their best guess kept), `full` judged full."""
    for record in data["results"]["answers"]:
        if record["system"] != system:
            continue
        for i in full:
            record["claims"][i]["judgment"]["label"] = "full"
        for i in claims:
            record["claims"][i]["judgment"]["uncertain"] = True
        decided = [c["judgment"] for c in record["claims"] if not c["judgment"].get("uncertain")]
        supported = sum(j["label"] == "full" for j in decided)
        record["metrics"]["support"].update(numerator=supported, denominator=len(decided),
                                            value=supported / len(decided) if decided else None)
    return resum(data)


def test_claims_a_judge_left_unsure_are_never_read_as_fewer_unsupported():
    """B's judge left unsure the 20 claims A's judged unsupported: B's support is higher only because they
    are out of it, so the reading says that, not that B makes 20 fewer unsupported claims."""
    a, b = copied_run(10), _left_unsure(copied_run(10), "A", (1, 2))
    result = compare(_log(a), _log(b))
    assert not any(" makes " in line for line in result.reading)  # neither run is said to make fewer
    assert result.reading[:3] == [
        "20 claims judged unsupported in A, 0 in B, but the claims left unsure could change that: neither is "
        "shown to make fewer unsupported claims (support 50/70 (71.4 %) vs 50/50 (100.0 %), judged claims only)",
        "claims left unsure, in no figure: 0 in A, 20 in B",
        "B left 20 claims unsure that A judged (A: 0 supported, 20 not)",
    ]
    assert result.unsure == {"a": 0, "b": 20, "a_unsure_b_judged": {}, "b_unsure_a_judged": {"none": 20}}
    # the other way round, the same claims, each run's side named
    back = compare(_log(b), _log(a))
    assert back.reading[2] == "A left 20 claims unsure that B judged (B: 0 supported, 20 not)"


def test_a_gap_the_unsure_claims_cannot_close_is_read_as_at_least_that_many_fewer():
    a = copied_run(10)
    b = _left_unsure(copied_run(10), "A", (1,), full=(2,))  # 10 judged full now, 10 left unsure
    result = compare(_log(a), _log(b))
    assert result.reading[0] == ("B makes at least 10 fewer unsupported claims than A, even if every claim left "
                                 "unsure is unsupported (support 50/70 (71.4 %) vs 60/60 (100.0 %), judged claims only)")
    assert result.reading[2] == "B left 10 claims unsure that A judged (A: 0 supported, 10 not)"
    assert "reading:\n  B makes at least 10 fewer" in format_comparison(result)
    assert comparison_json(result)["unsure"]["b_unsure_a_judged"] == {"none": 10}


def test_without_unsure_claims_the_reading_is_as_before():
    a, b = copied_run(3), copied_run(3)
    _relabel(b, "A-00000", 1, "full")
    result = compare(_log(a), _log(b))
    assert result.reading[0] == "B makes 1 fewer unsupported claim than A (support 15/21 (71.4 %) vs 16/21 (76.2 %))"
    assert result.unsure == {"a": 0, "b": 0, "a_unsure_b_judged": {}, "b_unsure_a_judged": {}}
    assert len(result.reading) == 2


# --- names and the command line ---------------------------------------------------------------------------

def _one_system(data: dict, system: str) -> dict:
    data["results"]["answers"] = [a for a in data["results"]["answers"] if a["system"] == "A"]
    for a in data["results"]["answers"]:
        a["system"] = system
    return resum(data)


def test_runs_are_named_by_system_then_file(tmp_path):
    many = _log(copied_run(2))
    gpt, llama = _log(_one_system(copied_run(2), "gpt")), _log(_one_system(copied_run(2), "llama"))
    assert run_names("x/a.json", gpt, None, "y/b.json", llama, None) == ("gpt", "llama")
    assert run_names("x/a.json", many, None, "y/b.json", many, None) == ("a.json", "b.json")
    assert run_names("x/a.json", gpt, None, "y/b.json", gpt, None) == ("gpt (a.json)", "gpt (b.json)")
    assert run_names("x/run.json", many, None, "y/run.json", many, None) == ("run.json (x/run.json)",
                                                                              "run.json (y/run.json)")
    assert run_names("r.json", many, "A", "r.json", many, "C") == ("A", "C")
    assert run_names("r.json", many, None, "r.json", many, None) == ("r.json (first)", "r.json (second)")


def test_cli_text_names_runs_and_lists_changes(runner, tmp_path):
    a = write(tmp_path / "before.json", _one_system(copied_run(25), "rag-v1"))
    b_data = _one_system(copied_run(25), "rag-v2")
    for i in range(25):
        _relabel(b_data, f"A-{i:05d}", 2, "partial")
    b = write(tmp_path / "after.json", b_data)
    result = runner.invoke(main, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    header = out.splitlines()[0]
    assert "rag-v1 (25 answers)" in header and "rag-v2 (25 answers)" in header
    assert "rag-v2 − rag-v1 on 25 paired answers" in header
    assert "(1000 resamples, seed 0; from 2 to 19 answers, widened to span a jackknife's t interval)" in out
    assert "confusion (rows: rag-v1, columns: rag-v2)" in out
    assert "claims whose label changed, most consequential first (25; 5 more with --details)" in out
    assert out.count("none → partial") == 20
    every = runner.invoke(main, ["compare", str(a), str(b), "--details"]).stdout
    assert every.count("none → partial") == 25


def test_cli_json_carries_differences_agreement_and_ranked_claims(runner, tmp_path):
    a = write(tmp_path / "a.json", copied_run(5))
    b_data = copied_run(5)
    _relabel(b_data, "A-00001", 1, "partial")
    _relabel(b_data, "C-00002", 0, "contradicts")
    b = write(tmp_path / "b.json", b_data)
    data = json.loads(runner.invoke(main, ["compare", str(a), str(b), "--format", "json"]).stdout)
    assert (data["a"], data["b"]) == ("a.json", "b.json")
    assert data["answers"] == {"a": 15, "b": 15, "paired": 15}
    assert data["bootstrap"]["resamples"] == 1000 and data["bootstrap"]["seed"] == 0
    support = data["measures"]["support"]["difference"]
    assert support["value"] < 0 and support["interval"][0] <= support["value"] <= support["interval"][1]
    assert data["agreement"]["n"] == 35 and data["agreement"]["agree"] == 33
    assert [(c["a"], c["b"], c["rank"]) for c in data["claims"]] == [("full", "contradicts", 0),
                                                                     ("none", "partial", 4)]


def test_the_refusal_still_names_the_fields_and_says_which_run_is_which(runner, tmp_path):
    a = write(tmp_path / "a.json", copied_run(2))
    other = copied_run(2)
    other["signature"]["nocite"] = "0"
    b = write(tmp_path / "b.json", other)
    refused = runner.invoke(main, ["compare", str(a), str(b)])
    assert refused.exit_code == 2
    assert "precision without citations: A n/a · B 0" in refused.output
    assert "(A: a.json · B: b.json)" in refused.output


# --- only claims both judges judged are compared ----------------------------------------------------------

def test_agreement_counts_only_claims_both_judges_judged(runner, tmp_path):
    """A curated run beside another judge's: claims that cite nothing are labelled none by a rule in both
    runs, and a claim the curated run has no label for is unjudged there; neither is an agreement."""
    from citeaudit.judges import make_judge
    from citeaudit.metrics import Settings

    from helpers import SetJudge, load, make_case, write_run

    statements = [{"text": t, "citations": c} for t, c in (
        ("Alpha holds.", ["S1"]), ("Beta holds.", ["S2"]), ("Gamma holds.", ["S3"]), ("Delta holds.", ["S1"]),
        ("Kappa holds.", []), ("Lambda holds.", []), ("Mu holds.", []), ("Eta holds.", ["S2"]))]
    labels = [{"claim": t, "passages": [p], "label": label} for t, p, label in (
        ("Alpha holds.", "S1", "full"), ("Beta holds.", "S2", "none"), ("Gamma holds.", "S3", "full"),
        ("Delta holds.", "S1", "none"))]  # Eta: no label
    cases = load(make_case(statements, labels=labels))
    curated = write_run(tmp_path / "curated.json", cases, make_judge("curated", cases),
                        Settings(missing_labels="skip"))
    other = write_run(tmp_path / "other.json", cases, SetJudge({"Alpha holds.": [{"S1"}], "Gamma holds.": [{"S1"}]}))
    result = runner.invoke(main, ["compare", curated, other, "--allow-mismatch", "--format", "json"])
    assert result.exit_code == 0, result.output
    g = json.loads(result.output)["agreement"]
    # judged in both: Alpha full/full, Beta none/none, Gamma full/none, Delta none/none; the three uncited
    # claims (none/none by rule) would have lifted kappa from 1/2 to 10/17
    assert (g["shared_claims"], g["n"], g["agree"]) == (8, 4, 3)
    assert g["not_counted_by_reason"] == {"rule": 3, "unjudged": 1} and g["not_counted"] == 4
    assert g["kappa"] == pytest.approx(cohen_kappa(["full", "none", "full", "none"], ["full", "none", "none", "none"]))
    assert g["kappa"] == pytest.approx(0.5)
    text = runner.invoke(main, ["compare", curated, other, "--allow-mismatch"]).output
    assert ("labels of the 8 claims both runs make (4 judged in both; 4 left out: 3 labelled by a rule in a run (it "
            "cites nothing, or names no passage: no judge was asked), 1 unjudged in a run):") in text
