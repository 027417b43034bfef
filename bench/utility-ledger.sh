#!/usr/bin/env bash
# Utility ledger benchmark: prints figures, asserts nothing.
#
#   1. append N deliveries (default 1,000,000) to a fresh SQLite ledger in one batch:
#      wall time and peak RSS (GNU time);
#   2. `utility-ledger subject` on that ledger: whole-process wall time (median of 30), v0
#      and under memory_utility_reducer_v1 (the subject reduced from its stored rows);
#   3. append one delivery, then `subject` of the touched memory (v0, then v1), on ledgers
#      of 10k, 100k and N deliveries (median of 15): flat figures mean the work is
#      incremental;
#   4. PostgreSQL (a throw-away cluster from scripts/postgres-it.sh): 8 concurrent
#      appenders, deliveries per second, and the CPU time the server and the appenders
#      spent per delivery (skip with BENCH_PG=0);
#   5. (with psql and pg_dump) the floor under 4 on this machine: the rows the appenders
#      stored, written again by one binary COPY per table into an empty database, then
#      by two sessions at once (half the rows each).
# BENCH_APPEND_ONLY=1 runs only 1 and 4 (the append figures).
# Inputs come from bench/gen-observations.py (realistic valid observations over many
# scopes and memories), cached under ${XDG_CACHE_HOME:-~/.cache}/reward-memory/bench.
# Environment: BENCH_N (default 1000000), BENCH_PG_N (per appender, default 25000),
# BENCH_BIN (a binary to time instead of building the release one).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${BENCH_N:-1000000}
PG_N=${BENCH_PG_N:-25000}
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/reward-memory/bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-ledger-bench.XXXXXX")
PG_PID=""
cleanup() {
    if [ -n "$PG_PID" ]; then
        kill "$PG_PID" 2>/dev/null || true
        wait "$PG_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$CACHE"

if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$(realpath "$BENCH_BIN")
else
    (cd "$ROOT" && cargo build --release --locked --quiet)
    BIN="$ROOT/target/release/reward-memory"
fi
GEN="$ROOT/bench/gen-observations.py"

gen() { # gen <count> <file> [args]
    local count=$1 file=$2; shift 2
    if [ ! -s "$file" ]; then
        python3 "$GEN" "$count" "$@" >"$file.tmp" && mv "$file.tmp" "$file"
    fi
}
median_ms() { # median_ms <runs> <command...>: median whole-process wall time in ms
    python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
runs = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(times):.2f} ms (min {min(times):.2f}, max {max(times):.2f}, {runs} runs)")
PY
}

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
gen "$N" "$CACHE/obs-$N.jsonl"
echo "== input: $(wc -l <"$CACHE/obs-$N.jsonl") deliveries, $(du -h "$CACHE/obs-$N.jsonl" | cut -f1)"

echo "== 1. append $N deliveries to a fresh SQLite ledger (one batch)"
LEDGER="$WORK/ledger-$N.sqlite3"
/usr/bin/time -o "$WORK/time" -f "%e %U %S %M" "$BIN" utility-ledger append --ledger "$LEDGER" \
    --input "$CACHE/obs-$N.jsonl" --format json >"$WORK/receipt.json"
python3 - "$WORK/receipt.json" "$WORK/time" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
wall, user, sys_, rss = open(sys.argv[2]).read().split()
wall, user, sys_ = float(wall), float(user), float(sys_)
print({k: p[k] for k in ('received','appended','duplicate','conflicting','refused','high_water_sequence')})
print(f"{p['received']} deliveries in {wall:.1f} s = {p['received'] / wall:.0f} deliveries/s "
      f"(CPU {user:.1f} s user + {sys_:.1f} s system, peak RSS {rss} KiB)")
PY
echo "ledger file: $(du -h "$LEDGER" | cut -f1)"

