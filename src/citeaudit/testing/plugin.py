"""The pytest plugin: a `citeaudit_judge` fixture that records judgments next to the tests and replays them.

Loaded by pytest through the `pytest11` entry point whenever citeaudit is installed, so it does nothing
until a test asks for its fixture: no judge, store or parser is imported before then.

    def test_answer(citeaudit_judge):
        assert_supported(answer, sources, judge=citeaudit_judge("openai:gpt-4o-mini"))

Options:
  --citeaudit-store PATH  one store for the whole run (default: `citeaudit-judgments.sqlite` in the
                          folder of each test file that asks for a judge)
  --citeaudit-replay      replay only: a judgment missing from the store fails the test instead of
                          asking the judge (what CI runs, offline)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

STORE_NAME = "citeaudit-judgments.sqlite"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("citeaudit", "citeaudit: recorded support judgments")
    group.addoption("--citeaudit-store", metavar="PATH", default=None,
                    help=f"judgment store for the citeaudit_judge fixture (default: {STORE_NAME} next to "
                         "each test file)")
    group.addoption("--citeaudit-replay", action="store_true", default=False,
                    help="only replay recorded judgments; a missing one fails the test (no judge is asked)")


class _Stores:
    """The stores opened in this session, one per path, closed when it ends."""

    def __init__(self) -> None:
        self._open: dict[Path, Any] = {}

    def get(self, path: Path, replay: bool) -> Any:
        from citeaudit.judges.store import JudgmentStore

        path = path.resolve()
        if path not in self._open:
            if replay and not path.is_file():
                pytest.fail(f"--citeaudit-replay: no judgment store at {path}; run the tests once without "
                            "--citeaudit-replay to record one", pytrace=False)
            self._open[path] = JudgmentStore(path)
        return self._open[path]

    def close(self) -> None:
        for store in self._open.values():
            store.close()
        self._open.clear()


@pytest.fixture(scope="session")
def _citeaudit_stores():
    stores = _Stores()
    yield stores
    stores.close()


@pytest.fixture
def citeaudit_judge(request: pytest.FixtureRequest, _citeaudit_stores: _Stores):
    """A factory: `citeaudit_judge(judge)` -> a judgment source for `assert_supported`.

    `judge` is a Judge or a judge spec (`"openai:gpt-4o-mini"`). Judgments come from the store when
    recorded there; otherwise the judge is asked and its judgment recorded. With --citeaudit-replay the
    judge is never asked: a judgment missing from the store raises MissingJudgment."""
    config = request.config
    option = config.getoption("--citeaudit-store")
    path = Path(option) if option else Path(request.path).parent / STORE_NAME
    replay = config.getoption("--citeaudit-replay")

    def make(judge: Any) -> Any:
        from citeaudit.judges.source import Judgments
        from citeaudit.judges.store import RecordedJudge

        if isinstance(judge, str):
            from citeaudit.judges import make_judge

            judge = make_judge(judge, [])
        store = _citeaudit_stores.get(path, replay)
        return Judgments(RecordedJudge(store, judge.signature) if replay else judge, store)

    return make
