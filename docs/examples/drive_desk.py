"""Drive the audit desk from a script: open it on the built-in examples, repair the returns desk's
first claim (cite S1 instead of S2) and read the new citation recall and precision off the page.

    python docs/examples/drive_desk.py [PORT]

Needs the desk extra, Playwright (`pip install playwright`) and a chromium: Debian's `chromium`
package is used as is (Playwright's own browser download is not needed). Prints on stdout (the
desk's own lines go to stderr):

    before: recall 2/4, precision 2/3
    after: recall 3/4, precision 3/3
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

from playwright.sync_api import expect, sync_playwright

# A headless chromium that needs no sandbox, GPU or network: it runs in containers and CI alike.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def start_desk(port: int) -> subprocess.Popen:
    """`citeaudit desk --no-open` in the background, returned once its port accepts connections
    (waiting for the socket, not for the start-up line or a fixed time)."""
    desk = subprocess.Popen([sys.executable, "-m", "citeaudit", "desk", "--no-open", "--port", str(port)],
                            stdout=sys.stderr)  # its start-up line and log apart from the figures
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return desk
        except OSError:
            if desk.poll() is not None or time.monotonic() > deadline:
                desk.kill()
                raise RuntimeError(f"the desk did not start on port {port}") from None
            time.sleep(0.1)


def figures(page) -> str:
    recall = page.get_attribute("#score-citation_recall", "data-counts")
    precision = page.get_attribute("#score-citation_precision", "data-counts")
    return f"recall {recall}, precision {precision}"


def settled(page) -> None:
    """Wait until the server has answered every change the page sent."""
    expect(page.locator("body")).to_have_attribute("data-pending", "0")
    expect(page.locator("body")).not_to_have_attribute("aria-busy", "true")


def main(port: int = 8766) -> None:
    desk = start_desk(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("body[data-ready=true]", timeout=60_000)  # every case judged once
            page.select_option("#case-select", "returns-desk")
            expect(page.locator("#answer-select")).to_have_value("original")
            settled(page)
            print("before:", figures(page))
            page.click("#st-0")  # the first statement, C1, cites S2
            expect(page.locator("#st-0")).to_have_attribute("aria-selected", "true")
            for passage in ("S1", "S2"):  # tick S1, untick S2, each answered by the server in turn
                page.click(f"#cite-{passage}")
                settled(page)
            expect(page.locator("#inspector-citations")).to_have_text("S1")
            print("after:", figures(page))
            browser.close()
    finally:
        desk.terminate()
        desk.wait(10)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8766)
