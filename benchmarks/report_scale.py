"""The HTML report at real size: render time (with and without the charts, side by side), file size, and,
where chromium is installed, the time until the page's table is ready and the document's height.

    python benchmarks/report_scale.py [--answers 1000 10000]

The runs are the browser test's (tests/report_run.py): cases from benchmarks/synthetic.py, two
systems per case, a deterministic judge with scores, an uncertain band and the guard's findings.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from report_run import shaped_run  # noqa: E402

from citeaudit.report import charts  # noqa: E402
from citeaudit.report.html import render_html  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def open_in_chromium(path: Path) -> tuple[float, int] | None:
    if shutil.which("chromium") is None:
        return None
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=120_000)
        ready = time.perf_counter() - start
        height = page.evaluate("document.documentElement.scrollHeight")
        browser.close()
    return ready, height


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    has_charts = charts.available()
    header = f"{'answers':>8} {'claims':>7} {'render s':>9} {'no charts s':>12} {'MB':>6} {'ready s':>8} {'height px':>10}"
    with tempfile.TemporaryDirectory() as tmp:
        # Start-up paid once per process (imports, the chart engine), kept out of the per-size figures.
        small = shaped_run(Path(tmp) / "warm.jsonl", 10)
        _, warm = timed(lambda: render_html(small))
        print(f"start-up (first report of 10 answers): {warm:.2f} s")
        print(header)
        for n in args.answers:
            log = shaped_run(Path(tmp) / f"cases-{n}.jsonl", n)
            claims = sum(len(a.claims) for a in log.results.answers)
            html, with_charts = timed(lambda: render_html(log))
            available = charts.available
            charts.available = lambda: False
            try:
                _, without = timed(lambda: render_html(log))
            finally:
                charts.available = available
            path = Path(tmp) / f"report-{n}.html"
            path.write_text(html, encoding="utf-8")
            opened = open_in_chromium(path)
            ready, height = opened if opened else (float("nan"), 0)
            print(f"{n:>8} {claims:>7} {with_charts if has_charts else float('nan'):>9.2f} {without:>12.2f} "
                  f"{path.stat().st_size / 2**20:>6.1f} {ready:>8.2f} {height:>10}")


if __name__ == "__main__":
    main()
