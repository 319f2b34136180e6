"""The versioned run log: the one source of truth for reports, comparisons, reviews and the desk.

It keeps the inputs' hashes, every case as scored (sources with ids, versions and texts), the run's
signature (judge, parser and claim splitter, conventions, citeaudit version), every judgment with the
passage identities (document, version, span, content hash) it rests on, every metric and the
diagnosis. Metrics can be recomputed from it without judging again; reports read only the log.

Schema versions. `SCHEMA_VERSION` is the one this citeaudit writes. A log of an older version is read
through `MIGRATIONS`: pure functions, each taking the JSON of version n to version n + 1, applied in
turn before validation (a log is never rewritten in place). A change that adds, removes or renames a
field bumps the version and adds its migration; a log newer than this citeaudit is refused with a
message to upgrade.

    1 -> 2  adds `signature`, built from `judge` and `settings` (no parser recorded: version 1 logs
            did not say whether answers were parsed from raw text)
    2 -> 3  adds `checksum` (none for older logs: they are read unchecked)
    3 -> 4  a log may also be a stream (JSON lines: a header, one line per case, a trailer; see
            docs/runs.md), written as scoring goes; the one-document form is unchanged
    4 -> 5  adds `judge_spec`, the judge as it was named (kind, options, a cascade's parts), beside its
            signature; none for older logs (the desk then reads what it can from the signature); the
            results' cut-offs are `ks`, as in `settings` (they were `k`)

Within schema 5, a claim of the results may carry `repair` (run/results.py `ClaimRepair`): only the run
log of repaired answers (`citeaudit repair --log`) has it, and every other log is written without the
key, exactly as before. It needs no migration, since a log without it reads as one whose claims had no
repair; and no new version, so that every log citeaudit wrote stays byte for byte what schema 5 is. (A
citeaudit older than the field refuses a log that has it, by its unknown-field check: the log says
more than that citeaudit can read, never less.)

The checksum is the SHA-256 of the log's content (every field but `checksum`, as canonical JSON); a
stream's is that of its bytes before the trailer.
A log whose content no longer matches it was edited after it was written; so was a log of schema 3 or
later without one (citeaudit has written a checksum into every log since schema 3: only a hand can have
taken it out), and a stream whose trailer's summary is not the one its case lines sum to (the checksum
does not cover the trailer; the summary is recomputed from the cases). Such a log is still read, and
`RunLog.edited` says so (`edit_note` says how), so every command that shows it can say that its figures
are as stored and `citeaudit rescore` recomputes them from its judgments.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from json.decoder import scanstring
from pathlib import Path
from typing import Any, Literal

from pydantic import PrivateAttr, ValidationError

from citeaudit._version import __version__
from citeaudit.budget import OptionalSearchRecord
from citeaudit.run.diagnose import diagnose
from citeaudit.errors import InputError, Problem, RunLogError, format_path, validation_problems
from citeaudit.judges import JudgeSpec, Judgments, MemoryStore, RecordedJudge, Request
from citeaudit.jsonio import ENCODING, StrictJson, decode_error, refused
from citeaudit.files.loading import read_json_file
from citeaudit.files.destinations import put_in_place, temporary_for_stream, write_output
from citeaudit.metrics import Parsing, Report, Settings, Signature, score_cases
from citeaudit.records import Case, Judgment, directory_sha256, file_sha256
from citeaudit.run.results import (AnswerRecord, CaseRecord, Finding, PassageRef, ResultSettings, Results, Summary, _Log,
                                   results_of)
from citeaudit.parse.resolve import Reading, ResolvedCase, resolve

SCHEMA_VERSION = 5


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    settings = data.get("settings")
    zero = isinstance(settings, dict) and settings.get("no_citation_precision") == "zero"
    signature = {"judge": data.get("judge"), "nocite": "0" if zero else "n/a", "version": data.get("citeaudit_version")}
    return {**data, "schema_version": 2, "signature": signature}


def _from_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "schema_version": 3, "checksum": None}


def _from_v3(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "schema_version": 4}


def _from_v4(data: dict[str, Any]) -> dict[str, Any]:
    out = {**data, "schema_version": 5, "judge_spec": None}
    results = data.get("results")
    if isinstance(results, dict) and isinstance(results.get("settings"), dict) and "k" in results["settings"]:
        settings = {("ks" if k == "k" else k): v for k, v in results["settings"].items()}  # one name: `ks`
        out["results"] = {**results, "settings": settings}
    return out


# schema version n -> its migration to n + 1
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_v1, 2: _from_v2, 3: _from_v3,
                                                                     4: _from_v4}
SUPPORTED_SCHEMAS = (*MIGRATIONS, SCHEMA_VERSION)


class InputFile(_Log):
    path: str
    sha256: str
    reader: str = "citeaudit"  # the format it was read as: citeaudit's own, or another tool's (--from)


class PassageRecord(_Log):
    """A passage of a case as scored: the case, then everything that names its exact text."""

    case: str
    id: str
    doc: str
    version: str | None
    span: list[int]
    sha256: str


class JudgmentRecord(_Log):
    text: str
    passages: list[PassageRef]
    judgment: Judgment


class JudgeSpecRecord(_Log):
    """The judge as it was named (`--judge`), parsed: what `citeaudit judges` lists for its kind."""

    spec: str  # as written: model:guard=off, cascade:model,human
    kind: str
    options: dict[str, Any] | None = None  # every option's value, defaults and environment included
    head: str | None = None  # hf/onnx PATH, openai MODEL
    labels: dict[str, str] | None = None  # hf/onnx output names -> labels
    parts: list[JudgeSpecRecord] | None = None  # a cascade's two judges (the second may be "human")

    @classmethod
    def of(cls, spec: JudgeSpec | None) -> JudgeSpecRecord | None:
        return cls.model_validate(spec.to_record()) if spec is not None else None


class RunSettings(_Log):
    ks: list[int]
    no_citation_precision: Literal["n/a", "zero"]
    conventions: Literal["citeaudit", "alce"] = "citeaudit"
    invalid_citations: Literal["error", "count"] = "error"
    metrics: list[str] | None = None
    missing_labels: Literal["error", "skip"] = "error"

    @classmethod
    def of(cls, settings: Settings) -> RunSettings:
        return cls(ks=list(settings.ks), no_citation_precision=settings.no_citation_precision,
                   conventions=settings.conventions, invalid_citations=settings.invalid_citations,
                   metrics=list(settings.metrics) if settings.metrics is not None else None,
                   missing_labels=settings.missing_labels)

    def to_settings(self) -> Settings:
        return Settings(ks=tuple(self.ks), no_citation_precision=self.no_citation_precision,
                        conventions=self.conventions, invalid_citations=self.invalid_citations,
                        metrics=tuple(self.metrics) if self.metrics is not None else None,
                        missing_labels=self.missing_labels)

    def reading(self) -> Reading:
        return Reading(conventions=self.conventions, invalid_citations=self.invalid_citations)

    @property
    def judges_claims(self) -> bool:
        """Whether the run's measures judged claims at all (else its labels and diagnosis were not measured)."""
        return self.to_settings().judges_claims


