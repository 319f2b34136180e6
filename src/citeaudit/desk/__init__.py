"""The audit desk: a local web app to follow each citation to its exact text, repair it, review it,
and watch the scores change (through the same scoring code as the command line)."""

from citeaudit.errors import DeskError
from citeaudit.desk.session import DeskSession, JudgeStatus

__all__ = ["DeskError", "DeskSession", "JudgeStatus", "create_app", "serve"]


def create_app(session: DeskSession, **options):
    from citeaudit.desk.app import create_app as _create

    return _create(session, **options)


def serve(session: DeskSession, host: str = "127.0.0.1", port: int = 8765, open_browser: bool = True,
          allow_remote: bool = False) -> None:
    from citeaudit.desk.app import serve as _serve

    _serve(session, host, port, open_browser, allow_remote)
