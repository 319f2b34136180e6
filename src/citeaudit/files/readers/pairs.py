"""Labelled pairs as cases: the JSON lines `validate-judge`, `agree` and `--labels` read (files/labelled.py),
one (claim, passages, label) row a line::

    {"id": "citecheck:565:518", "claim": "...", "passages": [{"id": "[1]", "text": "..."}], "label": "full",
     "source": "citecheck", "lang": "zh"}

Each row becomes a case of its own: its passages are the sources, one answer (id `pair`) makes one
claim, the row's claim, citing every passage, and the row's label becomes a curated label of that claim
with those passages. So `--judge curated` replays the human labels and any other judge is judged on the
same pairs, beside them. The rows are checked as labelled.py checks them, every problem at its line.
"""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any

from citeaudit.files.labelled import Row, load_rows
from citeaudit.files.readers.common import Reader, ReadRecord, option_text

OPTIONS = {"system": "the system name of every answer (default: the file name without its extension)"}
ANSWER = "pair"  # the one answer of a row's case


def read(path: str, system: str | None = None) -> list[ReadRecord]:
    system = option_text(path, "system", system) or FsPath(path).stem
    return [ReadRecord(_case(row, system), row.line, "") for row in load_rows(path)]


def _case(row: Row, system: str) -> dict[str, Any]:
    cited = [p.id for p in row.passages]
    metadata: dict[str, Any] = {"from": "pairs"}
    metadata.update({key: value for key, value in (("source", row.source), ("lang", row.lang)) if value is not None})
    return {
        "id": row.id,
        "question": "",  # a labelled pair has none
        "sources": [{"id": p.id, "text": p.text} for p in row.passages],
        "answers": [{"id": ANSWER, "system": system, "statements": [{"text": row.claim, "citations": cited}]}],
        "labels": [{"claim": row.claim, "passages": cited, "label": row.label,
                    "explanation": f"human label, row {row.id}"}],
        "metadata": metadata,
    }


READER = Reader(
    name="pairs",
    description="labelled pairs, the validate-judge format ({'id', 'claim', 'passages': [{'id', 'text'}], "
                "'label'} a line): each a case whose one claim cites the pair's passages, its label a curated label",
    options=OPTIONS,
    read=read,
)
