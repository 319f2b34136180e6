"""docs/integrations.md runs: every section's Python blocks, in order, in a namespace of their own, offline
(a block that opens a network connection fails: conftest's `offline`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import outside_event_loop

PAGE = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
# the library each section's blocks need (a core-only install skips them; `make test` installs them all)
NEEDS = {"DeepEval": "deepeval", "RAGAS": "ragas", "MLflow": "mlflow", "Inspect": "inspect_ai",
         "LangChain": "langchain_core", "What every adapter returns": "onnxruntime"}


def sections() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in re.split(r"^## ", PAGE.read_text(encoding="utf-8"), flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        blocks = re.findall(r"```python\n(.*?)```", body, re.S)
        if blocks:
            out[title.strip()] = blocks
    return out


def test_every_adapter_has_a_section_that_runs():
    titles = " ".join(sections())
    for name in ("What every adapter returns", "DeepEval", "RAGAS", "MLflow", "Inspect", "LangChain"):
        assert name in titles, f"docs/integrations.md has no runnable section for {name}"


@pytest.mark.parametrize("title", sorted(sections()))
def test_section_runs(title, tmp_path, monkeypatch, offline):
    for key, module in NEEDS.items():
        if key in title:
            pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)  # whatever a block writes (a run log, an MLflow store) stays in tmp
    namespace: dict = {"__name__": "__docs__"}

    def run_blocks():
        for block in sections()[title]:
            exec(compile(block, f"{PAGE}#{title}", "exec"), namespace)

    outside_event_loop(run_blocks)  # as a script runs them: no event loop of the test session's around


def test_the_trace_commands_run_on_a_recorded_trace(tmp_path, monkeypatch, runner):
    """The traces section's first commands, as written, on a trace that LangChain instrumented by
    OpenInference recorded (tests/otel_traces.py made it): one command to a run, one to a report."""
    pytest.importorskip("onnxruntime")
    import shlex
    import shutil

    from citeaudit.cli import main

    section = PAGE.read_text(encoding="utf-8").split("\n## Production traces", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)```", section, re.S)[0].strip().splitlines()
    assert [c.split()[:2] for c in commands] == [["citeaudit", "score"], ["citeaudit", "report"]]
    shutil.copy(Path(__file__).parent / "fixtures" / "formats" / "otel_langchain_rag.jsonl", tmp_path / "traces.jsonl")
    monkeypatch.chdir(tmp_path)
    for command in commands:
        out = runner.invoke(main, shlex.split(command)[1:])
        assert out.exit_code == 0, out.output
    assert "support" in (tmp_path / "run.json").read_text(encoding="utf-8")
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8")
