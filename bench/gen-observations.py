#!/usr/bin/env python3
"""Writes realistic, valid memory_utility_observation_v0 deliveries as JSON Lines.

Many scopes (agents x projects) and snapshots, many memories per scope; item, set and
none attribution; every evidence tier with labels the contract allows; about 4 % retries
(same statement, later created_at) and 0.5 % conflicting versions (same id, another
label). Deterministic for a seed. Identity and canonical JSON follow the contract:
observation_id = "muo_" + sha256(canonical JSON of the 12 identity fields).

usage: gen-observations.py COUNT [--seed N] [--scopes N] [--memories N] [--offset N]
"""
import argparse
import hashlib
import json
import random
import sys

IDENTITY = (
    "schema_version", "scope", "application_receipt_id", "memory_ref_digests",
    "retrieval_snapshot_ref", "policy_snapshot_ref", "outcome_ref", "attribution_level",
    "evidence_basis", "evidence_refs", "evaluator_ref", "evaluation_version",
)
BASES = ["owner_correction", "controlled_replay", "deterministic_effect",
         "evaluator_inference", "insufficient"]
BASIS_WEIGHTS = [2, 3, 15, 70, 10]
LABELS = ["helpful", "harmful", "neutral", "unknown"]
LABEL_WEIGHTS = [50, 20, 15, 15]


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(scope_index, memory):
    return hashlib.sha256(f"memory:{scope_index}:{memory}".encode()).hexdigest()[:16]


def make(rng, i, args):
    scope_index = rng.randrange(args.scopes)
    agent, project = scope_index % 97, scope_index // 97
    scope = {
        "agent_id": f"agent:a{agent}",
        "project_id": f"project:p{project}",
        "corpus_id": "reward-memory-corpus",
        "surface_id": "loopx.issue_fix",
    }
    level = rng.choices(["item", "set", "none"], [80, 15, 5])[0]
    if level == "item":
        digests = [digest_of(scope_index, rng.randrange(args.memories))]
    else:
        digests = sorted({digest_of(scope_index, rng.randrange(args.memories)) for _ in range(rng.randrange(2, 5))})
    basis = rng.choices(BASES, BASIS_WEIGHTS)[0]
    label = rng.choices(LABELS, LABEL_WEIGHTS)[0]
    if basis == "insufficient" or level == "none":
        label = "unknown"
    needs_ref = basis in ("owner_correction", "controlled_replay", "deterministic_effect") or label != "unknown"
    refs = [f"evidence:e{i}"] if needs_ref or rng.random() < 0.3 else []
    second = i // 3600
    obs = {
        "schema_version": "memory_utility_observation_v0",
        "observation_id": "",
        "scope": scope,
        "application_receipt_id": "rma_" + hashlib.sha256(f"receipt:{i // 3}".encode()).hexdigest(),
        "memory_ref_digests": digests,
        "retrieval_snapshot_ref": f"retrieval:s{scope_index % 3}",
        "policy_snapshot_ref": "policy:v1",
        "outcome_ref": f"effect:o{i // 3}",
        "utility_label": label,
        "attribution_level": level,
        "evidence_basis": basis,
        "confidence": round(rng.random(), 3),
        "reason_codes": ["bench_fixture"],
        "evidence_refs": refs,
        "evaluator_ref": "evaluator:bench",
        "evaluation_version": f"evaluation:v{i}",
        "created_at": f"2026-{1 + (second // 86400) % 12:02d}-{1 + (second // 3600) % 28:02d}T{second % 24:02d}:{i % 60:02d}:{(i // 60) % 60:02d}Z",
        "grants_new_action_authority": False,
        "provider_write_performed": False,
        "external_writes_performed": False,
        "raw_content_captured": False,
    }
    obs["observation_id"] = "muo_" + hashlib.sha256(canonical({k: obs[k] for k in IDENTITY}).encode()).hexdigest()
    return obs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scopes", type=int, default=400)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--offset", type=int, default=0, help="first delivery index")
    args = parser.parse_args()
    rng = random.Random(args.seed * 1_000_003 + args.offset)
    recent = []
    out = sys.stdout
    write = out.write
    for i in range(args.offset, args.offset + args.count):
        roll = rng.random()
        if recent and roll < 0.04:
            obs = dict(rng.choice(recent))
            obs["created_at"] = obs["created_at"].replace("Z", "+00:00")  # a retry
        elif recent and roll < 0.045:
            obs = dict(rng.choice(recent))
            if obs["attribution_level"] != "none" and obs["evidence_basis"] != "insufficient":
                obs["utility_label"] = "harmful" if obs["utility_label"] == "helpful" else "helpful"
                if not obs["evidence_refs"]:
                    continue
        else:
            obs = make(rng, i, args)
            recent.append(obs)
            if len(recent) > 5000:
                recent.pop(0)
        write(json.dumps(obs, separators=(",", ":"), ensure_ascii=False))
        write("\n")


if __name__ == "__main__":
    main()
