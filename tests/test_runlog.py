"""Run logs (golden files, round trips, schema versions), diagnosis, compare and source-change review."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.run.compare import compare
from citeaudit.run.diagnose import diagnose
from citeaudit.examples import load_example
from citeaudit.judges import Judgments, judgment_source
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import Signature
from citeaudit.run.results import results_of
from citeaudit.run.review import rejudge, review
from citeaudit.errors import RunLogError
from citeaudit.run.log import build_runlog, read_runlog, rescore, write_runlog

from helpers import SetJudge, load, make_case

GOLDEN = Path(__file__).parent / "golden" / "p7.runlog.json"
GOLDEN_V1 = Path(__file__).parent / "golden" / "p7.runlog.v1.json"  # as schema 1 wrote it
GOLDEN_V2 = Path(__file__).parent / "golden" / "p7.runlog.v2.json"  # as schema 2 wrote it
GOLDEN_V3 = Path(__file__).parent / "golden" / "p7.runlog.v3.json"  # as schema 3 wrote it
GOLDEN_V4 = Path(__file__).parent / "golden" / "p7.runlog.v4.json"  # as schema 4 wrote it


def p7_log():
    cases = load_example("p7_archive.json")
    judgments = judgment_source("curated", cases)
    report = score_cases(cases, judgments, Settings(ks=(2, 3, 4)))
    return build_runlog(report, judgments)


def _stable(log) -> dict:
    data = json.loads(log.model_dump_json())
    data.pop("created")
    return data


def test_golden_run_log():
    """The P7 run log is the golden file, key for key as written (not only after reading it back, which
    would hide a field the writer gained). Regenerate with CITEAUDIT_REGENERATE=1 after a deliberate
    change, and review the diff."""
    import os

    log = p7_log()
    if os.environ.get("CITEAUDIT_REGENERATE"):
        write_runlog(GOLDEN, log.model_copy(update={"created": json.loads(GOLDEN.read_text())["created"]}))
    written = json.loads(log.model_dump_json())
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for key in ("created", "checksum"):  # the checksum covers `created`: checked below, as read
        written.pop(key), golden.pop(key)
    assert written == golden
    assert not read_runlog(GOLDEN).edited


@pytest.mark.parametrize("old_file", [GOLDEN_V1, GOLDEN_V2, GOLDEN_V3, GOLDEN_V4], ids=["v1", "v2", "v3", "v4"])
def test_an_older_log_reads_as_the_current_schema_with_the_same_figures(old_file):
    from citeaudit.run.log import SCHEMA_VERSION

    old = read_runlog(old_file)
    assert old.schema_version == SCHEMA_VERSION == 5 and not old.edited
    assert (old.checksum is None) == (old_file not in (GOLDEN_V3, GOLDEN_V4))  # schema 3 added the checksum
    assert old.judge_spec is None  # schema 5 added the spec: older logs say nothing of it
    assert old.signature == Signature(judge="curated@1#53285bd471b9", nocite="n/a", version="0.1.0")
    current = _stable(read_runlog(GOLDEN))
    current.pop("checksum")
    current["judge_spec"] = None
    assert {k: v for k, v in _stable(old).items() if k != "checksum"} == current
    report, _ = rescore(old)
    assert results_of(report).summary == old.results.summary


def test_migration_keeps_the_alce_convention():
    data = json.loads(GOLDEN_V1.read_text(encoding="utf-8"))
    data["settings"]["no_citation_precision"] = "zero"
    from citeaudit.run.log import MIGRATIONS

    assert MIGRATIONS[1](data)["signature"]["nocite"] == "0"


def test_golden_run_log_rescores_to_its_own_figures_without_a_judge():
    log = read_runlog(GOLDEN)
    report, judgments = rescore(log)
    rescored = results_of(report)
    assert (rescored.summary, rescored.answers) == (log.results.summary, log.results.answers)
    assert judgments.asked == 0


def test_run_log_keeps_versions_spans_and_hashes():
    log = p7_log()
    d3 = next(p for p in log.passages if p.id == "D3")
    assert (d3.doc, d3.version, d3.span[0]) == ("D3", "2026-09", 0) and len(d3.sha256) == 64
    j = next(r for r in log.judgments if r.text == "Eco reduces annual energy by 15%.")
    assert j.passages[0].version == "2026-09" and j.judgment.label == "none"


@pytest.mark.parametrize("change, message", [
    ({"schema_version": 99}, "schema_version 99 is not supported; this citeaudit 0.1.0 reads schema_version 1, 2, 3, 4, 5: upgrade citeaudit"),
    ({"schema_version": 0}, "schema_version 0 is not supported"),
    ({"schema_version": None}, "schema_version: expected an integer (1, 2, 3, 4, 5), got null"),
    ({"schema_version": "1"}, 'schema_version: expected an integer (1, 2, 3, 4, 5), got "1"'),
    ({"schema_version": [1]}, "schema_version: expected an integer (1, 2, 3, 4, 5), got [1]"),
    ({"schema_version": True}, "schema_version: expected an integer (1, 2, 3, 4, 5), got true"),
])
def test_unsupported_schema_versions_say_what_is_needed(tmp_path, change, message):
    data = json.loads(GOLDEN.read_text())
    data.update(change)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RunLogError, match=re.escape(message)):
        read_runlog(path)


# ------------------------------------------------------------------------------------------
# Diagnosis

def _causes(log, answer):
    return [(f.kind, f.ref, f.cause) for f in log.diagnosis[f"p7/{answer}"]]


def test_p7_diagnosis_matches_the_seed():
    log = p7_log()
    assert _causes(log, "A") == [("claim", "2.1", "cited_unsupported"), ("claim", "3.1", "cited_unsupported"),
                                 ("fact", "duration", "omitted"), ("fact", "downtime", "omitted")]
    assert _causes(log, "B") == [("fact", "duration", "omitted"), ("fact", "downtime", "omitted")]
    assert _causes(log, "C") == []


FACTS = [{"id": "f", "text": "fact", "passages": ["S2"]}]


@pytest.mark.parametrize("statements, ranking, expected", [
    ([{"text": "x", "citations": ["S1"], "facts": ["f"]}], ["S1"], [("claim", "not_retrieved"), ("fact", "not_retrieved")]),
    ([{"text": "x", "citations": ["S1"], "facts": ["f"]}], ["S1", "S2"], [("claim", "retrieved_not_cited"), ("fact", "retrieved_not_cited")]),
    ([{"text": "x", "citations": ["S2"], "facts": ["f"]}], ["S2"], [("claim", "cited_unsupported"), ("fact", "cited_unsupported")]),
    ([{"text": "c", "citations": ["S2"], "facts": ["f"]}], ["S2"], [("claim", "contradicted"), ("fact", "contradicted")]),
    ([{"text": "x", "facts": ["f"]}], ["S2"], [("claim", "retrieved_not_cited"), ("fact", "retrieved_not_cited")]),
    ([{"text": "y"}], ["S2"], [("claim", "uncited"), ("fact", "omitted")]),
    ([{"text": "no info", "kind": "abstention", "facts": ["f"]}], ["S2"], [("fact", "abstained")]),
    ([], ["S1"], [("fact", "not_retrieved")]),
    ([{"text": "ok", "citations": ["S2"], "facts": ["f"]}], ["S2"], []),
])
def test_each_cause(statements, ranking, expected):
    (rc,) = load(make_case(statements, facts=FACTS, ranking=ranking))
    judge = SetJudge({"ok": [{"S2"}]}, contradicts={"c": {"S2"}})
    (result,) = score_cases([rc], Judgments(judge)).answers
    assert [(f.kind, f.cause) for f in diagnose(rc, result)] == expected


class UnsureOf(SetJudge):
    """SetJudge, except that it is unsure of every text starting with "maybe": its best guess kept."""

    def judge(self, text, passages):
        j = super().judge(text, passages)
        return j.model_copy(update={"uncertain": True}) if text.startswith("maybe") else j


@pytest.mark.parametrize("statements, ranking, expected", [
    # whatever its best guess and wherever its evidence, an unsure claim is no failure of the answer
    ([{"text": "maybe x", "citations": ["S2"], "facts": ["f"]}], ["S2"], [("claim", "judge_unsure"), ("fact", "judge_unsure")]),
    ([{"text": "maybe c", "citations": ["S2"], "facts": ["f"]}], ["S2"], [("claim", "judge_unsure"), ("fact", "judge_unsure")]),
    ([{"text": "maybe ok", "citations": ["S2"], "facts": ["f"]}], ["S2"], [("claim", "judge_unsure"), ("fact", "judge_unsure")]),
    ([{"text": "maybe x", "citations": ["S1"], "facts": ["f"]}], ["S1"], [("claim", "judge_unsure"), ("fact", "judge_unsure")]),
    ([{"text": "maybe y", "citations": ["S1"]}], ["S2"], [("claim", "judge_unsure"), ("fact", "omitted")]),
    # the fact is undecided because of the unsure claim, not failed by the judged one
    ([{"text": "x", "citations": ["S2"], "facts": ["f"]}, {"text": "maybe x", "citations": ["S2"], "facts": ["f"]}],
     ["S2"], [("claim", "cited_unsupported"), ("claim", "judge_unsure"), ("fact", "judge_unsure")]),
    # a supported claim conveys the fact, whatever the unsure one
    ([{"text": "ok", "citations": ["S2"], "facts": ["f"]}, {"text": "maybe x", "citations": ["S2"], "facts": ["f"]}],
     ["S2"], [("claim", "judge_unsure")]),
])
def test_an_unsure_claim_has_its_own_cause(statements, ranking, expected):
    (rc,) = load(make_case(statements, facts=FACTS, ranking=ranking))
    judge = UnsureOf({"ok": [{"S2"}], "maybe ok": [{"S2"}]}, contradicts={"c": {"S2"}, "maybe c": {"S2"}})
    (result,) = score_cases([rc], Judgments(judge)).answers
    findings = diagnose(rc, result)
    assert [(f.kind, f.cause) for f in findings] == expected
    unsure = next(f for f in findings if f.cause == "judge_unsure")
    assert (unsure.title, unsure.area) == ("judge unsure", "judgment")
    assert "review it in the desk" in unsure.advice and "--judge cascade:" in unsure.advice


# ------------------------------------------------------------------------------------------
# Compare: the seed's pairwise reading

def test_compare_reads_like_the_seed():
    log = p7_log()
    ab = compare(log, log, "A", "B", "A", "B")
    assert ab.reading == ["B makes 2 fewer unsupported claims than A (support 1/3 (33.3 %) vs 1/1 (100.0 %))",
                          "same coverage (1/3 (33.3 %) vs 1/3 (33.3 %))"]
    bc = compare(log, log, "B", "C", "B", "C")
    assert bc.reading == ["same support (1/1 (100.0 %) vs 3/3 (100.0 %))",
                          "C conveys 3 times the required facts of B (coverage 1/3 (33.3 %) vs 3/3 (100.0 %))"]
    assert {d.text for d in ab.claims} == {"Eco reduces annual energy by 15%.",
                                           "The pilot was validated on a thousand machines."}


def test_compare_two_runs_lists_changed_labels(tmp_path):
    a = p7_log()
    b = json.loads(a.model_dump_json())
    claim = b["results"]["answers"][0]["claims"][1]
    claim["judgment"]["label"] = "partial"
    from citeaudit.run.log import RunLog

    diff = compare(a, RunLog.model_validate(b))
    assert [(d.text, d.a, d.b) for d in diff.claims] == [("Eco reduces annual energy by 15%.", "none", "partial")]


# ------------------------------------------------------------------------------------------
# Source-change review

def _sources_with(edit) -> dict:
    case = json.loads(GOLDEN.read_text())["cases"][0]
    edit(case["sources"])
    return case


def test_editing_d3_lists_exactly_the_claims_that_cite_it(tmp_path):
    def edit(sources):
        d3 = next(s for s in sources if s["id"] == "D3")
        d3["text"] = d3["text"].replace("15%", "12%")
        d3["version"] = "2026-10"

    path = tmp_path / "new.json"
    path.write_text(json.dumps(_sources_with(edit)))
    changes = review(read_runlog(GOLDEN), path)
    assert [(c.passage, c.status) for c in changes] == [("D3", "changed")]
    claims = [(cl.answer, cl.ref, cl.text) for cl in changes[0].claims]
    assert claims == [("A", "2.1", "Eco reduces annual energy by 15%."),
                      ("C", "2.1", "The Eco pilot ran for thirty days."),
                      ("C", "3.1", "It reported reduced downtime of 15%.")]
    assert "12%" in changes[0].new.text and "15%" in changes[0].old.text


@pytest.mark.parametrize("edit, status", [
    (lambda s: s.remove(next(d for d in s if d["id"] == "D4")), "vanished"),
    (lambda s: next(d for d in s if d["id"] == "D4").update(version="2027"), "changed"),
    (lambda s: next(d for d in s if d["id"] == "D4").update(
        text="Intro. Product catalogue. The P7 offers an Eco operating mode.",
        passages=[{"id": "D4", "text": "Product catalogue. The P7 offers an Eco operating mode."}]), "moved"),
])
@pytest.mark.parametrize("as_update", [False, True])
def test_vanished_reversioned_and_moved_passages(tmp_path, edit, status, as_update):
    """In a case file, or as an update: the documents that differ, and a left-out one listed as removed."""
    case = _sources_with(edit)
    if as_update:
        before = {d["id"]: d for d in _sources_with(lambda s: None)["sources"]}
        now = {d["id"]: d for d in case["sources"]}
        case = {"sources": [d for i, d in now.items() if d != before[i]], "removed": [i for i in before if i not in now]}
    path = tmp_path / "new.json"
    path.write_text(json.dumps(case))
    changes = review(read_runlog(GOLDEN), path)
    assert [(c.passage, c.status) for c in changes] == [("D4", status)]
    assert [cl.text for cl in changes[0].claims] == ["The pilot was validated on a thousand machines."]


def test_unchanged_sources_need_no_review(tmp_path):
    path = tmp_path / "same.json"
    path.write_text(json.dumps(_sources_with(lambda s: None)))
    assert review(read_runlog(GOLDEN), path) == []


def test_rejudge_asks_only_for_the_affected_claims(tmp_path):
    def edit(sources):
        next(s for s in sources if s["id"] == "D1")["text"] = "The continuous limit is 85 °C."

    path = tmp_path / "new.json"
    path.write_text(json.dumps(_sources_with(edit)))
    log = read_runlog(GOLDEN)
    changes = review(log, path)
    judge = SetJudge({})
    rejudge(changes, log, path, judge)
    assert [cl.new_label for cl in changes[0].claims] == ["none", "none", "none"]
    assert len(judge.calls) == 1  # the same claim text and passage in three answers: judged once


def test_cli_score_out_report_rescore_review(runner, tmp_path):
    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    run = tmp_path / "run.json"
    scored = runner.invoke(main, ["score", str(tmp_path / "p7_archive.json"), "--k", "2,3,4", "--out", str(run),
                                  "--format", "json"])
    assert scored.exit_code == 0, scored.output
    log = read_runlog(run)
    assert log.inputs[0].path.endswith("p7_archive.json") and len(log.inputs[0].sha256) == 64
    rescored = runner.invoke(main, ["rescore", str(run), "--format", "json"])
    assert json.loads(rescored.output)["summary"] == log.results.summary.model_dump(mode="json")
    md = runner.invoke(main, ["report", str(run), "--format", "markdown"]).output
    assert "evidence use: claim 2.1 *cited unsupported* — Eco reduces annual energy by 15%." in md
    cmp = runner.invoke(main, ["compare", str(run), str(run), "--a-system", "B", "--b-system", "C"]).output
    assert "C conveys 3 times the required facts of B" in cmp
    bad = runner.invoke(main, ["compare", str(run), str(run), "--a-system", "Z", "--b-system", "C"])
    assert bad.exit_code == 2 and "no system 'Z'" in bad.output
    same = runner.invoke(main, ["review", str(run), "--sources", str(tmp_path / "p7_archive.json")])
    assert same.exit_code == 0 and "nothing to review" in same.output
