"""Scoring and preparing at scale: cases read one at a time, output written as it is made.

A streamed run reads its input twice. The first pass checks every case (every problem located exactly
as `load_cases` locates it, all reported before anything is judged or written), notes the curated
judge's labels on disk, and learns what the signature needs (was any answer parsed?). The second pass
judges and scores a chunk of cases at a time and writes each case's figures as soon as they are known.
Memory holds one chunk and its judgments (the memo is emptied at each chunk), one id per case (to find
an id used twice) and the summary, kept as counts: a sum of numerators and denominators per measure,
and a sum and a count of per-answer values for ALCE's means. Nothing grows with the input but the ids.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ._version import __version__
from .diagnose import diagnose
from .errors import DestinationError
from .iteration import chunks
from .judges import JudgeSpec, Judgments, Request, judgment_source, parse_judge
from .judges.curated_stream import LabelTable, StreamedCuratedJudge
from .loading import each_case, each_checked_case
from .metrics import Settings, plan_requests
from .metrics.ratio import Ratio
from .metrics.scoring import (AnswerResult, FigureSums, Parsing, Report, add_ratios, label_totals, retrieval_ratios,
                              score_answer)
from .report.results import answer_json
from .resolve import Reading, ResolvedCase
from .runlog import StreamWriter, run_header

CHUNK = 256  # cases judged and scored together: a batch judge fills each chunk's pairs at once


# --- the summary, from counts ------------------------------------------------------------------------


@dataclass
class SummaryCounts:
    """A run's summary (all answers, each system, label counts, retrieval), from counts."""

    settings: Settings
    all: FigureSums = None
    systems: dict[str, FigureSums] = field(default_factory=dict)
    labels: Counter = field(default_factory=Counter)
    retrieval: dict[str, Ratio] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.all = FigureSums(self.settings)

    def add_answer(self, result: AnswerResult, ratios: dict[str, Ratio]) -> None:
        self.all.add(ratios)
        self.systems.setdefault(result.system, FigureSums(self.settings)).add(ratios)
        self.labels.update(result.label_counts())

    def add_retrieval(self, ratios: dict[str, Ratio]) -> None:
        add_ratios(self.retrieval, ratios)

    def label_counts(self) -> dict[str, int]:
        return label_totals(self.labels)

    def to_json(self, signature: Callable[[str], str]) -> dict[str, Any]:
        """The `summary` of the results, as `report.results.to_json` writes it."""
        def shown(ratios: dict[str, Ratio]) -> dict[str, Any]:
            return {name: {**r.to_dict(), "signature": signature(name)} for name, r in ratios.items()}

        return {"all": shown(self.all.ratios()),
                "by_system": {s: shown(f.ratios()) for s, f in self.systems.items()},
                "labels": self.label_counts(), "retrieval": shown(self.retrieval)}


# --- the two passes ----------------------------------------------------------------------------------


@dataclass
class Checked:
    """What the first pass learned about the input."""

    cases: int = 0
    answers: int = 0
    parsed: bool = False
    labels: LabelTable | None = None


Cases = Callable[[], Iterable[ResolvedCase]]  # reads the input's cases from the start, each time it is called


class _CaseFiles:
    """The cases of citeaudit case files, read one at a time each time it is called: carefully (every
    problem located, see loading.each_case) until one read has gone through without a problem, then
    faster (loading.each_checked_case), since what the careful read looks for is known not to be there."""

    def __init__(self, paths: Sequence[str], reading: Reading):
        self.paths, self.reading = list(paths), reading
        self.checked = False

    def __call__(self) -> Iterator[ResolvedCase]:
        if self.checked:
            yield from each_checked_case(self.paths, self.reading)
            return
        yield from each_case(self.paths, self.reading)
        self.checked = True  # reached only when every case was read and none had a problem


def read_cases(paths: Sequence[str], reading: Reading) -> Cases:
    """The cases of citeaudit case files, read one at a time each time (see loading.each_case)."""
    return _CaseFiles(paths, reading)


