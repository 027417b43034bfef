#!/usr/bin/env bash
# OpenViking integration check: the real `openviking` provider against a real OpenViking
# server, entirely on loopback.
#
# 1. Installs openviking==$OV_VERSION from PyPI into a cached venv (uv, compiled bytecode;
#    reused when it exists).
# 2. Starts, in a throw-away HOME: a loopback embedding stand-in (scripts/embedding-standin.py,
#    OpenViking has no offline embedder) and `openviking-server` on a free 127.0.0.1 port
#    with local vector/AGFS storage.
# 3. Runs the checks: the gated Rust integration test (tests/cli/openviking.rs: sync, exact
#    readback, idempotent re-sync, conflict not overwritten), the `ingest-event --execute`
#    end-to-end check (fixtures/ingest_event/openviking/) and, on that record, the
#    recall -> apply -> utility-observe -> utility-project -> rank-prior loop (the
#    rank-prior effect refused with provider_rank_prior_contract_absent).
# Every process it starts is stopped on exit.
#
# Environment: OV_IT_KEEP=1 keeps the temp dir (logs, data) for inspection;
# OV_IT_INGEST=auto|1|0 runs the ingest-event step when the binary implements it (auto),
# always (1) or never (0).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OV_VERSION=0.5.2
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/reward-memory"
VENV="$CACHE_DIR/openviking-$OV_VERSION"
OV_IT_INGEST="${OV_IT_INGEST:-auto}"

# Cargo and rustup must keep finding their homes after HOME is isolated below.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}s')" "$1" "$(now)"; }
log() { printf '[openviking-it] %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

RUN_START=$(now)

# --- 1. install ------------------------------------------------------------------------
install_openviking() {
    if [ -f "$VENV/.complete" ] && [ -x "$VENV/bin/ov" ] && [ -x "$VENV/bin/openviking-server" ]; then
        log "reusing $VENV"
        return
    fi
    local uv
    if command -v uv >/dev/null 2>&1; then
        uv=(uv)
    else
        python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
        uv=(python3 -m uv)
    fi
    log "installing openviking==$OV_VERSION into $VENV"
    rm -rf "$VENV"
    mkdir -p "$CACHE_DIR"
    "${uv[@]}" venv --quiet --python python3 "$VENV"
    # Compiled bytecode matters: with PYTHONDONTWRITEBYTECODE=1 every start would
    # otherwise compile the whole package again (40-60 s per `ov` start).
    "${uv[@]}" pip install --quiet --python "$VENV/bin/python" --compile-bytecode \
        "openviking==$OV_VERSION"
    touch "$VENV/.complete"
}

mkdir -p "$CACHE_DIR"
INSTALL_START=$(now)
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_DIR/.openviking-$OV_VERSION.lock"
    flock 9
fi
install_openviking
if command -v flock >/dev/null 2>&1; then flock -u 9; exec 9>&-; fi
log "install step: $(since "$INSTALL_START")"
OV_BIN="$VENV/bin/ov"

# --- 2. isolated services --------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reward-memory-ovit.XXXXXX")
PIDS=()
cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        # Give the server a moment to stop cleanly, then force it.
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ "$status" -ne 0 ] && [ -f "$WORK/server.log" ]; then
        log "server log (last 40 lines):"
        tail -n 40 "$WORK/server.log" >&2 || true
    fi
    if [ "${OV_IT_KEEP:-0}" = 1 ]; then
        log "kept $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export HOME="$WORK/home"
mkdir -p "$HOME/.openviking" "$WORK/data"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
http_ok() {
    python3 - "$1" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
        sys.exit(0 if response.status == 200 else 1)
except Exception:
    sys.exit(1)
PY
}
wait_for() { # wait_for <seconds> <pid> <url>
    local deadline=$(( $(date +%s) + $1 ))
    while ! http_ok "$3"; do
        kill -0 "$2" 2>/dev/null || fail "process $2 exited before $3 answered"
        [ "$(date +%s)" -lt "$deadline" ] || fail "$3 did not answer within $1 s"
        sleep 0.3
    done
}

