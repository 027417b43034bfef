//! `utility-attribute`: the deterministic evaluator's table through the real binary, and
//! external evaluators that time out, print garbage, are missing, claim too much or are
//! over quota — each exits 0, names its status and leaves the receipt and the ledger
//! byte-identical. `--receipt-id` and `--pending` read what the store holds.

use std::time::{Duration, Instant};

use crate::snap;
use crate::support::{Scratch, fixtures_dir};

const DIGEST: &str = "173d6e8701131c6b";
const RECEIPT_ID: &str = "rma_fb2f382bffc2cca89597c9e3902bd2753dd437c47db88b9aa7e7855b9382e7e0";

fn scratch() -> Scratch {
    let s = Scratch::new();
    let receipt = std::fs::read_to_string(fixtures_dir().join("utility_attribute/receipt.json"))
        .expect("fixture");
    s.write("receipt.json", &receipt);
    s
}

fn base<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "utility-attribute",
        "--receipt",
        "receipt.json",
        "--agent-id",
        "pilot",
        "--project-id",
        "repository:example",
        "--outcome-ref",
        "effect:loop-1",
        "--outcome-status",
        "succeeded",
        "--verified",
        "--ledger",
        "ledger.sqlite3",
        "--runtime-root",
        "rt",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    args
}

