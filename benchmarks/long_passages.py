"""Commands on a case with one long passage (0.1, 1 and 10 MB of text), each in a fresh process: `score`
and `repair` (the long passage a candidate the search ranks, never cited), a desk suggestion for the same
claim, and `prepare --judge model` (the long passage cited: the model reads every window of it).

    python benchmarks/long_passages.py [--sizes 0.1 1 10] [--timeout 300] [--prepare-timeout 1800]
                                       [--against OLD_SRC] [--no-model]

Each row gives wall and CPU seconds (user + system, from os.wait4; the desk row times the suggestion
alone, inside its process). With --against, the rows also run with the citeaudit package under OLD_SRC
first on the path, side by side on the same files in one run, with the ratio; `prepare`, whose work did
not change (only its progress display), runs on this tree only. A process past --timeout is stopped and
shown as "> N s" (`prepare` has a timeout of its own: the model reads thousands of windows of a 10 MB
passage, on a busy machine a quarter of an hour).

The case: the returns desk's claim "Standard items may be returned within 30 days of delivery." citing
S2 (labelled none); among its other passages S1 (labelled full) and the long passage S3, sentences of
twelve words drawn from a small vocabulary that shares "items", "returned" and "days" with the claim,
so that the ranker finds some of the claim's words in most of its sentences. In the case `prepare`
reads, another statement cites S3.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CLAIM = "Standard items may be returned within 30 days of delivery."
WORDS = ("items returned days archive shelf paper museum ledger copper river harvest winter lantern garden "
         "bridge council market").split()
DESK = """
import json, sys, time
from citeaudit.desk import DeskSession
from citeaudit.records import Case
session = DeskSession([Case.model_validate(json.load(open(sys.argv[1])))], "curated")
session.snapshot()
start = time.perf_counter()
session.suggestion("long", "a", 0)
print(time.perf_counter() - start)
"""
CLI = "import sys; from citeaudit.cli import main; sys.argv = ['citeaudit', *sys.argv[1:]]; main()"


def long_text(size: int) -> str:
    rng = random.Random(0)
    sentences, length = [], 0
    while length < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return " ".join(sentences)[:size]


def write_case(path: Path, text: str, cited: bool) -> None:
    statements = [{"id": "C1", "text": CLAIM, "citations": ["S2"]}]
    labels = [{"claim": CLAIM, "passages": [p], "label": label} for p, label in (("S1", "full"), ("S2", "none"),
                                                                                ("S3", "none"))]
    if cited:
        statements.append({"id": "C2", "text": "Archive items are kept on the river shelf.", "citations": ["S3"]})
    case = {"id": "long", "question": "When may standard items be returned?",
            "sources": [{"id": "S1", "text": "Standard items can be returned up to 30 days after delivery."},
                        {"id": "S2", "text": "A receipt is required for standard-item returns."},
                        {"id": "S3", "text": text}],
            "answers": [{"id": "a", "statements": statements}], "labels": labels}
    path.write_text(json.dumps(case), encoding="utf-8")


def measure(code: str, args: list[str], src: str | None, timeout: float) -> tuple[float, float, str] | None:
    """Wall and CPU seconds of one fresh process, and its stdout; None when it ran past `timeout`."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=out, stderr=err, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        if wall >= timeout and proc.returncode < 0:
            return None
        if proc.returncode:
            err.seek(0)
            sys.exit(f"{' '.join(args)} exited {proc.returncode}:\n{err.read().decode()[-2000:]}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, out.read().decode()


def seconds(found: tuple[float, float, str] | None, inside: bool) -> float | None:
    """The row's figure: the process's wall time, or the time it printed of the step itself."""
    return None if found is None else float(found[2]) if inside else found[0]


def cell(found: tuple[float, float, str] | None, timeout: float, inside: bool) -> str:
    if found is None:
        return f"{'> ' + format(timeout, '.0f') + ' s':>21}"
    if inside:
        return f"{seconds(found, inside):>8.2f} s {'':>10}"
    return f"{found[0]:>8.2f} s ({found[1]:>5.1f} cpu)"


def ratio(this: float | None, old: float | None, timeout: float) -> str:
    if this is None:
        return ""
    return f"{old / this:>9.1f}x" if old is not None else f"{'> ' + format(timeout / this, '.0f'):>9}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.1, 1, 10], help="long passage sizes in MB")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before a process is stopped")
    ap.add_argument("--prepare-timeout", type=float, default=1800, help="the same, for prepare")
    ap.add_argument("--against", metavar="OLD_SRC", help="also run with the citeaudit package under this folder")
    ap.add_argument("--no-model", action="store_true", help="leave out the rows of the model judge")
    ns = ap.parse_args()
    trees = [("this tree", None)] + ([("old tree", ns.against)] if ns.against else [])
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'MB':>5} {'command':<44}" + "".join(f" | {label:>21}" for label, _ in trees)
          + (" | old / this" if ns.against else ""))
    with tempfile.TemporaryDirectory() as folder:
        for mb in ns.sizes:
            text = long_text(int(mb * 1_000_000))
            candidate, cited = Path(folder) / f"candidate-{mb}.json", Path(folder) / f"cited-{mb}.json"
            write_case(candidate, text, cited=False)
            write_case(cited, text, cited=True)
            rows = [("score (curated)", CLI, ["score", str(candidate)], trees, False, ns.timeout),
                    ("repair (curated)", CLI, ["repair", str(candidate)], trees, False, ns.timeout),
                    ("desk: one statement's suggestion (curated)", DESK, [str(candidate)], trees, True, ns.timeout)]
            if not ns.no_model:
                store = str(Path(folder) / f"prepare-{mb}.db")
                rows += [("repair --judge model", CLI, ["repair", str(candidate), "--judge", "model"], trees, False,
                          ns.timeout),
                         ("prepare --judge model (S3 cited)", CLI,
                          ["prepare", str(cited), "--judge", "model", "--store", store], trees[:1], False,
                          ns.prepare_timeout)]
            for name, code, args, on, inside, timeout in rows:
                found = [measure(code, args, src, timeout) for _, src in on]
                line = f"{mb:>5g} {name:<44}" + "".join(f" | {cell(f, timeout, inside)}" for f in found)
                if len(trees) == 2:
                    line += (f" | {ratio(*(seconds(f, inside) for f in found), timeout)}" if len(found) == 2
                             else f" | {'(this tree only)':>21}")
                print(line, flush=True)


if __name__ == "__main__":
    main()
