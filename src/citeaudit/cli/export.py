"""`citeaudit export`: a run log's claims as a table, or its results in RAGChecker's shape (attached to
the main `citeaudit` group).

    citeaudit export RUN --to claims.csv|claims.jsonl|claims.parquet
    citeaudit export RUN --to ragchecker [-o OUT.json] [--system S]

The command reads its options, calls exports.py and prints; the library raises citeaudit's errors,
which the main group turns into messages and exit codes.
"""

from __future__ import annotations

import json

import click

from citeaudit.cli.common import read_log, warn_if_edited

RAGCHECKER = "ragchecker"


@click.command("export")
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--to", "target", required=True, metavar="FILE|ragchecker",
              help="a file ending in .csv, .jsonl or .parquet (one row per claim and citation), or "
                   "'ragchecker' for a results file in RAGChecker's shape")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="with --to ragchecker: write here (default: stdout)")
@click.option("--system", help="with --to ragchecker: the system to export (needed when the run holds several)")
def export_cmd(run, target, output, system):
    """Export the run log RUN for other tools; its figures are written as stored, nothing is judged again.
    See docs/exports.md for the columns and the mapping onto RAGChecker's measures."""
    from citeaudit.report.exports import claims_format
    from citeaudit.files.destinations import check_destination

    ragchecker = target == RAGCHECKER
    if not ragchecker and (output or system):
        raise click.UsageError("-o/--output and --system go with --to ragchecker; a claims export is "
                               "written to the file named in --to")
    destination = output if ragchecker else target
    if not ragchecker:
        claims_format(target)  # an unknown suffix is refused before the log is read
    if destination:
        check_destination(destination, "--output" if ragchecker else "--to")
    from citeaudit.run.log import is_stream

    if not ragchecker and is_stream(run):
        _export_stream(run, target)
        return
    log = read_log(run)
    if ragchecker:
        _export_ragchecker(log, output, system)
    else:
        from citeaudit.report.exports import write_claims

        count = write_claims(log, target)
        click.echo(f"{count} rows written to {target}", err=True)


def _export_stream(run: str, target: str) -> None:
    """Claim rows of a streamed run log, written as each case is read (the log is never loaded whole)."""
    from citeaudit.report.exports import stream_claim_rows, write_rows
    from citeaudit.run.log import StreamTrailer, stream_entries

    ends: list[StreamTrailer] = []

    def entries():
        for item in stream_entries(run):
            if isinstance(item, StreamTrailer):
                ends.append(item)
            yield item

    count = write_rows(stream_claim_rows(entries()), target)
    if ends:
        warn_if_edited(run, ends[0])
    click.echo(f"{count} rows written to {target}", err=True)


def _export_ragchecker(log, output: str | None, system: str | None) -> None:
    from citeaudit.report.exports import ragchecker_results

    results = ragchecker_results(log, system)
    text = json.dumps(results, ensure_ascii=False, indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    from citeaudit.files.destinations import write_output

    write_output(output, text, "RAGChecker results")
    click.echo(f"{len(results['results'])} results written to {output}", err=True)


commands = [export_cmd]
