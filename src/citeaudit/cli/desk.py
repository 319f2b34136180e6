"""The audit desk: `citeaudit desk` and the session it serves."""

from __future__ import annotations

import click

from citeaudit.cli.common import load_inputs, read_log


@click.command()
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
    cases = [rc.case for rc in load_inputs(inputs)]
    return DeskSession(cases, judge_name or "curated", store, source=", ".join(inputs))


commands = [desk]
