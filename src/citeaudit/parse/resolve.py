"""Resolve a case's cross-references: passages against documents, citations against passages.

Every problem is collected with the path of the field it concerns, so the loader can point at the
exact line. Nothing here raises on the first problem.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from citeaudit.records import Case, SourcePassage, Statement

if TYPE_CHECKING:
    from citeaudit.parse.decompose import Decomposer

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Reading:
    """How answers are read: whose conventions, what an invalid citation is, who splits claims.

    `invalid_citations="error"` refuses a citation that names no passage (hand-written cases: a typo
    to fix); `"count"` keeps it on its statement, where it supports nothing and is counted (system
    outputs: an error to measure). `conventions="alce"` reads raw answers as ALCE's eval.py does
    (parse/alce.py), which keeps repeated citations and counts out-of-range ones. `decomposer` splits
    the statements of raw answers into claims (None: the rule splitter; see parse/decompose.py and
    parse/lm_decompose.py); ALCE's reading splits none."""

    conventions: Literal["citeaudit", "alce"] = "citeaudit"
    invalid_citations: Literal["error", "count"] = "error"
    decomposer: Decomposer | None = None

    @property
    def counts_invalid(self) -> bool:
        return self.invalid_citations == "count" or self.conventions == "alce"


@dataclass
class ResolvedCase:
    """A validated case with its passages resolved by id."""

    case: Case
    passages: dict[str, SourcePassage]
    origin: str = ""  # "file:line", for messages
    parsed: bool = False  # some answer was given as raw text and parsed: the parser enters the signature

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def cited_by(self) -> str | None:
        """Who said what the answers cite, when their own text does not: the reader and its reading as the
        reader noted them in the case's metadata (`from`, `cite`), e.g. `ragchecker-all`; None otherwise."""
        reader, reading = self.case.metadata.get("from"), self.case.metadata.get("cite")
        return f"{reader}-{reading}" if isinstance(reader, str) and isinstance(reading, str) else None

    def cited(self, ids: list[str]) -> tuple[SourcePassage, ...]:
        return tuple(map(self.passages.__getitem__, ids))

    def passage_ids_of_fact(self, fact_id: str) -> list[str]:
        return next(f.passages for f in self.case.facts if f.id == fact_id)


@dataclass
class _Problems:
    items: list[tuple[Path, str]] = field(default_factory=list)

    def add(self, path: Path, message: str) -> None:
        self.items.append((path, message))


def resolve_passages(case: Case, problems: _Problems) -> dict[str, SourcePassage]:
    passages: dict[str, SourcePassage] = {}
    doc_ids = Counter(d.id for d in case.sources)

    def add(path: Path, passage: SourcePassage) -> None:
        if passage.id in passages:
            problems.add(path, f"passage id '{passage.id}' is used twice in this case")
        else:
            passages[passage.id] = passage

    for d, doc in enumerate(case.sources):
        base: Path = ("sources", d)
        if doc_ids[doc.id] > 1:
            problems.add(base + ("id",), f"document id '{doc.id}' is used twice in this case")
        if not doc.passages:
            text = doc.text or ""
            add(base + ("id",), SourcePassage(doc.id, doc.id, doc.version, text, 0, len(text), doc.title))
            continue
        for p, psg in enumerate(doc.passages):
            path = base + ("passages", p)
            resolved = _resolve_one(doc.text, psg.text, psg.span, path, problems)
            if resolved is not None:
                start, end, text = resolved
                add(path + ("id",), SourcePassage(psg.id, doc.id, doc.version, text, start, end, doc.title))
    return passages


def _resolve_one(doc_text, text, span, path: Path, problems: _Problems):
    """(start, end, text) of a passage inside its document, or None after recording a problem."""
    if doc_text is None:
        if text is None:
            problems.add(path, "a passage needs 'text' when its document has no 'text'")
            return None
        if span is not None and span.end - span.start != len(text):
            problems.add(path + ("span",), f"span length {span.end - span.start} != text length {len(text)}")
            return None
        start = span.start if span else 0
        return start, start + len(text), text
    if span is not None:
        if span.end > len(doc_text):
            problems.add(path + ("span",), f"span end {span.end} is past the document's end ({len(doc_text)})")
            return None
        piece = doc_text[span.start : span.end]
        if text is not None and text != piece:
            problems.add(path + ("text",), f"text differs from the document text at span [{span.start}, {span.end})")
            return None
        if not piece.strip():
            problems.add(path + ("span",), f"span [{span.start}, {span.end}) holds no text (empty or only whitespace)")
            return None
        return span.start, span.end, piece
    if text is None:
        problems.add(path, "a passage needs 'text' or 'span'")
        return None
    start = doc_text.find(text)
    if start < 0:
        problems.add(path + ("text",), "text is not found in the document text; give its 'span'")
        return None
    return start, start + len(text), text


def _check_citations(ids: list[str], path: Path, known: dict, problems: _Problems, what: str = "passage",
                     repeats: bool = False):
    seen: set[str] = set()
    for i, cid in enumerate(ids):
        if cid not in known:
            problems.add(path + (i,), f"unknown {what} '{cid}'")
        elif cid in seen and not repeats:
            problems.add(path + (i,), f"{what} '{cid}' is cited twice")
        seen.add(cid)