python3 "$ROOT/scripts/embedding-standin.py" --port-file "$WORK/embedding.port" \
    >"$WORK/embedding.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$WORK/embedding.port" ] && break; sleep 0.1; done
[ -s "$WORK/embedding.port" ] || fail "embedding stand-in did not start"
EMBEDDING_PORT=$(cat "$WORK/embedding.port")
wait_for 10 "${PIDS[0]}" "http://127.0.0.1:$EMBEDDING_PORT/health"

SERVER_PORT=$(free_port)
cat >"$WORK/ov.conf" <<EOF
{
  "storage": {
    "workspace": "$WORK/data",
    "vectordb": {"backend": "local"},
    "agfs": {"backend": "local"}
  },
  "embedding": {
    "dense": {
      "provider": "openai",
      "model": "standin-embedding",
      "api_key": "loopback-standin",
      "api_base": "http://127.0.0.1:$EMBEDDING_PORT/v1",
      "dimension": 64,
      "input": "text"
    }
  },
  "auto_generate_l0": false,
  "auto_generate_l1": false,
  "default_search_mode": "fast"
}
EOF
cat >"$HOME/.openviking/ovcli.conf" <<EOF
{"url": "http://127.0.0.1:$SERVER_PORT"}
EOF
export OPENVIKING_CONFIG_FILE="$WORK/ov.conf"
export OPENVIKING_CLI_CONFIG_FILE="$HOME/.openviking/ovcli.conf"

# Without a display language every `ov` call exits 2.
"$OV_BIN" language en >/dev/null

SERVER_START=$(now)
"$VENV/bin/openviking-server" --host 127.0.0.1 --port "$SERVER_PORT" --config "$WORK/ov.conf" \
    >"$WORK/server.log" 2>&1 &
PIDS+=($!)
wait_for 180 "${PIDS[1]}" "http://127.0.0.1:$SERVER_PORT/health"
log "server start: $(since "$SERVER_START") (127.0.0.1:$SERVER_PORT)"

# --- 3. checks -------------------------------------------------------------------------
CHECKS_START=$(now)
version=$("$OV_BIN" --version)
[ "$version" = "openviking $OV_VERSION" ] || fail "unexpected ov --version: $version"
"$OV_BIN" status -o json -c true >/dev/null || fail "ov status failed"
log "ov: $version, status ok"

log "provider integration test (tests/cli/openviking.rs)"
(cd "$ROOT" && REWARD_MEMORY_OV_BIN="$OV_BIN" cargo test --locked --quiet --test cli openviking \
    -- --exact openviking::real_openviking_sync_retrieve_and_idempotent_resync) \
    || fail "provider integration test"

