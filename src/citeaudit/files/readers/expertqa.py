"""The annotated ExpertQA set (Malaviya et al., 2024; github.com/chaitanyamalaviya/ExpertQA), as in its
`r2_compiled_anon.jsonl` and long-form QA splits (`{rand,domain}_{val,test}.jsonl`): one question a
line, `answers` mapping a system's name to its answer, whose `claims` each carry their `evidence` and
an expert's `support` label.

Each line becomes a case with one answer per system (answer id and system: the system's name). Each
claim is a statement citing its evidence; the expert labels become curated labels, so the `curated`
judge replays the experts and any other judge can be measured against them.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from citeaudit.errors import Problem
from citeaudit.files.readers.common import Fields, Reader, ReadRecord, others, raise_problems, read_json_lines
from citeaudit.parse.kinds import classify

OPTIONS: dict[str, str] = {}
# The expert's support label -> citeaudit's. "Missing" marks a claim with no citation (read as a
# statement without citations), "N/A" one the expert did not judge: neither is a label.
SUPPORT = {"Complete": "full", "Partial": "partial", "Incomplete": "none"}
NO_LABEL = ("Missing", "N/A")
# "[3] https://url" and then, after a blank line, the passage (no passage: the URL alone).
_EVIDENCE = re.compile(r"\s*\[(\d+)\][ \t]*((?:https?://|www\.)\S*)?")
_MARKERS = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def read(path: str) -> list[ReadRecord]:
    problems: list[Problem] = []
    records = []
    for got in read_json_lines(path):
        if isinstance(got, Problem):
            problems.append(got)
            continue
        line, value, line_of = got
        fields = Fields(path, value, (), line_of)
        case = _case(fields)
        problems += fields.problems
        if case is not None and not fields.problems:
            records.append(ReadRecord(case, line, ""))
    raise_problems(problems)
    _drop_conflicting([r.case for r in records])
    return records


def parse_evidence(evidence: str) -> tuple[str | None, str | None, str]:
    """'[3] https://url\\n\\npassage' -> ('3', 'https://url', 'passage'); the passage is '' when the
    evidence is a URL alone, the number and URL None when not written."""
    m = _EVIDENCE.match(evidence)
    if not m:
        return None, None, evidence.strip()
    return m.group(1), m.group(2) or None, evidence[m.end():].strip()


def claim_text(claim: str) -> str:
    """The claim as judged: its [n] markers removed, its spacing collapsed."""
    return " ".join(_MARKERS.sub("", claim).split()) or claim.strip()


class _Sources:
    """The case's documents: one per distinct (URL, passage), named by a hash of both (stable whatever
    the line's order), in order of first appearance. A URL without passage text is its own text."""

    def __init__(self) -> None:
        self.documents: dict[str, dict[str, Any]] = {}

    def add(self, url: str | None, passage: str) -> str:
        key = f"{url or ''}\n{passage}"
        doc_id = "e" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
        if doc_id not in self.documents:
            document: dict[str, Any] = {"id": doc_id, "text": passage or url}
            if url:
                document["title"] = url
            if not passage:
                document["metadata"] = {"url_only": True}
            self.documents[doc_id] = document
        return doc_id

    def urls(self) -> set[str]:
        return {d["title"] for d in self.documents.values() if "title" in d}


def _case(f: Fields) -> dict[str, Any] | None:
    if not f.is_object():
        return None
    question = f.text(("question",))
    if not f.is_object(("answers",)):
        return None
    systems = list(f.value["answers"])
    if not systems:
        f.problem(("answers",), "no answers")
    sources = _Sources()
    answers, labels, kept = [], [], {}
    for system in systems:
        read_answer = _answer(f, system, sources)
        if read_answer is not None:
            answer, answer_labels, answer_kept = read_answer
            answers.append(answer)
            labels += answer_labels
            kept[system] = answer_kept
    if not sources.documents and not f.problems:
        f.problem(("answers",), "no evidence and no attribution in any answer: a case needs at least one source")
    if f.problems:
        return None
    metadata: dict[str, Any] = {"from": "expertqa", "fields": others(f.value, {"question", "answers"}),
                                "answers": kept}
    return {
        "id": "q-" + hashlib.sha256(question.strip().encode("utf-8")).hexdigest()[:12],
        "question": question,
        "sources": list(sources.documents.values()),
        "answers": answers,
        "labels": labels,
        "metadata": metadata,
    }


