#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `reward-memory utility-project` on the
# contract-sized inputs, plus synthetic inputs past the 1024-delivery cap.
#
# Usage: bench/utility-project.sh            (from the repository root)
#        LOOPX_BIN=/path/to/loopx bench/utility-project.sh   (a LoopX CLI with the command)
#        LOOPX_REFERENCE_CMD="python3 /path/to/driver.py" bench/utility-project.sh
#        LOOPX_REFERENCE=/path/to/dir bench/utility-project.sh
#
# LOOPX_REFERENCE_CMD is a command prefix for the reference reducer. It is split on
# whitespace (no shell quoting; wrap anything more complex in a script) and run as
# `<prefix> --input FILE --format json`, exactly like ours. Two ways to fill it:
#   * a LoopX checkout whose CLI has `reward-memory utility-project`: a wrapper script
#     that runs `loopx reward-memory utility-project "$@"`;
#   * a snapshot without that subcommand, with the upstream reducer modules
#     (utility_reducer.py, utility_projection_validation.py, memory_utility.py) overlaid:
#     a small driver that loads the input object, applies the CLI input checks of
#     spec utility-and-evaluation.md section 7.1, calls
#     `reduce_reward_memory_utility_observations(..., strict=False)` and prints the
#     projection with `json.dumps(payload, indent=2, ensure_ascii=False)`, exit 0 when
#     `ok` is true, else 2. Keep that driver outside this repository.
# LOOPX_REFERENCE (older form) is a directory that holds the `loopx` Python package; the
# reference is then run as `python3 -m loopx reward-memory utility-project`.
#
# Python start-up depends on whether the reference's bytecode is cached: with
# PYTHONDONTWRITEBYTECODE=1 and no __pycache__ every run recompiles the imported modules.
# For a fair figure, `python3 -m compileall -q <dir>/loopx` first (the script prints which
# case applies). Note that Python puts a driver script's own directory first on sys.path,
# so the `loopx` package beside the driver wins over PYTHONPATH. BENCH_RUNS (default 10) and REF_RUNS (default 5) set hyperfine's runs.
# For every input the reference's stdout is compared byte for byte with ours.
# Figures are printed only; nothing here asserts a time.
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
        hyperfine --style none --warmup 2 --runs "$runs" -N --ignore-failure \
            --export-json "$work/hf.json" "$(printf '%q ' "$@")" >/dev/null 2>&1
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.2f ± %.2f (med %.2f, min %.2f)" % (r["mean"]*1000, r["stddev"]*1000, r["median"]*1000, r["min"]*1000))' "$work/hf.json"
    else
        local start end
        start=$(date +%s%N)
        for _ in 1 2 3 4 5; do "$@" >/dev/null || true; done
        end=$(date +%s%N)
        echo "$(( (end - start) / 5000000 )) (no hyperfine)"
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

same_as_ours() {
    local name=$1; shift
    if "$@" >"$work/ref-$name.out" 2>/dev/null; [[ -s "$work/ref-$name.out" ]]; then
        if cmp -s "$work/ref-$name.out" "$work/ours-$name.out"; then echo "same"; else echo "DIFFERENT"; fi
    else
        echo "no output"
    fi
}

# run_all LABEL COMPARE(0|1) COMMAND...: one row per input.
run_all() {
    local label=$1 compare=$2; shift 2
    echo "== $label"
    printf '%-18s %-10s %-36s %-14s %-44s %s\n' input size "wall ms (mean±sd, median, min)" "peak RSS KiB" result \
        "$( ((compare)) && echo "stdout vs ours")"
    for name in "${inputs[@]}"; do
        local file="$work/$name.json"
        local size
        size=$(du -h "$file" | cut -f1)
        local cmd=("$@" --input "$file" --format json)
        local same=""
        if ((compare)); then
            same=$(same_as_ours "$name" "${cmd[@]}")
        else
            "${cmd[@]}" >"$work/ours-$name.out" 2>/dev/null || true
        fi
        printf '%-18s %-10s %-36s %-14s %-44s %s\n' "$name" "$size" "$(wall_ms "${cmd[@]}")" \
            "$(peak_rss_kb "${cmd[@]}")" "$(outcome "${cmd[@]}")" "$same"
    done
}

runs=${BENCH_RUNS:-10}
run_all "reward-memory $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" 0 \
    "$bin" utility-project

# Instruction counts are stable where wall time is not (the machine is shared). Valgrind
# hides SHA-NI from the program, so these counts include a software SHA-256 (about 55 M
# instructions of the total on the contract inputs) that a real run does in hardware.
if command -v valgrind >/dev/null 2>&1; then
    echo "== instructions (valgrind --tool=callgrind, whole process)"
    for name in bench-1024 max-1024-a conflicts-1024; do
        count=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" utility-project \
            --input "$work/$name.json" --format json 2>&1 >/dev/null \
            | awk '/Collected :/ {print $4}')
        printf '%-18s %s\n' "$name" "$count"
    done
else
    echo "(valgrind not installed: no instruction counts)"
fi

runs=${REF_RUNS:-5}
echo "(reference bytecode: PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}; modules without a cached .pyc are recompiled on every run when it is set)"
if [[ -z "${LOOPX_REFERENCE_CMD:-}" && -n "${LOOPX_BIN:-}" ]]; then
    LOOPX_REFERENCE_CMD="$LOOPX_BIN reward-memory utility-project"
fi
if [[ -n "${LOOPX_REFERENCE_CMD:-}" ]]; then
    read -r -a ref_cmd <<<"$LOOPX_REFERENCE_CMD"
    run_all "reference ($LOOPX_REFERENCE_CMD)" 1 "${ref_cmd[@]}"
elif [[ -n "${LOOPX_REFERENCE:-}" ]] \
    && ! PYTHONPATH="$LOOPX_REFERENCE" python3 -c 'import loopx' 2>/dev/null; then
    echo "(cannot import loopx from LOOPX_REFERENCE=$LOOPX_REFERENCE; reference not timed)"
elif [[ -n "${LOOPX_REFERENCE:-}" ]]; then
    run_all "reference (python3 -m loopx, PYTHONPATH=$LOOPX_REFERENCE)" 1 \
        env PYTHONPATH="$LOOPX_REFERENCE" python3 -m loopx reward-memory utility-project
else
    echo "(set LOOPX_BIN, LOOPX_REFERENCE_CMD or LOOPX_REFERENCE to time the reference; see the header)"
fi
