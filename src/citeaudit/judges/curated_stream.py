"""The curated judge for a streamed run: every case's labels kept in a SQLite file, not in memory.

A streamed run reads its cases twice: once to check them (and here, to note every label), once to
score them. Labels are about texts, not cases, so a label given in one case answers the same pair in
any other, and the judge's signature hashes the whole table: both need every label before the first
pair is judged. `LabelTable` writes the labels to disk as they are read (a few thousand at a time);
`finish()` then reports conflicting
labels exactly as `CuratedJudge.from_cases` does and computes the same signature, reading the table in
the order Python would sort it (SQLite compares text as UTF-8 bytes, which orders as code points do).

While scoring, a case's own labels answer its pairs from memory (found by claim and passage ids); the
table is read only for a pair its case does not label, or one labelled in several cases (the last label
read wins, as in the table of `CuratedJudge`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from citeaudit.errors import InputError, Problem, UnlabelledPair
from citeaudit.records import Judgment, SourcePassage
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.judges.base import Request
from citeaudit.judges.curated import VERSION


def _shas(passages: Iterable[SourcePassage]) -> list[str]:
    return sorted({p.sha256 for p in passages})


def _ids(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(ids)))


class LabelTable:
    """Every label of a run's cases, on disk in `folder` (a temporary folder the caller removes). A pair is
    (claim, its passages' sorted hashes joined): indexed once every label is in, that one index finds the
    pairs labelled twice, serves the signature in sorted order and answers lookups."""

    FLUSH = 8192  # labels written to the table at once

    def __init__(self, folder: str | Path):
        self._db = sqlite3.connect(Path(folder) / "labels.sqlite", isolation_level=None)
        self._db.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE labels (text TEXT, shas TEXT, label TEXT, explanation TEXT, origin TEXT, position INTEGER);
            BEGIN;
        """)
        self._rows: list[tuple] = []
        self._shared: set[tuple[str, str]] = set()
        self.signature: str | None = None

    def add(self, rc: ResolvedCase) -> None:
        """Note the labels of one case, in its order."""
        sha = {pid: p.sha256 for pid, p in rc.passages.items()} if rc.case.labels else {}
        for i, entry in enumerate(rc.case.labels):
            shas = "".join(sorted({sha[pid] for pid in entry.passages}))
            self._rows.append((entry.claim, shas, entry.label, entry.explanation, rc.origin, i))
        if len(self._rows) >= self.FLUSH:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?)", self._rows)
        self._rows = []

    def finish(self) -> None:
        """Check the labels against each other and compute the judge's signature; raises InputError
        listing every conflicting label, as `CuratedJudge.from_cases` does."""
        db = self._db
        self._flush()
        db.execute("COMMIT")
        db.execute("CREATE INDEX labels_pair ON labels (text, shas)")
        twice = "SELECT text, shas FROM labels GROUP BY text, shas HAVING COUNT(*) > 1"
        self._shared = set(db.execute(twice))
        problems = []
        if self._shared:  # replay the labels given more than once, in the order read
            table: dict[tuple[str, str], str] = {}
            rows = db.execute(f"SELECT text, shas, label, origin, position FROM labels WHERE (text, shas) IN ({twice}) "
                              "ORDER BY rowid")
            for text, shas, label, origin, position in rows:
                pair = (text, shas)
                if pair in table and table[pair] != label:
                    problems.append(Problem(origin, None, f"labels[{position}]",
                                            f"conflicting label '{label}' (was '{table[pair]}')"))
                table[pair] = label
        if problems:
            raise InputError(problems)
        # CuratedJudge hashes json.dumps(sorted([text, sorted(shas), label] ...)): the same text, one item at a time
        digest = hashlib.sha256(b"[")
        if self._shared:  # the label read last for each pair
            rows = db.execute("SELECT text, shas, label FROM labels WHERE rowid IN (SELECT MAX(rowid) FROM labels "
                              "GROUP BY text, shas) ORDER BY text, shas")
        else:  # every pair labelled once: the index holds them in order
            rows = db.execute("SELECT text, shas, label FROM labels ORDER BY text, shas")
        for n, (text, shas, label) in enumerate(rows):
            item = [text, [shas[i:i + 64] for i in range(0, len(shas), 64)], label]
            digest.update(((", " if n else "") + json.dumps(item)).encode())
        digest.update(b"]")
        self.signature = f"curated@{VERSION}#{digest.hexdigest()[:12]}"

    def last(self, text: str, shas: list[str]) -> tuple[str, str | None] | None:
        """The label and explanation read last for a pair, or None."""
        return self._db.execute("SELECT label, explanation FROM labels WHERE text = ? AND shas = ? "
                                "ORDER BY rowid DESC LIMIT 1", (text, "".join(shas))).fetchone()

    @property
    def any_shared(self) -> bool:
        """Was any pair labelled more than once?"""
        return bool(self._shared)

    def shared(self, text: str, shas: list[str]) -> bool:
        """Was this pair labelled more than once?"""
        return (text, "".join(shas)) in self._shared

    def close(self) -> None:
        self._db.close()


class StreamedCuratedJudge:
    """The curated judge over a `LabelTable`: the same labels, explanations and signature as
    `CuratedJudge.from_cases` over the same cases. `for_case` is told of each case before its pairs."""

    name = "curated"

    def __init__(self, table: LabelTable):
        if table.signature is None:
            raise ValueError("the label table is not finished")
        self._table = table
        self.signature = table.signature
        # a case's own labels by claim and passage ids: within a case an id names one passage, so no
        # passage need be hashed to find them; a pair they miss is looked up by content in the table
        self._own: dict[tuple[str, tuple[str, ...]], tuple[str, str | None]] = {}
        self._made: dict[tuple[str, str | None], Judgment] = {}

    def for_case(self, rc: ResolvedCase) -> None:
        self._own = {}
        for entry in rc.case.labels:
            self._own[entry.claim, _ids(entry.passages)] = (entry.label, entry.explanation)

    def judge(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        found = self._own.get((text, _ids(p.id for p in passages)))
        if found is None or self._table.any_shared:
            shas = _shas(passages)
            if found is None or self._table.shared(text, shas):
                found = self._table.last(text, shas)
        if found is None:
            raise UnlabelledPair(f"no curated label for {Request.of(text, passages).describe()}")
        made = self._made.get(found)  # judgments are immutable: one per distinct label and explanation
        if made is None:
            if len(self._made) > 4096:
                self._made.clear()
            made = self._made[found] = Judgment(label=found[0], judge=self.signature, explanation=found[1])
        return made
