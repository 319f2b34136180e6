"""Source-change review: which answers and claims rest on passages that changed since a run.

A run log keeps every cited passage's document id, version, span and content hash. Given the current
sources, each cited passage is `unchanged`, `changed` (new text or new version), `moved` (same text,
other span) or `vanished` (no passage with that id any more).

The current sources are one of two things (docs/runs.md):
- cases (a case file, or another tool's file read with --from): each case's complete current sources,
  matched to the run's case by id; a document the case no longer lists is gone. A case the file does
  not hold is not reviewed.
- an update, `{"sources": [...], "removed": [...], "cases": {CASE_ID: {"sources": [...], "removed": [...]}}}`
  (a bare list of documents is `{"sources": [...]}`): documents matched by id to the run's. A top-level
  document replaces the document of that id in every case that holds one; a case's own entry replaces,
  adds, or (`removed`) deletes documents of that case only. A document not mentioned is unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from citeaudit.errors import InputError, JudgeError, Problem, format_path, validation_problems
from citeaudit.judges import Judge, Judgments
from citeaudit.files.loading import parse_cases, read_json_file
from citeaudit.jsonio import JsonPiece, read_text
from citeaudit.jsonio import Path as JsonPath  # a place in a JSON value
from citeaudit.records import Case, Document, Judgment, SourcePassage
from citeaudit.parse.resolve import ResolvedCase, _Problems, resolve_passages
from citeaudit.run.log import RunLog, resolved_cases


@dataclass
class AffectedClaim:
    case: str
    answer: str
    ref: str  # "statement.claim"
    text: str
    citations: list[str]
    old_label: str | None
    new_label: str | None = None
    rejudge_error: str | None = None


@dataclass
class PassageChange:
    case: str
    passage: str
    status: str  # changed | moved | vanished
    detail: str
    old: SourcePassage
    new: SourcePassage | None
    claims: list[AffectedClaim] = field(default_factory=list)


class SourceChanges(BaseModel):
    """Documents that replace (or join) the run's, matched by document id, and ids of documents now gone."""

    model_config = ConfigDict(extra="forbid")
    sources: list[Document] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class SourcesUpdate(SourceChanges):
    """An update file: changes for every case that holds the document, and per case (case id -> changes)."""

    cases: dict[str, SourceChanges] = Field(default_factory=dict)


class _CaseSources(BaseModel):
    """What review reads of a case in a case file: its id and its sources (the rest may have changed too)."""

    id: str
    sources: list[Document]


# a document now, with where the sources file gives it (None: as the run holds it, or as a reader read it)
_Placed = tuple[Document, JsonPath | None]


@dataclass
class CurrentSources:
    """The current sources a run is reviewed against: complete per case, or an update (module docstring)."""

    path: str
    complete: dict[str, list[_Placed]] = field(default_factory=dict)  # case id -> all its documents now
    update: SourcesUpdate | None = None
    read: list[ResolvedCase] = field(default_factory=list)  # cases read whole, their labels for a curated judge
    line_of: Callable[[JsonPath], int] | None = None  # a path in the file -> its line (None: no lines)

    @classmethod
    def of_cases(cls, path: str, cases: list[ResolvedCase]) -> CurrentSources:
        """Cases read whole (another tool's file, read with --from): each case's complete sources."""
        return cls(str(path), {rc.id: [(d, None) for d in rc.case.sources] for rc in cases}, read=cases)

    @cached_property
    def _everywhere(self) -> dict[str, _Placed]:
        """The update's top-level documents by id (they apply to every case that holds one)."""
        return {d.id: (d, ("sources", i)) for i, d in enumerate(self.update.sources if self.update else [])}

    def documents(self, case: Case) -> list[_Placed] | None:
        """The case's documents now, or None when the sources change nothing in it."""
        if self.update is None:
            return self.complete.get(case.id)
        own = self.update.cases.get(case.id, SourceChanges())
        # the case's own entry wins over the top level
        given = self._everywhere | {d.id: (d, ("cases", case.id, "sources", i)) for i, d in enumerate(own.sources)}
        removed = {*self.update.removed, *own.removed}
        held = {d.id for d in case.sources}
        if not held & (given.keys() | removed) and not own.sources:
            return None
        kept = [given.get(d.id, (d, None)) for d in case.sources if d.id not in removed]
        added = [(d, ("cases", case.id, "sources", i)) for i, d in enumerate(own.sources) if d.id not in held]
        return kept + added

    def check(self, cases: list[Case]) -> None:
        """An update naming a case the run does not have, or removing a document no case (or not its case)
        holds, is a mistake to fix, not a change: InputError, every such problem located."""
        if self.update is None:
            return
        held = {case.id: {d.id for d in case.sources} for case in cases}
        anywhere = set().union(*held.values())
        problems = [self.located(("removed", i), f"no case of the run holds a document '{doc_id}'")
                    for i, doc_id in enumerate(self.update.removed) if doc_id not in anywhere]
        for case_id, own in self.update.cases.items():
            if case_id not in held:
                problems.append(self.located(("cases", case_id), f"the run has no case '{case_id}'"))
                continue
            problems += [self.located(("cases", case_id, "removed", i), f"case '{case_id}' of the run holds no "
                                                                          f"document '{doc_id}'")
                         for i, doc_id in enumerate(own.removed) if doc_id not in held[case_id]]
        if problems:
            raise InputError(problems)

    def unmatched(self, cases: list[Case]) -> list[str]:
        """Top-level documents of an update that no case of the run holds (left out: a whole corpus may be
        given, but so may a misspelt id)."""
        if self.update is None:
            return []
        held = {d.id for case in cases for d in case.sources}
        return [d.id for d in self.update.sources if d.id not in held]

    def labelled_cases(self) -> list[ResolvedCase]:
        """The cases of the sources file, for a curated judge's labels ([] for an update)."""
        if self.update is not None:
            return []
        return self.read or parse_cases(self.path, read_text(self.path))

    def located(self, path: JsonPath, message: str) -> Problem:
        return Problem(self.path, self.line_of(path) if self.line_of else None, format_path(path), message)