class _Checked(_Log):
    """A log, or a stream's trailer, that knows whether its content still matches its checksum."""

    _edit_note: str | None = PrivateAttr(default=None)

    @property
    def edited(self) -> bool:
        """True when the log was changed after it was written: its content no longer matches its checksum,
        the checksum was taken out, or a stream's summary is not its cases' (`edit_note` says which)."""
        return self._edit_note is not None

    @property
    def edit_note(self) -> str | None:
        """How the log is known to be edited ("its checksum does not match"), None when it is not."""
        return self._edit_note


CHECKSUM_WRONG = "its checksum does not match"
CHECKSUM_REMOVED = "its checksum was removed"
TRAILER_WRONG = "its trailer's count or summary is not its cases': the summary is summed again from them"
FIRST_CHECKSUM_SCHEMA = 3  # every log citeaudit wrote since this schema has a checksum


class _RunHeader(_Log):
    """What a run was: the fields a log opens with, in one document or in a stream's header line."""

    schema_version: int
    citeaudit_version: str
    created: str
    judge: str
    judge_spec: JudgeSpecRecord | None = None  # absent from logs of schema 4 and earlier
    signature: Signature
    settings: RunSettings
    inputs: list[InputFile]


class RunLog(_RunHeader, _Checked):
    passages: list[PassageRecord]
    cases: list[Case]
    judgments: list[JudgmentRecord]
    results: Results
    diagnosis: dict[str, list[Finding]]
    checksum: str | None = None
    search: OptionalSearchRecord = None  # an agent's search budget, when `verify` was given one
    _source: str | None = PrivateAttr(default=None)  # the file it was read from, for located errors

    @property
    def source(self) -> str | None:
        """The file the log was read from (None: built in memory)."""
        return self._source

    def claims_frame(self):
        """One row per claim and citation (docs/exports.md) as a pandas DataFrame; needs citeaudit[formats]."""
        from citeaudit.metrics.rows import claims_frame

        return claims_frame(self)


