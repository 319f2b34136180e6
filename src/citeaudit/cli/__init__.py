"""The `citeaudit` command line: one thin command per verb, grouped by what it works on (`run`: judging
cases; `runs`: reading run logs; `desk`; `judges`; `export`; `agree`; `verify`), with what they share in
`common`. The only place an error becomes a message and an exit code."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import click

from citeaudit._version import __version__
from citeaudit.errors import CiteauditError, CiteauditWarning, InputError
from citeaudit.text import visible_controls


@contextmanager
def _usage_errors_shown_safely() -> Iterator[None]:
    """A usage error's message quotes what was typed or read (an --answer, the ids a file holds, a path):
    its control characters are shown, never obeyed, as in every other message. Click prints the error."""
    try:
        yield
    except click.ClickException as err:
        err.message = visible_controls(err.message)
        raise


class _Group(click.Group):
    """Turns citeaudit's own errors into a clear message and its exit code (no traceback), its own
    warnings into a `citeaudit: warning: ...` line on stderr, and shows the control characters in click's
    usage errors."""

    def invoke(self, ctx: click.Context):
        try:
            # a usage error from a command's options and arguments, or its own checks (click quotes an
            # unknown command or option with repr, which escapes them already)
            with warnings.catch_warnings(), _usage_errors_shown_safely():
                warnings.simplefilter("always", CiteauditWarning)
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except CiteauditError as err:
            message = f"citeaudit: bad input:\n{err}" if isinstance(err, InputError) else f"citeaudit: {err}"
            click.echo(visible_controls(message), err=True)
            ctx.exit(err.exit_code)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, CiteauditWarning):
        click.echo(visible_controls(f"citeaudit: warning: {message}"), err=True)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


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



def _attach_commands() -> None:
    from citeaudit.cli import adapt, agree, desk, export, judges, repair, run, runs, verify

    for module in (run, runs, desk, judges, adapt, export, agree, repair):
        for command in module.commands:
            main.add_command(command)
    main.add_command(verify.verify_cmd)


_attach_commands()


def desk_session(inputs, judge_name: str | None = None, store: str | None = None, source_format: str = "citeaudit",
                 reader_options: tuple[str, ...] = ()):
    """The desk's session on `inputs`, another tool's files with `source_format` (see `citeaudit.cli.desk`)."""
    from citeaudit.cli.desk import desk_session as session

    return session(inputs, judge_name, store, source_format, reader_options)
