"""Exports of a run log: claim rows (CSV, JSON Lines, Parquet, pandas) and RAGChecker's results shape."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from citeaudit.cli import main
from citeaudit.cli.export import export_cmd
from citeaudit.errors import ExportError
from citeaudit.examples import load_example
from citeaudit.report.exports import (COLUMN_NAMES, COLUMNS, claim_rows, claims_format, ragchecker_results, report_rows,
                               rows_frame, write_claims, write_rows)
from citeaudit.judges import Judgments, make_judge
from citeaudit.metrics import Settings, score_cases
from citeaudit.records import Evidence, Judgment, SourcePassage
from citeaudit.run.log import build_runlog, read_runlog, write_runlog

from helpers import SetJudge, load, make_case

# The main group attaches the command (cli.py); attaching it here again changes nothing.
main.add_command(export_cmd)

ECO = {
    "case": "p7", "answer": "A", "system": "A", "statement_index": 1, "claim_index": 0, "claim_id": "c4",
    "claim_text": "Eco reduces annual energy by 15%.", "citation_index": 0, "citation": "D3",
    "passage_doc": "D3", "passage_version": "2026-09", "passage_start": 0, "passage_end": 219,
    "passage_sha256": "d9bf53da67b55186cd87fb513ffb8010c0c84018d5f04e57cfcd0344e8071db8",
    "label": "none", "best_guess": "none", "judge": "curated@1#53285bd471b9", "decided_by": None,
    "explanation": "D3's 15% is reduced downtime over 30 days, not annual energy; it gives no energy estimate.",
    "evidence_passage": None, "evidence_start": None, "evidence_end": None, "p_full": None,
    "support": 1 / 3, "support_numerator": 1, "support_denominator": 3,
    "citation_recall": 1 / 3, "citation_precision": 1 / 3, "coverage": 1 / 3,
    "repair_action": None, "original_citations": None, "suggested_citations": None,  # not a repaired run
}


def p7_log():
    cases = load_example("p7_archive.json")
    judgments = Judgments(make_judge("curated", cases))
    return build_runlog(score_cases(cases, judgments, Settings()), judgments)


@pytest.fixture(scope="module")
def p7_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "run.json"
    write_runlog(path, p7_log())
    return path


class EvidenceJudge:
    """Labels every cited set full, pointing at characters 7-12 of its first passage, with class scores."""

    name = "evidence"
    signature = "evidence@test"

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        return Judgment(label="full", judge=self.signature, explanation="points at it",
                        evidence=Evidence(passage=passages[0].id, start=7, end=12),
                        scores={"full": 0.875, "partial": 0.125, "none": 0.0, "contradicts": 0.0})


def spans_log():
    """One claim citing two passages of a document, one claim citing nothing."""
    case = make_case([{"id": "s1", "text": "Alpha and beta.", "citations": ["D#1", "D#2"]},
                      {"id": "s2", "text": "Gamma.", "citations": []}], id="spans")
    case["sources"] = [{"id": "D", "version": "7", "text": "Alpha. Beta.",
                        "passages": [{"id": "D#1", "span": {"start": 0, "end": 6}},
                                     {"id": "D#2", "span": {"start": 7, "end": 12}}]}]
    cases = load(case)
    judgments = Judgments(EvidenceJudge())
    report = score_cases(cases, judgments, Settings())
    return report, build_runlog(report, judgments)


def pairs_in_log(path) -> int:
    """Claim x citation pairs, counted from the log's JSON (a claim without citations counts once)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return sum(max(1, len(c["citations"])) for a in data["results"]["answers"] for c in a["claims"])


def typed(row: dict[str, str]) -> dict:
    """A CSV row read back, with each column's type restored (an empty field is None)."""
    convert = {"str": str, "int": int, "float": float}
    return {c.name: None if row[c.name] == "" else convert[c.type](row[c.name]) for c in COLUMNS}


# --- rows -------------------------------------------------------------------------------------------


def test_rows_are_streamed_one_per_claim_and_citation(p7_run):
    log = read_runlog(p7_run)
    rows = claim_rows(log)
    assert iter(rows) is rows  # a generator, not a list of everything
    rows = list(rows)
    assert len(rows) == pairs_in_log(p7_run) == 7
    assert all(tuple(r) == COLUMN_NAMES for r in rows)
    assert [(r["answer"], r["claim_id"], r["citation"]) for r in rows] == [
        ("A", "c1", "D1"), ("A", "c4", "D3"), ("A", "c5", "D4"), ("B", "c1", "D1"),
        ("C", "c1", "D1"), ("C", "c2", "D3"), ("C", "c3", "D3")]


