#!/usr/bin/env bash
# Set up a development environment in .venv: citeaudit (editable) with its test dependencies.
# With --browser, also Debian's chromium for the browser tests.
# Idempotent: a second run only checks that everything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "citeaudit needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# Browser tests drive Debian's chromium with Playwright (Playwright's own browser download does not
# work without network access). Installed once, as root.
if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser tests..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "note: chromium is missing; browser tests will be skipped (install Debian's 'chromium' package)" >&2
  fi
fi
# Reinstall only when the project's dependencies changed since the last set-up.
stamp=.venv/.citeaudit-setup
want=$(cat pyproject.toml scripts/constraints.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # constraints.txt pins torch to the CPU build (a plain 'torch' would pull a CUDA build of several GB).
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c scripts/constraints.txt -e ".[dev]"
  echo "$want" > "$stamp"
fi
# The desk's optional 3D view (three.js from npm, bundled with esbuild); without node/npm the desk
# keeps its 2D map. Rebuilt only when the front end changed.
built=src/citeaudit/desk/static/build/three-view.js
front=$(cat src/citeaudit/desk/frontend/package-lock.json src/citeaudit/desk/frontend/three-view.js | sha256sum | cut -d' ' -f1)
if [ ! -f "$built" ] || [ "$(cat .venv/.citeaudit-desk 2>/dev/null)" != "$front" ]; then
  bash scripts/build-desk.sh && [ -f "$built" ] && echo "$front" > .venv/.citeaudit-desk || true
fi
