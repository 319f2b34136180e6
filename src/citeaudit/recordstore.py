"""The SQLite file that keeps recorded model outputs, keyed by everything that can change one: judgments
(judges/store.py builds `JudgmentStore` on `RecordStore`) and the claim splits of a language-model
splitter (parse/lm_decompose.py), in one file. It lives below both packages, so that parsing needs
nothing of the judges.

Here: the file's layout (its tables, checked on opening, so that a file that is not a store is refused
before anything is written; the `digests` table, one digest per judgment row, is added to a store made
before it, and a citeaudit that does not know it passes it by), the connection (write-ahead logging; a write waits its turn through the
busy timeout; one object may be used from several threads, each use holding its lock), and the
`decompositions` table. Every SQLite failure is a StoreError naming the file.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citeaudit.errors import StoreError

TABLE = "judgments"
COLUMNS = ("key", "judge", "text", "passages", "judgment", "created")
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    text TEXT NOT NULL,
    passages TEXT NOT NULL,
    judgment TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now'))
)
"""
# A digest of each judgment row (judges/store.py `row_digest`), in a table of its own so that a store stays
# readable by a citeaudit older than it; rows recorded before digests were kept have none.
DIGEST_TABLE = "digests"
DIGEST_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {DIGEST_TABLE} (
    key TEXT PRIMARY KEY,
    digest TEXT NOT NULL
)
"""
# Recorded claim splits of a language-model splitter (parse/lm_decompose.py), beside the judgments: the
# key hashes the statement, its language and the splitter's signature; `outcome` is JSON.
DECOMPOSITION_TABLE = "decompositions"
DECOMPOSITION_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {DECOMPOSITION_TABLE} (
    key TEXT PRIMARY KEY,
    splitter TEXT NOT NULL,
    statement TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now'))
)
"""
# How long a run waits for another to finish writing (a write is one row, so waits are short; the
# margin covers a slow disk or a WAL checkpoint).
BUSY_TIMEOUT_S = 30.0


def _is_busy(err: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock (SQLITE_BUSY or SQLITE_LOCKED)."""
    return getattr(err, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class RecordStore:
    """A store file: opening it checks that it is one (cheap: the table layout), creating it when new;
    `create=False` opens an existing store read-only and changes nothing."""

    def __init__(self, path: str | Path, create: bool = True):
        self.path = str(path)
        if not create and not Path(path).is_file():
            raise StoreError(f"{self.path}: no such file")
        # One connection shared by the threads of a server (the desk): each use holds this lock, so
        # no two threads are ever inside the connection (or one transaction) at once.
        self._lock = threading.RLock()
        with self._sqlite_errors():
            self._db = self._connect(create)
            try:
                self._check_layout(required=not create)
                if create:
                    self._use_wal()
                    self.has_digests = True
                    with self._write():
                        self._db.execute(SCHEMA)
                        self._db.execute(DIGEST_SCHEMA)
                        self._db.execute(DECOMPOSITION_SCHEMA)
            except BaseException:
                self._db.close()
                raise

    def _connect(self, create: bool) -> sqlite3.Connection:
        # Autocommit: every transaction below is opened explicitly, so none is held by accident.
        target, uri = (self.path, False) if create else (Path(self.path).resolve().as_uri() + "?mode=ro", True)
        db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=uri,
                             check_same_thread=False)  # safe: every use holds self._lock
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        return db

    def _check_layout(self, required: bool) -> None:
        """Refuse a file that is not SQLite, or holds a foreign `judgments` table or only other tables,
        before anything is written to it."""
        try:
            tables = {name for (name,) in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path}: not a citeaudit judgment store (not an SQLite database: {err})") from None
        self.has_digests = DIGEST_TABLE in tables  # made when a store is opened to write (a read-only one may lack it)
        if TABLE not in tables:
            if tables or required:
                found = f"tables {', '.join(sorted(tables))}" if tables else "no tables"
                raise StoreError(f"{self.path}: not a citeaudit judgment store "
                                 f"(it holds {found}, not a {TABLE!r} table)")
            return
        columns = tuple(row[1] for row in self._db.execute(f"PRAGMA table_info({TABLE})"))
        if sorted(columns) != sorted(COLUMNS):
            raise StoreError(f"{self.path}: not a citeaudit judgment store (its {TABLE!r} table has columns "
                             f"{', '.join(columns)}; a store's are {', '.join(COLUMNS)})")

    def _use_wal(self) -> None:
        """Switch to write-ahead logging (readers never wait for a writer). Another process creating
        the same file can make the switch fail at once, without waiting: SQLite does not wait where
        waiting could deadlock. So retry until the file is in WAL mode, whoever switched it."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 0.005
        while True:
            try:
                if self._db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as err:
                if not _is_busy(err) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.2)

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction, its lock taken up front so that waiting for another writer goes
        through the busy timeout."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        """Any SQLite failure (a file locked too long, a damaged page, no permission) names the store.
        Every use of the connection goes through here, and holds the store's lock meanwhile."""
        try:
            with self._lock:
                yield
        except sqlite3.Error as err:
            raise StoreError(f"{self.path}: {err}") from None

    def get_decomposition(self, key: str) -> dict[str, Any] | None:
        """A recorded claim split (see parse/lm_decompose.py), or None; a store made before splits were
        recorded has none."""
        with self._sqlite_errors():
            try:
                row = self._db.execute(f"SELECT outcome FROM {DECOMPOSITION_TABLE} WHERE key = ?", (key,)).fetchone()
            except sqlite3.OperationalError as err:
                if "no such table" in str(err):
                    return None
                raise
        if row is None:
            return None
        try:
            outcome = json.loads(row[0])
        except (TypeError, ValueError):
            outcome = None
        if not isinstance(outcome, dict):
            raise StoreError(f"{self.path}: recorded claim split with key {key}: outcome is not a JSON object")
        return outcome

    def put_decomposition(self, key: str, splitter: str, statement: str, outcome: dict[str, Any],
                          replace: bool = False) -> None:
        """Record a claim split; `replace` overwrites an earlier one (a failed request asked again)."""
        conflict = "DO UPDATE SET outcome = excluded.outcome, created = excluded.created" if replace else "DO NOTHING"
        with self._sqlite_errors(), self._write():
            self._db.execute(
                f"INSERT INTO {DECOMPOSITION_TABLE} (key, splitter, statement, outcome, created) "
                f"VALUES (?, ?, ?, ?, datetime('now')) ON CONFLICT (key) {conflict}",
                (key, splitter, statement, json.dumps(outcome, ensure_ascii=False)))

    def close(self) -> None:
        with self._lock:
            self._db.close()
