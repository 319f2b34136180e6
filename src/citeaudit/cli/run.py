"""Commands that run judges over cases: score, prepare, validate, rescore, and the worked examples."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack

import click

from citeaudit.cli.common import (FORMATS, JUDGE_HELP, DETAILS, SIGNATURES, parse_ks, load_inputs, parse_metrics,
                                  reading_for, claim_splitter, input_options, terminal_output, note_fallbacks,
                                  case_source, check_destinations, progress_bar, echo_text, read_log)


@click.command()
@click.argument("cases", nargs=-1, required=True, type=click.Path())
@click.option("--judge", "judge_name", default="curated", show_default=True, help=JUDGE_HELP)
@click.option("--store", type=click.Path(dir_okay=False),
              help="SQLite file of recorded judgments: read first, new judgments written to it")
@click.option("--replay", is_flag=True, help="judge only from --store; a missing judgment is an error")
@click.option("--k", "ks", default="1,3,5,10", show_default=True, callback=lambda c, p, v: parse_ks(v),
              help="cut-offs for recall@k and facts@k")
@click.option("--alce-zero-precision", is_flag=True,
              help="score precision 0 for an answer without citations (ALCE eval.py); default n/a")
@click.option("--format", "fmt", type=click.Choice([*FORMATS.choices, "jsonl"]), default="text", show_default=True,
              help="jsonl: one line per case as it is scored, then the summary (streamed: docs/performance.md)")
@click.option("--out", "out", type=click.Path(dir_okay=False),
              help="write the run log here (the source of truth for report, rescore, compare, review); a path "
                   "ending in .jsonl gets a streamed log, written as cases are scored")
@click.option("--metrics", "metrics", callback=lambda c, p, v: parse_metrics(v),
              help="the measures to compute, comma-separated (default: all); the judge is asked only for the "
                   "pairs they need")
@click.option("--missing-labels", type=click.Choice(["error", "skip"]), default="error", show_default=True,
              help="a pair the curated judge has no label for: stop (error), or leave it unjudged and out of "
                   "every figure (skip)")
@DETAILS
@SIGNATURES
@input_options
def score(cases, judge_name, store, replay, ks, alce_zero_precision, fmt, out, metrics, missing_labels, details,
          every_signature, source_format, conventions, invalid_citations, labels_path, reader_options, claims):
    """Score the answers in CASES (JSON or JSONL case files, or another tool's files with --from)."""

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
    check_destinations(("--out", out), ("--store", store))
    reading = reading_for(conventions, invalid_citations, source_format, claims, store, replay)
    settings = Settings(ks=ks, no_citation_precision="zero" if alce_zero_precision else "n/a",
                        conventions=reading.conventions, invalid_citations=reading.invalid_citations,
                        metrics=metrics, missing_labels=missing_labels)
    source = case_source(cases, reading, source_format, labels_path, reader_options)
    outputs = [StreamLog(out) if streamed_log else DocumentLog(out)] if out else []
    if fmt == "jsonl":
        outputs.append(JsonLines(sys.stdout))
    elif fmt == "json":
        outputs.append(ResultsJson(sys.stdout))
    elif streamed_log:
        outputs.append(SummaryLines(echo_text))
    else:
        outputs.append(terminal_output(fmt, details, every_signature))
    with Run.judged(source, settings, reading, spec, store, replay, inputs=list(cases), reader=source_format) as run:
        with progress_bar(run.checked.answers, "scoring answers") as advance:
            run.write(outputs, advance)
    if out:
        click.echo(f"run log written to {out}", err=True)
    note_fallbacks(reading)


@click.command()
@click.argument("cases", nargs=-1, required=True, type=click.Path())
@click.option("--judge", "judge_name", default="curated", show_default=True, help=JUDGE_HELP)
@click.option("--store", type=click.Path(dir_okay=False), required=True, help="SQLite file to fill")
@click.option("--list", "list_path", type=click.Path(dir_okay=False),
              help="also write every judgment the metrics may need to this JSONL file")
@click.option("--all", "fill_all", is_flag=True,
              help="judge every listed pair up front, in batches (for model judges), not only those scoring reaches")
@input_options
@click.option("--metrics", "metrics", callback=lambda c, p, v: parse_metrics(v),
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
    check_destinations(("--store", store), ("--list", list_path))
    reading = reading_for(conventions, invalid_citations, source_format, claims, store)
    settings = Settings(conventions=reading.conventions, invalid_citations=reading.invalid_citations, metrics=metrics)
    source = case_source(cases, reading, source_format, labels_path, reader_options)
    with ExitStack() as stack:
        fill = None
        if engine == "ray":
            from citeaudit.judges.ray_engine import fill_with_ray

            def fill(run, requests):  # every listed pair judged on Ray, recorded in the store
                advance = stack.enter_context(progress_bar(len(requests), "judging pairs on Ray"))
                fill_with_ray(run.judgments, requests, spec, list(run.cases()) if spec.reads_cases else [],
                              reading.conventions, address, workers, block_size, advance)

        advance = stack.enter_context(progress_bar(0, "judging pairs", windows=True))
        done = run_prepare(source, settings, reading, spec, store, list_path, fill_all, fill, advance)
    click.echo(f"{done.listed} pairs listed; judge asked {done.asked}; store {store} holds {done.stored} "
               "judgments", err=True)
    note_fallbacks(reading)


@click.command()
@click.argument("cases", nargs=-1, required=True, type=click.Path())
@input_options
def validate(cases, source_format, conventions, invalid_citations, labels_path, reader_options, claims):
    """Check CASES without scoring; every problem is listed as file:line: field: message.
    --claims is checked, but no statement is split with it: a split never makes a case valid or not."""
    claim_splitter(claims, conventions, None, False)
    loaded = load_inputs(cases, reading_for(conventions, invalid_citations, source_format), source_format, labels_path,
                   reader_options)
    answers = sum(len(c.case.answers) for c in loaded)
    click.echo(f"ok: {len(loaded)} case(s), {answers} answer(s)")


@click.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("--alce-zero-precision", is_flag=True, default=None,
              help="recompute with ALCE's 0-precision convention (default: as the run was scored)")
@DETAILS
@SIGNATURES
def rescore(run, fmt, alce_zero_precision, details, every_signature):
    """Recompute every metric of a run log from its recorded judgments, without judging again."""
    from dataclasses import replace

    from citeaudit.run.outputs import ResultsJson
    from citeaudit.run.log import replayed_run

    log = read_log(run)
    settings = log.settings.to_settings()
    if alce_zero_precision:
        settings = replace(settings, no_citation_precision="zero")
    with replayed_run(log, settings) as rescored:
        rescored.write([ResultsJson(sys.stdout) if fmt == "json" else terminal_output(fmt, details, every_signature)])


@click.command()
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

        from citeaudit.cli.desk import desk_session

        serve(desk_session(()), "127.0.0.1", port, open_browser=True)


@click.command()
def schema():
    """Print the JSON Schema of a case."""
    from citeaudit.records import Case

    click.echo(json.dumps(Case.model_json_schema(), indent=2, ensure_ascii=False))


commands = [score, prepare, validate, rescore, examples, schema]
