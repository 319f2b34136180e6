"""How far `citeaudit repair` gets on real answers and on the worked examples (docs/repair.md).

For ExpertQA answers (Malaviya et al., 2024; read with `--from expertqa`) and the worked examples, with
the shipped `model` judge: how many claims the judge finds unsupported, how many get a suggestion, how
many judgments the search reads per claim searched, and the time. Then each suggestion is checked
against the human labels the cases carry, where they cover it: ExpertQA's experts labelled each claim
against the evidence it cited only, so a suggestion naming another passage is covered only when the
same claim text, with that evidence, was labelled elsewhere; the worked examples' curated labels cover
most of their candidates. The same cases are repaired with the `curated` judge too (the labels as the
judge): every candidate set without a label is skipped, never guessed.

    .venv/bin/python benchmarks/repair_suggestions.py [--data FILE] [--answers 40] [--candidates 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from citeaudit.errors import UnlabelledPair
from citeaudit.examples import load_example
from citeaudit.files.loading import load_cases
from citeaudit.judges import CuratedJudge, judgment_source
from citeaudit.metrics import Settings
from citeaudit.parse.resolve import Reading
from citeaudit.run.repair import RepairOptions, repair_cases, repair_settings

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "expertqa" / "rand_val.jsonl"
SUGGESTED = ("replace", "add", "drop")


def first_lines(path: Path, n: int, folder: Path) -> Path:
    out = folder / f"{path.stem}-{n}.jsonl"
    with open(path, encoding="utf-8") as src:
        out.write_text("".join(line for _, line in zip(range(n), src)), encoding="utf-8")
    return out


def measure(name: str, cases, judge: str, options: RepairOptions) -> None:
    settings = repair_settings(Settings(invalid_citations="count"))
    judgments = judgment_source(judge, cases)
    start = time.perf_counter()
    repaired = repair_cases(cases, judgments, settings, options)
    seconds = time.perf_counter() - start
    claims = [c for r in repaired.before.answers for c in r.claims]
    unsupported = [c for c in claims if c.judgment is not None and not c.supported]
    records = [r for found in repaired.repairs.values() for r in found.values()]
    searched = [r for r in records if r.action != "budget_spent"]
    actions = repaired.actions()
    suggested = [r for r in records if r.action in SUGGESTED]
    fixes = [r for r in suggested if r.label != "full"]  # for an unsupported claim (not a trim)
    answers = len(repaired.before.answers)
    print(f"{name} — judge {judge.split(':')[0]}, {options.render()}")
    print(f"  {answers} answers, {len(claims)} claims; {len(unsupported)} unsupported by the judge "
          f"({sum(c.label == 'uncertain' for c in unsupported)} of them uncertain)")
    kinds = "".join(f"{a} {actions[a]}; " for a in SUGGESTED if actions[a])
    print(f"  suggestions for unsupported claims: {len(fixes)}/{len(unsupported)} ({kinds}trims of supported "
          f"claims {len(suggested) - len(fixes)}); no supporting passage found {actions['none_found']}; "
          f"budget spent {actions['budget_spent']}")
    per_claim = repaired.searched / len(searched) if searched else 0.0
    print(f"  search: {repaired.searched} judgments read ({per_claim:.1f} per claim searched), "
          f"{repaired.skipped} skipped without a label, {repaired.unsure} uncertain never offered; "
          f"judge asked {repaired.asked} pairs in all; {seconds:.1f} s ({seconds / max(answers, 1):.2f} s per answer)")
    return repaired, fixes


def against_labels(cases, repaired, fixes) -> None:
    """Each suggestion, checked against the human labels where they cover it: those for unsupported
    claims, then the trims (the set kept after dropping citations that earned no credit)."""
    labels = CuratedJudge.from_cases(cases)
    by_case = {rc.id: rc for rc in cases}
    claims = {(r.case_id, r.answer_id): {(c.statement, c.index): c for c in r.claims} for r in repaired.before.answers}
    tally = {True: [0, 0, 0], False: [0, 0, 0]}  # is a fix -> [suggestions, covered by a label, labelled full]
    for (case, answer), found in repaired.repairs.items():
        for at, repair in found.items():
            if repair.action not in SUGGESTED:
                continue
            counts = tally[repair in fixes]
            counts[0] += 1
            claim = claims[(case, answer)][at]
            try:
                label = labels.judge(claim.text, by_case[case].cited(repair.suggested)).label
            except UnlabelledPair:
                continue
            counts[1] += 1
            counts[2] += label == "full"
    for fix, what in ((True, "suggestions for unsupported claims"), (False, "trims")):
        n, covered, full = tally[fix]
        print(f"  against the human labels, {what}: {covered} of {n} covered by a label; {full} of those labelled full")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--answers", type=int, default=40, help="ExpertQA lines read (one answer each)")
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args()
    options = RepairOptions(candidates=args.candidates, budget=args.budget)

    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = first_lines(args.data, args.answers, Path(folder))
        expertqa = load_cases([str(path)], Reading(invalid_citations="count"), "expertqa")
    for judge in ("model", "curated"):
        repaired, fixes = measure(f"ExpertQA {args.data.name}, first {args.answers} lines", expertqa, judge, options)
        if judge == "model":
            against_labels(expertqa, repaired, fixes)
    examples = [rc for name in ("returns_desk.json", "p7_archive.json", "manual_audit.json") for rc in load_example(name)]
    repaired, fixes = measure("worked examples (returns desk, P7 archive, manual audit)", examples, "model", options)
    against_labels(examples, repaired, fixes)


if __name__ == "__main__":
    main()
