#![allow(clippy::unwrap_used)]

use super::*;
use crate::provider::{ResultCap, SyncResource, SyncSource};

fn parse(text: &str) -> Value {
    json::parse(text).unwrap()
}

// --- versions -------------------------------------------------------------------------

#[test]
fn version_triple_takes_the_first_semantic_triple() {
    assert_eq!(version_triple("openviking 0.5.2"), Some([0, 5, 2]));
    assert_eq!(
        version_triple("ov 1.2.3-rc1 (build 4.5.6)"),
        Some([1, 2, 3])
    );
    assert_eq!(version_triple("v1.2"), None);
    assert_eq!(version_triple("dev-build"), None);
    assert!(version_triple("0.4.10").unwrap() > version_triple("0.4.9").unwrap());
    assert!(version_triple("0.4.8").unwrap() < version_triple("0.4.9").unwrap());
}

// --- JSON extraction -------------------------------------------------------------------

#[test]
fn extract_json_parses_the_whole_output_first() {
    assert_eq!(extract_json("  {\"a\": 1}\n").unwrap(), parse("{\"a\": 1}"));
    assert_eq!(extract_json("\"text\"").unwrap(), Value::Str("text".into()));
}

#[test]
fn extract_json_skips_log_lines_before_the_payload() {
    let out = "cmd: ov read viking://resources/x\n{\"ok\":true,\"result\":\"body\"} trailing";
    assert_eq!(
        extract_json(out).unwrap(),
        parse("{\"ok\":true,\"result\":\"body\"}")
    );
}

#[test]
fn extract_json_takes_the_first_decodable_bracket_even_a_log_marker() {
    // The reference's quirk (§12.15): `[1] ready` decodes as the list `[1]`.
    assert_eq!(
        extract_json("[1] ready\n{\"text\": \"x\"}").unwrap(),
        parse("[1]")
    );
}

#[test]
fn extract_json_reports_empty_and_json_free_output() {
    assert_eq!(extract_json(" \n"), Err("provider returned empty output"));
    assert_eq!(
        extract_json("no json { here"),
        Err("provider output did not contain JSON")
    );
}

// --- rows ------------------------------------------------------------------------------

#[test]
fn rows_collect_listed_keys_in_order_then_result_then_data() {
    let value = parse(
        r#"{"items":[{"uri":"i"}],"resources":[{"uri":"r"},3],"result":{"memories":[{"uri":"m"}]},"data":[{"uri":"d"}]}"#,
    );
    let uris: Vec<String> = rows(&value)
        .iter()
        .map(|row| pystr(row.get("uri")))
        .collect();
    assert_eq!(uris, ["r", "i", "m", "d"]);
}

