#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `reward-memory utility-project` on the
# contract-sized inputs, plus synthetic inputs past the 1024-delivery cap.
#
# Usage: bench/utility-project.sh            (from the repository root)
#        LOOPX_REFERENCE=/path/to/dir bench/utility-project.sh
#
# LOOPX_REFERENCE, when set, is a directory that holds the `loopx` Python package; the
# reference CLI is then run as `python3 -m loopx reward-memory utility-project` on the
# same inputs. Figures are printed only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
shared="$root/../shared"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet
bin="$root/target/release/reward-memory"

# Inputs -------------------------------------------------------------------------------
cp "$shared/bench/utility-project-1024.json" "$work/bench-1024.json"
python3 - "$shared/conformance/cases/utility-project-max-1024-a.json" "$work" <<'PY'
import copy, json, sys
case = json.load(open(sys.argv[1]))
work = sys.argv[2]
(name, value), = case["input_files"].items()
json.dump(value, open(f"{work}/max-1024-a.json", "w"))

bench = json.load(open(f"{work}/bench-1024.json"))
obs = bench["observations"]

# 512 ids delivered twice with a changed confidence: 512 conflicting deliveries.
conflicts = copy.deepcopy(bench)
half = obs[:512]
changed = []
for o in half:
    c = copy.deepcopy(o)
    c["confidence"] = 0.5 if o["confidence"] != 0.5 else 0.25
    changed.append(c)
conflicts["observations"] = half + changed
json.dump(conflicts, open(f"{work}/conflicts-1024.json", "w"))

# Past the cap: the contract rejects more than 1024 deliveries, so these measure how
# fast an oversized stream is parsed and refused.
for n in (10_000, 100_000):
    big = dict(bench)
    big["observations"] = [obs[i % len(obs)] for i in range(n)]
    json.dump(big, open(f"{work}/synthetic-{n}.json", "w"))
PY

inputs=(bench-1024 max-1024-a conflicts-1024 synthetic-10000 synthetic-100000)

# Measurement --------------------------------------------------------------------------
peak_rss_kb() {
    /usr/bin/time -v "$@" >/dev/null 2>"$work/time.txt" || true
    awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt"
}

wall_ms() {
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine --style none --warmup 1 --runs 10 -N --ignore-failure \
            --export-json "$work/hf.json" "$(printf '%q ' "$@")" >/dev/null 2>&1
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f ± %.1f" % (r["mean"]*1000, r["stddev"]*1000))' "$work/hf.json"
    else
        local start end
        start=$(date +%s%N)
        for _ in 1 2 3 4 5; do "$@" >/dev/null || true; done
        end=$(date +%s%N)
        echo "$(( (end - start) / 5000000 ))"
    fi
}

outcome() {
    "$@" 2>/dev/null | python3 -c 'import json,sys
try:
    p = json.load(sys.stdin)
except ValueError:
    print("no JSON on stdout")
    sys.exit(0)
print(p.get("status"), "accepted=%s" % p.get("accepted_observation_count"), "subjects=%s" % p.get("subject_count"))' || true
}

run_all() {
    local label=$1; shift
    echo "== $label"
    printf '%-18s %-10s %-22s %-14s %s\n' input size "wall ms (mean±sd)" "peak RSS KiB" result
    for name in "${inputs[@]}"; do
        local file="$work/$name.json"
        local size
        size=$(du -h "$file" | cut -f1)
        local cmd=("$@" --input "$file" --format json)
        printf '%-18s %-10s %-22s %-14s %s\n' "$name" "$size" "$(wall_ms "${cmd[@]}")" \
            "$(peak_rss_kb "${cmd[@]}")" "$(outcome "${cmd[@]}")"
    done
}

run_all "reward-memory $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$bin" utility-project

if [[ -n "${LOOPX_REFERENCE:-}" ]] \
    && ! PYTHONPATH="$LOOPX_REFERENCE" python3 -c 'import loopx' 2>/dev/null; then
    echo "(cannot import loopx from LOOPX_REFERENCE=$LOOPX_REFERENCE; reference not timed)"
elif [[ -n "${LOOPX_REFERENCE:-}" ]]; then
    run_all "reference (python3 -m loopx, PYTHONPATH=$LOOPX_REFERENCE)" \
        env PYTHONPATH="$LOOPX_REFERENCE" python3 -m loopx reward-memory utility-project
else
    echo "(set LOOPX_REFERENCE to a directory holding the loopx package to time the reference)"
fi
