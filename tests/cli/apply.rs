//! `apply`: the session it maps refs through, and every way a decision is refused.

use serde_json::{Value, json};

use crate::recall::{ingest_memories, loop_setup, recall, routed};
use crate::support::mask_session;
use crate::support::{Run, Scratch};
use crate::{snap, snap_masked};

/// A loop scratch after one recall: the scratch, the session ref and the recall packet.
fn recalled() -> (Scratch, String, Value) {
    let s = loop_setup();
    ingest_memories(&s);
    let packet = recall(&s, &[]).json();
    let session = packet["recall_session_ref"]
        .as_str()
        .expect("session")
        .to_owned();
    (s, session, packet)
}

fn apply(s: &Scratch, session: &str, outcome: &str, refs: &[&str], extra: &[&str]) -> Run {
    let mut args = vec![
        "apply",
        "--recall-session",
        session,
        "--application-id",
        "application:t",
        "--artifact-ref",
        "pr:t",
        "--outcome",
        outcome,
        "--reasoning-summary",
        "Decision of the test",
        "--format",
        "json",
    ];
    for r in refs {
        args.extend(["--memory-ref", r]);
    }
    args.extend_from_slice(extra);
    routed(s, &args)
}

#[test]
fn decisions_are_refused_with_clear_errors() {
    let (s, session, packet) = recalled();
    let first = packet["results"][0]["memory_ref"].as_str().expect("ref");
    let verified = ["--current-artifact-verified"];
    let cases: Vec<(&str, Run)> = vec![
        (
            "apply_unknown_session",
            apply(
                &s,
                "rms_00000000000000000000000000000000",
                "ignored",
                &[],
                &[],
            ),
        ),
        (
            "apply_malformed_session_ref",
            apply(&s, "../../registry", "ignored", &[], &[]),
        ),
        (
            "apply_ref_not_from_this_recall",
            apply(
                &s,
                &session,
                "applied",
                &["provider-00000000000000000000"],
                &verified,
            ),
        ),
        (
            "apply_raw_provider_ref_refused",
            apply(
                &s,
                &session,
                "applied",
                &["embedded://reward-memory/issue-fix/x.json"],
                &verified,
            ),
        ),
        (
            "apply_applied_without_refs",
            apply(&s, &session, "applied", &[], &verified),
        ),
        (
            "apply_applied_unverified",
            apply(&s, &session, "applied", &[first], &[]),
        ),
    ];
    for (name, run) in cases {
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert_eq!(run.json()["status"], "invalid_request", "{name}");
        snap_masked!(name, run, mask_session);
    }
}

/// A session document the test changed on purpose, sealed again with the runtime root's
/// key (as recall would have written it): any other edit is refused as modified.
pub fn reseal(s: &Scratch, text: &str) -> String {
    use reward_memory::recall::session::{SessionKey, seal};
    let key = std::fs::read(s.path.join("rt/reward-memory/recall-session.key")).expect("key");
    let key = SessionKey::parse(&key).expect("a session key");
    seal(
        reward_memory::wire::json::parse(text).expect("session JSON"),
        &key,
    )
}