# ---- ingest-event --execute end to end ----------------------------------------------
# The configured-form event of fixtures/ingest_event/openviking/ (registry, experiment
# config with provider_binary = @OV_BIN@, event). First run: status `activated` with exact
# readback; second run: `activated` again, deduplicated, no external write; third run with
# an unreachable server: `provider_unavailable` / `provider_service_unavailable`, exit 0.
# The record's bytes are staged for `ov` under the runtime root, never in TMPDIR, and no
# staging directory is left behind.
ingest_event() {
    (cd "$CASE" && TMPDIR="$WORK/ingest-tmp" "$BIN" --registry registry.json \
        --runtime-root "$WORK/ingest-rt" ingest-event --input event.json \
        --goal-id reward-memory-goal --agent-id pilot --execute --format json)
}
check_ingest() { # check_ingest <packet file> <expected deduplicated>
    python3 - "$1" "$2" <<'PY'
import json, sys
packet = json.load(open(sys.argv[1], encoding="utf-8"))
write = packet.get("write", {})
problems = []
def expect(label, actual, wanted):
    if actual != wanted:
        problems.append(f"{label}: {actual!r} != {wanted!r}")
expect("status", packet.get("status"), "activated")
expect("reason_codes", packet.get("reason_codes"), [])
expect("exact_readback_verified", packet.get("exact_readback_verified"), True)
expect("deduplicated", packet.get("deduplicated"), sys.argv[2] == "true")
expect("write.status", write.get("status"), "completed")
expect("write.write_count", write.get("write_count"), 0 if sys.argv[2] == "true" else 1)
expect("external_writes_performed", packet.get("external_writes_performed"), sys.argv[2] != "true")
expect("write.provider_version", write.get("provider_version"), "openviking 0.5.2")
expect("readback.status", packet.get("readback", {}).get("status"), "completed")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY
}
run_ingest_check() {
    (cd "$ROOT" && cargo build --locked --quiet) || fail "cargo build"
    BIN="$ROOT/target/debug/reward-memory"
    CASE="$WORK/ingest-case"
    cp -R "$ROOT/fixtures/ingest_event/openviking" "$CASE"
    find "$CASE" -type f -name '*.json' -exec sed -i \
        -e "s#@CASE_DIR@#$CASE#g" -e "s#@OV_BIN@#$OV_BIN#g" {} +
    if [ "$OV_IT_INGEST" = auto ]; then
        local probe
        probe=$(cd "$CASE" && "$BIN" --registry registry.json ingest-event --input event.json \
            --goal-id reward-memory-goal --agent-id pilot --format json 2>&1 || true)
        if printf '%s' "$probe" | grep -q 'not implemented'; then
            log "SKIP ingest-event step: the subcommand is not implemented in this build"
            return
        fi
    fi
    mkdir -p "$WORK/ingest-tmp"
    log "ingest-event --execute (first run)"
    ingest_event >"$WORK/ingest-1.json" || fail "ingest-event exited $? ($(cat "$WORK/ingest-1.json"))"
    check_ingest "$WORK/ingest-1.json" false || fail "first ingest-event run"
    log "ingest-event --execute (second run, idempotent)"
    ingest_event >"$WORK/ingest-2.json" || fail "ingest-event exited $? ($(cat "$WORK/ingest-2.json"))"
    check_ingest "$WORK/ingest-2.json" true || fail "second ingest-event run"
    log "ingest-event --execute with the server unreachable (fails open)"
    printf '{"url": "http://127.0.0.1:%s"}\n' "$(free_port)" >"$WORK/unreachable.conf"
    OPENVIKING_CLI_CONFIG_FILE="$WORK/unreachable.conf" ingest_event >"$WORK/ingest-3.json" \
        || fail "ingest-event exited $? with the server unreachable"
    python3 - "$WORK/ingest-3.json" <<'PY' || fail "unreachable-server ingest-event run"
import json, sys
packet = json.load(open(sys.argv[1], encoding="utf-8"))
seen = (packet.get("status"), packet.get("reason_codes"), packet.get("write", {}).get("status"))
wanted = ("provider_unavailable", ["provider_service_unavailable"], "unavailable")
if seen != wanted:
    sys.exit(f"got {seen!r}, wanted {wanted!r}")
PY
    log "staging: under the runtime root, nothing left behind"
    [ -d "$WORK/ingest-rt/reward-memory/staging" ] \
        || fail "no staging directory under the runtime root"
    [ -z "$(ls -A "$WORK/ingest-rt/reward-memory/staging")" ] \
        || fail "staging leftovers: $(ls -A "$WORK/ingest-rt/reward-memory/staging")"
    [ -z "$(ls -A "$WORK/ingest-tmp")" ] || fail "TMPDIR leftovers: $(ls -A "$WORK/ingest-tmp")"
}
if [ "$OV_IT_INGEST" != 0 ]; then
    run_ingest_check
fi
# ---- end of ingest-event step -------------------------------------------------------

