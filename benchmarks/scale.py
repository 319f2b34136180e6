"""How scoring scales: end-to-end time and peak memory from 10^3 to 10^5 claim-citation pairs (10^6 with
--million), the time of each phase, and what deduplication and a filled judgment store save.

    python benchmarks/scale.py [--million] [--keep DIR]
    python benchmarks/scale.py --profile   # where the time and memory of each phase go, at 10^4

Cases are synthetic but shaped like real ones: six one-sentence sources, a ranking, a gold document, and
one answer of five statements citing two sources each (ten claim-citation pairs per case). Every pair
scoring may ask about (each statement's cited set, each citation alone; see plan_requests) has a curated
label, so the curated judge answers everything and the figures measure citeaudit itself, not a model.
The labels mix five patterns (one citation suffices, both needed, unsupported, both suffice, partial) so
that ALCE's precision rule takes each of its branches.

Each end-to-end run is a fresh `citeaudit` process, so its peak memory (ru_maxrss, read with os.wait4)
is its own. The phases are timed in one more fresh process each on the 10^4 and 10^5 files.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = str(Path(sys.executable).with_name("citeaudit"))
PAIRS_PER_CASE = 10  # 5 statements x 2 citations
SIZES = (10**3, 10**4, 10**5)
PHASE_SIZES = (10**4, 10**5)  # phases timed at both, to see which grows faster than the input

SOURCE_TEMPLATES = (
    "Unit {n} runs continuously at up to {a} degrees Celsius under the standard schedule.",
    "The Eco mode of unit {n} cuts annual energy use by {b} percent against the standard schedule.",
    "Firmware {b}.{a} for unit {n} was released in March and fixes the pump timer.",
    "Unit {n} must be serviced every {a} months by a certified technician.",
    "The warranty of unit {n} lasts {b} months from the date of installation.",
    "Unit {n} is sold in {a} countries, with a regional power adapter in each.",
)
# (statement template, cited source indexes)
STATEMENTS = (
    ("Unit {n} can run at {a} degrees Celsius and saves {b} percent in Eco mode.", (0, 1)),
    ("Unit {n} saves {b} percent in Eco mode, and firmware {b}.{a} fixes its pump timer.", (1, 2)),
    ("Firmware {b}.{a} fixed the timer of unit {n}, which needs service every {a} months.", (2, 3)),
    ("Unit {n} needs service every {a} months and has a {b}-month warranty.", (3, 4)),
    ("Unit {n} carries a {b}-month warranty and is sold in {a} countries.", (4, 5)),
)
# (label of the cited set, of the first citation alone, of the second alone); sets are never weaker than
# their members, as a careful labeller's would be.
PATTERNS = (
    ("full", "full", "none"),        # one suffices: the second is redundant
    ("full", "partial", "partial"),  # both needed
    ("none", "none", "none"),        # unsupported
    ("full", "full", "full"),        # either suffices
    ("partial", "partial", "none"),  # partly supported
)


# --- synthetic cases ---------------------------------------------------------------------------------

def make_case(i: int) -> dict:
    """Case number i: texts differ from every other case's, as they would in a real batch."""
    values = {"n": f"{i}", "a": 10 + i % 89, "b": 5 + i % 37}
    ids = [f"D{j + 1}" for j in range(len(SOURCE_TEMPLATES))]
    sources = [{"id": d, "version": "2024-03", "title": f"Unit {i} manual, part {j + 1}",
                "text": t.format(**values)} for j, (d, t) in enumerate(zip(ids, SOURCE_TEMPLATES))]
    shift = i % len(ids)
    statements, labels = [], []
    for k, (template, (x, y)) in enumerate(STATEMENTS):
        text = template.format(**values)
        cited = [ids[x], ids[y]]
        statements.append({"id": f"s{k + 1}", "text": text, "citations": cited})
        whole, first, second = PATTERNS[(i + k) % len(PATTERNS)]
        labels += [
            {"claim": text, "passages": cited, "label": whole, "explanation": "checked against both passages"},
            {"claim": text, "passages": [cited[0]], "label": first},
            {"claim": text, "passages": [cited[1]], "label": second},
        ]
    return {
        "id": f"case-{i}",
        "question": f"What are the limits, savings and service terms of unit {i}?",
        "sources": sources,
        "ranking": ids[shift:] + ids[:shift],
        "gold_documents": [ids[i % len(ids)]],
        "answers": [{"id": "a1", "system": "rag", "statements": statements}],
        "labels": labels,
    }


