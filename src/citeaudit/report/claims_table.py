"""The report's claims table as data: one row per claim and per missed required fact, each with its
label, diagnosed cause, judge confidence, advice and the passages it rests on. Embedded once as JSON and
drawn by the page's script, so that 50,000 rows cost one parse, not 50,000 DOM rows."""

from __future__ import annotations

import json
from typing import Any

from citeaudit.run.log import RunLog
from citeaudit.stats import score_from
from citeaudit.run.advice import claim_advice, guard_notes, quoted
from citeaudit.report.repairs import repair_line
from citeaudit.text import content_language

FOLD = 400  # characters of passage kept either side of the highlighted span; the rest is folded
COLUMNS = ("kind", "system", "case", "answer", "ref", "text", "label", "cause", "score", "uncertain",
           "explanation", "advice", "passages", "evidence", "marks", "repair", "lang")


class Strings:
    """Repeated strings (systems, ids, labels, causes, explanations, advice, figures) stored once, rows
    hold indexes; the claims and answers tables share one."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, s: str) -> int:
        if s not in self._index:
            self._index[s] = len(self.items)
            self.items.append(s)
        return self._index[s]


def table_data(log: RunLog, passages: dict[tuple[str, str], dict[str, Any]], strings: Strings,
               answer_langs: dict[tuple[str, str], str] | None = None) -> dict[str, Any]:
    """Rows and passages, shaped for the page's script (see COLUMNS); their strings go to `strings`. A
    claim's `lang` is its answer's (`answer_langs`), a missed fact's and a passage's their own text's."""
    answer_langs = answer_langs or {}
    passage_rows: list[list[Any]] = []
    passage_index: dict[tuple[str, str], int] = {}

    def passage(case: str, pid: str) -> int | None:
        key = (case, pid)
        if key not in passage_index:
            p = passages.get(key)
            if p is None:
                return None
            passage_index[key] = len(passage_rows)
            passage_rows.append([pid, p["doc"], p["version"], p["title"] or "", p["text"],
                                 strings(content_language(p["text"]))])
        return passage_index[key]

    facts = {case.id: {f.id: f for f in case.facts} for case in log.cases}
    rows: list[list[Any]] = []
    for a in log.results.answers:
        findings = log.diagnosis.get(f"{a.case}/{a.answer}", [])
        causes = {f.ref: f.cause for f in findings if f.kind == "claim"}
        for c in a.claims:
            ref = f"{c.statement + 1}.{c.index + 1}"
            j = c.judgment
            cause = causes.get(ref)
            cited = [i for i in (passage(a.case, pid) for pid in c.citations) if i is not None]
            evidence = None
            if j is not None and j.evidence is not None:
                pi = passage(a.case, j.evidence.passage)
                if pi is not None:
                    evidence = [pi, j.evidence.start, j.evidence.end]
                    if pi not in cited:
                        cited.append(pi)
            marks = [q for n in guard_notes(j.explanation if j else None) for q in quoted(n.reason)]
            label = "unjudged" if j is None else "uncertain" if j.uncertain else j.label
            rows.append(["claim", strings(a.system), strings(a.case), strings(a.answer), ref, c.text,
                         strings(label), strings(cause or ""), score_from(j.scores) if j else None,
                         1 if j is not None and j.uncertain else 0,
                         strings(j.explanation or "") if j else strings(""),
                         strings(claim_advice(j, cause, _uncited_evidence(facts.get(a.case, {}), c))),
                         cited, evidence, marks, strings(repair_line(c.repair) if c.repair else ""),
                         strings(answer_langs.get((a.case, a.answer)) or content_language(c.text))])
        for f in findings:
            if f.kind != "fact":
                continue
            fact = facts.get(a.case, {}).get(f.ref)
            documenting = [] if fact is None else [i for i in (passage(a.case, p) for p in fact.passages) if i is not None]
            rows.append(["fact", strings(a.system), strings(a.case), strings(a.answer), f.ref, f.text,
                         strings("missed"), strings(f.cause), None, 0, strings(""),
                         strings(f"Required fact {f.cause.replace('_', ' ')}: {f.advice}."), documenting, None, [],
                         strings(""), strings(content_language(f.text))])
    return {"columns": COLUMNS, "passages": passage_rows, "rows": rows, "fold": FOLD}


def _uncited_evidence(facts: dict, claim) -> list[str]:
    """Passages documenting the claim's required facts that it does not cite."""
    documenting = [p for f in claim.facts if f in facts for p in facts[f].passages]
    return [p for p in dict.fromkeys(documenting) if p not in claim.citations]


def embed_json(data: Any) -> str:
    """JSON safe inside <script type="application/json">: no '<', '>' or '&' can close the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
