"""Recorded judgments: a SQLite store keyed by everything that can change a judgment.

The key hashes the text, every cited passage's document id, version, span and content hash, and the
judge's signature. Each judgment is committed as soon as it is made, so an interrupted run loses
nothing and a rerun asks the judge only for what is missing.

Several runs may fill one store at once (each waits its turn to write; the first judgment recorded
for a key is the one kept), and one store object may be used from several threads (a server's, such
as the desk's): each use of its connection waits for the one before. A file that is not a store, or a row that is not a judgment, is a
StoreError naming the file (and the row's key), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import MissingJudgment, StoreError, validation_problems
from ..records import Judgment, SourcePassage
from .base import Request

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


def _key_of(text: str, passage_identities: list[dict[str, Any]], judge_signature: str) -> str:
    material = {"text": text, "passages": passage_identities, "judge": judge_signature}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def judgment_key(request: Request, judge_signature: str) -> str:
    return _key_of(request.text, [p.identity() for p in request.passages], judge_signature)


def _parse_judgment(raw: Any) -> Judgment:
    """The Judgment a row's `judgment` column holds; ValueError saying why when it holds none."""
    if not isinstance(raw, (str, bytes)):
        raise ValueError(f"judgment is not JSON text but {type(raw).__name__}")
    try:
        return Judgment.model_validate_json(raw)
    except ValidationError as err:
        found = "; ".join(f"{p.path}: {p.message}" if p.path else p.message
                          for p in validation_problems(err, ""))
        raise ValueError(f"judgment is not a valid Judgment: {found}") from None


def _row_problem(key: str, judge: str, text: str, passages: str, raw: Any) -> str | None:
    """What is wrong with one stored row, or None when it is a sound judgment."""
    try:
        judgment = _parse_judgment(raw)
    except ValueError as err:
        return str(err)
    if judgment.judge != judge:
        return f"judgment is by {judgment.judge!r} but the row is filed under judge {judge!r}"
    try:
        recomputed = _key_of(text, json.loads(passages), judge)
    except (TypeError, ValueError):
        return "passages column is not JSON"
    if recomputed != key:
        return "key does not match the row's text, passages and judge"
    return None


def _is_busy(err: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock (SQLITE_BUSY or SQLITE_LOCKED)."""
    return getattr(err, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


@dataclass
class StoreCheck:
    """What `JudgmentStore.check` found: row counts by judge, and every bad row with why."""

    path: str
    judges: Counter = field(default_factory=Counter)
    bad: list[tuple[str, str]] = field(default_factory=list)  # (key, problem)

    @property
    def rows(self) -> int:
        return sum(self.judges.values())

    @property
    def ok(self) -> bool:
        return not self.bad


class JudgmentStore:
    """A SQLite file of judgments. Opening it checks that it is one (cheap: the table layout), creating
    it when new; `create=False` opens an existing store read-only and changes nothing."""

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
                    with self._write():
                        self._db.execute(SCHEMA)
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

    def get(self, request: Request, judge_signature: str) -> Judgment | None:
        key = judgment_key(request, judge_signature)
        with self._sqlite_errors():
            row = self._db.execute(f"SELECT judge, judgment FROM {TABLE} WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            judgment = _parse_judgment(row[1])
        except ValueError as err:
            raise StoreError(f"{self.path}: row with key {key}: {err}; `citeaudit store check "
                             f"{self.path}` lists every bad row") from None
        if judgment.judge != judge_signature or row[0] != judge_signature:
            raise StoreError(f"{self.path}: row with key {key}: the judgment is by {judgment.judge!r} "
                             f"(judge column {row[0]!r}), not by {judge_signature!r}")
        return judgment

    def put(self, request: Request, judgment: Judgment) -> Judgment:
        """Record a judgment and return the one the store keeps: when another run recorded this pair
        first, that one (so every run reports what the store holds)."""
        with self._sqlite_errors(), self._write():
            added = self._insert(request, judgment)
        return judgment if added else (self.get(request, judgment.judge) or judgment)

    def put_many(self, pairs: Sequence[tuple[Request, Judgment]]) -> list[Judgment]:
        """Record several judgments in one transaction (all or none: a block of a distributed run is
        kept whole or not at all) and return the ones the store keeps, as `put` does for one."""
        with self._sqlite_errors(), self._write():
            added = [self._insert(request, judgment) for request, judgment in pairs]
        return [judgment if was_added else (self.get(request, judgment.judge) or judgment)
                for (request, judgment), was_added in zip(pairs, added)]

    def _insert(self, request: Request, judgment: Judgment) -> bool:
        """Insert one row inside an open write transaction; False when the key was recorded already."""
        return bool(self._db.execute(
            f"INSERT INTO {TABLE} (key, judge, text, passages, judgment) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            (judgment_key(request, judgment.judge), judgment.judge, request.text,
             json.dumps([p.identity() for p in request.passages]), judgment.model_dump_json()),
        ).rowcount)

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

    def check(self) -> StoreCheck:
        """Every row read and checked: its judgment parses, is by the row's judge, and its key is the
        hash of its text, passages and judge."""
        found = StoreCheck(self.path)
        with self._sqlite_errors():
            rows = self._db.execute(f"SELECT key, judge, text, passages, judgment FROM {TABLE} ORDER BY key")
            for key, judge, text, passages, raw in rows:
                found.judges[judge] += 1
                problem = _row_problem(key, judge, text, passages, raw)
                if problem:
                    found.bad.append((key, problem))
        return found

    def __len__(self) -> int:
        with self._sqlite_errors():
            return self._db.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class RecordedJudge:
    """Replays judgments from a store; a missing one is an error, never a guess."""

    name = "recorded"

    def __init__(self, store: JudgmentStore, judge_signature: str):
        self.store = store
        self.signature = judge_signature

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        request = Request.of(text, passages)
        found = self.store.get(request, self.signature)
        if found is None:
            raise MissingJudgment(
                f"no recorded judgment by {self.signature} for {request.describe()} in {self.store.path}; "
                "run `citeaudit prepare` with that judge first"
            )
        return found


class MemoryStore:
    """The store interface over a dict: replays the judgments kept in a run log."""

    def __init__(self, path: str = "<memory>"):
        self.path = path
        self._items: dict[str, Judgment] = {}

    def get(self, request: Request, judge_signature: str) -> Judgment | None:
        return self._items.get(judgment_key(request, judge_signature))

    def put(self, request: Request, judgment: Judgment) -> Judgment:
        self._items[judgment_key(request, judgment.judge)] = judgment
        return judgment

    def __len__(self) -> int:
        return len(self._items)
