#!/usr/bin/env python3
"""A synthetic deployment's traffic for the traffic-log benches (bench/traffic-log.sh,
bench/rank-evaluate-ledger.sh).

One partition (agent:bench / project:bench / bench-corpus / loopx.issue_fix,
retrieval:bench, policy:bench) of MEMORIES memories: 20% truly helpful (an applied one
succeeds 80% of the time), 20% harmful (20%), the rest neutral (45%). Each recall shows 8
of them in semantic order, or with probability EPSILON in a uniformly random order (the
propensities are logged as recall --explore logs them); the agent applies the shown top;
the outcome follows the truth. 30% of the applications get a deterministic-effect item
observation of the applied memory (the true label 85% of the time).

  gen-traffic.py observations N [--seed S]   the observations (JSON Lines, stdout), for
                                             utility-ledger append
  gen-traffic.py traffic LEDGER N [--seed S] [--no-observations]
                                             inserts the recall, apply and outcome events
                                             into the traffic tables of LEDGER (a SQLite
                                             ledger whose traffic tables exist: one real
                                             `recall --ledger` makes them), in one
                                             transaction, with the delivery high water each
                                             event would have recorded

Direct SQL is for benchmarks only: the binary appends through ledger::traffic::append.
Deterministic for a seed. Events are JSON exactly as the binary's reader takes them.
"""
import argparse
import hashlib
import json
import random
import sqlite3
import sys

IDENTITY = (
    "schema_version", "scope", "application_receipt_id", "memory_ref_digests",
    "retrieval_snapshot_ref", "policy_snapshot_ref", "outcome_ref", "attribution_level",
    "evidence_basis", "evidence_refs", "evaluator_ref", "evaluation_version",
)
SCOPE = {
    "agent_id": "agent:bench",
    "project_id": "project:bench",
    "corpus_id": "bench-corpus",
    "surface_id": "loopx.issue_fix",
}
PARTITION = {
    "scope": SCOPE,
    "retrieval_snapshot_ref": "retrieval:bench",
    "policy_snapshot_ref": "policy:bench",
}
MEMORIES = 200
SHOWN = 8
EPSILON = 0.2


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(m):
    return hashlib.sha256(f"bench-memory:{m}".encode()).hexdigest()[:16]


def at(seconds):
    day, rest = divmod(seconds, 86400)
    month, day = divmod(day, 28)
    return f"2026-{1 + month % 12:02d}-{1 + day:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}Z"


def truth(m):
    r = random.Random(m * 7919).random()
    return "helpful" if r < 0.2 else "harmful" if r < 0.4 else "neutral"


SUCCESS = {"helpful": 0.8, "harmful": 0.2, "neutral": 0.45}


def world(n, seed):
    """Yields per recall: (k, candidates, shown order, explored, applied memory, status,
    observation or None)."""
    for k in range(n):
        rng = random.Random(seed * 1_000_003 + k)
        members = rng.sample(range(MEMORIES), SHOWN)
        relevance = {m: round(rng.uniform(0.2, 0.9), 6) for m in members}
        policy = sorted(members, key=lambda m: (-relevance[m], digest(m)))
        explored = rng.random() < EPSILON
        shown = rng.sample(policy, SHOWN) if explored else list(policy)
        top = shown[0]
        status = "succeeded" if rng.random() < SUCCESS[truth(top)] else "failed"
        observation = None
        if rng.random() < 0.3:
            label = truth(top) if rng.random() < 0.85 else rng.choice(["helpful", "harmful", "neutral"])
            observation = make_observation(k, top, label)
        yield k, relevance, policy, shown, explored, top, status, observation


def make_observation(k, memory, label):
    obs = {
        "schema_version": "memory_utility_observation_v0",
        "observation_id": "",
        "scope": SCOPE,
        "application_receipt_id": f"rma_{k:064x}",
        "memory_ref_digests": [digest(memory)],
        "retrieval_snapshot_ref": "retrieval:bench",
        "policy_snapshot_ref": "policy:bench",
        "outcome_ref": f"effect:bench-{k}",
        "utility_label": label,
        "attribution_level": "item",
        "evidence_basis": "deterministic_effect",
        "confidence": 0.8,
        "reason_codes": ["bench_fixture"],
        "evidence_refs": [f"test:bench-{k}"],
        "evaluator_ref": "evaluator:deterministic",
        "evaluation_version": "memory_utility_attribution_v0",
        "created_at": at(180 * k + 120),
        "grants_new_action_authority": False,
        "provider_write_performed": False,
        "external_writes_performed": False,
        "raw_content_captured": False,
    }
    obs["observation_id"] = "muo_" + hashlib.sha256(canonical({k2: obs[k2] for k2 in IDENTITY}).encode()).hexdigest()
    return obs