# ---- recall / apply / utility / rank prior through the real server ------------------
# On the record the ingest step activated: `recall` (configured form) finds it with its
# OpenViking score and keeps a private session; `apply` maps the opaque ref back and
# prints a receipt that `utility-observe` accepts unchanged; `utility-project` reduces
# it; `rank-prior --execute` is refused (`provider_rank_prior_contract_absent`, nothing
# written); `recall --rank-prior` leaves the prior off without a verdict
# (`rank_prior_evaluation_missing`) and, with the loop profile's qualified `rank-evaluate`
# verdict (`fixtures/recall/loop/evaluation.json`, a simulation: hence
# --allow-simulated-evaluation), ranks locally.
run_recall_check() {
    [ -n "${CASE:-}" ] && [ -d "$CASE" ] || { log "SKIP recall step: no ingest case"; return; }
    local rt="$WORK/recall-rt" out="$WORK/recall"
    mkdir -p "$out"
    routed() { (cd "$CASE" && "$BIN" --registry registry.json --runtime-root "$rt" "$@"); }
    log "recall (configured form, real server)"
    routed recall --goal-id reward-memory-goal --agent-id pilot \
        --query "Reviewer-facing artifacts concise Chinese summary" \
        --query-summary "reviewer summary language" --format json >"$out/recall.json" \
        || fail "recall exited $? ($(cat "$out/recall.json"))"
    python3 - "$out/recall.json" <<'PY' || fail "recall packet"
import json, re, sys
p = json.load(open(sys.argv[1], encoding="utf-8"))
problems = []
if p.get("status") != "completed" or not p.get("results"):
    problems.append(f"status {p.get('status')!r} reason {p.get('reason_code')!r}")
if "viking://" in json.dumps(p):
    problems.append("a raw viking:// ref is printed")
if not str(p.get("recall_session_ref", "")).startswith("rms_"):
    problems.append("no recall_session_ref")
if not re.fullmatch(r"retrieval:openviking:[0-9a-f]{32}", str(p.get("retrieval_snapshot_ref"))):
    problems.append(f"retrieval_snapshot_ref {p.get('retrieval_snapshot_ref')!r}")
if not re.fullmatch(r"policy:[0-9a-f]{32}", str(p.get("policy_snapshot_ref"))):
    problems.append(f"policy_snapshot_ref {p.get('policy_snapshot_ref')!r}")
for r in p.get("results", []):
    if not (r.get("relevance_score") is None or isinstance(r["relevance_score"], (int, float))):
        problems.append(f"relevance_score {r.get('relevance_score')!r}")
if problems:
    sys.exit("; ".join(problems))
print("recall ok:", [(r["rank"], r["relevance_score"]) for r in p["results"]], file=sys.stderr)
PY
    local session ref
    session=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recall_session_ref"])' "$out/recall.json")
    ref=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["memory_ref"])' "$out/recall.json")
    log "apply (opaque ref mapped back through the session)"
    routed apply --recall-session "$session" --application-id application:ov-it \
        --artifact-ref pr:ov-it --outcome applied --memory-ref "$ref" \
        --reasoning-summary "Wrote the reviewer summary in Chinese" --current-artifact-verified \
        --format json >"$out/apply.json" || fail "apply exited $? ($(cat "$out/apply.json"))"
    routed apply --recall-session "$session" --application-id application:ov-it \
        --artifact-ref pr:ov-it --outcome applied --memory-ref provider-00000000000000000000 \
        --reasoning-summary "not from this recall" --current-artifact-verified \
        --format json >"$out/apply-foreign.json" && fail "apply accepted a foreign ref"
    log "utility-observe + utility-project"
    python3 - "$out" <<'PY' || fail "observation input"
import json, sys
out = sys.argv[1]
receipt = json.load(open(f"{out}/apply.json"))["receipt"]
recall = json.load(open(f"{out}/recall.json"))
scope = {"agent_id": "pilot", "project_id": "repository:example",
         "corpus_id": "example_reviewer_artifact_policy", "surface_id": "reviewer_artifact.summary"}
