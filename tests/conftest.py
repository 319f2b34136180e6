"""Shared fixtures."""

import socket

import pytest
from click.testing import CliRunner


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def chromium():
    """Debian's chromium driven by Playwright (its own browser download does not work offline).
    Installed by scripts/setup.sh; missing in CI is a failure, elsewhere a skip that says why."""
    import os
    import shutil

    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; scripts/setup.sh installs it")
        pytest.skip("chromium is not installed (run scripts/setup.sh as root)")
    from playwright.sync_api import expect, sync_playwright

    # Every check waits for a state on the page; on a loaded 2-core machine the server's answer can take
    # longer than Playwright's default 5 s. The ceiling only bounds a failure: a passing check returns at once.
    expect.set_options(timeout=30_000)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def test_output():
    """Screenshots and other artefacts tests keep, under test-output/ at the project root."""
    from pathlib import Path

    out = Path(__file__).resolve().parents[1] / "test-output"
    out.mkdir(exist_ok=True)
    return out


@pytest.fixture
def shots(request, test_output):
    """The folder for a browser test's screenshots: test-output/<the module's SCREENSHOTS>."""
    out = test_output / request.module.SCREENSHOTS
    out.mkdir(exist_ok=True)
    return out


@pytest.fixture
def offline(monkeypatch):
    """No model keys, and every connection to a network address fails the test (an event loop's local
    sockets are left be): the harness integrations must run with nothing but this machine."""
    attempts = []
    connect = socket.socket.connect

    def guarded(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"offline test tried to connect to {address}")
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    for key in ("OPENAI_API_KEY", "CONFIDENT_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    yield
    assert not attempts, f"network connections attempted: {attempts}"