def test_the_eco_claim_row(p7_run):
    eco = [r for r in claim_rows(read_runlog(p7_run)) if r["claim_text"] == "Eco reduces annual energy by 15%."]
    assert eco == [ECO]


def test_a_claim_per_citation_and_an_uncited_claim_once_with_evidence_and_scores():
    report, log = spans_log()
    rows = list(claim_rows(log))
    assert [(r["claim_id"], r["citation_index"], r["citation"], r["passage_start"], r["passage_end"])
            for r in rows] == [("s1", 0, "D#1", 0, 6), ("s1", 1, "D#2", 7, 12), ("s2", None, None, None, None)]
    first, _, uncited = rows
    assert (first["passage_doc"], first["passage_version"]) == ("D", "7")
    assert (first["evidence_passage"], first["evidence_start"], first["evidence_end"]) == ("D#1", 7, 12)
    assert first["p_full"] == 0.875
    assert (uncited["label"], uncited["judge"], uncited["p_full"]) == ("none", "rule:no-citation", None)
    assert uncited["passage_doc"] is uncited["passage_sha256"] is None
    assert (first["support_numerator"], first["support_denominator"], first["support"]) == (1, 2, 0.5)
    assert list(report_rows(report)) == rows  # a report just scored gives the rows of its log


# --- files ------------------------------------------------------------------------------------------


