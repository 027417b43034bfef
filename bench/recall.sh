#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `reward-memory recall` (configured form) on an
# embedded store holding 100,000 active records, and of `apply` on its session.
#
# The store is created by a real `ingest-event --execute` (schema, WAL) and then filled
# with 100,000 copies of that record (each with its own candidate ref, activation ref and
# a 10-word summary drawn from a 4,000-word synthetic vocabulary), inserted with their
# FTS rows in one transaction. Queries: two rare words (a few hundred matching records,
# the usual case) and a word present in every record (100,000 matches ranked by BM25,
# the worst case).
#
# Usage: bench/recall.sh   (from the repository root; BENCH_RUNS, BENCH_RECORDS)
# Figures are printed only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
runs="${BENCH_RUNS:-50}"
records="${BENCH_RECORDS:-100000}"

cargo build --release --quiet
bin="$root/target/release/reward-memory"
route=(--registry fixtures/ingest_event/embedded/registry.json --runtime-root "$work/rt")

"$bin" "${route[@]}" ingest-event --input fixtures/recall/loop/event-a.json \
    --goal-id embedded-demo --agent-id pilot --execute --format json >/dev/null
store="$work/rt/reward-memory/embedded.sqlite3"

fill_start=$(date +%s.%N)
python3 - "$store" "$records" >"$work/words.txt" <<'PY'
import hashlib, json, random, sqlite3, sys
store, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(20260816)
syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "vo", "pe", "du", "ga", "zo", "bi", "fe", "hu"]
vocab = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(6000)})[:4000]
db = sqlite3.connect(store)
ref, content = db.execute("SELECT resource_ref, content FROM resources").fetchone()
template = json.loads(content)
prefix = ref.rsplit("/", 1)[0]
rows, fts = [], []
for i in range(n):
    record = dict(template)
    words = " ".join(rng.choice(vocab) for _ in range(10))
    record["content_summary"] = f"Bench memory {i}: {words}."
    record["candidate_ref"] = "candidate:" + hashlib.sha256(f"c{i}".encode()).hexdigest()[:20]
    record["activation_ref"] = "activation:" + hashlib.sha256(f"a{i}".encode()).hexdigest()[:20]
    body = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    data = body.encode()
    rows.append((i + 2, "reward_memory", f"{prefix}/bench-{i:06d}.json", data,
                 hashlib.sha256(data).hexdigest(), "2026-07-16T00:30:00+00:00"))
    fts.append((i + 2, body))
with db:
    db.executemany("INSERT INTO resources (id, namespace, resource_ref, content, content_sha256, observed_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)", rows)
    db.executemany("INSERT INTO resources_fts (rowid, body) VALUES (?, ?)", fts)
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
counts = {}
for row in rows:
    for w in json.loads(row[3])["content_summary"].rstrip(".").split(": ", 1)[1].split():
        counts[w] = counts.get(w, 0) + 1
rare = sorted((c, w) for w, c in counts.items())[len(counts) // 2 - 1: len(counts) // 2 + 1]
print(" ".join(w for _, w in rare), " ".join(str(c) for c, _ in rare))
PY
read -r w1 w2 c1 c2 <"$work/words.txt"
echo "store: $(du -h "$store" | cut -f1), $("$bin" --version), records: $(sqlite3 "$store" 'SELECT count(*) FROM resources'), filled in $(python3 -c "print(f'{$(date +%s.%N) - $fill_start:.1f} s')")"
echo "usual query: '$w1 $w2' ($c1 + $c2 matching records); worst case: 'bench' (every record)"

recall_cmd() { # recall_cmd <query>
    echo "$bin ${route[*]} recall --goal-id embedded-demo --agent-id pilot --query '$1' --query-summary bench --observed-at 2026-07-16T01:00:00+00:00 --format json"
}
eval "$(recall_cmd "$w1 $w2")" >"$work/recall.json"
python3 - "$work/recall.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print(f"recall: status {p['status']}, results {p['result_count']}, "
      f"scores {[round(r['relevance_score'], 4) for r in p['results']]}")
PY

echo "== recall, $records records, usual query (whole process)"
hyperfine -N --warmup 5 --runs "$runs" "$(recall_cmd "$w1 $w2")"
echo "== recall, $records records, worst case: a word in every record"
hyperfine -N --warmup 3 --runs "$runs" "$(recall_cmd bench)"
echo "peak RSS (usual query): $(/usr/bin/time -v bash -c "$(recall_cmd "$w1 $w2") >/dev/null" 2>&1 | awk -F': ' '/Maximum resident/ {print $2}') KiB"

session=$(python3 -c "import json; print(json.load(open('$work/recall.json'))['recall_session_ref'])")
ref=$(python3 -c "import json; print(json.load(open('$work/recall.json'))['results'][0]['memory_ref'])")
echo "== apply on that session (whole process)"
hyperfine -N --warmup 5 --runs "$runs" "$bin ${route[*]} apply --recall-session $session --application-id application:bench --artifact-ref pr:bench --outcome applied --memory-ref $ref --reasoning-summary bench --current-artifact-verified --format json"