def read_current_sources(path: str | Path) -> CurrentSources:
    """The current sources in citeaudit's own form: a case file, or an update (module docstring)."""
    name = str(path)
    data = read_json_file(path)
    piece = cache(lambda: JsonPiece(read_text(name)))  # lines are looked up only for a problem
    current = CurrentSources(name, line_of=lambda where: piece().line(where))
    if _is_case_file(data):
        current.complete = _complete_sources(current, data)
        return current
    try:
        if isinstance(data, list):  # a bare list of documents: an update of every case
            current.update = SourcesUpdate(sources=_DOCUMENTS.validate_python(data))
        elif isinstance(data, dict):
            current.update = SourcesUpdate.model_validate(data)
        else:
            raise InputError([Problem(name, None, "", 'expected a case file, a list of documents, or {"sources": '
                                                      '[...], "removed": [...], "cases": {...}}')])
    except ValidationError as err:
        raise InputError(validation_problems(err, name, (), current.line_of)) from None
    problems = [current.located(where, message) for where, message in _contradictions(current.update, ())]
    for case_id, own in current.update.cases.items():
        problems += [current.located(where, message) for where, message in _contradictions(own, ("cases", case_id))]
    if problems:
        raise InputError(problems)
    return current


_DOCUMENTS = TypeAdapter(list[Document])


def _is_case_file(data: Any) -> bool:
    """One case, a list of cases, or {"cases": [...]}: what `score` reads (an update's "cases" is a mapping)."""
    first = data[0] if isinstance(data, list) and data else data
    return (isinstance(first, dict) and "question" in first) or (isinstance(data, dict)
                                                                   and isinstance(data.get("cases"), list))


def _contradictions(changes: SourceChanges, at: JsonPath) -> list[tuple[JsonPath, str]]:
    """A document given twice, or both given and removed, in one set of changes: which is meant?"""
    given = Counter(d.id for d in changes.sources)
    found = [(at + ("sources", i), f"document '{d.id}' is given twice") for i, d in enumerate(changes.sources)
             if given[d.id] > 1]
    return found + [(at + ("removed", i), f"document '{doc_id}' is both given in 'sources' and removed")
                    for i, doc_id in enumerate(changes.removed) if doc_id in given]


def _complete_sources(current: CurrentSources, data: Any) -> dict[str, list[_Placed]]:
    """Each case's id and complete sources, from a case file (one case, a list, or {"cases": [...]})."""
    if isinstance(data, dict) and "question" in data:
        records: list[tuple[JsonPath, Any]] = [((), data)]
    elif isinstance(data, dict):
        records = [(("cases", i), case) for i, case in enumerate(data["cases"])]
    else:
        records = [((i,), case) for i, case in enumerate(data)]
    complete: dict[str, list[_Placed]] = {}
    problems: list[Problem] = []
    for at, record in records:
        try:
            case = _CaseSources.model_validate(record)
        except ValidationError as err:
            problems += validation_problems(err, current.path, at, lambda loc, at=at: current.line_of(at + loc))
            continue
        complete[case.id] = [(d, at + ("sources", i)) for i, d in enumerate(case.sources)]
    if problems:
        raise InputError(problems)
    return complete


