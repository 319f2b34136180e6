"""What every command-line module shares: reading a run log (saying when it was edited) and printing
text that came from the input (control characters shown, never obeyed)."""

from __future__ import annotations

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


def echo_text(text: str, nl: bool = True) -> None:
    """Print human-readable text to the terminal: a control character from the input (an escape
    sequence in a claim, a right-to-left override in an id) is shown, never obeyed."""
    click.echo(visible_controls(text), nl=nl)


def read_log(path: str):
    """Read a run log; say on stderr when it was edited after it was written (its figures are used
    as stored, whatever the command)."""
    from citeaudit.run.log import read_runlog

    log = read_runlog(path)
    if log.edited:
        click.echo(visible_controls(
            f"citeaudit: warning: {path} was changed after it was written (its checksum does not match): "
            f"figures are shown as stored; `citeaudit rescore {path}` recomputes them from its judgments"), err=True)
    return log
