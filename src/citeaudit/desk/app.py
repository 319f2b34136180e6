"""HTTP layer of the desk (FastAPI). Bound to 127.0.0.1 unless told otherwise; serves the static app
and a small JSON API over a DeskSession (under /api), and the same page and API for the exercises' own
session (under /walkthrough), which never mixes with the user's cases.

The desk has no authentication, so it guards what it can: it answers only to the host names it was
started for (a page on another site cannot reach it by rebinding its own name to 127.0.0.1), makes
every request that changes, judges, records or takes seconds a POST with a JSON body and refuses those
from other origins, caps request and field sizes, never echoes a request back in an error, and forbids
being framed or sniffed."""

from __future__ import annotations

import errno
import ipaddress
import json
import socket
import sys
from collections.abc import Iterable
from importlib import resources
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from citeaudit.errors import DeskError, DeskSetupError, format_path
from citeaudit.extras import require
from citeaudit.desk.session import DeskSession

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_BODY_BYTES = 1_000_000
MAX_ID = 500  # case, answer, passage and walkthrough ids
MAX_TEXT = 20_000  # a statement's text
MAX_NOTE = 5_000
MAX_REVIEWER = 200
MAX_CITATIONS = 200
MAX_INDEX = 1_000_000
MAX_PAGE = 500  # rows of the answers table per request
MAX_MESSAGE = 400  # an error reply's message; longer ones keep their start and end

# The page's own policy (also in index.html), plus what only a header can say: no framing by anyone.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

Id = Annotated[str, Field(max_length=MAX_ID)]
Index = Annotated[int, Field(strict=True, ge=0, le=MAX_INDEX)]  # strict: no floats, booleans or strings


class Statement(BaseModel):
    case: Id
    answer: Id
    statement: Index


class Edit(Statement):
    text: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    citations: Annotated[list[Id], Field(max_length=MAX_CITATIONS)] | None = None


class Human(BaseModel):
    case: Id
    answer: Id
    statement: Index
    claim: Index
    label: Annotated[str, Field(max_length=40)]
    note: Annotated[str, Field(max_length=MAX_NOTE)] = ""
    reviewer: Annotated[str, Field(max_length=MAX_REVIEWER)]


class Export(BaseModel):
    """The export asks nothing, but reads a JSON body as every POST does: a form on another site, which
    cannot send one, is refused even when its browser leaves out the Origin."""


class Load(BaseModel):
    name: Id
    variant: Id | None = None


class Reset(BaseModel):
    case: Id
    answer: Id | None = None


def _require():
    for module in ("fastapi", "uvicorn"):
        require(module, "desk", "the desk")


# ------------------------------------------------------------------------------------------ guard


def _host_name(name: str) -> str:
    """'[::1]' -> '::1', 'LocalHost' -> 'localhost': the form Host headers are compared in."""
    return name.strip().strip("[]").lower()


def _split_authority(authority: str) -> tuple[str, int | None] | None:
    """'localhost:8765' -> ('localhost', 8765); '[::1]' -> ('::1', None); None when it is not an authority."""
    try:
        parts = urlsplit(f"//{authority}")
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name or parts.username is not None or parts.path:
        return None
    return name, port


def _clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """A long message with its middle left out: its start and end say what was wrong."""
    if len(message) <= limit:
        return message
    half = (limit - 3) // 2
    return f"{message[:half]} … {message[-half:]}"


def _field(loc: list[str | int]) -> list[str | int]:
    """A body field's location without the 'body' in front: ['body', 'statement'] -> ['statement']."""
    return loc[1:] if len(loc) > 1 and loc[0] == "body" else loc