# The receipt carries the recall's snapshot refs and the route's scope.
for key in ("retrieval_snapshot_ref", "policy_snapshot_ref"):
    if not receipt.get(key) or receipt.get(key) != recall.get(key):
        sys.exit(f"receipt {key} {receipt.get(key)!r} is not the recall's {recall.get(key)!r}")
for key in ("agent_id", "project_id"):
    if receipt.get(key) != scope[key]:
        sys.exit(f"receipt {key} {receipt.get(key)!r}, wanted {scope[key]!r}")
retrieval, policy = receipt["retrieval_snapshot_ref"], receipt["policy_snapshot_ref"]
partition = {"scope": scope, "retrieval_snapshot_ref": retrieval, "policy_snapshot_ref": policy}
facts = {"outcome_ref": "effect:ov-it", "artifact_ref": "pr:ov-it", "outcome_status": "succeeded"}
json.dump({
    "application_receipt": receipt,
    "verified_outcome": {"verified": True, **facts},
    "attribution_context": partition,
    "evaluator_proposal": {"scope": scope, "application_id": "application:ov-it", **facts,
        "retrieval_snapshot_ref": retrieval, "policy_snapshot_ref": policy,
        "memory_ref_digests": receipt["memory_ref_digests"], "utility_label": "helpful",
        "attribution_level": "item", "evidence_basis": "owner_correction", "confidence": 0.9,
        "reason_codes": ["owner_confirmed_language"], "evidence_refs": ["owner:ov-it"],
        "evaluator_ref": "evaluator:ov-it", "evaluation_version": "evaluation:ov-it"},
    "created_at": "2026-07-16T02:00:00+00:00",
}, open(f"{out}/observe.json", "w"))
json.dump(partition, open(f"{out}/partition.json", "w"))
PY
    "$BIN" utility-observe --input "$out/observe.json" --format json >"$out/observation.json" \
        || fail "utility-observe refused the apply receipt ($(cat "$out/observation.json"))"
    log "utility-attribute on the OpenViking receipt (the built-in deterministic evaluator)"
    local digest
    digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["receipt"]["memory_ref_digests"][0])' "$out/apply.json")
    routed utility-attribute --receipt "$out/apply.json" --outcome-ref effect:ov-it \
        --outcome-status succeeded --verified --evidence "test:ov-it:passed:$digest" \
        --ledger "$out/attribution.sqlite3" --format json >"$out/attribution.json" \
        || fail "utility-attribute exited $? ($(cat "$out/attribution.json"))"
    "$BIN" utility-ledger export --ledger "$out/attribution.sqlite3" >"$out/attribution.jsonl" \
        || fail "utility-ledger export of the attribution ledger"
    python3 - "$out" <<'PY' || fail "utility-attribute on OpenViking"
import json, sys
out = sys.argv[1]
receipt = json.load(open(f"{out}/apply.json"))["receipt"]
packet = json.load(open(f"{out}/attribution.json"))
statuses = [e["status"] for a in packet["attributions"] for e in a["evaluators"]]
if statuses != ["appended"]:
    sys.exit(f"evaluator statuses {statuses!r}, wanted ['appended']")
partition = packet["attributions"][0]["partition"]
for key in ("retrieval_snapshot_ref", "policy_snapshot_ref"):
    if partition[key] != receipt[key]:
        sys.exit(f"partition {key} {partition[key]!r} is not the receipt's {receipt[key]!r}")
rows = [json.loads(line) for line in open(f"{out}/attribution.jsonl")]
kinds = [(r["utility_label"], r["attribution_level"], r["evidence_basis"]) for r in rows]
if kinds != [("helpful", "item", "deterministic_effect")]:
    sys.exit(f"attributed observations {kinds!r}")
PY
    python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
project = json.load(open(f"{out}/partition.json"))
project["observations"] = [json.load(open(f"{out}/observation.json"))]
json.dump(project, open(f"{out}/project.json", "w"))
PY
    "$BIN" utility-project --input "$out/project.json" --format json >"$out/projection.json" \
        || fail "utility-project ($(cat "$out/projection.json"))"
    python3 - "$out" "$ROOT/fixtures/recall/loop/profile.json" <<'PY'
