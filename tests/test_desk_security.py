"""The desk against other sites and oversized input: it answers only to its own host names (DNS
rebinding), refuses changes from other origins and cross-site form posts, judges and writes only on a
POST (a GET reads what the session holds), caps request and field sizes without echoing the request,
sends its security headers everywhere, and refuses to start on a bad, busy or non-loopback address
unless told to."""

from __future__ import annotations

import re
import socket
from importlib import resources

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
import uvicorn  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from citeaudit.cli import desk_session  # noqa: E402
from citeaudit.desk import serve  # noqa: E402
from citeaudit.desk.app import MAX_BODY_BYTES, MAX_NOTE, MAX_TEXT, create_app  # noqa: E402
from citeaudit.errors import CiteauditError  # noqa: E402

DESK = "http://127.0.0.1:8765"
EDIT = {"case": "returns-desk", "answer": "original", "statement": 0, "citations": ["S1"]}
WHERE = {"case": "returns-desk", "answer": "original", "statement": 0}
HUMAN = {"case": "returns-desk", "answer": "original", "statement": 0, "claim": 0, "label": "none", "reviewer": "eve"}


@pytest.fixture
def client():
    return TestClient(create_app(desk_session(())), base_url=DESK, raise_server_exceptions=False)


def c1_citations(client) -> list[str]:
    snap = client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()
    return snap["answer"]["statements"][0]["citations"]


def human_labels(client) -> list:
    return client.get("/api/state", params={"case": "returns-desk", "answer": "original"}).json()["human"]


# ---------------------------------------------------------------- host names (DNS rebinding)


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/api/state", None), ("POST", "/api/export", {}), ("GET", "/", None),
    ("POST", "/api/edit", EDIT), ("POST", "/api/human", HUMAN), ("POST", "/api/suggestion", WHERE),
])
def test_a_foreign_host_name_is_refused(client, method, path, body):
    r = client.request(method, path, json=body, headers={"Host": "evil.example:8765"})
    assert r.status_code == 400
    assert r.json() == {"error": "unknown host name: open the desk at the address it printed when it started"}
    assert c1_citations(client) == ["S2"] and human_labels(client) == []


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"])
def test_the_loopback_names_with_the_desk_port_are_served(host):
    client = TestClient(create_app(desk_session(()), port=8765), base_url=DESK)
    assert client.get("/api/state", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1:9999", "127.0.0.1", "evil.example", "127.0.0.1.evil.example:8765",
                                  "user@127.0.0.1:8765", "127.0.0.1:8765/x", ""])
def test_other_ports_and_malformed_hosts_are_refused(host):
    client = TestClient(create_app(desk_session(()), port=8765), base_url=DESK)
    assert client.get("/api/state", headers={"Host": host}).status_code == 400


def test_the_hosts_it_is_started_for_are_served():
    client = TestClient(create_app(desk_session(()), hosts=["desk.lan"]), base_url="http://desk.lan:8765")
    assert client.get("/api/state").status_code == 200
    assert client.get("/api/state", headers={"Host": "127.0.0.1:8765"}).status_code == 400


# ---------------------------------------------------------------- other origins, cross-site posts


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:3000", "https://127.0.0.1:8765",
                                    "null", "http://evil.example:8765"])
def test_a_change_from_another_origin_is_refused(client, origin):
    r = client.post("/api/edit", json=EDIT, headers={"Origin": origin})
    assert (r.status_code, r.json()) == (403, {"error": "requests from other sites cannot change the desk"})
    r = client.post("/api/human", json=HUMAN, headers={"Origin": origin})
    assert r.status_code == 403
    assert c1_citations(client) == ["S2"] and human_labels(client) == []


def test_a_change_from_the_desk_page_itself_is_applied(client):
    assert client.post("/api/edit", json=EDIT, headers={"Origin": DESK}).status_code == 200
    assert c1_citations(client) == ["S1"]
    # reading needs no Origin check: the browser keeps other sites from reading the reply
    assert client.get("/api/state", headers={"Origin": "http://evil.example"}).status_code == 200


