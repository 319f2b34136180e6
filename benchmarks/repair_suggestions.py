"""How far `citeaudit repair` gets on real answers and on the worked examples (docs/repair.md).

For ExpertQA answers (Malaviya et al., 2024; read with `--from expertqa`) and the worked examples, with
the shipped `model` judge: how many claims the judge finds unsupported, how many get a suggestion (and how
many a review: the judge not sure, nothing applied), how many judgments the search reads per claim
searched, and the time. Then each suggestion is checked against the human labels the cases carry, where
they cover it: a citation taken away ("cite instead") must not be one the labels call supporting (`full`
or `partial` alone), and a suggested set is confirmed when the labels call it `full`; a review is counted
by the label of what the claim cites. ExpertQA's experts labelled each claim against the evidence it cited
only, so the cited passages are labelled and a suggested one only when the same claim text, with that
evidence, was labelled elsewhere; the worked examples' curated labels cover most of their candidates. The
same ExpertQA cases are repaired with the `curated` judge too (the labels as the judge): every candidate
set without a label is skipped, never guessed.

    .venv/bin/python benchmarks/repair_suggestions.py [--data FILE] [--answers 40] [--candidates 3] [--store DB]

`--store DB` records the model's judgments, so that a second run (of another tree, say) reads them and
differs only by what the search does with them.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
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


def measure(name: str, cases, judge: str, options: RepairOptions, store: Path | None = None):
    settings = repair_settings(Settings(invalid_citations="count"))
    judgments = judgment_source(judge, cases, store=store if judge == "model" else None)
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
          f"claims {len(suggested) - len(fixes)}); to review {actions['review']}; no supporting passage found "
          f"{actions['none_found']}; budget spent {actions['budget_spent']}")
    per_claim = repaired.searched / len(searched) if searched else 0.0
    print(f"  search: {repaired.searched} judgments read ({per_claim:.1f} per claim searched), "
          f"{repaired.skipped} skipped without a label, {repaired.unsure} uncertain never applied; "
          f"judge asked {repaired.asked} pairs in all; {seconds:.1f} s ({seconds / max(answers, 1):.2f} s per answer)")
    return repaired


def against_labels(cases, repaired) -> None:
    """Each suggestion and review, checked against the human labels where they cover it."""
    labels = CuratedJudge.from_cases(cases)
    by_case = {rc.id: rc for rc in cases}
    claims = {(r.case_id, r.answer_id): {(c.statement, c.index): c for c in r.claims} for r in repaired.before.answers}

    def label(text: str, rc, ids) -> str | None:
        try:
            return labels.judge(text, rc.cited(ids)).label
        except UnlabelledPair:
            return None

    changes = covered = confirmed = 0
    taken, taken_covered, reviews = 0, 0, Counter()
    for (case, answer), found in repaired.repairs.items():
        rc = by_case[case]
        for at, repair in found.items():
            text = claims[(case, answer)][at].text
            if repair.action == "review":
                cited = label(text, rc, repair.original) or "unlabelled" if repair.original else "cites nothing"
                reviews[cited] += 1
            if repair.action not in SUGGESTED:
                continue
            changes += 1
            suggested = label(text, rc, repair.suggested)
            covered += suggested is not None
            confirmed += suggested == "full"
            if repair.action == "replace":
                alone = [label(text, rc, [p]) for p in repair.removed]
                taken_covered += all(a is not None for a in alone)
                taken += any(a in ("full", "partial") for a in alone)
    replaces = repaired.actions()["replace"]
    print(f"  against the human labels: cite instead {replaces}: {taken_covered} with every citation taken away "
          f"labelled alone, {taken} taking away one labelled full or partial (a swap the labels refute)")
    print(f"  suggestions that change the citations {changes}: {covered} with the set suggested labelled, "
          f"{confirmed} of those labelled full (confirmed)")
    shown = ", ".join(f"{k} {v}" for k, v in sorted(reviews.items()))
    print(f"  reviews {sum(reviews.values())}, by the label of what the claim cites: {shown or '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--answers", type=int, default=40, help="ExpertQA lines read (one answer each)")
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--store", type=Path, help="record the model's judgments here (read them when there)")
    args = parser.parse_args()
    options = RepairOptions(candidates=args.candidates, budget=args.budget)

    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = first_lines(args.data, args.answers, Path(folder))
        expertqa = load_cases([str(path)], Reading(invalid_citations="count"), "expertqa")
    for judge in ("model", "curated"):
        name = f"ExpertQA {args.data.name}, first {args.answers} lines"
        repaired = measure(name, expertqa, judge, options, args.store)
        if judge == "model":
            against_labels(expertqa, repaired)
    examples = [rc for name in ("returns_desk.json", "p7_archive.json", "manual_audit.json") for rc in load_example(name)]
    repaired = measure("worked examples (returns desk, P7 archive, manual audit)", examples, "model", options,
                       args.store)
    against_labels(examples, repaired)


if __name__ == "__main__":
    main()
