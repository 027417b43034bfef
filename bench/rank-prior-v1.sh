#!/usr/bin/env bash
# `rank-prior` under memory_utility_reducer_v1: whole-process wall time of ranking 1,000
# candidates against 128 subjects (the shared 1024-delivery stream, 100 item and 28 set
# subjects), v0 beside v1, with the utility from a projection packet (the ledger's
# `memory_utility_projection_v0` / `_v1` of the partition, given in the request) and from
# the ledger itself (`--ledger`, each found subject reduced by the v1 rules as it is read).
# The candidates are every digest of the projection plus random others, at seeded random
# relevances (as bench/rank-prior.sh). Prints figures, asserts nothing.
#
# Usage: bench/rank-prior-v1.sh   (BENCH_RUNS sets the runs per case, default 50;
# BENCH_STREAM the 1024-delivery input, default ../shared/bench/utility-project-1024.json;
# BENCH_BIN a binary to time instead of building the release one)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-rank-prior-v1.XXXXXX")"
trap 'rm -rf "$work"' EXIT
runs="${BENCH_RUNS:-50}"

if [ -n "${BENCH_BIN:-}" ]; then
    bin=$(realpath "$BENCH_BIN")
else
    cargo build --release --locked --quiet
    bin="$root/target/release/reward-memory"
fi
stream="${BENCH_STREAM:-$root/../shared/bench/utility-project-1024.json}"
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

"$bin" utility-ledger append --ledger "$work/ledger.sqlite3" --input "$stream" --format json \
    >"$work/receipt.json"
python3 - "$stream" "$work" <<'PY'
import json, sys
stream, work = sys.argv[1:]
src = json.load(open(stream))
partition = {k: src[k] for k in ("scope", "retrieval_snapshot_ref", "policy_snapshot_ref")}
json.dump(partition, open(f"{work}/partition-v0.json", "w"))
json.dump(dict(partition, reducer_version="memory_utility_reducer_v1"),
          open(f"{work}/partition-v1.json", "w"))
PY
for v in v0 v1; do
    "$bin" utility-ledger project --ledger "$work/ledger.sqlite3" \
        --input "$work/partition-$v.json" --format json >"$work/projection-$v.json"
done
python3 - "$work" <<'PY'
import json, random, sys
work = sys.argv[1]
profile = {
    "profile_id": "profile:bench", "semantic_floor": 0.05, "candidate_pool": 1000,
    "modifier_bounds": [0.5, 2.0], "min_evidence_basis": "evaluator_inference",
    "allow_evaluator_inference": True, "min_support": 1,
}
for v in ("v0", "v1"):
    projection = json.load(open(f"{work}/projection-{v}.json"))
    assert projection["subject_count"] == 128, projection["subject_count"]
    rng = random.Random(20260816)
    digests = sorted({d for s in projection["subjects"] for d in s["memory_ref_digests"]})
    while len(digests) < 1000:
        d = f"{rng.getrandbits(64):016x}"
        if d not in digests:
            digests.append(d)
    candidates = [{"memory_ref_digest": d, "relevance_score": round(rng.random(), 6)}
                  for d in digests]
    partition = json.load(open(f"{work}/partition-{v}.json"))
    request = {"profile": profile, "partition": partition, "candidates": candidates}
    json.dump(request, open(f"{work}/ledger-{v}.json", "w"))
    request["projection"] = projection
    json.dump(request, open(f"{work}/projection-request-{v}.json", "w"))
    print(f"{v}: {projection['schema_version']}, {len(candidates)} candidates, "
          f"{projection['subject_count']} subjects, "
          f"{len(json.dumps(request)) // 1024} KiB request")
PY

time_case() {
    local label="$1"
    shift
    "$@" >"$work/out.json"
    python3 - "$runs" "$label" "$work/out.json" "$@" <<'PY'
import json, resource, statistics, subprocess, sys, time
runs, label, out, *cmd = sys.argv[1:]
packet = json.load(open(out))
for _ in range(5):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
wall, cpu = [], []
for _ in range(int(runs)):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall.append((time.perf_counter() - t) * 1000)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
wall.sort()
p10 = wall[max(0, len(wall) // 10 - 1)]
print(f"{label:<16} wall median {statistics.median(wall):5.2f} ms (min {wall[0]:.2f}, p10 {p10:.2f}), "
      f"CPU median {statistics.median(cpu):5.2f} ms, {runs} runs; modified {packet['modified_count']}")
PY
    if command -v valgrind >/dev/null 2>&1; then
        echo "                 instructions (callgrind, whole process): $(valgrind --tool=callgrind \
            --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/Collected :/ {print $4}')"
    fi
}

echo "== rank-prior, 1000 candidates x 128 subjects (whole process; wall time depends on the"
echo "   machine's load, CPU time and instructions less so)"
for v in v0 v1; do
    time_case "$v projection" "$bin" rank-prior --input "$work/projection-request-$v.json" \
        --format json
    time_case "$v --ledger" "$bin" rank-prior --input "$work/ledger-$v.json" \
        --ledger "$work/ledger.sqlite3" --format json
done
