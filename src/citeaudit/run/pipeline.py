"""One run pipeline: cases in, scored cases out, one chunk at a time; every output is written from it.

A run reads its input twice. The first pass checks every case (every problem located exactly as
`load_cases` locates it, all reported before anything is judged or written), notes the curated judge's
labels on disk, and learns what the signature needs (was any answer parsed?). The second pass judges
and scores a chunk of cases at a time and hands each scored case to the outputs as soon as it is known
(`run/outputs.py`: JSON lines, a streamed or one-document run log, the JSON results; `report/terminal.py`: the terminal
report). Memory holds one chunk and its judgments (the memo is emptied at each chunk), one id per case
(to find an id used twice) and the summary, kept as counts. Loading everything is collecting the
scored cases; nothing else grows with the input but what an output itself must keep.

`score`, `prepare` and `rescore` run through `Run`; `verify` and the desk score one case at a time with
`case_report`, the same step.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from citeaudit.run.diagnose import diagnose
from citeaudit.errors import DestinationError
from citeaudit.iteration import chunks
from citeaudit.judges import JudgeSpec, Judgments, Request, judgment_source, parse_judge
from citeaudit.judges.curated_stream import LabelTable, StreamedCuratedJudge
from citeaudit.files.destinations import put_in_place, temporary_for_stream
from citeaudit.files.loading import each_case, each_checked_case
from citeaudit.metrics import Settings, plan_requests
from citeaudit.metrics.ratio import Ratio
from citeaudit.metrics.scoring import (AnswerResult, FigureSums, Parsing, Report, add_ratios, cited_by_of,
                                       joined_readings, label_totals, retrieval_ratios, score_answer)
from citeaudit.records import Judgment
from citeaudit.run.results import AnswerRecord, CaseRecord, answer_json
from citeaudit.parse.resolve import Reading, ResolvedCase

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

    def add(self, scored: ScoredCase) -> None:
        self._add(scored.retrieval, ((result.system, ratios, result.label_counts())
                                     for result, ratios in zip(scored.results, scored.ratios)))

    def add_records(self, case: CaseRecord, answers: Iterable[AnswerRecord]) -> None:
        """A case as a run log keeps it (its figures' counts), summed as `add` sums it when scored."""
        self._add({name: r.ratio() for name, r in case.retrieval.items()},
                  ((answer.system, {name: r.ratio() for name, r in answer.metrics.items()}, answer.labels)
                   for answer in answers))

    def _add(self, retrieval: dict[str, Ratio], answers: Iterable[tuple[str, dict[str, Ratio], Any]]) -> None:
        """A case's retrieval figures, and each answer's (system, figures, label counts)."""
        add_ratios(self.retrieval, retrieval)
        for system, ratios, labels in answers:
            self.all.add(ratios)
            self.systems.setdefault(system, FigureSums(self.settings)).add(ratios)
            self.labels.update(labels)

    def to_json(self, signature: Callable[[str], str]) -> dict[str, Any]:
        """The `summary` of the results, as `report.results.to_json` writes it."""
        def shown(ratios: dict[str, Ratio]) -> dict[str, Any]:
            return {name: {**r.to_dict(), "signature": signature(name)} for name, r in ratios.items()}

        return {"all": shown(self.all.ratios()),
                "by_system": {s: shown(f.ratios()) for s, f in self.systems.items()},
                "labels": label_totals(self.labels), "retrieval": shown(self.retrieval)}


# --- the input --------------------------------------------------------------------------------------


@dataclass
class Checked:
    """What the first pass learned about the input."""

    cases: int = 0
    answers: int = 0
    parsed: bool = False
    cited_by: set[str] = field(default_factory=set)  # the readings that gave answers their citations
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
            if rc.cited_by:
                checked.cited_by.add(rc.cited_by)
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


# --- one case ---------------------------------------------------------------------------------------


class _CaseJudgments:
    """The judgment source one case is scored with: serves from the run's source and remembers, in the
    order first asked, every pair this case asked for (the case's judgments in a log)."""

    def __init__(self, source: Judgments):
        self.source = source
        self.served: dict[Request, Judgment] = {}

    @property
    def signature(self) -> str:
        return self.source.signature

    def get(self, text, passages):
        judgment = self.source.get(text, passages)
        self.served.setdefault(Request.of(text, passages), judgment)
        return judgment


@dataclass
class ScoredCase:
    """One case as a run scored it: its answers' results and figures, its retrieval figures and the
    judgments it asked for; with the records every output writes of it, made once, when first asked."""

    rc: ResolvedCase
    results: list[AnswerResult]
    ratios: list[dict[str, Ratio]]  # each answer's figures
    retrieval: dict[str, Ratio]
    asked: dict[Request, Judgment]  # in the order first asked
    report: Report  # answers signature questions for the records

    @cached_property
    def case_record(self) -> dict[str, Any]:
        rc = self.rc
        return {"id": rc.id, "question": rc.case.question, "origin": rc.origin,
                "retrieval": {n: {**r.to_dict(), "signature": self.report.signature(n)}
                              for n, r in self.retrieval.items()}}

    @cached_property
    def answer_records(self) -> list[dict[str, Any]]:
        return [answer_json(self.report, r, ratios) for r, ratios in zip(self.results, self.ratios)]

    @cached_property
    def case_model(self) -> CaseRecord:
        """The case's record as the results hold it (validated once, whichever outputs ask)."""
        return CaseRecord.model_validate(self.case_record)

    @cached_property
    def answer_models(self) -> list[AnswerRecord]:
        return [AnswerRecord.model_validate(r) for r in self.answer_records]

    @cached_property
    def passage_records(self) -> list[dict[str, Any]]:
        return [{"case": self.rc.id, **p.identity()} for p in self.rc.passages.values()]

    @cached_property
    def diagnosis(self) -> dict[str, list[dict[str, Any]]]:
        return {f"{r.case_id}/{r.answer_id}": [f.to_dict() for f in diagnose(self.rc, r)] for r in self.results}


def score_case(rc: ResolvedCase, judgments, settings: Settings, report: Report, note_asked: bool = True) -> ScoredCase:
    """Score every answer of one case: the step every run repeats. With `note_asked`, the pairs it asked
    for are noted (a run log keeps them; noting costs a lookup per pair, so a run without a log skips it)."""
    asked = _CaseJudgments(judgments) if note_asked else None
    results = [score_answer(rc, a, asked or judgments, settings) for a in rc.case.answers]
    return ScoredCase(rc, results, [r.ratios() for r in results], retrieval_ratios(rc, settings),
                      asked.served if asked else {}, report)


def case_report(rc: ResolvedCase, judgments, settings: Settings) -> Report:
    """One case scored by the pipeline's step, as a report of its own: `verify` and the desk score one
    case at a time (the same figures `score_cases` gives)."""
    report = Report([rc], [], {}, judgments.signature, settings, Parsing.of([rc], settings), cited_by_of([rc]))
    scored = score_case(rc, judgments, settings, report, note_asked=False)
    report.answers.extend(scored.results)
    report.retrieval[rc.id] = scored.retrieval
    return report


# --- the run ----------------------------------------------------------------------------------------


class Output:
    """Where a run's scored cases go (run/outputs.py, report/terminal.py): told when the run starts, of
    each case as it is scored, of each chunk's judgments once the chunk is done, and of the run when it
    ends; `abort` removes what it began. Each method does nothing unless an output needs it. An output
    whose `keeps_judgments` is true (a run log) is given each case's judgments in `asked`."""

    keeps_judgments = False

    def start(self, run: Run) -> None:
        pass

    def case(self, scored: ScoredCase) -> None:
        pass

    def chunk_done(self, recorded: list[tuple[Request, Judgment]]) -> None:
        pass

    def finish(self, run: Run) -> None:
        pass

    def abort(self) -> None:
        pass


class Run:
    """A scoring run: its cases, settings, judgment source and summary. `write(outputs)` runs it,
    handing each scored case to every output. Built by `Run.judged` (a judge spec) or `Run.replayed` (a
    judgment source already made, such as a run log's recorded judgments)."""

    def __init__(self, cases: Cases, settings: Settings, reading: Reading | None, folder: str,
                 checked: Checked, judgments: Judgments, parsing: Parsing | None,
                 inputs: Sequence[str] = (), reader: str = "citeaudit", cited_by: str | None = None):
        self.cases, self.settings, self.reading = cases, settings, reading
        self.folder, self.checked, self.judgments = folder, checked, judgments
        self.inputs, self.reader = list(inputs), reader
        # answers signature questions; its case and answer lists stay empty
        self.report = Report([], [], {}, judgments.signature, settings, parsing, cited_by)
        self.summary = SummaryCounts(settings)
        self.scored_cases = self.scored_answers = 0
        self.note_asked = True  # whether each case's judgments are noted (`write` asks its outputs)

    @property
    def spec(self) -> JudgeSpec | None:
        return self.judgments.spec

    @classmethod
    def judged(cls, cases: Cases, settings: Settings, reading: Reading, judge: str | JudgeSpec = "curated",
               store: str | None = None, replay: bool = False, inputs: Sequence[str] = (),
               reader: str = "citeaudit", each: Callable[[ResolvedCase], None] | None = None) -> Run:
        """Check the input (the first pass; `each` is told of every case), then build the judgment source.
        Use as a context manager: the first pass's temporary files go when the run ends."""
        spec = parse_judge(judge)
        folder = tempfile.mkdtemp(prefix="citeaudit-")
        try:
            checked = check_input(cases, folder, spec.labels_only, each)
            check_splitter(reading)  # every statement is split by now: nothing is judged for a splitter that failed
            judgments = judgment_source(spec, cases, store=store, replay=replay, conventions=reading.conventions,
                                        labels=checked.labels)
        except BaseException:
            _remove(folder)
            raise
        return cls(cases, settings, reading, folder, checked, judgments, _parsing(checked.parsed, settings, reading),
                   inputs, reader, joined_readings(checked.cited_by))

    @classmethod
    def replayed(cls, cases: Sequence[ResolvedCase], settings: Settings, judgments: Judgments,
                 parsing: Parsing | None) -> Run:
        """A run over cases already read and checked (a run log's), judged by `judgments`."""
        checked = Checked(len(cases), sum(len(rc.case.answers) for rc in cases), parsing is not None)
        return cls(lambda: cases, settings, None, "", checked, judgments, parsing, cited_by=cited_by_of(cases))

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc) -> None:
        if self.checked.labels is not None:
            self.checked.labels.close()
        if self.folder:
            _remove(self.folder)

    def _chunk(self, chunk: list[ResolvedCase], fill: bool | None = None, after: Callable[[list], None] | None = None,
               progress: Callable[[int], None] | None = None) -> Iterator[ScoredCase]:
        """Score one chunk. `fill`: judge every pair its metrics may need up front, in batches (by default
        when the judge works in batches); `after(recorded)` is told of the chunk's judgments."""
        judgments = self.judgments
        judgments.forget()  # the memo holds one chunk's judgments: memory stays flat
        if judgments.batched if fill is None else fill:
            judgments.fill(plan_requests(chunk, self.settings), progress=progress)
        judge = judgments.judge
        for rc in chunk:
            if isinstance(judge, StreamedCuratedJudge):
                judge.for_case(rc)
            scored = score_case(rc, judgments, self.settings, self.report, self.note_asked)
            self.summary.add(scored)
            self.scored_cases += 1
            self.scored_answers += len(scored.results)
            yield scored
        if after is not None:
            after(judgments.recorded())

    def write(self, outputs: Sequence[Output], progress: Callable[[int], None] | None = None) -> None:
        """Run, handing every scored case to each output; on any failure every output is aborted (nothing
        half written is left)."""
        self.note_asked = any(output.keeps_judgments for output in outputs)
        try:
            for output in outputs:
                output.start(self)
            def chunk_done(recorded: list[tuple[Request, Judgment]]) -> None:
                for output in outputs:
                    output.chunk_done(recorded)

            for chunk in chunks(self.cases(), CHUNK):
                for scored in self._chunk(chunk, after=chunk_done):
                    for output in outputs:
                        output.case(scored)
                    if progress:
                        progress(len(scored.results))
        except BaseException:
            for output in outputs:
                output.abort()
            raise
        # every output is finished even when one has to be kept elsewhere: finished work is never lost
        kept_elsewhere: list[DestinationError] = []
        for n, output in enumerate(outputs):
            try:
                output.finish(self)
            except DestinationError as err:
                kept_elsewhere.append(err)
            except BaseException:
                for rest in outputs[n + 1:]:
                    rest.abort()
                raise
        if kept_elsewhere:
            raise kept_elsewhere[0]

    def summary_json(self) -> dict[str, Any]:
        return self.summary.to_json(self.report.signature)


