"""Signatures: every setting that can change a figure, as an object compared field by field.

A run has one `Signature`; each measure prints its own rendering of it, naming only the fields that
can change that measure (sacrebleu's habit):

    support|judge:curated@1#53285bd471b9|agg:sum|version:0.1.0
    citation_precision|judge:…|parse:citeaudit-parse@1+pysbd-0.3.4|claims:rule@1|nocite:n/a|agg:sum|version:0.1.0
    recall@3|gold:documents|version:0.1.0

`parse` and `claims` appear only when some answer was given as raw text, so that the parser and the
claim splitter decided what the statements and claims are; for answers given as statements they
change nothing and are left out. `cite` appears only when a reader, not the answers, said what they
cite (`cite:ragchecker-all`: RAGChecker responses read as citing every retrieved context).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from citeaudit.metrics import names as N

# Fields that change figures: two runs that differ in one of these are not compared silently.
FIGURE_FIELDS = ("judge", "parser", "claims", "cite", "nocite", "conventions", "invalid", "missing")
# The keys of a rendered signature, in order, after the measure name.
_KEYS = ("judge", "parse", "claims", "cite", "conv", "invalid", "missing", "nocite", "gold", "agg", "version")
# The keys a run's settings line leaves out: the judge (a line of its own) and what is each measure's own.
_OWN = ("judge", "gold", "agg")


class Signature(BaseModel):
    """The settings behind a run's figures."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: str
    parser: str | None = None  # e.g. citeaudit-parse@1+pysbd-0.3.4, when answers were parsed from text
    claims: str | None = None  # the claim splitter then used, e.g. rule@1
    # Who said what the answers cite, when not the answers themselves: a reader's reading, e.g.
    # ragchecker-all. Left out of a dump when absent, so that older logs read and hash as they did.
    cite: str | None = Field(default=None, exclude_if=lambda v: v is None)
    nocite: Literal["0", "n/a"] = "n/a"  # precision of an answer without citations (ALCE: 0)
    conventions: Literal["citeaudit", "alce"] = "citeaudit"  # whose rules read and score the answers
    invalid: Literal["error", "count"] = "error"  # citations naming no passage: refused, or counted
    missing: Literal["error", "skip"] = "error"  # unlabelled pairs: an error, or left unjudged and out
    version: str  # citeaudit's

    def render(self, measure: str) -> str:
        """The signature printed under `measure`: only the fields that can change it."""
        at_k = N.parse_at_k(measure)
        parts = [measure]
        if at_k is None and measure not in N.JUDGE_FREE:
            parts.append(f"judge:{self.judge}")
        if at_k is None and self.parser is not None:
            parts += [f"parse:{self.parser}", f"claims:{self.claims}"]
        if at_k is None and self.cite is not None:
            parts.append(f"cite:{self.cite}")
        # Printed only when not the default, so that default signatures read as they always have.
        if at_k is None and self.conventions != "citeaudit":
            parts.append(f"conv:{self.conventions}")
        if at_k is None and self.invalid != "error":
            parts.append(f"invalid:{self.invalid}")
        if at_k is None and self.missing != "error" and measure not in N.JUDGE_FREE:
            parts.append(f"missing:{self.missing}")
        if measure in (N.CITATION_PRECISION, N.ALCE_CITATION_PRECISION):
            parts.append(f"nocite:{self.nocite}")
        if at_k:
            parts.append("gold:documents" if at_k[0] == "recall" else "gold:facts")
        else:
            parts.append("agg:" + ("mean-per-answer" if measure in N.MEAN_MEASURES else "sum"))
        parts.append(f"version:{self.version}")
        return "|".join(parts)

    def settings(self, measures: list[str]) -> str:
        """What the signatures of `measures` say beside the judge and each measure's own fields (how it is
        aggregated, its gold): the run's shared settings, once, in the signatures' own `key:value|…` form
        (`parse:citeaudit-parse@1+pysbd-0.3.4|claims:rule@1|nocite:n/a|version:0.1.0`)."""
        shared: dict[str, str] = {}
        for measure in measures:
            for key, value in parse_rendered(self.render(measure))[1].items():
                if key not in _OWN:
                    shared.setdefault(key, value)
        return "|".join(f"{key}:{shared[key]}" for key in _KEYS if key in shared)

    def differences(self, other: Signature, fields: tuple[str, ...] = FIGURE_FIELDS) -> list[tuple[str, str | None, str | None]]:
        """(field, this value, other value) for each of `fields` that differs."""
        return [(f, getattr(self, f), getattr(other, f)) for f in fields if getattr(self, f) != getattr(other, f)]


def parse_rendered(text: str) -> tuple[str, dict[str, str]]:
    """A rendered signature back into its measure and fields: ("support", {"judge": …, "agg": "sum", …}).

    A judge's own signature may hold '|' (its options); a segment that does not open with a known
    key belongs to the field before it."""
    measure, *segments = text.split("|")
    fields: dict[str, str] = {}
    last = None
    for segment in segments:
        key, colon, value = segment.partition(":")
        if colon and key in _KEYS and key not in fields:
            fields[key] = value
            last = key
        elif last is not None:
            fields[last] += "|" + segment
        else:
            raise ValueError(f"not a citeaudit signature: {text!r}")
    return measure, fields
