#!/usr/bin/env bash
# Round trips through `reward-memory mcp` (release binary) on an embedded store holding
# 10,000 active records: `recall` alone (median and p90 per call; target <= 2 ms), and the
# loop of five tools an agent runs per task, ingest -> recall -> apply -> attribute ->
# recall with the prior (median per loop; target <= 10 ms).
#
# The store is made as in bench/recall.sh: one bulk `ingest-event --execute` of events
# with their own 10-word summaries (the term index kept as every write keeps it).
# The client is a plain JSON-RPC line client on the server's pipes (no SDK, so that the
# figures are the server's: the write of the request, the handler, the read of the
# answer); the official SDK's own overhead is not counted. Each loop ingests a new
# memory (an executed, synced write), applies the first result and attributes a verified
# test to it in the ledger; the last recall reads the prior's utility from that ledger
# (no verdict: the prior stays off and the recall says why, as in a deployment that has
# not evaluated its profile yet).
#
# Usage: bench/mcp.sh   (from the repository root; BENCH_RUNS, BENCH_RECORDS; BENCH_BIN
# names another binary and skips the release build)
# Figures are printed only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
runs="${BENCH_RUNS:-200}"
records="${BENCH_RECORDS:-10000}"

if [ -z "${BENCH_BIN:-}" ]; then
    cargo build --release --quiet
fi
bin="${BENCH_BIN:-$root/target/release/reward-memory}"
registry="$work/registry.json"
cp -r fixtures/ingest_event/embedded/project "$work/project"
python3 - "$registry" "$work/project" <<'PY'
import json, sys
registry = json.load(open("fixtures/ingest_event/embedded/registry.json"))
registry["goals"][0]["repo"] = sys.argv[2]
json.dump(registry, open(sys.argv[1], "w"), indent=2)
PY
route=(--registry "$registry" --runtime-root "$work/rt")

store="$work/rt/reward-memory/embedded.sqlite3"
python3 bench/gen-memories.py fixtures/recall/loop/event-a.json "$records" "$work/events.jsonl" >"$work/words.txt"
"$bin" "${route[@]}" ingest-event --input "$work/events.jsonl" --goal-id embedded-demo \
    --agent-id pilot --execute --format jsonl >/dev/null
read -r w1 w2 c1 c2 _twenty <"$work/words.txt"
echo "store: $(du -h "$store" | cut -f1), records: $(sqlite3 "$store" 'SELECT count(*) FROM resources'), $("$bin" --version | head -1)"
echo "query: '$w1 $w2' ($c1 + $c2 matching records)"

python3 - "$bin" "$registry" "$work" "$runs" "$w1 $w2" <<'PY'
import json, os, statistics, subprocess, sys, time
binary, registry, work, runs, query = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
server = subprocess.Popen(
    [binary, "mcp", "--registry", registry, "--runtime-root", f"{work}/rt"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=work)
next_id = 0

def request(method, params):
    global next_id
    next_id += 1
    server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method,
                                    "params": params}) + "\n").encode())
    server.stdin.flush()
    while True:
        message = json.loads(server.stdout.readline())
        if message.get("id") == next_id:
            return message

def tool(name, arguments):
    started = time.perf_counter()
    result = request("tools/call", {"name": name, "arguments": arguments})["result"]
    elapsed = (time.perf_counter() - started) * 1000
    if result.get("isError"):
        raise SystemExit(f"{name} failed: {result['content'][0]['text'][:400]}")
    return json.loads(result["content"][0]["text"]), elapsed

request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}})
server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
server.stdin.flush()

goal = {"goal_id": "embedded-demo", "agent_id": "pilot"}
recall = {**goal, "query": [query], "query_summary": ["bench"],
          "observed_at": "2026-07-16T01:00:00+00:00"}
for _ in range(10):
    tool("recall", recall)
times = []
for _ in range(runs):
    packet, ms = tool("recall", recall)
    times.append(ms)
assert packet["status"] == "completed", packet
times.sort()
print(f"recall through mcp: median {statistics.median(times):.3f} ms, "
      f"p90 {times[int(len(times) * 0.9)]:.3f} ms, min {times[0]:.3f} ms over {runs} calls "
      f"({packet['result_count']} results, each with its delivered text)")

event = json.load(open("fixtures/recall/loop/event-a.json"))
ledger = f"{work}/ledger.sqlite3"
loops, steps = [], {n: [] for n in ["ingest", "recall", "apply", "attribute", "recall+prior"]}
partition_file = f"{work}/partition.json"
profile = os.path.abspath("fixtures/recall/loop/profile.json")
for i in range(max(runs // 4, 20)):
    total = 0.0
    event["event"]["content_summary"] = f"Bench lesson {i}: {query} before pushing."
    receipt, ms = tool("ingest", {**goal, "execute": True, "event": event})
    assert receipt["status"] == "activated", receipt
    steps["ingest"].append(ms); total += ms
    packet, ms = tool("recall", recall)
    steps["recall"].append(ms); total += ms
    first = packet["results"][0]
    applied, ms = tool("apply", {
        "recall_session": packet["recall_session_ref"], "application_id": f"application:bench-{i}",
        "artifact_ref": f"pr:bench-{i}", "outcome": "applied", "memory_ref": [first["memory_ref"]],
        "reasoning_summary": "Applied the lesson", "current_artifact_verified": True})
    steps["apply"].append(ms); total += ms
    attribution, ms = tool("attribute", {
        "receipt_id": applied["application_receipt_id"], "outcome_ref": f"effect:bench-{i}",
        "outcome_status": "succeeded", "verified": True,
        "evidence": [f"test:ci-{i}:passed:{first['memory_ref_digest']}"], "ledger": ledger})
    steps["attribute"].append(ms); total += ms
    if i == 0:
        json.dump(attribution["attributions"][0]["partition"], open(partition_file, "w"))
    packet, ms = tool("recall", {**recall, "rank_prior": profile,
                                 "partition": partition_file, "ledger": ledger})
    steps["recall+prior"].append(ms); total += ms
    loops.append(total)
print(f"five-tool loop through mcp: median {statistics.median(loops):.3f} ms per loop over "
      f"{len(loops)} loops; per tool (median): "
      + ", ".join(f"{n} {statistics.median(v):.3f} ms" for n, v in steps.items()))
server.stdin.close()
server.wait()
PY