def check_input(cases: Cases, folder: str, curated: bool,
                each: Callable[[ResolvedCase], None] | None = None) -> Checked:
    """First pass: every case checked (InputError with every problem), the curated labels noted on disk in
    `folder`, and `each(case)` told of every valid case (what it makes is not to be used if this raises)."""
    checked = Checked(labels=LabelTable(folder) if curated else None)
    try:
        for rc in cases():
            checked.cases += 1
            checked.answers += len(rc.case.answers)
            checked.parsed = checked.parsed or rc.parsed
            if checked.labels is not None:
                checked.labels.add(rc)
            if each is not None:
                each(rc)
        if checked.labels is not None:
            checked.labels.finish()
    except BaseException:
        if checked.labels is not None:
            checked.labels.close()
        raise
    return checked


class _CaseJudgments:
    """The judgment source one case is scored with: serves from the run's source and remembers, in the
    order first asked, every pair this case asked for (the case's judgments in the log)."""

    def __init__(self, source: Judgments):
        self.source = source
        self.served: dict[Request, Any] = {}

    @property
    def signature(self) -> str:
        return self.source.signature

    def get(self, text, passages):
        judgment = self.source.get(text, passages)
        self.served.setdefault(Request.of(text, passages), judgment)
        return judgment


# --- score -------------------------------------------------------------------------------------------


@dataclass
class StreamedRun:
    """A streamed scoring run's outcome: its summary and what the terminal shows."""

    summary: dict[str, Ratio]
    cases: int
    answers: int
    signature: Any


def score_stream(cases: Cases, settings: Settings, reading: Reading, judge: str | JudgeSpec = "curated",
                 store: str | None = None, replay: bool = False, log_path: str | None = None,
                 lines: IO[str] | None = None, inputs: Sequence[str] = (), reader: str = "citeaudit",
                 progress: Callable[[int], None] | None = None,
                 on_checked: Callable[[Checked], None] | None = None) -> StreamedRun:
    """Score `cases`, one chunk at a time: each case's results are written as a line to
    `lines` (results as JSON lines) and to the streamed run log at `log_path`, as they are made.
    `progress(n)` is told of answers scored; `on_checked` of what the first pass found."""
    spec = parse_judge(judge)
    with tempfile.TemporaryDirectory(prefix="citeaudit-") as folder:
        checked = check_input(cases, folder, spec.labels_only)
        try:
            if on_checked:
                on_checked(checked)
            judgments = judgment_source(spec, cases, store=store, replay=replay, conventions=reading.conventions,
                                        labels=checked.labels)
            parsing = _parsing(checked.parsed, settings, reading)
            # the report object answers results' questions (signatures); its case and answer lists stay empty
            report = Report([], [], {}, judgments.signature, settings, parsing)
            writer = StreamWriter(log_path) if log_path else None
            try:
                result = _score_cases(cases, settings, judgments, report, writer, lines, inputs, reader,
                                      progress)
            except BaseException:
                if writer:
                    writer.abort()
                raise
        finally:
            if checked.labels is not None:
                checked.labels.close()
    return result


def _parsing(parsed: bool, settings: Settings, reading: Reading) -> Parsing | None:
    """Who parsed raw answers, as `Parsing.of` finds it, from the first pass's answer to "was any parsed?"."""

    class _Parsed:
        parsed = True

    return Parsing.of([_Parsed()] if parsed else [], settings, reading)


