"""The `citeaudit` command line: one thin command per verb."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Sequence
from contextlib import ExitStack, contextmanager

import click

from citeaudit._version import __version__
from citeaudit.errors import CiteauditError, InputError, JudgeError
from citeaudit.cli.common import echo_text, read_log
from citeaudit.text import visible_controls

FORMATS = click.Choice(["text", "json", "markdown"])


def _parse_ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in value.split(",") if k.strip()}))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from None
    if not ks or min(ks) < 1:
        raise click.BadParameter("every k must be a positive integer")
    return ks


class _Group(click.Group):
    """Turns citeaudit's own errors into a clear message and its exit code (no traceback)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CiteauditError as err:
            message = f"citeaudit: bad input:\n{err}" if isinstance(err, InputError) else f"citeaudit: {err}"
            click.echo(visible_controls(message), err=True)
            ctx.exit(err.exit_code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="citeaudit")
def main() -> None:
    """Check cited answers: were the right documents retrieved, does each cited passage support its
    claim, and how many required facts does the answer convey with support?

    \b
    Start here:
      citeaudit examples                      the worked examples, scored
      citeaudit examples --write cases/       copy their case files to edit
      citeaudit score cases/p7_archive.json   score a case file (JSON or JSONL)
      citeaudit validate my_cases.jsonl       check input without scoring
      citeaudit schema                        the JSON Schema of a case

    Exit codes: 0 done, 2 bad input, 3 a judge could not judge or a recorded judgment is missing.
    """
    # A run allocates millions of small objects and frees few: with the default thresholds the cyclic
    # collector took about half the time of a large scoring (docs/performance.md). Collect less often.
    gc.set_threshold(50_000, 20, 100)


def _load(paths: Sequence[str], reading=None, fmt: str | None = None, labels_path: str | None = None,
          reader_options: Sequence[str] = ()):
    from citeaudit.files.loading import load_cases

    reading = reading or _reading("citeaudit", None, fmt)
    options = _reader_options(reader_options, fmt)
    for path in paths:
        if fmt != "ragas" and os.path.isdir(path):
            raise click.BadParameter(f"{path} is a folder; only --from ragas reads a folder (a saved datasets "
                                     "dataset)", param_hint="CASES")
    cases = load_cases(paths, reading, fmt, **options)
    if labels_path:
        from citeaudit.files.labelled import label_cases, load_rows

        cases, unmatched = label_cases(cases, load_rows(labels_path))
        if unmatched:
            click.echo(f"citeaudit: {len(unmatched)} row(s) of {labels_path} match no case's passages by id and text "
                       f"(first: {visible_controls(unmatched[0].id)})", err=True)
    return cases


def _reader_options(given: Sequence[str], fmt: str | None) -> dict[str, str]:
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


def _parse_metrics(value: str | None) -> tuple[str, ...] | None:
    from citeaudit.metrics.names import SELECTABLE

    if not value:
        return None
    chosen = tuple(dict.fromkeys(m.strip() for m in value.split(",") if m.strip()))
    unknown = [m for m in chosen if m not in SELECTABLE]
    if unknown or not chosen:
        raise click.BadParameter(f"unknown measure {', '.join(map(repr, unknown)) or '(none)'}; "
                                 f"choose from {', '.join(SELECTABLE)}")
    return chosen


def _reading(conventions: str, invalid_citations: str | None, fmt: str | None, claims: str = "rule",
             store: str | None = None, replay: bool = False):
    from citeaudit.parse.resolve import Reading

    # other tools' outputs are measured, not refused, when they cite nothing real
    default = "count" if fmt and fmt != "citeaudit" else "error"
    return Reading(conventions=conventions, invalid_citations=invalid_citations or default,
                   decomposer=_claim_splitter(claims, conventions, store, replay))


def _claim_splitter(spec: str, conventions: str, store: str | None, replay: bool):
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


def _format_names() -> list[str]:
    """--from's choices: the native format first, then every registered reader."""
    from citeaudit.files.readers import READERS

    return ["citeaudit", *READERS]