def _new_passages(rc: ResolvedCase, placed: list[_Placed], current: CurrentSources) -> dict[str, SourcePassage]:
    """The case's passages resolved in its current documents; a problem is located in the sources file
    (or, for a document kept as the run holds it, named by case and document)."""
    problems = _Problems()
    passages = resolve_passages(rc.case.model_copy(update={"sources": [d for d, _ in placed]}), problems)
    located = []
    for (_, d, *rest), message in problems.items:
        document, at = placed[d]
        if at is None:
            located.append(Problem(current.path, None, f"case '{rc.id}': document '{document.id}'", message))
        else:
            located.append(current.located(at + tuple(rest), message))
    if located:
        raise InputError(located)
    return passages


def _status(old: SourcePassage, new: SourcePassage | None) -> tuple[str, str] | None:
    if new is None:
        return "vanished", "no passage with this id in the current sources"
    if old.sha256 != new.sha256:
        return "changed", f"text changed (version {old.version} → {new.version})"
    if old.version != new.version:
        return "changed", f"same text, version {old.version} → {new.version}"
    if (old.start, old.end, old.doc_id) != (new.start, new.end, new.doc_id):
        return "moved", f"same text, now {new.doc_id} [{new.start}, {new.end}) (was {old.doc_id} [{old.start}, {old.end}))"
    return None


def _current(sources: str | Path | CurrentSources) -> CurrentSources:
    return sources if isinstance(sources, CurrentSources) else read_current_sources(sources)


def review(log: RunLog, sources: str | Path | CurrentSources) -> list[PassageChange]:
    """Every cited passage of the run that changed, moved or vanished in `sources` (a path, read with
    `read_current_sources`, or sources already read), with the claims that rest on it."""
    current = _current(sources)
    current.check(log.cases)
    labels = {(a.case, a.answer, c.statement, c.index): c.label
              for a in log.results.answers for c in a.claims}
    changes: list[PassageChange] = []
    problems: list[Problem] = []
    for rc in resolved_cases(log):
        documents = current.documents(rc.case)
        if documents is None:
            continue  # the current sources change nothing in this case
        try:
            now = _new_passages(rc, documents, current)
        except InputError as err:
            problems += err.problems  # every case's problems, reported together
            continue
        by_passage: dict[str, PassageChange] = {}
        for pid, old in rc.passages.items():
            status = _status(old, now.get(pid))
            if status:
                by_passage[pid] = PassageChange(rc.id, pid, *status, old, now.get(pid))
        for answer in rc.case.answers:
            for s, st in enumerate(answer.statements):
                for c, claim in enumerate(st.atomic_claims()):
                    cited = list(claim.citations or [])
                    for pid in cited:
                        if pid in by_passage:
                            by_passage[pid].claims.append(AffectedClaim(
                                rc.id, answer.id, f"{s + 1}.{c + 1}", claim.text, cited,
                                labels.get((rc.id, answer.id, s, c))))
        changes += [ch for ch in by_passage.values() if ch.claims]
    if problems:
        raise InputError(problems)
    return changes


def rejudge(changes: list[PassageChange], log: RunLog, sources: str | Path | CurrentSources, judge: Judge) -> None:
    """Judge again only the affected claims, against the current passages; fills `new_label`."""
    current = _current(sources)
    judgments = Judgments(judge)
    cases = {rc.id: rc for rc in resolved_cases(log)}
    passages_now: dict[str, dict[str, SourcePassage]] = {}  # per case: several of its passages may change
    for change in changes:
        if change.case not in passages_now:
            rc = cases[change.case]
            passages_now[change.case] = _new_passages(rc, current.documents(rc.case) or [], current)
        now = passages_now[change.case]
        for claim in change.claims:
            if claim.new_label is not None or claim.rejudge_error is not None:
                continue
            missing = [p for p in claim.citations if p not in now]
            if missing:
                claim.rejudge_error = f"cites vanished passage(s) {', '.join(missing)}: needs a new citation"
                continue
            try:
                verdict: Judgment = judgments.get(claim.text, [now[p] for p in claim.citations])
                claim.new_label = verdict.label
            except JudgeError as err:
                claim.rejudge_error = str(err)


def format_review(changes: list[PassageChange]) -> str:
    if not changes:
        return "No cited passage changed: nothing to review."
    out = []
    for ch in changes:
        out.append(f"[{ch.case}] passage {ch.passage} {ch.status}: {ch.detail}")
        out.append(f"  old: {ch.old.text}")
        if ch.new is not None and ch.new.text != ch.old.text:
            out.append(f"  new: {ch.new.text}")
        for cl in ch.claims:
            line = f"  - answer {cl.answer} claim {cl.ref}: {cl.text} [{', '.join(cl.citations)}] was {cl.old_label}"
            if cl.new_label:
                line += f", now {cl.new_label}"
            if cl.rejudge_error:
                line += f" (not re-judged: {cl.rejudge_error})"
            out.append(line)
    claims = sum(len(ch.claims) for ch in changes)
    out.append(f"\n{claims} claim(s) to review, resting on {len(changes)} changed passage(s).")
    return "\n".join(out)
