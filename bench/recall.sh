#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `reward-memory recall` (configured form) on an
# embedded store holding 100,000 active records, and of `apply` on its session.
#
# The store is written by one bulk `ingest-event --input events.jsonl --execute` (the
# term index included, as any CLI write keeps it): BENCH_RECORDS (100,000) events, each a
# 10-word summary drawn from a 4,000-word synthetic vocabulary; the ingest rate is printed.
# Queries: two rare words (a few hundred matching records, the usual case), 20 words of
# the vocabulary (about 20 x records / 400 matches), and a word present in every record
# (every record ranked by BM25, the worst case).
#
# Then `recall --rank-prior` with a pool of 50 (issue 23: the pool is fetched, ranked by
# the prior, cut to --limit): a profile with candidate_pool 50, a projection of 128 item
# subjects (64 of them records the usual query matches, half helpful, half harmful,
# deterministic_effect; reduced by `utility-project`), a sealed qualified verdict for that
# profile and partition; median and p95 of whole-process times over BENCH_POOL_RUNS (30)
# runs, timed by a Python loop (its own spawn floor, /bin/true, is printed beside).
#
# Usage: bench/recall.sh   (from the repository root; BENCH_RUNS, BENCH_RECORDS,
# BENCH_POOL, BENCH_POOL_RUNS; BENCH_BIN=path times that binary; BENCH_KEEP=1 keeps the store for profiling). The hyperfine timings need hyperfine on PATH (skipped
# without it). Figures are printed only; nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
if [ -n "${BENCH_KEEP:-}" ]; then echo "work dir kept: $work"; else trap 'rm -rf "$work"' EXIT; fi
runs="${BENCH_RUNS:-50}"
records="${BENCH_RECORDS:-100000}"

if [ -n "${BENCH_BIN:-}" ]; then
    bin="$(realpath "$BENCH_BIN")"
else
    cargo build --release --quiet
    bin="$root/target/release/reward-memory"
fi
route=(--registry fixtures/ingest_event/embedded/registry.json --runtime-root "$work/rt")

store="$work/rt/reward-memory/embedded.sqlite3"
python3 bench/gen-memories.py fixtures/recall/loop/event-a.json "$records" "$work/events.jsonl" >"$work/words.txt"
fill_start=$(date +%s.%N)
"$bin" "${route[@]}" ingest-event --input "$work/events.jsonl" --goal-id embedded-demo \
    --agent-id pilot --execute --format jsonl >"$work/ingest.jsonl"
fill_s=$(python3 -c "print($(date +%s.%N) - $fill_start)")
read -r w1 w2 c1 c2 twenty <"$work/words.txt"
n_records=$(sqlite3 "$store" 'SELECT count(*) FROM resources')
echo "store: $(du -h "$store" | cut -f1), $("$bin" --version), records: $n_records, bulk ingest $(python3 -c "print(f'{$fill_s:.1f} s, {$n_records / $fill_s:,.0f} records/s')")"
echo "usual query: '$w1 $w2' ($c1 + $c2 matching records); 20 terms: '$twenty'; worst case: 'bench' (every record)"

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

pool="${BENCH_POOL:-50}"
pool_runs="${BENCH_POOL_RUNS:-30}"
python3 - "$work" "$store" "$w1" "$w2" "$pool" <<'PY'
import hashlib, json, sqlite3, sys
work, store, w1, w2, pool = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
plain = json.load(open(f"{work}/recall.json"))
scope = {"agent_id": "pilot", "project_id": "repository:example",
         "corpus_id": plain["corpus_id"], "surface_id": plain["surface_id"]}
partition = {"scope": scope, "retrieval_snapshot_ref": plain["retrieval_snapshot_ref"],
             "policy_snapshot_ref": plain["policy_snapshot_ref"]}
