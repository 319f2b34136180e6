"""Readers of other tools' files: ALCE result files, RAGChecker inputs and outputs, RAGAS datasets, the
annotated ExpertQA set, OpenTelemetry traces (OTLP JSON, Phoenix exports) and a team's own labelled pairs,
each turned into citeaudit cases (docs/readers.md).

A reader maps what the other format holds onto the case format and keeps the rest, original ids
included, in `metadata`. It checks the fields it maps and reports every malformed row at once, located
in the input's own terms (`run.json:12: data[3].docs[1].text: field required`); it never drops a row.
What it yields is validated and resolved afterwards like any case file (`loading.read_other_format`).
Citation markers that name no source are left in the answer text as written: what they count as is
the reading's business (`--invalid-citations`), not the reader's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citeaudit.errors import InputError, Problem
from citeaudit.files.readers import alce, expertqa, otel, pairs, ragas, ragchecker
from citeaudit.files.readers.common import Reader, ReadRecord

READERS: dict[str, Reader] = {reader.name: reader for reader in (alce.READER, ragchecker.READER, ragas.READER,
                                                                   expertqa.READER, pairs.READER, otel.READER)}

__all__ = ["READERS", "ReadRecord", "Reader", "read", "reader_options"]


def _reader(fmt: str, path: str = "") -> Reader:
    if fmt not in READERS:
        raise InputError([Problem(path or fmt, None, "", f"unknown format '{fmt}' (known: {', '.join(READERS)})")])
    return READERS[fmt]


def read(fmt: str, path: str, **options: Any) -> list[ReadRecord]:
    """The cases in `path`, a file (or, for RAGAS, a saved dataset folder) in format `fmt`.

    Raises InputError listing every malformed row (file, line, field), an unknown option, or an
    option value the reader does not take. The cases are as the file gives them, before their raw
    answers are parsed; what a reader does once they are (its `resolved`, e.g. the ragchecker reader's
    cite=all) happens when they are loaded (`loading.load_cases(paths, reading, fmt, **options)`)."""
    reader = _reader(fmt, path)
    unknown = sorted(set(options) - set(reader.options))
    if unknown:
        known = ", ".join(reader.options) or "none"
        raise InputError([Problem(path, None, "", f"unknown option '{name}' for the {fmt} reader (known: {known})")
                          for name in unknown])
    return reader.read(path, **options)


def reader_options(fmt: str) -> Mapping[str, str]:
    """The options a reader takes: name -> what it does (for docs and --help)."""
    return _reader(fmt).options
