"""Signatures as objects: rendered as the strings printed under each figure, parsed back, compared
field by field; `compare` refuses two runs scored differently; `report` renders the log alone."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from citeaudit.cli import main
from citeaudit.run.compare import compare
from citeaudit.errors import RunMismatch
from citeaudit.examples import load_example
from citeaudit.judges import Judgments, make_judge
from citeaudit.metrics import Settings, Signature, score_cases
from citeaudit.metrics.signature import parse_rendered
from citeaudit.run.log import build_runlog, read_runlog, write_runlog

CURATED = Signature(judge="curated@1#53285bd471b9", version="0.1.0")
MODEL = "model:judge-v1[onnx:judge-v1@1#abc|max=256|map=full=full]|guard=on|cal=on|zh=embedding:0.9175"


@pytest.mark.parametrize("signature, measure, rendered", [
    (CURATED, "support", "support|judge:curated@1#53285bd471b9|agg:sum|version:0.1.0"),
    (CURATED, "citation_presence", "citation_presence|agg:sum|version:0.1.0"),
    (CURATED, "citation_precision", "citation_precision|judge:curated@1#53285bd471b9|nocite:n/a|agg:sum|version:0.1.0"),
    (CURATED.model_copy(update={"nocite": "0"}), "alce_citation_precision",
     "alce_citation_precision|judge:curated@1#53285bd471b9|nocite:0|agg:mean-per-answer|version:0.1.0"),
    (CURATED, "recall@3", "recall@3|gold:documents|version:0.1.0"),
    (CURATED, "facts@2", "facts@2|gold:facts|version:0.1.0"),
    (CURATED.model_copy(update={"parser": "citeaudit-parse@1+pysbd-0.3.4", "claims": "rule@1"}), "abstention",
     "abstention|parse:citeaudit-parse@1+pysbd-0.3.4|claims:rule@1|agg:sum|version:0.1.0"),
    # retrieval does not depend on how answers were parsed
    (CURATED.model_copy(update={"parser": "citeaudit-parse@1+pysbd-0.3.4", "claims": "rule@1"}), "recall@1",
     "recall@1|gold:documents|version:0.1.0"),
    # a reader said what the answers cite: every answer measure names it, retrieval does not
    (CURATED.model_copy(update={"cite": "ragchecker-entailed"}), "citation_presence",
     "citation_presence|cite:ragchecker-entailed|agg:sum|version:0.1.0"),
    (CURATED.model_copy(update={"cite": "ragchecker-all"}), "recall@1", "recall@1|gold:documents|version:0.1.0"),
])
def test_rendered_as_the_strings_printed_under_figures(signature, measure, rendered):
    assert signature.render(measure) == rendered


PARSED = CURATED.model_copy(update={"parser": "citeaudit-parse@1+pysbd-0.3.4", "claims": "rule@1"})


@pytest.mark.parametrize("signature, measures, settings", [
    (CURATED, ["support", "citation_presence"], "version:0.1.0"),
    (CURATED, ["recall@1", "support", "citation_precision"], "nocite:n/a|version:0.1.0"),
    # retrieval names no parser, but the run's answers were parsed: the settings say so once
    (PARSED, ["recall@1", "abstention"], "parse:citeaudit-parse@1+pysbd-0.3.4|claims:rule@1|version:0.1.0"),
    (PARSED.model_copy(update={"conventions": "alce", "nocite": "0", "missing": "skip"}),
     ["alce_citation_precision", "support"],
     "parse:citeaudit-parse@1+pysbd-0.3.4|claims:rule@1|conv:alce|missing:skip|nocite:0|version:0.1.0"),
    (CURATED, ["recall@3", "facts@3"], "version:0.1.0"),  # gold and agg are each measure's own
])
def test_the_settings_line_is_every_field_the_signatures_share_but_the_judge(signature, measures, settings):
    assert signature.settings(measures) == settings
    # nothing said in a signature is lost from the short form: each field is the judge, the measure's own, or here
    shown = dict(item.split(":", 1) for item in settings.split("|"))
    for measure in measures:
        for key, value in parse_rendered(signature.render(measure))[1].items():
            assert key in ("judge", "agg", "gold") or shown[key] == value, (measure, key)


def test_a_rendered_signature_parses_back_even_when_the_judge_holds_separators():
    sig = Signature(judge=MODEL, parser="citeaudit-parse@1+pysbd-0.3.4", claims="rule@1", nocite="0", version="0.1.0")
    measure, fields = parse_rendered(sig.render("citation_precision"))
    assert measure == "citation_precision"
    assert fields == {"judge": MODEL, "parse": "citeaudit-parse@1+pysbd-0.3.4", "claims": "rule@1", "nocite": "0",
                      "agg": "sum", "version": "0.1.0"}
    with pytest.raises(ValueError, match="not a citeaudit signature"):
        parse_rendered("support|whatever")


def test_the_citing_reading_parses_back_and_is_left_out_of_a_dump_without_it():
    sig = CURATED.model_copy(update={"cite": "ragchecker-all"})
    assert parse_rendered(sig.render("support"))[1]["cite"] == "ragchecker-all"
    assert Signature.model_validate(json.loads(sig.model_dump_json())) == sig
    assert "cite" not in CURATED.model_dump()  # logs without a citing reading are as they were
    assert CURATED.differences(sig) == [("cite", None, "ragchecker-all")]


def test_differences_name_each_field_that_changes_figures_and_not_the_version():
    other = CURATED.model_copy(update={"judge": "embedding@1#x|thr=0.85", "nocite": "0", "version": "9.9"})
    assert CURATED.differences(other) == [("judge", CURATED.judge, "embedding@1#x|thr=0.85"), ("nocite", "n/a", "0")]
    assert CURATED.differences(CURATED.model_copy(update={"version": "9.9"})) == []


class Always:
    """A judge that labels every pair alike: a stand-in for a second judge."""

    name = "always"
    signature = "always-full@1"

    def judge(self, text, passages):
        from citeaudit.records import Judgment

        return Judgment(label="full", judge=self.signature)


def _log(judge=None, settings=Settings(ks=(2, 3, 4))):
    cases = load_example("p7_archive.json")
    judgments = Judgments(judge or make_judge("curated", cases))
    return build_runlog(score_cases(cases, judgments, settings), judgments)


def test_compare_refuses_runs_judged_differently_and_says_which_fields_differ():
    curated, other = _log(), _log(Always())
    with pytest.raises(RunMismatch) as err:
        compare(curated, other)
    message = str(err.value)
    assert "judge: A curated@1#" in message and "B always-full@1" in message and "--allow-mismatch" in message
    forced = compare(curated, other, allow_mismatch=True)
    assert forced.mismatches == [("judge", curated.signature.judge, "always-full@1")]


def test_compare_refuses_runs_with_different_no_citation_conventions():
    with pytest.raises(RunMismatch, match="precision without citations: A n/a · B 0"):
        compare(_log(), _log(settings=Settings(ks=(2, 3, 4), no_citation_precision="zero")))


def test_compare_cli_exits_2_without_the_flag_and_warns_with_it(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_runlog(a, _log())  # with its checksum: a log without one is read as edited
    write_runlog(b, _log(Always()))
    runner = CliRunner()
    refused = runner.invoke(main, ["compare", str(a), str(b)])
    assert refused.exit_code == 2 and "not comparable" in refused.output and "Traceback" not in refused.output
    forced = runner.invoke(main, ["compare", str(a), str(b), "--allow-mismatch"])
    assert forced.exit_code == 0 and forced.output.startswith("warning: compared although")
    as_json = json.loads(runner.invoke(main, ["compare", str(a), str(b), "--allow-mismatch", "--format", "json"]).output)
    assert as_json["signature_mismatches"][0]["field"] == "judge"


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_report_renders_the_log_alone(tmp_path, fmt, monkeypatch):
    """`report` must not score again: with scoring made impossible it still prints every figure, the
    same as `score` printed when the run was made."""
    runner = CliRunner()
    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    run = tmp_path / "run.json"
    scored = runner.invoke(main, ["score", str(tmp_path / "p7_archive.json"), "--k", "2,3,4", "--out", str(run),
                                  "--format", fmt])
    assert scored.exit_code == 0

    def no_scoring(*args, **kwargs):
        raise AssertionError("report scored again")

    import citeaudit.metrics.scoring as scoring
    import citeaudit.run.log as runlog

    monkeypatch.setattr(scoring, "score_cases", no_scoring)
    monkeypatch.setattr(runlog, "score_cases", no_scoring)
    reported = runner.invoke(main, ["report", str(run), "--format", fmt])
    printed = scored.stdout
    assert reported.exit_code == 0, reported.output
    if fmt == "json":
        data = json.loads(reported.output)
        assert data.pop("diagnosis")["p7/A"]
        assert data == json.loads(printed)
    else:
        assert reported.stdout.startswith(printed.rstrip("\n"))
        assert "## Diagnosis" in reported.output


def test_a_parsed_run_keeps_its_parser_through_the_log(tmp_path):
    cases = load_example("p7_archive_zh.json")
    judgments = Judgments(make_judge("curated", cases))
    log = build_runlog(score_cases(cases, judgments, Settings(ks=(2, 3, 4))), judgments)
    assert log.signature.parser.startswith("citeaudit-parse@") and log.signature.claims == "rule@1"
    path = tmp_path / "zh.json"
    path.write_text(log.model_dump_json())
    from citeaudit.run.log import rescore

    report, _ = rescore(read_runlog(path))
    assert report.run_signature == log.signature


def test_compare_names_every_field_that_can_differ():
    """Each field two runs can differ in has a name in compare's refusal (none raises)."""
    from citeaudit.run.compare import _mismatch_message
    from citeaudit.metrics.signature import FIGURE_FIELDS

    message = _mismatch_message([(f, "x", "y") for f in FIGURE_FIELDS], "A", "B")
    assert message.count(": A x · B y") == len(FIGURE_FIELDS)
