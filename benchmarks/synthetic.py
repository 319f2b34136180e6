"""Synthetic cases shaped like real ones, for the scale benchmark and the streaming test.

Six one-sentence sources, a ranking, a gold document, and one answer of five statements citing two
sources each: ten claim-citation pairs per case. Every pair scoring may ask about (each statement's cited
set, each citation alone) has a curated label, so the curated judge answers everything. The labels mix
five patterns (one citation suffices, both needed, unsupported, both suffice, partial) so that ALCE's
precision rule takes each of its branches. Texts differ from case to case, as in a real batch.
"""

from __future__ import annotations

import json
from pathlib import Path

PAIRS_PER_CASE = 10  # 5 statements x 2 citations

SOURCE_TEMPLATES = (
    "Unit {n} runs continuously at up to {a} degrees Celsius under the standard schedule.",
    "The Eco mode of unit {n} cuts annual energy use by {b} percent against the standard schedule.",
    "Firmware {b}.{a} for unit {n} was released in March and fixes the pump timer.",
    "Unit {n} must be serviced every {a} months by a certified technician.",
    "The warranty of unit {n} lasts {b} months from the date of installation.",
    "Unit {n} is sold in {a} countries, with a regional power adapter in each.",
)
# (statement template, cited source indexes)
STATEMENTS = (
    ("Unit {n} can run at {a} degrees Celsius and saves {b} percent in Eco mode.", (0, 1)),
    ("Unit {n} saves {b} percent in Eco mode, and firmware {b}.{a} fixes its pump timer.", (1, 2)),
    ("Firmware {b}.{a} fixed the timer of unit {n}, which needs service every {a} months.", (2, 3)),
    ("Unit {n} needs service every {a} months and has a {b}-month warranty.", (3, 4)),
    ("Unit {n} carries a {b}-month warranty and is sold in {a} countries.", (4, 5)),
)
# (label of the cited set, of the first citation alone, of the second alone); sets are never weaker than
# their members, as a careful labeller's would be.
PATTERNS = (
    ("full", "full", "none"),        # one suffices: the second is redundant
    ("full", "partial", "partial"),  # both needed
    ("none", "none", "none"),        # unsupported
    ("full", "full", "full"),        # either suffices
    ("partial", "partial", "none"),  # partly supported
)


def make_case(i: int) -> dict:
    """Case number i: texts differ from every other case's, as they would in a real batch."""
    values = {"n": f"{i}", "a": 10 + i % 89, "b": 5 + i % 37}
    ids = [f"D{j + 1}" for j in range(len(SOURCE_TEMPLATES))]
    sources = [{"id": d, "version": "2024-03", "title": f"Unit {i} manual, part {j + 1}",
                "text": t.format(**values)} for j, (d, t) in enumerate(zip(ids, SOURCE_TEMPLATES))]
    shift = i % len(ids)
    statements, labels = [], []
    for k, (template, (x, y)) in enumerate(STATEMENTS):
        text = template.format(**values)
        cited = [ids[x], ids[y]]
        statements.append({"id": f"s{k + 1}", "text": text, "citations": cited})
        whole, first, second = PATTERNS[(i + k) % len(PATTERNS)]
        labels += [
            {"claim": text, "passages": cited, "label": whole, "explanation": "checked against both passages"},
            {"claim": text, "passages": [cited[0]], "label": first},
            {"claim": text, "passages": [cited[1]], "label": second},
        ]
    return {
        "id": f"case-{i}",
        "question": f"What are the limits, savings and service terms of unit {i}?",
        "sources": sources,
        "ranking": ids[shift:] + ids[:shift],
        "gold_documents": [ids[i % len(ids)]],
        "answers": [{"id": "a1", "system": "rag", "statements": statements}],
        "labels": labels,
    }


def write_cases(path: Path, pairs: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(pairs // PAIRS_PER_CASE):
            f.write(json.dumps(make_case(i), ensure_ascii=False) + "\n")
