"""`citeaudit agree RUN --labels FILE`: how often a run's judge agrees with your own labels.

    citeaudit agree run.json --labels human.jsonl [--format text|json] [--resamples N] [--seed S]
    citeaudit agree base.json adapted.json --labels human.jsonl   (several judges on the same pairs)
    citeaudit agree run.json --labels experts.json          (a curated run, or case files with labels)
    citeaudit agree run.json --labels data.jsonl --from expertqa [--option KEY=VALUE]

The command reads its options, calls agree.py and prints; bad input is raised as citeaudit's errors,
which the main group turns into messages and exit code 2.
"""

from __future__ import annotations

import json
from typing import Any

import click

from citeaudit.cli.common import (confusion_lines, echo_text, format_figure, load_inputs, parse_reader_options,
                                  read_log, reader_options)
from citeaudit.intervals import what_was_drawn

# How many ids of unmatched labels the text output names (the JSON output names them all).
SHOWN_IDS = 10


def _figure(result: dict[str, Any], name: str) -> str:
    return "n/a" if result[name] is None else format_figure(result[name], result[f"{name}_ci"])


def _coverage(result: dict[str, Any]) -> str:
    if result["coverage"] is None:
        return "n/a (no pair judged)"
    return f"{result['n']}/{result['n_all']} ({100 * result['coverage']:.1f} %)"


def _figure_lines(result: dict[str, Any], suffix: str = "") -> list[str]:
    """n, agreement, kappa and BAcc, one a line: the confident pairs' (no suffix), or every pair's (`_all`)."""
    lines = [f"{'pairs with both labels (n)':<30}{result['n' + suffix]}",
             f"{'agreement (same label)':<30}{_figure(result, 'agreement' + suffix)}",
             f"{'kappa (4 labels)':<30}{_figure(result, 'kappa' + suffix)}",
             f"{'BAcc (full vs rest)':<30}{_figure(result, 'balanced_accuracy' + suffix)}"]
    if result["undefined" + suffix]:
        lines.append(f"figures n/a: {result['undefined' + suffix]}")
    return lines


def _pair_line(pair: dict[str, Any]) -> str:
    cites = ", ".join(pair["citations"]) or "nothing"
    where = pair["claims"][0] + (f" (and {len(pair['claims']) - 1} more)" if len(pair["claims"]) > 1 else "")
    line = f"  [{where}] {pair['text']}\n    cites {cites}: human {pair['human']}, judge {pair['judge']}"
    return line + (f": {pair['explanation']}" if pair["explanation"] else "")


def render_text(result: dict[str, Any], run: str) -> str:
    """The figures, the confusion table, then every disagreement and what was left out."""
    from citeaudit.run.agree import ALL, BY_RULE, UNCERTAIN, UNJUDGED

    lines = [f"run: {run} (judge: {result['judge']})", _labels_line(result["labels"]), "",
             "confident pairs only (a pair the judge was unsure of left out):", *_figure_lines(result), "",
             "every pair (unsure → best guess):", *_figure_lines(result, ALL), "",
             f"{'coverage (share not unsure)':<30}{_coverage(result)}", "", *_seen_lines(result["seen"])]
    lines += ["", *confusion_lines(result["confusion"], "human", "judge")]
    disagreements = result["disagreements"]
    lines += ["", f"disagreements ({len(disagreements)}):"] + [_pair_line(p) for p in disagreements]
    for reason in (UNJUDGED, UNCERTAIN, BY_RULE, "reviewers differ"):
        left = [p for p in result["not_counted"] if p["not_counted"] == reason]
        if left:
            lines += ["", f"not counted, {reason} ({len(left)}):"] + [_pair_line(p) for p in left]
    unmatched = result["unmatched_labels"]
    named = ", ".join(unmatched[:SHOWN_IDS]) + (", ..." if len(unmatched) > SHOWN_IDS else "")
    by_rule = result["unlabelled_by_rule"]
    lines += ["", f"human labels that matched no claim: {len(unmatched)}" + (f" ({named})" if unmatched else ""),
              f"claims of the run with no human label: {result['unlabelled_claims']}",
              *([f"  of which a rule labelled (they cite nothing, or name no passage; no judge was asked): {by_rule}"]
                if by_rule else []), "",
              _intervals_line(result)]
    return "\n".join(lines) + "\n"


def _intervals_line(result: dict[str, Any]) -> str:
    return (f"intervals: bootstrap 95 % (percentile, {result['resamples']} resamples, seed {result['seed']})"
            + what_was_drawn(result.get("resampling"), "pair"))


def _labels_line(labels: dict[str, Any]) -> str:
    return f"labels: {labels['file']} ({labels['format']}, {labels['rows']} labels)"


# the columns of the several-runs table: its rows are each run's confident pairs, then every pair
RUNS_HEAD = f"{'':<41}{'n':>4}  {'BAcc (full vs rest)':<22}{'agreement (same label)':<24}kappa (4 labels)"


