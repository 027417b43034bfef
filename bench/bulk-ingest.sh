#!/usr/bin/env bash
# Throughput of a JSON Lines ingest (`ingest-event --input FILE.jsonl --execute`) into a
# fresh embedded store: N distinct events (fixtures/ingest_event/embedded/event.json, each
# with its own summary and issue ref), one process, default batch size; prints the wall
# time and memories per second for each N, then the same file again (every event already
# stored: the idempotent re-run).
#
# Usage: bench/bulk-ingest.sh [N ...]   (from anywhere; default N: 10000 50000;
# BENCH_BATCH sets --batch-size; BENCH_BIN runs that binary instead of building the
# release one; BENCH_TOKENIZER=unicode61|porter builds the store with that tokenizer, else
# as a new store is built (porter); BENCH_CORPUS=man ingests the machine's manual pages
# instead of N generated events; BENCH_KEEP=1 keeps the work directory). Figures are
# printed only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
if [ -n "${BENCH_KEEP:-}" ]; then echo "work dir kept: $work"; else trap 'rm -rf "$work"' EXIT; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 50000)
batch=(); [ -n "${BENCH_BATCH:-}" ] && batch=(--batch-size "$BENCH_BATCH")

if [ -n "${BENCH_BIN:-}" ]; then
    bin="$BENCH_BIN"
else
    cargo build --release --quiet
    bin="$root/target/release/reward-memory"
fi
registry=fixtures/ingest_event/embedded/registry.json
if [ -n "${BENCH_TOKENIZER:-}" ]; then
    registry=$(python3 bench/registry-with-tokenizer.py "$work" "$BENCH_TOKENIZER" "$registry")
fi
route=(--registry "$registry")

# BENCH_CORPUS=man: the machine's manual pages instead (about 3,500 texts of 300 words,
# as bench/search-quality.sh reads them), one run named by their count.
if [ "${BENCH_CORPUS:-}" = man ]; then
    mkdir -p "$work/man"
    python3 bench/search_quality.py gen-man "$work/man" 400 >/dev/null
    python3 bench/search_quality.py jsonl "$work/man" fixtures/recall/loop/event-a.json "$work/man.jsonl"
    sizes=("$(wc -l <"$work/man.jsonl" | tr -d ' ')")
fi

for n in "${sizes[@]}"; do
    if [ "${BENCH_CORPUS:-}" = man ]; then
        cp "$work/man.jsonl" "$work/events-$n.jsonl"
    else
    python3 - "$n" >"$work/events-$n.jsonl" <<'PY'
import json, sys
with open("fixtures/ingest_event/embedded/event.json", encoding="utf-8") as f:
    event = json.load(f)
for i in range(int(sys.argv[1])):
    event["event"]["content_summary"] = (
        f"Keep memory-core changes focused and validate effect {i} before the PR.")
    event["event"]["issue_ref"] = f"github:example/repository#{i}"
    print(json.dumps(event, separators=(",", ":")))
PY
    fi
    for pass in fresh again; do
        start=$(date +%s.%N)
        set +e
        "$bin" "${route[@]}" --runtime-root "$work/rt-$n" ingest-event \
            --input "$work/events-$n.jsonl" --goal-id embedded-demo --agent-id pilot \
            --execute "${batch[@]}" >"$work/out-$n-$pass.jsonl"
        code=$?
        set -e
        end=$(date +%s.%N)
        python3 - "$n" "$pass" "$start" "$end" "$code" "$work/out-$n-$pass.jsonl" <<'PY'
import json, sys
n, label, start, end, code, out = sys.argv[1:]
n, seconds = int(n), float(end) - float(start)
with open(out, encoding="utf-8") as f:
    lines = f.read().splitlines()
summary = json.loads(lines[-1])
print(f"{label:>5} N={n:>7}: {seconds:7.2f} s  {n / seconds:9.0f} memories/s  exit {code}  "
      f"status_counts={summary['status_counts']} written={summary['records_written']} "
      f"already_stored={summary['records_already_stored']}")
PY
    done
done