class CountingJudge:
    """The built-in examples' curated judge, counting the pairs it is asked."""

    name = "counting"

    def __init__(self):
        from citeaudit.examples import EXAMPLE_FILES, load_example
        from citeaudit.judges import make_judge

        self.resolved = [rc for name in EXAMPLE_FILES for rc in load_example(name)]
        self.curated = make_judge("curated", self.resolved)
        self.signature = self.curated.signature
        self.asked = 0

    def judge(self, text, passages):
        self.asked += 1
        return self.curated.judge(text, passages)


@pytest.fixture
def judged(tmp_path):
    """A desk with a judgment store whose first page is drawn (every case judged once), its judge counting
    what it is asked after that, and a way to read the store's rows."""
    import sqlite3

    from citeaudit.desk import DeskSession

    judge, store = CountingJudge(), tmp_path / "judgments.db"
    session = DeskSession([rc.case for rc in judge.resolved], judge=judge, store_path=str(store))
    client = TestClient(create_app(session), base_url=DESK, raise_server_exceptions=False)
    assert client.get("/api/state").status_code == 200
    judge.asked = 0

    def rows():
        with sqlite3.connect(store) as db:
            return db.execute("SELECT key, judgment FROM judgments ORDER BY key").fetchall()

    return session, client, judge, rows


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:3000", "null"])
def test_another_origin_cannot_make_the_desk_judge_or_write(judged, origin):
    session, client, judge, rows = judged
    stored, progress = rows(), dict(session.export_progress)
    for path, body in (("/api/suggestion", {**WHERE, "answer": "overbroad-claim"}), ("/api/export", {})):
        r = client.post(path, json=body, headers={"Origin": origin})
        assert (r.status_code, r.json()) == (403, {"error": "requests from other sites cannot change the desk"})
    assert judge.asked == 0 and rows() == stored and session.export_progress == progress
    # from the desk's own page, the same search judges and records what it judged
    r = client.post("/api/suggestion", json={**WHERE, "answer": "overbroad-claim"}, headers={"Origin": DESK})
    assert r.status_code == 200 and judge.asked > 0 and len(rows()) > len(stored)


@pytest.mark.parametrize("path, params", [
    ("/api/suggestion", {**WHERE, "answer": "overbroad-claim"}), ("/api/export", {}),
])
def test_a_get_neither_searches_nor_exports(judged, path, params):
    session, client, judge, rows = judged
    stored = rows()
    r = client.get(path, params=params, headers={"Origin": "http://evil.example"})
    assert r.status_code == 405
    r = client.get(path, params=params)
    assert r.status_code == 405
    assert judge.asked == 0 and rows() == stored and session.export_progress["total"] == 0


def test_once_the_first_page_is_drawn_no_get_of_the_api_judges_or_writes(judged):
    """Every GET route of the API, with its defaults: each only reads what the session holds."""
    session, client, judge, rows = judged
    stored, progress = rows(), dict(session.export_progress)
    state = client.get("/api/state").json()
    gets = sorted(route.path for route in client.app.routes
                  if "GET" in getattr(route, "methods", ()) and "/api/" in route.path)
    assert gets == ["/api/export/progress", "/api/overview", "/api/state", "/api/walkthroughs",
                    "/walkthrough/api/export/progress", "/walkthrough/api/overview", "/walkthrough/api/state",
                    "/walkthrough/api/walkthroughs"]
    for path in gets:
        assert client.get(path).status_code == 200, path
    assert judge.asked == 0 and rows() == stored and session.export_progress == progress
    assert client.get("/api/state").json() == state


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data"])
def test_a_form_post_is_not_read_as_json(client, content_type):
    # What an HTML form on another site can send (no Origin: some browsers and proxies drop it).
    body = b'{"case": "returns-desk", "answer": "original", "statement": 0, "citations": ["S1"]}'
    r = client.post("/api/edit", content=body, headers={"Content-Type": content_type})
    assert r.status_code == 422
    assert c1_citations(client) == ["S2"]


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data"])
def test_a_form_post_neither_searches_nor_exports(judged, content_type):
    session, client, judge, rows = judged
    stored = rows()
    for path, body in (("/api/suggestion", b'{"case": "returns-desk", "answer": "overbroad-claim", "statement": 0}'),
                       ("/api/export", b"{}"), ("/api/export", b"")):
        assert client.post(path, content=body, headers={"Content-Type": content_type}).status_code == 422
    assert judge.asked == 0 and rows() == stored and session.export_progress["total"] == 0