fn script(s: &Scratch, name: &str, body: &str) -> String {
    s.write(name, &format!("#!/bin/sh\n{body}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(s.path.join(name), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    s.path.join(name).display().to_string()
}

fn bytes(s: &Scratch, rel: &str) -> Vec<u8> {
    std::fs::read(s.path.join(rel)).expect("file")
}

/// The ledger exists (one deterministic observation) before an evaluator is tried.
fn seeded() -> Scratch {
    let s = scratch();
    let run = s.run(&base(&[]), None);
    assert_eq!(run.code, 0, "{}", run.transcript());
    s
}

fn evaluator(run: &crate::support::Run) -> serde_json::Value {
    run.json()["attributions"][0]["evaluators"][0].clone()
}

#[test]
fn success_without_evidence_appends_no_helpful_item_observation() {
    let s = scratch();
    let run = s.run(&base(&[]), None);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let e = evaluator(&run);
    assert_eq!(e["status"], "appended");
    let export = s.run(
        &["utility-ledger", "export", "--ledger", "ledger.sqlite3"],
        None,
    );
    for line in export.stdout.lines() {
        let o: serde_json::Value = serde_json::from_str(line).expect("json line");
        assert_ne!(o["utility_label"], "helpful", "{line}");
        assert_eq!(o["evidence_basis"], "insufficient");
        assert_eq!(o["utility_label"], "unknown");
    }
}

#[test]
fn a_test_tied_to_the_applied_digest_appends_one_deterministic_item_observation() {
    let s = scratch();
    let evidence = format!("test:ci-17:passed:{DIGEST}");
    let run = s.run(&base(&["--evidence", &evidence]), None);
    assert_eq!(run.code, 0, "{}", run.transcript());
    snap!("utility_attribute_deterministic_item", &run);
    let export = s.run(
        &["utility-ledger", "export", "--ledger", "ledger.sqlite3"],
        None,
    );
    let lines: Vec<serde_json::Value> = export
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["evidence_basis"], "deterministic_effect");
    assert_eq!(lines[0]["attribution_level"], "item");
    assert_eq!(lines[0]["utility_label"], "helpful");
    // Re-running appends nothing new.
    let again = s.run(&base(&["--evidence", &evidence]), None);
    assert_eq!(evaluator(&again)["status"], "duplicate");
}

#[test]
fn evidence_in_the_wrong_form_is_a_request_error_that_names_the_form() {
    let s = scratch();
    let run = s.run(&base(&["--evidence", "test:ci-17"]), None);
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(
        run.stdout.contains("KIND:REF:RESULT:DIGEST"),
        "{}",
        run.stdout
    );
}

/// Runs `--evaluator-command` and checks the fail-open rule: exit 0, the status, no
/// observation, the receipt and the ledger byte-identical, high water unchanged.
fn fails_open(program_body: Option<&str>, extra: &[&str], status: &str) -> Duration {
    let s = seeded();
    let program = match program_body {
        Some(body) => script(&s, "evaluator.sh", body),
        None => s.path.join("missing-evaluator").display().to_string(),
    };
    let (receipt, ledger) = (bytes(&s, "receipt.json"), bytes(&s, "ledger.sqlite3"));
    let mut args = base(&["--evaluator-command", &program]);
    args.extend_from_slice(extra);
    let started = Instant::now();
    let run = s.run(&args, None);
    let elapsed = started.elapsed();
    assert_eq!(run.code, 0, "{}", run.transcript());
    let e = evaluator(&run);
    assert_eq!(e["status"], status, "{}", run.stdout);
    assert_eq!(e["observation_ids"], serde_json::json!([]));
    assert_eq!(run.json()["high_water_sequence"], 1);
    assert_eq!(bytes(&s, "receipt.json"), receipt);
    assert_eq!(
        bytes(&s, "ledger.sqlite3"),
        ledger,
        "the ledger is unchanged"
    );
    elapsed
}

#[test]
fn an_evaluator_past_its_timeout_is_killed_and_reported_timeout() {
    let elapsed = fails_open(
        Some("sleep 30"),
        &["--evaluator-timeout-ms", "1000"],
        "timeout",
    );
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
}

#[test]
fn an_evaluator_printing_garbage_is_malformed() {
    fails_open(Some("echo 'not json {'"), &[], "malformed");
}

#[test]
fn a_missing_evaluator_is_unavailable() {
    fails_open(None, &[], "unavailable");
}

#[test]
fn an_evaluator_claiming_owner_correction_is_refused() {
    let proposal = format!(
        r#"echo '{{"utility_label": "helpful", "attribution_level": "item", "evidence_basis": "owner_correction", "confidence": 0.99, "reason_codes": [], "evidence_refs": ["effect:loop-1"], "memory_ref_digests": ["{DIGEST}"]}}'"#
    );
    fails_open(Some(&proposal), &[], "refused");
}

#[test]
fn an_evaluator_over_its_quota_does_not_run() {
    let s = seeded();
    let program = script(&s, "evaluator.sh", "touch ran; echo '{}'");
    let profile = format!(
        r#"{{"schema_version": "memory_utility_attribution_profile_v0", "profile_id": "attribution:quota",
        "evaluators": [{{"kind": "external", "evaluator_id": "evaluator:quota", "argv": ["{program}"],
        "timeout_ms": 5000, "max_tier": "evaluator_inference", "quota": {{"max": 1, "window_seconds": 3600}}}}]}}"#
    );
    s.write("profile.json", &profile);
    let first = s.run(&base(&["--profile", "profile.json"]), None);
    assert_eq!(evaluator(&first)["status"], "malformed", "{}", first.stdout);
    std::fs::remove_file(s.path.join("ran")).expect("it ran once");
    let (receipt, ledger) = (bytes(&s, "receipt.json"), bytes(&s, "ledger.sqlite3"));
    let second = s.run(&base(&["--profile", "profile.json"]), None);
    assert_eq!(second.code, 0, "{}", second.transcript());
    assert_eq!(evaluator(&second)["status"], "quota_exhausted");
    assert!(
        !s.path.join("ran").exists(),
        "an exhausted evaluator is not started"
    );
    assert_eq!(bytes(&s, "receipt.json"), receipt);
    assert_eq!(bytes(&s, "ledger.sqlite3"), ledger);
}