def _input_options(command):
    """--from, --conventions, --invalid-citations, --labels, --option, --claims: how a command reads its case files."""
    options = [
        click.option("--from", "source_format", type=click.Choice(_format_names()), default="citeaudit", show_default=True,
                     help="the input's format: citeaudit's cases, or another tool's files (docs/readers.md)"),
        click.option("--conventions", type=click.Choice(["citeaudit", "alce"]), default="citeaudit",
                     show_default=True,
                     help="alce: read and score answers exactly as ALCE's eval.py (docs/metrics.md)"),
        click.option("--invalid-citations", type=click.Choice(["error", "count"]), default=None,
                     help="a citation naming no passage: refuse the file (error; default for citeaudit files) "
                          "or count it as supporting nothing (count; default for --from readers)"),
        click.option("--labels", "labels_path", type=click.Path(dir_okay=False, exists=True),
                     help="human labels for the curated judge: labelled-pairs JSONL (the validate-judge format), "
                          "matched to each case's passages by id and text"),
        click.option("--option", "reader_options", multiple=True, metavar="KEY=VALUE",
                     help="an option of the --from reader (repeatable; see docs/readers.md)"),
        click.option("--claims", default="rule", show_default=True, metavar="SPEC",
                     help="who splits raw answers' statements into claims: rule, none, or openai:MODEL (a "
                          "language model; its splits are recorded in --store and replayed with --replay; "
                          "docs/parsing.md)"),
    ]
    for option in reversed(options):
        command = option(command)
    return command


JUDGE_HELP = "judge that labels (claim, cited passages) pairs; see `citeaudit judges`"
DETAILS = click.option("--details", is_flag=True,
                       help="text format: every case and answer (default: the summary and the 10 answers with "
                            "the lowest support)")


@main.command()
@click.argument("cases", nargs=-1, required=True, type=click.Path())
@click.option("--judge", "judge_name", default="curated", show_default=True, help=JUDGE_HELP)
@click.option("--store", type=click.Path(dir_okay=False),
              help="SQLite file of recorded judgments: read first, new judgments written to it")
@click.option("--replay", is_flag=True, help="judge only from --store; a missing judgment is an error")
@click.option("--k", "ks", default="1,3,5,10", show_default=True, callback=lambda c, p, v: _parse_ks(v),
              help="cut-offs for recall@k and facts@k")
@click.option("--alce-zero-precision", is_flag=True,
              help="score precision 0 for an answer without citations (ALCE eval.py); default n/a")
@click.option("--format", "fmt", type=click.Choice([*FORMATS.choices, "jsonl"]), default="text", show_default=True,
              help="jsonl: one line per case as it is scored, then the summary (streamed: docs/performance.md)")
@click.option("--out", "out", type=click.Path(dir_okay=False),
              help="write the run log here (the source of truth for report, rescore, compare, review); a path "
                   "ending in .jsonl gets a streamed log, written as cases are scored")
@click.option("--metrics", "metrics", callback=lambda c, p, v: _parse_metrics(v),
              help="the measures to compute, comma-separated (default: all); the judge is asked only for the "
                   "pairs they need")
@click.option("--missing-labels", type=click.Choice(["error", "skip"]), default="error", show_default=True,
              help="a pair the curated judge has no label for: stop (error), or leave it unjudged and out of "
                   "every figure (skip)")
@DETAILS
@_input_options
def score(cases, judge_name, store, replay, ks, alce_zero_precision, fmt, out, metrics, missing_labels, details,
          source_format, conventions, invalid_citations, labels_path, reader_options, claims):
    """Score the answers in CASES (JSON or JSONL case files, or another tool's files with --from)."""
    import sys

    from citeaudit.judges import parse_judge
    from citeaudit.metrics import Settings
    from citeaudit.run.pipeline import Run
    from citeaudit.report.terminal import SummaryLines
    from citeaudit.run.outputs import DocumentLog, JsonLines, ResultsJson, StreamLog

    spec = parse_judge(judge_name)  # a bad spec stops here, before anything is read or judged
    if replay and not store:
        raise click.UsageError("--replay needs --store")
    streamed_log = (out or "").endswith(".jsonl")
    if streamed_log and fmt in ("json", "markdown"):
        raise click.UsageError(f"a streamed run log (--out {out}) goes with --format text (the summary) or jsonl; "
                               f"`citeaudit report {out}` renders it whole")
    _check_destinations(("--out", out), ("--store", store))
    reading = _reading(conventions, invalid_citations, source_format, claims, store, replay)
    settings = Settings(ks=ks, no_citation_precision="zero" if alce_zero_precision else "n/a",
                        conventions=reading.conventions, invalid_citations=reading.invalid_citations,
                        metrics=metrics, missing_labels=missing_labels)
    source = _case_source(cases, reading, source_format, labels_path, reader_options)
    outputs = [StreamLog(out) if streamed_log else DocumentLog(out)] if out else []
    if fmt == "jsonl":
        outputs.append(JsonLines(sys.stdout))
    elif fmt == "json":
        outputs.append(ResultsJson(sys.stdout))
    elif streamed_log:
        outputs.append(SummaryLines(echo_text))
    else:
        outputs.append(_terminal(fmt, details))
    with Run.judged(source, settings, reading, spec, store, replay, inputs=list(cases), reader=source_format) as run:
        with _progress(run.checked.answers, "scoring answers") as advance:
            run.write(outputs, advance)
    if out:
        click.echo(f"run log written to {out}", err=True)
    _note_fallbacks(reading)


