#!/usr/bin/env bash
# Retrain the model judge on an accelerator machine (one GPU, no network, 10 minutes a command),
# writing the judge directory in the shipped layout. Three steps, the middle one there:
#
#   bash scripts/train-on-accelerator.sh prepare [--no-wheels] [bundle options]   # here, once
#       builds .accel/ (ignored): the base packed to fit the 64 MiB a run there carries, the training mix
#       (needs the public sets: --data-dir or shared/data), the dev rows for the fp32/int8 comparison
#       and the calibration, wheels of what citeaudit needs and that machine lacks, and plan.env (the
#       train-judge options); then checks what a run would carry against the 64 MiB.
#       Bundle options: --base NAME|DIR --nli-sets standard|large --nli-ratio R --per-source-cap N
#       --unstated-licence-nli --seed S --train-options "..." (scripts/accelerator_bundle.py).
#   bash scripts/train-on-accelerator.sh run                                       # there: the one command
#       installs the wheels, unpacks the base, runs `citeaudit train-judge` (train, export to int8
#       ONNX, calibration) and writes the judge directory to $OUT/judge (files over 15 MiB in pieces)
#       and the log to $OUT/train.log.
#   bash scripts/train-on-accelerator.sh collect RETURNED DEST                      # here, after
#       joins RETURNED/judge (RETURNED: the run's $OUT, copied back) into DEST and checks every file
#       against the sha256 in its model card.
#
# Environment: ACCEL_BUNDLE (default .accel), PYTHON (default python3), ACCEL_WORK (the run's
# scratch folder, default a new one under /tmp), OUT (run: where the results go).
# CI never runs this on an accelerator; tests/test_train_accelerator.py runs prepare, run and collect
# on CPU with a tiny model and a tiny data folder.
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${ACCEL_BUNDLE:-.accel}
PYTHON=${PYTHON:-python3}
stamp() { echo "[$(date +%H:%M:%S) +$(( $(date +%s) - START ))s] $*"; }
START=$(date +%s)

prepare() {
  local wheels=1 args=()
  for a in "$@"; do
    if [ "$a" = --no-wheels ]; then wheels=0; else args+=("$a"); fi
  done
  rm -rf "$BUNDLE"
  "$PYTHON" scripts/accelerator_bundle.py bundle "$BUNDLE" "${args[@]}"
  if [ "$wheels" = 1 ]; then
    # what citeaudit's training path imports that the machine's image lacks (its list: the device
    # notes), at the versions installed here; for its Python 3.12 on x86-64
    local want=() name
    for name in pydantic pydantic-core annotated-types typing-inspection typing-extensions pysbd json-source-map; do
      want+=("$name==$("$PYTHON" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name")")
    done
    "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$BUNDLE/wheels" "${want[@]}"
  fi
  "$PYTHON" scripts/accelerator_bundle.py size "$BUNDLE"
}

run() {
  : "${OUT:?run writes to \$OUT (set on the accelerator machine)}"
  local work=${ACCEL_WORK:-$(mktemp -d /tmp/citeaudit-accel.XXXX)}
  mkdir -p "$work" "$OUT"
  train "$work" 2>&1 | tee "$OUT/train.log"
}

train() {
  local work=$1 site
  stamp "run: $(uname -m), $("$PYTHON" --version 2>&1); bundle $BUNDLE; work $work"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  site="$work/site"
  if compgen -G "$BUNDLE/wheels/*.whl" >/dev/null; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$BUNDLE"/wheels/*.whl
  fi
  export PYTHONPATH="$PWD/src:$site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
  export CITEAUDIT_THREADS=${CITEAUDIT_THREADS:-8}
  "$PYTHON" scripts/accelerator_bundle.py unpack-base "$BUNDLE/base" "$work/base"
  gzip -dc "$BUNDLE/dev.jsonl.gz" > "$work/dev.jsonl"
  # shellcheck disable=SC1090,SC1091
  . "$BUNDLE/plan.env"
  stamp "setup done; train-judge $TRAIN_OPTIONS"
  # shellcheck disable=SC2086
  "$PYTHON" -m citeaudit.cli train-judge "$work/judge" --base "$work/base" --mix "$BUNDLE/mix" \
    --dev-rows "$work/dev.jsonl" --work-dir "$work/train" $TRAIN_OPTIONS 2>&1 \
    | while IFS= read -r line; do echo "[+$(( $(date +%s) - START ))s] $line"; done
  stamp "trained, exported and calibrated"
  "$PYTHON" scripts/accelerator_bundle.py split "$work/judge" "$OUT/judge"
  stamp "judge directory in $OUT/judge"
}

collect() {
  [ $# -eq 2 ] || { echo "usage: $0 collect RETURNED DEST" >&2; exit 2; }
  "$PYTHON" scripts/accelerator_bundle.py join "$1/judge" "$2"
  echo "check it: citeaudit validate-judge DEV.jsonl --judge model:path=$2" >&2
}

verb=${1:-}
shift || true
case "$verb" in
  prepare) prepare "$@" ;;
  run) run ;;
  collect) collect "$@" ;;
  *) echo "usage: $0 prepare [--no-wheels] [bundle options] | run | collect RETURNED DEST" >&2; exit 2 ;;
esac
