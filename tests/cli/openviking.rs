//! End-to-end check of the OpenViking provider against a real OpenViking server.
//!
//! Runs only when `REWARD_MEMORY_OV_BIN` names an `ov` executable that is configured
//! for a running server (`scripts/openviking-it.sh` sets this up on loopback); otherwise
//! it passes without doing anything. `REWARD_MEMORY_OV_SCOPE` may name the
//! `viking://resources/...` scope to use (default: a fresh one per run).

use std::path::{Path, PathBuf};

use reward_memory::provider::openviking::OpenVikingProvider;
use reward_memory::provider::{
    ContextProvider, ResultCap, RetrieveRequest, SyncRequest, SyncResource, SyncSource,
};

const OBSERVED_AT: &str = "2026-07-16T00:30:00+00:00";

fn sync_request(source: &Path, target: &str) -> SyncRequest {
    SyncRequest {
        namespace: "reward_memory".into(),
        resources: vec![SyncResource {
            source: SyncSource::File(source.to_path_buf()),
            target_ref: target.into(),
            search_text: None,
        }],
        timeout_seconds: 60.0,
        observed_at: OBSERVED_AT.into(),
        execute: true,
    }
}

fn write_source(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("source dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("source file");
    path
}

#[test]
fn real_openviking_sync_retrieve_and_idempotent_resync() {
    let Ok(ov) = std::env::var("REWARD_MEMORY_OV_BIN") else {
        return;
    };
    let unique = format!(
        "it-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    );
    let scope = std::env::var("REWARD_MEMORY_OV_SCOPE")
        .unwrap_or_else(|_| format!("viking://resources/reward-memory-it/{unique}"));
    let target = format!("{scope}/record-1.json");
    let record = concat!(
        r#"{"candidate_ref":"candidate:3a1d61cfc56c978eeab5","content_summary":"#,
        r#""Keep memory-core changes focused and validate material effects before PR.","#,
        r#""schema_version":"reward_memory_active_record_v0","target_class":"hard_policy"}"#,
        "\n"
    );
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ov-{unique}"));
    let source = write_source(&scratch.join("a"), "record-1.json", record);
    let provider = OpenVikingProvider::new(&ov, "0.4.9", None).expect("provider");

    // First sync writes the exact bytes.
    let first = provider.sync(&sync_request(&source, &target));
    assert_eq!(first.status, "completed", "{first:?}");
    assert_eq!(first.write_count, 1, "{first:?}");
    assert_eq!(first.result_refs, std::slice::from_ref(&target));
    let version = first.provider_version.clone().expect("version");
    assert!(version.contains("0.5.2"), "{version}");

    // Retrieve finds it under the scope and reads back the exact bytes.
    let retrieval = provider.retrieve(&RetrieveRequest {
        namespace: "reward_memory".into(),
        scope_ref: scope.clone(),
        query: "candidate:3a1d61cfc56c978eeab5 Keep memory-core changes focused".into(),
        query_summary: "Verify the ingested record.".into(),
        max_results: 3,
        cap: ResultCap::Reference,
        timeout_seconds: 60.0,
        observed_at: OBSERVED_AT.into(),
    });
    assert_eq!(retrieval.status, "completed", "{retrieval:?}");
    assert_eq!(retrieval.reason_code, None, "{retrieval:?}");
    let hit = retrieval
        .items
        .iter()
        .find(|item| item.resource_ref == target)
        .unwrap_or_else(|| panic!("target not retrieved: {retrieval:?}"));
    assert_eq!(hit.content, record, "exact readback");
    assert!(
        retrieval
            .items
            .iter()
            .all(|item| !item.resource_ref.contains("/.")),
        "generated entries are not returned: {retrieval:?}"
    );

    // A second identical sync is deduplicated: no write.
    let second = provider.sync(&sync_request(&source, &target));
    assert_eq!(second.status, "completed", "{second:?}");
    assert_eq!(second.write_count, 0, "{second:?}");
    assert!(!second.reconciliation_performed);

    // A different payload for the same target is a conflict and is not written.
    let conflicting = write_source(
        &scratch.join("b"),
        "record-1.json",
        "{\"candidate_ref\":\"candidate:other\"}\n",
    );
    let conflict = provider.sync(&sync_request(&conflicting, &target));
    assert_eq!(conflict.status, "partial", "{conflict:?}");
    assert_eq!(
        conflict.reason_code.as_deref(),
        Some("provider_sync_revision_conflict")
    );
    assert_eq!(conflict.write_count, 0);
    let output = std::process::Command::new(&ov)
        .args(["read", &target, "-o", "json", "-c", "true"])
        .output()
        .expect("ov read runs");
    let text = String::from_utf8(output.stdout).expect("utf-8");
    let json_start = text.find('{').expect("JSON answer");
    let answer: serde_json::Value = serde_json::from_str(&text[json_start..]).expect("JSON");
    assert_eq!(
        answer["result"].as_str(),
        Some(record),
        "stored bytes unchanged"
    );

    let _ = std::fs::remove_dir_all(&scratch);
}

/// The fixture case of `fixtures/ingest_event/openviking` in a scratch dir, with `ov`
/// replaced by the scripted stand-in of `fixtures/provider/openviking/fake-ov.sh`.
#[cfg(unix)]
fn scripted_case(version: &str) -> (crate::support::Scratch, PathBuf) {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = crate::support::Scratch::new();
    let fixtures = crate::support::fixtures_dir();
    let fake_dir = scratch.path.join("fake-ov");
    std::fs::create_dir_all(fake_dir.join("store")).expect("fake store");
    std::fs::write(fake_dir.join("version"), version).expect("version");
    let script = std::fs::read_to_string(fixtures.join("provider/openviking/fake-ov.sh"))
        .expect("fake ov script");
    let ov = fake_dir.join("ov");
    std::fs::write(&ov, script.replace("@DIR@", &fake_dir.to_string_lossy())).expect("ov");
    std::fs::set_permissions(&ov, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for rel in [
        "registry.json",
        "event.json",
        "project/.loopx/config/reward-memory/experiment.json",
    ] {
        let text = std::fs::read_to_string(fixtures.join("ingest_event/openviking").join(rel))
            .expect("fixture");
        scratch.write(
            rel,
            &text
                .replace("@CASE_DIR@", &scratch.path.to_string_lossy())
                .replace("@OV_BIN@", &ov.to_string_lossy()),
        );
    }
    (scratch, fake_dir)
}

#[cfg(unix)]
fn ingest_execute(scratch: &crate::support::Scratch) -> serde_json::Value {
    let run = scratch.run(
        &[
            "--registry",
            "registry.json",
            "ingest-event",
            "--input",
            "event.json",
            "--goal-id",
            "reward-memory-goal",
            "--agent-id",
            "pilot",
            "--execute",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    run.json()
}

#[cfg(unix)]
#[test]
fn ingest_event_execute_with_a_scripted_ov_activates_then_deduplicates() {
    let (scratch, fake_dir) = scripted_case("openviking 0.5.2\n");
    let first = ingest_execute(&scratch);
    assert_eq!(first["status"], "activated", "{first:#}");
    assert_eq!(first["reason_codes"], serde_json::json!([]));
    assert_eq!(first["exact_readback_verified"], true);
    assert_eq!(first["deduplicated"], false);
    assert_eq!(first["write"]["write_count"], 1);
    assert_eq!(first["write"]["provider_version"], "openviking 0.5.2");
    assert_eq!(first["readback"]["result_count"], 1);
    let calls = std::fs::read_to_string(fake_dir.join("calls.log")).expect("calls");
    assert!(
        calls.lines().any(|line| line
            .starts_with("write viking://resources/reward-memory/example-reviewer-artifacts/")
            && line.contains(" --mode create --wait -o json -c true")),
        "{calls}"
    );
    assert!(!calls.contains("add-resource"), "{calls}");

    let second = ingest_execute(&scratch);
    assert_eq!(second["status"], "activated", "{second:#}");
    assert_eq!(second["deduplicated"], true);
    assert_eq!(second["write"]["write_count"], 0);
    assert_eq!(second["external_writes_performed"], false);
}

#[cfg(unix)]
#[test]
fn ingest_event_execute_with_an_old_ov_is_provider_unavailable() {
    let (scratch, _fake_dir) = scripted_case("ov 0.4.8\n");
    let packet = ingest_execute(&scratch);
    assert_eq!(packet["status"], "provider_unavailable", "{packet:#}");
    assert_eq!(
        packet["reason_codes"],
        serde_json::json!(["provider_version_incompatible"])
    );
    assert_eq!(packet["write"]["status"], "unavailable");
    assert_eq!(packet["write"]["provider_version"], "ov 0.4.8");
}
