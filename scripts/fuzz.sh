#!/usr/bin/env bash
# Coverage-guided fuzzing of the parser, the printers, the timestamp parser and the input
# handler of every --input command (cargo-fuzz, libFuzzer; needs a nightly toolchain).
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   SECONDS  time per target (default 60)
#   TARGET   some of the targets below (default: all)
#   RUNS=N scripts/fuzz.sh ...   stops each target after N executions instead
#   JOBS=2 scripts/fuzz.sh ...   runs two targets at a time
#   FUZZ_TARGET_DIR=DIR ...      builds into DIR (CI keeps it under ~/.cache so the
#                                sanitizer build of the crate is incremental between runs)
# Corpora live in fuzz/corpus/<target>/ (not committed) and are seeded from fixtures/
# on every run; crashes land in fuzz/artifacts/<target>/. Prints the executions of each
# target and exits non-zero when a target found a crash, a timeout or a leak.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds=${1:-60}
shift || true
all=(json_roundtrip timestamp ingest_event dogfood_evaluate operator_control
    utility_project utility_observe utility_validate rank_prior
    ledger_append_input rank_evaluate_episodes apply_input utility_project_scan)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

if ! cargo +nightly --version >/dev/null 2>&1 || ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: needs a nightly toolchain and cargo-fuzz (cargo install cargo-fuzz)" >&2
    exit 2
fi

# Seeds --------------------------------------------------------------------------------
seed() { # seed TARGET FILE...
    local dir="fuzz/corpus/$1"
    shift
    mkdir -p "$dir"
    for f in "$@"; do
        [[ -f "$f" ]] && cp "$f" "$dir/seed-$(sha256sum "$f" | cut -c1-16)"
    done
    return 0
}
shopt -s nullglob globstar
seed json_roundtrip $(find fixtures -name "*.json" -size -16k)
seed ingest_event fixtures/ingest_event/**/*.json
seed dogfood_evaluate fixtures/dogfood_evaluate/**/*.json
seed operator_control fixtures/operator_control/**/*.json
seed utility_project fixtures/utility_project/**/*.json
seed utility_project_scan fixtures/utility_project/**/*.json
seed utility_observe fixtures/utility_observe/**/*.json
seed utility_validate fixtures/utility_validate/**/*.json
seed rank_prior fixtures/rank_prior/**/*.json
seed ledger_append_input fixtures/utility_ledger/**/*.json* fixtures/utility_project/valid/*.json \
    fixtures/rank_evaluate/valid/*.jsonl
seed rank_evaluate_episodes fixtures/rank_evaluate/**/*.jsonl
seed traffic_log fixtures/rank_evaluate/logged/*.jsonl
seed apply_input fixtures/apply/**/*.json
mkdir -p fuzz/corpus/timestamp
grep -rhoE '"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][^"]{0,40}"' fixtures | tr -d '"' | sort -u |
    while read -r ts; do
        printf '%s' "$ts" >"fuzz/corpus/timestamp/seed-$(printf '%s' "$ts" | sha256sum | cut -c1-16)"
    done

# Runs ---------------------------------------------------------------------------------
target_dir=()
[[ -n "${FUZZ_TARGET_DIR:-}" ]] && target_dir=(--target-dir "$FUZZ_TARGET_DIR")
# Optimized, with debug assertions and overflow checks (-a): the reducer's readback of every
# projection it builds, among other invariants, is a debug assertion.
cargo +nightly fuzz build -O -a "${target_dir[@]}" >/dev/null
limit=(-max_total_time="$seconds")
[[ -n "${RUNS:-}" ]] && limit=(-runs="$RUNS")

# The largest input worth mutating: the input handlers of small request objects and of
# line-oriented streams find their bugs in short inputs, and run many times faster there.
max_len() { # max_len TARGET
    case $1 in
        apply_input) echo 4096 ;;
        ledger_append_input | rank_evaluate_episodes) echo 16384 ;;
        *) echo 65536 ;;
    esac
}

run_one() { # run_one TARGET: fuzz it, then print its row
    local target=$1 log="fuzz/artifacts/$1.log" result start end
    mkdir -p "fuzz/artifacts/$target"
    start=$(date +%s)
    if cargo +nightly fuzz run -O -a "${target_dir[@]}" "$target" "fuzz/corpus/$target" -- \
        "${limit[@]}" -max_len="$(max_len "$target")" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$target/" >"$log" 2>&1; then
        result=ok
    else
        result="FOUND A PROBLEM (see $log and fuzz/artifacts/$target/)"
    fi
    end=$(date +%s)
    printf '%-18s %12s %8s  %s\n' "$target" \
        "$(awk '/stat::number_of_executed_units/ {print $NF}' "$log" | tail -1)" \
        "$((end - start))" "$result"
}

printf '%-18s %12s %8s  %s\n' target executions seconds result
jobs=${JOBS:-1}
for target in "${targets[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    run_one "$target" &
done
wait
# A crash, timeout or leak leaves an artifact behind.
for target in "${targets[@]}"; do
    if compgen -G "fuzz/artifacts/$target/*" >/dev/null; then
        echo "fuzz: $target left artifacts in fuzz/artifacts/$target/" >&2
        exit 1
    fi
done
