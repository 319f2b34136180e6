"""The claims a judge trained and was calibrated on, written into its directory (judges/seen.py), and the
cross-validated figures of `adapt-judge` on the team's claims its base judge has not seen.

A judge's attribution rows come from splits of the shared data (training/data.py splits it by claim):
judge-v1 trained on the train split of wice, expertqa and factcheck_gpt (English) and was calibrated
on their dev split. Its file is written so:

    python -m citeaudit.training.seen_claims src/citeaudit/models/judge-v1 \\
        --sources wice,expertqa,factcheck_gpt --languages en --splits train,dev

The whole split counts, although the training mix samples from it (balanced per source): a claim the
sample left out is counted as seen, so the figures on the unseen claims never rest on one the judge
may have read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citeaudit.errors import CiteauditError, TrainingError
from citeaudit.files.labelled import Row
from citeaudit.judges.seen import (NO_FILE, SeenClaims, claim_key, merged, mixed, read_seen, seen_lines,
                                   seen_summary, write_seen)
from citeaudit.training.data import LABEL_MAPPING, SPLITS, load_all, split_of

# what each split of the shared data is to a judge (training/train.py trains on train, calibrate.py fits on dev)
SPLIT_ROLES = {"train": "training", "dev": "calibration", "test": "measuring only"}


def trained_claims(data_dir: str | Path | None, sources: Sequence[str], languages: Sequence[str],
                   splits: Sequence[str]) -> set[str]:
    """The claim keys (judges/seen.py) of the shared data's attribution rows of `sources` in `languages`
    whose claim falls in one of `splits`."""
    for name, given, known in (("sources", sources, LABEL_MAPPING), ("languages", languages, ("en", "zh")),
                               ("splits", splits, SPLITS)):
        unknown = [g for g in given if g not in known]
        if unknown or not given:
            raise TrainingError(f"--{name}: one or more of {', '.join(known)}, got {', '.join(given) or 'none'}")
    return {claim_key(r["claim"]) for r in load_all(data_dir)
            if r["source"] in sources and r["lang"] in languages and split_of(r["claim"]) in splits}


def covers(sources: Sequence[str], languages: Sequence[str], splits: Sequence[str]) -> str:
    """What the header of the file says it covers: 'train split (training), dev split (calibration) of
    wice, expertqa, factcheck_gpt; en'."""
    parts = ", ".join(f"{s} split ({SPLIT_ROLES[s]})" for s in splits)
    return f"{parts} of {', '.join(sources)} (shared data, split by claim); {', '.join(languages)}"


def write_trained_on(model_dir: str | Path, sources: Sequence[str], languages: Sequence[str],
                     splits: Sequence[str], data_dir: str | Path | None = None) -> tuple[Path, int]:
    """Write `model_dir`'s trained_on.txt.gz from the shared data: (the file, how many claims)."""
    keys = trained_claims(data_dir, sources, languages, splits)
    return write_seen(model_dir, keys, covers(sources, languages, splits)), len(keys)


def add_claims(target: Path, base_dir: Path, claims: Sequence[str], what: str) -> Path | None:
    """Write `target`'s trained_on.txt.gz as `base_dir`'s claims and `claims`, `what` added to what it
    covers: an adapted judge (`adapt-judge` tunes and calibrates on every team label) or a recalibrated one
    (`calibrate-judge`). None, and no file written, when `base_dir` records none: what the judge has seen
    is then unknown, not just these claims."""
    base = read_seen(base_dir)
    if base is None:
        return None
    return write_seen(target, base.keys | {claim_key(c) for c in claims}, f"{base.covers}; {what}")


# --- adapt-judge: the cross-validated figures on the claims the base judge has not seen ------------------


def unseen_figures(base_dir: Path, rows: Sequence[Row], chinese_of: Sequence[bool], columns: dict[str, list],
                   figures: Callable[[list[int], list], dict[str, Any]],
                   chinese: tuple[str, Path] | None = None) -> dict[str, Any]:
    """How many of the team's claims the base judge has seen (`seen_summary`), and, when that is known,
    `figures(ix, column)` (adapt.figures_of: the pairs `ix` as `column` judged them) per route and judge
    over the pairs whose claim it has not seen (`unseen`) and over the rest (`seen`): the base judge's
    figures on claims it trained on flatter it. `chinese`: the name and directory of the judge the base
    hands its Chinese pairs to (judge-v2), whose claims count as seen too."""
    own = read_seen(base_dir)
    seen = own if own is not None else "the base judge's directory records no training claims"
    if chinese is not None:
        other = read_seen(chinese[1])
        seen = merged(seen, other if other is not None else NO_FILE, chinese[0])
    summary = seen_summary(seen, [r.claim for r in rows])
    if isinstance(seen, SeenClaims):
        for part, of_part in seen.parts(r.claim for r in rows).items():
            summary[part] = {}
            for route, zh in (("english", False), ("chinese", True)):
                ix = [i for i in of_part if chinese_of[i] == zh]
                if ix:
                    summary[part][route] = {name: figures(ix, judged)
                                            for name, judged in columns.items()
                                            if not (zh and name == "recalibrated")}
    return summary


def render_unseen(summary: dict[str, Any] | None, lines_of: Callable[[str, dict[str, dict]], list[str]]) -> list[str]:
    """adapt-judge's lines for `unseen_figures`: the sentence, then the unseen pairs' figures, each route's
    drawn by `lines_of(route, figures by judge)` as the other cross-validated figures are."""
    if summary is None:
        return []
    lines = seen_lines(summary, "The base judge")
    if not mixed(summary):
        return lines
    for part, title in (("unseen", "on the pairs whose claim it has not seen"), ("seen", "on the rest")):
        found = summary.get(part)
        if found:
            lines.append(f"Cross-validated, {title}:")
            lines += [line for route, judges in found.items() for line in lines_of(route, judges)]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m citeaudit.training.seen_claims",
                                     description="Write a judge directory's trained_on.txt.gz from the shared data.")
    parser.add_argument("model_dir", help="the judge directory")
    parser.add_argument("--sources", required=True, help=f"comma-separated: {', '.join(LABEL_MAPPING)}")
    parser.add_argument("--languages", required=True, help="comma-separated: en, zh")
    parser.add_argument("--splits", required=True, help="comma-separated: train, dev, test")
    parser.add_argument("--data-dir", default=None, help="the shared data (default: training/data.py finds it)")
    args = parser.parse_args(argv)
    try:
        file, n = write_trained_on(args.model_dir, *(getattr(args, a).split(",") for a in ("sources", "languages",
                                                                                          "splits")),
                                   data_dir=args.data_dir)
    except CiteauditError as err:
        parser.exit(err.exit_code, f"{parser.prog}: {err}\n")
    print(f"{file}: {n} claims")


if __name__ == "__main__":
    main()
