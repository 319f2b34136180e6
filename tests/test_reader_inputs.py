"""Other tools' files (--from FORMAT, --option KEY=VALUE) wherever a case file is accepted: validate, prepare,
verify, the desk and review --sources, with the same located errors as score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit.cli import desk_session, main
from citeaudit.run.log import read_runlog

FORMATS = Path(__file__).parent / "fixtures" / "formats"
EXPERTQA = str(FORMATS / "expertqa_rand_val_sample.jsonl")
RAGCHECKER = str(FORMATS / "ragchecker_input.json")
RAGAS = str(FORMATS / "ragas_samples.jsonl")


def _first_expertqa_line(tmp_path) -> str:
    """The ExpertQA line whose every claim carries an expert label: the curated judge can judge it all."""
    path = tmp_path / "expertqa_one.jsonl"
    path.write_text(Path(EXPERTQA).read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    return str(path)


# --- validate and prepare: end to end ------------------------------------------------------------


@pytest.mark.parametrize("fmt, path, counted", [
    ("alce", FORMATS / "alce_asqa_result.json", "2 case(s), 2 answer(s)"),
    ("ragchecker", FORMATS / "ragchecker_output.json", "1 case(s), 1 answer(s)"),
    ("ragas", FORMATS / "ragas_dataset", "3 case(s), 3 answer(s)"),  # a saved dataset: a folder
    ("expertqa", FORMATS / "expertqa_rand_val_sample.jsonl", "4 case(s), 4 answer(s)"),
    ("otel", FORMATS / "otel_langchain_rag.jsonl", "2 case(s), 2 answer(s)"),
])
def test_validate_reads_every_format(runner, fmt, path, counted):
    result = runner.invoke(main, ["validate", "--from", fmt, str(path)])
    assert result.exit_code == 0, result.output
    assert result.output == f"ok: {counted}\n"


def test_prepare_then_replay_reads_another_tools_file(runner, tmp_path):
    line = _first_expertqa_line(tmp_path)
    store = str(tmp_path / "judgments.db")
    prepared = runner.invoke(main, ["prepare", "--from", "expertqa", line, "--judge", "curated", "--store", store])
    assert prepared.exit_code == 0, prepared.output
    assert "7 pairs listed; judge asked 7" in prepared.output
    replayed = runner.invoke(main, ["score", "--from", "expertqa", line, "--judge", "curated", "--store", store,
                                    "--replay", "--format", "json"])
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.output)["summary"]["all"]["support"]["numerator"] == 7


@pytest.mark.parametrize("command", [["score"], ["validate"], ["prepare", "--store", "x.db"],
                                     ["verify", "--judge", "curated"], ["desk", "--no-open"],
                                     ["review", "run.json", "--sources"]])
def test_an_option_without_from_is_refused_as_for_score(runner, tmp_path, command):
    """Refused before anything is read, a JSON lines file (read one case at a time, never by a reader) too."""
    result = runner.invoke(main, [*command, RAGAS, "--option", "system=rag-v2"])
    assert result.exit_code == 2 and "Invalid value for --option: reader options need --from FORMAT" in result.output


@pytest.mark.parametrize("command", [["validate"], ["prepare", "--store", "x.db"], ["verify", "--judge", "curated"],
                                     ["desk", "--no-open"]])
def test_an_unknown_reader_option_is_located_as_for_score(runner, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, [*command, RAGAS, "--from", "ragas", "--option", "sytem=rag-v2"])
    assert result.exit_code == 2
    assert f"{RAGAS}: unknown option 'sytem' for the ragas reader (known: system, id_field, split)" in result.output


# --- verify --------------------------------------------------------------------------------------


def test_verify_reads_another_tools_file_and_picks_by_its_ids(runner, tmp_path):
    args = ["verify", EXPERTQA, "--from", "expertqa", "--judge", "curated"]
    several = runner.invoke(main, args)
    assert several.exit_code == 2 and "q-287ea8d5b8fb/rr_sphere_gpt4" in several.output
    out = tmp_path / "run.json"
    picked = runner.invoke(main, [*args, "--answer", "q-408a369de771/rr_gs_gpt4", "--out", str(out)])
    assert picked.exit_code == 1, picked.output  # revise: ExpertQA's experts found one of two claims unsupported
    assert picked.stdout.startswith("decision: revise (1 of 2 claims supported)")
    assert read_runlog(out).inputs[0].reader == "expertqa"
    by_answer_alone = runner.invoke(main, [*args, "--answer", "rr_gs_gpt4"])
    assert by_answer_alone.exit_code == 1


def test_verify_answer_ids_that_hold_a_slash(runner, tmp_path):
    """ExpertQA names an answer by its system, and a system may be named `org/model`."""
    record = json.loads(Path(EXPERTQA).read_text(encoding="utf-8").splitlines()[1])
    record["answers"] = {"acme/rr-gs": next(iter(record["answers"].values()))}
    path = tmp_path / "slash.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    args = ["verify", str(path), "--from", "expertqa", "--judge", "curated"]
    assert runner.invoke(main, [*args, "--answer", "q-408a369de771/acme/rr-gs"]).exit_code == 1
    assert runner.invoke(main, [*args, "--answer", "acme/rr-gs"]).exit_code == 1


def test_verify_from_refuses_sources_and_names_the_answers_of_a_long_file(runner, tmp_path):
    both = runner.invoke(main, ["verify", RAGCHECKER, "--from", "ragchecker", "--sources", RAGCHECKER])
    assert both.exit_code == 2 and "--sources goes with an answer given as text" in both.output
    results = [{"query_id": f"q{i}", "query": "q?", "response": "r.", "retrieved_context": [{"text": "t"}]}
               for i in range(45)]
    long = tmp_path / "checking.json"
    long.write_text(json.dumps({"results": results}), encoding="utf-8")
    listed = runner.invoke(main, ["verify", str(long), "--from", "ragchecker", "--judge", "curated"])
    assert listed.exit_code == 2 and "q19/response, … (25 more)" in listed.output and "q20/" not in listed.output


# --- the desk ------------------------------------------------------------------------------------


def test_the_desk_opens_another_tools_file():
    session = desk_session([EXPERTQA], source_format="expertqa")
    assert list(session.cases) == ["q-287ea8d5b8fb", "q-408a369de771", "q-bc4ac6df3ebf", "q-ce50ce7c2553"]
    assert session.source == f"{EXPERTQA} (--from expertqa)"
    claims = session.snapshot("q-408a369de771")["answer"]["claims"]
    assert [c["judgment"]["label"] for c in claims] == ["full", "none"]  # the experts' labels, judged by the curated judge


def test_the_desk_counts_citations_that_name_no_source_as_score_does():
    """ALCE's `[5]` with two documents: counted as supporting nothing (score's default for --from)."""
    session = desk_session([str(FORMATS / "alce_asqa_result.json")], "embedding", source_format="alce")
    assert session.settings.invalid_citations == "count"
    assert [c.text for c in session._resolved("5130479380513440961").case.answers[0].statements] == [
        "The pilot ran for 30 days.", "It was the longest pilot."]


def test_the_desk_with_from_needs_files(runner):
    result = runner.invoke(main, ["desk", "--from", "ragas", "--no-open"])
    assert result.exit_code == 2 and "--from ragas reads the files given" in result.output


# --- review --sources ----------------------------------------------------------------------------


def test_review_reads_the_current_sources_from_another_tools_file(runner, tmp_path):
    run = tmp_path / "run.json"
    scored = runner.invoke(main, ["score", "--from", "ragchecker", RAGCHECKER, "--judge", "curated",
                                  "--missing-labels", "skip", "--out", str(run)])
    assert scored.exit_code == 0, scored.output
    data = json.loads(Path(RAGCHECKER).read_text(encoding="utf-8"))
    data["results"][0]["retrieved_context"][1]["text"] = "P7 operating manual, version 4. The limit is 75 °C."
    current = tmp_path / "current.json"
    current.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(main, ["review", str(run), "--sources", str(current), "--from", "ragchecker",
                                  "--format", "json"])
    assert result.exit_code == 0, result.output
    assert [(c["case"], c["passage"], c["status"]) for c in json.loads(result.output)] == [("0", "001", "changed")]
    unknown = runner.invoke(main, ["review", str(run), "--sources", str(current), "--from", "ragchecker",
                                   "--option", "source_id=position"])
    assert unknown.exit_code == 2 and "unknown option 'source_id' for the ragchecker reader" in unknown.output
