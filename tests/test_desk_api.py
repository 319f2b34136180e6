"""The desk's JSON API over a session of the built-in examples (FastAPI's test client, no browser)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from citeaudit.cli import desk_session  # noqa: E402
from citeaudit.desk.app import create_app  # noqa: E402
from citeaudit.runlog import SCHEMA_VERSION, read_runlog  # noqa: E402


# The desk answers only to its own host names (see test_desk_security.py); the test client's default
# "testserver" is not one of them.
DESK = "http://127.0.0.1:8765"


@pytest.fixture
def client():
    return TestClient(create_app(desk_session(())), base_url=DESK)


def _figures(snapshot) -> tuple[str, str]:
    m = snapshot["answer"]["metrics"]

    def counts(r):
        return f"{int(r['numerator'])}/{int(r['denominator'])}" if r["denominator"] else "n/a"

    return counts(m["citation_recall"]), counts(m["citation_precision"])


def _walk(client, name, variant=None):
    r = client.post("/api/walkthrough", json={"name": name, "variant": variant})
    assert r.status_code == 200, r.text
    return r.json()


def _cite(client, snap, index, citations):
    r = client.post("/api/edit", json={"case": snap["case"]["id"], "answer": snap["answer"]["answer"],
                                       "statement": index, "citations": citations})
    assert r.status_code == 200, r.text
    return r.json()


def test_state_carries_the_seed_inspector_objects(client):
    snap = client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    assert _figures(snap) == ("2/4", "2/3")
    c1 = snap["answer"]["inspector"][0]
    assert c1["statement"] == {"id": "C1", "text": "Standard items may be returned within 30 days of delivery.",
                               "citations": ["S2"]}
    assert c1["citedPassages"] == [{"id": "S2", "text": "A receipt is required for standard-item returns.",
                                    "version": "sachin-demo-v1", "span": {"start": 0, "end": 48}}]
    assert c1["check"]["citedSetSupports"] is False
    assert [p["rank"] for p in snap["passages"]] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("name, variant, steps", [
    ("follow", None, [(None, "2/4", "2/3")]),
    ("repair", None, [(None, "2/4", "2/3"), ((0, ["S1"]), "3/4", "3/3"), ((2, ["S3"]), "4/4", "4/4")]),
    ("cover", None, [(None, "3/4", "3/3"), ((2, ["S3"]), "4/4", "4/4")]),
    ("trim", None, [(None, "4/4", "4/6"), ((0, ["S1"]), "4/4", "4/4")]),
    ("test-scope", "window-receipt", [(None, "1/1", "2/2"), ((0, ["S1"]), "0/1", "0/1")]),
    ("test-scope", "clearance", [(None, "0/1", "0/2")]),
    ("test-scope", "two-supports", [(None, "1/1", "2/2")]),
])
def test_walkthroughs_reach_the_seed_figures(client, name, variant, steps):
    snap = _walk(client, name, variant)
    goals = {(g["recall"], g["precision"]) for g in snap["walkthrough"]["goals"]}
    for edit, recall, precision in steps:
        if edit:
            snap = _cite(client, snap, *edit)
        assert _figures(snap) == (recall, precision)
    assert (recall, precision) in goals


def test_unlabelled_text_edit_is_refused_and_nothing_changes(client):
    snap = _walk(client, "follow")
    r = client.post("/api/edit", json={"case": snap["case"]["id"], "answer": "original", "statement": 0,
                                       "text": "Standard items may be returned within 60 days."})
    assert r.status_code == 409
    assert "no curated label" in r.json()["error"] and "never guesses" in r.json()["error"]
    after = client.get("/api/state", params={"case": snap["case"]["id"], "answer": "original"}).json()
    assert after["answer"]["statements"][0]["text"] == snap["answer"]["statements"][0]["text"]


@pytest.mark.parametrize("body, status, message", [
    ({"statement": 0, "citations": ["S99"]}, 422, "unknown passage 'S99'"),
    ({"statement": 0, "citations": ["S1", "S1"]}, 422, "cited twice"),
    ({"statement": 9, "citations": ["S1"]}, 404, "no statement 9"),
    ({"statement": 0, "text": "  "}, 422, "cannot be empty"),
])
def test_bad_edits(client, body, status, message):
    r = client.post("/api/edit", json={"case": "returns-desk", "answer": "original", **body})
    assert r.status_code == status and message in r.json()["error"]


def test_reset_restores_the_starting_setup(client):
    snap = _cite(client, _walk(client, "repair"), 0, ["S1"])
    r = client.post("/api/reset", json={"case": snap["case"]["id"], "answer": "original"})
    assert _figures(r.json()) == ("2/4", "2/3")


def test_human_labels_agreement_and_export(client, tmp_path):
    snap = client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    base = {"case": "returns-desk", "answer": "original", "reviewer": "maya"}
    client.post("/api/human", json={**base, "statement": 0, "claim": 0, "label": "none", "note": "S2 has no window"})
    snap = client.post("/api/human", json={**base, "statement": 1, "claim": 0, "label": "partial"}).json()
    assert snap["agreement"]["n"] == 2 and snap["agreement"]["agree"] == 1
    assert snap["agreement"]["confusion"]["partial"]["full"] == 1
    assert [h["label"] for h in snap["human"]] == ["none", "partial"]
    log = client.get("/api/export").json()
    human = [j for j in log["judgments"] if j["judgment"]["judge"] == "human:maya"]
    assert {(j["text"], j["judgment"]["label"]) for j in human} == {
        ("Standard items may be returned within 30 days of delivery.", "none"),
        ("A receipt is required to return a standard item.", "partial")}
    assert human[0]["passages"][0]["version"] == "sachin-demo-v1"
    assert log["schema_version"] == SCHEMA_VERSION
    # the export is a run log the rest of citeaudit reads back, human labels included
    path = tmp_path / "exported.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    assert sum(j.judgment.judge == "human:maya" for j in read_runlog(path).judgments) == 2


def test_bad_human_labels(client):
    base = {"case": "returns-desk", "answer": "original", "statement": 0, "claim": 0}
    assert client.post("/api/human", json={**base, "label": "maybe", "reviewer": "x"}).status_code == 422
    assert client.post("/api/human", json={**base, "label": "full", "reviewer": ""}).status_code == 422
    assert client.post("/api/human", json={**base, "claim": 5, "label": "full", "reviewer": "x"}).status_code == 404


def test_desk_on_a_run_log_replays_its_judgments(tmp_path, runner):
    from citeaudit.cli import main

    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    run = tmp_path / "run.json"
    assert runner.invoke(main, ["score", str(tmp_path / "p7_archive.json"), "--out", str(run)]).exit_code == 0
    app = TestClient(create_app(desk_session([str(run)])), base_url=DESK)
    snap = app.get("/api/state", params={"case": "p7", "answer": "A"}).json()
    assert snap["answer"]["metrics"]["support"]["numerator"] == 1
    assert snap["judge"] == json.loads(run.read_text())["judge"]
    r = app.post("/api/edit", json={"case": "p7", "answer": "A", "statement": 1, "citations": ["D1"]})
    assert r.status_code == 409 and "no recorded judgment" in r.json()["error"]


def test_unknown_walkthrough_and_case(client):
    assert client.post("/api/walkthrough", json={"name": "nope"}).status_code == 404
    r = client.post("/api/walkthrough", json={"name": "test-scope", "variant": "nope"})
    assert (r.status_code, r.json()) == (404, {"error": "no setup 'nope' of walkthrough 'test-scope'; its setups: "
                                                         "window-receipt, clearance, two-supports"})
    r = client.post("/api/walkthrough", json={"name": "follow", "variant": "nope"})
    assert (r.status_code, r.json()) == (404, {"error": "no setup 'nope' of walkthrough 'follow'; it has no setups"})
    assert client.get("/api/state", params={"case": "nope"}).status_code == 404