json.dump(partition, open(f"{work}/partition.json", "w"))
profile = {"schema_version": "memory_utility_rank_prior_profile_v0", "profile_id": "profile:bench-pool",
           "semantic_floor": 0.05, "candidate_pool": pool, "modifier_bounds": [0.5, 2.0],
           "min_evidence_basis": "deterministic_effect", "allow_evaluator_inference": False, "min_support": 1}
json.dump(profile, open(f"{work}/pool-profile.json", "w"))
db = sqlite3.connect(store)
refs = [r for (r,) in db.execute("SELECT resource_ref FROM resources ORDER BY id")]
matched = [r for (r,) in db.execute(
    "SELECT resource_ref FROM resources WHERE CAST(content AS TEXT) LIKE ?"
    " OR CAST(content AS TEXT) LIKE ? ORDER BY id",
    (f"% {w1} %", f"% {w2} %"))]
others = [r for r in refs[::97] if r not in set(matched)]
subjects = matched[:64] + others[:128 - len(matched[:64])]
identity = ("schema_version", "scope", "application_receipt_id", "memory_ref_digests",
            "retrieval_snapshot_ref", "policy_snapshot_ref", "outcome_ref", "attribution_level",
            "evidence_basis", "evidence_refs", "evaluator_ref", "evaluation_version")
canonical = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
observations = []
for i, ref in enumerate(subjects):
    obs = {
        "schema_version": "memory_utility_observation_v0", "observation_id": "", "scope": scope,
        "application_receipt_id": "rma_" + hashlib.sha256(f"receipt:{i}".encode()).hexdigest(),
        "memory_ref_digests": [hashlib.sha256(ref.encode()).hexdigest()[:16]],
        "retrieval_snapshot_ref": partition["retrieval_snapshot_ref"],
        "policy_snapshot_ref": partition["policy_snapshot_ref"],
        "outcome_ref": f"effect:o{i}", "utility_label": "helpful" if i % 2 == 0 else "harmful",
        "attribution_level": "item", "evidence_basis": "deterministic_effect", "confidence": 0.9,
        "reason_codes": ["bench_fixture"], "evidence_refs": [f"evidence:e{i}"],
        "evaluator_ref": "evaluator:bench", "evaluation_version": f"evaluation:v{i}",
        "created_at": f"2026-07-15T{i // 60:02d}:{i % 60:02d}:00Z",
        "grants_new_action_authority": False, "provider_write_performed": False,
        "external_writes_performed": False, "raw_content_captured": False,
    }
    obs["observation_id"] = "muo_" + hashlib.sha256(canonical({k: obs[k] for k in identity}).encode()).hexdigest()
    observations.append(obs)
json.dump(dict(partition, observations=observations), open(f"{work}/project.json", "w"))
print(f"pool bench: candidate_pool {pool}, {len(subjects)} subjects ({len(matched[:64])} matched by the query)")
PY
"$bin" utility-project --input "$work/project.json" --format json >"$work/projection.json"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
request = {"profile": json.load(open(f"{work}/pool-profile.json")),
           "partition": json.load(open(f"{work}/partition.json")),
           "projection": json.load(open(f"{work}/projection.json")),
           "candidates": [{"memory_ref_digest": "0000000000000000", "relevance_score": 0.5}]}
