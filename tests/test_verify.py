"""verify(): deliver / revise / abstain on the seed examples, policies, gaps, degenerate answers, the CLI."""

from __future__ import annotations

import json
from importlib import resources

import pytest

import citeaudit
from citeaudit import InputError, Judgment, Policy, Verification, verify
from citeaudit.cli import main
from citeaudit.examples import load_example
from citeaudit.judges import CuratedJudge
from citeaudit.run.log import read_runlog
from citeaudit.run.verify import verify_case

P7 = "p7_archive.json"
AUDIT = "manual_audit.json"


def example_path(name: str) -> str:
    return str(resources.files("citeaudit.examples").joinpath("data", name))


@pytest.fixture(scope="module")
def p7():
    return load_example(P7)[0]


@pytest.fixture(scope="module")
def audit():
    return load_example(AUDIT)[0]


class TableJudge:
    """Labels from a table keyed by claim text (label, uncertain); for policies and degenerate cases."""

    name = "table"
    signature = "table@1"

    def __init__(self, table: dict[str, tuple[str, bool]]):
        self.table = table
        self.asked: list[str] = []

    def judge(self, text, passages):
        self.asked.append(text)
        label, uncertain = self.table[text]
        return Judgment(label=label, judge=self.signature, uncertain=uncertain or None,
                        explanation=f"table says {label}")


# --- the seeds, with their curated labels (that is what the seeds are) ----------------------------


@pytest.mark.parametrize("answer, decision, supported", [("A", "revise", 1), ("B", "deliver", 1), ("C", "deliver", 3)])
def test_p7_decisions_curated(p7, answer, decision, supported):
    result = verify_case(p7, answer, "curated")
    assert (result.decision, result.supported_count) == (decision, supported)
    assert result.exit_code == {"deliver": 0, "revise": 1}[decision]


def test_p7_answer_a_keeps_the_limit_and_says_what_the_archive_lacks(p7):
    result = verify_case(p7, "A", "curated")
    assert result.supported_answer == (
        "The continuous limit is 80 °C [D1]. The sources do not establish that Eco reduces annual energy by 15%. "
        "The sources do not establish that the pilot was validated on a thousand machines.")
    c4, c5 = result.gaps
    assert (c4.claim, c4.label, c4.citations) == ("c4", "none", ["D3"])
    assert "downtime over 30 days, not annual energy" in c4.reason
    assert c4.evidence.passage == "D3" and "Downtime fell by 15%" in c4.evidence.quote
    assert (c5.claim, c5.evidence.passage) == ("c5", "D4") and "sample size" in c5.reason


def test_p7_answer_c_is_delivered_with_its_own_limit(p7):
    result = verify_case(p7, "C", "curated")
    assert result.gaps == [] and result.limitations == []
    assert result.supported_answer.endswith("[D3]. The archive contains no annual energy-savings estimate.")


def test_manual_audit_abstains_and_names_each_gap(audit):
    result = verify_case(audit, "audited", "curated")
    assert result.decision == "abstain" and result.exit_code == 4
    labels = {g.claim: g.label for g in result.gaps}
    assert labels == {"C1": "partial", "C2": "none", "C3": "contradicts"}
    reasons = {g.claim: g.reason for g in result.gaps}
    assert "only for unopened items and counted from delivery" in reasons["C1"]  # the dropped qualifier
    assert "form of the refund" in reasons["C2"]  # the missing refund method
    assert "store credit only" in reasons["C3"]  # the contradicting rule
    assert "contradict the claim that opened items can be returned" in result.supported_answer
    assert "[1]" not in result.supported_answer and "[2]" not in result.supported_answer


def test_honest_answer_is_delivered(audit):
    result = verify_case(audit, "honest", "curated")
    assert result.decision == "deliver"
    assert result.supported_answer.endswith("The sources say nothing about how refunds are paid.")


# --- what the shipped model judge decides on the same seeds (recorded as it is) -----------------------


