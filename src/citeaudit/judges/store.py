"""Recorded judgments: a SQLite store keyed by everything that can change a judgment.

The key hashes the text, every cited passage's document id, version, span and content hash, and the
judge's signature. Each judgment is committed as soon as it is made, so an interrupted run loses
nothing and a rerun asks the judge only for what is missing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ..errors import MissingJudgment
from ..records import Judgment, SourcePassage
from .base import Request

SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    text TEXT NOT NULL,
    passages TEXT NOT NULL,
    judgment TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now'))
)
"""


def judgment_key(request: Request, judge_signature: str) -> str:
    material = {
        "text": request.text,
        "passages": [p.identity() for p in request.passages],
        "judge": judge_signature,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class JudgmentStore:
    def __init__(self, path: str | Path):
        self.path = str(path)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(SCHEMA)
        self._db.commit()

    def get(self, request: Request, judge_signature: str) -> Judgment | None:
        row = self._db.execute(
            "SELECT judgment FROM judgments WHERE key = ?", (judgment_key(request, judge_signature),)
        ).fetchone()
        return Judgment.model_validate_json(row[0]) if row else None

    def put(self, request: Request, judgment: Judgment) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO judgments (key, judge, text, passages, judgment) VALUES (?, ?, ?, ?, ?)",
            (
                judgment_key(request, judgment.judge),
                judgment.judge,
                request.text,
                json.dumps([p.identity() for p in request.passages]),
                judgment.model_dump_json(),
            ),
        )
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]

    def close(self) -> None:
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

    def put(self, request: Request, judgment: Judgment) -> None:
        self._items[judgment_key(request, judgment.judge)] = judgment

    def __len__(self) -> int:
        return len(self._items)