def _terminal(fmt: str, details: bool):
    """The run's text or Markdown, printed as input text is (control characters shown, never markup)."""
    from citeaudit.report.terminal import TerminalReport

    return TerminalReport(fmt, details, lambda text: echo_text(text, nl=False))


def _note_fallbacks(reading) -> None:
    """Statements the --claims splitter left to its fallback, said on stderr."""
    note = getattr(reading.decomposer, "fallback_note", None)
    if note is not None and note():
        click.echo(f"citeaudit: claims: {note()}", err=True)


def _is_streamable(cases, source_format, labels_path) -> bool:
    from citeaudit.files.loading import streamable

    return streamable(cases, source_format) and not labels_path


def _case_source(cases, reading, source_format, labels_path, reader_options):
    """The cases of a run, read from the start each time they are asked for: citeaudit's JSON lines one
    case at a time, anything else loaded once."""
    from citeaudit.run.pipeline import read_cases

    if _is_streamable(cases, source_format, labels_path):
        return read_cases(cases, reading)
    loaded = _load(cases, reading, source_format, labels_path, reader_options)
    return lambda: loaded


def _check_destinations(*destinations: tuple[str, str | None]) -> None:
    """Refuse unwritable output paths before any work is done (option name, path or None)."""
    from citeaudit.files.destinations import check_destination

    for option, path in destinations:
        if path:
            check_destination(path, option)


