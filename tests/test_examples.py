"""The seed documents' worked examples, reproduced exactly from the shipped case files."""

from __future__ import annotations

import json

import pytest

from citeaudit.cli import main
from citeaudit.examples import desk_line, render_examples, run_examples
from citeaudit.metrics import names as N


@pytest.fixture(scope="module")
def figures():
    return run_examples()


@pytest.mark.parametrize("answer, presence, support, coverage", [
    ("A", "3/3 (100.0 %)", "1/3 (33.3 %)", "1/3 (33.3 %)"),
    ("B", "1/1 (100.0 %)", "1/1 (100.0 %)", "1/3 (33.3 %)"),
    ("C", "3/3 (100.0 %)", "3/3 (100.0 %)", "3/3 (100.0 %)"),
])
def test_p7_table(figures, answer, presence, support, coverage):
    r = next(a for a in figures.p7.answers if a.answer_id == answer).ratios()
    assert (str(r[N.CITATION_PRESENCE]), str(r[N.SUPPORT]), str(r[N.COVERAGE])) == (presence, support, coverage)


@pytest.mark.parametrize("name, counts", [
    ("recall@2", "0/2"), ("recall@3", "1/2"), ("recall@4", "2/2"), ("facts@3", "1/3"),
])
def test_p7_retrieval(figures, name, counts):
    assert figures.p7.retrieval["p7"][name].counts() == counts


def test_p7_pairwise_reading(figures):
    a, b, c = (x.ratios() for x in figures.p7.answers)
    assert a[N.COVERAGE] == b[N.COVERAGE]  # equal useful coverage...
    assert a[N.SUPPORT].denominator - a[N.SUPPORT].numerator == 2  # ...but A makes two unsupported claims
    assert b[N.SUPPORT].value == c[N.SUPPORT].value == 1.0
    assert c[N.COVERAGE].numerator == 3 * b[N.COVERAGE].numerator


DESK_LINES = [
    "Original: recall 2/4; precision 2/3",
    "Repaired: recall 4/4; precision 4/4",
    "Padded: recall 4/4; precision 4/6",
    "Joint support: recall 1/1; precision 2/2",
    "Two full supports: recall 1/1; precision 2/2",
    "Overbroad claim: recall 0/1; precision 0/2",
]


def test_returns_desk_six_lines(figures):
    assert [desk_line(r.system, r.ratios()) for r in figures.returns_desk.answers] == DESK_LINES


def test_returns_desk_original_citation_checks(figures):
    """The seed's inspector object for C1 → S2."""
    original = figures.returns_desk.answers[0]
    c1 = original.statements[0]
    assert c1.supported is False
    assert [c.to_dict() for c in c1.checks] == [{
        "id": "S2", "alone": False, "without": False, "precise": False,
        "reason": "The cited set does not support the whole statement, so this citation receives no precision credit.",
    }]


def test_padded_c1_credits_only_s1(figures):
    padded = next(r for r in figures.returns_desk.answers if r.answer_id == "padded")
    checks = padded.statements[0].checks
    assert [(c.id, c.precise) for c in checks] == [("S1", True), ("S2", False), ("S3", False)]
    assert [c.without for c in checks] == [None, True, True]


def test_unknown_source_is_an_error_not_a_score(figures):
    assert "unknown passage 'S99'" in figures.unknown_source_error
    assert "answers[0].statements[0].citations[0]" in figures.unknown_source_error


def test_no_citations_precision_is_na(figures):
    assert desk_line("No citations", figures.no_citations.answers[0].ratios()) == "No citations: recall 0/4; precision n/a"


def test_manual_audit(figures):
    audited = next(r for r in figures.manual_audit.answers if r.answer_id == "audited")
    assert [(c.id, c.judgment.label) for c in audited.claims] == [("C1", "partial"), ("C2", "none"), ("C3", "contradicts")]
    assert audited.ratios()[N.SUPPORT].counts() == "0/3"
    assert audited.ratios()[N.CITATION_PRESENCE].counts() == "3/3"
    assert audited.label_counts() == {"full": 0, "partial": 1, "none": 1, "contradicts": 1}


