#!/usr/bin/env bash
# Whole-process time of one `utility-attribute` with the built-in evaluator (target
# <= 5 ms) and of `--pending` over 10,000 stored receipts (target <= 10 s).
# Usage: bench/utility-attribute.sh [BINARY] (default target/release/reward-memory)
set -euo pipefail
BIN=${1:-target/release/reward-memory}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
R=fixtures/utility_attribute/receipt.json
D=$(jq -r '.memory_ref_digests[0]' $R)
A=(utility-attribute --receipt $R --agent-id pilot --project-id repository:example
   --outcome-ref effect:bench --outcome-status succeeded --verified
   --evidence "test:ci:passed:$D" --ledger $W/one.sqlite3 --runtime-root $W/rt --format json)
"$BIN" "${A[@]}" > /dev/null
N=200
start=$(date +%s%N)
for _ in $(seq $N); do "$BIN" "${A[@]}" > /dev/null; done
end=$(date +%s%N)
echo "one attribution (built-in evaluator): $(( (end - start) / N / 1000 )) us per process (target <= 5000)"
# 10,000 distinct receipts in the store, each with a pending entry and an outcome line.
mkdir -p $W/rt/reward-memory/application-receipts $W/rt/reward-memory/attribution-pending
chmod -R go-w $W/rt
python3 - "$R" "$W" "$D" <<'PY'
import hashlib, json, sys
src, w, d = sys.argv[1:]
receipt = json.load(open(src))
with open(f"{w}/outcomes.jsonl", "w") as out:
    for i in range(10000):
        r = dict(receipt, application_id=f"application:bench-{i}")
        canon = json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        rid = "rma_" + hashlib.sha256(canon.encode()).hexdigest()
        open(f"{w}/rt/reward-memory/application-receipts/{rid}.json", "w").write(json.dumps(r))
        open(f"{w}/rt/reward-memory/attribution-pending/{rid}.json", "w").write(json.dumps({
            "schema_version": "memory_utility_attribution_pending_v0",
            "application_receipt_id": rid, "created_at": "2026-01-01T00:00:00+00:00",
            "expires_at": "2999-01-01T00:00:00+00:00"}))
        out.write(json.dumps({"application_receipt_id": rid, "outcome_ref": f"effect:bench-{i}",
            "outcome_status": "succeeded", "verified": True,
            "evidence": [f"test:ci-{i}:passed:{d}"]}) + "\n")
PY
start=$(date +%s%N)
"$BIN" utility-attribute --pending --outcomes $W/outcomes.jsonl --agent-id pilot \
  --project-id repository:example --ledger $W/pending.sqlite3 --runtime-root $W/rt --format json \
  | jq -c '{settled: .pending.settled, high_water_sequence}'
end=$(date +%s%N)
echo "--pending over 10,000 receipts: $(( (end - start) / 1000000 )) ms (target <= 10000)"
