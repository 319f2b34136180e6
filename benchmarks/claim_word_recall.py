"""How well the calibration's second feature, claim-word recall, ranks supported pairs above the rest on
each measuring set, by language: read as written (what the `model` judge's calibration reads), and read
through the plain reading's word groups and unit forms.

    python benchmarks/claim_word_recall.py [--sets dev,test,plain,holdout,fresh5,…,hard]

The judge's calibration weighs this recall against the model's p(full) (judges/calibration.py); where the
recall ranks pairs below chance, a judge that leans on it cannot be right. Prints ROC AUC, full vs the
rest, of the recall computed over a row's passages joined (the judge reads its best window instead).
"""

from __future__ import annotations

import argparse

from judge_v2 import rows_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="dev,test,plain,holdout,fresh5,fresh6,fresh7,fresh8,fresh9,hard")
    ap.add_argument("--data", default=None, help="the shared data folder")
    args = ap.parse_args()
    from citeaudit.judges.calibration import claim_word_recall
    from citeaudit.judges.plain_words import canonical, unit_forms
    from citeaudit.quantities import normalise
    from citeaudit.stats import roc_auc
    from citeaudit.text import has_han

    def read(text: str) -> str:
        return canonical(unit_forms(normalise(text)))

    print(f"{'set':10} {'lang':4} {'rows':>5}  {'AUC as written':>14}  {'AUC as read':>11}")
    for name in args.sets.split(","):
        rows = rows_of(name, args.data, 0)
        for lang in ("en", "zh"):
            chosen = [r for r in rows if (r.lang or ("zh" if has_han(r.claim) else "en")) == lang]
            gold = [r.label == "full" for r in chosen]
            if len(set(gold)) < 2:
                continue
            evidence = [" ".join(p.text for p in r.passages) for r in chosen]
            written = roc_auc(gold, [claim_word_recall(r.claim, e) for r, e in zip(chosen, evidence)])
            as_read = roc_auc(gold, [claim_word_recall(read(r.claim), read(e)) for r, e in zip(chosen, evidence)])
            print(f"{name:10} {lang:4} {len(chosen):5}  {written:14.3f}  {as_read:11.3f}")


if __name__ == "__main__":
    main()
