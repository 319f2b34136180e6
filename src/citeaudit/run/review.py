"""Source-change review: which answers and claims rest on passages that changed since a run.

A run log keeps every cited passage's document id, version, span and content hash. Given the current
sources, each cited passage is `unchanged`, `changed` (new text or new version), `moved` (same text,
other span) or `vanished` (no passage with that id any more).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from citeaudit.errors import InputError, JudgeError, Problem
from citeaudit.judges import Judge, Judgments
from citeaudit.files.loading import read_json_file
from citeaudit.records import Document, Judgment, SourcePassage
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


def load_new_sources(path: str | Path) -> dict[str | None, list[Document]]:
    """Current sources: a case file (sources per case id) or a document list / {"sources": [...]} for all."""
    name = str(path)
    data = read_json_file(path)
    docs = TypeAdapter(list[Document])
    try:
        if isinstance(data, list) and data and "question" not in data[0]:
            return {None: docs.validate_python(data)}
        if isinstance(data, dict) and "sources" in data and "question" not in data:
            return {None: docs.validate_python(data["sources"])}
        cases = data if isinstance(data, list) else data.get("cases", [data])
        return {c["id"]: docs.validate_python(c["sources"]) for c in cases}
    except (ValidationError, KeyError, TypeError) as err:
        raise InputError([Problem(name, None, "sources", f"not a list of documents or cases: {err}")]) from None


def _new_passages(rc: ResolvedCase, documents: list[Document], where: str) -> dict[str, SourcePassage]:
    problems = _Problems()
    passages = resolve_passages(rc.case.model_copy(update={"sources": documents}), problems)
    if problems.items:
        raise InputError([Problem(where, None, ".".join(map(str, p)), m) for p, m in problems.items])
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


def review(log: RunLog, sources_path: str | Path) -> list[PassageChange]:
    new_sources = load_new_sources(sources_path)
    labels = {(a.case, a.answer, c.statement, c.index): c.label
              for a in log.results.answers for c in a.claims}
    changes: list[PassageChange] = []
    for rc in resolved_cases(log):
        documents = new_sources.get(rc.id, new_sources.get(None))
        if documents is None:
            continue  # the new sources say nothing about this case
        current = _new_passages(rc, documents, str(sources_path))
        by_passage: dict[str, PassageChange] = {}
        for pid, old in rc.passages.items():
            status = _status(old, current.get(pid))
            if status:
                by_passage[pid] = PassageChange(rc.id, pid, *status, old, current.get(pid))
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
    return changes


def rejudge(changes: list[PassageChange], log: RunLog, sources_path: str | Path, judge: Judge) -> None:
    """Judge again only the affected claims, against the current passages; fills `new_label`."""
    new_sources = load_new_sources(sources_path)
    judgments = Judgments(judge)
    cases = {rc.id: rc for rc in resolved_cases(log)}
    for change in changes:
        rc = cases[change.case]
        current = _new_passages(rc, new_sources.get(rc.id, new_sources.get(None)), str(sources_path))
        for claim in change.claims:
            if claim.new_label is not None or claim.rejudge_error is not None:
                continue
            missing = [p for p in claim.citations if p not in current]
            if missing:
                claim.rejudge_error = f"cites vanished passage(s) {', '.join(missing)}: needs a new citation"
                continue
            try:
                verdict: Judgment = judgments.get(claim.text, [current[p] for p in claim.citations])
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