def check_splitter(reading: Reading) -> None:
    """Once the input is read: a JudgeError when a language-model claim splitter reached its model for
    none of the statements (lm_decompose.OpenAIDecomposer.check_reached); other splitters always split."""
    check = getattr(reading.decomposer, "check_reached", None)
    if check is not None:
        check()


def _parsing(parsed: bool, settings: Settings, reading: Reading) -> Parsing | None:
    """Who parsed raw answers, as `Parsing.of` finds it, from the first pass's answer to "was any parsed?"."""

    class _Parsed:
        parsed = True

    return Parsing.of([_Parsed()] if parsed else [], settings, reading)


def _remove(folder: str) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


# --- prepare -----------------------------------------------------------------------------------------


@dataclass
class Prepared:
    listed: int
    asked: int
    stored: int


def prepare(cases: Cases, settings: Settings, reading: Reading, judge: str | JudgeSpec, store: str,
            list_path: str | None = None, fill_all: bool = False,
            fill: Callable[[Run, list[Request]], None] | None = None,
            progress: Callable[[int], None] | None = None) -> Prepared:
    """`citeaudit prepare`: every case is checked first (nothing is judged for a bad input) and the --list
    file is in place before any judging; then `fill(run, requests)` (another engine, given every listed
    pair) or, with `fill_all`, the judge itself judges every listed pair up front, chunk by chunk, and
    scoring reaches exactly the pairs the metrics need. Each judgment is committed to the store as it is
    made, so an interrupted run resumes."""
    listing = _Listing(list_path, settings, keep_requests=fill is not None)
    try:
        run = Run.judged(cases, settings, reading, judge, store, each=listing.add)
        listing.finish()
    finally:
        listing.abort()  # does nothing once finished
    with run:
        run.note_asked = False  # nothing keeps each case's judgments: the store has them
        if fill is not None:
            fill(run, listing.requests)
        for chunk in chunks(cases(), CHUNK):
            for _ in run._chunk(chunk, fill=fill_all, progress=progress):  # reaches exactly the pairs needed
                pass
    return Prepared(listing.count, run.judgments.asked, len(run.judgments.store))


