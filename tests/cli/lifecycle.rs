//! `operator-control --execute` on the README loop's embedded store: a retirement takes
//! effect on recall, a supersession recalls the successor, a revocation and a retry, a
//! checkpoint for another corpus is refused, and a SIGKILL during the write leaves the old
//! or the new state.

use std::os::unix::fs::DirBuilderExt as _;
use std::time::Duration;

use serde_json::{Value, json};

use reward_memory::provider::embedded::EmbeddedStore;
use reward_memory::provider::embedded::lifecycle;

use crate::recall::{loop_setup, routed};
use crate::support::{Scratch, fixtures_dir, pretty, read_json};

const EVENT_B: &str = "candidate:e9e57b72b291efd6f77d";
const NAMESPACE: &str = "reward_memory";

/// Ingests the three loop memories and returns their candidate refs (a, b, c).
fn ingest(s: &Scratch) -> Vec<String> {
    ["event-a.json", "event-b.json", "event-c.json"]
        .iter()
        .map(|event| {
            let run = routed(
                s,
                &[
                    "ingest-event",
                    "--input",
                    event,
                    "--goal-id",
                    "embedded-demo",
                    "--agent-id",
                    "pilot",
                    "--execute",
                    "--format",
                    "json",
                ],
            );
            let packet = run.json();
            assert_eq!(packet["status"], "activated", "{}", run.stdout);
            packet["candidate_ref"].as_str().expect("ref").to_owned()
        })
        .collect()
}

