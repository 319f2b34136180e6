"""How scoring scales: end-to-end time and peak memory from 10^3 to 10^6 claim-citation pairs, loaded
(every case in memory, up to 10^5) and streamed (one case at a time) side by side, the time of each phase
of the loaded path, and what deduplication and a filled judgment store save.

    python benchmarks/scale.py [--quick] [--keep DIR]   # --quick leaves out the streamed 10^6 run
    python benchmarks/scale.py --profile   # where the time and memory go, at 10^4 (loaded phases, then streamed)
    python benchmarks/scale.py --against OLD_SRC [--quick]   # streamed: this tree against another, side by side

Cases come from benchmarks/synthetic.py (also used by tests/test_streaming.py): six one-sentence
sources, a ranking, a gold document, and one answer of five statements citing two sources each (ten
claim-citation pairs per case), every pair scoring may ask about labelled for the curated judge, so the
figures measure citeaudit itself, not a model.

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

from synthetic import write_cases  # benchmarks/ is on the path when this runs as a script

CLI = str(Path(sys.executable).with_name("citeaudit"))
SIZES = (10**3, 10**4, 10**5)
PHASE_SIZES = (10**4, 10**5)  # phases timed at both, to see which grows faster than the input

# --- measuring ---------------------------------------------------------------------------------------

def run_timed(args: list[str], stdout=subprocess.DEVNULL, env: dict | None = None) -> tuple[float, float, float]:
    """Run a command to completion: its wall seconds, its CPU seconds (user + system: steadier than wall
    when the CPUs are shared) and its own peak RSS in MiB. Fails on a non-zero exit."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=stdout, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            sys.exit(f"{' '.join(args)} exited {os.waitstatus_to_exitcode(status)}:\n{err.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux reports KiB


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
    from citeaudit.files.loading import load_cases
    from citeaudit.metrics import Settings, score_cases
    from citeaudit.run.results import results_of

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


def profile_streamed(path: str, top: int = 25) -> None:
    """Where a streamed `citeaudit score FILE --format jsonl` spends its time (cProfile, by own time)."""
    import cProfile
    import io
    import pstats

    from citeaudit.metrics import Settings
    from citeaudit.parse.resolve import Reading
    from citeaudit.run.pipeline import Run, read_cases
    from citeaudit.run.outputs import JsonLines

    reading = Reading()
    profiler = cProfile.Profile()

    def score_jsonl(sink) -> None:
        with Run.judged(read_cases([path], reading), Settings(), reading) as run:
            run.write([JsonLines(sink)])

    with open(os.devnull, "w", encoding="utf-8") as sink:
        profiler.runcall(score_jsonl, sink)
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).strip_dirs().sort_stats("tottime").print_stats(top)
    lines = [line for line in stream.getvalue().splitlines() if line.strip()]
    print(f"--- streamed score (the pipeline, --format jsonl): time (cProfile, top {top} by own time)")
    print("\n".join(lines[lines.index(next(x for x in lines if x.lstrip().startswith("ncalls"))):]))


# --- the report --------------------------------------------------------------------------------------

def end_to_end(folder: Path, sizes: list[int], streamed_sizes: list[int]) -> dict[int, Path]:
    print("1. End to end, the curated judge, one fresh process per run; side by side:")
    print("   loaded:        citeaudit score FILE --format json > /dev/null   (every case in memory at once)")
    print("   streamed:      citeaudit score FILE --format jsonl > /dev/null  (one case at a time)")
    print("   streamed+log:  citeaudit score FILE --out run.jsonl             (also a streamed run log)")
    print("   wall and CPU seconds (user + system), pairs per CPU second, peak RSS in MiB")
    kinds = (("loaded", "loaded"), ("streamed", "streamed"), ("log", "streamed+log"))
    print(f"{'pairs':>9} {'MiB in':>7}" + "".join(f" | {label:>12} {'CPU s':>7} {'pairs/CPU s':>11} {'peak':>6}"
                                                for _, label in kinds))
    files: dict[int, Path] = {}
    runs: dict[str, dict[int, tuple[float, float, float]]] = {kind: {} for kind, _ in kinds}
    for pairs in streamed_sizes:
        path = folder / f"cases_{pairs}.jsonl"
        write_cases(path, pairs)
        files[pairs] = path
        if pairs in sizes:
            runs["loaded"][pairs] = run_timed([CLI, "score", str(path), "--format", "json"])
        runs["streamed"][pairs] = run_timed([CLI, "score", str(path), "--format", "jsonl"])
        if pairs in sizes:
            log = folder / f"run_{pairs}.jsonl"
            runs["log"][pairs] = run_timed([CLI, "score", str(path), "--out", str(log)])
            log.unlink()

        def cells(kind: str) -> str:
            if pairs not in runs[kind]:
                return f" | {'-':>12} {'-':>7} {'-':>11} {'-':>6}"
            wall, cpu, peak = runs[kind][pairs]
            return f" | {wall:>10.2f} s {cpu:>7.2f} {pairs / cpu:>11.0f} {peak:>6.0f}"

        print(f"{pairs:>9} {path.stat().st_size / 2**20:>7.1f}" + "".join(cells(kind) for kind, _ in kinds), flush=True)
        if pairs == 10**6:
            path.unlink()  # 390 MiB: not kept for the phases
    base = PHASE_SIZES[0]
    for kind, label in kinds:
        for pairs, (wall, cpu, peak) in runs[kind].items():
            if pairs > base and base in runs[kind]:
                _, base_cpu, base_peak = runs[kind][base]
                print(f"   {label}: {pairs} vs {base} pairs ({pairs // base}x the input): CPU time {cpu / base_cpu:.1f}x, "
                      f"peak RSS {peak / base_peak:.2f}x")
    for pairs in sizes:
        if pairs in runs["streamed"]:
            print(f"   at {pairs} pairs, streamed against loaded: CPU time "
                  f"{runs['streamed'][pairs][1] / runs['loaded'][pairs][1]:.2f}x, "
                  f"peak RSS {runs['streamed'][pairs][2] / runs['loaded'][pairs][2]:.2f}x")
    return files


