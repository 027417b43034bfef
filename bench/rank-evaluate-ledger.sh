#!/usr/bin/env bash
# `rank-evaluate --ledger` over N logged recalls (default 100,000; the budget is 30 s,
# issue 22): whole-process wall time, CPU time and peak RSS, and the verdict's figures.
#
# The ledger: a real `recall --ledger` on the README loop's embedded route creates it and
# its traffic tables; bench/gen-traffic.py writes the synthetic partition's
# deterministic-effect observations (30% of the applications), which `utility-ledger
# append` appends, then fills the traffic log with each recall's recall, apply and
# outcome events (direct SQL, the quick bulk path), each with the delivery high water it
# would have recorded. The evaluation then reads about 3N events, splits them in time,
# rebuilds the training utility in its own SQLite ledgers and bootstraps 1,000 resamples.
# Prints figures, asserts nothing. Environment: BENCH_N (default 100000), BENCH_RUNS
# (default 3), BENCH_BIN (a binary to time instead of building the release one).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${BENCH_N:-100000}
RUNS=${BENCH_RUNS:-3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-rank-evaluate-ledger.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$(realpath "$BENCH_BIN")
else
    (cd "$ROOT" && cargo build --release --locked --quiet)
    BIN="$ROOT/target/release/reward-memory"
fi
cd "$ROOT"
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

RT="$WORK/rt"
LEDGER="$WORK/ledger.sqlite3"
ROUTE=(--registry fixtures/ingest_event/embedded/registry.json --runtime-root "$RT")
for m in a b c; do
    "$BIN" "${ROUTE[@]}" ingest-event --input "fixtures/recall/loop/event-$m.json" \
        --goal-id embedded-demo --agent-id pilot --execute --format json >/dev/null
done
"$BIN" "${ROUTE[@]}" recall --goal-id embedded-demo --agent-id pilot --query test-commits \
    --query-summary review-habits --ledger "$LEDGER" --format json >/dev/null

start=$(date +%s.%N)
python3 bench/gen-traffic.py observations "$N" >"$WORK/observations.jsonl"
"$BIN" utility-ledger append --ledger "$LEDGER" --input "$WORK/observations.jsonl" \
    --format json | python3 -c 'import json,sys; p=json.load(sys.stdin); print("appended", p["appended"], "deliveries")'
python3 bench/gen-traffic.py traffic "$LEDGER" "$N"
echo "ledger built in $(echo "$(date +%s.%N) - $start" | bc) s, $(du -h "$LEDGER" | cut -f1)"

cat >"$WORK/partition.json" <<'JSON'
{"scope": {"agent_id": "agent:bench", "project_id": "project:bench",
           "corpus_id": "bench-corpus", "surface_id": "loopx.issue_fix"},
 "retrieval_snapshot_ref": "retrieval:bench", "policy_snapshot_ref": "policy:bench"}
JSON
for i in $(seq "$RUNS"); do
    /usr/bin/time -f "run $i: %e s wall, %U s user, %S s system, %M KiB peak" \
        "$BIN" rank-evaluate --ledger "$LEDGER" --partition "$WORK/partition.json" \
        --format json >"$WORK/verdict.json" || true
done
python3 - "$WORK/verdict.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print("verdict:", v["verdict"], v["reason_codes"])
print("traffic:", {k: v["traffic"][k] for k in ("recalls", "training_recalls", "held_out_recalls", "explored_recalls")})
print("training ledger deliveries:", v["ledger"]["deliveries"], "split at", v["source"]["ledger"]["split_seq"])
for a in v["arms"]:
    print(f'  {a["arm"]:<34} SNIPS {a["snips"]["estimate"]} [{a["snips"]["lower"]}, {a["snips"]["upper"]}]'
          f'  ESS {a["effective_sample_size"]}  matched {a["matched_episodes"]}')
print("SNIPS gain of bounded_utility:", v["gate"]["snips_gain"]["difference"])
PY