def test_csv_round_trip(p7_run, tmp_path):
    log = read_runlog(p7_run)
    out = tmp_path / "claims.csv"
    assert write_claims(log, out) == 7
    with open(out, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == COLUMN_NAMES
        back = [typed(r) for r in reader]
    assert back == list(claim_rows(log))
    assert ECO in back


def test_the_csv_opens_in_a_spreadsheet_with_chinese_intact(runner, tmp_path):
    """A byte-order mark first, once, then UTF-8: what tells Excel the file is UTF-8 (without it, it reads
    the legacy code page and Chinese comes out as mojibake). Rows of the CiteCheck pairs (Chinese)."""
    pairs = Path(__file__).parent / "fixtures" / "formats" / "pairs_citecheck.jsonl"
    run, out = tmp_path / "run.json", tmp_path / "claims.csv"
    assert runner.invoke(main, ["score", "--from", "pairs", str(pairs), "--out", str(run), "--format", "json"]
                         ).exit_code == 0
    assert runner.invoke(main, ["export", str(run), "--to", str(out)]).exit_code == 0
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf" + ",".join(COLUMN_NAMES).encode("ascii") + b"\r\n")
    assert data.count(b"\xef\xbb\xbf") == 1
    claim = "赖声川创作的第一部话剧是《那一夜，我们说相声》。"
    assert claim.encode("utf-8") in data
    with open(out, encoding="utf-8-sig", newline="") as fh:  # how Python reads it back
        back = list(csv.DictReader(fh))
    assert claim in {r["claim_text"] for r in back} and len(back) == 9  # one row per citation
    assert [typed(r) for r in back] == list(claim_rows(read_runlog(run)))


def test_a_streamed_log_s_csv_has_the_byte_order_mark_too(runner, tmp_path):
    pairs = Path(__file__).parent / "fixtures" / "formats" / "pairs_citecheck.jsonl"
    run, out = tmp_path / "run.jsonl", tmp_path / "claims.csv"
    assert runner.invoke(main, ["score", "--from", "pairs", str(pairs), "--out", str(run)]).exit_code == 0
    assert runner.invoke(main, ["export", str(run), "--to", str(out)]).exit_code == 0
    assert out.read_bytes().startswith(b"\xef\xbb\xbfcase,")


def test_pandas_reads_the_csv_without_being_told(p7_run, tmp_path):
    pd = pytest.importorskip("pandas")
    out = tmp_path / "claims.csv"
    write_claims(read_runlog(p7_run), out)
    frame = pd.read_csv(out)
    assert tuple(frame.columns) == COLUMN_NAMES and frame["claim_text"].tolist()[0] == "The continuous limit is 80 °C."


def test_jsonl_round_trip_keeps_unicode_and_nulls(tmp_path):
    _, log = spans_log()
    log.results.answers[0].claims[1].text = "Gamma — °C «ok»."
    out = tmp_path / "claims.jsonl"
    assert write_claims(log, out) == 3
    text = out.read_text(encoding="utf-8")
    assert "Gamma — °C «ok»." in text  # written as is, not as \u escapes
    assert [json.loads(line) for line in text.splitlines()] == list(claim_rows(log))


FORMULAS = ["=HYPERLINK(\"http://x.example\",\"see\")", "+1+2", "-2+3", "@SUM(A1:A9)", "\tTAB first", "\rCR first"]


def _formula_rows() -> list[dict]:
    """The spans run's rows with a formula-like claim text and ids on each, and a negative figure."""
    _, log = spans_log()
    (row, *_) = claim_rows(log)
    return [{**row, "claim_text": text, "claim_id": text, "system": "=cmd|' /C calc'!A0", "support": -0.25,
             "passage_start": -3} for text in [*FORMULAS, "plain = text", "'quoted"]]


def test_csv_cells_a_spreadsheet_would_run_as_formulas_start_with_a_quote(tmp_path):
    rows = _formula_rows()
    out = tmp_path / "claims.csv"
    write_rows(rows, out)
    with open(out, encoding="utf-8-sig", newline="") as fh:
        back = list(csv.DictReader(fh))
    assert [r["claim_text"] for r in back] == ["'" + f for f in FORMULAS] + ["plain = text", "'quoted"]
    assert [r["claim_id"] for r in back] == [r["claim_text"] for r in back]
    assert {r["system"] for r in back} == {"'=cmd|' /C calc'!A0"}
    assert {(r["support"], r["passage_start"]) for r in back} == {("-0.25", "-3")}  # numbers stay numbers
    assert rows[0]["claim_text"] == FORMULAS[0]  # the caller's rows are not changed


def test_a_csv_cell_holding_a_carriage_return_stays_one_field(tmp_path):
    rows = [{**row, "claim_text": "one\rtwo"} for row in _formula_rows()[:1]]
    write_rows(rows, tmp_path / "claims.csv")
    with open(tmp_path / "claims.csv", encoding="utf-8-sig", newline="") as fh:
        (back,) = csv.DictReader(fh)
    assert back["claim_text"] == "one\rtwo" and back["label"] == "full"


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_jsonl_and_parquet_keep_formula_like_text_exactly(tmp_path, suffix):
    rows = _formula_rows()
    out = tmp_path / f"claims{suffix}"
    write_rows(rows, out)
    if suffix == ".jsonl":
        back = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    else:
        back = pytest.importorskip("pyarrow.parquet").read_table(out).to_pylist()
    assert back == rows


def test_parquet_round_trip(p7_run, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    log = read_runlog(p7_run)
    out = tmp_path / "claims.parquet"
    assert write_claims(log, out) == pairs_in_log(p7_run)
    table = pq.read_table(out)
    assert table.column_names == list(COLUMN_NAMES)
    assert str(table.schema.field("passage_start").type) == "int64"
    assert table.to_pylist() == list(claim_rows(log))
    assert [p.name for p in tmp_path.iterdir()] == ["claims.parquet"]  # no temporary file left


def test_parquet_of_a_claim_without_citation(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    _, log = spans_log()
    write_claims(log, tmp_path / "c.parquet")
    assert pq.read_table(tmp_path / "c.parquet").to_pylist() == list(claim_rows(log))


def test_claims_frame(p7_run):
    pytest.importorskip("pandas")
    from citeaudit.report.exports import claims_frame

    frame = claims_frame(read_runlog(p7_run))
    assert list(frame.columns) == list(COLUMN_NAMES)
    assert len(frame) == 7
    assert str(frame["support_numerator"].dtype) == "Int64"
    eco = frame[frame["claim_id"] == "c4"].iloc[0]
    assert (eco["citation"], eco["label"], eco["passage_version"], eco["passage_end"]) == ("D3", "none", "2026-09", 219)


def test_the_frame_methods_give_the_exported_rows(p7_run):
    pytest.importorskip("pandas")
    from citeaudit.report.exports import claims_frame

    log = read_runlog(p7_run)
    assert log.claims_frame().equals(claims_frame(log))
    cases = load_example("p7_archive.json")
    report = score_cases(cases, Judgments(make_judge("curated", cases)), Settings())
    frame = report.to_pandas()
    assert list(frame.columns) == list(COLUMN_NAMES)
    assert frame.equals(rows_frame(report_rows(report))) and len(frame) == 7


def test_unknown_suffix_is_refused_before_writing(p7_run, tmp_path):
    with pytest.raises(ExportError, match=r"unknown export format \('\.xlsx'\)"):
        write_claims(read_runlog(p7_run), tmp_path / "claims.xlsx")
    assert list(tmp_path.iterdir()) == []
    assert claims_format("A.JSONL") == ".jsonl"


def test_a_missing_extra_names_it(monkeypatch, p7_run, tmp_path):
    from citeaudit.errors import MissingExtra
    from citeaudit.report.exports import claims_frame

    for module in ("pyarrow", "pyarrow.parquet", "pandas"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    with pytest.raises(MissingExtra, match=r"^a Parquet export needs pyarrow.parquet, which is not installed: "
                                           r"pip install 'citeaudit\[formats\]'$"):
        write_claims(read_runlog(p7_run), tmp_path / "claims.parquet")
    with pytest.raises(MissingExtra, match=r"^a DataFrame needs pandas, which is not installed: "
                                           r"pip install 'citeaudit\[formats\]'$"):
        claims_frame(read_runlog(p7_run))
    assert list(tmp_path.iterdir()) == []


# --- RAGChecker -------------------------------------------------------------------------------------


def test_ragchecker_results_of_p7(p7_run):
    out = ragchecker_results(read_runlog(p7_run), "A")
    assert set(out) == {"results", "metrics"}
    [result] = out["results"]
    assert set(result) == {"query_id", "query", "gt_answer", "response", "retrieved_context", "metrics"}
    assert result["query_id"] == "p7"
    assert result["query"].startswith("For current-version P7, what is the continuous temperature limit")
    assert result["gt_answer"] == ("The continuous temperature limit of the current P7 is 80 °C. "
                                   "The Eco pilot lasted 30 days. The Eco pilot reported a 15% reduction in downtime.")
    assert result["response"] == ("The continuous limit is 80 °C. Eco reduces annual energy by 15%. "
                                  "The pilot was validated on a thousand machines.")
    assert [d["doc_id"] for d in result["retrieved_context"]] == ["D2", "D4", "D1", "D3"]
    assert result["retrieved_context"][2]["text"] == ("P7 operating manual, version 3. "
                                                      "The continuous operating temperature limit is 80 °C.")
    assert result["metrics"]["support"] == 1 / 3
    assert result["metrics"]["recall@3"] == 0.5
    assert out["metrics"] == {
        "overall_metrics": {"coverage": 33.3, "abstention": 0.0},
        "retriever_metrics": {"recall@1": 0.0, "facts@1": 0.0, "recall@3": 50.0, "facts@3": 33.3,
                              "recall@5": 100.0, "facts@5": 100.0, "recall@10": 100.0, "facts@10": 100.0},
        "generator_metrics": {"citation_presence": 100.0, "support": 33.3, "citation_recall": 33.3,
                              "citation_precision": 33.3, "alce_citation_recall": 33.3,
                              "alce_citation_precision": 33.3},
    }
    ragchecker_only = {"precision", "recall", "f1", "claim_recall", "context_precision", "context_utilization",
                       "noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant", "hallucination",
                       "self_knowledge", "faithfulness"}
    named = set(result["metrics"]).union(*out["metrics"].values())
    assert not named & ragchecker_only  # measures citeaudit does not compute are left out, not faked


def test_ragchecker_keeps_original_ids_and_reference_answers():
    case = make_case([{"text": "X.", "citations": ["S1"]}], id="t1", ranking=["S2", "S1"],
                     metadata={"query_id": 17, "gt_answer": "X, as given."})
    case["answers"][0]["system"] = "rag"
    cases = load(case)
    judgments = Judgments(SetJudge({"X.": [{"S1"}]}))
    log = build_runlog(score_cases(cases, judgments, Settings()), judgments)
    [result] = ragchecker_results(log)["results"]  # one system: no need to name it
    assert (result["query_id"], result["gt_answer"]) == ("17", "X, as given.")
    assert result["metrics"]["support"] == 1.0


def test_ragchecker_without_ranking_and_with_undefined_figures():
    _, log = spans_log()
    out = ragchecker_results(log)
    [result] = out["results"]
    assert result["retrieved_context"] is None  # not known: not an empty retrieval
    assert "coverage" not in result["metrics"]  # no required facts: undefined, so left out
    assert out["metrics"]["retriever_metrics"] == {}
    assert out["metrics"]["generator_metrics"]["support"] == 50.0


def test_ragchecker_needs_a_system_when_the_run_holds_several(p7_run):
    log = read_runlog(p7_run)
    with pytest.raises(ExportError, match=r"several \(A, B, C\): choose one with --system"):
        ragchecker_results(log)
    with pytest.raises(ExportError, match=r"system 'Z' is not in this run \(its systems: A, B, C\)"):
        ragchecker_results(log, "Z")


# --- command line -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["claims.csv", "claims.jsonl"])
def test_cli_writes_claims(runner, p7_run, tmp_path, name):
    out = tmp_path / name
    result = runner.invoke(main, ["export", str(p7_run), "--to", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"7 rows written to {out}\n"
    assert result.stdout == ""
    assert out.exists()


def test_cli_writes_parquet(runner, p7_run, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "claims.parquet"
    result = runner.invoke(main, ["export", str(p7_run), "--to", str(out)])
    assert (result.exit_code, result.stderr) == (0, f"7 rows written to {out}\n")


def test_cli_ragchecker_to_a_file_and_to_stdout(runner, p7_run, tmp_path):
    out = tmp_path / "rc.json"
    result = runner.invoke(main, ["export", str(p7_run), "--to", "ragchecker", "--system", "C", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"1 results written to {out}\n"
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written == ragchecker_results(read_runlog(p7_run), "C")
    shown = runner.invoke(main, ["export", str(p7_run), "--to", "ragchecker", "--system", "C"])
    assert shown.exit_code == 0
    assert json.loads(shown.stdout) == written


def test_cli_refuses_an_unknown_suffix_before_reading(runner, tmp_path):
    result = runner.invoke(main, ["export", str(tmp_path / "missing.json"), "--to", str(tmp_path / "c.xlsx")])
    assert result.exit_code == 2
    assert "unknown export format ('.xlsx')" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_bad_run_log_exits_2(runner, tmp_path):
    bad = tmp_path / "run.json"
    bad.write_text('{"cases": []}', encoding="utf-8")
    result = runner.invoke(main, ["export", str(bad), "--to", str(tmp_path / "c.csv")])
    assert result.exit_code == 2
    assert "not a citeaudit run log (no schema_version)" in result.stderr
    assert not (tmp_path / "c.csv").exists()


def test_cli_missing_run_log_and_missing_folder_exit_2(runner, p7_run, tmp_path):
    missing = runner.invoke(main, ["export", str(tmp_path / "none.json"), "--to", str(tmp_path / "c.csv")])
    assert missing.exit_code == 2
    folder = runner.invoke(main, ["export", str(p7_run), "--to", str(tmp_path / "no" / "c.csv")])
    assert folder.exit_code == 2
    assert "does not exist" in folder.stderr


def test_cli_ragchecker_options_only_with_ragchecker(runner, p7_run, tmp_path):
    result = runner.invoke(main, ["export", str(p7_run), "--to", str(tmp_path / "c.csv"), "-o", "x.json"])
    assert result.exit_code == 2
    assert "go with --to ragchecker" in result.stderr
    several = runner.invoke(main, ["export", str(p7_run), "--to", "ragchecker"])
    assert several.exit_code == 2
    assert "choose one with --system" in several.stderr


def test_cli_warns_about_an_edited_log(runner, p7_run, tmp_path):
    data = json.loads(p7_run.read_text(encoding="utf-8"))
    data["judge"] = "edited"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(main, ["export", str(edited), "--to", str(tmp_path / "c.jsonl")])
    assert result.exit_code == 0
    assert "was changed after it was written" in result.stderr


def test_the_documented_columns_are_the_columns():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "exports.md").read_text(encoding="utf-8")
    section = doc.split("## Claim rows", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| `")]
    assert [(name.strip().strip("`"), kind.strip()) for name, kind in rows] == [(c.name, c.type) for c in COLUMNS]


def test_an_uncertain_claim_is_exported_as_uncertain_with_its_best_guess():
    from citeaudit.records import Judgment

    _, log = spans_log()
    claim = log.results.answers[0].claims[0]
    claim.judgment = claim.judgment.model_copy(update={"uncertain": True, "decided_by": "model@x"})
    row = next(claim_rows(log))
    assert (row["label"], row["best_guess"], row["decided_by"]) == ("uncertain", claim.judgment.label, "model@x")
    assert isinstance(claim.judgment, Judgment)