def against(folder: Path, sizes: list[int], old_src: str, rounds: int = 2) -> None:
    """Streamed scoring by this tree and by the citeaudit package under `old_src` (a copy of an earlier
    src/, put first on PYTHONPATH), on the same files, alternating run by run; each one's least CPU time of
    `rounds` runs, and whether the two wrote the same bytes."""
    print(f"Streamed (citeaudit score FILE --format jsonl), this tree against {old_src}, alternating, "
          f"best of {rounds} by CPU s:")
    print(f"{'pairs':>9} | {'old CPU s':>9} {'pairs/CPU s':>11} {'peak':>5} | {'new CPU s':>9} {'pairs/CPU s':>11} "
          f"{'peak':>5} | {'new/old CPU':>11} | same output")
    old_env = {**os.environ, "PYTHONPATH": old_src}
    for pairs in sizes:
        path = folder / f"cases_{pairs}.jsonl"
        write_cases(path, pairs)
        best: dict[str, tuple[float, float, float]] = {}
        outputs = {}
        for _ in range(rounds):
            for which, env in (("old", old_env), ("new", None)):
                out = folder / f"{which}_{pairs}.jsonl"
                with out.open("wb") as fh:
                    run = run_timed([CLI, "score", str(path), "--format", "jsonl"], stdout=fh, env=env)
                if which not in best or run[1] < best[which][1]:
                    best[which] = run
                outputs[which] = out
        same = outputs["old"].read_bytes() == outputs["new"].read_bytes()
        (_, old_cpu, old_peak), (_, new_cpu, new_peak) = best["old"], best["new"]
        print(f"{pairs:>9} | {old_cpu:>9.2f} {pairs / old_cpu:>11.0f} {old_peak:>5.0f} | {new_cpu:>9.2f} "
              f"{pairs / new_cpu:>11.0f} {new_peak:>5.0f} | {new_cpu / old_cpu:>10.2f}x | {'yes' if same else 'NO'}",
              flush=True)
        for out in outputs.values():
            out.unlink()


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
    ap.add_argument("--quick", action="store_true", help="leave out the streamed 10^6-pair run (about 3 minutes)")
    ap.add_argument("--keep", metavar="DIR", help="write the case files here and keep them")
    ap.add_argument("--profile", action="store_true",
                    help="instead: where each phase spends its time and memory, on the 10^4 file")
    ap.add_argument("--against", metavar="OLD_SRC",
                    help="instead: streamed scoring, this tree against the citeaudit package in OLD_SRC (a copy "
                         "of an earlier src/), side by side on the same files")
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
    wall, cpu, peak = run_timed([CLI, "--version"])
    print(f"baseline: `citeaudit --version` {wall:.2f} s ({cpu:.2f} CPU s), peak RSS {peak:.0f} MiB")
    print(f"load average over the last minute at the start: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)\n")
    if args.profile:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(args.keep or tmp) / f"cases_{PHASE_SIZES[0]}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_cases(path, PHASE_SIZES[0])
            profile(str(path))
            profile_streamed(str(path))
        return
    started = time.perf_counter()
    if args.against:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(args.keep or tmp)
            folder.mkdir(parents=True, exist_ok=True)
            against(folder, list(SIZES) + ([] if args.quick else [10**6]), args.against)
        print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = end_to_end(folder, list(SIZES), list(SIZES) + ([] if args.quick else [10**6]))
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