def write_cases(path: Path, pairs: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(pairs // PAIRS_PER_CASE):
            f.write(json.dumps(make_case(i), ensure_ascii=False) + "\n")


# --- measuring ---------------------------------------------------------------------------------------

def run_measured(args: list[str], stdout=subprocess.DEVNULL) -> tuple[float, float]:
    """Run a command to completion; its wall seconds and its own peak RSS in MiB. Fails on a non-zero exit."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=stdout, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            sys.exit(f"{' '.join(args)} exited {proc.returncode}:\n{err.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024  # Linux reports KiB


def rss_mib() -> float:
    """This process's resident memory now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def phase_steps(path: str, judgments_class=None):
    """The phases of `citeaudit score FILE --format json` as (name, step) pairs: each step takes what the
    one before returned. The judgments are a `judgments_class` (Judgments by default)."""
    from citeaudit.judges import Judgments, make_judge
    from citeaudit.loading import load_cases
    from citeaudit.metrics import Settings, score_cases
    from citeaudit.report.results import results_of

    judgments_class = judgments_class or Judgments
    return [
        ("load (load_cases)", lambda _: load_cases([path])),
        ("judge built (make_judge curated)", lambda cases: (cases, make_judge("curated", cases))),
        ("judge + score (score_cases)",
         lambda made: score_cases(made[0], judgments_class(made[1]), Settings())),
        ("results (results_of)", results_of),
        ("JSON output (model_dump_json)", lambda results: results.model_dump_json(indent=2)),
    ]


def phases(path: str) -> dict:
    """In this (fresh) process: time and memory of each phase of `citeaudit score FILE --format json`,
    and how many judgments precision's rule asks for before and after the memo."""
    started = time.perf_counter()
    from citeaudit.judges import Judgments
    from citeaudit.metrics import plan_requests

    class CountingJudgments(Judgments):
        made: list[Judgments] = []  # the instance score_cases used, to read its counts after

        def __init__(self, *args):
            super().__init__(*args)
            self.lookups = 0
            self.made.append(self)

        def get(self, text, passages):
            self.lookups += 1
            return super().get(text, passages)

    steps = phase_steps(path, CountingJudgments)
    out: dict = {"imports_s": time.perf_counter() - started, "rss_start": rss_mib(), "phases": []}
    kept = [None]  # every phase's result stays alive, as in a run
    for name, step in steps:
        start = time.perf_counter()
        kept.append(step(kept[-1]))
        out["phases"].append({"phase": name, "seconds": time.perf_counter() - start, "rss_after": rss_mib(),
                              "peak_after": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    _, cases, _, report, _, text = kept
    out["json_mib"] = len(text.encode()) / 2**20

    judgments = CountingJudgments.made[0]
    statements = [s for a in report.answers for s in a.statements if s.kind == "claim" and s.citations]
    out["statements"] = len(statements)
    out["full_rule"] = sum(1 + 2 * len(s.citations) for s in statements)
    out["adaptive_rule"] = sum(1 + (len(s.citations) + sum(c.alone is False for c in s.checks)
                                    if s.supported and len(s.citations) > 1 else 0) for s in statements)
    out["lookups"] = judgments.lookups
    out["judge_asked"] = judgments.asked
    out["planned"] = len(plan_requests(cases))
    return out


def profile(path: str, top: int = 10) -> None:
    """Where each phase spends its time (cProfile, by own time) and what it allocates (tracemalloc, by
    source line), on one file: two passes, so that neither tool distorts the other."""
    import cProfile
    import io
    import pstats
    import tracemalloc

    value = None
    for name, step in phase_steps(path):
        profiler = cProfile.Profile()
        value = profiler.runcall(step, value)
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).strip_dirs().sort_stats("tottime").print_stats(top)
        lines = [line for line in stream.getvalue().splitlines() if line.strip()]
        print(f"--- {name}: time (cProfile, top {top} by own time)")
        print("\n".join(lines[lines.index(next(x for x in lines if x.lstrip().startswith("ncalls"))):]))
    del value
    gc.collect()

    tracemalloc.start()
    kept = [None]  # every phase's result stays alive, as in a run
    before = tracemalloc.take_snapshot()
    for name, step in phase_steps(path):
        kept.append(step(kept[-1]))
        after = tracemalloc.take_snapshot()
        diff = after.compare_to(before, "lineno")
        print(f"--- {name}: memory it added, every result kept (tracemalloc), "
              f"{sum(d.size_diff for d in diff) / 2**20:.1f} MiB")
        for d in diff[:5]:
            print(f"   {d.size_diff / 2**20:7.1f} MiB {d.count_diff:>8} blocks  {d.traceback[0]}")
        before = after


# --- the report --------------------------------------------------------------------------------------

def end_to_end(folder: Path, sizes: list[int]) -> dict[int, Path]:
    print("1. End to end: citeaudit score FILE --format json > /dev/null (curated judge), one fresh process each")
    print(f"{'pairs':>9} {'cases':>7} {'file MiB':>9} {'wall s':>8} {'pairs/s':>9} {'peak RSS MiB':>13} "
          f"{'s per 10^4 pairs':>17}")
    files, walls, peaks = {}, {}, {}
    for pairs in sizes:
        path = folder / f"cases_{pairs}.jsonl"
        write_cases(path, pairs)
        files[pairs] = path
        walls[pairs], peaks[pairs] = run_measured([CLI, "score", str(path), "--format", "json"])
        print(f"{pairs:>9} {pairs // PAIRS_PER_CASE:>7} {path.stat().st_size / 2**20:>9.1f} {walls[pairs]:>8.2f} "
              f"{pairs / walls[pairs]:>9.0f} {peaks[pairs]:>13.0f} {walls[pairs] / pairs * 1e4:>17.2f}", flush=True)
    base = PHASE_SIZES[0]
    for pairs in sizes:
        if pairs > base:
            print(f"   {pairs} vs {base} pairs ({pairs // base}x the input): time {walls[pairs] / walls[base]:.1f}x, "
                  f"peak RSS {peaks[pairs] / peaks[base]:.1f}x")
    return files


def measure_phases(path: Path, gc_off: bool = False) -> dict:
    with tempfile.TemporaryFile() as raw:
        run_measured([sys.executable, __file__, "--phases", str(path)] + (["--gc-off"] if gc_off else []),
                     stdout=raw)
        raw.seek(0)
        return json.loads(raw.read())


def phase_table(runs: dict[int, dict], title: str) -> None:
    sizes = list(runs)
    print(f"\n   {title} (seconds, share; RSS after the phase / peak so far, MiB):")
    head = f"   {'phase':<34}" + "".join(f" {str(n) + ' pairs':>28}" for n in sizes)
    if len(sizes) == 2:
        head += f" {'time ratio':>11}"
    print(head)
    print(f"   {'(imports; not in the total)':<34}" + "".join(
        f" {d['imports_s']:>8.3f} {'':>5} {d['rss_start']:>6.0f} {'':>6}" for d in runs.values()))
    totals = {n: sum(p["seconds"] for p in d["phases"]) for n, d in runs.items()}
    for i, name in enumerate(p["phase"] for p in runs[sizes[0]]["phases"]):
        row = f"   {name:<34}"
        for n, d in runs.items():
            p = d["phases"][i]
            row += (f" {p['seconds']:>8.3f} {p['seconds'] / totals[n]:>5.0%} {p['rss_after']:>6.0f}"
                    f" {p['peak_after']:>6.0f}")
        if len(sizes) == 2:
            row += f" {runs[sizes[1]]['phases'][i]['seconds'] / runs[sizes[0]]['phases'][i]['seconds']:>10.1f}x"
        print(row)
    row = f"   {'total':<34}" + "".join(f" {totals[n]:>8.3f} {'':>5} {'':>6} {'':>6}" for n in sizes)
    if len(sizes) == 2:
        row += f" {totals[sizes[1]] / totals[sizes[0]]:>10.1f}x"
    print(row)
    print("   JSON written: " + ", ".join(f"{d['json_mib']:.1f} MiB at {n} pairs" for n, d in runs.items()))


def dedup_and_store(folder: Path, path: Path, data: dict) -> None:
    print(f"\n2. Judgments asked, {PHASE_SIZES[0]} pairs ({data['statements']} statements citing 2 passages each)")
    print(f"   ALCE precision rule, every branch (set, each alone, set without each): {data['full_rule']:>7}")
    print(f"   ALCE precision rule as it runs (alone only if the set supports, "
          f"without only if alone fails): {data['adaptive_rule']}")
    print(f"   lookups scoring made (the above + each claim's support):             {data['lookups']:>7}")
    print(f"   distinct pairs the judge was asked after the memo (Judgments.asked):  {data['judge_asked']:>7}")
    print(f"   distinct pairs plan_requests lists (what prepare --all would judge):  {data['planned']:>7}")
    print(f"   the memo saves: {data['full_rule'] / data['judge_asked']:.2f}x against the full rule, "
          f"{data['lookups'] / data['judge_asked']:.2f}x against the lookups")

    from citeaudit.judges import JudgmentStore

    store = folder / "judgments.sqlite"
    runs = [
        ("score (no store)", [CLI, "score", str(path), "--format", "json"]),
        ("prepare --store (fills the store)", [CLI, "prepare", str(path), "--store", str(store)]),
        ("score --store --replay (filled)", [CLI, "score", str(path), "--store", str(store), "--replay",
                                             "--format", "json"]),
        ("score --store (filled, not replay)", [CLI, "score", str(path), "--store", str(store), "--format", "json"]),
    ]
    print("\n   A second run from a filled store (fresh process each):")
    print(f"   {'run':<36} {'wall s':>8} {'peak RSS MiB':>13}")
    first = None
    for name, args in runs:
        wall, peak = run_measured(args)
        first = first or wall
        print(f"   {name:<36} {wall:>8.2f} {peak:>13.0f}   {wall / first:.2f}x the first", flush=True)
    print(f"   store: {len(JudgmentStore(store, create=False))} judgments, {store.stat().st_size / 2**20:.1f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--million", action="store_true",
                    help="also 10^6 pairs (about 5 minutes, 0.4 GB of JSONL and 15 GiB of memory)")
    ap.add_argument("--keep", metavar="DIR", help="write the case files here and keep them")
    ap.add_argument("--profile", action="store_true",
                    help="instead: where each phase spends its time and memory, on the 10^4 file")
    ap.add_argument("--phases", metavar="FILE", help=argparse.SUPPRESS)  # the child that times each phase
    ap.add_argument("--gc-off", action="store_true", help=argparse.SUPPRESS)  # ... with gc.disable()
    args = ap.parse_args()
    if args.phases:
        if args.gc_off:
            gc.disable()
        print(json.dumps(phases(args.phases)))
        return

    import citeaudit

    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"machine: {os.cpu_count()} CPUs (os.cpu_count), {memory:.1f} GiB memory, {platform.machine()}, "
          f"Python {platform.python_version()}, citeaudit {citeaudit.__version__}")
    wall, peak = run_measured([CLI, "--version"])
    print(f"baseline: `citeaudit --version` {wall:.2f} s, peak RSS {peak:.0f} MiB\n")
    if args.profile:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(args.keep or tmp) / f"cases_{PHASE_SIZES[0]}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_cases(path, PHASE_SIZES[0])
            profile(str(path))
        return
    sizes = list(SIZES) + ([10**6] if args.million else [])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = end_to_end(folder, sizes)
        runs = {n: measure_phases(files[n]) for n in PHASE_SIZES}
        phase_table(runs, "Phases, in a fresh process per size")
        # Python's cyclic garbage collector rescans every live container object at each full collection,
        # so its cost grows with the heap: the same phases with it off show how much of the time it takes.
        phase_table({n: measure_phases(files[n], gc_off=True) for n in PHASE_SIZES},
                    "The same with the cyclic garbage collector off (gc.disable(); for attribution only)")
        dedup_and_store(folder, files[PHASE_SIZES[0]], runs[PHASE_SIZES[0]])
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
