"""Recorded judgments: a SQLite store keyed by everything that can change a judgment.

The key hashes the text, every cited passage's document id, version, span and content hash, and the
judge's signature. Each judgment is committed as soon as it is made, so an interrupted run loses
nothing and a rerun asks the judge only for what is missing.

Each row's judgment has a digest beside it (the `digests` table: SHA-256 over the row's key, judge, text,
passages and judgment), so that a judgment changed after it was recorded, by a hand or a tool, is told
apart: `check` lists it as bad, and a run that replays it uses it as stored and warns once
(`EditedRecordWarning`), as an edited run log is shown as stored with a warning. Rows recorded before
digests were kept have none: they are counted, never taken for edited.

Several runs may fill one store at once (each waits its turn to write; the first judgment recorded
for a key is the one kept), and one store object may be used from several threads (a server's, such
as the desk's): each use of its connection waits for the one before (the file and its locking are
recordstore.py's). A file that is not a store, or a row that is not a judgment, is a StoreError naming
the file (and the row's key), never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from citeaudit.errors import EditedRecordWarning, MissingJudgment, StoreError, validation_problems
from citeaudit.records import Judgment, SourcePassage
# the file, its layout and locking are shared with recorded claim splits; the names stay importable here
from citeaudit.recordstore import (  # noqa: F401
    BUSY_TIMEOUT_S, COLUMNS, DECOMPOSITION_SCHEMA, DECOMPOSITION_TABLE, DIGEST_TABLE, SCHEMA, TABLE, RecordStore,
    _is_busy,
)
from citeaudit.judges.base import Request



def _key_of(text: str, passage_identities: list[dict[str, Any]], judge_signature: str) -> str:
    material = {"text": text, "passages": passage_identities, "judge": judge_signature}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def judgment_key(request: Request, judge_signature: str) -> str:
    return _key_of(request.text, [p.identity() for p in request.passages], judge_signature)


def row_digest(key: str, judge: str, text: str, passages: str, judgment: str) -> str:
    """SHA-256 of what makes a stored judgment, as its row holds it (passages and judgment as JSON text,
    compared as the values they hold): a change to its label, score or explanation changes it."""
    material = {"key": key, "judge": judge, "text": text, "passages": json.loads(passages),
                "judgment": json.loads(judgment)}
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"))  # ASCII: any text can be hashed
    return hashlib.sha256(canonical.encode()).hexdigest()


def _digest_problem(key: str, judge: str, text: str, passages: str, raw: Any, digest: str | None) -> str | None:
    """Why a row does not match the digest it was recorded with (None when it does, or has none)."""
    if digest is None:
        return None
    try:
        matches = row_digest(key, judge, text, passages, raw) == digest
    except (TypeError, ValueError):
        matches = False
    return None if matches else "the row does not match its digest: it was changed after it was recorded"


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


def _row_problem(key: str, judge: str, text: str, passages: str, raw: Any, digest: str | None) -> str | None:
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
    return _digest_problem(key, judge, text, passages, raw, digest)


@dataclass
class StoreCheck:
    """What `JudgmentStore.check` found: row counts by judge, and every bad row with why."""

    path: str
    judges: Counter = field(default_factory=Counter)
    bad: list[tuple[str, str]] = field(default_factory=list)  # (key, problem)
    undigested: int = 0  # rows recorded before digests were kept: an edit to them cannot be told

    @property
    def rows(self) -> int:
        return sum(self.judges.values())

    @property
    def ok(self) -> bool:
        return not self.bad


class JudgmentStore(RecordStore):
    """A SQLite file of judgments (and recorded claim splits). Opening it checks that it is one (cheap:
    the table layout), creating it when new; `create=False` opens an existing store read-only and
    changes nothing. The file, its connection and locking are `RecordStore`'s (recordstore.py)."""

    _warned_edited = False

    def _rows(self, where: str = "", *arguments: Any):
        """(key, judge, text, passages, judgment, digest) of the rows `where` selects; digest None for a
        row recorded before digests were kept."""
        digest = f"(SELECT digest FROM {DIGEST_TABLE} d WHERE d.key = j.key)" if self.has_digests else "NULL"
        return self._db.execute(f"SELECT key, judge, text, passages, judgment, {digest} FROM {TABLE} j {where}",
                                arguments)

    def get(self, request: Request, judge_signature: str) -> Judgment | None:
        key = judgment_key(request, judge_signature)
        with self._sqlite_errors():
            row = self._rows("WHERE key = ?", key).fetchone()
        if row is None:
            return None
        try:
            judgment = _parse_judgment(row[4])
        except ValueError as err:
            raise StoreError(f"{self.path}: row with key {key}: {err}; `citeaudit store check "
                             f"{self.path}` lists every bad row") from None
        if judgment.judge != judge_signature or row[1] != judge_signature:
            raise StoreError(f"{self.path}: row with key {key}: the judgment is by {judgment.judge!r} "
                             f"(judge column {row[1]!r}), not by {judge_signature!r}")
        if not self._warned_edited and _digest_problem(*row):
            self._warned_edited = True  # once per store: `store check` lists every such row
            warnings.warn(EditedRecordWarning(
                f"{self.path}: the judgment of row {key} was changed after it was recorded (it does not match "
                f"its digest): it is used as stored; `citeaudit store check {self.path}` lists every such row"),
                stacklevel=2)
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
        """Insert one row and its digest inside an open write transaction; False when the key was recorded
        already."""
        row = (judgment_key(request, judgment.judge), judgment.judge, request.text,
               json.dumps([p.identity() for p in request.passages]), judgment.model_dump_json())
        added = bool(self._db.execute(
            f"INSERT INTO {TABLE} (key, judge, text, passages, judgment) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING", row).rowcount)
        if added:
            self._db.execute(f"INSERT OR REPLACE INTO {DIGEST_TABLE} (key, digest) VALUES (?, ?)",
                             (row[0], row_digest(*row)))
        return added

    def check(self) -> StoreCheck:
        """Every row read and checked: its judgment parses, is by the row's judge, its key is the hash of
        its text, passages and judge, and it matches its digest (when it has one)."""
        found = StoreCheck(self.path)
        with self._sqlite_errors():
            for row in self._rows("ORDER BY key"):
                found.judges[row[1]] += 1
                found.undigested += row[5] is None
                problem = _row_problem(*row)
                if problem:
                    found.bad.append((row[0], problem))
        return found

    def __len__(self) -> int:
        with self._sqlite_errors():
            return self._db.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]

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


class LayeredStore:
    """Judgments read from `recorded` first (a run log's, in memory), then from `store` when given; a new
    judgment is written to `store` (else kept in memory with the recorded ones)."""

    def __init__(self, recorded: MemoryStore, store: JudgmentStore | None = None):
        self.recorded, self.store = recorded, store
        self.path = store.path if store is not None else recorded.path

    def get(self, request: Request, judge_signature: str) -> Judgment | None:
        found = self.recorded.get(request, judge_signature)
        if found is None and self.store is not None:
            found = self.store.get(request, judge_signature)
        return found

    def put(self, request: Request, judgment: Judgment) -> Judgment:
        return (self.recorded if self.store is None else self.store).put(request, judgment)

    def __len__(self) -> int:
        return len(self.recorded) + (len(self.store) if self.store is not None else 0)
