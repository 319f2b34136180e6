"""Where a run's scored cases go, each written as the cases are scored (pipeline.Output); the terminal's
text and Markdown are `report/terminal.py`'s.

- `JsonLines`: `--format jsonl`, a line per case, then the summary.
- `StreamLog`: a run log streamed to a `.jsonl` file (header, a line per case, trailer).
- `DocumentLog`: a run log in one JSON document, byte for byte as `runlog.write_runlog` writes one.
- `ResultsJson`: `--format json`, byte for byte as the results' `model_dump_json(indent=2)`.

The two one-document outputs open with fields known only at the end (a summary, a checksum over
everything), so each keeps its large parts in temporary files as the cases come, in the form the
document holds them, and puts the document together at the end: memory holds one case at a time,
whatever the run's size. Every piece is written by pydantic as the whole document would be (a JSON
value printed alone and indented by its depth is the same text as inside its document), and the
checksum is computed over the same canonical JSON as `runlog.content_checksum`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import IO, Any, BinaryIO

from pydantic import TypeAdapter

from citeaudit._version import __version__
from citeaudit.judges import Request
from citeaudit.files.destinations import write_output_with
from citeaudit.run.pipeline import Output, Run, ScoredCase, request_line
from citeaudit.records import Case, Judgment
from citeaudit.run.results import AnswerRecord, CaseRecord, Finding, ResultSettings, Results, Summary
from citeaudit.run.log import JudgmentRecord, PassageRecord, StreamWriter, _RunHeader, run_header

# one encoder for every line: json.dumps with options would build a new one per call
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
# the canonical form a run log's checksum is computed over (runlog.content_checksum)
_canonical = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=True).encode

_STR = TypeAdapter(str)


def _pretty(adapter: TypeAdapter, value: Any, indent: int, depth: int) -> bytes:
    """`value` as pydantic prints it with `indent`, placed `depth` levels deep in a document."""
    pad = b" " * (indent * depth)
    return pad + adapter.dump_json(value, indent=indent).replace(b"\n", b"\n" + pad)


class _Array:
    """One array of a document, written element by element to a temporary file (as pydantic prints it,
    at its depth) and, for a checksum, in canonical form to another."""

    def __init__(self, folder: str, name: str, adapter: TypeAdapter, indent: int, depth: int, canonical: bool):
        self.adapter, self.indent, self.depth = adapter, indent, depth
        self.pretty = open(Path(folder) / f"{name}.pretty", "w+b")
        self.canonical = open(Path(folder) / f"{name}.canonical", "w+b") if canonical else None
        self.count = 0

    def add(self, value: Any) -> None:
        """`value`: the element's model (validated as the document's would be)."""
        if self.count:
            self.pretty.write(b",\n")
            if self.canonical:
                self.canonical.write(b",")
        self.pretty.write(_pretty(self.adapter, value, self.indent, self.depth))
        if self.canonical:
            self.canonical.write(_canonical(self.adapter.dump_python(value, mode="json")).encode("utf-8"))
        self.count += 1

    def write_pretty(self, out: BinaryIO) -> None:
        """The array as the document prints it: `[]`, or its elements one per line and the closing bracket."""
        if not self.count:
            out.write(b"[]")
            return
        out.write(b"[\n")
        _copy(self.pretty, out)
        out.write(b"\n" + b" " * (self.indent * (self.depth - 1)) + b"]")

    def hash_into(self, digest) -> None:
        digest.update(b"[")
        _copy(self.canonical, digest)
        digest.update(b"]")

    def close(self) -> None:
        self.pretty.close()
        if self.canonical:
            self.canonical.close()


def _copy(source: BinaryIO, into) -> None:
    """Copy a temporary file from its start into a file or a digest (anything with `write` or `update`)."""
    source.flush()
    source.seek(0)
    put = getattr(into, "write", None) or into.update
    while block := source.read(1 << 20):
        put(block)


def _fields(model: Any, indent: int, depth: int) -> bytes:
    """A model's fields as lines of its enclosing object at `depth`, as pydantic prints that object
    (without its braces and without a comma after the last field)."""
    text = model.model_dump_json(indent=indent).encode("utf-8")
    inner = text[2:-2] if text != b"{}" else b""  # "{\n" ... "\n}"
    pad = b" " * (indent * (depth - 1))
    return inner.replace(b"\n", b"\n" + pad) if depth > 1 else inner


def _key(name: str, indent: int, depth: int) -> bytes:
    return b" " * (indent * depth) + _STR.dump_json(name) + b": "


class _ResultsParts:
    """The `cases` and `answers` arrays of a run's results, kept as the cases come."""

    def __init__(self, folder: str, indent: int, depth: int, canonical: bool):
        # `depth`: the level of the results object itself; its arrays' elements sit two levels further in
        self.cases = _Array(folder, "result-cases", TypeAdapter(CaseRecord), indent, depth + 2, canonical)
        self.answers = _Array(folder, "result-answers", TypeAdapter(AnswerRecord), indent, depth + 2, canonical)
        self.indent, self.depth = indent, depth

    def add(self, scored: ScoredCase) -> None:
        self.cases.add(scored.case_model)
        for record in scored.answer_models:
            self.answers.add(record)

    def opening(self, run: Run) -> Results:
        """The results' small fields (the arrays left empty: their printing is done here)."""
        settings = run.settings
        return Results.model_construct(
            citeaudit_version=__version__, judge=run.report.judge_signature,
            settings=ResultSettings(ks=list(settings.ks), no_citation_precision=settings.no_citation_precision),
            cases=[], answers=[], summary=Summary.model_validate(run.summary_json()))

    def write_pretty(self, out: BinaryIO, run: Run) -> None:
        """The results object as pydantic prints it at `depth` (its opening brace at the caller's place)."""
        results = self.opening(run)
        i, d = self.indent, self.depth
        inner = b" " * (i * d)
        out.write(b"{\n")
        for name in ("citeaudit_version", "judge", "settings"):
            value = getattr(results, name)
            out.write(_key(name, i, d + 1) + _pretty(TypeAdapter(type(value)), value, i, d + 1).lstrip(b" ") + b",\n")
        out.write(_key("cases", i, d + 1))
        self.cases.write_pretty(out)
        out.write(b",\n" + _key("answers", i, d + 1))
        self.answers.write_pretty(out)
        out.write(b",\n" + _key("summary", i, d + 1)
                  + _pretty(TypeAdapter(Summary), results.summary, i, d + 1).lstrip(b" ") + b"\n" + inner + b"}")

    def hash_into(self, digest, run: Run) -> None:
        """The results object in canonical form (keys sorted)."""
        small = self.opening(run).model_dump(mode="json")
        parts = {"answers": self.answers, "cases": self.cases}
        digest.update(b"{")
        for n, name in enumerate(sorted([*parts, "citeaudit_version", "judge", "settings", "summary"])):
            digest.update((b"," if n else b"") + _canonical(name).encode("utf-8") + b":")
            if name in parts:
                parts[name].hash_into(digest)
            else:
                digest.update(_canonical(small[name]).encode("utf-8"))
        digest.update(b"}")

    def close(self) -> None:
        self.cases.close()
        self.answers.close()