json.dump(request, open(f"{work}/rank-prior.json", "w"))
PY
"$bin" rank-prior --input "$work/rank-prior.json" --format json >"$work/rank-prior-out.json"
python3 - "$work" <<'PY'
import datetime, hashlib, json, sys
work = sys.argv[1]
ranked = json.load(open(f"{work}/rank-prior-out.json"))
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
# A sealed qualified verdict of an episodes file for this profile and partition: the parts
# the gate reads, sealed as rank-evaluate seals them (murv_ + SHA-256 of the canonical JSON).
verdict = {
    "ok": True, "schema_version": "memory_utility_ranking_evaluation_v1", "status": "qualified",
    "verdict": "qualified", "reason_codes": [], "profile_digest": ranked["profile_digest"],
    "source": {"kind": "episodes_file", "ledger": None, "partitions": [ranked["reducer_identity"]],
               "observed_until": now},
    "gate": {"ndcg_gain": {"passed": True, "difference": {"lower": 0.1}},
             "scope_leaks": {"passed": True, "count": 0}},
}
verdict["verdict_digest"] = "murv_" + hashlib.sha256(
    json.dumps(verdict, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
json.dump(verdict, open(f"{work}/evaluation.json", "w"))
PY
prior_flags="--rank-prior $work/pool-profile.json --partition $work/partition.json --projection $work/projection.json --evaluation $work/evaluation.json"
eval "$(recall_cmd "$w1 $w2") $prior_flags" >"$work/prior.json"
python3 - "$work/prior.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
stage = (p["rank_prior"] or {}).get("semantic_stage")
print(f"recall --rank-prior: applied {p['rank_prior_applied']} ({p['rank_prior_reason_code']}), "
      f"candidate_fetch {p.get('candidate_fetch')}, semantic_stage {stage}, "
      f"modified {(p['rank_prior'] or {}).get('modified_count')}, results {p['result_count']}")
assert p["rank_prior_applied"], "the prior must apply for this benchmark"
PY
echo "== whole-process ms over $pool_runs runs (median, p95), $records records"
python3 - "$pool_runs" "$(recall_cmd "$w1 $w2")" "$(recall_cmd "$w1 $w2") $prior_flags" \
    "$(recall_cmd bench) $prior_flags" "$(recall_cmd "$twenty") --limit 10" "$(recall_cmd bench) --limit 10" <<'PY'
import shlex, subprocess, sys, time
runs = int(sys.argv[1])
cases = [("spawn floor (/bin/true)", ["/bin/true"]),
         ("recall, usual query, no prior (limit 5)", shlex.split(sys.argv[2])),
         ("recall, 20-term query, no prior (limit 10)", shlex.split(sys.argv[5])),
         ("recall, worst case 'bench', no prior (limit 10)", shlex.split(sys.argv[6])),
         ("recall --rank-prior, pool of 50, usual query", shlex.split(sys.argv[3])),
         ("recall --rank-prior, pool of 50, worst case 'bench'", shlex.split(sys.argv[4]))]
for title, cmd in cases:
    for _ in range(3):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    median = times[len(times) // 2] if len(times) % 2 else sum(times[len(times) // 2 - 1:len(times) // 2 + 1]) / 2
    p95 = times[max(0, -(-len(times) * 95 // 100) - 1)]
    print(f"{title}: median {median:.2f} ms, p95 {p95:.2f} ms, min {times[0]:.2f} ms")
PY

if ! command -v hyperfine >/dev/null 2>&1; then
    echo "hyperfine is not installed: the hyperfine timings below are skipped"
    exit 0
fi
echo "== recall, $records records, usual query (whole process)"
hyperfine -N --warmup 5 --runs "$runs" "$(recall_cmd "$w1 $w2")"
echo "== recall, $records records, worst case: a word in every record"
hyperfine -N --warmup 3 --runs "$runs" "$(recall_cmd bench)"
echo "peak RSS (usual query): $(/usr/bin/time -v bash -c "$(recall_cmd "$w1 $w2") >/dev/null" 2>&1 | awk -F': ' '/Maximum resident/ {print $2}') KiB"

session=$(python3 -c "import json; print(json.load(open('$work/recall.json'))['recall_session_ref'])")
ref=$(python3 -c "import json; print(json.load(open('$work/recall.json'))['results'][0]['memory_ref'])")
echo "== apply on that session (whole process)"
hyperfine -N --warmup 5 --runs "$runs" "$bin ${route[*]} apply --recall-session $session --application-id application:bench --artifact-ref pr:bench --outcome applied --memory-ref $ref --reasoning-summary bench --current-artifact-verified --format json"
