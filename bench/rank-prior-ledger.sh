#!/usr/bin/env bash
# `rank-prior --ledger`: whole-process wall time of ranking 1,000 candidates with utility
# read from the utility ledger (the stored subjects of the candidates only), on ledgers of
# 10,000 and N deliveries (default 1,000,000). Flat figures mean the look-up does not grow
# with the ledger. Prints figures, asserts nothing.
#
# Inputs: bench/gen-observations.py deliveries (cached under
# ${XDG_CACHE_HOME:-~/.cache}/reward-memory/bench, shared with bench/utility-ledger.sh).
# The partition is the first delivery's; the candidates are up to 1,000 digests that
# partition's deliveries mention (in the 10k-delivery prefix, so both ledgers know them),
# topped up with digests nobody mentions, at seeded random relevances.
# Environment: BENCH_N (default 1000000), BENCH_RUNS (default 30), BENCH_BIN (a binary to
# time instead of building the release one).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${BENCH_N:-1000000}
RUNS=${BENCH_RUNS:-30}
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/reward-memory/bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-rank-prior-ledger.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$CACHE"

if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$(realpath "$BENCH_BIN")
else
    (cd "$ROOT" && cargo build --release --locked --quiet)
    BIN="$ROOT/target/release/reward-memory"
fi
if [ ! -s "$CACHE/obs-$N.jsonl" ]; then
    python3 "$ROOT/bench/gen-observations.py" "$N" >"$CACHE/obs-$N.jsonl.tmp"
    mv "$CACHE/obs-$N.jsonl.tmp" "$CACHE/obs-$N.jsonl"
fi
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

head -n 10000 "$CACHE/obs-$N.jsonl" >"$WORK/obs-10000.jsonl"
python3 - "$WORK" <<'PY'
import json, random, sys
work = sys.argv[1]
rows = [json.loads(line) for line in open(f"{work}/obs-10000.jsonl")]
first = rows[0]
key = lambda o: (json.dumps(o["scope"], sort_keys=True), o["retrieval_snapshot_ref"], o["policy_snapshot_ref"])
mine = [o for o in rows if key(o) == key(first)]
digests = sorted({d for o in mine for d in o["memory_ref_digests"]})[:1000]
known = len(digests)
rng = random.Random(20261130)
while len(digests) < 1000:
    d = f"{rng.getrandbits(64):016x}"
    if d not in digests:
        digests.append(d)
request = {
    "profile": {
        "profile_id": "profile:bench", "semantic_floor": 0.0, "candidate_pool": 1000,
        "modifier_bounds": [0.5, 2.0], "min_evidence_basis": "evaluator_inference",
        "allow_evaluator_inference": True, "min_support": 1,
    },
    "partition": {k: first[k] for k in ("scope", "retrieval_snapshot_ref", "policy_snapshot_ref")},
    "candidates": [{"memory_ref_digest": d, "relevance_score": round(rng.random(), 6)} for d in digests],
}
json.dump(request, open(f"{work}/request.json", "w"))
print(f"input: 1000 candidates, {known} of them mentioned in the partition "
      f"({len(mine)} of the first 10000 deliveries)")
PY

for size in 10000 "$N"; do
    if [ "$size" = 10000 ]; then
        SRC="$WORK/obs-10000.jsonl"
    else
        SRC="$CACHE/obs-$N.jsonl"
    fi
    LEDGER="$WORK/ledger-$size.sqlite3"
    /usr/bin/time -f "append: wall %e s, peak RSS %M KiB" "$BIN" utility-ledger append \
        --ledger "$LEDGER" --input "$SRC" --format json >"$WORK/receipt.json"
    "$BIN" rank-prior --input "$WORK/request.json" --ledger "$LEDGER" --format json >"$WORK/out.json"
    python3 - "$WORK/out.json" "$size" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
codes = {}
for c in p["candidates"]:
    for r in c["reason_codes"]:
        codes[r] = codes.get(r, 0) + 1
print(f"{int(sys.argv[2]):>8} deliveries: modified {p['modified_count']}, order_changed {p['order_changed']}, reasons {dict(sorted(codes.items()))}")
PY
    python3 - "$RUNS" "$BIN" "$WORK/request.json" "$LEDGER" "$size" <<'PY'
import statistics, subprocess, sys, time
runs, bin_, request, ledger, size = int(sys.argv[1]), *sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run([bin_, "rank-prior", "--input", request, "--ledger", ledger, "--format", "json"],
                   stdout=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - t) * 1000)
times.sort()
p10 = times[max(0, len(times) // 10 - 1)]
print(f"{int(size):>8} deliveries: rank-prior --ledger, 1000 candidates: "
      f"median {statistics.median(times):.2f} ms (min {times[0]:.2f}, p10 {p10:.2f}, max {times[-1]:.2f}, {runs} runs)")
PY
    /usr/bin/time -f "rank-prior --ledger peak RSS %M KiB" "$BIN" rank-prior \
        --input "$WORK/request.json" --ledger "$LEDGER" --format json >/dev/null
done