@pytest.fixture(scope="module")
def model_judge():
    pytest.importorskip("onnxruntime")
    return citeaudit.make_judge("model", [])


@pytest.mark.parametrize("name, answer, decision, supported_ids", [
    (P7, "A", "revise", ["c1"]),
    (P7, "B", "deliver", ["c1"]),
    # the plain reading supports c2 ("thirty days" in D3's 30 days, as the seed says); its calibrated
    # p(support) for c3 falls in its uncertain band: never support
    (P7, "C", "revise", ["c1", "c2"]),
    # it misses the dropped qualifier of C1 (the 30-day window is for unopened items only)
    (AUDIT, "audited", "revise", ["C1"]),
    (AUDIT, "honest", "deliver", ["H1", "H2"]),
])
def test_seed_decisions_of_the_model_judge(model_judge, name, answer, decision, supported_ids):
    result = verify_case(load_example(name)[0], answer, model_judge)
    assert result.decision == decision
    assert [c.id for c in result.claims if c.supported] == supported_ids


def test_model_judge_gap_gives_the_guard_reason(model_judge, p7):
    c4 = next(g for g in verify_case(p7, "A", model_judge).gaps if g.claim == "c4")
    assert "'15%' in the claim is about energy" in c4.reason and "qualifier guard: attachment" in c4.reason
    assert c4.label == "uncertain" and c4.evidence.passage == "D3"


def test_model_judge_uncertain_claims_of_c_are_never_support(model_judge, p7):
    result = verify_case(p7, "C", model_judge)
    assert result.gaps
    for gap in result.gaps:
        assert gap.label == "uncertain" and "not sure" in gap.reason
    assert "could not be confirmed to establish that it reported reduced downtime of 15%" in result.supported_answer


# --- policies --------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy, decision", [
    (Policy(), "abstain"),
    (Policy(partial_counts_as_supported=True), "revise"),  # C1 (partial) now counts
    (Policy(partial_counts_as_supported=True, max_unsupported_share=0.7), "deliver"),
    (Policy(max_unsupported_share=1.0), "abstain"),  # nothing supported is never delivered
])
def test_policy_changes_the_decision(audit, policy, decision):
    assert verify_case(audit, "audited", "curated", policy).decision == decision


def test_share_allows_delivery_of_a(p7):
    assert verify_case(p7, "A", "curated", Policy(max_unsupported_share=2 / 3)).decision == "deliver"
    assert verify_case(p7, "A", "curated", Policy(max_unsupported_share=0.6)).decision == "revise"


def test_uncertain_is_never_support_whatever_the_policy():
    judge = TableJudge({"Alpha is red.": ("full", True), "Beta is blue.": ("partial", True),
                        "Gamma is green.": ("full", False)})
    lenient = Policy(partial_counts_as_supported=True, max_unsupported_share=0.5)
    result = verify("Alpha is red [S1]. Beta is blue [S1]. Gamma is green [S1].",
                    {"S1": "Alpha is red, beta is blue, gamma is green."}, judge, lenient)
    assert [c.supported for c in result.claims] == [False, False, True]
    assert result.decision == "revise"  # 2 of 3 unsupported is more than half
    # said apart, as every report says it, and in the run log's diagnosis as no verdict either
    assert result.render().startswith("decision: revise (1 of 3 claims supported, 2 the judge was unsure of)\n")
    (findings,) = result.runlog().diagnosis.values()
    assert [f.cause for f in findings] == ["judge_unsure", "judge_unsure"]