# --- --format jsonl and a streamed log ----------------------------------------------------------------


class JsonLines(Output):
    """`--format jsonl`: each case's figures as one line as it is scored, then a line with the summary."""

    def __init__(self, out: IO[str]):
        self.out = out

    def case(self, scored: ScoredCase) -> None:
        self.out.write(_dumps({"case": scored.case_record, "answers": scored.answer_records}) + "\n")

    def finish(self, run: Run) -> None:
        settings = run.settings
        self.out.write(_dumps({"summary": run.summary_json(), "citeaudit_version": __version__,
                               "judge": run.report.judge_signature,
                               "settings": {"ks": list(settings.ks),
                                            "no_citation_precision": settings.no_citation_precision}}) + "\n")


class StreamLog(Output):
    """A run log streamed to `path` (schema 4 and later): the header, a line per case, the trailer."""

    keeps_judgments = True

    def __init__(self, path: str):
        self.path = path
        self.writer: StreamWriter | None = None

    def start(self, run: Run) -> None:
        self.writer = StreamWriter(self.path)
        self.writer.start(run_header(run.report, run.spec, run.inputs, run.reader))

    def case(self, scored: ScoredCase) -> None:
        self.writer.case({
            "case": scored.rc.case.model_dump(mode="json"),
            "passages": scored.passage_records,
            "judgments": [{"text": q.text, "passages": [p.identity() for p in q.passages],
                           "judgment": j.model_dump(mode="json", exclude_none=True)} for q, j in scored.asked.items()],
            "result": scored.case_record,
            "answers": scored.answer_records,
            "diagnosis": scored.diagnosis,
        })

    def finish(self, run: Run) -> None:
        self.writer.finish(run.summary_json())

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()


# --- one-document outputs ---------------------------------------------------------------------------


class ResultsJson(Output):
    """`--format json`: the results as one document, written to `out` when the run ends."""

    INDENT = 2

    def __init__(self, out: IO[str]):
        self.out = out
        self.folder = tempfile.mkdtemp(prefix="citeaudit-results-")
        self.parts = _ResultsParts(self.folder, self.INDENT, 0, canonical=False)

    def case(self, scored: ScoredCase) -> None:
        self.parts.add(scored)

    def finish(self, run: Run) -> None:
        try:
            out = self.out.buffer if hasattr(self.out, "buffer") else _TextSink(self.out)
            self.out.flush()
            self.parts.write_pretty(out, run)
            out.write(b"\n")
            out.flush()
        finally:
            self.abort()

    def abort(self) -> None:
        self.parts.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class _TextSink:
    """A text stream taking bytes (stdout under a test runner has no binary buffer)."""

    def __init__(self, out: IO[str]):
        self.out = out

    def write(self, data: bytes) -> None:
        self.out.write(data.decode("utf-8"))

    def flush(self) -> None:
        self.out.flush()