def _runs_row(title: str, result: dict[str, Any], suffix: str) -> str:
    return (f"{title:<41}{result['n' + suffix]:>4}  {_figure(result, 'balanced_accuracy' + suffix):<22}"
            f"{_figure(result, 'agreement' + suffix):<24}{_figure(result, 'kappa' + suffix)}")


def _seen_lines(seen: dict[str, Any], indent: str = "") -> list[str]:
    """How many of the labelled claims the judge trained or was calibrated on; when that is known, every
    pair's figures on the claims it has not seen and on the rest, as rows of the several-runs table (its
    head given when `indent` is empty: the rows are not under that table)."""
    from citeaudit.judges.seen import mixed, seen_lines

    lines = seen_lines(seen, indent=indent)
    if mixed(seen):
        lines += [] if indent else [RUNS_HEAD]
        lines += [_runs_row(f"{indent}{part} claims, every pair", seen[part], "") for part in ("unseen", "seen")]
        reasons = dict.fromkeys(seen[part]["undefined"] for part in ("unseen", "seen") if seen[part]["undefined"])
        lines += [f"{indent}figures n/a: {reason}" for reason in reasons]
    return lines


def render_runs_text(result: dict[str, Any]) -> str:
    """Several runs on the same pairs: one table, each run's confident-only and every-pair figures and its
    coverage, then each later run's every-pair BAcc minus the first run's."""
    from citeaudit.run.agree import ALL

    runs = result["runs"]
    lines = [f"run {i}: {r['run']} (judge: {r['judge']})" for i, r in enumerate(runs, 1)]
    lines += [_labels_line(result["labels"]),
              f"the same pairs for every run: {result['pairs']} (labelled pairs that every run judged, unsure "
              "included)",
              f"left out: {result['left_out']} (labelled pairs some run judged and another did not)",
              "", RUNS_HEAD]
    for i, r in enumerate(runs, 1):
        lines += [_runs_row(f"run {i}  confident pairs only", r, ""),
                  _runs_row("       every pair (unsure → best guess)", r, ALL),
                  f"{'       coverage (share not unsure)':<47}{_coverage(r)}"]
        reasons = dict.fromkeys(r[name] for name in ("undefined", "undefined" + ALL) if r[name])
        lines += [f"       figures n/a: {reason}" for reason in reasons]
        lines += _seen_lines(r["seen"], "       ")
    if len(runs) > 1:
        lines += ["", "every pair's BAcc minus run 1's (paired bootstrap over the same pairs):"]
        for i, r in enumerate(runs[1:], 2):
            d = r["balanced_accuracy_all_difference"]
            shown = "n/a" if d is None else f"{d:+.3f}" + (
                "" if r["balanced_accuracy_all_difference_ci"] is None
                else " [{:+.3f}, {:+.3f}]".format(*r["balanced_accuracy_all_difference_ci"]))
            lines.append(f"run {i} - run 1  {shown}")
    lines += ["", _intervals_line(result)]
    return "\n".join(lines) + "\n"


@click.command("agree")
@click.argument("runs", metavar="RUN...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--labels", "labels_path", required=True, type=click.Path(dir_okay=False),
              help="human labels: labelled-pairs JSONL (the validate-judge format), the desk's review export, a "
                   "run scored with the curated judge, or case files with labels (another tool's with --from)")
@reader_options("the --labels file (another tool's files with labels, such as ExpertQA's experts')")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--resamples", default=1000, show_default=True, type=click.IntRange(min=1), help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="bootstrap seed")
@click.option("--resample-by", type=click.Choice(["groups", "pairs"]), default="groups", show_default=True,
              help="what the bootstrap draws: whole groups of pairs that share a claim or a passage, or single pairs")
def agree_cmd(runs, labels_path, source_format, reader_options, fmt, resamples, seed, resample_by):
    """How often the judge of the run log RUN agrees with your own labels: agreement, Cohen's kappa and
    balanced accuracy with bootstrap 95 % intervals, over the pairs the judge was sure of and over every
    pair (an unsure one at its best guess), with the coverage; the confusion table, and every
    disagreement. A label matches a claim with the same text citing the same passages (ids and texts);
    only claims both the judge and a person judged count (what is left out is listed, with why). Says how
    many of the labelled claims the judge trained or was calibrated on, with the figures on the others.
    With several runs (RUN1 RUN2 ...), one table over the same pairs, those every run judged, and each
    run's every-pair BAcc minus the first run's."""
    from citeaudit.run.agree import agree, agree_runs, load_labels

    parse_reader_options(reader_options, source_format)  # refused before anything is read
    logs = [(run, read_log(run)) for run in runs]
    labels = load_labels(labels_path, read_log,
                         lambda path: load_inputs([path], fmt=source_format, reader_options=reader_options),
                         source_format)
    several = len(logs) > 1
    result = (agree_runs(logs, labels, resamples, seed, resample_by) if several
              else agree(logs[0][1], labels, resamples, seed, resample_by))
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        echo_text(render_runs_text(result) if several else render_text(result, runs[0]), nl=False)


commands = [agree_cmd]