# one encoder for every line: json.dumps with options would build a new one per call
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _score_cases(cases, settings, judgments, report, writer, lines, inputs, reader, progress) -> StreamedRun:
    summary = SummaryCounts(settings)
    judge = judgments.judge
    if writer:
        writer.start(run_header(report, judgments.spec, inputs, reader))
    scored = answers = 0
    for chunk in chunks(cases(), CHUNK):
        judgments.forget()  # the memo holds one chunk's judgments: memory stays flat
        if judgments.batched:  # model and remote judges work in batches: judge the chunk's pairs up front
            judgments.fill(plan_requests(chunk, settings))
        for rc in chunk:
            if isinstance(judge, StreamedCuratedJudge):
                judge.for_case(rc)
            asked = _CaseJudgments(judgments) if writer else judgments  # the log keeps each case's judgments
            results = [score_answer(rc, a, asked, settings) for a in rc.case.answers]
            retrieval = retrieval_ratios(rc, settings)
            summary.add_retrieval(retrieval)
            case_record = {"id": rc.id, "question": rc.case.question, "origin": rc.origin,
                           "retrieval": {n: {**r.to_dict(), "signature": report.signature(n)}
                                         for n, r in retrieval.items()}}
            answer_records = []
            for r in results:
                ratios = r.ratios()
                answer_records.append(answer_json(report, r, ratios))
                summary.add_answer(r, ratios)
            if lines is not None:
                lines.write(_dumps({"case": case_record, "answers": answer_records}) + "\n")
            if writer:
                writer.case({
                    "case": rc.case.model_dump(mode="json"),
                    "passages": [{"case": rc.id, **p.identity()} for p in rc.passages.values()],
                    "judgments": [{"text": q.text, "passages": [p.identity() for p in q.passages],
                                   "judgment": j.model_dump(mode="json", exclude_none=True)}
                                  for q, j in asked.served.items()],
                    "result": case_record,
                    "answers": answer_records,
                    "diagnosis": {f"{r.case_id}/{r.answer_id}": [f.to_dict() for f in diagnose(rc, r)]
                                  for r in results},
                })
            scored += 1
            answers += len(results)
            if progress:
                progress(len(results))
    summary_json = summary.to_json(report.signature)
    if lines is not None:
        lines.write(_dumps({"summary": summary_json, "citeaudit_version": __version__,
                            "judge": report.judge_signature,
                            "settings": {"k": list(settings.ks),
                                         "no_citation_precision": settings.no_citation_precision}}) + "\n")
    if writer:
        writer.finish(summary_json)
    return StreamedRun(summary.all.ratios(), scored, answers, report.run_signature)


# --- prepare -----------------------------------------------------------------------------------------


@dataclass
class Prepared:
    listed: int
    asked: int
    stored: int


def prepare_stream(cases: Cases, settings: Settings, reading: Reading, judge: str | JudgeSpec, store: str,
                   list_path: str | None = None, fill_all: bool = False,
                   progress: Callable[[int], None] | None = None) -> Prepared:
    """`citeaudit prepare` one chunk of cases at a time. Every case is checked first (nothing is judged
    for a bad input) and the --list file is in place before any judging, as on the loaded path; each
    judgment is committed to the store as it is made, so an interrupted run resumes."""
    from .metrics import score_cases

    spec = parse_judge(judge)
    listing = _Listing(list_path, settings)
    with tempfile.TemporaryDirectory(prefix="citeaudit-") as folder:
        try:
            checked = check_input(cases, folder, spec.labels_only, each=listing.add)
            listing.finish()
        finally:
            listing.abort()  # does nothing once finished
        try:
            judgments = judgment_source(spec, cases, store=store, conventions=reading.conventions,
                                        labels=checked.labels)
            judge = judgments.judge
            for chunk in chunks(cases(), CHUNK):
                judgments.forget()
                if fill_all:
                    judgments.fill(plan_requests(chunk, settings), progress=progress)
                for rc in chunk:
                    if isinstance(judge, StreamedCuratedJudge):
                        judge.for_case(rc)
                    score_cases([rc], judgments, settings)  # reaches exactly the pairs the metrics need
        finally:
            if checked.labels is not None:
                checked.labels.close()
    return Prepared(listing.count, judgments.asked, len(judgments.store))


class _Listing:
    """Counts the distinct pairs the metrics may need, as cases are read, and writes them to the --list
    file when one is given (a temporary name beside it until `finish`). Each pair once, in the order first
    met: a 16-byte fingerprint per distinct pair is kept to know."""

    def __init__(self, target: str | None, settings: Settings):
        self.settings = settings
        self.target = Path(target) if target else None
        self._fh = None
        if self.target is not None:
            fd, self._temporary = tempfile.mkstemp(dir=self.target.parent if str(self.target.parent) else ".",
                                                   prefix=f".{self.target.name}.", suffix=".tmp")
            self._fh = open(fd, "w", encoding="utf-8")
        self._seen: set[bytes] = set()
        self.count = 0

    def add(self, rc: ResolvedCase) -> None:
        for r in plan_requests([rc], self.settings):
            line = json.dumps({"text": r.text, "passages": [p.identity() for p in r.passages]}, ensure_ascii=False)
            key = hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if key not in self._seen:
                self._seen.add(key)
                self.count += 1
                if self._fh is not None:
                    self._fh.write(line + "\n")

    def finish(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            try:
                os.replace(self._temporary, self.target)
            except OSError as err:
                raise DestinationError(f"could not write --list {self.target} ({err.strerror or err})") from None
        self._seen = set()

    def abort(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            Path(self._temporary).unlink(missing_ok=True)
