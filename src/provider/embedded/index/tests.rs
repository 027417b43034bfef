//! Unit tests of the store's index: what is indexed, the tokenizer choice, and the
//! migration of a v1 store (generated here with the v1 schema and v1 statements).

use super::super::*;
use super::*;
use crate::provider::{ResultCap, SyncResource};
use rusqlite::Connection;

const NAMESPACE: &str = "reward_memory";

/// The v1 schema, exactly as stores of schema v1 were created.
const V1_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO store_meta (key, value) VALUES ('schema_version', 'reward_memory_embedded_store_v1');
CREATE TABLE IF NOT EXISTS resources (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    resource_ref TEXT NOT NULL,
    content BLOB NOT NULL,
    content_sha256 TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    UNIQUE (namespace, resource_ref)
);
CREATE VIRTUAL TABLE IF NOT EXISTS resources_fts USING fts5(body, tokenize = 'unicode61');
";

/// An active-record-like line: a distinct summary inside ~1 KB of envelope.
fn record(i: usize) -> String {
    format!(
        "{{\"activation_ref\":\"activation:{i:020}\",\"content_summary\":\"Memory {i}: validate material effects before review, topic{i}.\",\"envelope\":\"{}\",\"schema_version\":\"reward_memory_active_record_v0\"}}\n",
        "boilerplate ".repeat(80)
    )
}

fn target(i: usize) -> String {
    format!("embedded://rm/c/record-{i}.json")
}

/// A v1 store of `n` records written as v1 wrote them: the whole record as index body.
fn v1_store(path: &Path, n: usize) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    let conn = Connection::open(path).expect("create v1 store");
    conn.execute_batch(V1_SCHEMA).expect("v1 schema");
    for i in 0..n {
        let bytes = record(i).into_bytes();
        conn.execute(
            "INSERT INTO resources (namespace, resource_ref, content, content_sha256, observed_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                NAMESPACE,
                target(i),
                bytes,
                hex::encode(sha2_digest(&bytes)),
                "2026-07-16T00:30:00+00:00"
            ],
        )
        .expect("v1 row");
        conn.execute(
            "INSERT INTO resources_fts (rowid, body) VALUES (?1, ?2)",
            params![conn.last_insert_rowid(), String::from_utf8_lossy(&bytes)],
        )
        .expect("v1 index row");
    }
}

fn sync_request(bytes: &str, target: &str, search_text: Option<&str>) -> SyncRequest {
    SyncRequest {
        namespace: NAMESPACE.to_owned(),
        resources: vec![SyncResource {
            source: SyncSource::Bytes(bytes.as_bytes().to_vec()),
            target_ref: target.to_owned(),
            search_text: search_text.map(str::to_owned),
        }],
        timeout_seconds: 5.0,
        observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
        execute: true,
    }
}

fn search(store: &EmbeddedStore, query: &str) -> Vec<String> {
    let retrieval = store
        .try_retrieve(&RetrieveRequest {
            namespace: NAMESPACE.to_owned(),
            scope_ref: "embedded://rm/c".to_owned(),
            query: query.to_owned(),
            query_summary: "test".to_owned(),
            max_results: 8,
            cap: ResultCap::Reference,
            timeout_seconds: 5.0,
            observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
        })
        .expect("valid request");
    assert_eq!(retrieval.status, "completed");
    retrieval
        .items
        .into_iter()
        .map(|item| item.resource_ref)
        .collect()
}

fn meta(path: &Path, key: &str) -> Option<String> {
    Connection::open(path)
        .expect("open")
        .query_row(
            "SELECT value FROM store_meta WHERE key = ?1",
            params![key],
            |r| r.get(0),
        )
        .optional()
        .expect("meta")
}

#[test]
fn a_new_store_indexes_the_summary_not_the_envelope_and_stems_english() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::new(dir.path().join("s.sqlite3"));
    let sync = store
        .try_sync(&sync_request(&record(1), &target(1), None))
        .expect("valid");
    assert_eq!(sync.status, "completed");
    assert_eq!(search(&store, "topic1"), [target(1)]);
    assert!(search(&store, "boilerplate envelope activation").is_empty());
    assert_eq!(
        meta(store.path(), "schema_version").as_deref(),
        Some(STORE_SCHEMA_VERSION)
    );
    // A binding that names no tokenizer: a new store stems (`porter`).
    assert_eq!(meta(store.path(), "tokenizer").as_deref(), Some("porter"));
    assert_eq!(search(&store, "validated reviews"), [target(1)]);
}

#[test]
fn a_search_text_given_by_the_writer_is_indexed_and_the_record_read_back_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::new(dir.path().join("s.sqlite3"));
    let whole = "Memory 7: validate material effects before review, topic7. And a tail past the cut: zanzibar.";
    store
        .try_sync(&sync_request(&record(7), &target(7), Some(whole)))
        .expect("valid");
    assert_eq!(search(&store, "zanzibar"), [target(7)]);
    let stored = store
        .read(NAMESPACE, &target(7))
        .expect("read")
        .expect("stored");
    assert_eq!(stored.content, record(7).into_bytes());
}