if [ "${BENCH_APPEND_ONLY:-0}" != 1 ]; then
# A partition and memory that exist in every ledger size (the first delivery's).
FIRST=$(head -1 "$CACHE/obs-$N.jsonl")
read -r -a PART < <(python3 -c '
import json, sys
o = json.loads(sys.argv[1]); s = o["scope"]
print(s["agent_id"], s["project_id"], s["corpus_id"], s["surface_id"], o["retrieval_snapshot_ref"], o["policy_snapshot_ref"], o["memory_ref_digests"][0])
' "$FIRST")
FLAGS=(--agent-id "${PART[0]}" --project-id "${PART[1]}" --corpus-id "${PART[2]}" --surface-id "${PART[3]}"
       --retrieval-snapshot-ref "${PART[4]}" --policy-snapshot-ref "${PART[5]}")
DIGEST=${PART[6]}

echo "== 2. subject on the $N-delivery ledger (whole process)"
median_ms 30 "$BIN" utility-ledger subject --ledger "$LEDGER" "${FLAGS[@]}" --memory-ref-digest "$DIGEST" --format json
echo "   the same under memory_utility_reducer_v1:"
median_ms 30 "$BIN" utility-ledger subject --ledger "$LEDGER" "${FLAGS[@]}" \
    --reducer-version memory_utility_reducer_v1 --memory-ref-digest "$DIGEST" --format json

echo "== 3. append one delivery then subject, by ledger size"
for size in 10000 100000 "$N"; do
    if [ "$size" = "$N" ]; then L="$LEDGER"; else
        L="$WORK/ledger-$size.sqlite3"
        head -n "$size" "$CACHE/obs-$N.jsonl" >"$WORK/head.jsonl"
        "$BIN" utility-ledger append --ledger "$L" --input "$WORK/head.jsonl" >/dev/null
    fi
    # One new delivery on the first delivery's memory, a new evaluation version each time.
    python3 - "$FIRST" "$WORK/one" <<'PY'
import hashlib, json, sys
base = json.loads(sys.argv[1])
ids = ("schema_version","scope","application_receipt_id","memory_ref_digests","retrieval_snapshot_ref",
       "policy_snapshot_ref","outcome_ref","attribution_level","evidence_basis","evidence_refs",
       "evaluator_ref","evaluation_version")
for i in range(40):
    o = dict(base); o["evaluation_version"] = f"evaluation:incremental{i}"
    o["observation_id"] = "muo_" + hashlib.sha256(json.dumps({k: o[k] for k in ids}, sort_keys=True,
        separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    open(f"{sys.argv[2]}-{i}.jsonl", "w").write(json.dumps(o) + "\n")
PY
    python3 - "$BIN" "$L" "$WORK/one" "$DIGEST" "$size" "${FLAGS[@]}" <<'PY'
import statistics, subprocess, sys, time
bin_, ledger, one, digest, size = sys.argv[1:6]; flags = sys.argv[6:]
appends, subjects, both, v1s = [], [], [], []
subject = [bin_, "utility-ledger", "subject", "--ledger", ledger, *flags, "--memory-ref-digest", digest]
for i in range(15):
    t0 = time.perf_counter()
    subprocess.run([bin_, "utility-ledger", "append", "--ledger", ledger, "--input", f"{one}-{i}.jsonl"],
                   stdout=subprocess.DEVNULL, check=True)
    t1 = time.perf_counter()
    subprocess.run(subject, stdout=subprocess.DEVNULL, check=True)
    t2 = time.perf_counter()
    subprocess.run(subject + ["--reducer-version", "memory_utility_reducer_v1"],
                   stdout=subprocess.DEVNULL, check=True)
    t3 = time.perf_counter()
    appends.append((t1 - t0) * 1000); subjects.append((t2 - t1) * 1000); both.append((t2 - t0) * 1000)
    v1s.append((t3 - t2) * 1000)
print(f"{int(size):>8} deliveries: append one {statistics.median(appends):.2f} ms, "
      f"subject {statistics.median(subjects):.2f} ms, together {statistics.median(both):.2f} ms, "
      f"v1 subject {statistics.median(v1s):.2f} ms (median of 15)")
PY
done

fi

if [ "${BENCH_PG:-1}" = 1 ]; then
    echo "== 4. PostgreSQL: 8 concurrent appenders x $PG_N deliveries (batches of 5000)"
    PG_IT_SHELL=1 bash "$ROOT/scripts/postgres-it.sh" >"$WORK/pg.url" 2>"$WORK/pg.log" &
    PG_PID=$!
    for _ in $(seq 1 120); do [ -s "$WORK/pg.url" ] && break; sleep 0.5; done
    [ -s "$WORK/pg.url" ] || { cat "$WORK/pg.log"; exit 1; }
    URL=$(head -1 "$WORK/pg.url")
    for k in 0 1 2 3 4 5 6 7; do
        gen "$PG_N" "$CACHE/pg-$PG_N-$k.jsonl" --seed $((100 + k)) --offset $((k * 10000000))
    done
    # The server's CPU time: the postmaster's and its live children's, plus what the
    # postmaster collected from the children that ended (each appender's backend).
    CHECKPOINTER=$(psql -Atq "$URL" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'" 2>/dev/null || true)
    POSTMASTER=$(ps -o ppid= -p "${CHECKPOINTER:-0}" 2>/dev/null | tr -d ' ' || true)
    server_ticks() {
        [ -n "$POSTMASTER" ] || { echo 0; return; }
        for p in "$POSTMASTER" $(pgrep -P "$POSTMASTER"); do
            awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || true
        done | awk '{s += $1} END {print s + 0}'
    }
    TICKS0=$(server_ticks)
    START=$(date +%s.%N)
    /usr/bin/time -o "$WORK/pg-clients" -f "%U %S" bash -c '
        for k in 0 1 2 3 4 5 6 7; do
            (split -l 5000 --filter="\"$1\" utility-ledger append --ledger '"'"'$2'"'"' --input - >/dev/null" \
                "$3-$k.jsonl") &
        done
        wait' _ "$BIN" "$URL" "$CACHE/pg-$PG_N"
    END=$(date +%s.%N)
    TICKS1=$(server_ticks)
    "$BIN" utility-ledger verify --ledger "$URL" --format json >"$WORK/pg-verify.json" || true
    python3 - "$START" "$END" "$WORK/pg-verify.json" "$WORK/pg-clients" "$((TICKS1 - TICKS0))" \
        "$(getconf CLK_TCK)" "$(nproc)" <<'PY'
import json, sys
start, end = float(sys.argv[1]), float(sys.argv[2])
v = json.load(open(sys.argv[3]))
n = v["delivery_count"]
print(f"{n} deliveries in {end - start:.1f} s = {n / (end - start):.0f} deliveries/s; verify: {v['status']}")
user, system = (float(x) for x in open(sys.argv[4]).read().split()[-2:])
server = int(sys.argv[5]) / int(sys.argv[6]); cores = int(sys.argv[7])
if server > 0 and n > 0:
    s_us, c_us = server / n * 1e6, (user + system) / n * 1e6
    print(f"   CPU per delivery: server {s_us:.1f} us, appenders {c_us:.1f} us "
          f"({server:.1f} s and {user + system:.1f} s); with every core busy and nothing "
          f"serialized, this work fits {cores / (s_us + c_us) * 1e6:.0f} deliveries/s on "
          f"{cores} cores, {cores / s_us * 1e6:.0f}/s with the appenders on other machines")
PY
    if command -v psql >/dev/null && command -v pg_dump >/dev/null; then
        echo "== 5. PostgreSQL floor: the same ledger's rows, one binary COPY per table into"
        echo "   an empty copy of its schema, one session (no look-ups, no lock, no client)"
        FLOOR="${URL%/*}/ledger_floor"
        psql -q "$URL" -c "CREATE DATABASE ledger_floor" >/dev/null
        pg_dump -s "$URL" | psql -q "$FLOOR" >/dev/null
        TOTAL=0
        for t in deliveries observations subjects subject_digests; do
            psql -q "$URL" -c "\\copy (SELECT * FROM utility_ledger_$t) TO '$WORK/$t.bin' WITH (FORMAT binary)"
            S=$(date +%s.%N)
            psql -q "$FLOOR" -c "\\copy utility_ledger_$t FROM '$WORK/$t.bin' WITH (FORMAT binary)"
            E=$(date +%s.%N)
            TOTAL=$(python3 -c "print($TOTAL + $E - $S)")
            printf '   %-16s %6.2f s\n' "$t" "$(python3 -c "print($E - $S)")"
        done
        N_PG=$(python3 -c "import json; print(json.load(open('$WORK/pg-verify.json'))['delivery_count'])")
        python3 -c "t = $TOTAL; n = $N_PG; print(f'   together {t:.2f} s = {n / t:.0f} deliveries/s')"
        # The same rows again in two halves, by two sessions at once, into a second empty
        # copy: what the server stores when two writers share the machine's cores.
        FLOOR2="${URL%/*}/ledger_floor2"
        psql -q "$URL" -c "CREATE DATABASE ledger_floor2" >/dev/null
        pg_dump -s "$URL" | psql -q "$FLOOR2" >/dev/null
        for t in deliveries observations subjects subject_digests; do
            for h in 0 1; do
                psql -q "$URL" -c "\\copy (SELECT * FROM utility_ledger_$t WHERE abs(hashtext(ctid::text)) % 2 = $h) TO '$WORK/$t.$h.bin' WITH (FORMAT binary)"
            done
        done
        S=$(date +%s.%N)
        for h in 0 1; do
            (for t in deliveries observations subjects subject_digests; do
                psql -q "$FLOOR2" -c "\\copy utility_ledger_$t FROM '$WORK/$t.$h.bin' WITH (FORMAT binary)"
            done) &
        done
        wait $(jobs -p | grep -v "^$PG_PID$") 2>/dev/null || true
        E=$(date +%s.%N)
        python3 -c "t = $E - $S; n = $N_PG; print(f'   two sessions at once, half the rows each: {t:.2f} s = {n / t:.0f} deliveries/s')"
    fi
fi
