"""--metrics asks the judge only for what the chosen measures need; --missing-labels skip leaves an
unlabelled pair unjudged and out of every figure, never counted as unsupported."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.judges import Judgments, make_judge
from citeaudit.files.loading import parse_cases
from citeaudit.metrics import Settings, plan_requests, score_cases
from citeaudit.metrics import names as N

SOURCES = [{"id": "D1", "text": "The limit is 80 C."}, {"id": "D2", "text": "Eco mode saves energy."}]
FACTS = [{"id": "limit", "text": "The limit is 80 C.", "passages": ["D1"]},
         {"id": "eco", "text": "Eco saves energy.", "passages": ["D2"]}]
STATEMENTS = [
    {"text": "The limit is 80 C and Eco mode saves energy.", "citations": ["D1", "D2"],
     "claims": [{"text": "The limit is 80 C.", "facts": ["limit"]},
                {"text": "Eco mode saves energy.", "facts": ["eco"]}]},
]
# Labels for the statement-level pairs only (what ALCE-style recall and precision need).
ALCE_ONLY = [
    {"claim": "The limit is 80 C and Eco mode saves energy.", "passages": ["D1", "D2"], "label": "full"},
    {"claim": "The limit is 80 C and Eco mode saves energy.", "passages": ["D1"], "label": "none"},
    {"claim": "The limit is 80 C and Eco mode saves energy.", "passages": ["D2"], "label": "none"},
]


def _cases(labels):
    case = {"id": "c", "question": "q?", "sources": SOURCES, "facts": FACTS,
            "answers": [{"id": "a", "statements": STATEMENTS}], "labels": labels}
    return parse_cases("c.json", json.dumps(case))


def test_a_curated_run_with_alce_only_labels_needs_no_claim_labels():
    cases = _cases(ALCE_ONLY)
    settings = Settings(metrics=(N.CITATION_RECALL, N.CITATION_PRECISION))
    assert {r.text for r in plan_requests(cases, settings)} == {"The limit is 80 C and Eco mode saves energy."}
    answer = score_cases(cases, Judgments(make_judge("curated", cases)), settings).answers[0]
    ratios = answer.ratios()
    assert (ratios[N.CITATION_RECALL].numerator, ratios[N.CITATION_RECALL].denominator) == (1, 1)
    assert (ratios[N.CITATION_PRECISION].numerator, ratios[N.CITATION_PRECISION].denominator) == (2, 2)
    assert N.SUPPORT not in ratios and N.COVERAGE not in ratios
    assert [c.label for c in answer.claims] == ["unjudged", "unjudged"]


def test_without_metrics_the_same_labels_stop_on_the_claim_split():
    from citeaudit.errors import UnlabelledPair

    cases = _cases(ALCE_ONLY)
    with pytest.raises(UnlabelledPair):
        score_cases(cases, Judgments(make_judge("curated", cases)), Settings())


def test_support_only_asks_for_the_claims():
    cases = _cases(ALCE_ONLY)
    requests = plan_requests(cases, Settings(metrics=(N.SUPPORT,)))
    assert sorted(r.text for r in requests) == ["Eco mode saves energy.", "The limit is 80 C."]


def test_skipped_labels_are_unjudged_and_in_no_denominator():
    labels = ALCE_ONLY + [{"claim": "The limit is 80 C.", "passages": ["D1", "D2"], "label": "full"}]
    cases = _cases(labels)
    answer = score_cases(cases, Judgments(make_judge("curated", cases)), Settings(missing_labels="skip")).answers[0]
    ratios = answer.ratios()
    assert [c.label for c in answer.claims] == ["full", "unjudged"]
    assert (ratios[N.SUPPORT].numerator, ratios[N.SUPPORT].denominator) == (1, 1)  # not 1 of 2
    # the fact conveyed only by the unjudged claim is out of coverage's denominator, not missed
    assert (ratios[N.COVERAGE].numerator, ratios[N.COVERAGE].denominator) == (1, 1)
    assert answer.label_counts()["unjudged"] == 1


def test_cli_metrics_missing_labels_and_the_signature(runner, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"id": "c", "question": "q?", "sources": SOURCES, "facts": FACTS,
                                "answers": [{"id": "a", "statements": STATEMENTS}], "labels": ALCE_ONLY}))
    stopped = runner.invoke(main, ["score", str(path)])
    assert stopped.exit_code == 3
    chosen = runner.invoke(main, ["score", str(path), "--metrics", "citation_recall,citation_precision",
                                  "--format", "json"])
    assert chosen.exit_code == 0, chosen.output
    summary = json.loads(chosen.output)["summary"]["all"]
    assert N.SUPPORT not in summary and summary[N.CITATION_RECALL]["value"] == 1.0
    skipped = runner.invoke(main, ["score", str(path), "--missing-labels", "skip", "--format", "json"])
    assert skipped.exit_code == 0, skipped.output
    data = json.loads(skipped.output)
    assert data["summary"]["labels"]["unjudged"] == 2
    assert data["summary"]["all"][N.SUPPORT]["value"] is None
    assert "missing:skip" in data["summary"]["all"][N.SUPPORT]["signature"]
    out = tmp_path / "run.json"
    assert runner.invoke(main, ["score", str(path), "--missing-labels", "skip", "--out", str(out)]).exit_code == 0
    rescored = runner.invoke(main, ["rescore", str(out), "--format", "json"])
    assert rescored.exit_code == 0 and json.loads(rescored.output)["summary"]["labels"]["unjudged"] == 2
    bad = runner.invoke(main, ["score", str(path), "--metrics", "support,bogus"])
    assert bad.exit_code == 2 and "unknown measure 'bogus'" in bad.output


def test_compare_refuses_runs_whose_unlabelled_pair_rule_differs(runner, tmp_path):
    runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")])
    cases = str(tmp_path / "cases" / "p7_archive.json")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert runner.invoke(main, ["score", cases, "--out", str(a)]).exit_code == 0
    assert runner.invoke(main, ["score", cases, "--missing-labels", "skip", "--out", str(b)]).exit_code == 0
    refused = runner.invoke(main, ["compare", str(a), str(b)])
    assert refused.exit_code == 2 and "unlabelled pairs: A error · B skip" in refused.output