#[test]
fn the_porter_tokenizer_is_recorded_and_matches_stems() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = EmbeddedStore::new(dir.path().join("plain.sqlite3"))
        .with_tokenizer(Some(Tokenizer::Unicode61));
    let porter = EmbeddedStore::new(dir.path().join("porter.sqlite3"))
        .with_tokenizer(Some(Tokenizer::Porter));
    for store in [&plain, &porter] {
        store
            .try_sync(&sync_request(&record(2), &target(2), None))
            .expect("valid");
    }
    assert!(search(&plain, "validating effect").is_empty());
    assert_eq!(search(&porter, "validating effect"), [target(2)]);
    assert_eq!(meta(porter.path(), "tokenizer").as_deref(), Some("porter"));
    assert_eq!(
        meta(plain.path(), "tokenizer").as_deref(),
        Some("unicode61")
    );
    // A binding that names no tokenizer keeps the store's, whichever it is.
    for store in [&plain, &porter] {
        let unnamed = EmbeddedStore::new(store.path().to_path_buf());
        unnamed
            .try_sync(&sync_request(&record(3), &target(3), None))
            .expect("valid");
    }
    assert_eq!(meta(porter.path(), "tokenizer").as_deref(), Some("porter"));
    assert_eq!(
        meta(plain.path(), "tokenizer").as_deref(),
        Some("unicode61")
    );
    assert!(search(&plain, "validating effect").is_empty());
}

#[test]
fn naming_another_tokenizer_rebuilds_the_index_and_keeps_each_search_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.sqlite3");
    let store = EmbeddedStore::new(path.clone());
    store
        .try_sync(&sync_request(
            &record(4),
            &target(4),
            Some("whole text, zanzibars"),
        ))
        .expect("valid");
    let porter = EmbeddedStore::new(path.clone()).with_tokenizer(Some(Tokenizer::Porter));
    porter
        .try_sync(&sync_request(&record(5), &target(5), None))
        .expect("valid");
    assert_eq!(meta(&path, "tokenizer").as_deref(), Some("porter"));
    assert_eq!(search(&porter, "zanzibar"), [target(4)]);
    assert_eq!(search(&porter, "topic5"), [target(5)]);
    assert_eq!(
        store
            .read(NAMESPACE, &target(4))
            .expect("read")
            .map(|r| r.content),
        Some(record(4).into_bytes())
    );
}

#[test]
fn a_v1_store_migrates_on_its_next_write_and_keeps_every_record_byte_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v1/embedded.sqlite3");
    v1_store(&path, 30);
    let store = EmbeddedStore::new(path.clone());
    let before: Vec<StoredResource> = (0..30)
        .map(|i| {
            store
                .read(NAMESPACE, &target(i))
                .expect("read")
                .expect("stored")
        })
        .collect();
    // A v1 store is still searched (its index holds whole records) before it migrates.
    assert_eq!(search(&store, "topic3"), [target(3)]);
    assert_eq!(
        meta(&path, "schema_version").as_deref(),
        Some(index::STORE_SCHEMA_V1)
    );

    let sync = store
        .try_sync(&sync_request(&record(30), &target(30), None))
        .expect("valid");
    assert_eq!((sync.status.as_str(), sync.write_count), ("completed", 1));
    assert_eq!(
        meta(&path, "schema_version").as_deref(),
        Some(STORE_SCHEMA_VERSION)
    );
    assert_eq!(meta(&path, "tokenizer").as_deref(), Some("unicode61"));
    for (i, old) in before.iter().enumerate() {
        let now = store
            .read(NAMESPACE, &target(i))
            .expect("read")
            .expect("kept");
        assert_eq!(&now, old, "record {i} is byte-identical");
        assert_eq!(hex::encode(sha2_digest(&now.content)), old.content_sha256);
    }
    let conn = Connection::open(&path).expect("open");
    let (rows, summaries): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM resources_fts),
                    (SELECT count(*) FROM resources r JOIN resources_fts f ON f.rowid = r.id
                     WHERE f.body = json_extract(CAST(r.content AS TEXT), '$.content_summary'))",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("index rows");
    assert_eq!((rows, summaries), (31, 31), "one summary row per record");
    assert_eq!(search(&store, "topic3"), [target(3)]);
    assert_eq!(search(&store, "topic30"), [target(30)]);
    assert!(search(&store, "boilerplate").is_empty());
}

#[test]
fn search_text_is_the_summary_of_a_record_and_the_text_of_anything_else() {
    assert_eq!(
        search_text(b"{\"a\":1,\"content_summary\":\"Keep it small.\"}\n"),
        "Keep it small."
    );
    assert_eq!(search_text(b"plain words"), "plain words");
    assert_eq!(
        search_text(b"{\"content_summary\":5}"),
        "{\"content_summary\":5}"
    );
}

#[test]
fn tokenizer_names_round_trip() {
    for tokenizer in Tokenizer::ALL {
        assert_eq!(Tokenizer::from_name(tokenizer.name()), Some(tokenizer));
    }
    assert_eq!(Tokenizer::from_name("trigram"), None);
}