#[test]
fn pending_entries_settle_once_and_expired_ones_are_moved_aside() {
    let s = scratch();
    let receipt = std::fs::read_to_string(s.path.join("receipt.json")).expect("receipt");
    s.write(
        &format!("rt/reward-memory/application-receipts/{RECEIPT_ID}.json"),
        &receipt,
    );
    let pending = |id: &str, expires: &str| {
        format!(
            r#"{{"schema_version": "memory_utility_attribution_pending_v0", "application_receipt_id": "{id}", "created_at": "2026-01-01T00:00:00+00:00", "expires_at": "{expires}"}}"#
        )
    };
    s.write(
        &format!("rt/reward-memory/attribution-pending/{RECEIPT_ID}.json"),
        &pending(RECEIPT_ID, "2999-01-01T00:00:00+00:00"),
    );
    let old = format!("rma_{}", "0".repeat(64));
    s.write(
        &format!("rt/reward-memory/attribution-pending/{old}.json"),
        &pending(&old, "2000-01-01T00:00:00+00:00"),
    );
    s.write(
        "outcomes.jsonl",
        &format!(
            r#"{{"application_receipt_id": "{RECEIPT_ID}", "outcome_ref": "effect:loop-1", "outcome_status": "succeeded", "verified": true, "evidence": ["test:ci-17:passed:{DIGEST}"]}}"#
        ),
    );
    let args = [
        "utility-attribute",
        "--pending",
        "--outcomes",
        "outcomes.jsonl",
        "--agent-id",
        "pilot",
        "--project-id",
        "repository:example",
        "--ledger",
        "ledger.sqlite3",
        "--runtime-root",
        "rt",
        "--format",
        "json",
    ];
    let run = s.run(&args, None);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let packet = run.json();
    assert_eq!(packet["pending"]["settled"], 1);
    assert_eq!(packet["pending"]["expired"], serde_json::json!([old]));
    assert_eq!(
        packet["attributions"][0]["evaluators"][0]["status"],
        "appended"
    );
    assert!(
        s.path
            .join(format!("rt/reward-memory/attribution-expired/{old}.json"))
            .is_file()
    );
    let again = s.run(&args, None);
    let packet = again.json();
    assert_eq!(
        packet["attributions"][0]["evaluators"][0]["status"],
        "duplicate"
    );
    assert_eq!(packet["pending"]["settled"], 0);
    assert_eq!(packet["pending"]["not_pending"], 1);
    // The stored receipt is also readable by id.
    let by_id = s.run(
        &[
            "utility-attribute",
            "--receipt-id",
            RECEIPT_ID,
            "--agent-id",
            "pilot",
            "--project-id",
            "repository:example",
            "--outcome-ref",
            "effect:loop-1",
            "--outcome-status",
            "succeeded",
            "--verified",
            "--evidence",
            &format!("test:ci-17:passed:{DIGEST}"),
            "--ledger",
            "ledger.sqlite3",
            "--runtime-root",
            "rt",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(
        evaluator(&by_id)["status"],
        "duplicate",
        "{}",
        by_id.transcript()
    );
}

/// A receipt that `apply` printed after a routed recall: it records the route's agent
/// and project, so `utility-attribute` needs neither flag and refuses another value.
#[test]
fn a_routed_receipt_gives_the_partition_scope_and_a_flag_may_only_repeat_it() {
    use crate::recall::{ingest_memories, loop_setup, recall, routed};
    let s = loop_setup();
    ingest_memories(&s);
    let recalled = recall(&s, &[]).json();
    let session = recalled["recall_session_ref"].as_str().expect("session");
    let memory_ref = recalled["results"][0]["memory_ref"]
        .as_str()
        .expect("memory ref");
    let applied = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            "application:scope",
            "--artifact-ref",
            "pr:scope",
            "--outcome",
            "applied",
            "--memory-ref",
            memory_ref,
            "--reasoning-summary",
            "Ran the focused tests",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    );
    assert_eq!(applied.code, 0, "{}", applied.transcript());
    s.write("apply.json", &applied.stdout);
    let receipt = &applied.json()["receipt"];
    assert_eq!(receipt["agent_id"], "pilot");
    let attribute = |extra: &[&str]| {
        let mut args = vec![
            "utility-attribute",
            "--receipt",
            "apply.json",
            "--outcome-ref",
            "effect:scope",
            "--outcome-status",
            "succeeded",
            "--verified",
            "--ledger",
            "ledger.sqlite3",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        routed(&s, &args)
    };
    let run = attribute(&[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let partition = &run.json()["attributions"][0]["partition"];
    assert_eq!(partition["scope"]["agent_id"], "pilot");
    assert_eq!(partition["scope"]["project_id"], receipt["project_id"]);
    assert_eq!(
        partition["retrieval_snapshot_ref"],
        receipt["retrieval_snapshot_ref"]
    );
    assert_eq!(
        partition["policy_snapshot_ref"],
        receipt["policy_snapshot_ref"]
    );
    let before = bytes(&s, "ledger.sqlite3");
    let other = attribute(&["--agent-id", "someone-else"]);
    assert_eq!(other.code, 2, "{}", other.transcript());
    assert!(
        other.stdout.contains("application_receipt_scope_mismatch"),
        "{}",
        other.stdout
    );
    assert_eq!(bytes(&s, "ledger.sqlite3"), before, "nothing appended");
    let same = attribute(&["--agent-id", "pilot"]);
    assert_eq!(same.code, 0, "{}", same.transcript());
}