@pytest.mark.parametrize("text, problem", [
    ("partial=maybe", "partial: expected 'supported' or 'unsupported', got 'maybe'"),
    ("max_unsupported=1.5", "max_unsupported: expected a share within 0..1, got '1.5'"),
    ("max_unsupported=-0.1", "max_unsupported: expected a share within 0..1"),
    ("max_unsupported=nan", "max_unsupported: expected a share within 0..1, got 'nan'"),
    ("max_unsupported=inf", "max_unsupported: expected a share within 0..1"),
    ("colour=red", "colour: unknown policy key; known: partial=<'supported' or 'unsupported'>, "
                   "max_unsupported=<a share within 0..1>"),
    ("partial", "expected KEY=VALUE"),
    # a key given twice is refused as the JSON reader refuses a repeated key, whichever value comes last
    ("partial=supported,partial=unsupported", "partial: given twice; known: partial="),
    ("max_unsupported=0.2,max_unsupported=0.2", "max_unsupported: given twice"),
    ("partial=supported,,max_unsupported=0.2", "an empty item in 'partial=supported,,max_unsupported=0.2'"),
    (",", "an empty item"),
    ("partial=supported,", "an empty item"),
])
def test_bad_policy_is_located(text, problem):
    with pytest.raises(InputError) as err:
        Policy.parse(text)
    assert problem in str(err.value) and str(err.value).startswith("--policy")
    assert len(err.value.problems) == 1


def test_policy_parse():
    assert Policy.parse("partial=supported, max_unsupported=0.25") == Policy(
        partial_counts_as_supported=True, max_unsupported_share=0.25)
    assert Policy.parse("strict") == Policy()


# --- inputs and degenerate answers -----------------------------------------------------------------------


def test_sources_as_mapping_list_and_records_agree():
    judge = TableJudge({"The sky is blue.": ("full", False)})
    text = "The sky is blue [S1]."
    as_map = verify(text, {"S1": "The sky is blue."}, judge)
    as_list = verify(text, [{"id": "S1", "text": "The sky is blue."}], judge)
    as_records = verify(text, [citeaudit.Document(id="S1", text="The sky is blue.")], judge)
    assert as_map.decision == as_list.decision == as_records.decision == "deliver"
    assert as_map.supported_answer == "The sky is blue [S1]."


def test_answer_with_only_an_abstention_abstains_without_asking_the_judge():
    judge = TableJudge({})
    result = verify("The sources do not say how refunds are paid.", {"S1": "Receipts are required."}, judge)
    assert (result.decision, result.claims, judge.asked) == ("abstain", [], [])
    assert result.supported_answer == "The sources do not say how refunds are paid."


def test_uncited_claim_is_a_gap_without_a_judge():
    judge = TableJudge({"The limit is 80 °C.": ("full", False)})
    result = verify({"id": "a", "statements": [{"text": "The limit is 80 °C.", "citations": ["S1"]},
                                               {"text": "It never fails.", "citations": []}]},
                    {"S1": "The limit is 80 °C."}, judge, repair=None)  # no search among the other sources
    assert result.decision == "revise" and judge.asked == ["The limit is 80 °C."]
    gap = result.gaps[0]
    assert gap.evidence is None and gap.reason == "no passage is cited"
    assert gap.sentence == "No source is cited for the claim that it never fails."


def test_empty_answer_abstains():
    assert verify({"id": "a"}, {"S1": "Text."}, TableJudge({})).decision == "abstain"


def test_unknown_citation_is_located():
    with pytest.raises(InputError) as err:
        verify("The sky is blue [S9].", {"S1": "The sky is blue."}, TableJudge({}))
    assert "answers[0]" in str(err.value) and "S9" in str(err.value)


def test_unknown_citation_counted_is_a_gap_judged_by_rule():
    """A generated answer citing what names no source: its claim is unsupported by rule, not refused."""
    judge = TableJudge({"The sky is blue.": ("full", False)})
    sources = {"S1": "The sky is blue.", "S2": "The grass is green."}
    result = verify("The sky is blue [S1]. The grass is green [S9].", sources, judge, repair=None,
                    invalid_citations="count")
    assert result.decision == "revise" and judge.asked == ["The sky is blue."]  # the rule asks no judge
    gap = result.gaps[0]
    assert (gap.label, gap.citations, gap.reason) == ("none", [], "cites [S9], which names no passage")
    assert gap.sentence == "The sources do not establish that the grass is green."  # it did cite something
    assert "|invalid:count|" in result.signature
    assert "|invalid:" not in verify("The sky is blue [S1].", sources, judge).signature  # the default: unprinted