def test_cli_examples_prints_every_figure(runner, figures):
    result = runner.invoke(main, ["examples"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == render_examples(figures).strip()
    for line in DESK_LINES + ["| A | 3/3 (100.0 %) | 1/3 (33.3 %) | 1/3 (33.3 %) |",
                              "recall@2 0/2 · recall@3 1/2 · recall@4 2/2",
                              "No citations: recall 0/4; precision n/a"]:
        assert line in result.output


def test_cli_examples_write_then_score(runner, tmp_path):
    assert runner.invoke(main, ["examples", "--write", str(tmp_path)]).exit_code == 0
    result = runner.invoke(main, ["score", str(tmp_path / "p7_archive.json"), "--k", "2,3,4", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    by_answer = {a["answer"]: a["metrics"] for a in data["answers"]}
    assert by_answer["A"]["support"]["numerator"] == 1 and by_answer["A"]["support"]["denominator"] == 3
    assert by_answer["C"]["coverage"]["value"] == 1.0
    assert data["cases"][0]["retrieval"]["recall@3"]["value"] == 0.5
    assert by_answer["A"]["support"]["signature"].startswith("support|judge:curated@1#")


def test_chinese_p7_gives_the_english_table(figures):
    from citeaudit.examples import p7_table

    assert p7_table(figures.p7_zh) == p7_table(figures.p7)
    assert figures.p7_zh.retrieval["p7-zh"] == figures.p7.retrieval["p7"]
    assert [s.text for s in figures.p7_zh.answers[2].statements][-1] == "档案中没有年度节能估计。"
    assert figures.p7_zh.answers[2].statements[-1].kind == "abstention"


def test_english_p7_as_raw_text_matches_the_pre_split_case(figures):
    """The same answers written as plain text with markers score exactly as the pre-split ones."""
    import json

    from citeaudit.examples import example_text
    from citeaudit.judges import Judgments, make_judge
    from citeaudit.files.loading import parse_cases
    from citeaudit.metrics import Settings, score_cases
    from citeaudit.report.render import to_json

    case = json.loads(example_text("p7_archive.json"))
    texts = {
        "A": ("The continuous limit is 80 °C [D1]. Eco reduces annual energy by 15% [D3]. "
              "The pilot was validated on a thousand machines [D4].", {"0": ["limit"]}),
        "B": ("The continuous limit is 80 °C [D1].", {"0": ["limit"]}),
        "C": ("The continuous limit is 80 °C [D1]. The Eco pilot ran for thirty days. [D3] "
              "It reported reduced downtime of 15% [D3]. The archive contains no annual energy-savings estimate.",
              {"0": ["limit"], "1": ["duration"], "2": ["downtime"]}),
    }
    case["answers"] = [{"id": k, "text": t, "facts": f} for k, (t, f) in texts.items()]
    cases = parse_cases("raw.json", json.dumps(case, ensure_ascii=False))
    raw = score_cases(cases, Judgments(make_judge("curated", cases)), Settings(ks=(2, 3, 4)))
    def figures_of(report):  # the signatures differ by design: the raw answers name their parser
        return {system: {name: {k: v for k, v in r.items() if k != "signature"} for name, r in ratios.items()}
                for system, ratios in to_json(report)["summary"]["by_system"].items()}

    assert figures_of(raw) == figures_of(figures.p7)
    assert "|parse:citeaudit-parse@" in raw.signature("support") and "|claims:rule@1|" in raw.signature("support")
    assert "parse:" not in figures.p7.signature("support")
    assert [[(c.text, c.citations, c.judgment.label) for c in a.claims] for a in raw.answers] == \
           [[(c.text, c.citations, c.judgment.label) for c in a.claims] for a in figures.p7.answers]


@pytest.mark.parametrize("answer, message", [
    ({"id": "x", "text": "Limit is 80 °C [D9]."},
     "answers[0].text: character 15: citation marker '[D9]': unknown passage id 'D9'"),
    ({"id": "x", "text": "Limit is 80 °C [D1].", "facts": {"4": ["limit"]}},
     "answers[0].facts.4: no statement 4: the text parses into 1 statement(s)"),
    ({"id": "x", "statements": [], "facts": {"0": ["limit"]}},
     "answers[0]: 'kinds' and 'facts' apply to an answer given as 'text' without 'statements'"),
])
def test_raw_text_answer_errors(answer, message):
    import json

    from citeaudit.errors import InputError
    from citeaudit.examples import example_text
    from citeaudit.files.loading import parse_cases

    case = json.loads(example_text("p7_archive.json"))
    case["answers"] = [answer]
    with pytest.raises(InputError) as info:
        parse_cases("raw.json", json.dumps(case, ensure_ascii=False))
    assert any(message in str(p) for p in info.value.problems), [str(p) for p in info.value.problems]
