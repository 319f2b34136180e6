"""HTTP layer of the desk (FastAPI). Bound to 127.0.0.1 unless told otherwise; serves the static app
and a small JSON API over a DeskSession."""

from __future__ import annotations

from importlib import resources
from typing import Any

from pydantic import BaseModel

from ..errors import CiteauditError
from ..errors import DeskError
from .session import DeskSession


class Edit(BaseModel):
    case: str
    answer: str
    statement: int
    text: str | None = None
    citations: list[str] | None = None


class Human(BaseModel):
    case: str
    answer: str
    statement: int
    claim: int
    label: str
    note: str = ""
    reviewer: str


class Load(BaseModel):
    name: str
    variant: str | None = None


class Reset(BaseModel):
    case: str
    answer: str | None = None


def _require():
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise CiteauditError("the desk needs FastAPI and uvicorn: pip install 'citeaudit[desk]'") from None


def create_app(session: DeskSession):
    _require()
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles

    static = resources.files("citeaudit.desk").joinpath("static")
    app = FastAPI(title="citeaudit desk", docs_url=None, redoc_url=None)
    app.state.session = session

    @app.exception_handler(DeskError)
    async def _desk_error(request: Request, err: DeskError):
        return JSONResponse({"error": str(err)}, status_code=err.status)

    @app.get("/")
    def index():
        return FileResponse(str(static.joinpath("index.html")))

    @app.get("/api/state")
    def state(case: str | None = None, answer: str | None = None) -> dict[str, Any]:
        return session.snapshot(case, answer)

    @app.post("/api/edit")
    def edit(body: Edit) -> dict[str, Any]:
        return session.edit_statement(body.case, body.answer, body.statement, body.text, body.citations)

    @app.get("/api/walkthroughs")
    def walkthroughs() -> list[dict[str, Any]]:
        from .walkthroughs import WALKTHROUGHS

        return [{"name": n, **w.describe(None)} for n, w in WALKTHROUGHS.items()]

    @app.post("/api/walkthrough")
    def walkthrough(body: Load) -> dict[str, Any]:
        return session.load_walkthrough(body.name, body.variant)

    @app.post("/api/reset")
    def reset(body: Reset) -> dict[str, Any]:
        if body.case not in session.cases:
            raise DeskError(404, f"no case '{body.case}'")
        session.reset(body.case)
        return session.snapshot(body.case, body.answer)

    @app.post("/api/human")
    def human(body: Human) -> dict[str, Any]:
        return session.set_human_label(body.case, body.answer, body.statement, body.claim, body.label,
                                       body.note, body.reviewer)

    @app.get("/api/export")
    def export():
        log = session.export()
        return JSONResponse(log.model_dump(mode="json"),
                            headers={"Content-Disposition": 'attachment; filename="desk-run.json"'})

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    return app


def serve(session: DeskSession, host: str, port: int, open_browser: bool) -> None:
    _require()
    import threading
    import webbrowser

    import uvicorn

    url = f"http://{host}:{port}/"
    if open_browser:
        threading.Timer(1.0, lambda: webbrowser.open(url)).start()
    print(f"citeaudit desk on {url} (Ctrl+C to stop)")
    uvicorn.run(create_app(session), host=host, port=port, log_level="warning")
