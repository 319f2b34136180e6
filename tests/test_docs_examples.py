"""The documentation's examples run: docs/guard.md's Python blocks, and the search-budget agent."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def test_guard_page_blocks_run_in_order(capsys, offline):
    """Every Python block of docs/guard.md, in order, offline (conftest's `offline`: a network connection
    fails the test)."""
    pytest.importorskip("onnxruntime")  # one block shows the shipped model judge
    blocks = python_blocks(DOCS / "guard.md")
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOCS / "guard.md"), "exec"), namespace)
    printed = capsys.readouterr().out
    # the manual audit's printed gaps are the ones the page shows in its comments
    shown = [line[2:] for line in re.findall(r"^# C\d .*$", (DOCS / "guard.md").read_text(encoding="utf-8"), re.M)]
    assert printed.splitlines() == shown


@pytest.fixture(scope="module")
def agent():
    pytest.importorskip("onnxruntime")
    return runpy.run_path(str(DOCS / "examples" / "budget_agent.py"))


def test_budget_agent_stops_and_states_limitations(agent):
    result = agent["run"](max_searches=2)
    assert result.search.searches == 2 and result.search.exhausted and result.search.stopped_by_budget
    assert result.decision == "revise"
    assert result.supported_answer.startswith("The continuous limit is 80 °C [D1].")
    assert [g.claim for g in result.gaps] == ["c4", "c5"] and all(g.limitation for g in result.gaps)
    assert "annual energy" in result.limitations[0] and "thousand machines" in result.limitations[1]
    # the searches were made: each gap now cites a passage the draft did not
    assert [g.citations for g in result.gaps] != [["D3"], ["D4"]]


def test_budget_agent_without_searches(agent):
    result = agent["run"](max_searches=0)
    assert result.search.searches == 0 and result.search.stopped_by_budget
    assert [g.citations for g in result.gaps] == [["D3"], ["D4"]]  # the draft's own citations
    assert result.limitations[0] == "After 0 searches, the sources do not establish that Eco reduces annual energy by 15%."


def test_budget_agent_script_prints_its_result(agent, capsys):
    runpy.run_path(str(DOCS / "examples" / "budget_agent.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("decision: revise") and "stated limitations:" in out and "searches: 2" in out


def test_guard_page_commands_exit_as_it_says(runner, tmp_path, monkeypatch):
    """Every `$ citeaudit verify …  # exit N: …` line of the page, run on the example cases it writes."""
    import shlex

    from citeaudit.cli import main

    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["examples", "--write", "cases/"]).exit_code == 0
    page = (DOCS / "guard.md").read_text(encoding="utf-8")
    lines = re.findall(r"^\$ citeaudit (verify .*?)\s+# exit (\d): (\w+)$", page, re.M)
    assert len(lines) == 3
    for command, code, decision in lines:
        result = runner.invoke(main, shlex.split(command))
        assert (result.exit_code, result.output.split()[1]) == (int(code), decision), command



def test_the_desk_scripting_example_repairs_a_claim_and_reads_the_new_figures():
    """docs/examples/drive_desk.py, run as docs/desk.md tells users to: a desk in its own process,
    Debian's chromium through Playwright, the seed's repair read off the page."""
    import shutil
    import socket
    import subprocess
    import sys

    pytest.importorskip("fastapi")
    pytest.importorskip("playwright")
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (scripts/setup.sh --browser installs it)")
    with socket.socket() as sock:  # a free port for the desk's own process
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = subprocess.run([sys.executable, str(DOCS / "examples" / "drive_desk.py"), str(port)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["before: recall 2/4, precision 2/3", "after: recall 3/4, precision 3/3"]