import json, sys
out, profile = sys.argv[1], sys.argv[2]
json.dump({"profile": json.load(open(profile)), "partition": json.load(open(f"{out}/partition.json")),
           "projection": json.load(open(f"{out}/projection.json"))}, open(f"{out}/rank-prior.json", "w"))
PY
    log "rank-prior --execute on OpenViking (refused, nothing written)"
    routed rank-prior --input "$out/rank-prior.json" --execute --goal-id reward-memory-goal \
        --agent-id pilot --format json >"$out/effect.json" || fail "rank-prior exited $?"
    python3 - "$out/effect.json" <<'PY' || fail "rank-prior effect on OpenViking"
import json, sys
p = json.load(open(sys.argv[1]))
seen = (p.get("status"), p.get("reason_code"), p.get("provider_write_performed"), p.get("ranking"))
wanted = ("refused", "provider_rank_prior_contract_absent", False, "local_only")
if seen != wanted:
    sys.exit(f"got {seen!r}, wanted {wanted!r}")
PY
    log "recall --rank-prior without a verdict (prior stays off: rank_prior_evaluation_missing)"
    routed recall --goal-id reward-memory-goal --agent-id pilot \
        --query "Reviewer-facing artifacts concise Chinese summary" \
        --query-summary "reviewer summary language" --rank-prior "$ROOT/fixtures/recall/loop/profile.json" \
        --projection "$out/projection.json" --partition "$out/partition.json" \
        --format json >"$out/recall-ungated.json" || fail "recall --rank-prior exited $?"
    python3 - "$out/recall-ungated.json" <<'PY' || fail "recall --rank-prior without --evaluation"
import json, sys
p = json.load(open(sys.argv[1]))
seen = (p.get("status"), p.get("rank_prior_applied"), p.get("rank_prior_reason_code"), p.get("rank_prior"))
wanted = ("completed", False, "rank_prior_evaluation_missing", None)
if seen != wanted:
    sys.exit(f"got {seen!r}, wanted {wanted!r}")
PY
    log "recall --rank-prior --evaluation (the profile's qualified rank-evaluate verdict; local ranking)"
    routed recall --goal-id reward-memory-goal --agent-id pilot \
        --query "Reviewer-facing artifacts concise Chinese summary" \
        --query-summary "reviewer summary language" --rank-prior "$ROOT/fixtures/recall/loop/profile.json" \
        --projection "$out/projection.json" --partition "$out/partition.json" \
        --evaluation "$ROOT/fixtures/recall/loop/evaluation.json" --allow-simulated-evaluation \
        --format json >"$out/recall-2.json" || fail "recall --rank-prior exited $?"
    python3 - "$out/recall-2.json" <<'PY' || fail "recall --rank-prior packet"
import json, sys
p = json.load(open(sys.argv[1]))
if p.get("status") != "completed":
    sys.exit(f"status {p.get('status')!r}")
scored = all(isinstance(r.get("relevance_score"), (int, float)) for r in p["results"])
if scored and not p.get("rank_prior_applied"):
    sys.exit(f"prior not applied: {p.get('rank_prior_reason_code')!r}")
if not scored and p.get("rank_prior_reason_code") != "relevance_scores_unavailable":
    sys.exit(f"unexpected reason {p.get('rank_prior_reason_code')!r}")
print("recall --rank-prior:", p.get("rank_prior_applied"), p.get("rank_prior_reason_code"),
      [(c["final_rank"], c["modifier"], c["reason_codes"]) for c in (p.get("rank_prior") or {}).get("candidates", [])],
      file=sys.stderr)
PY
}
if [ "$OV_IT_INGEST" != 0 ]; then
    run_recall_check
fi
# ---- end of recall step -------------------------------------------------------------

log "checks: $(since "$CHECKS_START")"
log "PASS (total $(since "$RUN_START"))"
