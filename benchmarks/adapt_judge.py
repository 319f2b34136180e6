"""Adapting the model judge to a domain it never saw: adapt on N labelled pairs of it, measure on the rest.

    python benchmarks/adapt_judge.py ADAPT.jsonl TEST.jsonl --base DIR --out DIR [--exclude-source S]
                                     [--resample-by rows|groups]

ADAPT and TEST are labelled-pairs files (`citeaudit judge-data export`, or any team's rows) that share
no passage; benchmarks/adapt_files.py draws them from one source of the shared data. The adaptation is
`citeaudit adapt-judge` itself (training.adapt.adapt_judge), with its cross-validated report; then the
base judge and the adapted one judge every TEST row, as `validate-judge` does. `--exclude-source` keeps
the left-out source's rows out of the forgetting check as well, so nothing of that domain but the ADAPT
rows reaches the adaptation. Prints one JSON object: the adaptation's report (times per stage included)
and, per judge, BAcc (full vs rest) and kappa with intervals, AUC and the share uncertain on TEST. The
intervals draw single rows (pairs) unless `--resample-by groups`, as the tables in docs/model-judge.md
were measured.
"""

from __future__ import annotations

import argparse
import json
import time

from citeaudit.files.labelled import load_rows
from citeaudit.judges.model import ModelJudge
from citeaudit.training.adapt import Settings, adapt_judge
from citeaudit.training.team_labels import load_team_labels
from citeaudit.training.validation import evaluate, predict, uncertainty


def measure(rows, judge, resample_by: str) -> dict:
    started = time.monotonic()
    judged = predict(rows, judge)
    figures = evaluate(rows, judged, resample_by=resample_by)
    return {"n": figures["n"], "balanced_accuracy": figures["balanced_accuracy"], "resampling": figures["resampling"],
            "balanced_accuracy_ci": figures["balanced_accuracy_ci"], "kappa": figures["kappa"],
            "kappa_ci": figures["kappa_ci"], "auc": figures.get("auc"),
            "uncertain": (uncertainty(rows, judged).get("uncertain") or {}).get("share"),
            "seconds": round(time.monotonic() - started, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("adapt")
    ap.add_argument("test")
    ap.add_argument("--base", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--exclude-source", action="append", default=[])
    ap.add_argument("--folds", type=int, default=3)
    # rows: as docs/model-judge.md's adapting tables were measured; groups: as adapt-judge draws by default
    ap.add_argument("--resample-by", choices=["rows", "groups"], default="rows")
    args = ap.parse_args()
    team = load_team_labels([args.adapt])
    report = adapt_judge(team, args.out, args.base,
                         Settings(folds=args.folds, anchor_exclude=tuple(args.exclude_source),
                                  resample_by="groups" if args.resample_by == "groups" else "pairs"), force=True)
    test = load_rows(args.test)
    report["test"] = {"rows": len(test),
                      "base": measure(test, ModelJudge(path=args.base), args.resample_by),
                      "adapted": measure(test, ModelJudge(path=args.out), args.resample_by)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
