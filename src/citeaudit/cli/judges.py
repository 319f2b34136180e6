"""Commands for measuring judges against human labels (attached to the main `citeaudit` group).

    citeaudit validate-judge DATA.jsonl --judge embedding:0.85 [--predictions OUT.jsonl] [--format text|json]
                             [--resample-by groups|rows]
    citeaudit judge-data export OUT_DIR [--data-dir DIR] [--train]
    citeaudit calibrate-judge DATA.jsonl [--model DIR] [--exclude-source S] [--dry-run]
    citeaudit train-judge OUT_DIR [--leave-out S] [--steps N] [--time-budget MIN] [--resume] [--device cuda] ...
    citeaudit store check FILE

Each command only reads its options, calls the library (validation.py, training/) and prints; the
library raises citeaudit's errors, which the main group turns into messages and exit codes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from citeaudit.cli.common import confusion_lines, format_figure
from citeaudit.intervals import what_was_drawn
from citeaudit.training.bases import BASES, DEFAULT_BASE
from citeaudit.training.config import DEFAULT_WORK_DIR
from citeaudit.training.data import LABEL_MAPPING
from citeaudit.training.train import NLI_SET_CHOICES, PRECISIONS


def _line(name: str, m: dict[str, Any]) -> str:
    return (f"{name:<16} {m['n']:>6} {m['n_full']:>6}  {format_figure(m['balanced_accuracy'], m['balanced_accuracy_ci']):<24}"
            f"{format_figure(m['auc'], m['auc_ci']):<24}{format_figure(m['kappa'], m['kappa_ci'])}")


def _coverage_lines(result: dict[str, Any]) -> list[str]:
    """Which pairs the headline counts (every one, an unsure one at its best guess), the same figures over
    the pairs the judge was sure of (another judge is sure of other pairs), and the share of those."""
    if result.get("coverage") is None:
        return []
    sure = result["confident"]

    def figures(m: dict[str, Any], n: int) -> str:
        return (f"BAcc {format_figure(m['balanced_accuracy'], m['balanced_accuracy_ci'])}, "
                f"kappa {format_figure(m['kappa'], m['kappa_ci'])} on {n} pairs")

    return ["", f"every pair (unsure → best guess): {figures(result, result['n_all'])} (the tables' figures)",
            f"confident pairs only: {figures(sure, sure['n'])}",
            f"coverage (share not unsure): {sure['n']}/{result['n_all']} ({100 * result['coverage']:.1f} %)"]


def _seen_lines(result: dict[str, Any]) -> list[str]:
    """How many of the labelled claims the judge trained or was calibrated on, and the figures on the
    rows whose claim it has not seen beside those on the rest (same columns as the table above)."""
    from citeaudit.judges.seen import mixed, seen_lines

    seen = result.get("seen")
    if seen is None:
        return []
    lines = ["", *seen_lines(seen)]
    if mixed(seen):
        lines += ["by whether the judge has seen the row's claim (every row, unsure → best guess):",
                  _line("unseen claims", seen["unseen"]), _line("seen claims", seen["seen"])]
    return lines


def intervals_line(resampling: dict[str, Any] | None) -> str:
    """What the bootstrap intervals are and what they drew."""
    return "bootstrap 95 % (percentile, fixed seed)" + what_was_drawn(resampling, "row")


def render_text(result: dict[str, Any]) -> str:
    """A readable table: overall, what the judge has seen, per source, per language, then the confusion
    matrix."""
    head = f"{'':<16} {'n':>6} {'full':>6}  {'BAcc (full vs rest)':<24}{'AUC':<24}kappa (4 labels)"
    lines = [f"judge: {result.get('judge', '?')}", "", head, _line("all", result), *_coverage_lines(result),
             *_seen_lines(result)]
    for key, title in (("by_source", "source"), ("by_lang", "language")):
        lines += ["", f"by {title}:"] + [_line(name, m) for name, m in result[key].items()]
    lines += ["", *confusion_lines(result["confusion"], "gold", "predicted")]
    if result.get("risk_coverage"):
        lines += ["", f"risk–coverage over the {result['uncertain']['rows']} rows with p(support) (full vs rest; "
                      "the most confident first, by |p(support) - 0.5|):",
                  f"{'coverage':>10}{'n':>7}{'accuracy':>10}{'BAcc':>8}"]
        for point in result["risk_coverage"]:
            lines.append(f"{100 * point['coverage']:>9.0f}%{point['n']:>7}{format_figure(point['accuracy'], None):>10}"
                         f"{format_figure(point['balanced_accuracy'], None):>8}")
        at70 = next(p for p in result["risk_coverage"] if p["coverage"] == 0.7)
        unsure = result["uncertain"]
        lines += [f"accuracy at 70 % coverage: {format_figure(at70['accuracy'], None)}",
                  f"uncertain (in the judge's band): {unsure['n']} of {unsure['rows']} "
                  f"({100 * unsure['share']:.1f} %); accuracy of the rest {format_figure(unsure['accuracy_of_the_rest'], None)}"]
    best = result.get("best_threshold")
    if best:
        lines += ["", f"threshold maximising BAcc on this data: {best['threshold']:.4f} "
                      f"(BAcc {best['balanced_accuracy']:.3f}); choose it on dev, report it on test"]
    lines.append("")
    lines.append("intervals: " + intervals_line(result.get("resampling")))
    return "\n".join(lines) + "\n"


@click.command("validate-judge")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--judge", "judge_name", required=True, help="judge name, e.g. embedding or embedding:0.85")
@click.option("--predictions", type=click.Path(dir_okay=False), help="write each row's predicted label and score here")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--resamples", default=1000, show_default=True, type=click.IntRange(min=1),
              help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="bootstrap seed")
@click.option("--resample-by", type=click.Choice(["groups", "rows"]), default="groups", show_default=True,
              help="what the bootstrap draws: whole groups of rows that share a claim or a passage, or single rows")
def validate_judge_cmd(data, judge_name, predictions, fmt, resamples, seed, resample_by):
    """Measure a judge on human-labelled DATA rows (JSONL: id, claim, passages, label, source, lang); say how
    many of their claims the judge trained or was calibrated on (its directory's record), with the
    figures on the rows whose claim it has not seen beside the rest."""
    from citeaudit.judges import make_judge, parse_judge
    from citeaudit.judges.registry import chinese_judge_directory, judge_directory
    from citeaudit.judges.seen import seen_in
    from citeaudit.files.labelled import load_rows
    from citeaudit.training.validation import validate_judge

    spec = parse_judge(judge_name)  # a bad spec stops here, before the rows are read
    directory = judge_directory(spec)
    rows = load_rows(data)
    judge = make_judge(spec, [])
    # what the judge trained and was calibrated on, with judge-v2's claims where it judges the Chinese pairs
    seen = seen_in(directory, str(spec), chinese=chinese_judge_directory(judge.signature, directory))
    done = [0]

    def progress(k: int) -> None:
        done[0] += k
        if sys.stderr.isatty():
            click.echo(f"\rjudged {done[0]}/{len(rows)}", err=True, nl=False)

    result = validate_judge(rows, judge, resamples=resamples, seed=seed, predictions=predictions,
                            progress=progress, seen=seen, resample_by=resample_by)
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
              help="folder of the public sets (default: $CITEAUDIT_DATA_DIR, else the first shared/data "
                   "in the current folder or one above it)")
@click.option("--train", "include_train", is_flag=True, help="also write train.jsonl")
def export_cmd(out_dir, data_dir, include_train):
    """Write the dev and test splits (split by claim: no claim in two splits) as DATA rows."""
    from citeaudit.training.data import export_validation_sets

    counts = export_validation_sets(out_dir, data_dir, include_train=include_train)
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
    from citeaudit.errors import TrainingError
    from citeaudit.judges.model import shipped_model_dir
    from citeaudit.files.labelled import load_rows
    from citeaudit.records import file_sha256
    from citeaudit.training.calibrate import fit_model_calibration

    rows = load_rows(data)
    target = Path(model_dir) if model_dir else shipped_model_dir()
    try:
        fitted, summary = fit_model_calibration(
            target, rows, exclude_source, described_as=f"{Path(data).name} sha256:{file_sha256(data)[:12]}")
    except TrainingError as exc:  # name the file the rows came from
        raise TrainingError(f"{data}: {exc}") from exc
    click.echo(json.dumps(summary, indent=1))
    if dry_run:
        click.echo("dry run: nothing written", err=True)
    else:
        from citeaudit.training.export import record_calibration
        from citeaudit.training.seen_claims import add_claims

        click.echo(f"wrote {record_calibration(target, fitted, summary)}", err=True)
        if (target / "model_card.json").exists():
            click.echo(f"recorded the calibration in {target / 'model_card.json'} and MODEL_CARD.md", err=True)
        # the judge has now been calibrated on these claims (a row the fit skipped is counted too)
        seen = add_claims(target, target, [r.claim for r in rows if r.source not in exclude_source],
                          f"calibrate-judge on {Path(data).name} (sha256 {file_sha256(data)[:12]})")
        if seen:
            click.echo(f"added the rows' claims to {seen}", err=True)


@click.command("train-judge")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--extra-labels", type=click.Path(exists=True, dir_okay=False),
              help="a JSONL of reviewed rows (the validate-judge format) to add to the training data")
@click.option("--leave-out", type=click.Choice(sorted(LABEL_MAPPING)), help="drop one source from training")
@click.option("--time-budget", type=click.FloatRange(min=0, min_open=True), help="stop training after this many minutes")
@click.option("--steps", type=click.IntRange(min=1), default=3000, show_default=True)
@click.option("--fit-steps", is_flag=True,
              help="lower the planned steps to what fits --time-budget (measured over the first steps), so "
                   "the learning rate decays inside the budget")
@click.option("--resume", is_flag=True, help="continue from the checkpoint in the work dir")
@click.option("--data-dir", type=click.Path(exists=True, file_okay=False), help="the shared data folder")
@click.option("--work-dir", type=click.Path(file_okay=False), default=str(DEFAULT_WORK_DIR), show_default=True,
              help="checkpoints and the full-precision model (keep it outside the repository)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="auto: cuda when torch sees one, else cpu")
@click.option("--precision", type=click.Choice(PRECISIONS), help="default: fp32 on cpu, bf16 autocast on cuda")
@click.option("--batch-size", type=click.IntRange(min=1), help="default: 16 on cpu, 64 on cuda")
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=4e-5, show_default=True)
@click.option("--workers", type=click.IntRange(min=0),
              help="DataLoader workers that tokenise batches ahead (default: 0 on cpu, 6 on cuda)")
@click.option("--checkpoint", type=click.IntRange(min=1), default=100, show_default=True,
              help="save a checkpoint every N steps")
@click.option("--base", default=DEFAULT_BASE, show_default=True,
              help=f"the base model: {', '.join(BASES)}, or a directory with config.json, model.safetensors "
                   "and tokenizer.json")
@click.option("--nli-sets", type=click.Choice(sorted(NLI_SET_CHOICES)), default="standard", show_default=True,
              help="standard: judge-v1's six NLI sets; large: also FEVER-NLI test, CAD-SNLI dev and test")
@click.option("--unstated-licence-nli", is_flag=True,
              help="also RTE dev, whose licence is not stated (the model card says so)")
@click.option("--nli-ratio", type=click.FloatRange(min=0), default=3, show_default=True,
              help="generic NLI pairs per attribution row")
@click.option("--per-source-cap", type=click.IntRange(min=2), default=1600, show_default=True,
              help="attribution rows per source at most (half full, half not)")
@click.option("--mix", "mix_dir", type=click.Path(exists=True, file_okay=False),
              help="train on a saved mix (mix.jsonl[.xz] and manifest.json) instead of building one")
@click.option("--dev-rows", type=click.Path(exists=True, dir_okay=False),
              help="labelled rows (JSONL) for the fp32/int8 comparison and the calibration fit, instead of "
                   "the dev split of the shared data")
@click.option("--languages", type=click.Choice(["en", "en,zh"]), default="en", show_default=True,
              help="the attribution rows' languages (en,zh needs a multilingual base such as e5-small)")
@click.option("--nli-zh", type=click.IntRange(min=0), default=0, show_default=True,
              help="Chinese NLI pairs (CMNLI, Chinese-SNLI; licence not stated) in the mix")
@click.option("--derived", "derived_per_kind", type=click.IntRange(min=0), default=0, show_default=True,
              help="short plain pairs of each kind per language made from the train rows' passages "
                   "(training/augment.py)")
@click.option("--freeze-embeddings", is_flag=True,
              help="keep the base's word embeddings as they are (a multilingual base keeps its languages aligned)")
def train_judge_cmd(out_dir, extra_labels, leave_out, time_budget, steps, fit_steps, resume, data_dir, work_dir,
                    seed, device, precision, batch_size, lr, workers, checkpoint, base, nli_sets,
                    unstated_licence_nli, nli_ratio, per_source_cap, mix_dir, dev_rows, languages, nli_zh,
                    derived_per_kind, freeze_embeddings):
    """Fine-tune the model judge, export it as int8 ONNX into OUT_DIR (with a model card), then fit its
    calibration on the dev split (without the left-out source)."""
    from citeaudit.training import calibrate, export, train

    hf_dir = Path(work_dir) / "final"
    record = train.train_judge(
        hf_dir, data_dir=data_dir, extra_labels=extra_labels, leave_out=leave_out, steps=steps, seed=seed,
        time_budget_s=time_budget * 60 if time_budget else None, work_dir=work_dir, resume=resume, log=click.echo,
        device=device, precision=precision, batch_size=batch_size, lr=lr, workers=workers, checkpoint=checkpoint,
        base=base, nli_sets=nli_sets, unstated_licence_nli=unstated_licence_nli, nli_ratio=nli_ratio,
        per_source_cap=per_source_cap, mix=mix_dir, fit_steps=fit_steps, languages=tuple(languages.split(",")),
        nli_zh=nli_zh, derived_per_kind=derived_per_kind, freeze_embeddings=freeze_embeddings)
    rows = None
    if dev_rows:
        from citeaudit.files.labelled import load_rows

        rows = load_rows(dev_rows)
    texts = train.card_texts(record) if isinstance(record, dict) else {}
    result = export.export_judge(hf_dir, out_dir, work_dir=work_dir, data_dir=data_dir, record=record, log=click.echo,
                                 **({"rows": rows} if rows is not None else {}), **texts)
    click.echo(json.dumps(result.get("int8_vs_fp32"), indent=1))
    if rows is None:
        path, summary = calibrate.calibrate_on_dev(out_dir, data_dir, leave_out)
    else:
        from citeaudit.records import file_sha256

        fitted, summary = calibrate.fit_model_calibration(
            out_dir, rows, exclude_sources=[leave_out] if leave_out else [],
            described_as=f"{Path(dev_rows).name} sha256:{file_sha256(dev_rows)[:12]}")
        path = export.record_calibration(out_dir, fitted, summary)
    click.echo(f"calibration fitted on {summary['rows']} dev rows ({', '.join(summary['sources'])}): "
               f"{json.dumps(summary['in_sample_balanced_accuracy'])}; written to {path} and the model card")


@click.group("store")
def store_cmd():
    """Judgment stores: the SQLite files that `prepare` fills and `score --store` reads."""


@store_cmd.command("check")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False))
def store_check_cmd(path):
    """Check that FILE is a judgment store and that every row holds a sound judgment (it parses, is by
    the row's judge, its key matches its text, passages and judge, and it matches the digest it was
    recorded with: a judgment changed since is bad; rows recorded before digests were kept are counted
    apart, not bad), and every recorded claim split
    a sound split (its outcome holds claims or a fallback reason, its claims pass the split checks, and
    its key matches its statement, language and splitter). Prints the rows per judge and per splitter
    and every bad row with its key; exits 2 when FILE is not a store or any row is bad. Reads only."""
    from citeaudit.errors import StoreError
    from citeaudit.judges.store import JudgmentStore
    from citeaudit.parse.lm_decompose import check_recorded_splits
    from citeaudit.text import visible_controls

    store = JudgmentStore(path, create=False)
    try:
        found = store.check()
    finally:
        store.close()
    splits = check_recorded_splits(path)
    lines = [f"{path}: {found.rows} judgments, {len(found.bad)} bad"]
    lines += [f"  {judge}  {n}" for judge, n in sorted(found.judges.items())]
    if found.undigested:  # not bad: recorded by a citeaudit that kept no digests
        lines.append(f"{path}: {found.undigested} judgments without a digest (recorded before digests were kept): "
                     "a change to them cannot be told")
    if splits.rows:  # only stores an `openai:` claim splitter wrote to hold any
        lines.append(f"{path}: {splits.rows} claim splits, {len(splits.bad)} bad")
        lines += [f"  {splitter}  {n}" for splitter, n in sorted(splits.splitters.items())]
    if not found.ok:
        lines += ["bad rows (key: problem):"] + [f"  {key}: {problem}" for key, problem in found.bad]
    if splits.bad:
        lines += ["bad claim splits (key: problem):"] + [f"  {key}: {problem}" for key, problem in splits.bad]
    click.echo(visible_controls("\n".join(lines)))
    bad = len(found.bad) + len(splits.bad)
    if bad:
        raise StoreError(f"{path}: {bad} bad row{'s' if bad > 1 else ''}; delete those rows by key (with the "
                         "sqlite3 shell) or judge (or split) again into a new store")


@click.command("judges")
def judges_cmd():
    """List the available judges, each with its options: what each does, what it takes, its default and
    the environment variable that sets the default. A spec gives options as NAME:OPTION=VALUE,... ."""
    from citeaudit.judges import judge_kinds

    for name, kind in judge_kinds().items():
        click.echo(f"{name:12} {kind.description}")
        table = kind.options
        for option in table.options if table else ():
            where = table.written(option) if option.in_spec else "environment only"
            default = ("unset" if option.default is None else {True: "on", False: "off"}.get(option.default)
                       if isinstance(option.default, bool) else str(option.default))
            env = f", or {option.env}" if option.env else ""
            click.echo(f"  {option.name:<20} {option.help} ({option.kind.expected}; default {default}{env}; "
                       f"{where})")
        if table and table.example:
            click.echo(f"  e.g. {table.example}")


commands = [judges_cmd, validate_judge_cmd, judge_data_cmd, calibrate_judge_cmd, train_judge_cmd, store_cmd]