def test_bad_source_is_located():
    with pytest.raises(InputError) as err:
        verify("x [S1].", [{"id": "S1"}, {"id": "S2", "text": "ok", "colour": 1}], TableJudge({}))
    message = str(err.value)
    assert "sources[0]" in message and "sources[1].colour" in message


def test_curated_judge_from_the_examples_in_the_library(p7):
    """The library call the docs show: raw answer text, the archive's passages, the seed's labels."""
    judge = CuratedJudge.from_cases([p7])
    archive = {pid: p.text for pid, p in p7.passages.items()}
    result = verify("The continuous limit is 80 °C [D1]. Eco reduces annual energy by 15% [D3].", archive, judge)
    assert result.decision == "revise"
    assert result.signature.startswith("verify|judge:curated@1#") and "parse:citeaudit-parse@" in result.signature


def test_verification_round_trips_as_json(p7):
    result = verify_case(p7, "A", "curated")
    again = Verification.model_validate_json(result.model_dump_json())
    assert again.model_dump() == result.model_dump()


def test_run_log_of_a_verification(tmp_path, p7):
    result = verify_case(p7, "A", "curated")
    result.write_log(tmp_path / "run.json")
    raw = json.loads((tmp_path / "run.json").read_text())
    assert "search" not in raw  # no budget: the log is as any other
    log = read_runlog(tmp_path / "run.json")
    assert not log.edited and [a.answer for a in log.results.answers] == ["A"]


# --- the command line ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, answer, code", [(P7, "A", 1), (P7, "C", 0), (P7, "B", 0), (AUDIT, "audited", 4)])
def test_cli_exit_codes(runner, name, answer, code):
    result = runner.invoke(main, ["verify", example_path(name), "--answer", answer, "--judge", "curated"])
    assert result.exit_code == code, result.output
    assert result.output.startswith(f"decision: {['deliver', 'revise', None, None, 'abstain'][code]}")


def test_cli_json_and_text(runner):
    result = runner.invoke(main, ["verify", example_path(AUDIT), "--answer", "manual-audit/audited", "--judge",
                                  "curated", "--format", "json"])
    assert result.exit_code == 4
    data = json.loads(result.output)
    assert data["decision"] == "abstain" and [g["label"] for g in data["gaps"]] == ["partial", "none", "contradicts"]
    text = runner.invoke(main, ["verify", example_path(AUDIT), "--answer", "audited", "--judge", "curated"]).output
    assert "why: Passage [2] allows store credit only, not a full refund." in text


def test_cli_policy(runner):
    args = ["verify", example_path(AUDIT), "--answer", "audited", "--judge", "curated"]
    assert runner.invoke(main, args + ["--policy", "partial=supported"]).exit_code == 1
    bad = runner.invoke(main, args + ["--policy", "partial=maybe"])
    assert bad.exit_code == 2 and "--policy: partial" in bad.output


def test_cli_raw_answer_with_sources(runner, tmp_path, p7):
    answer = tmp_path / "answer.txt"
    answer.write_text("The continuous limit is 80 °C [D1]. Eco reduces annual energy by 15% [D3].\n", encoding="utf-8")
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({pid: p.text for pid, p in p7.passages.items()}), encoding="utf-8")
    # the curated judge of a text answer has no labels: it cannot judge (exit 3, a judge failure)
    failed = runner.invoke(main, ["verify", str(answer), "--sources", str(sources), "--judge", "curated"])
    assert failed.exit_code == 3 and "no curated label" in failed.output
    missing = runner.invoke(main, ["verify", str(answer), "--judge", "curated"])
    assert missing.exit_code == 2 and "--sources" in missing.output


