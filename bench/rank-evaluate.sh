#!/usr/bin/env bash
# Whole-process wall time, CPU time and peak RSS of `reward-memory rank-evaluate
# --simulate` at the issue's size: 10,000 training and 2,000 held-out episodes, six arms
# (the comparison arms first tuned on a validation split), 1,000 paired bootstrap resamples
# (the defaults), every delivery through the SQLite utility ledger. The target is <= 10 s
# on a 2-core machine.
#
# Usage: bench/rank-evaluate.sh               (from anywhere in the repository)
#        BENCH_RUNS=5 bench/rank-evaluate.sh   (hyperfine runs, default 3)
#        PROFILE=1 bench/rank-evaluate.sh      (also `perf record` one run, top symbols)
#
# The machine is shared: the load average is printed before and after, and CPU time
# (user + sys) is the figure that does not depend on other processes. Figures are printed
# only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release --locked --quiet
bin="$root/target/release/reward-memory"
args=(rank-evaluate --simulate --episodes 10000 --seed 1 --format json)

echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" "${args[@]}" > "$work/packet.json" || true
python3 - "$work/packet.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
s = p["source"]
print(f"run: {s['training_episodes']} training, {s['held_out_episodes']} held-out episodes, "
      f"{len(p['arms'])} arms, {p['settings']['bootstrap_resamples']} resamples, "
      f"ledger {p['ledger']['backend']} with {p['ledger']['deliveries']} deliveries; verdict {p['verdict']}")
PY

if command -v /usr/bin/time > /dev/null; then
    /usr/bin/time -f "one run: wall %e s, user %U s, sys %S s, peak RSS %M KiB" \
        "$bin" "${args[@]}" > /dev/null 2> "$work/time.txt" || true
    tail -1 "$work/time.txt"
fi
if command -v hyperfine > /dev/null; then
    hyperfine --warmup 1 --runs "${BENCH_RUNS:-3}" -i --export-json "$work/h.json" \
        "$bin ${args[*]}" > /dev/null
    python3 - "$work/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"hyperfine ({len(r['times'])} runs): mean {r['mean']:.2f} s ± {r['stddev']:.2f}, "
      f"min {r['min']:.2f} s, user {r['user']:.2f} s, system {r['system']:.2f} s")
PY
fi
if [ "${PROFILE:-0}" = 1 ] && command -v perf > /dev/null; then
    perf record -q -o "$work/perf.data" "$bin" "${args[@]}" > /dev/null 2>&1 || true
    echo "top symbols (perf, self time):"
    perf report -i "$work/perf.data" --no-children --sort symbol --stdio 2>/dev/null \
        | grep -E '^ +[0-9]' | head -12 | awk '{print "  " $1 "  " $3}'
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
