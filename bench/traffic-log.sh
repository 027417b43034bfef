#!/usr/bin/env bash
# The traffic log's cost per recall at scale: `recall --ledger` appends one
# memory_utility_traffic_event_v0 event to the ledger's traffic log; the budget is 1 ms per
# recall at 1,000,000 logged events (issue 22).
#
# 1. A fresh runtime root with the README loop's embedded route and its three memories;
#    one real `recall --ledger` creates the ledger and its traffic tables.
# 2. bench/gen-traffic.py fills the traffic log to N events (default 1,000,000: recall,
#    apply and outcome events of a synthetic partition) by direct SQL in one transaction,
#    the quick bulk path (the binary itself only appends through ledger::traffic::append).
# 3. Three warm-up recalls (the first after an outside write pays the ledger's
#    `PRAGMA quick_check`), then RUNS interleaved pairs of the same recall without and with
#    --ledger, each timed as a whole process. The append cost is the difference of the
#    means (and of the medians); the traffic log grows by RUNS events meanwhile.
# Prints figures, asserts nothing. Environment: BENCH_N (default 1000000), BENCH_RUNS
# (default 200), BENCH_BIN (a binary to time instead of building the release one).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${BENCH_N:-1000000}
RUNS=${BENCH_RUNS:-200}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-traffic-log.XXXXXX")
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
RECALL=(recall --goal-id embedded-demo --agent-id pilot --query test-commits
    --query-summary review-habits --format json)
for m in a b c; do
    "$BIN" "${ROUTE[@]}" ingest-event --input "fixtures/recall/loop/event-$m.json" \
        --goal-id embedded-demo --agent-id pilot --execute --format json >/dev/null
done
"$BIN" "${ROUTE[@]}" "${RECALL[@]}" --ledger "$LEDGER" >/dev/null

start=$(date +%s.%N)
python3 bench/gen-traffic.py traffic "$LEDGER" $(( (N + 2) / 3 )) --no-observations
echo "bulk fill: $(echo "$(date +%s.%N) - $start" | bc) s, ledger $(du -h "$LEDGER" | cut -f1)"

for _ in 1 2 3; do "$BIN" "${ROUTE[@]}" "${RECALL[@]}" --ledger "$LEDGER" >/dev/null; done

ns() { date +%s%N; }
: >"$WORK/plain"
: >"$WORK/logged"
for _ in $(seq "$RUNS"); do
    a=$(ns); "$BIN" "${ROUTE[@]}" "${RECALL[@]}" >/dev/null; b=$(ns)
    "$BIN" "${ROUTE[@]}" "${RECALL[@]}" --ledger "$LEDGER" >/dev/null; c=$(ns)
    echo $(( b - a )) >>"$WORK/plain"
    echo $(( c - b )) >>"$WORK/logged"
done
python3 - "$WORK/plain" "$WORK/logged" "$LEDGER" <<'PY'
import sqlite3, statistics, sys
plain = [int(x) / 1e6 for x in open(sys.argv[1])]
logged = [int(x) / 1e6 for x in open(sys.argv[2])]
(events,) = sqlite3.connect(sys.argv[3]).execute("SELECT count(*) FROM traffic_events").fetchone()
mp, ml = statistics.mean(plain), statistics.mean(logged)
dp, dl = statistics.median(plain), statistics.median(logged)
print(f"traffic log: {events} events after the runs")
print(f"recall without --ledger: mean {mp:.2f} ms, median {dp:.2f} ms ({len(plain)} runs)")
print(f"recall with --ledger:    mean {ml:.2f} ms, median {dl:.2f} ms")
print(f"append cost per recall:  {ml - mp:.2f} ms (means), {dl - dp:.2f} ms (medians)")
PY
