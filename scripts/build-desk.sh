#!/usr/bin/env bash
# Build the audit desk's optional 3D view: install three.js and esbuild from the lock file, then bundle
# src/citeaudit/desk/frontend/three-view.js into src/citeaudit/desk/static/build/three-view.js.
# The desk works without it (the 2D map is the default and the fallback); run this once after checkout,
# and again when frontend/ changes. Needs node and npm; without them it says so and exits 0, unless
# --require is given (then a missing toolchain or a failed build is an error).
set -euo pipefail
cd "$(dirname "$0")/.."

require=0
[ "${1:-}" = "--require" ] && require=1
frontend=src/citeaudit/desk/frontend
out=src/citeaudit/desk/static/build/three-view.js

skip() {
  echo "build-desk: $1; the desk will show its 2D map only" >&2
  [ "$require" = 1 ] && exit 1
  exit 0
}

command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v npm >/dev/null 2>&1 || skip "npm is not installed"

cd "$frontend"
if ! npm ci --no-audit --no-fund --loglevel=error; then
  skip "npm ci failed (is the npm registry reachable?)"
fi
mkdir -p ../static/build
if ! npx --no-install esbuild three-view.js --bundle --format=esm --minify --legal-comments=eof \
     --outfile=../static/build/three-view.js; then
  skip "esbuild failed"
fi
echo "build-desk: wrote $out" >&2