@pytest.mark.parametrize("sources, expected", [
    ('{\n "D1": "The limit is 80 C.",\n "D2": 5\n}\n',
     ["sources.json:3: D2: expected the document's text (or a document), got int"]),
    ('[\n {"id": "D1", "text": "x"},\n {"id": "D2", "text": "y", "colour": 1}\n]\n',
     ["sources.json:3: [1].colour: Extra inputs are not permitted"]),
    ('[\n {"id": "D1", "text": "x"},\n {"id": "D1", "text": "y"}\n]\n',
     ["sources.json:2: [0].id: document id 'D1' is used twice", "sources.json:3: [1].id: document id 'D1'"]),
    ('{"D2": "x"}', ["answer.txt: text: character 18: citation marker '[D1]': unknown passage id 'D1'"]),
])
def test_cli_sources_problems_name_the_file_and_line(runner, tmp_path, sources, expected):
    (tmp_path / "answer.txt").write_text("The limit is 80 C [D1].\n", encoding="utf-8")
    (tmp_path / "sources.json").write_text(sources, encoding="utf-8")
    result = runner.invoke(main, ["verify", str(tmp_path / "answer.txt"), "--sources", str(tmp_path / "sources.json"),
                                  "--judge", "curated"])
    assert result.exit_code == 2
    for line in expected:
        assert f"{tmp_path}/{line}" in result.output
    assert "verify: " not in result.output


def test_cli_bad_input(runner, tmp_path):
    several = runner.invoke(main, ["verify", example_path(P7), "--judge", "curated"])
    assert several.exit_code == 2 and "p7/A, p7/B, p7/C" in several.output
    unknown = runner.invoke(main, ["verify", example_path(P7), "--answer", "Z", "--judge", "curated"])
    assert unknown.exit_code == 2 and "no answer 'Z'" in unknown.output
    broken = tmp_path / "case.json"
    broken.write_text('{"id": "x", "question": "q", "sources": []}')
    bad = runner.invoke(main, ["verify", str(broken), "--judge", "curated"])
    assert bad.exit_code == 2 and "case.json" in bad.output


def test_cli_writes_the_run_log(runner, tmp_path):
    out = tmp_path / "run.json"
    result = runner.invoke(main, ["verify", example_path(P7), "--answer", "C", "--judge", "curated", "--out", str(out)])
    assert result.exit_code == 0
    assert read_runlog(out).results.answers[0].answer == "C"


def test_cli_default_judge_is_the_shipped_model(runner):
    pytest.importorskip("onnxruntime")
    result = runner.invoke(main, ["verify", example_path(P7), "--answer", "A"])
    assert result.exit_code == 1 and "signature: verify|judge:model:judge-v1" in result.output


def test_store_replays_judgments(tmp_path):
    store = tmp_path / "judgments.sqlite"
    first, second = TableJudge({"The sky is blue.": ("full", False)}), TableJudge({})
    a = verify("The sky is blue [S1].", {"S1": "The sky is blue."}, first, store=store)
    b = verify("The sky is blue [S1].", {"S1": "The sky is blue."}, second, store=store)
    assert first.asked == ["The sky is blue."] and second.asked == []  # the second is answered by the store
    assert a.decision == b.decision == "deliver"


def test_an_answer_file_is_read_as_every_input_is(runner, tmp_path):
    from citeaudit.run.verify import answer_file_case

    answer, sources = tmp_path / "answer.txt", tmp_path / "sources.json"
    sources.write_text('{"D1": "The limit is 80 C."}', encoding="utf-8")
    answer.write_bytes("\ufeffThe limit is 80 C [D1].\n".encode("utf-8"))  # as some editors save it
    rc = answer_file_case(answer, sources)
    assert rc.case.answers[0].text == "The limit is 80 C [D1].\n"
    answer.write_bytes(b"The limit is \xff80 C [D1].\n")
    result = runner.invoke(main, ["verify", str(answer), "--sources", str(sources), "--judge", "curated"])
    assert result.exit_code == 2 and f"{answer}: cannot read" in result.output and "Traceback" not in result.output
