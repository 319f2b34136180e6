"""How the Markdown and terminal reports and `compare` scale with the answers of a run: the time to render
the Markdown report, the terminal summary with the worst answers (default) and with every answer
(--details, to a pipe), and to compare two runs (paired bootstrap of every figure, label agreement with
its intervals, changed claims sorted), at 1,000 and 10,000 answers.

    python benchmarks/report_compare_scale.py [--sizes 1000,10000]

Runs are the golden P7 run's three answers copied into as many cases as needed (tests/run_copies.py),
so nothing is scored: the figures measure rendering and comparing alone. The second run of each
comparison relabels one claim in every fourth answer.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import time
from pathlib import Path

from rich.console import Console

from citeaudit.run.compare import compare, format_comparison
from citeaudit.report.render import PIPED_WIDTH, print_text, to_markdown

_COPIES = Path(__file__).resolve().parents[1] / "tests" / "run_copies.py"


def _copies():
    spec = importlib.util.spec_from_file_location("run_copies", _COPIES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="answers per run, comma-separated")
    args = parser.parse_args()
    copies = _copies()

    def relabel(i, answer):
        if i % 4 == 0 and answer["system"] == "A":
            answer["claims"][1]["judgment"]["label"] = "partial"

    print(f"{'answers':>8} {'claims':>7} {'markdown s':>11} {'MB':>6} {'text s':>7} {'--details s':>12} "
          f"{'compare s':>10} {'changed':>8}")
    for answers in (int(s) for s in args.sizes.split(",")):
        cases = -(-answers // 3)
        a = copies.as_log(copies.copied_run(cases))
        b = copies.as_log(copies.copied_run(cases, relabel))
        claims = sum(len(x.claims) for x in a.results.answers)
        t_md, markdown = _timed(lambda: to_markdown(a.results, a.signature))

        def text(details: bool) -> None:
            print_text(a.results, a.signature, Console(file=io.StringIO(), width=PIPED_WIDTH, soft_wrap=True,
                                                       color_system=None), details=details)

        t_text, _ = _timed(lambda: text(False))
        t_details, _ = _timed(lambda: text(True))
        t_compare, result = _timed(lambda: compare(a, b, name_a="a", name_b="b"))
        t_format, _ = _timed(lambda: format_comparison(result))
        print(f"{len(a.results.answers):>8} {claims:>7} {t_md:>11.2f} {len(markdown) / 1e6:>6.1f} {t_text:>7.2f} "
              f"{t_details:>12.2f} {t_compare + t_format:>10.2f} {len(result.claims):>8}")


if __name__ == "__main__":
    main()
