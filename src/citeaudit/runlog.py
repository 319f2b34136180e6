"""The versioned run log: the one source of truth for reports, comparisons, reviews and the desk.

It keeps the inputs' hashes, every case as scored (sources with ids, versions and texts), the judge
signature, every judgment with the passage identities (document, version, span, content hash) it
rests on, every metric and the diagnosis. Metrics can be recomputed from it without judging again.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ._version import __version__
from .diagnose import diagnose
from .errors import InputError, RunLogError, validation_problems
from .judges import Judgments, MemoryStore, RecordedJudge, Request
from .loading import read_json_file
from .metrics import Report, Settings, score_cases
from .records import Case, Judgment, SourcePassage, file_sha256
from .report.render import to_json
from .resolve import ResolvedCase, resolve

SCHEMA_VERSION = 1
SUPPORTED_SCHEMAS = (1,)


class InputFile(BaseModel):
    path: str
    sha256: str


class PassageRecord(BaseModel):
    case: str
    id: str
    doc: str
    version: str | None
    span: list[int]
    sha256: str


class JudgmentRecord(BaseModel):
    text: str
    passages: list[dict[str, Any]]
    judgment: Judgment


class RunLog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int
    citeaudit_version: str
    created: str
    judge: str
    settings: dict[str, Any]
    inputs: list[InputFile]
    passages: list[PassageRecord]
    cases: list[Case]
    judgments: list[JudgmentRecord]
    results: dict[str, Any]
    diagnosis: dict[str, list[dict[str, Any]]]


def diagnosis_of(report: Report) -> dict[str, list[dict[str, Any]]]:
    by_id = {rc.id: rc for rc in report.cases}
    return {f"{r.case_id}/{r.answer_id}": [f.to_dict() for f in diagnose(by_id[r.case_id], r)]
            for r in report.answers}


def build_runlog(report: Report, judgments: Judgments, inputs: list[str | Path] = ()) -> RunLog:
    return RunLog(
        schema_version=SCHEMA_VERSION,
        citeaudit_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        judge=report.judge_signature,
        settings={"ks": list(report.settings.ks), "no_citation_precision": report.settings.no_citation_precision},
        inputs=[InputFile(path=str(p), sha256=file_sha256(p)) for p in inputs],
        passages=[PassageRecord(case=rc.id, **_identity(p)) for rc in report.cases for p in rc.passages.values()],
        cases=[rc.case for rc in report.cases],
        judgments=[JudgmentRecord(text=r.text, passages=[p.identity() for p in r.passages], judgment=j)
                   for r, j in judgments.recorded()],
        results=to_json(report),
        diagnosis=diagnosis_of(report),
    )


def _identity(p: SourcePassage) -> dict[str, Any]:
    ident = p.identity()
    return {"id": ident["id"], "doc": ident["doc"], "version": ident["version"], "span": ident["span"],
            "sha256": ident["sha256"]}


def write_runlog(path: str | Path, log: RunLog) -> None:
    Path(path).write_text(log.model_dump_json(indent=1), encoding="utf-8")


def read_runlog(path: str | Path) -> RunLog:
    name = str(path)
    data = read_json_file(path)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version is None:
        raise RunLogError(f"{name}: not a citeaudit run log (no schema_version)")
    if version not in SUPPORTED_SCHEMAS:
        newest = max(SUPPORTED_SCHEMAS)
        hint = "upgrade citeaudit" if version > newest else f"rescore its cases with citeaudit {__version__}"
        raise RunLogError(f"{name}: run log schema_version {version} is not supported; this citeaudit "
                          f"{__version__} reads schema_version {', '.join(map(str, SUPPORTED_SCHEMAS))}: {hint}")
    try:
        return RunLog.model_validate(data)
    except ValidationError as err:
        raise InputError(validation_problems(err, name)) from None


def resolved_cases(log: RunLog) -> list[ResolvedCase]:
    out = []
    for case in log.cases:
        rc, problems = resolve(case)
        if problems:  # a log written by citeaudit resolves; anything else was edited by hand
            raise RunLogError(f"case {case.id} in the run log does not resolve: {problems[0][1]}")
        out.append(rc)
    return out


def replay_judgments(log: RunLog, cases: list[ResolvedCase]) -> Judgments:
    """A judgment source that serves only the judgments kept in the log."""
    store = MemoryStore("<run log>")
    passages = {(rc.id, pid): p for rc in cases for pid, p in rc.passages.items()}
    by_identity = {json.dumps(p.identity(), sort_keys=True): p for p in passages.values()}
    for record in log.judgments:
        found = [by_identity.get(json.dumps(i, sort_keys=True)) for i in record.passages]
        if None in found:
            continue  # a passage no case holds any more cannot be asked for
        store.put(Request.of(record.text, found), record.judgment)
    return Judgments(RecordedJudge(store, log.judge), store)


def rescore(log: RunLog, settings: Settings | None = None) -> tuple[Report, Judgments]:
    """Recompute every metric from the log's judgments, without judging again."""
    cases = resolved_cases(log)
    if settings is None:
        settings = Settings(ks=tuple(log.settings["ks"]), no_citation_precision=log.settings["no_citation_precision"])
    judgments = replay_judgments(log, cases)
    return score_cases(cases, judgments, settings), judgments
