#!/usr/bin/env python3
"""Regenerates fixtures/rank_prior/{valid,invalid}/*.json.

Every fixture is a `rank-prior --input` request over one real projection: the
observations are built with `reward-memory utility-observe` and reduced with
`reward-memory utility-project`, so the projection passes the readback validator.
Usage: scripts/rank-prior-fixtures.py [path/to/reward-memory]
"""
import copy
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/debug/reward-memory")
OUT = ROOT / "fixtures/rank_prior"

SCOPE = {
    "agent_id": "agent:stage3",
    "project_id": "project:loopx",
    "corpus_id": "reward-memory-corpus",
    "surface_id": "loopx.issue_fix",
}
PARTITION = {
    "scope": SCOPE,
    "retrieval_snapshot_ref": "retrieval:stage3",
    "policy_snapshot_ref": "policy:stage3",
}
PROFILE = {
    "schema_version": "memory_utility_rank_prior_profile_v0",
    "profile_id": "profile:stage3",
    "semantic_floor": 0.1,
    "candidate_pool": 8,
    "modifier_bounds": [0.5, 2.0],
    "min_evidence_basis": "deterministic_effect",
    "allow_evaluator_inference": False,
    "min_support": 1,
}
D = {name: f"{i:016x}" for i, name in enumerate(
    ["none", "helpful", "harmful", "unknown", "inferred", "effect", "neutral", "set_a", "set_b", "low"], start=1)}


def run(args, payload):
    out = subprocess.run([BIN, *args, "--input", "-", "--format", "json"],
                         input=json.dumps(payload), capture_output=True, text=True, check=False)
    packet = json.loads(out.stdout)
    if out.returncode != 0:
        sys.exit(f"{args}: {packet}")
    return packet


def observation(name, digests, level, label, basis, confidence, evidence):
    receipt = {
        "schema_version": "reward_memory_application_receipt_v0",
        "application_id": f"application:{name}",
        "artifact_ref": f"artifact:{name}",
        "corpus_id": SCOPE["corpus_id"],
        "surface_id": SCOPE["surface_id"],
        "mode": "function_boundary",
        "query_kind": "business_recall",
        "query_evidence": [{"query_digest": "aabbccddeeff0011", "query_summary": "stage 3 fixture",
                            "exact_query_exposed": False}],
        "outcome": "applied",
        "memory_ref_digests": sorted(digests),
        "reasoning_summary": "Applied the recalled guidance to the fixture.",
        "current_artifact_verified": True,
        "result_readback_verified": True,
        "provider_call_count": 1,
        "model_reasoning_preserved": True,
        "grants_new_action_authority": False,
        "external_writes_performed": False,
        "raw_content_captured": False,
    }
    facts = {"outcome_ref": f"effect:{name}", "artifact_ref": f"artifact:{name}", "outcome_status": "succeeded"}
    return run(["utility-observe"], {
        "application_receipt": receipt,
        "verified_outcome": {"verified": True, **facts},
        "attribution_context": PARTITION,
        "evaluator_proposal": {
            "scope": SCOPE, "application_id": f"application:{name}", **facts,
            "retrieval_snapshot_ref": PARTITION["retrieval_snapshot_ref"],
            "policy_snapshot_ref": PARTITION["policy_snapshot_ref"],
            "memory_ref_digests": sorted(digests), "utility_label": label,
            "attribution_level": level, "evidence_basis": basis, "confidence": confidence,
            "reason_codes": ["stage3_fixture"], "evidence_refs": evidence,
            "evaluator_ref": "evaluator:stage3", "evaluation_version": f"evaluation:{name}",
        },
        "created_at": "2026-08-16T00:00:00Z",
    })


observations = [
    observation("helpful", [D["helpful"]], "item", "helpful", "owner_correction", 0.8, ["owner:1"]),
    observation("harmful", [D["harmful"]], "item", "harmful", "controlled_replay", 0.6, ["replay:1"]),
    observation("unknown", [D["unknown"]], "item", "unknown", "insufficient", 0.0, []),
    observation("inferred", [D["inferred"]], "item", "helpful", "evaluator_inference", 0.9, ["judge:1"]),
    observation("effect", [D["effect"]], "item", "helpful", "deterministic_effect", 0.9, ["ci:1"]),
    observation("neutral", [D["neutral"]], "item", "neutral", "deterministic_effect", 0.7, ["ci:2"]),
    observation("set", [D["set_a"], D["set_b"]], "set", "helpful", "owner_correction", 0.9, ["owner:2"]),
]
PROJECTION = run(["utility-project"], {"observations": observations, **PARTITION})
assert PROJECTION["status"] == "ready", PROJECTION["status"]


def request(candidates, **profile):
    return {"profile": {**PROFILE, **profile}, "partition": PARTITION,
            "projection": PROJECTION, "candidates": candidates}


def pair(name, relevance, neighbour=0.6):
    return [{"memory_ref_digest": D[name], "relevance_score": relevance},
            {"memory_ref_digest": D["none"], "relevance_score": neighbour}]


