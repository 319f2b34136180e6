"""The data: sources, passages, answers, statements, claims, required facts and judgments.

Everything a user writes in a case file is one of these pydantic models; `docs/format.md` documents
them and `citeaudit schema` prints their JSON Schema. Cross-references (a citation to a passage, a
fact to its passages) are checked in `resolve.py`, which needs the whole case.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from os import PathLike
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

Label = Literal["full", "partial", "none", "contradicts"]
LABELS: tuple[Label, ...] = ("full", "partial", "none", "contradicts")
StatementKind = Literal["claim", "abstention", "other"]


class _Record(BaseModel):
    # Unknown keys are almost always typos ("citation" for "citations"): reject them.
    model_config = ConfigDict(extra="forbid", frozen=True)


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty or only whitespace")
    return text


SourceText = Annotated[str, AfterValidator(_not_blank)]  # a judge given no text has nothing to judge


class Span(_Record):
    """Character offsets [start, end) into a document's text."""

    # Strict: true, "0" or 0.0 are not offsets, whatever pydantic's coercion would make of them.
    start: int = Field(ge=0, strict=True)
    end: int = Field(ge=0, strict=True)

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end < self.start:
            raise ValueError(f"end ({self.end}) is before start ({self.start})")
        return self


class Passage(_Record):
    """A citable stretch of a document. Give `text`, `span`, or both (they must agree)."""

    id: str = Field(min_length=1)
    text: SourceText | None = None
    span: Span | None = None


class Document(_Record):
    """A source document at one version.

    A document without `passages` is cited as a whole, by its own id. A document with passages is
    cited through them; when the document `text` is given, each passage's span indexes into it.
    """

    id: str = Field(min_length=1)
    version: str | None = None
    title: str | None = None
    date: str | None = None
    scope: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    text: SourceText | None = None
    passages: list[Passage] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_text(self) -> Document:
        if self.text is None and not self.passages:
            raise ValueError("a document needs 'text' or 'passages'")
        return self


class Claim(_Record):
    """An atomic, independently checkable claim. `citations: null` inherits the statement's."""

    id: str | None = None
    text: str = Field(min_length=1)
    citations: list[str] | None = None
    facts: list[str] = Field(default_factory=list, description="ids of required facts this claim conveys")
    offsets: Span | None = Field(default=None, description="where the claim sits in the answer text")


class Statement(_Record):
    """A sentence of an answer with the ordered passage ids cited beside it."""

    id: str | None = None
    text: str = Field(min_length=1)
    citations: list[str] = Field(default_factory=list)
    kind: StatementKind = "claim"
    claims: list[Claim] | None = Field(
        default=None, description="explicit atomic claims; when absent the statement is one claim"
    )
    facts: list[str] = Field(
        default_factory=list, description="required facts conveyed, when the statement is its own claim"
    )
    offsets: Span | None = None
    invalid_citations: list[str] = Field(
        default_factory=list, description="citations that name no passage, as written ('[9]'); kept and "
        "counted instead of refused when invalid citations are counted")

    @model_validator(mode="after")
    def _claims_only_for_claims(self) -> Statement:
        if self.kind != "claim" and self.claims:
            raise ValueError(f"a statement of kind '{self.kind}' cannot carry claims")
        if self.claims is not None and self.facts:
            raise ValueError("give 'facts' on each claim when claims are explicit")
        return self

    def atomic_claims(self) -> list[Claim]:
        """The claims to check, each with its citations resolved (inherited when not its own)."""
        if self.kind != "claim":
            return []
        if self.claims is None:
            return [Claim(id=self.id, text=self.text, citations=list(self.citations), facts=self.facts)]
        return [
            c if c.citations is not None else c.model_copy(update={"citations": list(self.citations)})
            for c in self.claims
        ]

    def cited_ids(self) -> list[str]:
        """The statement's cited set, in order: its own citations, else the union of its claims'."""
        if self.citations or not self.claims:
            return list(self.citations)
        seen: dict[str, None] = {}
        for claim in self.claims:
            for cid in claim.citations or []:
                seen.setdefault(cid, None)
        return list(seen)


class Answer(_Record):
    """An answer, as statements or as raw text with citation markers (parsed when `statements` is empty)."""

    id: str = Field(min_length=1)
    system: str | None = None
    text: str | None = Field(default=None, description="the raw answer text with citation markers")
    statements: list[Statement] = Field(default_factory=list)
    kinds: dict[int, StatementKind] = Field(
        default_factory=dict, description="for a parsed text: statement index -> kind, overriding the parser")
    facts: dict[int, list[str]] = Field(
        default_factory=dict, description="for a parsed text: statement index -> required facts it conveys")
    # Left out of a dump when absent, so that cases and run logs without it read as they always have.
    predicted_supported: bool | None = Field(
        default=None, strict=True, exclude_if=lambda v: v is None,
        description="the system's own verdict: does it hold this answer supported by its sources?")

    @model_validator(mode="after")
    def _parse_options_need_text(self) -> Answer:
        if (self.kinds or self.facts) and (self.statements or self.text is None):
            raise ValueError("'kinds' and 'facts' apply to an answer given as 'text' without 'statements'")
        return self

    @property
    def needs_parsing(self) -> bool:
        return not self.statements and bool(self.text and self.text.strip())