# ---------------------------------------------------------------- sizes, and no echo


def test_a_body_over_the_limit_is_refused_from_its_length(client):
    r = client.post("/api/edit", content=b"x" * (MAX_BODY_BYTES + 1), headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (413, {"error": f"request body over {MAX_BODY_BYTES} bytes"})


def test_a_streamed_body_over_the_limit_is_refused_while_reading(client):
    def chunks():  # no Content-Length: the size is only known by reading
        for _ in range(64):
            yield b"x" * 65536

    r = client.post("/api/edit", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "x" not in r.text


@pytest.mark.parametrize("endpoint, body, where", [
    ("/api/edit", {**EDIT, "citations": None, "text": "y" * (MAX_TEXT + 1)}, "text"),
    ("/api/edit", {**EDIT, "citations": ["S1"] * 201}, "citations"),
    ("/api/edit", {**EDIT, "case": "y" * 501}, "case"),
    ("/api/edit", {**EDIT, "citations": ["y" * 501]}, "citations[0]"),
    ("/api/human", {**HUMAN, "note": "y" * (MAX_NOTE + 1)}, "note"),
    ("/api/human", {**HUMAN, "reviewer": "y" * 201}, "reviewer"),
    ("/api/walkthrough", {"name": "y" * 501}, "name"),
    ("/api/suggestion", {**WHERE, "case": "y" * 501}, "case"),
    ("/api/suggestion", {**WHERE, "answer": "y" * 501}, "answer"),
])
def test_an_oversized_field_is_refused_without_echo(client, endpoint, body, where):
    r = client.post(endpoint, json=body)
    assert r.status_code == 422
    assert r.json()["error"].startswith(f"{where}: ")
    assert "yyy" not in r.text and "input" not in r.text
    assert human_labels(client) == []


def test_a_20_mb_note_is_neither_stored_nor_sent_back(client):
    r = client.post("/api/human", json={**HUMAN, "note": "n" * 20_000_000})
    assert r.status_code == 413 and "nnn" not in r.text
    assert human_labels(client) == []


@pytest.mark.parametrize("raw", ["1e400", "-1e400", "1.5", "true", '"0"', "-1", "10000000000000000000000"])
def test_a_statement_that_is_no_index_is_a_clear_422(client, raw):
    body = '{"case": "returns-desk", "answer": "original", "statement": %s, "citations": ["S1"]}' % raw
    r = client.post("/api/edit", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith("statement: Input should be")
    assert r.json()["detail"] == [{"loc": ["body", "statement"], "msg": r.json()["error"].removeprefix("statement: ")}]
    assert c1_citations(client) == ["S2"]


def test_a_refused_edit_quotes_a_long_text_only_in_part(client):
    r = client.post("/api/edit", json={**EDIT, "citations": None, "text": "z" * 15_000})
    assert r.status_code == 409
    message = r.json()["error"]
    assert message.startswith("no curated label for claim 'zzz") and message.endswith("this edit is not applied.")
    assert " … " in message and len(message) <= 400


@pytest.mark.parametrize("path, params", [
    ("/api/state", {"case": "q" * 501}),
    ("/api/state", {"answer": "q" * 501}),
])
def test_a_query_over_the_limit_is_refused(client, path, params):
    r = client.get(path, params=params)
    assert r.status_code == 422 and "qqq" not in r.text


# ---------------------------------------------------------------- headers, no API docs


def meta_policy() -> str:
    html = resources.files("citeaudit.desk").joinpath("static", "index.html").read_text(encoding="utf-8")
    return re.search(r'http-equiv="Content-Security-Policy"\s+content="([^"]+)"', html).group(1)


@pytest.mark.parametrize("method, path, headers", [
    ("GET", "/", {}), ("GET", "/api/state", {}), ("GET", "/static/app.js", {}), ("POST", "/api/export", {}),
    ("GET", "/nowhere", {}), ("POST", "/api/edit", {}), ("GET", "/api/state", {"Host": "evil.example"}),
    ("POST", "/api/edit", {"Origin": "http://evil.example"}),
])
def test_every_response_carries_the_security_headers(client, method, path, headers):
    r = client.request(method, path, json={} if method == "POST" else None, headers=headers)
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["content-security-policy"] == f"{meta_policy()}; frame-ancestors 'none'"


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/redoc"])
def test_no_api_description_is_served(client, path):
    assert client.get(path).status_code == 404


# ---------------------------------------------------------------- starting the server


@pytest.fixture
def started(monkeypatch):
    """serve() up to the point where uvicorn would run: the app and socket it was given; the server then
    says it started, as it does once it listens."""
    runs = []

    def run(server, sockets=None):
        runs.append((server.config.app, sockets[0].getsockname()))
        server.announce()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return runs


@pytest.mark.parametrize("port", [99999, 65536, -1])
def test_a_port_out_of_range_is_a_clear_error(capsys, started, port):
    with pytest.raises(CiteauditError) as err:
        serve(desk_session(()), "127.0.0.1", port, open_browser=False)
    assert str(err.value) == f"--port must be between 1 and 65535 (or 0 for any free port), not {port}"
    assert err.value.exit_code == 2 and started == []
    assert capsys.readouterr().out == ""


def test_a_port_in_use_is_said_before_the_banner(capsys, started):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CiteauditError) as err:
            serve(desk_session(()), "127.0.0.1", port, open_browser=False)
    assert str(err.value) == f"port {port} on 127.0.0.1 is in use; pick another with --port"
    assert err.value.exit_code == 2 and started == []
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "desk.example"])
def test_a_non_loopback_host_needs_allow_remote(capsys, started, host):
    with pytest.raises(CiteauditError) as err:
        serve(desk_session(()), host, 0, open_browser=False)
    assert "is not a loopback address" in str(err.value) and "no authentication" in str(err.value)
    assert "--allow-remote" in str(err.value)
    assert err.value.exit_code == 2 and started == []
    assert capsys.readouterr().out == ""


