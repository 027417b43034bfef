#!/usr/bin/env python3
"""The MCP server against a real MCP client: the official Python SDK (`mcp` on PyPI).

Starts `reward-memory mcp` on a fresh runtime root with the embedded example route
(fixtures/ingest_event/embedded, its project made absolute) and drives the README's
attribution loop through the tools, as an agent would: ingest (a batch of the three loop
events) -> recall (each result's text delivered) -> apply -> attribute (a verified test
tied to the applied memory) -> ledger_subject -> rank_evaluate (simulated, the loop
profile) -> recall with the prior, which now ranks the applied memory first. It asserts
the packets and the refusals (a tool error carrying the error packet). Run by
scripts/mcp-it.sh, which brings the SDK; prints one line per step and `N passed, 0 failed`.

Usage: mcp-it.py --binary target/release/reward-memory
"""

import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parent.parent
EMBEDDED = ROOT / "fixtures/ingest_event/embedded"
LOOP = ROOT / "fixtures/recall/loop"
GOAL = {"goal_id": "embedded-demo", "agent_id": "pilot"}
QUERY = {"query": ["test-commits"], "query_summary": ["review-habits"]}
# The memory the agent applies (the loop's second result) and the one ranked first by
# relevance alone.
APPLIED = "candidate:1055152b3245beb65374"
FIRST_BY_RELEVANCE = "candidate:e9e57b72b291efd6f77d"

checks = 0


def check(condition, what, packet=None):
    global checks
    if not condition:
        detail = "" if packet is None else "\n" + json.dumps(packet, indent=2)[:4000]
        raise AssertionError(f"{what}{detail}")
    checks += 1


def packets(result):
    """The JSON packets of a tool result (warnings are plain text after them)."""
    out = []
    for block in result.content:
        text = getattr(block, "text", "")
        if text.startswith("{"):
            out.append(json.loads(text))
    return out


