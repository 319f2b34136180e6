"""Optional packages, imported through one helper so that a missing one always reads the same way:
which module is missing, for what, and the `pip install 'citeaudit[EXTRA]'` line that brings it (the
extras are declared in pyproject.toml)."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from citeaudit.errors import MissingExtra

__all__ = ["MissingExtra", "install_line", "require"]


def install_line(extra: str) -> str:
    """The one way an optional extra is named to a user."""
    return f"pip install 'citeaudit[{extra}]'"


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import `module` and return it; raise MissingExtra when it is not installed. `what` names the use
    ("the desk", "reading Parquet files") and reads before "needs"."""
    try:
        return import_module(module)
    except ImportError as err:
        # err.name: the module actually missing, e.g. a dependency of `module` (None from a bare ImportError)
        missing = err.name or module
        raise MissingExtra(f"{what} needs {missing}, which is not installed: {install_line(extra)}",
                           missing, extra) from None