def test_allow_remote_listens_everywhere_with_a_warning(capsys, started):
    serve(desk_session(()), "0.0.0.0", 0, open_browser=False, allow_remote=True)
    (app, (address, port)), = started
    assert address == "0.0.0.0" and port > 0
    out, err = capsys.readouterr()
    assert out == f"citeaudit desk on http://127.0.0.1:{port}/ (Ctrl+C to stop)\n"
    assert err.startswith(f"warning: the desk listens on 0.0.0.0 port {port}, beyond this machine.")
    assert "no authentication" in err
    client = TestClient(app)
    assert client.get("/api/state", headers={"Host": f"127.0.0.1:{port}"}).status_code == 200
    assert client.get("/api/state", headers={"Host": f"{socket.gethostname()}:{port}"}).status_code == 200
    assert client.get("/api/state", headers={"Host": f"evil.example:{port}"}).status_code == 400


def test_loopback_serves_its_own_names_on_its_own_port(capsys, started):
    serve(desk_session(()), "127.0.0.1", 0, open_browser=False)
    (app, (address, port)), = started
    assert address == "127.0.0.1"
    assert capsys.readouterr() == (f"citeaudit desk on http://127.0.0.1:{port}/ (Ctrl+C to stop)\n", "")
    client = TestClient(app)
    assert client.get("/api/state", headers={"Host": f"localhost:{port}"}).status_code == 200
    assert client.get("/api/state", headers={"Host": f"localhost:{port + 1}"}).status_code == 400