def count_invalid(case: Case, passages: dict[str, SourcePassage]) -> Case:
    """Citations of given statements that name no passage move to `invalid_citations` (counted)."""
    def split(ids: list[str] | None) -> tuple[list[str] | None, list[str]]:
        if ids is None:
            return None, []
        return [i for i in ids if i in passages], [f"[{i}]" for i in ids if i not in passages]

    def fix(st: Statement) -> Statement:
        citations, invalid = split(st.citations)
        claims = None
        if st.claims is not None:
            claims = []
            for claim in st.claims:
                own, bad = split(claim.citations)
                claims.append(claim.model_copy(update={"citations": own}))
                invalid += [b for b in bad if b not in invalid]
        if not invalid:
            return st
        return st.model_copy(update={"citations": citations, "claims": claims,
                                     "invalid_citations": list(dict.fromkeys([*st.invalid_citations, *invalid]))})

    answers = [a.model_copy(update={"statements": [fix(st) for st in a.statements]}) for a in case.answers]
    return case.model_copy(update={"answers": answers})


def check_references(case: Case, passages: dict[str, SourcePassage], problems: _Problems,
                     reading: Reading = Reading()) -> None:
    docs = {d.id: d for d in case.sources}
    for i, doc_id in enumerate(case.gold_documents):
        if doc_id not in docs:
            problems.add(("gold_documents", i), f"unknown document '{doc_id}'")

    fact_ids = Counter(f.id for f in case.facts)
    for f, fact in enumerate(case.facts):
        if fact_ids[fact.id] > 1:
            problems.add(("facts", f, "id"), f"fact id '{fact.id}' is used twice")
        _check_citations(fact.passages, ("facts", f, "passages"), passages, problems)

    answer_ids = Counter(a.id for a in case.answers)
    for a, answer in enumerate(case.answers):
        apath: Path = ("answers", a)
        if answer_ids[answer.id] > 1:
            problems.add(apath + ("id",), f"answer id '{answer.id}' is used twice in this case")
        statement_ids: set[str] = set()
        for s, st in enumerate(answer.statements):
            spath = apath + ("statements", s)
            if st.id is not None:
                if st.id in statement_ids:
                    problems.add(spath + ("id",), f"statement id '{st.id}' is used twice in this answer")
                statement_ids.add(st.id)
            _check_citations(st.citations, spath + ("citations",), passages, problems,
                             repeats=reading.conventions == "alce")
            _check_citations(st.facts, spath + ("facts",), fact_ids, problems, "fact")
            for c, claim in enumerate(st.claims or []):
                cpath = spath + ("claims", c)
                _check_citations(claim.citations or [], cpath + ("citations",), passages, problems)
                _check_citations(claim.facts, cpath + ("facts",), fact_ids, problems, "fact")

    for lab, label in enumerate(case.labels):
        _check_citations(label.passages, ("labels", lab, "passages"), passages, problems)


def parse_answers(case: Case, passages: dict[str, SourcePassage], problems: _Problems,
                  reading: Reading = Reading()) -> Case:
    """Answers given as raw text become statements and claims (citation markers -> passage ids)."""
    if not any(a.needs_parsing for a in case.answers):
        return case
    from citeaudit.errors import InputError, MissingDecomposition
    from citeaudit.parse import parse_answer
    from citeaudit.parse.alce import parse_alce

    answers = []
    for a, answer in enumerate(case.answers):
        if not answer.needs_parsing:
            answers.append(answer)
            continue
        try:
            if reading.conventions == "alce":
                statements = parse_alce(answer.text, list(passages))
            else:
                statements = parse_answer(answer.text, list(passages), kinds=answer.kinds,
                                          decomposer=reading.decomposer, invalid_citations=reading.invalid_citations)
        except MissingDecomposition as err:  # replaying claim splits: name the answer whose split is missing
            located = MissingDecomposition(f"case '{case.id}': answers[{a}].text: {err}")
            located.path = ("answers", a, "text")  # the loader turns it into the file's line
            raise located from None
        except InputError as err:
            for p in err.problems:
                where = p.path.removeprefix("text[").removesuffix("]") if p.path.startswith("text[") else ""
                problems.add(("answers", a, "text"), f"character {where}: {p.message}" if where else p.message)
            answers.append(answer)
            continue
        for index, fact_ids in answer.facts.items():
            if not 0 <= index < len(statements):
                problems.add(("answers", a, "facts", str(index)),
                             f"no statement {index}: the text parses into {len(statements)} statement(s)")
                continue
            st = statements[index]
            if st.claims:  # facts of a split statement go to each of its claims
                claims = [c.model_copy(update={"facts": list(fact_ids)}) for c in st.claims]
                statements[index] = st.model_copy(update={"claims": claims})
            else:
                statements[index] = st.model_copy(update={"facts": list(fact_ids)})
        answers.append(answer.model_copy(update={"statements": statements, "kinds": {}, "facts": {}}))
    return case.model_copy(update={"answers": answers})


def resolve(case: Case, reading: Reading = Reading()) -> tuple[ResolvedCase, list[tuple[Path, str]]]:
    """Resolve a case; returns it with every problem found (empty when the case is sound)."""
    problems = _Problems()
    passages = resolve_passages(case, problems)
    parsed = any(a.needs_parsing for a in case.answers)
    case = parse_answers(case, passages, problems, reading)
    if reading.counts_invalid:
        case = count_invalid(case, passages)
    check_references(case, passages, problems, reading)
    return ResolvedCase(case, passages, parsed=parsed), problems.items
