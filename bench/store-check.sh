#!/usr/bin/env bash
# What the embedded store's integrity check costs: `ingest-event --execute` of a new event
# against a store of RECORDS records (default 10,000), when the store file is as the last
# writer recorded it (no check) and when its stat changed (one `PRAGMA quick_check`
# first), interleaved, RUNS times each (default 15). Also times `PRAGMA quick_check` alone
# (Python's sqlite3, so another SQLite version than the binary's bundled one).
#
# The store is filled by the binary's first ingest plus RECORDS-1 rows inserted directly
# (same schema, same record size, their own FTS rows), so that it has the size and shape
# of a store that long ingest history would leave. Figures are printed only.
#
# Usage: bench/store-check.sh   (from anywhere; RECORDS=... RUNS=... to change the sizes)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --locked --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$root/target/release/reward-memory" "$root" "$work" "${RECORDS:-10000}" "${RUNS:-15}" <<'PY'
import hashlib, json, os, shutil, sqlite3, statistics, subprocess, sys, time

binary, root, work, records, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
fixtures = os.path.join(root, "fixtures/ingest_event/embedded")
shutil.copytree(os.path.join(fixtures, "project"), os.path.join(work, "project"))
registry = json.load(open(os.path.join(fixtures, "registry.json")))
registry["goals"][0]["repo"] = "project"
json.dump(registry, open(os.path.join(work, "registry.json"), "w"))
event = json.load(open(os.path.join(fixtures, "event.json")))
for i in range(2 * runs + 2):
    event["event"]["content_summary"] = f"Keep memory-core changes focused, bench variant {i}."
    json.dump(event, open(os.path.join(work, f"ev{i}.json"), "w"))

def ingest(i):
    start = time.monotonic()
    out = subprocess.run(
        [binary, "--registry", "registry.json", "--runtime-root", "rt", "ingest-event",
         "--input", f"ev{i}.json", "--goal-id", "embedded-demo", "--agent-id", "pilot",
         "--execute", "--format", "json"],
        cwd=work, capture_output=True, check=True).stdout
    elapsed = (time.monotonic() - start) * 1000
    status = json.loads(out)["status"]
    assert status == "activated", status
    return elapsed

db = os.path.join(work, "rt/reward-memory/embedded.sqlite3")
ingest(0)
conn = sqlite3.connect(db, isolation_level=None)
template = json.loads(conn.execute("SELECT content FROM resources").fetchone()[0])
conn.execute("BEGIN")
for n in range(1, records):
    digest = hashlib.sha256(str(n).encode()).hexdigest()
    template["candidate_ref"] = "candidate:" + digest[:20]
    template["content_summary"] = f"Keep memory-core changes focused, filler {n} word{digest[:6]}."
    body = json.dumps(template, separators=(",", ":"), sort_keys=True) + "\n"
    ref = f"embedded://reward-memory/issue-fix/reward-memory-filler-{digest[:20]}.json"
    cur = conn.execute(
        "INSERT INTO resources (namespace, resource_ref, content, content_sha256, observed_at) "
        "VALUES (?, ?, ?, ?, ?)",
        ("reward_memory", ref, body.encode(), hashlib.sha256(body.encode()).hexdigest(),
         "2026-07-16T00:30:00+00:00"))
    conn.execute("INSERT INTO resources_fts (rowid, body) VALUES (?, ?)", (cur.lastrowid, body))
conn.execute("COMMIT")
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.close()
size = os.path.getsize(db)
first = ingest(1)  # the store changed outside: checked once, then recorded

unchanged, changed = [], []
for k in range(runs):
    unchanged.append(ingest(2 + 2 * k))
    os.chmod(db, 0o600)  # same mode, new ctime: the recorded stat no longer matches
    changed.append(ingest(3 + 2 * k))

direct = []
for _ in range(5):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as ro:
        start = time.monotonic()
        verdict = ro.execute("PRAGMA quick_check").fetchone()[0]
        direct.append((time.monotonic() - start) * 1000)
        assert verdict == "ok", verdict

med = statistics.median
print(f"store: {records} records, {size / 2**20:.1f} MiB; {runs} runs each, median (min-max) ms")
print(f"  ingest, store unchanged (no check):     {med(unchanged):6.1f} ({min(unchanged):.1f}-{max(unchanged):.1f})")
print(f"  ingest, store changed (quick_check):    {med(changed):6.1f} ({min(changed):.1f}-{max(changed):.1f})")
print(f"  difference (the check's cost):          {med(changed) - med(unchanged):6.1f}")
print(f"  first ingest after the bulk fill:       {first:6.1f}")
print(f"  PRAGMA quick_check alone (sqlite {sqlite3.sqlite_version}): {med(direct):6.1f} ({min(direct):.1f}-{max(direct):.1f})")
PY
