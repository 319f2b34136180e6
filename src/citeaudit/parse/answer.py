"""``parse_answer``: a raw answer with citation markers -> Statements (and their atomic Claims)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import get_args

from citeaudit.errors import InputError, Problem
from citeaudit.records import Claim, Span, Statement, StatementKind
from citeaudit.parse.decompose import Decomposer, RuleDecomposer
from citeaudit.parse.kinds import classify
from citeaudit.parse.markers import Cluster, cluster_markers, definition_lines, find_markers
from citeaudit.parse.segment import ABBREVIATIONS, split_sentences
from citeaudit.parse.text import Cleaned, clean, detect_language

_KINDS: tuple[str, ...] = get_args(StatementKind)
_TRAILING = ".,;:!?。，；：！？、 \t\n"


def parse_answer(
    text: str,
    source_ids: Sequence[str],
    *,
    lang: str | None = None,
    decomposer: Decomposer | None = None,
    numbering: str = "auto",
    kinds: Mapping[int, str] | None = None,
    where: str = "<answer>",
    invalid_citations: str = "error",
) -> list[Statement]:
    """Split ``text`` into statements with their cited passage ids, kinds, claims and offsets.

    ``source_ids`` are the passage ids of the case, in order: numeric markers ``[n]`` read them by
    1-based position unless the ids are themselves numeric (see ``numbering`` in
    ``citeaudit.parse.markers``). ``lang`` is detected when None (``"en"`` or ``"zh"``).
    ``decomposer`` splits statements into claims (default: ``RuleDecomposer``). ``kinds`` overrides
    the kind of statements by their index in the result. ``where`` names the answer in errors.

    Raises ``InputError`` listing every marker that names no known passage (path ``text[offset]``)
    and every bad ``kinds`` entry. With ``invalid_citations="count"``, a marker naming no passage
    is kept on its statement's ``invalid_citations`` instead (it then supports nothing).
    """
    lang = lang or detect_language(text)
    decomposer = decomposer if decomposer is not None else RuleDecomposer()
    markers, marker_problems = find_markers(text, source_ids, numbering, keep_invalid=invalid_citations == "count")
    problems = [Problem(where, None, f"text[{p.offset}]", p.message) for p in marker_problems]

    clusters = cluster_markers(text, markers)
    sentences = split_sentences(text, clusters, lang, blank=definition_lines(text))

    for index, kind in (kinds or {}).items():
        if kind not in _KINDS:
            message = f"unknown kind '{kind}' (use {', '.join(_KINDS)})"
            problems.append(Problem(where, None, f"kinds[{index}]", message))
        elif not 0 <= index < len(sentences):
            message = f"there is no statement {index} (the answer has {len(sentences)})"
            problems.append(Problem(where, None, f"kinds[{index}]", message))
    if problems:
        raise InputError(problems)

    statements: list[Statement] = []
    for index, sentence in enumerate(sentences):
        start, end = sentence.span
        cleaned = clean(text, start, end, sentence.clusters)
        citations = list(dict.fromkeys(i for c in sentence.clusters for i in c.ids))
        invalid = list(dict.fromkeys(i for c in sentence.clusters for i in c.invalid))
        kind = (kinds or {}).get(index) or classify(
            cleaned.text, lang=lang, cited=bool(citations or invalid), prefix=sentence.prefix,
            line_alone=sentence.line_alone,
        )
        claims = _claims(text, cleaned, sentence.clusters, decomposer, lang) if kind == "claim" else None
        statements.append(Statement(
            text=cleaned.text, citations=citations, kind=kind, claims=claims, offsets=Span(start=start, end=end),
            invalid_citations=invalid,
        ))
    return statements


# ---------------------------------------------------------------------------------------------
# Claims


def _trim(s: str, a: int, b: int) -> tuple[int, int]:
    """Shrink [a, b) past surrounding whitespace and closing punctuation (keeping "etc.", "U.S.")."""
    while a < b and s[a].isspace():
        a += 1
    while b > a and s[b - 1] in _TRAILING:
        if s[b - 1] == ".":
            word = s[a : b - 1].split()[-1:] or [""]
            if "." in word[0] or word[0].lower() in ABBREVIATIONS:
                break  # the period belongs to an abbreviation
        b -= 1
    return a, b


def _locate(statement: str, claims: Sequence[str]) -> list[tuple[int, int] | None]:
    """Find claim texts in the statement, in order, ignoring differences in whitespace."""
    out: list[tuple[int, int] | None] = []
    cursor = 0
    for claim in claims:
        tokens = claim.split()
        m = re.compile(r"\s*".join(map(re.escape, tokens))).search(statement, cursor) if tokens else None
        if m:
            out.append((m.start(), m.end()))
            cursor = m.end()
        else:
            out.append(None)
    return out


def _ranges(items: list, statement: str) -> list[tuple[int, int] | None]:
    if all(isinstance(x, str) for x in items):
        return _locate(statement, items)
    spans: list[tuple[int, int] | None] = []
    last = 0
    for x in items:
        if not (isinstance(x, (tuple, list)) and len(x) == 2 and all(isinstance(v, int) for v in x)):
            raise ValueError(f"a decomposer must return (start, end) pairs or strings, got {x!r}")
        a, b = x
        if not last <= a < b <= len(statement):
            raise ValueError(f"decomposer range {x!r} is out of order or outside the statement "
                             f"(length {len(statement)})")
        spans.append((a, b))
        last = b
    return spans


def _claims(
    text: str, cleaned: Cleaned, clusters: Sequence[Cluster], decomposer: Decomposer, lang: str
) -> list[Claim] | None:
    """The statement's claims, or None when it is one claim."""
    statement = cleaned.text
    located: list[tuple[int, int] | None] = []
    texts: list[str] = []
    raw = list(decomposer.decompose(statement, lang) or [])
    for rng, item in zip(_ranges(raw, statement), raw):
        if rng is None:  # a rephrased claim: keep its text, no offsets
            texts.append(str(item).strip())
            located.append(None)
            continue
        a, b = _trim(statement, *rng)
        if a < b:
            texts.append(statement[a:b])
            located.append((a, b))
    if len(texts) <= 1:
        return None

    # A marker credited to the statement but outside its text ("1[2]. Text") sits in no clause.
    own = _own_citations(cleaned, located) if len(cleaned.cuts) == len(clusters) else None
    claims = []
    for i, (claim_text, rng) in enumerate(zip(texts, located)):
        offsets = None
        if rng is not None:
            start, end = cleaned.span(*rng)
            end = _extend_over_markers(text, end, clusters)
            offsets = Span(start=start, end=end)
        claims.append(Claim(text=claim_text, citations=own[i] if own else None, offsets=offsets))
    return claims


