"""`citeaudit adapt-judge LABELS... --out DIR`: the model judge adapted to a team's own labels
(training/adapt.py), written as a judge directory for `--judge model:path=DIR`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from citeaudit.cli.common import echo_text, input_options, load_inputs, parse_reader_options, reading_for


@click.command("adapt-judge")
@click.argument("labels", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=True),
              help="the folder to write the adapted judge into (must not exist, or be empty)")
@click.option("--base", "base_dir",
              help="the judge directory to adapt, or a shipped judge by name: judge-v1 (the default) or judge-v2 "
                   "(Chinese labels adapt judge-v2 itself)")
@click.option("--folds", default=3, show_default=True, type=click.IntRange(min=0),
              help="cross-validation folds for the before/after figures (0 or 1: none)")
@click.option("--epochs", default=2, show_default=True, type=click.IntRange(min=1),
              help="most passes over the labels (training stops early when the held-out loss rises)")
@click.option("--domain-only", is_flag=True,
              help="a judge for this domain alone: no replay of the original training mix, no forgetting check")
@click.option("--recalibrate-only", is_flag=True,
              help="refit the calibration and band (and a Chinese threshold where the embedding judge takes "
                   "Chinese pairs), but do not fine-tune the model")
@click.option("--threads", type=click.IntRange(min=1), help="CPU threads for torch and onnxruntime")
@click.option("--seed", default=0, show_default=True)
@click.option("--force", is_flag=True, help="replace OUT if it exists")
@click.option("--resample-by", type=click.Choice(["groups", "pairs"]), default="groups", show_default=True,
              help="what the intervals draw: whole groups of pairs that share a passage, question or claim (of "
                   "the forgetting check's dev rows: a claim or a passage), or single pairs")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@input_options
def adapt_judge_cmd(labels, out_dir, base_dir, folds, epochs, domain_only, recalibrate_only, threads, seed, force,
                    resample_by, fmt, source_format, conventions, invalid_citations, labels_path, reader_options,
                    claims):
    """Adapt the model judge to LABELS: labelled-pairs JSONL, the desk's review export, or case files whose
    labels are the team's (with --from for other tools' files). Fine-tunes the judge on CPU, refits its
    calibration and band, reports cross-validated agreement before and after, and writes the judge into
    OUT: use it with --judge model:path=OUT. Chinese pairs go to judge-v2, as the shipped judge's do: the
    Chinese labels adapt judge-v2 in the same run, held inside OUT; --base judge-v2 adapts judge-v2 alone,
    for both languages."""
    from citeaudit.files.destinations import check_destination
    from citeaudit.judges.model import CHINESE_MODEL_NAME, MODEL_NAME, model_dir, shipped_model_dir
    from citeaudit.training.adapt import Settings, adapt_judge
    from citeaudit.training.team_labels import load_team_labels

    fmt_from = None if source_format == "citeaudit" else source_format
    parse_reader_options(reader_options, fmt_from)  # a bad --option is refused before any work
    check_destination(out_dir, "--out", folder_output=True)
    if base_dir in (MODEL_NAME, CHINESE_MODEL_NAME) and not Path(base_dir).exists():
        base_dir = shipped_model_dir(base_dir)  # judge-v2 unpacked, once
    model_dir(base_dir)  # and a damaged judge directory, as --judge model:path=DIR is (judges/judge_dir.py)

    def read_cases(paths):
        return load_inputs(paths, reading_for(conventions, invalid_citations, source_format, claims), source_format,
                           labels_path, reader_options)

    team = load_team_labels(labels, fmt_from, load_cases=read_cases)
    settings = Settings(folds=folds if folds >= 2 else 0, epochs=epochs, seed=seed, threads=threads,
                        domain_only=domain_only, recalibrate_only=recalibrate_only, resample_by=resample_by)
    with _progress() as progress:
        report = adapt_judge(team, out_dir, base_dir, settings, progress, force=force)
    if fmt == "json":
        click.echo(json.dumps(report, ensure_ascii=False, indent=1))
        return
    echo_text(render_text(report))


def render_text(report: dict) -> str:
    from citeaudit.training.adapted_dir import plan_line, render_figures

    labels = report["labels"]
    plan = report["plan"]
    lines = [f"labels: {labels['pairs']} pairs ({labels['described_as']}): English {labels['english']['full']} full / "
             f"{labels['english']['not_full']} not; Chinese {labels['chinese']['full']} full / "
             f"{labels['chinese']['not_full']} not"
             + (f"; {labels['conflicting_pairs_left_out']} pairs with conflicting labels left out"
                if labels["conflicting_pairs_left_out"] else "")
             + "".join(f"; {n} pair{'s' if n != 1 else ''} left out whose passage is {why}"
                       for why, n in (labels.get("pairs_left_out_passage_not_text") or {}).items()),
             plan_line(report),
             *[f"  {reason}" for reason in plan["reasons"]]]
    lines += render_figures(report)
    lines.append(f"wrote {report['judge']['dir']} in {report['minutes']:.1f} min; use it with "
                 f"--judge {report['judge']['spec']}")
    return "\n".join(lines) + "\n"


class _progress:
    """A bar per stage on stderr when it is a terminal; a line per stage otherwise."""

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        self.live = console.is_terminal
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, disable=not self.live)
        self.bar.__enter__()
        self.tasks: dict[str, int] = {}
        return self.update

    def update(self, stage: str, done: int, total: int) -> None:
        if not stage:
            return
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(stage, total=total)
            if not self.live:
                click.echo(f"citeaudit: {stage} …", err=True)
        self.bar.update(self.tasks[stage], completed=done, total=total)

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)
        return False


commands = [adapt_judge_cmd]
