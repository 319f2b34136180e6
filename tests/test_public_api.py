"""What `import citeaudit` offers: every name of `__all__`, the heavier ones loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import citeaudit


def test_every_public_name_resolves():
    missing = [name for name in citeaudit.__all__ if not hasattr(citeaudit, name)]
    assert not missing, missing


def test_the_run_log_is_public():
    from citeaudit.run import log as runlog

    assert {"RunLog", "read_runlog"} <= set(citeaudit.__all__)
    assert citeaudit.RunLog is runlog.RunLog
    assert citeaudit.read_runlog is runlog.read_runlog


def test_the_lazy_names_are_not_imported_with_the_package():
    code = ("import sys, citeaudit; "
            "print(sorted(m for m in ('citeaudit.run.log', 'citeaudit.run.verify') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