async def _send_error(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class DeskGuard:
    """ASGI middleware in front of every route: security headers on every response, only the desk's own
    host names (DNS rebinding), no state change from another origin (cross-site requests), and request
    bodies no larger than `max_body` bytes, checked from Content-Length and again while reading."""

    def __init__(self, app, hosts: Iterable[str], port: int | None, max_body: int):
        self.app = app
        self.hosts = frozenset(_host_name(h) for h in hosts)
        self.port = port  # None: any port (an app not yet bound, or bound to a port picked later)
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        send = self._with_security_headers(send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope["method"], headers)
        if refusal:
            return await _send_error(send, *refusal)
        body = await self._read_body(headers, receive)
        if body is None:
            return await _send_error(send, 413, f"request body over {self.max_body} bytes")
        return await self.app(scope, self._replay(body, receive), send)

    @staticmethod
    def _with_security_headers(send):
        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return send_with_headers

    def _allowed(self, name: str | None, port: int | None) -> bool:
        if name is None or _host_name(name) not in self.hosts:
            return False
        return self.port is None or (port or 80) == self.port  # no port given: HTTP's own, 80

    def _refusal(self, method: str, headers: dict[str, str]) -> tuple[int, str] | None:
        host = _split_authority(headers.get("host", ""))
        if host is None or not self._allowed(*host):
            return 400, "unknown host name: open the desk at the address it printed when it started"
        origin = headers.get("origin")
        if method not in SAFE_METHODS and origin is not None and not self._same_origin(origin, host[1]):
            return 403, "requests from other sites cannot change the desk"
        return None

    def _same_origin(self, origin: str, host_port: int | None) -> bool:
        try:
            parts = urlsplit(origin)
            name, port = parts.hostname, parts.port
        except ValueError:
            return False
        # An unbound app knows its port only from the Host header: the origin must name that one.
        expected = self.port if self.port is not None else (host_port or 80)
        return parts.scheme == "http" and self._allowed(name, port) and (port or 80) == expected

    async def _read_body(self, headers: dict[str, str], receive) -> bytes | None:
        """The whole request body, or None as soon as it is known to be over the limit."""
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away; the app sees an empty body
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return None
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    @staticmethod
    def _replay(body: bytes, receive):
        given = False

        async def replay():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # later calls wait for the disconnect, as usual

        return replay


# ------------------------------------------------------------------------------------------ app


def create_app(session: DeskSession, hosts: Iterable[str] = LOOPBACK_HOSTS, port: int | None = None,
               max_body: int = MAX_BODY_BYTES):
    """The desk's web app. It answers only requests whose Host header names one of `hosts` (and `port`,
    when given; any port otherwise) and reads request bodies of at most `max_body` bytes."""
    _require()
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles

    static = resources.files("citeaudit.desk").joinpath("static")
    app = FastAPI(title="citeaudit desk", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.session = session
    app.add_middleware(DeskGuard, hosts=tuple(hosts), port=port, max_body=max_body)

    @app.exception_handler(DeskError)
    async def _desk_error(request: Request, err: DeskError):
        return JSONResponse({"error": _clip(str(err))}, status_code=err.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, err: RequestValidationError):
        # Where and what only: FastAPI's own reply also carries the input, which can be huge (or not JSON at all).
        detail = [{"loc": list(e["loc"]), "msg": e["msg"].removeprefix("Value error, ")} for e in err.errors()]
        message = "; ".join(f"{format_path(_field(d['loc']))}: {d['msg']}" for d in detail)
        return JSONResponse({"error": _clip(message), "detail": detail}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, err: Exception):
        # Outside the guard (the server-error layer wraps everything): it adds the headers itself.
        return JSONResponse({"error": "the desk failed on this request; its log says why"}, status_code=500,
                            headers=SECURITY_HEADERS)

    @app.get("/")
    def index():
        return FileResponse(str(static.joinpath("index.html")))

    @app.get("/walkthrough")
    def walkthrough_page():
        # The same page; it reads its own session from /walkthrough/api, apart from the user's cases.
        return FileResponse(str(static.joinpath("index.html")))

    exercises: dict[str, DeskSession] = {}

    def exercise_session() -> DeskSession:
        with session.lock:
            if "session" not in exercises:
                exercises["session"] = walkthrough_session()
            return exercises["session"]

    _api_routes(app, "/api", lambda: session)
    _api_routes(app, "/walkthrough/api", exercise_session)

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    return app


def walkthrough_session() -> DeskSession:
    """The exercises' own session (the built-in returns desk case, curated labels): loading an exercise
    never touches the user's cases, their review or their exported run."""
    from citeaudit.records import Case
    from citeaudit.desk.walkthroughs import walkthrough_case

    session = DeskSession([Case.model_validate(walkthrough_case("follow"))], "curated", source="exercises",
                          exercises=True)
    session.load_walkthrough("follow")
    return session


def _api_routes(app, prefix: str, get_session) -> None:
    """The JSON API over the session `get_session()` returns, under `prefix`. A GET only reads; whatever
    judges, writes or can take seconds is a POST, refused from another origin (DeskGuard). Requests are
    served one at a time per session (its lock), except a suggested repair's search, which judges outside
    it, and the export's progress, read without waiting for the export."""
    from fastapi import Query, Response

    @app.get(f"{prefix}/state")
    # Query as a default, not in Annotated: it is imported here, out of reach of postponed annotations.
    def state(case: str | None = Query(None, max_length=MAX_ID),
              answer: str | None = Query(None, max_length=MAX_ID)) -> dict[str, Any]:
        session = get_session()
        with session.lock:
            return session.snapshot(case, answer)

    @app.get(f"{prefix}/overview")
    def overview(offset: int = Query(0, ge=0, le=MAX_INDEX), limit: int = Query(50, ge=1, le=MAX_PAGE),
                 sort: str = Query("case", max_length=40), order: str = Query("asc", pattern="^(asc|desc)$"),
                 system: str | None = Query(None, max_length=MAX_ID),
                 label: str | None = Query(None, max_length=40),
                 text: str | None = Query(None, max_length=MAX_ID)) -> dict[str, Any]:
        session = get_session()
        with session.lock:
            return session.overview(offset, limit, sort, order == "desc", system or None, label or None,
                                    text or None)

    @app.post(f"{prefix}/edit")
    def edit(body: Edit) -> dict[str, Any]:
        session = get_session()
        with session.lock:
            return session.edit_statement(body.case, body.answer, body.statement, body.text, body.citations)

    @app.post(f"{prefix}/suggestion")
    def suggestion(body: Statement) -> dict[str, Any]:
        # not under the session's lock: the search takes it only to read and to keep (DeskSession.suggestion)
        return get_session().suggestion(body.case, body.answer, body.statement)

    @app.get(f"{prefix}/walkthroughs")
    def walkthroughs() -> list[dict[str, Any]]:
        from citeaudit.desk.walkthroughs import WALKTHROUGHS

        return [{"name": n, **w.describe(None)} for n, w in WALKTHROUGHS.items()]

    @app.post(f"{prefix}/walkthrough")
    def walkthrough(body: Load) -> dict[str, Any]:
        session = get_session()
        with session.lock:
            return session.load_walkthrough(body.name, body.variant)

    @app.post(f"{prefix}/reset")
    def reset(body: Reset) -> dict[str, Any]:
        session = get_session()
        with session.lock:
            if body.case not in session.cases:
                raise DeskError(404, f"no case '{body.case}'")
            session.reset(body.case)
            return session.snapshot(body.case, body.answer)

    @app.post(f"{prefix}/human")
    def human(body: Human) -> dict[str, Any]:
        session = get_session()
        with session.lock:
            return session.set_human_label(body.case, body.answer, body.statement, body.claim, body.label,
                                           body.note, body.reviewer)

    @app.post(f"{prefix}/export")
    def export(body: Export):
        session = get_session()

        def progress(done: int, total: int) -> None:
            session.export_progress = {"running": done < total, "done": done, "total": total}

        with session.lock:
            session.export_progress = {"running": True, "done": 0, "total": len(session.cases)}
            try:
                log = session.export(progress)
            finally:
                session.export_progress = {**session.export_progress, "running": False}
            body = log.model_dump_json()
        return Response(body, media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="desk-run.json"'})

    @app.get(f"{prefix}/export/progress")
    def export_progress() -> dict[str, Any]:
        return get_session().export_progress  # no lock: read while the export holds it


# ------------------------------------------------------------------------------------------ serve

WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only: 'localhost' or a loopback address (127.0.0.0/8, ::1)."""
    name = _host_name(host)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_address(host: str, port: int, allow_remote: bool) -> None:
    """Refuse a port out of range, and a non-loopback host unless remote access is asked for."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise DeskSetupError(f"--port must be between 1 and 65535 (or 0 for any free port), not {port}")
    if not is_loopback(host) and not allow_remote:
        raise DeskSetupError(f"--host {host or '(every interface)'} is not a loopback address. The desk has no "
                             "authentication: anyone who can reach it can read and change this session. Keep it on "
                             "127.0.0.1, or pass --allow-remote to listen there anyway.")


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), so that a port in use is said before anything is printed."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            _host_name(host) or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as err:
        raise DeskSetupError(f"--host {host}: no such address ({err.strerror})") from None
    sock = socket.socket(family, kind, proto)
    if sys.platform != "win32":  # elsewhere it lets a restart reuse the port; on Windows it would share it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise DeskSetupError(f"port {port} on {host} is in use; pick another with --port") from None
        if err.errno == errno.EADDRNOTAVAIL:
            raise DeskSetupError(f"--host {host} is not an address of this machine") from None
        raise DeskSetupError(f"cannot listen on {host} port {port}: {err.strerror}") from None
    return sock


def served_hosts(host: str) -> set[str]:
    """The host names the desk answers to when listening on `host`: the loopback names, `host` itself, and
    for every interface (0.0.0.0, ::) this machine's own names and addresses."""
    names = {*LOOPBACK_HOSTS, _host_name(host)} - {""}
    if _host_name(host) in WILDCARD_HOSTS:
        me = socket.gethostname()
        names |= {me.lower(), socket.getfqdn().lower()}
        try:
            names |= {info[4][0] for info in socket.getaddrinfo(me, None)}
        except OSError:
            pass
    return names - WILDCARD_HOSTS


def _url(host: str, port: int) -> str:
    name = _host_name(host)
    if name in WILDCARD_HOSTS:
        name = "::1" if name == "::" else "127.0.0.1"
    return f"http://[{name}]:{port}/" if ":" in name else f"http://{name}:{port}/"


def serve(session: DeskSession, host: str, port: int, open_browser: bool, allow_remote: bool = False) -> None:
    """Serve the desk on host:port until Ctrl+C. A non-loopback host needs `allow_remote` (the desk has no
    authentication) and is warned about; a bad or busy port is a DeskError before anything is printed."""
    _require()
    import threading
    import webbrowser

    import uvicorn

    check_address(host, port, allow_remote)
    sock = bind(host, port)
    try:
        port = sock.getsockname()[1]  # the one picked, for port 0
        app = create_app(session, hosts=served_hosts(host), port=port)
        url = _url(host, port)
        if not is_loopback(host):
            print(f"warning: the desk listens on {host or 'every interface'} port {port}, beyond this machine. "
                  "It has no authentication and no TLS: anyone who can reach this port can read and change "
                  "this session.", file=sys.stderr)
        if open_browser:
            threading.Timer(1.0, lambda: webbrowser.open(url)).start()
        _run_announced(uvicorn.Config(app, log_level="warning"), sock, f"citeaudit desk on {url} (Ctrl+C to stop)")
    finally:
        sock.close()


def _run_announced(config, sock: socket.socket, line: str) -> None:
    """Run uvicorn on `sock`, printing `line` once it accepts connections. Printed before, as it was, the
    line could reach a script that connects at once while the socket was not listening yet: refused."""
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.started:  # not when startup failed
                self.announce()

        def announce(self) -> None:
            print(line, flush=True)  # flushed: a script reads stdout from a pipe, which Python buffers

    AnnouncingServer(config).run(sockets=[sock])
