"""A missing optional package: one error (MissingExtra), one wording, from `extras.require` only."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest

from citeaudit.errors import CiteauditError, MissingExtra
from citeaudit.extras import install_line, require

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "citeaudit"


def test_require_returns_the_module():
    import json

    assert require("json", "formats", "anything") is json


def test_a_missing_module_names_itself_its_use_and_its_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "fastapi", None)
    with pytest.raises(MissingExtra) as err:
        require("fastapi", "desk", "the desk")
    assert str(err.value) == "the desk needs fastapi, which is not installed: pip install 'citeaudit[desk]'"
    assert (err.value.module, err.value.extra, err.value.exit_code) == ("fastapi", "desk", 2)
    assert isinstance(err.value, CiteauditError)


def test_the_module_actually_missing_is_named():
    # a package that is there but whose own import fails names the module that is missing
    with pytest.raises(MissingExtra, match=r"^x needs citeaudit_no_such_module, "):
        require("citeaudit_no_such_module.sub", "formats", "x")


def _require_calls() -> list[tuple[str, str, object]]:
    calls = []
    for file in SOURCE.rglob("*.py"):
        if file.name == "extras.py":
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("require", "install_line"):
                args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
                extra = args[1] if node.func.id == "require" else args[0]
                calls.append((str(file.relative_to(SOURCE)), node.func.id, extra))
    return calls


def test_every_extra_named_is_declared_in_pyproject():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    calls = _require_calls()
    assert len(calls) >= 10
    undeclared = [c for c in calls if c[2] not in declared]
    assert not undeclared, undeclared


def test_no_optional_import_is_guarded_outside_the_helper():
    guarded = []
    for file in SOURCE.rglob("*.py"):
        if file.name == "extras.py":
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                names = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
                if names & {"ImportError", "ModuleNotFoundError"}:
                    guarded.append(f"{file.relative_to(SOURCE)}:{node.lineno}")
    assert not guarded, f"use citeaudit.extras.require: {guarded}"


def test_install_line():
    assert install_line("report") == "pip install 'citeaudit[report]'"


# --- one caller per extra ------------------------------------------------------------------------


def test_the_desk_names_its_extra(monkeypatch):
    from citeaudit.desk import app

    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(MissingExtra, match=r"^the desk needs uvicorn, .*: pip install 'citeaudit\[desk\]'$"):
        app._require()


@pytest.mark.parametrize(("backend", "module", "extra"), [("hf", "torch", "hf"), ("onnx", "onnxruntime", "onnx")])
def test_a_local_judge_names_its_extra(monkeypatch, tmp_path, backend, module, extra):
    from citeaudit.judges.local import BACKENDS

    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtra, match=rf"^this judge needs {module}, .*: pip install 'citeaudit\[{extra}\]'$"):
        BACKENDS[backend](tmp_path, None)


def test_the_charts_note_names_its_extra():
    from citeaudit.report import charts

    assert charts.INSTALL_HINT == "pip install 'citeaudit[report]'"