class _Listing:
    """Counts the distinct pairs the metrics may need, as cases are read, and writes them to the --list
    file when one is given (a temporary name beside it until `finish`). Each pair once, in the order first
    met: a 16-byte fingerprint per distinct pair is kept to know."""

    def __init__(self, target: str | None, settings: Settings, keep_requests: bool = False):
        self.settings = settings
        self.target = Path(target) if target else None
        self._fh = None
        if self.target is not None:
            fd, self._temporary = temporary_for_stream(self.target, "--list")
            self._fh = open(fd, "w+", encoding="utf-8")  # read back if the folder goes away (put_in_place)
        self._seen: set[bytes] = set()
        self.count = 0
        self.requests: list[Request] = []  # kept only for an engine that is given them all at once (Ray)
        self.keep_requests = keep_requests

    def add(self, rc: ResolvedCase) -> None:
        for r in plan_requests([rc], self.settings):
            line = request_line(r)
            key = hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if key not in self._seen:
                self._seen.add(key)
                self.count += 1
                if self.keep_requests:
                    self.requests.append(r)
                if self._fh is not None:
                    self._fh.write(line + "\n")

    def finish(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            put_in_place(fh, self._temporary, self.target, "--list")  # kept elsewhere, if need be
        self._seen = set()

    def abort(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            Path(self._temporary).unlink(missing_ok=True)


def request_line(r: Request) -> str:
    """A pair as the --list file holds it (and as outputs fingerprint it): its text and passage identities."""
    return json.dumps({"text": r.text, "passages": [p.identity() for p in r.passages]}, ensure_ascii=False)
