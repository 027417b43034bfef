#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `reward-memory rank-prior` over 1,000
# candidates with a 128-subject projection (the shared 1024-delivery stream reduced by
# `utility-project`: 100 item and 28 set subjects). The candidates are every digest of
# the projection plus random others, with random relevance scores (seeded).
#
# Usage: bench/rank-prior.sh   (from the repository root; BENCH_RUNS sets hyperfine runs)
# Figures are printed only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
runs="${BENCH_RUNS:-50}"

cargo build --release --quiet
bin="$root/target/release/reward-memory"

"$bin" utility-project --input "$root/../shared/bench/utility-project-1024.json" --format json \
    >"$work/projection.json"
python3 - "$work" <<'PY'
import json, random, sys
work = sys.argv[1]
projection = json.load(open(f"{work}/projection.json"))
assert projection["subject_count"] == 128, projection["subject_count"]
rng = random.Random(20260816)
digests = sorted({d for s in projection["subjects"] for d in s["memory_ref_digests"]})
while len(digests) < 1000:
    d = f"{rng.getrandbits(64):016x}"
    if d not in digests:
        digests.append(d)
candidates = [{"memory_ref_digest": d, "relevance_score": round(rng.random(), 6)} for d in digests]
partition = {k: projection[k] for k in ("scope", "retrieval_snapshot_ref", "policy_snapshot_ref")}
profile = {
    "profile_id": "profile:bench", "semantic_floor": 0.05, "candidate_pool": 1000,
    "modifier_bounds": [0.5, 2.0], "min_evidence_basis": "evaluator_inference",
    "allow_evaluator_inference": True, "min_support": 1,
}
request = {"profile": profile, "partition": partition, "projection": projection, "candidates": candidates}
json.dump(request, open(f"{work}/rank-1000x128.json", "w"))
print(f"input: {len(candidates)} candidates, {projection['subject_count']} subjects, "
      f"{len(json.dumps(request)) // 1024} KiB")
PY

peak_rss_kb() {
    /usr/bin/time -v "$@" >/dev/null 2>"$work/time.txt" || true
    awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt"
}

"$bin" rank-prior --input "$work/rank-1000x128.json" --format json >"$work/out.json"
python3 - "$work/out.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print(f"output: status {p['status']}, pool {p['semantic_stage']['pool_count']}, "
      f"modified {p['modified_count']}, order_changed {p['order_changed']}")
PY

echo "== rank-prior, 1000 candidates x 128-subject projection (whole process)"
hyperfine --warmup 5 --runs "$runs" -N --export-json "$work/hf.json" \
    "$bin rank-prior --input $work/rank-1000x128.json --format json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("wall ms: mean %.2f ± %.2f, min %.2f, median %.2f" % (r["mean"]*1000, r["stddev"]*1000, r["min"]*1000, r["median"]*1000))' "$work/hf.json"
echo "peak RSS: $(peak_rss_kb "$bin" rank-prior --input "$work/rank-1000x128.json" --format json) KiB"
if command -v valgrind >/dev/null 2>&1; then
    echo "instructions (callgrind, whole process): $(valgrind --tool=callgrind \
        --callgrind-out-file=/dev/null "$bin" rank-prior --input "$work/rank-1000x128.json" \
        --format json 2>&1 >/dev/null | awk '/Collected :/ {print $4}')"
fi