def _answer(f: Fields, system: str, sources: _Sources):
    """One system's answer: (answer, its curated labels, its other fields), or None after a problem."""
    path = ("answers", system)
    if not f.is_object(path):
        return None
    if not system.strip():
        f.problem(path, "empty system name")
    text = f.text(path + ("answer_string",))
    claims = f.items(path + ("claims",))
    if claims is None:
        return None
    statements, labels, kept_claims = [], [], []
    for c, claim in enumerate(claims):
        read_claim = _claim(f, path + ("claims", c), sources)
        if read_claim is not None:
            statement, label, kept = read_claim
            statement["id"] = f"c{c + 1}"
            statements.append(statement)
            if label is not None:
                labels.append({"claim": statement["text"], "passages": statement["citations"], "label": label,
                               "explanation": f"ExpertQA support: {claim['support']} ({system})"})
            kept_claims.append(kept)
    # The answer's references, not linked to claims: a URL no claim's evidence gave is a source too.
    for a, entry in enumerate(f.texts(path + ("attribution",), required=False) or []):
        _, url, passage = parse_evidence(entry)
        if passage or (url and url not in sources.urls()):
            sources.add(url, passage)
        elif not url:
            f.problem(path + ("attribution", a), "empty attribution")
    kept = others(f.value["answers"][system], {"answer_string", "claims"})
    kept["claims"] = kept_claims
    return {"id": system, "system": system, "text": text, "statements": statements}, labels, kept


def _claim(f: Fields, path: tuple[str | int, ...], sources: _Sources):
    """(statement, label or None, its other fields), or None after a problem."""
    if not f.is_object(path):
        return None
    raw = f.text(path + ("claim_string",))
    if raw is not None and not raw.strip():
        f.problem(path + ("claim_string",), "empty claim")
        return None
    evidence = f.texts(path + ("evidence",))
    support = f.get(path + ("support",), None)
    label = None
    if support is not None and support not in SUPPORT and support not in NO_LABEL:
        f.problem(path + ("support",), f"unknown support label {support!r} (expected one of "
                                       f"{', '.join([*SUPPORT, *NO_LABEL])}, or null)")
    elif support in SUPPORT:
        label = SUPPORT[support]
    if raw is None or evidence is None:
        return None
    citations, numbers, documents = [], [], []
    for e, entry in enumerate(evidence):
        number, url, passage = parse_evidence(entry)
        if not passage and not url:
            f.problem(path + ("evidence", e), "empty evidence")
            continue
        doc_id = sources.add(url, passage)
        if doc_id not in citations:
            citations.append(doc_id)
        numbers.append(number)
        documents.append(doc_id)
    # Each evidence entry as written: its [n] and its document (a claim may repeat one).
    kept = others(f.get(path), {"claim_string", "evidence"})
    kept["evidence_numbers"], kept["evidence_sources"] = numbers, documents
    text = claim_text(raw)
    statement = {"text": text, "citations": citations}
    kind = "claim" if citations else classify(text, lang="en", cited=False)
    if kind != "claim":  # an uncited lead-in ("…the following tests: 1.") or greeting, as in a text answer
        statement["kind"] = kind
    return statement, (label if citations else None), kept


def _pair(label: dict[str, Any], case: dict[str, Any]) -> tuple[str, frozenset[str]]:
    """What a curated label is about: the claim and the texts it cites (not their ids)."""
    texts = {d["id"]: d["text"] for d in case["sources"]}
    return label["claim"], frozenset(texts[p] for p in label["passages"])


def _drop_conflicting(cases: list[dict[str, Any]]) -> None:
    """Each (claim, cited texts) pair keeps one label: experts who labelled the same pair differently,
    in one line or in two, leave it unlabelled (a curated label must be one label), and each case
    concerned lists the pair under metadata "conflicting_labels". A label repeated is kept once."""
    found: dict[tuple[str, frozenset[str]], set[str]] = {}
    for case in cases:
        for label in case["labels"]:
            found.setdefault(_pair(label, case), set()).add(label["label"])
    for case in cases:
        kept, seen, conflicting = [], set(), []
        for label in case["labels"]:
            pair = _pair(label, case)
            if len(found[pair]) > 1:
                conflicting.append({"claim": label["claim"], "passages": label["passages"], "label": label["label"],
                                    "labels_given": sorted(found[pair])})
            elif pair not in seen:
                kept.append(label)
            seen.add(pair)
        case["labels"] = kept
        if conflicting:
            case["metadata"]["conflicting_labels"] = conflicting


READER = Reader(
    name="expertqa",
    description="annotated ExpertQA JSON lines: one question a line, each system's claims with evidence and "
                "expert support labels",
    options=OPTIONS,
    read=read,
)