VALID = {
    "positive-utility-boost": request(pair("helpful", 0.6, 0.7)),
    "negative-utility-attenuation": request(pair("harmful", 0.65)),
    "utility-unknown": request(pair("unknown", 0.5)),
    "evaluator-inference-excluded": request(pair("inferred", 0.55)),
    "evaluator-inference-allowed": request(pair("inferred", 0.55), min_evidence_basis="evaluator_inference",
                                           allow_evaluator_inference=True),
    "evidence-tier-below-minimum": request(pair("effect", 0.55), min_evidence_basis="controlled_replay"),
    "support-below-minimum": request(pair("effect", 0.55), min_support=2),
    "neutral-utility": request(pair("neutral", 0.55)),
    "set-level-credit-only": request(pair("set_a", 0.55)),
    "no-utility-evidence": request([{"memory_ref_digest": D["none"], "relevance_score": 0.4},
                                    {"memory_ref_digest": D["low"], "relevance_score": 0.4}]),
    "semantic-stage": request([
        {"memory_ref_digest": D["helpful"], "relevance_score": 0.05},
        {"memory_ref_digest": D["effect"], "relevance_score": 0.3},
        {"memory_ref_digest": D["none"], "relevance_score": 0.9},
        {"memory_ref_digest": D["low"], "relevance_score": 0.8},
        {"memory_ref_digest": D["neutral"], "relevance_score": 0.2},
    ], candidate_pool=3),
    "empty-pool": request([{"memory_ref_digest": D["helpful"], "relevance_score": 0.01}]),
}
recall_packet = {
    "ok": True, "schema_version": "reward_memory_recall_v0", "corpus_id": SCOPE["corpus_id"],
    "surface_id": SCOPE["surface_id"], "status": "completed",
    "results": [
        {"memory_ref": "provider-00000000000000000001", "memory_ref_digest": D["none"], "relevance_score": 0.7, "rank": 1},
        {"memory_ref": "provider-00000000000000000002", "memory_ref_digest": D["helpful"], "relevance_score": 0.6, "rank": 2},
    ],
}
VALID["from-recall-packet"] = {"profile": PROFILE, "partition": PARTITION, "projection": PROJECTION,
                               "recall": recall_packet}

INVALID = {}


def invalid(name, base, edit):
    value = copy.deepcopy(base)
    edit(value)
    INVALID[name] = value


base = VALID["positive-utility-boost"]
invalid("bounds-exclude-one", base, lambda v: v["profile"].update(modifier_bounds=[1.2, 2.0]))
invalid("bounds-upper-below-one", base, lambda v: v["profile"].update(modifier_bounds=[0.5, 0.9]))
invalid("bounds-lower-zero", base, lambda v: v["profile"].update(modifier_bounds=[0, 2.0]))
invalid("bounds-infinite", base, lambda v: v["profile"].update(modifier_bounds=[0.5, float("inf")]))
invalid("candidate-nan-relevance", base, lambda v: v["candidates"][0].update(relevance_score=float("nan")))
invalid("candidate-infinite-relevance", base, lambda v: v["candidates"][0].update(relevance_score=float("inf")))
invalid("candidate-negative-relevance", base, lambda v: v["candidates"][0].update(relevance_score=-0.1))
invalid("candidate-duplicate-digest", base, lambda v: v["candidates"].append(dict(v["candidates"][0])))
invalid("candidate-bad-digest", base, lambda v: v["candidates"][0].update(memory_ref_digest="viking://x"))
invalid("candidates-and-recall", base, lambda v: v.update(recall=recall_packet))
invalid("projection-other-scope", base, lambda v: v["partition"]["scope"].update(agent_id="agent:other"))
invalid("projection-other-snapshot", base, lambda v: v["partition"].update(policy_snapshot_ref="policy:other"))
invalid("projection-tampered", base, lambda v: v["projection"]["subjects"][0].update(utility_estimate=0.99))
invalid("projection-missing", base, lambda v: v.pop("projection"))
invalid("evaluator-inference-without-allow", base,
        lambda v: v["profile"].update(min_evidence_basis="evaluator_inference", allow_evaluator_inference=False))
invalid("floor-above-one", base, lambda v: v["profile"].update(semantic_floor=1.5))
invalid("unknown-field", base, lambda v: v.update(hotness={}))
invalid("recall-without-scores", VALID["from-recall-packet"],
        lambda v: v["recall"]["results"][0].update(relevance_score=None))
invalid("recall-other-corpus", VALID["from-recall-packet"], lambda v: v["recall"].update(corpus_id="other"))

for kind, cases in (("valid", VALID), ("invalid", INVALID)):
    folder = OUT / kind
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    for name, value in cases.items():
        (folder / f"{name}.json").write_text(json.dumps(value, indent=2, allow_nan=True) + "\n", encoding="utf-8")
print(f"wrote {len(VALID)} valid and {len(INVALID)} invalid fixtures under {OUT}")
