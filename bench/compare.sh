#!/usr/bin/env bash
# Whole-process time and peak memory of `reward-memory` commands, side by side with the
# LoopX reference when one is available.
#
#   bench/compare.sh                          # ours only
#   LOOPX_BIN=/path/to/loopx bench/compare.sh # also the reference (`loopx reward-memory ...`)
#
# Prints figures; asserts nothing. Uses hyperfine when installed, else a timed loop.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
ours=target/release/reward-memory
runs=${RUNS:-20}

commands=(
  "architecture --format json"
  "corpus-registry --format json"
  "route-check --case pr-3237 --format json"
  "candidate-review --format json"
  "evaluate --format json"
)

peak_kb() {
  /usr/bin/time -f '%M' -o /tmp/rm-peak "$@" >/dev/null 2>&1 || true
  tail -1 /tmp/rm-peak
}

measure() {
  local label=$1; shift
  if command -v hyperfine >/dev/null; then
    hyperfine -N -i --warmup 2 --runs "$runs" --style none --export-json /tmp/rm-bench.json "$*" >/dev/null 2>&1
    mean=$(python3 -c 'import json;r=json.load(open("/tmp/rm-bench.json"))["results"][0];print("%.2f ms ± %.2f" % (r["mean"]*1000, r["stddev"]*1000))')
  else
    start=$(date +%s%N)
    for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || true; done
    mean="$(( ($(date +%s%N) - start) / runs / 1000 )) us"
  fi
  printf '%-10s %-42s %-22s peak RSS %s KiB\n' "$label" "$*" "$mean" "$(peak_kb "$@")"
}

for c in "${commands[@]}"; do
  # shellcheck disable=SC2086
  measure ours $ours $c
  if [ -n "${LOOPX_BIN:-}" ]; then
    # shellcheck disable=SC2086
    runs=${REF_RUNS:-5} measure reference "$LOOPX_BIN" reward-memory $c
  fi
done