async def call(session, name, arguments, expect_error=False):
    started = time.perf_counter()
    result = await session.call_tool(name, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    found = packets(result)
    check(found, f"{name}: a JSON packet", [b.model_dump() for b in result.content])
    check(
        bool(result.is_error) == expect_error,
        f"{name}: is_error {result.is_error}, expected {expect_error}",
        found[0],
    )
    print(f"[mcp-it] {name}: {found[0].get('status')} ({elapsed:.1f} ms)", flush=True)
    return found


def setup(work):
    registry = json.loads((EMBEDDED / "registry.json").read_text())
    project = work / "project"
    shutil.copytree(EMBEDDED / "project", project)
    registry["goals"][0]["repo"] = str(project)
    (work / "registry.json").write_text(json.dumps(registry, indent=2))
    return work / "registry.json"


async def loop(binary, work):
    registry = setup(work)
    runtime = work / "rt"
    ledger = str(work / "ledger.sqlite3")
    params = StdioServerParameters(
        command=str(binary),
        args=["mcp", "--registry", str(registry), "--runtime-root", str(runtime)],
        cwd=str(work),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "reward-memory", "server name")
            tools = {t.name: t for t in (await session.list_tools()).tools}
            for name in ["recall", "apply", "attribute", "correct", "ingest",
                         "ledger_subject", "ledger_review", "rank_evaluate",
                         "experiment_status"]:
                check(name in tools, f"tool {name} listed")
                check(tools[name].input_schema.get("type") == "object", f"{name} schema")
            print(f"[mcp-it] tools/list: {', '.join(tools)}", flush=True)

            [status] = await call(session, "experiment_status", GOAL)
            check(status["ok"] is True and status["configured_for_agent"], "route", status)

            events = [json.loads((LOOP / f"event-{m}.json").read_text()) for m in "abc"]
            receipts = await call(session, "ingest", {**GOAL, "execute": True, "events": events})
            check(len(receipts) == 3, "one receipt per event", receipts)
            for receipt in receipts:
                check(receipt["status"] == "activated", "ingest activated", receipt)

            [first] = await call(session, "recall", {**GOAL, **QUERY})
            check(first["status"] == "completed", "recall completed", first)
            order = [r["candidate_ref"] for r in first["results"]]
            check(order == [FIRST_BY_RELEVANCE, APPLIED], "relevance order", first)
            texts = {r["delivered_content"]["content_summary"] for r in first["results"]}
            check(
                "Run the focused test suite before pushing a branch." in texts,
                "the memory's text is delivered",
                first,
            )
            for r in first["results"]:
                check(r["content_summary"] is None, "the public field stays null", r)
                check(r["delivered_content"]["visibility"] == "caller_private", "private", r)
            applied = first["results"][1]

            [apply] = await call(session, "apply", {
                "recall_session": first["recall_session_ref"],
                "application_id": "application:mcp-1",
                "artifact_ref": "pr:mcp-1",
                "outcome": "applied",
                "memory_ref": [applied["memory_ref"]],
                "reasoning_summary": "Ran the focused test suite before pushing",
                "current_artifact_verified": True,
            })
            check(apply["application_receipt_id"].startswith("rma_"), "receipt id", apply)
            check(apply["receipt"]["memory_ref_digests"] == [applied["memory_ref_digest"]],
                  "receipt digests", apply)
            for text in texts:
                check(text not in json.dumps(apply), "no delivered text in the receipt", apply)

            [attribution] = await call(session, "attribute", {
                "receipt_id": apply["application_receipt_id"],
                "outcome_ref": "effect:mcp-1",
                "outcome_status": "succeeded",
                "verified": True,
                "evidence": [f"test:ci-17:passed:{applied['memory_ref_digest']}"],
                "ledger": ledger,
            })
            evaluator = attribution["attributions"][0]["evaluators"][0]
            check(evaluator["status"] == "appended", "observation appended", attribution)
            partition = attribution["attributions"][0]["partition"]
            (work / "partition.json").write_text(json.dumps(partition))

            [subject] = await call(session, "ledger_subject", {
                "partition": {"input": str(work / "partition.json")},
                "memory_ref_digests": [applied["memory_ref_digest"]],
                "location": {"ledger": ledger},
            })
            check(subject["subjects"], "the ledger holds the applied memory's subject", subject)

            prior = {
                "rank_prior": str(LOOP / "profile.json"),
                "partition": str(work / "partition.json"),
                "ledger": ledger,
            }
            [gated] = await call(session, "recall", {**GOAL, **QUERY, **prior})
            check(gated["rank_prior_applied"] is False, "prior off without a verdict", gated)
            check(gated["rank_prior_reason_code"] == "rank_prior_evaluation_missing",
                  "why the prior is off", gated)

            [verdict] = await call(session, "rank_evaluate", {
                "simulate": True,
                "episodes": 1000,
                "profile": str(LOOP / "evaluation-profile.json"),
            })
            check(verdict["verdict"] == "qualified", "the loop profile qualifies", verdict)
            (work / "evaluation.json").write_text(json.dumps(verdict))

            [ranked] = await call(session, "recall", {
                **GOAL, **QUERY, **prior,
                "evaluation": str(work / "evaluation.json"),
                "allow_simulated_evaluation": True,
            })
            check(ranked["rank_prior_applied"] is True, "prior applied", ranked)
            order = [r["candidate_ref"] for r in ranked["results"]]
            check(order == [APPLIED, FIRST_BY_RELEVANCE], "utility changed the order", ranked)

            # Refusals are tool errors carrying the error packet.
            [refused] = await call(session, "apply", {
                "recall_session": "rms_" + "0" * 32,
                "application_id": "application:mcp-2",
                "artifact_ref": "pr:mcp-2",
                "outcome": "ignored",
                "reasoning_summary": "Not relevant",
            }, expect_error=True)
            check(refused["schema_version"] == "reward_memory_error_v0", "error packet", refused)
            [refused] = await call(session, "recall", {**GOAL, "querry": ["x"]},
                                   expect_error=True)
            check("querry" in refused["error"], "an unknown argument is named", refused)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(ROOT / "target/release/reward-memory"))
    args = parser.parse_args()
    binary = pathlib.Path(args.binary).resolve()
    with tempfile.TemporaryDirectory(prefix="reward-memory-mcpit.") as work:
        try:
            anyio.run(loop, binary, pathlib.Path(work))
        except AssertionError as err:
            print(f"[mcp-it] FAIL: {err}", file=sys.stderr)
            print(f"{checks} passed, 1 failed")
            sys.exit(1)
    print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main()