#[test]
fn rows_of_a_list_are_its_objects_without_recursion() {
    let value = parse(r#"[{"uri":"a"},"x",{"result":[{"uri":"nested"}]}]"#);
    assert_eq!(rows(&value).len(), 2);
    assert!(rows(&parse("\"text\"")).is_empty());
}

#[test]
fn row_fields_follow_the_key_preferences() {
    let value = parse(
        r#"{"uri":"file:///x","path":" viking://resources/a ","summary":"/home/u/secret","title":"Title","distance":2,"score":true}"#,
    );
    let row = value.as_object().unwrap();
    assert_eq!(row_uri(row).as_deref(), Some("viking://resources/a"));
    assert_eq!(row_summary(row), "Title");
    assert_eq!(row_score(row), Some(2.0));
    let empty = Map::new();
    assert_eq!(row_uri(&empty), None);
    assert_eq!(row_summary(&empty), DEFAULT_SUMMARY);
    assert_eq!(row_score(&empty), None);
}

#[test]
fn generated_directory_rows_are_recognized() {
    let abstract_row = parse(r#"{"uri":"viking://resources/s/.abstract.md","level":0}"#);
    let overview_row = parse(r#"{"uri":"viking://resources/s/.overview.md"}"#);
    let file_row = parse(r#"{"uri":"viking://resources/s/a.json","level":2}"#);
    assert!(is_generated_row(abstract_row.as_object().unwrap()));
    assert!(is_generated_row(overview_row.as_object().unwrap()));
    assert!(!is_generated_row(file_row.as_object().unwrap()));
}

// --- content ---------------------------------------------------------------------------

#[test]
fn content_prefers_content_then_text_then_nested_result_and_data() {
    assert_eq!(content(&parse("\"raw\"")), "raw");
    assert_eq!(content(&parse(r#"{"content":"","text":"t"}"#)), "");
    assert_eq!(content(&parse(r#"{"content":1,"text":"t"}"#)), "t");
    assert_eq!(
        content(&parse(r#"{"ok":true,"result":"body\n"}"#)),
        "body\n"
    );
    assert_eq!(
        content(&parse(r#"{"result":{"content":""},"data":{"text":"d"}}"#)),
        "d"
    );
    assert_eq!(content(&parse("[\"x\"]")), "");
}

// --- canonical matching ----------------------------------------------------------------

#[test]
fn canonical_text_unifies_crlf_and_drops_one_trailing_newline() {
    assert_eq!(canonical_text("a\r\nb\n\n"), "a\nb\n");
    assert_eq!(canonical_text("a"), "a");
}

#[test]
fn canonical_lines_split_like_python_and_drop_blank_lines() {
    assert_eq!(
        canonical_lines("a  \r\n\n b\u{2028}c\rd\u{0b}  \t\n"),
        ["a", " b", "c", "d"]
    );
}

#[test]
fn matches_accepts_equal_canonical_text_only_for_short_payloads() {
    assert!(matches("{\"a\":1}\n", "{\"a\":1}"));
    assert!(matches("{\"a\":1}\r\n", "{\"a\":1}\n"));
    assert!(!matches("{\"a\":2}", "{\"a\":1}"));
}

#[test]
fn matches_accepts_a_long_chunk_of_source_lines() {
    let source: String = (0..10)
        .map(|i| format!("line number {i} of the source\n"))
        .collect();
    let chunk: String = (2..6)
        .map(|i| format!("line number {i} of the source\n"))
        .collect();
    assert!(chunk.len() >= 80);
    assert!(matches(&chunk, &source));
    let foreign = format!("{chunk}a foreign line\n");
    assert!(!matches(&foreign, &source));
    assert!(!matches(
        "line number 1 of the source\nline number 2 of the source\n",
        &source
    ));
}

#[test]
fn covers_requires_every_chunk_to_match_and_most_source_lines() {
    let source: String = (0..10)
        .map(|i| format!("line number {i} of the source\n"))
        .collect();
    let first: String = (0..5)
        .map(|i| format!("line number {i} of the source\n"))
        .collect();
    let second: String = (5..10)
        .map(|i| format!("line number {i} of the source\n"))
        .collect();
    assert!(covers(&[first.clone(), second], &source));
    assert!(!covers(std::slice::from_ref(&first), &source));
    assert!(!covers(&[], &source));
}

#[test]
fn uri_helpers_split_the_last_segment() {
    assert_eq!(last_segment("viking://resources/a/b.json/"), "b.json");
    assert_eq!(
        parent_ref("viking://resources/a/b.json/"),
        "viking://resources/a"
    );
}

// --- construction ----------------------------------------------------------------------

#[test]
fn builder_defaults_to_ov_and_the_minimum_version() {
    let provider = OpenVikingProvider::from_builder_input(&Map::new()).unwrap();
    assert_eq!(provider.executable(), "ov");
    assert_eq!(provider.minimum_version, DEFAULT_MINIMUM_VERSION);
    assert_eq!(provider.actor_peer_id(), None);
}

#[test]
fn builder_rejects_an_actor_peer_id_with_a_slash() {
    let config = parse(r#"{"provider":"openviking","actor_peer_id":" team/peer "}"#);
    let err = OpenVikingProvider::from_builder_input(config.as_object().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "actor_peer_id must be a compact public-safe token"
    );
    let ok = parse(r#"{"actor_peer_id":"  peer:1  ","provider_binary":"/opt/ov"}"#);
    let provider = OpenVikingProvider::from_builder_input(ok.as_object().unwrap()).unwrap();
    assert_eq!(provider.actor_peer_id(), Some("peer:1"));
    assert_eq!(provider.executable(), "/opt/ov");
}

// --- process logic with a fake `ov` ----------------------------------------------------

#[cfg(unix)]
mod fake {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::PathBuf;

    /// A scripted stand-in for `ov`: stores resources as files under `store/`, logs every
    /// argv line to `calls.log`, and changes behaviour through marker files.
    const SCRIPT: &str = include_str!("../../../fixtures/provider/openviking/fake-ov.sh");

    pub struct FakeOv {
        pub dir: PathBuf,
    }

    impl FakeOv {
        pub fn new(name: &str, version: &str) -> FakeOv {
            let dir = std::env::temp_dir().join(format!(
                "reward-memory-fake-ov-{}-{name}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("store")).unwrap();
            std::fs::create_dir_all(dir.join("src")).unwrap();
            std::fs::write(dir.join("version"), version).unwrap();
            let script = dir.join("ov");
            std::fs::write(&script, SCRIPT.replace("@DIR@", dir.to_str().unwrap())).unwrap();
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            FakeOv { dir }
        }

        pub fn provider(&self, peer: Option<&str>) -> OpenVikingProvider {
            OpenVikingProvider::new(self.dir.join("ov").to_str().unwrap(), "0.4.9", peer).unwrap()
        }

        pub fn mark(&self, marker: &str) {
            std::fs::write(self.dir.join(marker), "").unwrap();
        }

        pub fn source(&self, name: &str, text: &str) -> PathBuf {
            let path = self.dir.join("src").join(name);
            std::fs::write(&path, text).unwrap();
            path
        }

        pub fn stored(&self, relative: &str) -> Option<String> {
            std::fs::read_to_string(self.dir.join("store/resources").join(relative)).ok()
        }

        pub fn store(&self, relative: &str, text: &str) {
            let path = self.dir.join("store/resources").join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }

        /// The logged argv lines with the fake's directory replaced by `@`.
        pub fn calls(&self) -> Vec<String> {
            let log = std::fs::read_to_string(self.dir.join("calls.log")).unwrap_or_default();
            let dir = self.dir.to_str().unwrap();
            log.lines().map(|line| line.replace(dir, "@")).collect()
        }

        pub fn clear_calls(&self) {
            let _ = std::fs::remove_file(self.dir.join("calls.log"));
        }
    }

    impl Drop for FakeOv {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    pub fn sync_request(source: PathBuf, target: &str, execute: bool) -> SyncRequest {
        SyncRequest {
            namespace: "reward_memory".into(),
            resources: vec![SyncResource {
                source: SyncSource::File(source),
                target_ref: target.into(),
                search_text: None,
            }],
            timeout_seconds: 30.0,
            observed_at: "2026-07-16T00:30:00+00:00".into(),
            execute,
        }
    }

    pub fn retrieve_request(scope: &str) -> RetrieveRequest {
        RetrieveRequest {
            namespace: "reward_memory".into(),
            scope_ref: scope.into(),
            query: "candidate:abc keep changes focused".into(),
            query_summary: "Verify the ingested record.".into(),
            max_results: 3,
            cap: ResultCap::Reference,
            timeout_seconds: 30.0,
            observed_at: "2026-07-16T00:30:00+00:00".into(),
        }
    }
}

#[cfg(unix)]
use fake::{FakeOv, retrieve_request, sync_request};

#[cfg(unix)]
const TARGET: &str = "viking://resources/rm/scope/record-1.json";
#[cfg(unix)]
const RECORD: &str = "{\"candidate_ref\":\"candidate:abc\",\"content_summary\":\"Keep it.\"}\n";

#[cfg(unix)]
#[test]
fn exact_protocol_writes_exact_bytes_once_and_dedupes_the_second_sync() {
    let ov = FakeOv::new("exact", "openviking 0.5.2\n");
    ov.mark("no-timeout-flag");
    let provider = ov.provider(None);
    let request = sync_request(ov.source("record-1.json", RECORD), TARGET, true);

    let first = provider.sync(&request);
    assert_eq!(first.status, "completed", "{first:?}");
    assert_eq!(first.reason_code, None);
    assert_eq!(first.write_count, 1);
    assert_eq!(first.completed_count, 1);
    assert_eq!(first.result_refs, [TARGET]);
    assert_eq!(first.provider_version.as_deref(), Some("openviking 0.5.2"));
    assert_eq!(first.retry_disposition, "no_retry");
    assert_eq!(ov.stored("rm/scope/record-1.json").as_deref(), Some(RECORD));
    assert_eq!(
        ov.calls(),
        [
            "--version",
            "status -o json -c true",
            &format!("read {TARGET} -o json -c true"),
            &format!("tree {TARGET} -L 3 -o json -c true"),
            "ls viking://resources/rm/scope -n 1 -o json -c true",
            "mkdir viking://resources/rm/scope -o json -c true",
            &format!(
                "write {TARGET} --from-file @/src/record-1.json --mode create --wait -o json -c true"
            ),
        ]
    );

    ov.clear_calls();
    let second = provider.sync(&request);
    assert_eq!(second.status, "completed");
    assert_eq!(second.write_count, 0);
    assert_eq!(second.result_refs, [TARGET]);
    assert_eq!(
        ov.calls(),
        [
            "--version",
            "status -o json -c true",
            &format!("read {TARGET} -o json -c true"),
        ]
    );
}

#[cfg(unix)]
#[test]
fn byte_sources_are_staged_privately_under_the_staging_root_then_removed() {
    let ov = FakeOv::new("staged", "openviking 0.5.2\n");
    ov.mark("no-timeout-flag");
    let staging = ov.dir.join("staging");
    // Left by a killed run: its pid is above any pid_max, so its owner is gone.
    let stale = staging.join("stage-4294967295-x");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("record-1.json"), RECORD).unwrap();
    let provider = ov.provider(None).with_staging_root(staging.clone());
    let mut request = sync_request(PathBuf::new(), TARGET, true);
    request.resources[0].source = SyncSource::Bytes(RECORD.as_bytes().to_vec());
    let sync = provider.sync(&request);
    assert_eq!((sync.status.as_str(), sync.write_count), ("completed", 1));
    assert_eq!(ov.stored("rm/scope/record-1.json").as_deref(), Some(RECORD));
    let write_call = ov.calls().pop().unwrap();
    let prefix = format!(
        "write {TARGET} --from-file @/staging/stage-{}-",
        std::process::id()
    );
    assert!(write_call.starts_with(&prefix), "{write_call}");
    assert!(
        write_call.contains("/record-1.json --mode create"),
        "{write_call}"
    );
    // The file and its directory were private while `ov` read them (file, then dir).
    assert_eq!(
        std::fs::read_to_string(ov.dir.join("source.modes")).unwrap(),
        "600 700 "
    );
    assert_eq!(
        std::fs::read_dir(&staging).unwrap().count(),
        0,
        "neither the stale nor this run's staging directory is left"
    );
}

#[cfg(unix)]
#[test]
fn byte_sources_without_a_staging_root_are_refused() {
    let ov = FakeOv::new("unstaged", "openviking 0.5.2\n");
    let mut request = sync_request(PathBuf::new(), TARGET, true);
    request.resources[0].source = SyncSource::Bytes(RECORD.as_bytes().to_vec());
    assert_eq!(
        ov.provider(None).checked_sync(&request),
        Err(OpenVikingError::Request(
            "every sync source must be an existing file"
        ))
    );
    assert!(ov.calls().is_empty());
}

#[cfg(unix)]
#[test]
fn an_existing_target_with_other_content_is_a_conflict_and_is_not_overwritten() {
    let ov = FakeOv::new("conflict", "openviking 0.5.2");
    ov.store("rm/scope/record-1.json", "{\"other\":true}\n");
    let provider = ov.provider(None);
    let sync = provider.sync(&sync_request(
        ov.source("record-1.json", RECORD),
        TARGET,
        true,
    ));
    assert_eq!(sync.status, "partial");
    assert_eq!(
        sync.reason_code.as_deref(),
        Some("provider_sync_revision_conflict")
    );
    assert_eq!(sync.write_count, 0);
    assert_eq!(sync.retry_disposition, "no_retry");
    assert_eq!(
        ov.stored("rm/scope/record-1.json").as_deref(),
        Some("{\"other\":true}\n")
    );
}

#[cfg(unix)]
#[test]
fn legacy_protocol_uses_add_resource_and_verifies_the_split_tree_later() {
    let ov = FakeOv::new("legacy", "ov 0.4.9");
    let provider = ov.provider(None);
    let request = sync_request(ov.source("record-1.json", RECORD), TARGET, true);
    let first = provider.sync(&request);
    assert_eq!(first.status, "completed", "{first:?}");
    assert_eq!(first.write_count, 1);
    let write_call = ov.calls().pop().unwrap();
    assert!(
        write_call.starts_with(&format!(
            "add-resource @/src/record-1.json --to {TARGET} --wait --timeout "
        )),
        "{write_call}"
    );
    // add-resource made a directory holding record-1.md; the re-sync finds it via tree.
    assert_eq!(
        ov.stored("rm/scope/record-1.json/record-1.md").as_deref(),
        Some(RECORD)
    );
    ov.clear_calls();
    let second = provider.sync(&request);
    assert_eq!(second.status, "completed");
    assert_eq!(second.write_count, 0);
    assert_eq!(ov.calls().len(), 5, "{:?}", ov.calls());
}

#[cfg(unix)]
#[test]
fn a_failed_write_with_nothing_stored_is_safe_to_retry() {
    let ov = FakeOv::new("write-fails", "openviking 0.5.2");
    ov.mark("write.fail");
    let provider = ov.provider(None);
    let sync = provider.sync(&sync_request(
        ov.source("record-1.json", RECORD),
        TARGET,
        true,
    ));
    assert_eq!(sync.status, "partial");
    assert_eq!(
        sync.reason_code.as_deref(),
        Some("provider_sync_write_failed_absent")
    );
    assert_eq!(sync.retry_disposition, "safe_to_retry");
    assert!(sync.reconciliation_performed);
    assert_eq!(sync.write_count, 0);
}

#[cfg(unix)]
#[test]
fn an_unexecuted_sync_is_planned_without_running_ov() {
    let ov = FakeOv::new("planned", "openviking 0.5.2");
    let sync = ov.provider(None).sync(&sync_request(
        ov.source("record-1.json", RECORD),
        TARGET,
        false,
    ));
    assert_eq!(sync.status, "planned");
    assert_eq!(
        sync.reason_code.as_deref(),
        Some("execute_required_for_resource_write")
    );
    assert_eq!(sync.retry_disposition, "execute_required");
    assert!(ov.calls().is_empty());
}

#[cfg(unix)]
#[test]
fn preflight_blockers_make_the_sync_unavailable() {
    for (version, marker, reason) in [
        ("ov 0.4.8", None, "provider_version_incompatible"),
        ("dev-build", None, "provider_version_unparseable"),
        (
            "openviking 0.5.2",
            Some("status.fail"),
            "provider_service_unavailable",
        ),
    ] {
        let ov = FakeOv::new(reason, version);
        if let Some(marker) = marker {
            ov.mark(marker);
        }
        let sync = ov.provider(None).sync(&sync_request(
            ov.source("record-1.json", RECORD),
            TARGET,
            true,
        ));
        assert_eq!(sync.status, "unavailable");
        assert_eq!(sync.reason_code.as_deref(), Some(reason));
        assert_eq!(sync.retry_disposition, "no_retry");
        assert_eq!(sync.requested_count, 1);
    }
}

#[cfg(unix)]
#[test]
fn a_missing_executable_is_provider_cli_unavailable() {
    let ov = FakeOv::new("missing", "x");
    let provider =
        OpenVikingProvider::new(ov.dir.join("no-such-ov").to_str().unwrap(), "0.4.9", None)
            .unwrap();
    let sync = provider.sync(&sync_request(
        ov.source("record-1.json", RECORD),
        TARGET,
        true,
    ));
    assert_eq!(sync.status, "unavailable");
    assert_eq!(
        sync.reason_code.as_deref(),
        Some("provider_cli_unavailable")
    );
    assert_eq!(sync.provider_version, None);
}

#[cfg(unix)]
#[test]
fn an_empty_version_is_an_execution_failure() {
    let ov = FakeOv::new("empty-version", "");
    let provider = ov.provider(None);
    let request = sync_request(ov.source("record-1.json", RECORD), TARGET, true);
    assert_eq!(
        provider.checked_sync(&request).unwrap_err(),
        OpenVikingError::UnusableVersion
    );
    assert_eq!(
        provider.sync(&request).reason_code.as_deref(),
        Some(SYNC_EXECUTION_FAILED)
    );
}

#[cfg(unix)]
#[test]
fn sync_argument_checks_are_refusals() {
    let ov = FakeOv::new("arguments", "openviking 0.5.2");
    let provider = ov.provider(None);
    let source = ov.source("record-1.json", RECORD);
    let cases = [
        (
            sync_request(source.clone(), "viking://user/x/record-1.json", true),
            "sync targets must stay under viking://resources/",
        ),
        (
            sync_request(source.clone(), "viking://resources/x/other.json", true),
            "sync target basename must match source basename",
        ),
        (
            sync_request(ov.dir.join("absent.json"), TARGET, true),
            "every sync source must be an existing file",
        ),
    ];
    for (request, message) in cases {
        assert_eq!(
            provider.checked_sync(&request).unwrap_err().to_string(),
            message
        );
    }
    assert!(ov.calls().is_empty());
}

#[cfg(unix)]
#[test]
fn retrieve_reads_each_scoped_file_hit_and_skips_generated_rows() {
    let ov = FakeOv::new("retrieve", "openviking 0.5.2");
    ov.store("rm/scope/record-1.json", RECORD);
    let provider = ov.provider(Some("peer-1"));
    let retrieval = provider.retrieve(&retrieve_request("viking://resources/rm/scope"));
    assert_eq!(retrieval.status, "completed", "{retrieval:?}");
    assert!(retrieval.search_performed && retrieval.read_performed);
    assert_eq!(retrieval.reason_code, None);
    assert_eq!(retrieval.requested_limit, 3);
    assert_eq!(retrieval.items.len(), 1);
    let item = &retrieval.items[0];
    assert_eq!(item.resource_ref, TARGET);
    assert_eq!(item.content, RECORD);
    assert_eq!(item.summary, "hit");
    assert_eq!(item.score, Some(0.5));
    assert_eq!(
        ov.calls(),
        [
            "--version",
            "status -o json -c true",
            "--actor-peer-id peer-1 search candidate:abc keep changes focused -u viking://resources/rm/scope -n 3 -L 2 -o json -c true",
            &format!("--actor-peer-id peer-1 read {TARGET} -o json -c true"),
        ]
    );
}

/// A plain retrieve asks the server for at most the reference's 6 hits; a rank-prior
/// pool asks for its count and reads each hit back.
#[cfg(unix)]
#[test]
fn a_pool_retrieve_asks_the_server_for_the_pool_and_a_plain_one_for_six() {
    let ov = FakeOv::new("retrieve-pool", "openviking 0.5.2");
    for i in 0..10 {
        ov.store(&format!("rm/scope/record-{i:02}.json"), RECORD);
    }
    let provider = ov.provider(None);
    let mut request = retrieve_request("viking://resources/rm/scope");
    request.max_results = 10;
    let plain = provider.retrieve(&request);
    assert_eq!(plain.status, "completed", "{plain:?}");
    assert_eq!((plain.requested_limit, plain.items.len()), (6, 6));
    assert!(ov.calls()[2].contains(" -n 6 "), "{:?}", ov.calls());
    ov.clear_calls();
    request.cap = ResultCap::Pool;
    let pool = provider.retrieve(&request);
    assert_eq!(pool.status, "completed", "{pool:?}");
    assert_eq!((pool.requested_limit, pool.items.len()), (10, 10));
    let calls = ov.calls();
    assert!(calls[2].contains(" -n 10 "), "{calls:?}");
    assert_eq!(calls.iter().filter(|c| c.starts_with("read ")).count(), 10);
    assert_eq!(pool.items[..6], plain.items[..]);
}

#[cfg(unix)]
#[test]
fn retrieve_with_only_unreadable_hits_reports_unusable_reads() {
    let ov = FakeOv::new("retrieve-legacy", "openviking 0.5.0");
    let retrieval = ov
        .provider(None)
        .retrieve(&retrieve_request("viking://resources/rm/scope"));
    // Legacy protocol: the generated row is read (and fails), as the reference does.
    assert_eq!(retrieval.status, "completed");
    assert!(retrieval.read_performed);
    assert!(retrieval.items.is_empty());
    assert_eq!(
        retrieval.reason_code.as_deref(),
        Some("provider_reads_unusable")
    );
    assert!(!ov.calls()[2].contains("-L 2"));
}

#[cfg(unix)]
#[test]
fn retrieve_refuses_a_non_viking_scope() {
    let ov = FakeOv::new("retrieve-scope", "openviking 0.5.2");
    let provider = ov.provider(None);
    let request = retrieve_request("https://example.com/x");
    assert_eq!(
        provider.checked_retrieve(&request).unwrap_err().to_string(),
        "OpenViking scope_ref must use viking://"
    );
    let retrieval = provider.retrieve(&request);
    assert_eq!(retrieval.status, "unavailable");
    assert_eq!(
        retrieval.reason_code.as_deref(),
        Some(RETRIEVE_EXECUTION_FAILED)
    );
}

#[cfg(unix)]
#[test]
fn a_slow_search_is_killed_at_the_timeout() {
    let ov = FakeOv::new("timeout", "openviking 0.5.2");
    ov.mark("search.sleep");
    let mut request = retrieve_request("viking://resources/rm/scope");
    request.timeout_seconds = 0.2;
    let started = Instant::now();
    let retrieval = ov.provider(None).retrieve(&request);
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(retrieval.status, "unavailable");
    assert_eq!(
        retrieval.reason_code.as_deref(),
        Some("provider_search_timeout")
    );
    assert!(!retrieval.search_performed);
}

#[test]
fn the_factory_builds_the_openviking_adapter_and_reports_a_bad_peer_id() {
    use crate::provider::{DefaultFactory, ProviderConfig, ProviderFactory as _};
    let factory = DefaultFactory::at(Path::new("/nonexistent-runtime-root"));
    let config = ProviderConfig {
        provider: "openviking".into(),
        provider_binary: Some("/opt/ov".into()),
        ..ProviderConfig::default()
    };
    let provider = factory.build(&config).unwrap();
    assert_eq!(provider.provider_id(), "openviking");
    let bad = ProviderConfig {
        actor_peer_id: Some("team#peer".into()),
        ..config
    };
    let err = factory.build(&bad).err().unwrap();
    assert_eq!(
        err.to_string(),
        "actor_peer_id must be a compact public-safe token"
    );
}

#[test]
fn the_response_snapshot_covers_what_was_read_and_a_reported_policy_id() {
    let item = |uri: &str, content: &str, score: f64| RetrievedItem {
        resource_ref: uri.to_owned(),
        summary: String::new(),
        content: content.to_owned(),
        score: Some(score),
    };
    let a = item("viking://r/a", "alpha", 0.9);
    let b = item("viking://r/b", "beta", 0.5);
    let base = response_snapshot(&[a.clone(), b.clone()], None);
    assert_eq!(base.len(), 64);
    let rescored = [item("viking://r/a", "alpha", 0.1), b.clone()];
    assert_eq!(
        response_snapshot(&rescored, None),
        base,
        "scores are not content"
    );
    assert_ne!(response_snapshot(&[b.clone(), a.clone()], None), base);
    assert_ne!(response_snapshot(std::slice::from_ref(&a), None), base);
    assert_ne!(
        response_snapshot(&[item("viking://r/a", "alpha!", 0.9), b.clone()], None),
        base
    );
    assert_ne!(response_snapshot(&[a, b], Some("policy-7")), base);
    // OpenViking 0.5.2's answer has no policy_snapshot_id; one at the top or in
    // `result` is read.
    let answer = |text: &str| crate::wire::json::parse(text).expect("JSON");
    assert_eq!(
        reported_policy_snapshot_id(&answer(r#"{"result": {"resources": [], "total": 0}}"#)),
        None
    );
    assert_eq!(
        reported_policy_snapshot_id(&answer(r#"{"result": {"policy_snapshot_id": "p1"}}"#)),
        Some("p1")
    );
    assert_eq!(
        reported_policy_snapshot_id(&answer(r#"{"policy_snapshot_id": "p2"}"#)),
        Some("p2")
    );
}
