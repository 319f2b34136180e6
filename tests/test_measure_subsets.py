"""Every reader of run logs takes a run of any subset of measures (`score --metrics M`): `report` in every
format, `compare`, `review`, `agree`, `export`, `rescore` and the desk. A headline figure the run did not
measure reads "not measured in this run" in text, and `{"value": null, "reason": "not measured in this
run"}` in JSON; it is never a KeyError, a 0 or a reassuring "no finding"."""

from __future__ import annotations

import csv
import json
import re
from importlib.util import find_spec

import pytest
from click.testing import CliRunner

from citeaudit.cli import main
from citeaudit.metrics import Settings
from citeaudit.metrics import names as N
from citeaudit.report.render import HEADERS
from citeaudit.run.log import read_runlog

NOT_MEASURED = {"value": None, "reason": "not measured in this run"}
HEADLINE = N.ANSWER_MEASURES
CLAIMS = 15  # the returns-desk example's claims, over its six answers


def _settings(measure: str) -> Settings:
    return Settings(metrics=(measure,))


def _missing(measure: str) -> list[str]:
    """The headline measures a run of `measure` alone leaves out."""
    return [h for h in HEADLINE if not _settings(measure).reports(h)]


def _other(measure: str) -> str:
    """Another single measure to set beside `measure`."""
    return N.COVERAGE if measure != N.COVERAGE else N.SUPPORT


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The returns-desk example scored with every measure ("all") and with each one alone."""
    folder = tmp_path_factory.mktemp("subsets")
    runner = CliRunner()
    assert runner.invoke(main, ["examples", "--write", str(folder / "cases")]).exit_code == 0
    cases = folder / "cases" / "returns_desk.json"
    out = {"folder": folder, "cases": cases}
    for name, extra in [("all", []), *((m, ["--metrics", m]) for m in N.SELECTABLE)]:
        path = folder / f"{name}.json"
        result = runner.invoke(main, ["score", str(cases), *extra, "--out", str(path)])
        assert result.exit_code == 0, result.output
        out[name] = str(path)
    return out


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_single_measure_leaves_some_headline_figure_out():
    assert all(_missing(m) for m in N.SELECTABLE)


# --- report ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("measure", N.SELECTABLE)
def test_report_says_what_the_run_did_not_measure(runs, measure):
    run, missing = runs[measure], _missing(measure)
    judged = _settings(measure).judges_claims
    text = _run("report", run, "--format", "text")
    markdown = _run("report", run, "--format", "markdown")
    for h in missing:
        assert re.search(rf"^  {re.escape(HEADERS[h])} +not measured in this run", text, re.M), h
        assert f"| {HEADERS[h]} | not measured in this run | — |" in markdown, h
    for h in set(HEADLINE) - set(missing):
        assert not re.search(rf"^  {re.escape(HEADERS[h])} +not measured", text, re.M), h
    data = json.loads(_run("report", run, "--format", "json"))
    for figures in (data["summary"]["all"], *data["summary"]["by_system"].values()):
        assert all(figures[h] == NOT_MEASURED for h in missing)
        assert all("numerator" in figures[h] for h in HEADLINE if h not in missing)
    html_path = runs["folder"] / f"{measure}.html"
    _run("report", run, "-o", str(html_path))
    html = html_path.read_text(encoding="utf-8")
    for h in missing:
        assert re.search(rf'data-measure="{h}"><th [^>]*>{h}</th><td class="num">not measured in this run<', html), h
    if not judged:  # no claim was judged: the labels say so, and nothing is diagnosed
        assert f"0/0/0/0 (+{CLAIMS} unjudged)" in text
        assert "not measured in this run: the run's measures judge no claim" in markdown
        assert "every claim supported" not in markdown
        assert data["diagnosis"] == NOT_MEASURED
        assert 'class="num">not measured in this run</td>' in html.split('id="causes"')[1]
    else:
        assert data["diagnosis"]["returns-desk/original"]


def test_a_log_written_before_unasked_claims_were_counted_shows_them_unjudged(runs, tmp_path):
    data = json.loads(open(runs[N.CITATION_RECALL], encoding="utf-8").read())
    for labels in (data["results"]["summary"]["labels"], *(a["labels"] for a in data["results"]["answers"])):
        labels.pop("unjudged")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert f"0/0/0/0 (+{CLAIMS} unjudged)" in _run("report", str(old), "--format", "text")


# --- compare ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("measure", N.SELECTABLE)
def test_compare_reads_runs_of_any_subset(runs, measure):
    for a, b in ((measure, "all"), ("all", measure), (measure, _other(measure))):
        text = _run("compare", runs[a], runs[b])
        data = json.loads(_run("compare", runs[a], runs[b], "--format", "json"))
        for h in HEADLINE:
            in_a = a == "all" or h not in _missing(a)
            in_b = b == "all" or h not in _missing(b)
            if not (in_a or in_b):
                assert h not in data["measures"]
                continue
            row = data["measures"][h]
            assert (row["a"] == NOT_MEASURED) is not in_a and (row["b"] == NOT_MEASURED) is not in_b, (a, b, h)
            assert (row["difference"] is None) is not (in_a and in_b), (a, b, h)
            if not (in_a and in_b):
                assert re.search(rf"^{h} +.*not measured in this run", text, re.M), (a, b, h)
        for h in (N.SUPPORT, N.COVERAGE):  # the reading says which run did not measure them
            if h in _missing(measure):
                assert any(line.startswith(f"{h} not measured in ") for line in data["reading"]), (a, b, h)


# --- review, rescore, export -----------------------------------------------------------------------------

@pytest.mark.parametrize("measure", N.SELECTABLE)
def test_review_and_rescore_read_runs_of_any_subset(runs, measure, tmp_path):
    case = json.loads(runs["cases"].read_text(encoding="utf-8"))
    source = next(s for s in case["sources"] if s["id"] == "S1")
    source["text"] = source["text"].replace("30 days", "31 days")
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(case), encoding="utf-8")
    assert "5 claim(s) to review, resting on 1 changed passage(s)." in _run("review", runs[measure], "--sources",
                                                                             str(changed))
    rejudged = _run("review", runs[measure], "--sources", str(changed), "--rejudge")
    assert rejudged.count(", now ") == 5
    log = read_runlog(runs[measure])
    rescored = json.loads(_run("rescore", runs[measure], "--format", "json"))
    assert rescored["summary"] == log.results.summary.model_dump(mode="json")
    text = _run("rescore", runs[measure])
    assert all(re.search(rf"^  {re.escape(HEADERS[h])} +not measured in this run", text, re.M)
               for h in _missing(measure))


def _csv_rows(path) -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("measure", N.SELECTABLE)
def test_exports_read_runs_of_any_subset(runs, measure, tmp_path):
    missing = _missing(measure)
    every = tmp_path / "all.csv"
    _run("export", runs["all"], "--to", str(every))
    suffixes = [".csv", ".jsonl"] + ([".parquet"] if find_spec("pyarrow") else [])
    for suffix in suffixes:
        _run("export", runs[measure], "--to", str(tmp_path / f"claims{suffix}"))
    rows = _csv_rows(tmp_path / "claims.csv")
    assert [(r["case"], r["answer"], r["claim_text"]) for r in rows] == [
        (r["case"], r["answer"], r["claim_text"]) for r in _csv_rows(every)]
    for column in (N.SUPPORT, N.CITATION_RECALL, N.CITATION_PRECISION, N.COVERAGE):
        assert all(r[column] == "" for r in rows) is (column in missing), column  # empty: not measured
    lines = [json.loads(line) for line in (tmp_path / "claims.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(line[column] is None for line in lines for column in missing if column in line)
    if ".parquet" in suffixes:
        import pyarrow.parquet as pq

        assert pq.read_table(tmp_path / "claims.parquet").num_rows == len(rows)
    results = json.loads(_run("export", runs[measure], "--to", "ragchecker", "--system", "Original"))
    generator = results["metrics"]["generator_metrics"] | results["metrics"]["overall_metrics"]
    assert not set(missing) & set(generator) and not set(missing) & set(results["results"][0]["metrics"])


# --- agree -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("measure", N.SELECTABLE)
def test_agree_reads_runs_of_any_subset(runs, measure):
    """A run of one measure against the curated run of every measure (the cases' labels), and the other
    way round: a curated run of one measure gives the labels its judge applied."""
    def agree(run: str, labels: str) -> dict:
        return json.loads(_run("agree", run, "--labels", labels, "--format", "json", "--resamples", "20"))

    result = agree(runs[measure], runs["all"])
    if _settings(measure).judges_claims:  # the pairs the curated judge judged, each agreeing with itself
        assert result["n"] == agree(runs["all"], runs["all"])["n"] > 0 and result["agree"] == result["n"]
    else:
        assert result["n"] == 0
        assert result["undefined"] == "the run's measures judge no claim (not measured in this run)"
    back = agree(runs["all"], runs[measure])
    assert back["labels"]["format"] == "curated run log" and back["agree"] == back["n"]


# --- the desk --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("measure", N.SELECTABLE)
def test_the_desk_reads_runs_of_any_subset(runs, measure):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from citeaudit.cli import desk_session
    from citeaudit.desk.app import create_app
    from citeaudit.desk.session import OVERVIEW_MEASURES, SORTABLE

    missing = _missing(measure)
    client = TestClient(create_app(desk_session([runs[measure]])), base_url="http://127.0.0.1:8765")
    state = client.get("/api/state", params={"case": "returns-desk", "answer": "original"})
    assert state.status_code == 200, state.text
    answer = state.json()["answer"]
    assert all(answer["metrics"][h] == NOT_MEASURED for h in missing)
    assert all("numerator" in answer["metrics"][h] for h in HEADLINE if h not in missing)
    if not _settings(measure).judges_claims:
        assert answer["labels"]["unjudged"] == 4
    for sort in SORTABLE:
        page = client.get("/api/overview", params={"sort": sort})
        assert page.status_code == 200, page.text
    overview = page.json()
    for row in (*overview["summary"], *overview["rows"]):
        assert all(row[m] == NOT_MEASURED for m in OVERVIEW_MEASURES if m in missing)
    exported = client.post("/api/export", json={})
    assert exported.status_code == 200 and exported.json()["settings"]["metrics"] == [measure]


# --- the diagnosis ---------------------------------------------------------------------------------------

def test_a_fact_stated_only_by_unjudged_claims_is_undecided_not_omitted():
    from citeaudit.judges import Judgments, make_judge
    from citeaudit.run.diagnose import diagnose

    from test_metrics_selection import ALCE_ONLY, _cases

    labels = ALCE_ONLY + [{"claim": "The limit is 80 C.", "passages": ["D1", "D2"], "label": "full"}]
    cases = _cases(labels)
    from citeaudit.metrics import score_cases

    result = score_cases(cases, Judgments(make_judge("curated", cases)), Settings(missing_labels="skip")).answers[0]
    assert result.undecided_facts == ["eco"]  # stated by "Eco mode saves energy.", which has no label
    assert [(f.kind, f.ref, f.cause) for f in diagnose(cases[0], result)] == []
