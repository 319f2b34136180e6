"""The audit desk: `citeaudit desk` and the session it serves."""

from __future__ import annotations

import click

from citeaudit.cli.common import (load_inputs, parse_reader_options, read_log, reader_options, reading_for,
                                  repair_search_options)


@click.command()
@click.argument("inputs", nargs=-1, type=click.Path())
@click.option("--judge", "judge_name", default=None,
              help="judge for edits (default: curated; for a run log, the run's own judge when it can be made "
                   "again here, else its recorded judgments only)")
@click.option("--store", type=click.Path(dir_okay=False), help="SQLite file of recorded judgments")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (keep it local)")
@click.option("--port", default=8765, show_default=True, type=int)
@click.option("--no-open", is_flag=True, help="do not open a browser")
@click.option("--allow-remote", is_flag=True,
              help="allow a non-loopback --host: anyone who reaches the port can edit (no authentication)")
@repair_search_options
@reader_options("the case files")
def desk(inputs, judge_name, store, host, port, no_open, allow_remote, candidates, budget, source_format,
         reader_options):
    """Open the audit desk on a run log, on case files (another tool's with --from), or (with no INPUTS) on
    the built-in examples: follow each citation to its exact text, repair it (a suggested repair applies in
    one click), set human labels, and watch the scores change."""
    from citeaudit.run.repair import RepairOptions

    session = desk_session(inputs, judge_name, store, source_format, reader_options)
    session.repair = RepairOptions(candidates=candidates, budget=budget)  # searched per statement, when selected
    session.judge()  # built and checked before the port is bound: a judge that cannot be made is an error here
    from citeaudit.desk import serve

    serve(session, host, port, open_browser=not no_open, allow_remote=allow_remote)


def desk_session(inputs, judge_name: str | None = None, store: str | None = None, source_format: str = "citeaudit",
                 reader_options: tuple[str, ...] = ()):
    from citeaudit.desk import DeskSession

    parse_reader_options(reader_options, source_format)  # a bad --option is refused before anything is read
    if source_format != "citeaudit":
        if not inputs:
            raise click.UsageError(f"--from {source_format} reads the files given: name them")
        return _cases_session(inputs, judge_name, store, source_format, reader_options)
    if not inputs:
        from citeaudit.examples import EXAMPLE_FILES, load_example

        cases = [rc.case for name in EXAMPLE_FILES for rc in load_example(name)]
        return DeskSession(cases, judge_name or "curated", store, source="built-in examples")
    from citeaudit.run.log import is_run_log

    if len(inputs) == 1 and is_run_log(inputs[0]):
        from citeaudit.run.log import replay_judgments, resolved_cases

        from citeaudit.desk import JudgeStatus
        from citeaudit.desk.rebuild import rebuild_log_judge

        log = read_log(inputs[0])
        if judge_name:
            return DeskSession(log.cases, judge_name, store, log.settings.to_settings(), source=inputs[0])
        resolved = resolved_cases(log)
        replay = replay_judgments(log, resolved)
        # Edits are judged live by the run's own judge when it can be made again here; else replayed only.
        rebuilt = rebuild_log_judge(log, resolved)
        live = rebuilt.judge is not None
        # a curated judge is made again by the session as labels change; any other is used as made
        fixed = None if live and rebuilt.spec.labels_only else (rebuilt.judge or replay.judge)
        return DeskSession(log.cases, rebuilt.spec or "curated", store, log.settings.to_settings(), source=inputs[0],
                           judge=fixed, recorded=replay.store, judge_status=JudgeStatus(live, rebuilt.note))
    return _cases_session(inputs, judge_name, store)


def _cases_session(inputs, judge_name, store, source_format: str = "citeaudit", reader_options=()):
    """The desk on case files, citeaudit's or another tool's, read as `score --from` reads them."""
    from citeaudit.desk import DeskSession
    from citeaudit.metrics import Settings

    reading = reading_for("citeaudit", None, source_format)
    cases = [rc.case for rc in load_inputs(inputs, reading, source_format, reader_options=reader_options)]
    source = ", ".join(inputs) + ("" if source_format == "citeaudit" else f" (--from {source_format})")
    return DeskSession(cases, judge_name or "curated", store, Settings(invalid_citations=reading.invalid_citations),
                       source=source)


commands = [desk]
