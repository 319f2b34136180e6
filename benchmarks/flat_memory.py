"""Peak memory of every documented `citeaudit score` invocation at two input sizes, and how much it grows.

    python benchmarks/flat_memory.py [--small 2000] [--large 20000] [--against OLD_SRC]

Cases come from benchmarks/synthetic.py (five statements citing two sources each, every pair labelled
for the curated judge), written as JSON lines. Each invocation runs in a fresh process; its peak RSS
(ru_maxrss) is its own. With --against, the same invocations also run with the citeaudit package under
OLD_SRC (a copy of an earlier tree's src/) first on the path, so both trees are measured side by side on
the same files in one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic import write_cases, PAIRS_PER_CASE  # benchmarks/ is on the path when this runs as a script

INVOCATIONS = {
    "score FILE": [],
    "score FILE --format json": ["--format", "json"],
    "score FILE --format markdown": ["--format", "markdown"],
    "score FILE --format jsonl": ["--format", "jsonl"],
    "score FILE --out run.json": ["--out", "{out}.json"],
    "score FILE --out run.jsonl": ["--out", "{out}.jsonl"],
}


def measure(args: list[str], src: str | None) -> tuple[float, float]:
    """Wall seconds and peak RSS in MiB of one fresh process (stdout discarded); fails on a non-zero exit."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    code = "import sys; from citeaudit.cli import main; sys.argv = ['citeaudit', *sys.argv[1:]]; main()"
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            sys.exit(f"{' '.join(args)} exited {os.waitstatus_to_exitcode(status)}:\n{err.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", type=int, default=2000, help="cases in the small input (default 2000)")
    ap.add_argument("--large", type=int, default=20000, help="cases in the large input (default 20000)")
    ap.add_argument("--against", metavar="OLD_SRC", help="also measure the citeaudit package under this folder")
    ns = ap.parse_args()
    trees = [("this tree", None)] + ([("old tree", ns.against)] if ns.against else [])
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for n in (ns.small, ns.large):
            files[n] = Path(folder) / f"cases_{n}.jsonl"
            write_cases(files[n], n * PAIRS_PER_CASE)
        print(f"peak RSS in MiB (wall seconds), {ns.small:,} and {ns.large:,} cases "
              f"({PAIRS_PER_CASE} claim-citation pairs each); growth = peak at {ns.large:,} / peak at {ns.small:,}")
        print(f"{'invocation':<30}" + "".join(f" | {label:>9} {'small':>14} {'large':>14} {'growth':>6}"
                                              for label, _ in trees))
        for name, options in INVOCATIONS.items():
            row = f"{name:<30}"
            for label, src in trees:
                peaks = []
                cells = []
                for n in (ns.small, ns.large):
                    out = str(Path(folder) / f"run_{n}")
                    wall, peak = measure(["score", str(files[n]), *(o.format(out=out) for o in options)], src)
                    peaks.append(peak)
                    cells.append(f"{peak:>6.0f} ({wall:>5.1f} s)")
                row += f" | {label:>9} {cells[0]:>14} {cells[1]:>14} {peaks[1] / peaks[0]:>5.2f}x"
            print(row, flush=True)


if __name__ == "__main__":
    main()