def content_checksum(data: dict[str, Any]) -> str:
    """SHA-256 of a log's JSON content without its checksum, canonically serialised."""
    content = {k: v for k, v in data.items() if k != "checksum"}
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def diagnosis_of(report: Report) -> dict[str, list[Finding]]:
    by_id = {rc.id: rc for rc in report.cases}
    return {f"{r.case_id}/{r.answer_id}": [Finding(**f.to_dict()) for f in diagnose(by_id[r.case_id], r)]
            for r in report.answers}


def run_header(report: Report, spec: JudgeSpec | None, inputs: Sequence[str | Path] = (),
               reader: str = "citeaudit") -> dict[str, Any]:
    """The fields a run log opens with, in one document or as a stream's header: built here only."""
    return _RunHeader(
        schema_version=SCHEMA_VERSION,
        citeaudit_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        judge=report.judge_signature,
        judge_spec=JudgeSpecRecord.of(spec),
        signature=report.run_signature,
        settings=RunSettings.of(report.settings),
        inputs=[InputFile(path=str(p), sha256=file_sha256(p) if Path(p).is_file() else directory_sha256(p),
                          reader=reader) for p in inputs],
    ).model_dump(mode="json")


def build_runlog(report: Report, judgments: Judgments, inputs: Sequence[str | Path] = (),
                 reader: str = "citeaudit") -> RunLog:
    return RunLog(
        **run_header(report, getattr(judgments, "spec", None), inputs, reader),
        passages=[PassageRecord(case=rc.id, **p.identity()) for rc in report.cases for p in rc.passages.values()],
        cases=[rc.case for rc in report.cases],
        judgments=[JudgmentRecord(text=r.text, passages=[p.identity() for p in r.passages], judgment=j)
                   for r, j in judgments.recorded()],
        results=results_of(report),
        diagnosis=diagnosis_of(report),
    )


def write_runlog(path: str | Path, log: RunLog) -> None:
    """Write the log whole (never half a file), with the checksum of its content; if `path` cannot be
    written, it is kept elsewhere and the DestinationError says where."""
    sealed = log.model_copy(update={"checksum": content_checksum(log.model_dump(mode="json"))})
    write_output(path, sealed.model_dump_json(indent=1), "run log")


def read_runlog(path: str | Path) -> RunLog:
    """Read a run log of this or an older schema version (migrated in memory; the file is not rewritten),
    as one document or as a stream (loaded whole: `stream_entries` reads a stream one case at a time)."""
    name = str(path)
    log = _read_stream(path) if is_stream(path) else _read_document(path)
    log._source = name
    return log


def _read_document(path: str | Path) -> RunLog:
    name = str(path)
    data = read_json_file(path)
    if not isinstance(data, dict) or "schema_version" not in data:
        raise RunLogError(f"{name}: not a citeaudit run log (no schema_version)")
    version = _schema_version(data["schema_version"], name)
    stored = data.get("checksum")
    if not isinstance(stored, str):
        note = CHECKSUM_REMOVED if version >= FIRST_CHECKSUM_SCHEMA else None  # older logs never had one
    else:
        note = CHECKSUM_WRONG if stored != content_checksum(data) else None
    while version != SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version = data["schema_version"]
    try:
        log = RunLog.model_validate(data)
    except ValidationError as err:
        raise InputError(validation_problems(err, name)) from None
    log._edit_note = note
    return log


def _schema_version(version: Any, name: str) -> int:
    supported = ", ".join(map(str, SUPPORTED_SCHEMAS))
    # bool is an int to Python: `true` must not read as schema 1
    if not isinstance(version, int) or isinstance(version, bool):
        raise RunLogError(f"{name}: schema_version: expected an integer ({supported}), got {json.dumps(version)}")
    if version not in SUPPORTED_SCHEMAS:
        hint = "upgrade citeaudit" if version > SCHEMA_VERSION else f"rescore its cases with citeaudit {__version__}"
        raise RunLogError(f"{name}: run log schema_version {version} is not supported; this citeaudit "
                          f"{__version__} reads schema_version {supported}: {hint}")
    return version


def resolved_cases(log: RunLog) -> list[ResolvedCase]:
    """The log's cases resolved again; a case that does not resolve is an error located in the log's file
    (a log written by citeaudit resolves: anything else was edited by hand)."""
    out, unresolved = [], []
    for case in log.cases:
        rc, problems = resolve(case, log.settings.reading())
        unresolved += [f"{log.source or 'the run log'}: case {case.id}: {format_path(path)}: {message}"
                       for path, message in problems]
        out.append(rc)
    if unresolved:
        raise RunLogError("\n".join(unresolved) + "\nthe run log's cases do not resolve: it was changed after it "
                          "was written")
    return out


