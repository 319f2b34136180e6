"""The desk's start-up line is a promise: a script that reads `citeaudit desk on URL` and connects at
once is served, however loaded the machine (the line used to come before the socket listened)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

TRIES = 3


def _desk() -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the line as soon as it is printed, flushed or not
    return subprocess.Popen([sys.executable, "-m", "citeaudit", "desk", "--port", "0", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _stop(desk: subprocess.Popen) -> None:
    desk.terminate()
    try:
        desk.wait(timeout=60)
    except subprocess.TimeoutExpired:
        desk.kill()
        desk.wait()


@pytest.mark.parametrize("attempt", range(TRIES))
def test_a_client_that_connects_on_the_start_up_line_is_served(attempt):
    desk = _desk()
    try:
        line = desk.stdout.readline()
        found = re.fullmatch(r"citeaudit desk on http://127\.0\.0\.1:(\d+)/ \(Ctrl\+C to stop\)\n", line)
        assert found, (line, desk.stderr.read() if desk.poll() is not None else "")
        port = int(found.group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=60) as client:  # at once: no retry
            client.sendall(f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            status = client.makefile("rb").readline()
        assert status.startswith(b"HTTP/1.1 200"), status
    finally:
        _stop(desk)