def _own_citations(cleaned: Cleaned, located: list[tuple[int, int] | None]) -> list[list[str]] | None:
    """Per-claim citations when markers sit inside each claim ("X [1], and Y [2]."), else None.

    None means every claim inherits the statement's citations: when all markers close the
    statement ("X and Y [1][2]."), when a claim could not be located, or when some claim has no
    marker of its own (then the statement's markers are taken to cover it too).
    """
    if not cleaned.cuts or any(r is None for r in located):
        return None
    spans = [r for r in located if r is not None]
    if all(q >= spans[-1][1] for q, _ in cleaned.cuts):
        return None  # every marker closes the statement
    own: list[list[str]] = [[] for _ in spans]
    for q, cluster in cleaned.cuts:
        # a marker belongs to the last claim that starts at or before it
        k = max([i for i, (a, _) in enumerate(spans) if a <= q] or [0])
        own[k] += [i for i in cluster.ids if i not in own[k]]
    return own if all(own) else None


def _extend_over_markers(text: str, end: int, clusters: Sequence[Cluster]) -> int:
    """Widen a claim's span over the markers right after it ("Eco saves 15 % [D3]")."""
    starts = {c.start: c for c in clusters}
    i = end
    while True:
        j = i
        while j < len(text) and text[j] in " \t":
            j += 1
        if j in starts:
            i = end = starts[j].end
        else:
            return end
