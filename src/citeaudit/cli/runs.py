"""Commands that read run logs: report, compare, and review against changed sources."""

from __future__ import annotations

import json

import click

from citeaudit.errors import JudgeError
from citeaudit.cli.common import (JUDGE_HELP, DETAILS, SIGNATURES, check_destinations, emit, echo_text, load_inputs,
                                  parse_reader_options, read_log, reader_options)


@click.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["html", "markdown", "json", "text"]), default="html",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="write to this file (default: stdout)")
@DETAILS
@SIGNATURES
def report(run, fmt, output, details, every_signature):
    """Render a run log: a self-contained HTML page (opens offline), Markdown, JSON or a terminal table.
    Each format shows the per-answer tables, the claims beside their cited spans, and the diagnosis.
    Every format reads the log only: nothing is scored again."""
    check_destinations(("--output", output))
    log = read_log(run)
    claims_judged = log.settings.judges_claims  # else the diagnosis was not measured
    if fmt == "html":
        from citeaudit.report.html import render_html

        text = render_html(log)
    elif fmt == "text" and not output:
        emit(log.results, log.signature, "text", log.diagnosis, details, claims_judged, every_signature)
        return
    else:
        from citeaudit.report.render import diagnosis_markdown, report_json, to_markdown

        diagnosis = diagnosis_markdown(log.diagnosis, claims_judged)
        if fmt == "json":
            text = json.dumps(report_json(log.results, log.diagnosis, claims_judged), ensure_ascii=False, indent=2)
        elif fmt == "text":  # written to a file: the plain text a pipe gets
            from citeaudit.report.render import text_report

            text = text_report(log.results, log.signature, details, every_signature) + diagnosis
        else:
            text = to_markdown(log.results, log.signature) + "\n" + diagnosis
    if output:
        from citeaudit.files.destinations import write_output

        write_output(output, text, "report")
        click.echo(f"report written to {output}", err=True)
    elif fmt in ("markdown", "text"):
        echo_text(text, nl=False)
    else:
        click.echo(text, nl=False)


@click.command()
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


@click.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--sources", "sources", type=click.Path(), required=True,
              help="the current sources: a case file (each case's complete sources), or an update matched by "
                   "document id: a JSON list of documents, or {\"sources\": [...], \"removed\": [ids], "
                   "\"cases\": {CASE_ID: {...}}} (docs/runs.md)")
@click.option("--rejudge", is_flag=True, help="judge the affected claims again against the current passages")
@click.option("--judge", "judge_name", default="curated", show_default=True, help=JUDGE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@reader_options("--sources")
def review(run, sources, rejudge, judge_name, fmt, source_format, reader_options):
    """List every answer and claim whose cited passage changed, vanished or moved since RUN."""
    from citeaudit.judges import make_judge, parse_judge
    from citeaudit.run.review import (CurrentSources, format_review, read_current_sources, rejudge as do_rejudge,
                                      review as do_review)
    from citeaudit.run.log import resolved_cases

    parse_reader_options(reader_options, source_format)  # a bad --option is refused before anything is read
    spec = parse_judge(judge_name)  # and a bad --judge, even when no passage turns out to have changed
    if source_format == "citeaudit":
        current = read_current_sources(sources)
    else:
        current = CurrentSources.of_cases(sources, load_inputs([sources], fmt=source_format,
                                                               reader_options=reader_options))
    log = read_log(run)
    changes = do_review(log, current)
    unmatched = current.unmatched(log.cases)
    if unmatched:
        echo_text(f"citeaudit: review: {len(unmatched)} document(s) of {sources} are in no case of the run, left "
                  f"out: {', '.join(map(repr, unmatched[:10]))}{' …' if len(unmatched) > 10 else ''}", err=True)
    if rejudge and changes:
        do_rejudge(changes, log, current, make_judge(spec, [*resolved_cases(log), *current.labelled_cases()]))
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


commands = [report, compare, review]
