"""Citations that name no passage: an error in hand-written cases, a counted finding with
`--invalid-citations count` (the default for other tools' files)."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.errors import InputError
from citeaudit.judges import Judgments, make_judge
from citeaudit.files.loading import parse_cases
from citeaudit.metrics import Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.parse.resolve import Reading

SOURCES = [{"id": "D1", "text": "The limit is 80 C."}, {"id": "D2", "text": "Eco mode saves energy."}]
LABELS = [{"claim": "The limit is 80 C.", "passages": ["D1"], "label": "full"},
          {"claim": "Eco mode saves energy.", "passages": ["D2"], "label": "full"},
          {"claim": "Eco mode saves energy.", "passages": ["D1"], "label": "none"},
          {"claim": "Eco mode saves energy.", "passages": ["D1", "D2"], "label": "full"}]


def _case(answer: dict) -> str:
    return json.dumps({"id": "c", "question": "q?", "sources": SOURCES, "answers": [answer], "labels": LABELS})


RAW = {"id": "a", "text": "The limit is 80 C [1]. Eco mode saves energy [2][9]. It grew as reported [2019]."}
GIVEN = {"id": "a", "statements": [{"text": "The limit is 80 C.", "citations": ["D1"]},
                                   {"text": "Eco mode saves energy.", "citations": ["D2", "D9"]}]}


@pytest.mark.parametrize("answer", [RAW, GIVEN], ids=["raw text", "statements"])
def test_by_default_an_invalid_citation_is_an_input_error(answer):
    with pytest.raises(InputError) as err:
        parse_cases("c.json", _case(answer))
    assert "D9" in str(err.value) or "[9]" in str(err.value)


def _score(answer: dict):
    reading = Reading(invalid_citations="count")
    cases = parse_cases("c.json", _case(answer), reading)
    report = score_cases(cases, Judgments(make_judge("curated", cases)), Settings(invalid_citations="count"))
    return cases[0], report.answers[0]


def test_counted_from_raw_text():
    case, answer = _score(RAW)
    statements = case.case.answers[0].statements
    assert [s.invalid_citations for s in statements] == [[], ["[9]"], ["[2019]"]]
    assert [s.citations for s in statements] == [["D1"], ["D2"], []]
    ratios = answer.ratios()
    # written: [1], [2], [9], [2019]; two name no passage
    assert (ratios[N.INVALID_CITATIONS].numerator, ratios[N.INVALID_CITATIONS].denominator) == (2, 4)
    assert [c.judgment.label for c in answer.claims] == ["full", "none", "none"]
    assert answer.claims[1].judgment.judge == "rule:invalid-citation"
    assert "cites [9], which names no passage" in answer.claims[1].judgment.explanation
    # precision: D1 credited; D2 and [9] of the unsupported statement and [2019] uncredited
    assert (ratios[N.CITATION_PRECISION].numerator, ratios[N.CITATION_PRECISION].denominator) == (1, 4)
    assert (ratios[N.CITATION_RECALL].numerator, ratios[N.CITATION_RECALL].denominator) == (1, 3)


def test_counted_from_given_statements():
    case, answer = _score(GIVEN)
    assert case.case.answers[0].statements[1].invalid_citations == ["[D9]"]
    ratios = answer.ratios()
    assert (ratios[N.INVALID_CITATIONS].numerator, ratios[N.INVALID_CITATIONS].denominator) == (1, 3)
    assert (ratios[N.SUPPORT].numerator, ratios[N.SUPPORT].denominator) == (1, 2)
    assert (ratios[N.CITATION_PRECISION].numerator, ratios[N.CITATION_PRECISION].denominator) == (1, 3)


def test_the_judge_is_never_asked_about_a_statement_with_an_invalid_citation():
    from citeaudit.metrics import plan_requests

    reading = Reading(invalid_citations="count")
    cases = parse_cases("c.json", _case(RAW), reading)
    assert [r.text for r in plan_requests(cases)] == ["The limit is 80 C."]


def test_cli_counts_and_signs_the_run(runner, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(_case(RAW), encoding="utf-8")
    refused = runner.invoke(main, ["score", str(path)])
    assert refused.exit_code == 2 and "citation [9] points to passage 9 by position" in refused.output
    counted = runner.invoke(main, ["score", str(path), "--invalid-citations", "count", "--format", "json"])
    assert counted.exit_code == 0, counted.output
    data = json.loads(counted.output)
    invalid = data["summary"]["all"][N.INVALID_CITATIONS]
    assert (invalid["numerator"], invalid["denominator"]) == (2, 4)
    assert "invalid:count" in invalid["signature"]


def test_labels_from_a_labelled_pairs_file_feed_the_curated_judge(runner, tmp_path):
    case = json.loads(_case(GIVEN))
    case["answers"][0]["statements"][1]["citations"] = ["D2"]
    case["labels"] = []
    path = tmp_path / "c.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    unlabelled = runner.invoke(main, ["score", str(path)])
    assert unlabelled.exit_code == 3 and "no curated label" in unlabelled.output
    rows = [{"id": "r1", "claim": "The limit is 80 C.", "passages": [SOURCES[0]], "label": "full"},
            {"id": "r2", "claim": "Eco mode saves energy.", "passages": [SOURCES[1]], "label": "partial"},
            {"id": "r3", "claim": "Eco mode saves energy.", "passages": [{"id": "D2", "text": "another text"}],
             "label": "full"}]  # same id, other text: matches nothing
    labels = tmp_path / "human.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = runner.invoke(main, ["score", str(path), "--labels", str(labels), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "1 row(s) of" in result.output and "(first: r3)" in result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["summary"]["all"]["support"]["numerator"] == 1
    assert data["summary"]["labels"] == {"full": 1, "partial": 1, "none": 0, "contradicts": 0}