def replay_judgments(log: RunLog, cases: list[ResolvedCase]) -> Judgments:
    """A judgment source that serves only the judgments kept in the log."""
    store = MemoryStore("<run log>")
    passages = {(rc.id, pid): p for rc in cases for pid, p in rc.passages.items()}
    by_identity = {json.dumps(p.identity(), sort_keys=True): p for p in passages.values()}
    for record in log.judgments:
        found = [by_identity.get(json.dumps(i.model_dump(), sort_keys=True)) for i in record.passages]
        if None in found:
            continue  # a passage no case holds any more cannot be asked for
        store.put(Request.of(record.text, found), record.judgment)
    return Judgments(RecordedJudge(store, log.judge), store)


def log_parsing(log: RunLog) -> Parsing | None:
    # The log's cases were parsed when scored: the parser that did it is the log's, not found again.
    return Parsing(log.signature.parser, log.signature.claims) if log.signature.parser else None


def replayed_run(log: RunLog, settings: Settings | None = None):
    """The log's cases as a pipeline run judged from its recorded judgments only (`citeaudit rescore`)."""
    from citeaudit.run.pipeline import Run

    cases = resolved_cases(log)
    return Run.replayed(cases, settings or log.settings.to_settings(), replay_judgments(log, cases), log_parsing(log))


def rescore(log: RunLog, settings: Settings | None = None) -> tuple[Report, Judgments]:
    """Recompute every metric from the log's judgments, without judging again."""
    cases = resolved_cases(log)
    settings = settings or log.settings.to_settings()
    judgments = replay_judgments(log, cases)
    return score_cases(cases, judgments, settings, parsing=log_parsing(log)), judgments


# --- the streamed form (schema 4) --------------------------------------------------------------------
# One JSON object per line: a header (what the run was), one line per case as it was scored (the case,
# its passages, the judgments it asked for, its figures and diagnosis), then a trailer (the summary,
# accumulated from counts, and the checksum of every byte before it). Written as scoring goes, to a
# temporary name renamed into place at the end, so a log is complete or absent, never half written.

STREAM_HEADER, STREAM_END = "header", "end"


class StreamHeader(_RunHeader):
    stream: Literal["header"]


class CaseEntry(_Log):
    """One case of a streamed log, as scored."""

    case: Case
    passages: list[PassageRecord]
    judgments: list[JudgmentRecord]
    result: CaseRecord
    answers: list[AnswerRecord]
    diagnosis: dict[str, list[Finding]]


class StreamTrailer(_Checked):
    """The last line of a stream; `edited` when the bytes before it no longer match its checksum, or when
    its count or summary is not its case lines' (the checksum does not cover the trailer itself)."""

    stream: Literal["end"]
    cases: int
    summary: Summary
    checksum: str
    _summed: Summary | None = PrivateAttr(default=None)

    @property
    def summed(self) -> Summary:
        """The summary the stream's case lines sum to, as the run summed it while scoring them: the one a
        stream is read with, whatever the trailer says."""
        return self._summed if self._summed is not None else self.summary


def is_stream(path: str | Path) -> bool:
    """Is this file a streamed run log (its first line a stream header)?"""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 20).removeprefix(codecs.BOM_UTF8)
    except OSError:
        return False
    if not first.lstrip().startswith(b"{"):
        return False
    try:
        data = json.loads(first)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("stream") == STREAM_HEADER


_FIRST_KEY = re.compile(r'\s*\{\s*"')  # a JSON object's opening, up to its first key's quote


def is_run_log(path: str | Path) -> bool:
    """Is this file a run log: a stream, or a JSON object whose first key is `schema_version` (as every
    run log is written; a case file never has that key, whatever its texts say)?"""
    if is_stream(path):
        return True
    try:
        with open(path, encoding=ENCODING) as fh:
            head = fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    opening = _FIRST_KEY.match(head)
    if opening is None:
        return False
    try:
        key, _ = scanstring(head, opening.end())
    except ValueError:
        return False
    return key == "schema_version"