#[test]
fn an_expired_session_is_refused() {
    let (s, session, _) = recalled();
    let path = s
        .path
        .join("rt/reward-memory/recall-sessions")
        .join(format!("{session}.json"));
    let text = std::fs::read_to_string(&path).expect("session");
    let re = regex::Regex::new(r#""expires_at":"[^"]+""#).expect("pattern");
    let past = re.replace(&text, r#""expires_at":"2001-01-01T00:00:00.000000+00:00""#);
    std::fs::write(&path, reseal(&s, &past)).expect("rewrite");
    let run = apply(&s, &session, "ignored", &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.json()["error"],
        format!(
            "recall session {session} expired at 2001-01-01T00:00:00.000000+00:00: run recall again"
        )
    );
    snap_masked!("apply_expired_session", run, mask_session);
    // The file's modification time is its expiry; a recall removes expired ones, at most
    // once a minute (the sweep marker's time is the last sweep's: set a minute back here).
    let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(978_307_200);
    let marker = path.with_file_name(".swept");
    for file in [&path, &marker] {
        std::fs::File::options()
            .write(true)
            .open(file)
            .expect("open")
            .set_modified(long_ago)
            .expect("set mtime");
    }
    recall(&s, &[]);
    assert!(!path.exists());
}

#[test]
fn ignored_and_input_forms_produce_receipts_with_ids() {
    let (s, session, packet) = recalled();
    let second = packet["results"][1]["memory_ref"].as_str().expect("ref");
    let ignored = apply(&s, &session, "ignored", &[second], &[]);
    assert_eq!(ignored.code, 0, "{}", ignored.stdout);
    let out = ignored.json();
    assert_eq!(out["receipt"]["outcome"], "ignored");
    assert!(
        out["application_receipt_id"]
            .as_str()
            .expect("id")
            .starts_with("rma_")
    );
    s.write(
        "apply.json",
        &json!({
            "recall_session_ref": session,
            "application_id": "application:t",
            "artifact_ref": "pr:t",
            "outcome": "ignored",
            "memory_refs": [second],
            "reasoning_summary": "Decision of the test",
        })
        .to_string(),
    );
    let from_input = routed(&s, &["apply", "--input", "apply.json", "--format", "json"]);
    assert_eq!(from_input.json(), out, "the two forms agree");
    s.write(
        "apply.json",
        &json!({"recall_session_ref": session, "outcome": "maybe"}).to_string(),
    );
    let bad = routed(&s, &["apply", "--input", "apply.json", "--format", "json"]);
    assert_eq!(bad.code, 2);
}

#[test]
fn markdown_shows_an_apply_refusal_and_says_it_on_stderr() {
    let (s, _, _) = recalled();
    let run = routed(
        &s,
        &[
            "apply",
            "--recall-session",
            "rms_00000000000000000000000000000000",
            "--application-id",
            "application:t",
            "--artifact-ref",
            "pr:t",
            "--outcome",
            "ignored",
            "--reasoning-summary",
            "Decision of the test",
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("- error: `recall session rms_"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.starts_with("reward-memory: recall session rms_"),
        "{}",
        run.stderr
    );
}

/// Runs `apply --input <fixture>` against a runtime root holding the fixture session
/// (`fixtures/apply/session/`, expiring in 2099) and the session key its integrity tag was
/// made with (`fixtures/apply/recall-session.key`, mode 0600): no provider, no recall.
fn apply_fixture(path: &std::path::Path) -> Run {
    use std::os::unix::fs::PermissionsExt as _;
    let s = Scratch::new();
    let key = crate::support::fixtures_dir().join("apply/recall-session.key");
    s.write(
        "rt/reward-memory/recall-session.key",
        &std::fs::read_to_string(&key).expect("key"),
    );
    std::fs::set_permissions(
        s.path.join("rt/reward-memory/recall-session.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("chmod");
    let sessions = crate::support::fixtures_dir().join("apply/session");
    for entry in std::fs::read_dir(&sessions).expect("session fixtures") {
        let file = entry.expect("entry").path();
        let name = file.file_name().and_then(|n| n.to_str()).expect("name");
        s.write(
            &format!("rt/reward-memory/recall-sessions/{name}"),
            &std::fs::read_to_string(&file).expect("session"),
        );
    }
    let input = path.to_string_lossy();
    s.run(
        &[
            "apply",
            "--input",
            &input,
            "--runtime-root",
            "rt",
            "--format",
            "json",
        ],
        None,
    )
}

#[test]
fn valid_apply_inputs_print_receipts_that_utility_observe_accepts() {
    let files = crate::support::fixture_files("apply", "valid");
    assert!(files.len() >= 3);
    for path in files {
        let run = apply_fixture(&path);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.transcript());
        crate::ingest_event::conforms("reward_memory_application_v0", &run);
        let packet = run.json();
        assert_eq!(
            packet["receipt"]["schema_version"],
            "reward_memory_application_receipt_v0"
        );
        let input = crate::support::read_json(&path);
        assert_eq!(packet["receipt"]["outcome"], input["outcome"]);
        snap!(
            format!("apply_input_valid_{}", crate::support::snake_stem(&path)),
            run
        );
    }
}

#[test]
fn invalid_apply_inputs_are_request_errors() {
    let files = crate::support::fixture_files("apply", "invalid");
    assert!(files.len() >= 10);
    for path in files {
        let run = apply_fixture(&path);
        crate::support::assert_invalid_request(&run, &path);
        snap!(
            format!("apply_input_invalid_{}", crate::support::snake_stem(&path)),
            run
        );
    }
}

#[test]
fn a_session_from_before_snapshots_gives_the_plain_receipt() {
    let (s, session, packet) = recalled();
    let first = packet["results"][0]["memory_ref"].as_str().expect("ref");
    let verified = ["--current-artifact-verified"];
    let current = apply(&s, &session, "applied", &[first], &verified).json();
    let receipt = current["receipt"].as_object().expect("receipt");
    for key in [
        "agent_id",
        "project_id",
        "retrieval_snapshot_ref",
        "policy_snapshot_ref",
    ] {
        assert!(receipt.contains_key(key), "{key} is recorded");
    }
    // The same session as an older recall wrote it: no context member.
    let path = s
        .path
        .join("rt/reward-memory/recall-sessions")
        .join(format!("{session}.json"));
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("session")).expect("JSON");
    document
        .as_object_mut()
        .expect("object")
        .remove("context")
        .expect("a context member");
    std::fs::write(&path, reseal(&s, &document.to_string())).expect("rewrite");
    let older = apply(&s, &session, "applied", &[first], &verified);
    assert_eq!(older.code, 0, "{}", older.stdout);
    let older = older.json();
    let mut plain = current["receipt"].clone();
    for key in [
        "agent_id",
        "project_id",
        "retrieval_snapshot_ref",
        "policy_snapshot_ref",
    ] {
        plain.as_object_mut().expect("object").remove(key);
    }
    assert_eq!(older["receipt"], plain, "exactly the §10.5 receipt");
    assert_ne!(
        older["application_receipt_id"],
        current["application_receipt_id"]
    );
    // A context member that is not an object of strings is not a session recall wrote.
    document["context"] = json!({"agent_id": 7});
    std::fs::write(&path, reseal(&s, &document.to_string())).expect("rewrite");
    let bad = apply(&s, &session, "applied", &[first], &verified);
    assert_eq!(bad.code, 2, "{}", bad.stdout);
    assert_eq!(
        bad.json()["error"],
        format!("recall session {session} cannot be read: run recall again")
    );
}