class RequiredFact(_Record):
    """A fact the answer should convey, fixed before scoring, with the passages that document it."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    passages: list[str] = Field(min_length=1)


class CuratedLabel(_Record):
    """A human label for one exact (claim text, cited passage set) pair."""

    claim: str = Field(min_length=1)
    passages: list[str] = Field(min_length=1)
    label: Label
    explanation: str | None = None


class Case(_Record):
    """One question with its sources, retrieval ranking, required facts and answers to evaluate."""

    id: str = Field(min_length=1)
    question: str
    sources: list[Document] = Field(min_length=1)
    ranking: list[str] | None = Field(default=None, description="retrieved document ids, best first")
    gold_documents: list[str] = Field(default_factory=list, description="evidence-bearing document ids")
    facts: list[RequiredFact] = Field(default_factory=list)
    answers: list[Answer] = Field(default_factory=list)
    labels: list[CuratedLabel] = Field(default_factory=list, description="curated judge labels")
    metadata: dict[str, Any] = Field(default_factory=dict, description="anything else, kept as given "
                                     "(readers of other formats keep the original ids and fields here)")

    @field_validator("ranking")
    @classmethod
    def _ranking_unique(cls, ranking: list[str] | None) -> list[str] | None:
        if ranking is not None and len(set(ranking)) != len(ranking):
            dup = next(d for d in ranking if ranking.count(d) > 1)
            raise ValueError(f"document '{dup}' appears twice in the ranking")
        return ranking


# ---------------------------------------------------------------------------------------------
# Resolved passages and judgments (produced by citeaudit, not written by users).


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: str | PathLike[str]) -> str:
    """SHA-256 of a file's bytes (hashlib reads it in blocks: model files can be large)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


# The file of a judge directory that names the claims its judge trained and was calibrated on
# (judges/seen.py). It records what the judge learnt from and cannot change a judgment, so a directory's
# identity leaves it out: writing it into a judge directory keeps the judge's signature, and with it
# every judgment stored under that signature.
TRAINED_ON_FILE = "trained_on.txt.gz"


def directory_sha256(path: str | PathLike[str]) -> str:
    """SHA-256 over every file under `path` but hidden ones and `TRAINED_ON_FILE`, in sorted order, each
    as its relative name followed by its bytes: a model directory's identity in a judge's signature."""
    from pathlib import Path

    root = Path(path)
    digest = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*")
                    if p.is_file() and not p.name.startswith(".") and p.name != TRAINED_ON_FILE):
        digest.update(str(f.relative_to(root)).encode())
        with open(f, "rb") as fh:
            hashlib.file_digest(fh, lambda: digest)  # feeds this file into the running digest
    return digest.hexdigest()


@dataclass(frozen=True)
class SourcePassage:
    """A passage resolved against its document: what a judge reads and a judgment rests on."""

    id: str
    doc_id: str
    version: str | None
    text: str
    start: int
    end: int
    title: str | None = None

    @cached_property
    def sha256(self) -> str:
        # remembered: a passage is hashed again for every label and judgment that names it
        return text_hash(self.text)

    def identity(self) -> dict[str, Any]:
        """Everything that names this exact text: document, version, span and content."""
        return {
            "id": self.id,
            "doc": self.doc_id,
            "version": self.version,
            "span": [self.start, self.end],
            "sha256": self.sha256,
        }


class Evidence(_Record):
    """Where in a passage a judgment rests."""

    passage: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Judgment(_Record):
    """A judge's verdict on one (text, passage set) pair, and why."""

    label: Label
    judge: str = Field(description="signature of the judge that gave it")
    explanation: str | None = None
    evidence: Evidence | None = None
    scores: dict[str, float] | None = Field(default=None, description="class probabilities, if any")
    raw: dict[str, Any] | None = Field(default=None, description="a remote judge's raw response, for audit and replay")
    uncertain: bool | None = Field(default=None, description="true when the judge does not know: its score "
                                   "fell in its uncertain band; the label is then its best guess, counted apart")
    decided_by: str | None = Field(default=None, description="in a cascade, the signature of the judge whose "
                                   "verdict this is")

    @property
    def supports(self) -> bool:
        """Support a figure can count: a `full` the judge is sure of."""
        return self.label == "full" and not self.uncertain