@contextmanager
def _progress(total: int, what: str):
    """A progress bar with rate and time left, on stderr, only when stderr is a terminal."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeRemainingColumn)
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task):
            return Text(f"{task.speed:.1f}/s" if task.speed else "")

    columns = (TextColumn(what), BarColumn(), MofNCompleteColumn(), Rate(), TimeRemainingColumn())
    console = Console(stderr=True)
    with Progress(*columns, console=console, disable=not console.is_terminal, transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)


def _emit(results, signature, fmt: str, diagnosis=None, details: bool = False) -> None:
    """Print a run's results (and its diagnosis, when given) as JSON, Markdown or a terminal table
    (the summary and the answers with the lowest support; every answer with `details`)."""
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
        echo_text(text + ("\n" + diagnosis_markdown(diagnosis) if diagnosis is not None else ""), nl=False)
    else:
        print_text(results, signature, terminal_console(), details=details)
        if diagnosis is not None:
            echo_text(diagnosis_markdown(diagnosis), nl=False)


@main.command()
@click.argument("cases", nargs=-1, required=True, type=click.Path())
@click.option("--judge", "judge_name", default="curated", show_default=True, help=JUDGE_HELP)
@click.option("--store", type=click.Path(dir_okay=False), required=True, help="SQLite file to fill")
@click.option("--list", "list_path", type=click.Path(dir_okay=False),
              help="also write every judgment the metrics may need to this JSONL file")
@click.option("--all", "fill_all", is_flag=True,
              help="judge every listed pair up front, in batches (for model judges), not only those scoring reaches")
@_input_options
@click.option("--metrics", "metrics", callback=lambda c, p, v: _parse_metrics(v),
              help="judge only the pairs these measures need (comma-separated; default: all)")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="ray: judge every listed pair on a Ray cluster, in blocks (docs/distributed.md)")
@click.option("--address", help="with --engine ray: the cluster's HOST:PORT or ray://HOST:PORT (default: a local Ray)")
@click.option("--workers", type=click.IntRange(min=1), help="with --engine ray: judge actors (default: one per CPU)")
@click.option("--block-size", type=click.IntRange(min=1), default=256, show_default=True,
              help="with --engine ray: pairs per block (a block is judged by one actor and recorded at once)")
def prepare(cases, judge_name, store, list_path, fill_all, source_format, conventions, invalid_citations, labels_path,
            reader_options, metrics, engine, address, workers, block_size, claims):
    """Judge what scoring CASES needs and record it in --store.

    Safe to interrupt: each judgment is committed as it is made, and a rerun asks the judge only
    for what is missing. Then `citeaudit score CASES --judge NAME --store DB --replay` scores offline.
    With --claims openai:MODEL, the claim splits are recorded in --store too.
    """
    from citeaudit.judges import parse_judge
    from citeaudit.metrics import Settings
    from citeaudit.run.pipeline import prepare as run_prepare

    spec = parse_judge(judge_name)
    if engine != "ray" and (address or workers):
        raise click.UsageError("--address and --workers need --engine ray")
    _check_destinations(("--store", store), ("--list", list_path))
    reading = _reading(conventions, invalid_citations, source_format, claims, store)
    settings = Settings(conventions=reading.conventions, invalid_citations=reading.invalid_citations, metrics=metrics)
    source = _case_source(cases, reading, source_format, labels_path, reader_options)
    with ExitStack() as stack:
        fill = None
        if engine == "ray":
            from citeaudit.judges.ray_engine import fill_with_ray

            def fill(run, requests):  # every listed pair judged on Ray, recorded in the store
                advance = stack.enter_context(_progress(len(requests), "judging pairs on Ray"))
                fill_with_ray(run.judgments, requests, spec, list(run.cases()) if spec.reads_cases else [],
                              reading.conventions, address, workers, block_size, advance)

        advance = stack.enter_context(_progress(0, "judging pairs"))
        done = run_prepare(source, settings, reading, spec, store, list_path, fill_all, fill, advance)
    click.echo(f"{done.listed} pairs listed; judge asked {done.asked}; store {store} holds {done.stored} "
               "judgments", err=True)
    _note_fallbacks(reading)


@main.command()
@click.argument("cases", nargs=-1, required=True, type=click.Path())
@_input_options
def validate(cases, source_format, conventions, invalid_citations, labels_path, reader_options, claims):
    """Check CASES without scoring; every problem is listed as file:line: field: message.
    --claims is checked, but no statement is split with it: a split never makes a case valid or not."""
    _claim_splitter(claims, conventions, None, False)
    loaded = _load(cases, _reading(conventions, invalid_citations, source_format), source_format, labels_path,
                   reader_options)
    answers = sum(len(c.case.answers) for c in loaded)
    click.echo(f"ok: {len(loaded)} case(s), {answers} answer(s)")


@main.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--write", "write_dir", type=click.Path(file_okay=False),
              help="copy the example case files into this folder instead of scoring them")
@click.option("--desk", "open_desk", is_flag=True, help="then open the audit desk on them")
@click.option("--port", default=8765, show_default=True, type=int, help="the desk's port")
def examples(fmt, write_dir, open_desk, port):
    """Score the built-in worked examples: the P7 archive, the returns desk and the manual audit."""
    from citeaudit import examples as ex

    if write_dir:
        for path in ex.write_examples(write_dir):
            click.echo(str(path))
        return
    figures = ex.run_examples()
    if fmt == "json":
        from citeaudit.report.render import to_json

        click.echo(json.dumps({
            "p7_archive": to_json(figures.p7),
            "returns_desk": to_json(figures.returns_desk),
            "unknown_source_error": figures.unknown_source_error,
            "no_citations": to_json(figures.no_citations),
            "manual_audit": to_json(figures.manual_audit),
        }, ensure_ascii=False, indent=2))
    else:
        click.echo(ex.render_examples(figures))
    if open_desk:
        from citeaudit.desk import serve

        serve(desk_session(()), "127.0.0.1", port, open_browser=True)


@main.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--alce-zero-precision", is_flag=True, default=None,
              help="recompute with ALCE's 0-precision convention (default: as the run was scored)")
@DETAILS
def rescore(run, fmt, alce_zero_precision, details):
    """Recompute every metric of a run log from its recorded judgments, without judging again."""
    import sys
    from dataclasses import replace

    from citeaudit.run.outputs import ResultsJson
    from citeaudit.run.log import replayed_run

    log = read_log(run)
    settings = log.settings.to_settings()
    if alce_zero_precision:
        settings = replace(settings, no_citation_precision="zero")
    with replayed_run(log, settings) as rescored:
        rescored.write([ResultsJson(sys.stdout) if fmt == "json" else _terminal(fmt, details)])


@main.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["html", "markdown", "json", "text"]), default="html",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="write to this file (default: stdout)")
@DETAILS
def report(run, fmt, output, details):
    """Render a run log: a self-contained HTML page (opens offline), Markdown, JSON or a terminal table.
    Each format shows the per-answer tables, the claims beside their cited spans, and the diagnosis.
    Every format reads the log only: nothing is scored again."""
    _check_destinations(("--output", output))
    log = read_log(run)
    if fmt == "html":
        from citeaudit.report.html import render_html

        text = render_html(log)
    elif fmt == "text" and not output:
        _emit(log.results, log.signature, "text", log.diagnosis, details)
        return
    else:
        from citeaudit.report.render import diagnosis_markdown, to_markdown

        if fmt == "json":
            text = json.dumps({**log.results.model_dump(mode="json"),
                               "diagnosis": {k: [f.model_dump() for f in v] for k, v in log.diagnosis.items()}},
                              ensure_ascii=False, indent=2)
        elif fmt == "text":  # written to a file: the plain text a pipe gets
            from citeaudit.report.render import text_report

            text = text_report(log.results, log.signature, details) + diagnosis_markdown(log.diagnosis)
        else:
            text = to_markdown(log.results, log.signature) + "\n" + diagnosis_markdown(log.diagnosis)
    if output:
        from citeaudit.files.destinations import write_output

        write_output(output, text, "report")
        click.echo(f"report written to {output}", err=True)
    elif fmt in ("markdown", "text"):
        echo_text(text, nl=False)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("--a-system", help="compare this system of RUN_A (default: all its answers)")
@click.option("--b-system", help="compare this system of RUN_B (default: all its answers)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--allow-mismatch", is_flag=True,
              help="compare even when the runs' judges or conventions differ (the differences are printed)")
@click.option("--details", is_flag=True, help="text format: list every claim whose label changed (default: 20)")
def compare(run_a, run_b, a_system, b_system, fmt, allow_mismatch, details):
    """Two runs (or two systems of one run) side by side: each measure with raw counts and the
    difference on the answers both have (paired bootstrap interval), a plain reading of support and
    coverage, the agreement of their labels (kappa, confusion), and the claims whose label changed,
    most consequential first. Runs are named by their system, else their file.

    Runs scored with different judges, parsers or conventions are refused (exit 2): their figures
    differ for reasons other than the systems. --allow-mismatch compares them anyway, with a warning."""
    from citeaudit.run.compare import compare as do_compare, comparison_json, format_comparison, run_names

    log_a, log_b = read_log(run_a), read_log(run_b)
    name_a, name_b = run_names(run_a, log_a, a_system, run_b, log_b, b_system)
    result = do_compare(log_a, log_b, a_system, b_system, name_a, name_b, allow_mismatch=allow_mismatch)
    if fmt == "json":
        click.echo(json.dumps(comparison_json(result), ensure_ascii=False, indent=2))
    else:
        echo_text(format_comparison(result, every_claim=details))


@main.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--sources", "sources", type=click.Path(dir_okay=False), required=True,
              help="current sources: a case file, a JSON list of documents, or {\"sources\": [...]}")
@click.option("--rejudge", is_flag=True, help="judge the affected claims again against the current passages")
@click.option("--judge", "judge_name", default="curated", show_default=True, help=JUDGE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def review(run, sources, rejudge, judge_name, fmt):
    """List every answer and claim whose cited passage changed, vanished or moved since RUN."""
    from citeaudit.judges import make_judge
    from citeaudit.run.review import format_review, rejudge as do_rejudge, review as do_review
    from citeaudit.run.log import resolved_cases

    log = read_log(run)
    changes = do_review(log, sources)
    if rejudge and changes:
        from citeaudit.files.loading import parse_cases

        current = parse_cases(sources, open(sources, encoding="utf-8").read()) if _is_case_file(sources) else []
        do_rejudge(changes, log, sources, make_judge(judge_name, [*resolved_cases(log), *current]))
    if fmt == "json":
        click.echo(json.dumps([{
            "case": ch.case, "passage": ch.passage, "status": ch.status, "detail": ch.detail,
            "old": ch.old.identity() | {"text": ch.old.text},
            "new": (ch.new.identity() | {"text": ch.new.text}) if ch.new else None,
            "claims": [c.__dict__ for c in ch.claims],
        } for ch in changes], ensure_ascii=False, indent=2))
    else:
        echo_text(format_review(changes))
    failed = [c for ch in changes for c in ch.claims if c.rejudge_error]
    if failed:
        raise JudgeError(f"{len(failed)} affected claim(s) could not be judged again (listed above)")


def _is_case_file(path: str) -> bool:
    try:
        data = json.loads(open(path, encoding="utf-8").read())
    except (OSError, json.JSONDecodeError):
        return False
    first = data[0] if isinstance(data, list) and data else data
    return isinstance(first, dict) and "question" in first


@main.command()
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--judge", "judge_name", default=None,
              help="judge for edits (default: curated; for a run log, the run's own judge when it can be made "
                   "again here, else its recorded judgments only)")
@click.option("--store", type=click.Path(dir_okay=False), help="SQLite file of recorded judgments")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (keep it local)")
@click.option("--port", default=8765, show_default=True, type=int)
@click.option("--no-open", is_flag=True, help="do not open a browser")
@click.option("--allow-remote", is_flag=True,
              help="allow a non-loopback --host: anyone who reaches the port can edit (no authentication)")
def desk(inputs, judge_name, store, host, port, no_open, allow_remote):
    """Open the audit desk on a run log, on case files, or (with no INPUTS) on the built-in examples:
    follow each citation to its exact text, repair it, set human labels, and watch the scores change."""
    session = desk_session(inputs, judge_name, store)
    session.judge()  # built and checked before the port is bound: a judge that cannot be made is an error here
    from citeaudit.desk import serve

    serve(session, host, port, open_browser=not no_open, allow_remote=allow_remote)


def desk_session(inputs, judge_name: str | None = None, store: str | None = None):
    from citeaudit.desk import DeskSession

    if not inputs:
        from citeaudit.examples import EXAMPLE_FILES, load_example

        cases = [rc.case for name in EXAMPLE_FILES for rc in load_example(name)]
        return DeskSession(cases, judge_name or "curated", store, source="built-in examples")
    from citeaudit.run.log import is_run_log

    if len(inputs) == 1 and is_run_log(inputs[0]):
        from citeaudit.run.log import replay_judgments, resolved_cases

        from citeaudit.desk import JudgeStatus
        from citeaudit.desk.rebuild import rebuild_judge

        log = read_log(inputs[0])
        if judge_name:
            return DeskSession(log.cases, judge_name, store, log.settings.to_settings(), source=inputs[0])
        resolved = resolved_cases(log)
        replay = replay_judgments(log, resolved)
        # Edits are judged live by the run's own judge when it can be made again here; else replayed only.
        rebuilt = rebuild_judge(log.judge, resolved, log.judge_spec.spec if log.judge_spec else None,
                                log.settings.conventions)
        live = rebuilt.judge is not None
        # a curated judge is made again by the session as labels change; any other is used as made
        fixed = None if live and rebuilt.spec.labels_only else (rebuilt.judge or replay.judge)
        return DeskSession(log.cases, rebuilt.spec or "curated", store, log.settings.to_settings(), source=inputs[0],
                           judge=fixed, recorded=replay.store, judge_status=JudgeStatus(live, rebuilt.note))
    cases = [rc.case for rc in _load(inputs)]
    return DeskSession(cases, judge_name or "curated", store, source=", ".join(inputs))


@main.command()
def schema():
    """Print the JSON Schema of a case."""
    from citeaudit.records import Case

    click.echo(json.dumps(Case.model_json_schema(), indent=2, ensure_ascii=False))


@main.command()
def judges():
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


def _attach_commands() -> None:
    from citeaudit.cli.agree import commands as agree_commands
    from citeaudit.cli.export import commands as export_commands
    from citeaudit.cli.judges import commands as judge_commands
    from citeaudit.cli.verify import verify_cmd

    for command in [*judge_commands, *export_commands, *agree_commands]:
        main.add_command(command)
    main.add_command(verify_cmd)


_attach_commands()
