"""`citeaudit agree RUN --labels FILE`: how often a run's judge agrees with your own labels.

    citeaudit agree run.json --labels human.jsonl [--format text|json] [--resamples N] [--seed S]
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

# How many ids of unmatched labels the text output names (the JSON output names them all).
SHOWN_IDS = 10


def _figure(result: dict[str, Any], name: str) -> str:
    return "n/a" if result[name] is None else format_figure(result[name], result[f"{name}_ci"])


def _pair_line(pair: dict[str, Any]) -> str:
    cites = ", ".join(pair["citations"]) or "nothing"
    where = pair["claims"][0] + (f" (and {len(pair['claims']) - 1} more)" if len(pair["claims"]) > 1 else "")
    line = f"  [{where}] {pair['text']}\n    cites {cites}: human {pair['human']}, judge {pair['judge']}"
    return line + (f": {pair['explanation']}" if pair["explanation"] else "")


def render_text(result: dict[str, Any], run: str) -> str:
    """The figures, the confusion table, then every disagreement and what was left out."""
    from citeaudit.run.agree import BY_RULE, UNCERTAIN, UNJUDGED

    labels = result["labels"]
    lines = [f"run: {run} (judge: {result['judge']})",
             f"labels: {labels['file']} ({labels['format']}, {labels['rows']} labels)", "",
             f"{'pairs with both labels (n)':<30}{result['n']}",
             f"{'agreement (same label)':<30}{_figure(result, 'agreement')}",
             f"{'kappa (4 labels)':<30}{_figure(result, 'kappa')}",
             f"{'BAcc (full vs rest)':<30}{_figure(result, 'balanced_accuracy')}"]
    if result["undefined"]:
        lines.append(f"figures n/a: {result['undefined']}")
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
              f"intervals: bootstrap 95 % (percentile, {result['resamples']} resamples, seed {result['seed']})"]
    return "\n".join(lines) + "\n"


@click.command("agree")
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--labels", "labels_path", required=True, type=click.Path(dir_okay=False),
              help="human labels: labelled-pairs JSONL (the validate-judge format), the desk's review export, a "
                   "run scored with the curated judge, or case files with labels (another tool's with --from)")
@reader_options("the --labels file (another tool's files with labels, such as ExpertQA's experts')")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--resamples", default=1000, show_default=True, type=click.IntRange(min=1), help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="bootstrap seed")
def agree_cmd(run, labels_path, source_format, reader_options, fmt, resamples, seed):
    """How often the judge of the run log RUN agrees with your own labels: agreement, Cohen's kappa and
    balanced accuracy with bootstrap 95 % intervals, the confusion table, and every disagreement.
    A label matches a claim with the same text citing the same passages (ids and texts); only claims
    both the judge and a person judged count (what is left out is listed, with why)."""
    from citeaudit.run.agree import agree, load_labels

    parse_reader_options(reader_options, source_format)  # refused before anything is read
    log = read_log(run)
    labels = load_labels(labels_path, read_log,
                         lambda path: load_inputs([path], fmt=source_format, reader_options=reader_options),
                         source_format)
    result = agree(log, labels, resamples, seed)
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        echo_text(render_text(result, run), nl=False)


commands = [agree_cmd]
