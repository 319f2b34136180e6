"""The worked examples citeaudit was built from, shipped as case files with curated labels.

- `p7_archive.json`: the P7 archive (D1–D4), answers A, B and C, ranking D2, D4, D1, D3.
- `p7_archive_zh.json`: the same archive in Chinese, its answers given as raw text with markers.
- `returns_desk.json`: the returns desk (S1–S6) and its six setups, from Original to Overbroad claim.
- `manual_audit.json`: the three-claim manual audit (partial, none, contradicts) and the honest answer.

`run_examples()` scores them with the curated judge and returns the figures; `render_examples()` prints
them in the seeds' own shapes. Tests and `citeaudit examples` use the same functions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from citeaudit.errors import InputError
from citeaudit.judges import Judgments, make_judge
from citeaudit.files.loading import parse_cases
from citeaudit.metrics import Report, Settings, score_cases
from citeaudit.metrics import names as N
from citeaudit.parse.resolve import ResolvedCase

EXAMPLE_FILES = ("p7_archive.json", "p7_archive_zh.json", "returns_desk.json", "manual_audit.json")
P7_KS = (2, 3, 4)


def example_text(name: str) -> str:
    return resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")


def load_example(name: str) -> list[ResolvedCase]:
    return parse_cases(name, example_text(name))


def score_example(name: str, settings: Settings = Settings(ks=P7_KS)) -> Report:
    cases = load_example(name)
    return score_cases(cases, Judgments(make_judge("curated", cases)), settings)


def write_examples(directory: str | Path) -> list[Path]:
    """Copy the example case files into `directory` so they can be read, edited and scored."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in EXAMPLE_FILES:
        (out / name).write_text(example_text(name), encoding="utf-8")
        written.append(out / name)
    return written


@dataclass
class ExampleFigures:
    p7: Report
    p7_zh: Report
    returns_desk: Report
    unknown_source_error: str
    no_citations: Report
    manual_audit: Report


def _desk_variant(edit) -> str:
    """The returns desk case with its Original answer edited, as the seed invites the reader to do."""
    case = json.loads(example_text("returns_desk.json"))
    original = next(a for a in case["answers"] if a["id"] == "original")
    edit(original)
    case["answers"] = [original]
    return json.dumps(case, ensure_ascii=False, indent=1)


def _cite_s99(answer: dict) -> None:
    answer["statements"][0]["citations"] = ["S99"]


def _drop_citations(answer: dict) -> None:
    answer["system"] = "No citations"
    for st in answer["statements"]:
        st["citations"] = []


def run_examples() -> ExampleFigures:
    try:
        parse_cases("returns_desk.json (C1 cites S99)", _desk_variant(_cite_s99))
    except InputError as err:
        unknown = str(err)
    else:  # pragma: no cover - the example is built to fail
        raise AssertionError("S99 should be an unknown source")
    no_cite_cases = parse_cases("returns_desk.json (no citations)", _desk_variant(_drop_citations))
    return ExampleFigures(
        p7=score_example("p7_archive.json"),
        p7_zh=score_example("p7_archive_zh.json"),
        returns_desk=score_example("returns_desk.json"),
        unknown_source_error=unknown,
        no_citations=score_cases(no_cite_cases, Judgments(make_judge("curated", no_cite_cases)), Settings(ks=P7_KS)),
        manual_audit=score_example("manual_audit.json"),
    )


def desk_line(system: str, ratios) -> str:
    """`Original: recall 2/4; precision 2/3`, the seed desk's own output shape."""
    precision = ratios[N.CITATION_PRECISION]
    shown = precision.counts() if precision.denominator else "n/a"
    return f"{system}: recall {ratios[N.CITATION_RECALL].counts()}; precision {shown}"


def p7_table(report: Report) -> list[str]:
    """The seed's table: citation presence, support S and coverage U per answer."""
    lines = ["| Answer | Citation presence | Support S | Coverage U |", "|---|---|---|---|"]
    for r in report.answers:
        ratios = r.ratios()
        lines.append(f"| {r.answer_id} | " + " | ".join(str(ratios[m]) for m in (N.CITATION_PRESENCE, N.SUPPORT, N.COVERAGE)) + " |")
    return lines


def render_examples(figures: ExampleFigures) -> str:
    lines = ["P7 archive (answers A, B, C; curated labels)", ""]
    lines += p7_table(figures.p7)
    retrieval = figures.p7.retrieval["p7"]
    ranking = ", ".join(figures.p7.cases[0].case.ranking or [])
    lines += ["", f"Ranking {ranking}; gold evidence D1, D3:"]
    lines += ["  " + " · ".join(f"recall@{k} {retrieval[f'recall@{k}'].counts()}" for k in P7_KS)]
    lines += ["  " + " · ".join(f"facts@{k} {retrieval[f'facts@{k}'].counts()}" for k in P7_KS)]

    lines += ["", "P7 archive in Chinese (answers parsed from raw text with [D1] markers)", ""]
    lines += p7_table(figures.p7_zh)

    lines += ["", "Returns desk (S1–S6; ALCE citation recall and precision)", ""]
    lines += [desk_line(r.system, r.ratios()) for r in figures.returns_desk.answers]
    lines.append("Unknown source: " + figures.unknown_source_error)
    lines.append(desk_line("No citations", figures.no_citations.answers[0].ratios()))

    audited = next(r for r in figures.manual_audit.answers if r.answer_id == "audited")
    lines += ["", "Manual audit (one sentence, three atomic claims)", ""]
    for c in audited.claims:
        lines.append(f"  {c.id} → [{', '.join(c.citations)}]: {c.judgment.label}. {c.judgment.explanation}")
    support = audited.ratios()[N.SUPPORT]
    lines.append(f"  {int(support.numerator)} of {int(support.denominator)} claims fully supported "
                 f"(support {support}); every claim carried a citation.")
    lines += ["", f"judge: {figures.p7.judge_signature} (curated labels shipped with the examples)"]
    return "\n".join(lines)