class StreamWriter:
    """Writes a streamed run log: `start(header)`, `case(entry)` per case, `finish(trailer)`; the file
    appears at `path` only when finished (`abort()` removes the temporary one)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        fd, self._temporary = temporary_for_stream(self.path, "run log")
        self._fh = os.fdopen(fd, "w+b")  # read back if the folder goes away (put_in_place)
        self._digest = hashlib.sha256()
        self.cases = 0

    def _line(self, data: dict[str, Any]) -> None:
        line = (json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")
        self._digest.update(line)
        self._fh.write(line)

    def start(self, header: dict[str, Any]) -> None:
        """`header`: `run_header`'s fields."""
        self._line({"schema_version": header["schema_version"], "stream": STREAM_HEADER, **header})

    def case(self, entry: dict[str, Any]) -> None:
        self._line(entry)
        self.cases += 1

    def finish(self, summary: dict[str, Any]) -> None:
        checksum = self._digest.hexdigest()
        self._fh.write((json.dumps({"stream": STREAM_END, "cases": self.cases, "summary": summary,
                                    "checksum": checksum}, ensure_ascii=False, separators=(",", ":"))
                        + "\n").encode("utf-8"))
        put_in_place(self._fh, self._temporary, self.path, "run log")  # kept elsewhere, if need be

    def abort(self) -> None:
        self._fh.close()
        Path(self._temporary).unlink(missing_ok=True)


def stream_entries(path: str | Path) -> Iterator[StreamHeader | CaseEntry | StreamTrailer]:
    """A streamed log read one line at a time: its header, each case, its trailer (with `edited` set when
    the bytes before it no longer match its checksum, or its count or summary is not the cases'; `summed`
    is theirs). Each line is checked as it is read; a problem is an InputError naming the file and line."""
    from citeaudit.run.pipeline import SummaryCounts

    name = str(path)
    digest = hashlib.sha256()
    reader = StrictJson()
    ended = False
    header: StreamHeader | None = None
    counts: SummaryCounts | None = None
    seen = 0
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            if n == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)  # as an editor may add: not part of the log
            if ended:
                raise RunLogError(f"{name}:{n}: a line after the run log's trailer")
            try:
                data = reader.decode(raw.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise RunLogError(f"{name}:{n}: cannot read: {err}") from None
            except json.JSONDecodeError as err:
                raise InputError([decode_error(name, err, n - 1)]) from None
            found = [Problem(name, n, format_path(where), message)
                     for where, message in (refused(data) if reader.noticed else ())]
            if found:  # a repeated key, NaN, Infinity, a huge number, a lone surrogate
                raise InputError(found)
            stream = data.get("stream") if isinstance(data, dict) else None
            model = StreamHeader if n == 1 else StreamTrailer if stream == STREAM_END else CaseEntry
            if n == 1:
                if stream != STREAM_HEADER or "schema_version" not in data:
                    raise RunLogError(f"{name}: not a streamed citeaudit run log (no header line)")
                version = _schema_version(data["schema_version"], name)
                if version < 4:
                    raise RunLogError(f"{name}: a streamed run log has schema_version 4 or later, not {version}")
            try:
                item = model.model_validate(data)
            except ValidationError as err:
                raise InputError(validation_problems(err, name, (), lambda loc=(), n=n: n)) from None
            if isinstance(item, StreamHeader):
                header, counts = item, SummaryCounts(item.settings.to_settings())
            elif isinstance(item, CaseEntry):
                counts.add_records(item.result, item.answers)
                seen += 1
            if isinstance(item, StreamTrailer):
                ended = True
                item._summed = Summary.model_validate(counts.to_json(header.signature.render))
                notes = [CHECKSUM_WRONG] if item.checksum != digest.hexdigest() else []
                if (item.cases, item.summary) != (seen, item._summed):
                    notes.append(TRAILER_WRONG)
                item._edit_note = "; ".join(notes) or None
            else:
                digest.update(raw)
            yield item
    if not ended:
        raise RunLogError(f"{name}: the run log ends before its trailer (the run was interrupted, or the file "
                          "was cut): score its cases again")


def _read_stream(path: str | Path) -> RunLog:
    entries = stream_entries(path)
    header = next(entries)
    cases: list[CaseEntry] = []
    trailer = None
    for item in entries:
        if isinstance(item, CaseEntry):
            cases.append(item)
        else:
            trailer = item
    settings = header.settings
    log = RunLog(
        schema_version=SCHEMA_VERSION, citeaudit_version=header.citeaudit_version, created=header.created,
        judge=header.judge, judge_spec=header.judge_spec, signature=header.signature, settings=settings,
        inputs=header.inputs,
        passages=[p for c in cases for p in c.passages], cases=[c.case for c in cases],
        judgments=[j for c in cases for j in c.judgments],
        results=Results(citeaudit_version=header.citeaudit_version, judge=header.judge,
                        settings=ResultSettings(ks=settings.ks, no_citation_precision=settings.no_citation_precision),
                        cases=[c.result for c in cases], answers=[a for c in cases for a in c.answers],
                        summary=trailer.summed),
        diagnosis={k: v for c in cases for k, v in c.diagnosis.items()},
        checksum=trailer.checksum,
    )
    log._edit_note = trailer.edit_note
    return log