def recall_event(k, relevance, policy, shown, explored):
    semantic = sorted(policy, key=lambda m: (-relevance[m], digest(m)))
    candidates = []
    for m in policy:
        shown_rank = shown.index(m) + 1
        policy_rank = policy.index(m) + 1
        candidates.append({
            "memory_ref_digest": digest(m),
            "relevance": relevance[m],
            "semantic_rank": semantic.index(m) + 1,
            "policy_rank": policy_rank,
            "shown_rank": shown_rank,
            "in_pool": True,
            "propensity": (1 - EPSILON) * (1.0 if policy_rank == shown_rank else 0.0) + EPSILON / SHOWN,
        })
    return {
        "schema_version": "memory_utility_traffic_event_v0",
        "event_kind": "recall",
        "recall_id": f"rms_{k:032x}",
        "observed_at": at(180 * k),
        "partition": PARTITION,
        "logging_policy": {"kind": "semantic", "profile_digest": None, "epsilon": EPSILON,
                           "pool_size": SHOWN, "explored": explored},
        "candidates": candidates,
        "shadow": None,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["observations", "traffic"])
    parser.add_argument("args", nargs="+")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--no-observations", action="store_true")
    a = parser.parse_args()
    if a.command == "observations":
        n = int(a.args[0])
        for *_, observation in world(n, a.seed):
            if observation is not None:
                sys.stdout.write(json.dumps(observation, separators=(",", ":")) + "\n")
        return
    ledger, n = a.args[0], int(a.args[1])
    db = sqlite3.connect(ledger)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN")
    key = tuple(SCOPE[k] for k in ("agent_id", "project_id", "corpus_id", "surface_id")) + (
        "retrieval:bench", "policy:bench")
    db.execute(
        "INSERT OR IGNORE INTO traffic_partitions (agent_id, project_id, corpus_id, surface_id, "
        "retrieval_snapshot_ref, policy_snapshot_ref) VALUES (?, ?, ?, ?, ?, ?)", key)
    (pid,) = db.execute(
        "SELECT traffic_partition_id FROM traffic_partitions WHERE agent_id = ? AND project_id = ? "
        "AND corpus_id = ? AND surface_id = ? AND retrieval_snapshot_ref = ? AND policy_snapshot_ref = ?",
        key).fetchone()
    (high,) = db.execute("SELECT coalesce(max(seq), 0) FROM deliveries").fetchone()
    # The world's observations were appended already (last): as the log tells it, each
    # arrived right after its outcome.
    own = 0 if a.no_observations else sum(1 for *_, o in world(n, a.seed) if o is not None)
    base = high - own
    delivered = 0 if not a.no_observations else None

    def rows():
        nonlocal delivered
        for k, relevance, policy, shown, explored, top, status, observation in world(n, a.seed):
            high = base + (delivered or 0)
            recall = recall_event(k, relevance, policy, shown, explored)
            yield (pid, "recall", recall["recall_id"], "", recall["observed_at"], high,
                   json.dumps(recall, separators=(",", ":")))
            apply = {
                "schema_version": "memory_utility_traffic_event_v0", "event_kind": "apply",
                "recall_id": recall["recall_id"], "observed_at": at(180 * k + 60),
                "application_receipt_id": f"rma_{k:064x}", "outcome": "applied",
                "applied": [digest(top)], "partition": PARTITION,
            }
            yield (pid, "apply", apply["recall_id"], apply["application_receipt_id"],
                   apply["observed_at"], high, json.dumps(apply, separators=(",", ":")))
            if observation is not None and delivered is not None:
                delivered += 1
                high += 1
            outcome = {
                "schema_version": "memory_utility_traffic_event_v0", "event_kind": "outcome",
                "application_receipt_id": f"rma_{k:064x}", "observed_at": at(180 * k + 120),
                "outcome_ref": f"effect:bench-{k}", "outcome_status": status,
                "partition": PARTITION,
            }
            yield (pid, "outcome", "", outcome["application_receipt_id"], outcome["observed_at"],
                   high, json.dumps(outcome, separators=(",", ":")))

    db.executemany(
        "INSERT INTO traffic_events (traffic_partition_id, kind, recall_id, application_receipt_id, "
        "observed_at, delivery_seq, event) VALUES (?, ?, ?, ?, ?, ?, ?)", rows())
    db.commit()
    (count,) = db.execute("SELECT count(*) FROM traffic_events").fetchone()
    print(f"traffic_events: {count} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