/// The loop's recall: its candidate refs and `lifecycle_skipped_count`.
fn recall(s: &Scratch) -> (Vec<String>, u64) {
    let run = routed(
        s,
        &[
            "recall",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--query",
            "test-commits",
            "--query-summary",
            "review-habits",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let packet = run.json();
    let refs = packet["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["candidate_ref"].as_str().expect("ref").to_owned())
        .collect();
    (
        refs,
        packet["lifecycle_skipped_count"].as_u64().expect("count"),
    )
}

/// The committed fixture with the record of `event` (its `candidate_ref`) and a
/// checkpoint for `action`.
fn control_input(event: &str, candidate_ref: &str, action: &str) -> Value {
    let mut input = read_json(&fixtures_dir().join("operator_control/loop/retire-event-b.json"));
    let ev = read_json(&fixtures_dir().join("recall/loop").join(event))["event"].clone();
    let record = &mut input["reviewed_record"]["record"];
    record["content_summary"] = ev["content_summary"].clone();
    record["source"] = ev["source"].clone();
    record["reasoning"] = ev["reasoning"].clone();
    record["candidate_ref"] = json!(candidate_ref);
    input["operator_checkpoint"]["action"] = json!(action);
    input
}

fn control(s: &Scratch, input: &str, action: &str, control_ref: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "operator-control",
        "--input",
        input,
        "--action",
        action,
        "--control-ref",
        control_ref,
        "--reasoning-summary",
        "The maintainer changed this preference.",
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--execute",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let run = routed(s, &args);
    crate::ingest_event::conforms("reward_memory_lifecycle_receipt_v0", &run);
    let packet = run.json();
    let ok = packet["ok"] == json!(true);
    assert_eq!(run.code, if ok { 0 } else { 2 }, "{}", run.stdout);
    packet
}

fn retire_b(s: &Scratch) -> Value {
    s.write(
        "retire-b.json",
        &pretty(&read_json(
            &fixtures_dir().join("operator_control/loop/retire-event-b.json"),
        )),
    );
    control(s, "retire-b.json", "retire", "control:loop:retire", &[])
}

#[test]
fn the_loops_retirement_is_written_read_back_and_no_longer_recalled() {
    let s = loop_setup();
    ingest(&s);
    let (before, skipped) = recall(&s);
    assert_eq!(before.first().map(String::as_str), Some(EVENT_B));
    assert_eq!(skipped, 0);

    let receipt = retire_b(&s);
    assert_eq!(
        receipt["schema_version"],
        "reward_memory_lifecycle_receipt_v0"
    );
    assert_eq!(receipt["status"], "applied");
    assert_eq!(receipt["readback_verified"], true);
    assert_eq!(receipt["provider_write_performed"], true);
    assert_eq!(
        (&receipt["prior_state"], &receipt["result_state"]),
        (&json!("active"), &json!("retired"))
    );
    let (after, skipped) = recall(&s);
    assert!(!after.contains(&EVENT_B.to_owned()), "{after:?}");
    assert_eq!(after.len(), 1);
    assert_eq!(skipped, 1);

    // A retry is the same receipt without a second row.
    let retry = retire_b(&s);
    assert_eq!(retry["status"], "applied");
    assert_eq!(retry["deduplicated"], true);
    assert_eq!(retry["provider_write_performed"], false);
    assert_eq!(retry["lifecycle_sequence"], receipt["lifecycle_sequence"]);

    // History: the record's bytes stay readable by ref, its state is the appended row.
    let store = EmbeddedStore::in_runtime_root(&s.path.join("rt"));
    assert_eq!(store.count().expect("count"), 3);
    let t = Duration::from_secs(5);
    let target = lifecycle::find_candidate(
        &store,
        NAMESPACE,
        "embedded://reward-memory/issue-fix",
        EVENT_B,
        t,
    )
    .expect("read")
    .expect("still stored");
    let row = lifecycle::latest(&store, NAMESPACE, &target.0, t)
        .expect("read")
        .expect("row");
    assert_eq!((row.state.as_str(), row.sequence), ("retired", 1));
}

#[test]
fn without_execute_the_prepared_control_is_unchanged_and_revoke_needs_execute() {
    let s = loop_setup();
    let input = fixtures_dir().join("operator_control/loop/retire-event-b.json");
    s.write("retire-b.json", &pretty(&read_json(&input)));
    let prepared = routed(
        &s,
        &[
            "operator-control",
            "--input",
            "retire-b.json",
            "--action",
            "retire",
            "--control-ref",
            "control:loop:retire",
            "--reasoning-summary",
            "Withdrawn.",
            "--format",
            "json",
        ],
    );
    assert_eq!(prepared.code, 0, "{}", prepared.stderr);
    let packet = prepared.json();
    assert_eq!(packet["status"], "control_ready");
    assert_eq!(packet["receipt"]["provider_write_performed"], false);
    assert!(!s.path.join("rt").exists(), "nothing is written");

    let revoke = routed(
        &s,
        &[
            "operator-control",
            "--input",
            "retire-b.json",
            "--action",
            "revoke",
            "--control-ref",
            "control:loop:revoke",
            "--reasoning-summary",
            "Withdrawn.",
            "--format",
            "json",
        ],
    );
    assert_eq!(revoke.code, 2);
    assert!(revoke.stdout.contains("--execute"), "{}", revoke.stdout);
}

#[test]
fn retire_then_supersede_recalls_the_successor_and_revoke_hides_it() {
    let s = loop_setup();
    let refs = ingest(&s);
    retire_b(&s);
    let (after_retire, _) = recall(&s);
    let other = after_retire.first().expect("one left").clone();
    let event = ["event-a.json", "event-b.json", "event-c.json"][refs
        .iter()
        .position(|r| *r == other)
        .expect("an ingested memory")];
    s.write("edit.json", &pretty(&control_input(event, &other, "edit")));
    let edited = control(
        &s,
        "edit.json",
        "edit",
        "control:loop:edit",
        &[
            "--edited-content-summary",
            "Run the focused test suite before pushing commits.",
        ],
    );
    assert_eq!(edited["status"], "applied", "{edited}");
    assert_eq!(edited["lifecycle_change"], "supersede");
    assert_eq!(edited["result_state"], "superseded");
    let successor = edited["successor_candidate_ref"]
        .as_str()
        .expect("successor")
        .to_owned();
    let (after_edit, skipped) = recall(&s);
    assert_eq!(after_edit, vec![successor.clone()]);
    assert_eq!(skipped, 2, "the retired and the superseded record");
    let store = EmbeddedStore::in_runtime_root(&s.path.join("rt"));
    assert_eq!(store.count().expect("count"), 4, "the old bytes are kept");

    // The successor is an active record like any other: revoking it hides it.
    s.write(
        "revoke.json",
        &pretty(&{
            let mut input = control_input(event, &successor, "revoke");
            input["reviewed_record"]["record"]["content_summary"] =
                json!("Run the focused test suite before pushing commits.");
            input
        }),
    );
    let revoked = control(&s, "revoke.json", "revoke", "control:loop:revoke", &[]);
    assert_eq!(revoked["status"], "applied", "{revoked}");
    assert_eq!(revoked["result_state"], "revoked");
    let (after_revoke, _) = recall(&s);
    assert!(after_revoke.is_empty(), "{after_revoke:?}");

    // A record that is no longer active is not changed again.
    let again = retire_b_with(&s, "control:loop:retire-again");
    assert_eq!(again["status"], "refused");
    assert_eq!(again["reason_code"], "lifecycle_target_not_active");
}

fn retire_b_with(s: &Scratch, control_ref: &str) -> Value {
    control(s, "retire-b.json", "retire", control_ref, &[])
}

#[test]
fn a_checkpoint_for_another_corpus_is_refused_and_nothing_is_written() {
    let s = loop_setup();
    ingest(&s);
    let mut input = read_json(&fixtures_dir().join("operator_control/loop/retire-event-b.json"));
    input["operator_checkpoint"]["corpus_id"] = json!("dogfood_preferences");
    s.write("other.json", &pretty(&input));
    let refused = control(&s, "other.json", "retire", "control:loop:other", &[]);
    assert_eq!(refused["status"], "refused");
    assert_eq!(refused["reason_code"], "operator_checkpoint_other_corpus");
    assert_eq!(refused["provider_write_performed"], false);

    let mut input = read_json(&fixtures_dir().join("operator_control/loop/retire-event-b.json"));
    input["operator_checkpoint"]["authority_ref"] = json!("agent:example-reviewer");
    s.write("reviewer.json", &pretty(&input));
    let refused = control(&s, "reviewer.json", "retire", "control:loop:reviewer", &[]);
    assert_eq!(
        refused["reason_code"],
        "operator_checkpoint_authority_mismatch"
    );

    let (refs, skipped) = recall(&s);
    assert_eq!(refs.first().map(String::as_str), Some(EVENT_B));
    assert_eq!(skipped, 0);
}

#[test]
fn a_sigkill_during_a_supersession_leaves_the_old_or_the_new_state() {
    let base = loop_setup();
    let refs = ingest(&base);
    let old = refs[1].clone();
    let input = control_input("event-b.json", &old, "edit");
    base.write("edit.json", &pretty(&input));
    let rt = base.path.join("rt");
    let store_dir = rt.join("reward-memory");
    let binary = env!("CARGO_BIN_EXE_reward-memory");
    let (mut old_seen, mut new_seen) = (0, 0);
    for i in 0..24u64 {
        // A fresh copy of the ingested store for each run.
        let copy = base.path.join(format!("rt-{i}"));
        let copy_dir = copy.join("reward-memory");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&copy_dir)
            .expect("dir");
        for entry in std::fs::read_dir(&store_dir).expect("store dir") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), copy_dir.join(entry.file_name())).expect("copy");
        }
        let mut child = std::process::Command::new(binary)
            .current_dir(&base.path)
            .env("HOME", base.path.join(".home"))
            .env_remove("LOOPX_REGISTRY")
            .args([
                "--registry",
                "registry.json",
                "--runtime-root",
                copy.to_str().expect("utf-8"),
                "operator-control",
                "--input",
                "edit.json",
                "--action",
                "edit",
                "--control-ref",
                "control:loop:kill",
                "--reasoning-summary",
                "Narrowed.",
                "--edited-content-summary",
                "Prefer small reversible commits with their tests.",
                "--goal-id",
                "embedded-demo",
                "--agent-id",
                "pilot",
                "--execute",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        if i < 23 {
            // SIGKILL somewhere between the start and the end (it may have finished).
            std::thread::sleep(Duration::from_millis(i * 5));
            let _ = child.kill();
        }
        let _ = child.wait();
        let store = EmbeddedStore::in_runtime_root(&copy);
        let t = Duration::from_secs(5);
        let target = lifecycle::find_candidate(
            &store,
            NAMESPACE,
            "embedded://reward-memory/issue-fix",
            &old,
            t,
        )
        .expect("store readable")
        .expect("the old record is kept");
        let row = lifecycle::latest(&store, NAMESPACE, &target.0, t).expect("readable");
        let count = store.count().expect("count");
        match row {
            None => {
                assert_eq!(count, 3, "run {i}: no row, so no successor either");
                old_seen += 1;
            }
            Some(row) => {
                assert_eq!(row.state, "superseded", "run {i}");
                let successor = row.successor_ref.expect("successor ref");
                assert!(
                    store.read(NAMESPACE, &successor).expect("read").is_some(),
                    "run {i}: the row and its successor are written together"
                );
                assert_eq!(count, 4, "run {i}");
                new_seen += 1;
            }
        }
    }
    // The last run is not killed: it completes.
    assert!(
        new_seen > 0,
        "the write completed in some run ({old_seen} old)"
    );
    crate::support::note(&format!(
        "sigkill runs: {old_seen} left the old state, {new_seen} the new one"
    ));
}

#[test]
fn on_openviking_the_lifecycle_contract_is_absent_and_nothing_is_written() {
    use sha2::Digest as _;
    let s = loop_setup();
    let config_rel = "project/.loopx/config/reward-memory/experiment.json";
    let mut config = read_json(&s.path.join(config_rel));
    let scope = "viking://resources/reward-memory/issue-fix";
    config["project_provider_binding"]["provider_id"] = json!("openviking");
    config["project_provider_binding"]["corpus_scopes"][0]["scope_ref"] = json!(scope);
    config["corpora"][0]["corpus"]["provider_id"] = json!("openviking");
    config["corpora"][0]["corpus"]["provider_scope_ref_digest"] =
        json!(hex::encode(sha2::Sha256::digest(scope.as_bytes()))[..16].to_owned());
    s.write(config_rel, &pretty(&config));
    s.write(
        "retire-b.json",
        &pretty(&read_json(
            &fixtures_dir().join("operator_control/loop/retire-event-b.json"),
        )),
    );
    let receipt = control(&s, "retire-b.json", "retire", "control:loop:retire", &[]);
    assert_eq!(receipt["status"], "provider_unavailable", "{receipt}");
    assert_eq!(receipt["reason_code"], "provider_lifecycle_contract_absent");
    assert_eq!(receipt["provider_id"], "openviking");
    assert_eq!(receipt["provider_write_performed"], false);
    assert!(!s.path.join("rt").exists(), "nothing is written");
}

/// `health-check --goal-id embedded-demo --agent-id pilot`: state and pipeline.
fn live_health(s: &Scratch) -> Value {
    let run = routed(
        s,
        &[
            "health-check",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    crate::ingest_event::conforms("reward_memory_corpus_health_v0", &run);
    run.json()
}

#[test]
fn live_health_measures_each_state_in_the_store() {
    let s = loop_setup();
    let empty = live_health(&s);
    assert_eq!(empty["health_state"], "unavailable");
    assert_eq!(empty["reason_codes"], json!(["corpus_missing"]));
    assert_eq!(empty["pipeline"]["provider_available"], true);
    assert_eq!(empty["pipeline"]["corpus_present"], false);

    ingest(&s);
    let verified = live_health(&s);
    assert_eq!(verified["health_state"], "retrieval_verified", "{verified}");
    let pipeline = &verified["pipeline"];
    for key in [
        "corpus_present",
        "index_present",
        "retrieval_query_succeeded",
        "result_readback_verified",
    ] {
        assert_eq!(pipeline[key], true, "{key}");
    }
    assert_eq!(pipeline["memory_applied_with_receipt"], false);
    assert_eq!(pipeline["record_count"], 3);

    // An `apply` receipt naming one of the corpus's memories.
    let recalled = routed(
        &s,
        &[
            "recall",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--query",
            "test-commits",
            "--query-summary",
            "review-habits",
            "--format",
            "json",
        ],
    )
    .json();
    let applied = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            recalled["recall_session_ref"].as_str().expect("session"),
            "--application-id",
            "application:health-1",
            "--artifact-ref",
            "pr:health-1",
            "--outcome",
            "applied",
            "--memory-ref",
            recalled["results"][0]["memory_ref"].as_str().expect("ref"),
            "--reasoning-summary",
            "Kept the change small.",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    );
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    let with_receipt = live_health(&s);
    assert_eq!(
        with_receipt["health_state"], "applied_verified",
        "{with_receipt}"
    );
    assert_eq!(
        with_receipt["pipeline"]["memory_applied_with_receipt"],
        true
    );

    // Retired records are not counted as recallable.
    retire_b(&s);
    assert_eq!(live_health(&s)["pipeline"]["record_count"], 2);
}
