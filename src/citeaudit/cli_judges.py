"""Commands for measuring judges against human labels (attached to the main `citeaudit` group).

    citeaudit validate-judge DATA.jsonl --judge embedding:0.85 [--predictions OUT.jsonl] [--format text|json]
    citeaudit judge-data export OUT_DIR [--data-dir DIR] [--train]
    citeaudit calibrate-judge DATA.jsonl [--model DIR] [--exclude-source S] [--dry-run]
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .records import LABELS


def _fmt(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _line(name: str, m: dict[str, Any]) -> str:
    return (f"{name:<16} {m['n']:>6} {m['n_full']:>6}  {_fmt(m['balanced_accuracy'], m['balanced_accuracy_ci']):<24}"
            f"{_fmt(m['auc'], m['auc_ci']):<24}{_fmt(m['kappa'], m['kappa_ci'])}")


def render_text(result: dict[str, Any]) -> str:
    """A readable table: overall, per source, per language, then the confusion matrix."""
    head = f"{'':<16} {'n':>6} {'full':>6}  {'BAcc (full vs rest)':<24}{'AUC':<24}kappa (4 labels)"
    lines = [f"judge: {result.get('judge', '?')}", "", head, _line("all", result)]
    for key, title in (("by_source", "source"), ("by_lang", "language")):
        lines += ["", f"by {title}:"] + [_line(name, m) for name, m in result[key].items()]
    lines += ["", "confusion (rows: gold, columns: predicted):",
              f"{'':<12}" + "".join(f"{p:>12}" for p in LABELS)]
    for g in LABELS:
        lines.append(f"{g:<12}" + "".join(f"{result['confusion'][g][p]:>12}" for p in LABELS))
    best = result.get("best_threshold")
    if best:
        lines += ["", f"threshold maximising BAcc on this data: {best['threshold']:.4f} "
                      f"(BAcc {best['balanced_accuracy']:.3f}); choose it on dev, report it on test"]
    lines.append("")
    lines.append("intervals: bootstrap 95 % (percentile, fixed seed)")
    return "\n".join(lines) + "\n"


@click.command("validate-judge")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--judge", "judge_name", required=True, help="judge name, e.g. embedding or embedding:0.85")
@click.option("--predictions", type=click.Path(dir_okay=False), help="write each row's predicted label and score here")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--resamples", default=1000, show_default=True, help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="bootstrap seed")
def validate_judge_cmd(data, judge_name, predictions, fmt, resamples, seed):
    """Measure a judge on human-labelled DATA rows (JSONL: id, claim, passages, label, source, lang)."""
    from .judges import make_judge
    from .validation import load_rows, validate_judge

    rows = load_rows(data)
    judge = make_judge(judge_name, [])
    done = [0]

    def progress(k: int) -> None:
        done[0] += k
        if sys.stderr.isatty():
            click.echo(f"\rjudged {done[0]}/{len(rows)}", err=True, nl=False)

    result = validate_judge(rows, judge, resamples=resamples, seed=seed, predictions=predictions,
                            progress=progress)
    if sys.stderr.isatty():
        click.echo("", err=True)
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        click.echo(render_text(result), nl=False)
    if predictions:
        click.echo(f"predictions written to {predictions}", err=True)


@click.group("judge-data")
def judge_data_cmd():
    """Human-labelled data for building and measuring judges."""


@judge_data_cmd.command("export")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--data-dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="folder of the public sets (default: shared/data beside the project, or $CITEAUDIT_DATA_DIR)")
@click.option("--train", "include_train", is_flag=True, help="also write train.jsonl")
def export_cmd(out_dir, data_dir, include_train):
    """Write the dev and test splits (split by claim: no claim in two splits) as DATA rows."""
    from .training.data import DEFAULT_DATA_DIR, export_validation_sets

    counts = export_validation_sets(out_dir, data_dir or DEFAULT_DATA_DIR, include_train=include_train)
    for name, n in counts.items():
        click.echo(f"{out_dir}/{name}.jsonl: {n} rows")


@click.command("calibrate-judge")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--model", "model_dir", type=click.Path(file_okay=False, exists=True),
              help="an exported model directory (default: the shipped model)")
@click.option("--exclude-source", multiple=True, help="leave rows of this source out of the fit (repeatable)")
@click.option("--dry-run", is_flag=True, help="print the fit, write nothing")
def calibrate_judge_cmd(data, model_dir, exclude_source, dry_run):
    """Fit the model judge's calibration (p(full) and claim-word recall -> full or not) on labelled DATA
    rows and write it as calibration.json into the model directory. Fit on dev rows, never test rows."""
    from pathlib import Path

    from .errors import JudgeSetupError
    from .judges.calibration import fit_model_calibration
    from .judges.model import shipped_model_dir
    from .records import file_sha256
    from .validation import load_rows

    rows = load_rows(data)
    target = Path(model_dir) if model_dir else shipped_model_dir()
    try:
        fitted, summary = fit_model_calibration(
            target, rows, exclude_source, described_as=f"{Path(data).name} sha256:{file_sha256(data)[:12]}")
    except ValueError as exc:
        raise JudgeSetupError(f"{data}: {exc}") from exc
    click.echo(json.dumps(summary, indent=1))
    if dry_run:
        click.echo("dry run: nothing written", err=True)
    else:
        from .training.export import record_calibration

        click.echo(f"wrote {record_calibration(target, fitted, summary)}", err=True)
        if (target / "model_card.json").exists():
            click.echo(f"recorded the calibration in {target / 'model_card.json'} and MODEL_CARD.md", err=True)


commands = [validate_judge_cmd, judge_data_cmd, calibrate_judge_cmd]
