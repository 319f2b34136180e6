"""What every command-line module shares: reading a run log (saying when it was edited) and printing
text that came from the input (control characters shown, never obeyed)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import contextmanager

import click

from citeaudit.records import LABELS
from citeaudit.text import visible_controls


def format_figure(value: float | None, ci: tuple[float, float] | None) -> str:
    """0.754 [0.671, 0.828], or "—" for no value."""
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def confusion_lines(table: dict[str, dict[str, int]], rows: str, columns: str) -> list[str]:
    """The confusion table as text, one line per row label."""
    lines = [f"confusion (rows: {rows}, columns: {columns}):", f"{'':<12}" + "".join(f"{p:>12}" for p in LABELS)]
    return lines + [f"{g:<12}" + "".join(f"{table[g][p]:>12}" for p in LABELS) for g in LABELS]


def echo_text(text: str, nl: bool = True, err: bool = False) -> None:
    """Print human-readable text to the terminal (stderr with `err`): a control character from the input
    (an escape sequence in a claim, a right-to-left override in an id) is shown, never obeyed."""
    click.echo(visible_controls(text), nl=nl, err=err)


def read_log(path: str):
    """Read a run log; say on stderr when it was edited after it was written (its figures are used
    as stored, whatever the command)."""
    from citeaudit.run.log import read_runlog

    log = read_runlog(path)
    warn_if_edited(path, log)
    return log


def warn_if_edited(path: str, log) -> None:
    """Say on stderr that the log (or a stream's trailer) at `path` was changed after it was written, and how
    it is known: a checksum that does not match or was removed, a stream's summary not its cases'."""
    if log.edited:
        click.echo(visible_controls(
            f"citeaudit: warning: {path} was changed after it was written ({log.edit_note}): figures are shown "
            f"as stored; `citeaudit rescore {path}` recomputes them from its judgments"), err=True)


# --- how commands read their input and show their output ----------------------------------------


FORMATS = click.Choice(["text", "json", "markdown"])


def parse_ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in value.split(",") if k.strip()}))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from None
    if not ks or min(ks) < 1:
        raise click.BadParameter("every k must be a positive integer")
    return ks


def load_inputs(paths: Sequence[str], reading=None, fmt: str | None = None, labels_path: str | None = None,
          reader_options: Sequence[str] = ()):
    from citeaudit.files.loading import load_cases
    from citeaudit.run.pipeline import check_splitter

    reading = reading or reading_for("citeaudit", None, fmt)
    options = parse_reader_options(reader_options, fmt)
    for path in paths:
        if fmt != "ragas" and os.path.isdir(path):
            raise click.BadParameter(f"{path} is a folder; only --from ragas reads a folder (a saved datasets "
                                     "dataset)")
    cases = load_cases(paths, reading, fmt, **options)
    check_splitter(reading)
    if labels_path:
        from citeaudit.files.labelled import label_cases, load_rows

        cases, unmatched = label_cases(cases, load_rows(labels_path))
        if unmatched:
            click.echo(f"citeaudit: {len(unmatched)} row(s) of {labels_path} match no case's passages by id and text "
                       f"(first: {visible_controls(unmatched[0].id)})", err=True)
    return cases


def parse_reader_options(given: Sequence[str], fmt: str | None) -> dict[str, str]:
    """--option KEY=VALUE pairs for the reader of --from FORMAT."""
    if given and (not fmt or fmt == "citeaudit"):
        raise click.BadParameter("reader options need --from FORMAT", param_hint="--option")
    options = {}
    for item in given:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--option")
        options[key.strip()] = value
    return options


def parse_metrics(value: str | None) -> tuple[str, ...] | None:
    from citeaudit.metrics.names import SELECTABLE

    if not value:
        return None
    chosen = tuple(dict.fromkeys(m.strip() for m in value.split(",") if m.strip()))
    unknown = [m for m in chosen if m not in SELECTABLE]
    if unknown or not chosen:
        raise click.BadParameter(f"unknown measure {', '.join(map(repr, unknown)) or '(none)'}; "
                                 f"choose from {', '.join(SELECTABLE)}")
    return chosen


def reading_for(conventions: str, invalid_citations: str | None, fmt: str | None, claims: str = "rule",
             store: str | None = None, replay: bool = False):
    from citeaudit.parse.resolve import Reading

    # other tools' outputs are measured, not refused, when they cite nothing real
    default = "count" if fmt and fmt != "citeaudit" else "error"
    return Reading(conventions=conventions, invalid_citations=invalid_citations or default,
                   decomposer=claim_splitter(claims, conventions, store, replay))


def claim_splitter(spec: str, conventions: str, store: str | None, replay: bool):
    """--claims SPEC: the splitter of raw answers' statements (None: the rule splitter, signature unchanged)."""
    if spec == "rule":
        return None
    if conventions == "alce":
        raise click.BadParameter("--conventions alce reads answers as ALCE's eval.py does, without splitting "
                                 "claims", param_hint="'--claims'")
    if replay and not store:
        raise click.UsageError("--replay needs --store")
    from citeaudit.errors import JudgeSetupError
    from citeaudit.judges.store import JudgmentStore
    from citeaudit.parse.lm_decompose import make_decomposer

    try:
        return make_decomposer(spec, store=JudgmentStore(store) if store else None, replay=replay)
    except JudgeSetupError as err:
        raise click.BadParameter(str(err), param_hint="'--claims'") from None


def format_names() -> list[str]:
    """--from's choices: the native format first, then every registered reader."""
    from citeaudit.files.readers import READERS

    return ["citeaudit", *READERS]


def _apply(command, options):
    """`command` with click `options`, shown in --help in the order listed."""
    for option in reversed(options):
        command = option(command)
    return command


def reader_options(what: str = "the input"):
    """--from FORMAT and --option KEY=VALUE: how a command reads another tool's files (`source_format` and
    `reader_options`; load them with `load_inputs`). `what` names the file they apply to, for --help."""
    def decorate(command):
        return _apply(command, [
            click.option("--from", "source_format", type=click.Choice(format_names()), default="citeaudit",
                         show_default=True,
                         help=f"the format of {what}: citeaudit's cases, or another tool's files (docs/readers.md)"),
            click.option("--option", "reader_options", multiple=True, metavar="KEY=VALUE",
                         help="an option of the --from reader (repeatable; see docs/readers.md)"),
        ])
    return decorate


def input_options(command):
    """--from, --option, --conventions, --invalid-citations, --labels, --claims: how a command reads its case files."""
    return reader_options()(_apply(command, [
        click.option("--conventions", type=click.Choice(["citeaudit", "alce"]), default="citeaudit",
                     show_default=True,
                     help="alce: read and score answers exactly as ALCE's eval.py (docs/metrics.md)"),
        click.option("--invalid-citations", type=click.Choice(["error", "count"]), default=None,
                     help="a citation naming no passage: refuse the file (error; default for citeaudit files) "
                          "or count it as supporting nothing (count; default for --from readers)"),
        click.option("--labels", "labels_path", type=click.Path(dir_okay=False, exists=True),
                     help="human labels for the curated judge: labelled-pairs JSONL (the validate-judge format), "
                          "matched to each case's passages by id and text"),
        click.option("--claims", default="rule", show_default=True, metavar="SPEC",
                     help="who splits raw answers' statements into claims: rule, none, or openai:MODEL (a "
                          "language model; its splits are recorded in --store and replayed with --replay; "
                          "docs/parsing.md)"),
    ]))


JUDGE_HELP = "judge that labels (claim, cited passages) pairs; see `citeaudit judges`"


def repair_search_options(command):
    """--candidates and --budget: how far a repair's search goes (run/repair.py; `repair` and `verify`). Their
    defaults are RepairOptions' (written out here: this module loads with every command)."""
    return _apply(command, [
        click.option("--candidates", type=click.IntRange(min=1), default=3, show_default=True,
                     help="repair: passages judged alone per claim (and at most as many pairs, when none supports "
                          "it alone)"),
        click.option("--budget", type=click.IntRange(min=1), default=1000, show_default=True,
                     help="repair: judgments the search may read in all (scoring not counted)"),
    ])


DETAILS = click.option("--details", is_flag=True,
                       help="text format: every case and answer (default: the summary and the 10 answers with "
                            "the lowest support)")


SIGNATURES = click.option("--signatures", "every_signature", is_flag=True,
                          help="text format: every measure's whole signature (default: the judge once and the "
                               "settings the signatures share; JSON, Markdown and HTML carry every signature)")


def terminal_output(fmt: str, details: bool, every_signature: bool = False):
    """The run's text or Markdown, printed as input text is (control characters shown, never markup)."""
    from citeaudit.report.terminal import TerminalReport

    return TerminalReport(fmt, details, lambda text: echo_text(text, nl=False), every_signature)


def note_fallbacks(reading) -> None:
    """Statements the --claims splitter left to its fallback, said on stderr."""
    note = getattr(reading.decomposer, "fallback_note", None)
    if note is not None and note():
        click.echo(f"citeaudit: claims: {note()}", err=True)


def is_streamable(cases, source_format, labels_path) -> bool:
    from citeaudit.files.loading import streamable

    return streamable(cases, source_format) and not labels_path


def case_source(cases, reading, source_format, labels_path, reader_options):
    """The cases of a run, read from the start each time they are asked for: citeaudit's JSON lines one
    case at a time, anything else loaded once."""
    from citeaudit.run.pipeline import read_cases

    parse_reader_options(reader_options, source_format)  # refused here too: a streamed file never reaches a reader
    if is_streamable(cases, source_format, labels_path):
        return read_cases(cases, reading)
    loaded = load_inputs(cases, reading, source_format, labels_path, reader_options)
    return lambda: loaded


def check_destinations(*destinations: tuple[str, str | None]) -> None:
    """Refuse unwritable output paths before any work is done (option name, path or None)."""
    from citeaudit.files.destinations import check_destination

    for option, path in destinations:
        if path:
            check_destination(path, option)


# A second bar, of the windows a model judge reads, shows for a batch of at least this many: a passage of
# megabytes is thousands of windows, minutes in which the bar of pairs does not move.
MANY_WINDOWS = 200


@contextmanager
def progress_bar(total: int, what: str, windows: bool = False):
    """A progress bar with rate and time left, on stderr, only when stderr is a terminal; with `windows`,
    a second bar under it for each batch of many windows a model judge reads."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeRemainingColumn)
    from rich.text import Text

    from citeaudit.judges.windows import windows_told

    class Rate(ProgressColumn):
        def render(self, task):
            return Text(f"{task.speed:.1f}/s" if task.speed else "")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), Rate(), TimeRemainingColumn())
    console = Console(stderr=True)
    with Progress(*columns, console=console, disable=not console.is_terminal, transient=True) as bar:
        task = bar.add_task(what, total=total)
        read: dict[str, int] = {}  # the windows' bar once a batch has needed it, and how far it got

        def told(done: int, total: int) -> None:
            if total < MANY_WINDOWS:
                return
            if "bar" not in read:
                read["bar"] = bar.add_task("  reading windows", total=total)
            elif done < read["done"]:  # another batch: its own bar, rate and time left
                bar.reset(read["bar"], total=total)
            read["done"] = done
            bar.update(read["bar"], completed=done, total=total)

        if windows:
            with windows_told(told):
                yield lambda n: bar.advance(task, n)
        else:
            yield lambda n: bar.advance(task, n)


def emit(results, signature, fmt: str, diagnosis=None, details: bool = False, claims_judged: bool = True,
         every_signature: bool = False) -> None:
    """Print a run's results (and its diagnosis, when given: `claims_judged` False when the run's
    measures judged no claim) as JSON, Markdown or a terminal table (the summary and the answers with
    the lowest support; every answer with `details`, every measure's whole signature with
    `every_signature`)."""
    from citeaudit.report.render import diagnosis_markdown, print_text, terminal_console, to_markdown

    if fmt == "json":
        if diagnosis is None:  # pydantic's own serialiser: several times faster than json.dumps of a dump
            click.echo(results.model_dump_json(indent=2))
            return
        data = results.model_dump(mode="json")
        data["diagnosis"] = {k: [f.model_dump(mode="json") for f in v] for k, v in diagnosis.items()}
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    elif fmt == "markdown":
        text = to_markdown(results, signature)
        echo_text(text + ("\n" + diagnosis_markdown(diagnosis, claims_judged) if diagnosis is not None else ""),
                  nl=False)
    else:
        print_text(results, signature, terminal_console(), details=details, every_signature=every_signature)
        if diagnosis is not None:
            echo_text(diagnosis_markdown(diagnosis, claims_judged), nl=False)