class DocumentLog(Output):
    """A run log in one JSON document at `path`, as `write_runlog(build_runlog(...))` writes it: the
    header, every passage, case and judgment (each judgment once, in the order first asked), the
    results, the diagnosis and the checksum of the content."""

    INDENT = 1
    keeps_judgments = True

    def __init__(self, path: str):
        self.path = path
        self.folder = tempfile.mkdtemp(prefix="citeaudit-log-")
        arrays = {"passages": PassageRecord, "cases": Case, "judgments": JudgmentRecord}
        self.arrays = {name: _Array(self.folder, name, TypeAdapter(model), self.INDENT, 2, canonical=True)
                       for name, model in arrays.items()}
        self.results = _ResultsParts(self.folder, self.INDENT, 1, canonical=True)
        self.findings = TypeAdapter(list[Finding])
        self.diagnosis = open(Path(self.folder) / "diagnosis.pretty", "w+b")
        self.diagnosed = 0
        # the canonical form sorts the diagnosis by key: SQLite orders text as UTF-8 bytes, as Python orders str
        self.sorted = sqlite3.connect(str(Path(self.folder) / "diagnosis.db"))
        self.sorted.execute("CREATE TABLE d (key TEXT PRIMARY KEY, value TEXT)")
        self.seen: set[bytes] = set()  # a fingerprint per judgment written: each pair once
        self.asked: list[tuple[Request, Judgment]] = []  # the chunk's cases' own, after its recorded ones

    def case(self, scored: ScoredCase) -> None:
        for p in scored.passage_records:
            self.arrays["passages"].add(PassageRecord.model_validate(p))
        self.arrays["cases"].add(scored.rc.case)
        self.results.add(scored)
        for key, findings in scored.diagnosis.items():
            value = self.findings.validate_python(findings)
            if self.diagnosed:
                self.diagnosis.write(b",\n")
            self.diagnosis.write(_key(key, self.INDENT, 2) + _pretty(self.findings, value, self.INDENT, 2).lstrip(b" "))
            self.sorted.execute("INSERT OR REPLACE INTO d VALUES (?, ?)",
                                (key, _canonical(self.findings.dump_python(value, mode="json"))))
            self.diagnosed += 1
        self.asked.extend(scored.asked.items())

    def chunk_done(self, recorded: list[tuple[Request, Judgment]]) -> None:
        """The chunk's judgments, in the order a loaded run records them: what the source served (its
        memo, in the order first asked), then what a case asked that it did not keep."""
        for request, judgment in (*recorded, *self.asked):
            key = hashlib.blake2b(request_line(request).encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if key in self.seen:
                continue
            self.seen.add(key)
            self.arrays["judgments"].add(JudgmentRecord(text=request.text,
                                                        passages=[p.identity() for p in request.passages],
                                                        judgment=judgment))
        self.asked = []

    def finish(self, run: Run) -> None:
        try:
            header = _RunHeader.model_validate(run_header(run.report, run.spec, run.inputs, run.reader))
            checksum = self._checksum(header, run)
            write_output_with(self.path, lambda out: self._write(out, header, run, checksum), "run log")
        finally:
            self.abort()

    def _checksum(self, header: _RunHeader, run: Run) -> str:
        """SHA-256 of the canonical JSON of every field but the checksum (runlog.content_checksum)."""
        digest = hashlib.sha256()
        small = header.model_dump(mode="json")  # (a log without a search budget has no `search` field)
        names = sorted([*small, *self.arrays, "results", "diagnosis"])
        digest.update(b"{")
        for n, name in enumerate(names):
            digest.update((b"," if n else b"") + _canonical(name).encode("utf-8") + b":")
            if name in self.arrays:
                self.arrays[name].hash_into(digest)
            elif name == "results":
                self.results.hash_into(digest, run)
            elif name == "diagnosis":
                digest.update(b"{")
                for m, (key, value) in enumerate(self.sorted.execute("SELECT key, value FROM d ORDER BY key")):
                    digest.update((b"," if m else b"") + _canonical(key).encode("utf-8") + b":" + value.encode("utf-8"))
                digest.update(b"}")
            else:
                digest.update(_canonical(small[name]).encode("utf-8"))
        digest.update(b"}")
        return digest.hexdigest()

    def _write(self, out: BinaryIO, header: _RunHeader, run: Run, checksum: str) -> None:
        i = self.INDENT
        out.write(b"{\n" + _fields(header, i, 1) + b",\n")
        for name in ("passages", "cases", "judgments"):
            out.write(_key(name, i, 1))
            self.arrays[name].write_pretty(out)
            out.write(b",\n")
        out.write(_key("results", i, 1))
        self.results.write_pretty(out, run)
        out.write(b",\n" + _key("diagnosis", i, 1))
        if self.diagnosed:
            out.write(b"{\n")
            _copy(self.diagnosis, out)
            out.write(b"\n" + b" " * i + b"}")
        else:
            out.write(b"{}")
        out.write(b",\n" + _key("checksum", i, 1) + _STR.dump_json(checksum) + b"\n}")

    def abort(self) -> None:
        for array in self.arrays.values():
            array.close()
        self.results.close()
        self.diagnosis.close()
        self.sorted.close()
        shutil.rmtree(self.folder, ignore_errors=True)
