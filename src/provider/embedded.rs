//! The embedded memory provider: a local SQLite store (FTS5 full-text search), the default
//! on a machine without a memory server.
//!
//! Owns the store's file format, its transactions and its `embedded://` scope scheme; it
//! must not interpret records (that is the recall seam's job). Layout: one table
//! `resources` keyed by `(namespace, resource_ref)` holding the **exact bytes** written,
//! their SHA-256 and the first `observed_at`, and an FTS5 table `resources_fts` (rowid =
//! `resources.id`) over the text for recall. The database runs in WAL mode with
//! `synchronous=FULL`, and one sync is one `BEGIN IMMEDIATE` transaction: an acknowledged
//! write survives a crash and a record is never half written.
//!
//! Scope refs look like `embedded://<collection>/<...>`; a resource belongs to a scope when
//! its ref equals it or starts with it plus `/`. Re-syncing identical bytes (up to the
//! transport newline, see [`crate::wire::digest::canonical_text`]) is a no-op; different bytes
//! at an existing ref are refused with `provider_sync_revision_conflict`, never
//! overwritten.
//!
//! Location: the binding's `provider_binary` when set (a file path, `~` expanded), else
//! [`default_store_path`] = `<runtime_root>/reward-memory/embedded.sqlite3`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, TransactionBehavior, params};

use crate::wire::digest::canonical_text;
use crate::wire::json::Value;
use crate::wire::text::public_safe_text;

use super::{
    ContextProvider, ProviderError, Retrieval, RetrieveRequest, RetrievedItem, Sync, SyncRequest,
};

/// The `provider_id` that selects this store.
pub const PROVIDER_ID: &str = "embedded";
/// Scheme every scope and target ref of this store starts with.
pub const SCOPE_SCHEME: &str = "embedded://";
/// Schema marker kept in the `store_meta` table.
pub const STORE_SCHEMA_VERSION: &str = "reward_memory_embedded_store_v1";

use super::{DEFAULT_SUMMARY, MAX_SYNC_RESOURCES};
const MAX_RESULTS: usize = 8;

const SCHEMA: &str = "
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

/// `<runtime_root>/reward-memory/embedded.sqlite3`.
pub fn default_store_path(runtime_root: &Path) -> PathBuf {
    runtime_root.join("reward-memory").join("embedded.sqlite3")
}

/// The embedded SQLite store at one file path. Opening is lazy: each call opens its own
/// connection, so a store that cannot be opened is a status, not a construction error.
#[derive(Debug, Clone)]
pub struct EmbeddedStore {
    path: PathBuf,
}

/// A usable busy timeout from a caller's seconds (non-finite values fall back to 30 s).
fn busy_timeout(seconds: f64) -> Duration {
    let seconds = if seconds.is_finite() {
        seconds.clamp(1.0, 120.0)
    } else {
        30.0
    };
    Duration::from_secs_f64(seconds)
}

fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs `op` again while SQLite reports the database busy or locked, up to `timeout`.
fn retry_busy<T>(
    timeout: Duration,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let start = Instant::now();
    loop {
        match op() {
            Err(err) if is_busy(&err) && start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn in_scope(resource_ref: &str, scope_ref: &str) -> bool {
    let scope = scope_ref.trim_end_matches('/');
    resource_ref == scope_ref || resource_ref.starts_with(&format!("{scope}/"))
}

/// An FTS5 query matching any word of `query` (each word quoted, so no FTS syntax leaks).
pub fn fts_query(query: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if !word.is_empty() && !words.contains(&word) {
            words.push(word);
        }
    }
    (!words.is_empty()).then(|| {
        words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// One resource as stored (for operators and tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResource {
    pub namespace: String,
    pub resource_ref: String,
    pub content: Vec<u8>,
    pub content_sha256: String,
    pub observed_at: String,
}

impl EmbeddedStore {
    /// A store at `path` (created on the first executed sync).
    pub fn new(path: PathBuf) -> EmbeddedStore {
        EmbeddedStore { path }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn version() -> String {
        format!("sqlite {}", rusqlite::version())
    }

    fn open_for_write(&self, timeout: Duration) -> rusqlite::Result<Connection> {
        if let Some(parent) = self.path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        }
        // Several processes may create the store at once: switching to WAL and creating
        // the schema can meet a lock that the busy handler does not wait for, so retry
        // until the caller's timeout.
        retry_busy(timeout, || {
            let conn = Connection::open(&self.path)?;
            conn.busy_timeout(timeout)?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "FULL")?;
            conn.execute_batch(SCHEMA)?;
            Ok(conn)
        })
    }

    fn open_existing(&self, timeout: Duration) -> rusqlite::Result<Option<Connection>> {
        if !self.path.is_file() {
            return Ok(None);
        }
        retry_busy(timeout, || {
            let conn = Connection::open_with_flags(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            conn.busy_timeout(timeout)?;
            conn.execute_batch(SCHEMA)?;
            Ok(Some(conn))
        })
    }

    /// Reads one stored resource exactly (`None` when absent or the store does not exist).
    pub fn read(
        &self,
        namespace: &str,
        resource_ref: &str,
    ) -> rusqlite::Result<Option<StoredResource>> {
        let Some(conn) = self.open_existing(Duration::from_secs(5))? else {
            return Ok(None);
        };
        conn.query_row(
            "SELECT namespace, resource_ref, content, content_sha256, observed_at FROM resources
             WHERE namespace = ?1 AND resource_ref = ?2",
            params![namespace, resource_ref],
            |row| {
                Ok(StoredResource {
                    namespace: row.get(0)?,
                    resource_ref: row.get(1)?,
                    content: row.get(2)?,
                    content_sha256: row.get(3)?,
                    observed_at: row.get(4)?,
                })
            },
        )
        .optional()
    }

    /// Number of stored resources (for operators and tests).
    pub fn count(&self) -> rusqlite::Result<i64> {
        match self.open_existing(Duration::from_secs(5))? {
            None => Ok(0),
            Some(conn) => conn.query_row("SELECT count(*) FROM resources", [], |r| r.get(0)),
        }
    }

    fn check_sync(request: &SyncRequest) -> Result<String, ProviderError> {
        let namespace = public_safe_text(Some(&Value::from(&request.namespace)), 120);
        if request.resources.len() > MAX_SYNC_RESOURCES {
            return Err(ProviderError::Invalid(format!(
                "embedded sync supports at most {MAX_SYNC_RESOURCES} resources"
            )));
        }
        let namespace =
            namespace.ok_or_else(|| ProviderError::Invalid("namespace is required".to_owned()))?;
        if request.resources.is_empty() {
            return Err(ProviderError::Invalid(
                "at least one resource is required".to_owned(),
            ));
        }
        for resource in &request.resources {
            if !resource.local_source_path.is_file() {
                return Err(ProviderError::Invalid(
                    "every sync source must be an existing file".to_owned(),
                ));
            }
            if !resource.target_ref.starts_with(SCOPE_SCHEME) {
                return Err(ProviderError::Invalid(format!(
                    "sync targets must stay under {SCOPE_SCHEME}"
                )));
            }
        }
        Ok(namespace)
    }

    fn sync_checked(&self, request: &SyncRequest, namespace: &str) -> Sync {
        let start = Instant::now();
        let requested = request.resources.len();
        let mut outcome = Sync {
            provider: PROVIDER_ID.to_owned(),
            namespace: namespace.to_owned(),
            status: "unavailable".to_owned(),
            observed_at: request.observed_at.clone(),
            requested_count: requested,
            completed_count: 0,
            write_count: 0,
            reason_code: None,
            provider_version: Some(Self::version()),
            latency_ms: 0,
            result_refs: Vec::new(),
            pending_count: 0,
            reconciliation_performed: false,
            retry_disposition: "no_retry".to_owned(),
        };
        if !request.execute {
            return Sync::planned(PROVIDER_ID, namespace, &request.observed_at, requested);
        }
        let timeout = busy_timeout(request.timeout_seconds);
        let mut conn = match self.open_for_write(timeout) {
            Ok(conn) => conn,
            Err(_) => {
                outcome.reason_code = Some("provider_store_unavailable".to_owned());
                outcome.latency_ms = elapsed_ms(start);
                return outcome;
            }
        };
        let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(_) => {
                outcome.reason_code = Some("provider_store_busy".to_owned());
                outcome.retry_disposition = "safe_to_retry".to_owned();
                outcome.latency_ms = elapsed_ms(start);
                return outcome;
            }
        };
        let mut completed: Vec<String> = Vec::new();
        let mut writes = 0usize;
        let mut stop: Option<&str> = None;
        for resource in &request.resources {
            let Ok(bytes) = std::fs::read(&resource.local_source_path) else {
                stop = Some("provider_sync_source_read_failed");
                break;
            };
            let existing: rusqlite::Result<Option<Vec<u8>>> = tx
                .query_row(
                    "SELECT content FROM resources WHERE namespace = ?1 AND resource_ref = ?2",
                    params![namespace, resource.target_ref],
                    |row| row.get(0),
                )
                .optional();
            match existing {
                Err(_) => {
                    stop = Some("provider_sync_existing_read_failed");
                    break;
                }
                Ok(Some(stored)) => {
                    let same = canonical_text(&String::from_utf8_lossy(&stored))
                        == canonical_text(&String::from_utf8_lossy(&bytes));
                    if !same {
                        stop = Some("provider_sync_revision_conflict");
                        break;
                    }
                    completed.push(resource.target_ref.clone());
                }
                Ok(None) => {
                    let body = String::from_utf8_lossy(&bytes).into_owned();
                    let inserted = tx
                        .execute(
                            "INSERT INTO resources (namespace, resource_ref, content, content_sha256, observed_at)
                             VALUES (?1, ?2, ?3, ?4, ?5)",
                            params![namespace, resource.target_ref, bytes, hex::encode(sha2_digest(&bytes)), request.observed_at],
                        )
                        .and_then(|_| {
                            tx.execute(
                                "INSERT INTO resources_fts (rowid, body) VALUES (last_insert_rowid(), ?1)",
                                params![body],
                            )
                        });
                    if inserted.is_err() {
                        stop = Some("provider_sync_write_failed_absent");
                        break;
                    }
                    writes += 1;
                    completed.push(resource.target_ref.clone());
                }
            }
        }
        if tx.commit().is_err() {
            outcome.status = "partial".to_owned();
            outcome.reason_code = Some("provider_sync_write_failed_absent".to_owned());
            outcome.retry_disposition = "safe_to_retry".to_owned();
            outcome.latency_ms = elapsed_ms(start);
            return outcome;
        }
        outcome.completed_count = completed.len();
        outcome.write_count = writes;
        outcome.result_refs = completed;
        outcome.latency_ms = elapsed_ms(start);
        match stop {
            None => {
                outcome.status = "completed".to_owned();
            }
            Some(reason) => {
                outcome.status = "partial".to_owned();
                outcome.reason_code = Some(reason.to_owned());
                outcome.retry_disposition = if reason == "provider_sync_write_failed_absent" {
                    "safe_to_retry".to_owned()
                } else {
                    "no_retry".to_owned()
                };
            }
        }
        outcome
    }

    fn check_retrieve(
        request: &RetrieveRequest,
    ) -> Result<(String, String, String), ProviderError> {
        let text = |s: &str, limit: usize| public_safe_text(Some(&Value::from(s)), limit);
        let (Some(namespace), Some(query), Some(summary)) = (
            text(&request.namespace, 120),
            text(&request.query, 500),
            text(&request.query_summary, 220),
        ) else {
            return Err(ProviderError::Invalid(
                "namespace, query, and query_summary are required".to_owned(),
            ));
        };
        if !request.scope_ref.starts_with(SCOPE_SCHEME) {
            return Err(ProviderError::Invalid(format!(
                "embedded scope_ref must use {SCOPE_SCHEME}"
            )));
        }
        Ok((namespace, query, summary))
    }

    fn retrieve_checked(
        &self,
        request: &RetrieveRequest,
        namespace: &str,
        query: &str,
        summary: &str,
    ) -> Retrieval {
        let start = Instant::now();
        let limit = request.max_results.clamp(1, MAX_RESULTS);
        let mut retrieval = Retrieval {
            provider: PROVIDER_ID.to_owned(),
            namespace: namespace.to_owned(),
            status: "completed".to_owned(),
            query_summary: summary.to_owned(),
            observed_at: request.observed_at.clone(),
            search_performed: true,
            read_performed: false,
            items: Vec::new(),
            reason_code: None,
            provider_version: Some(Self::version()),
            latency_ms: 0,
            requested_limit: limit,
        };
        let timeout = busy_timeout(request.timeout_seconds);
        let conn = match self.open_existing(timeout) {
            Ok(Some(conn)) => conn,
            // A store that was never written holds nothing: an empty, successful search.
            Ok(None) => {
                retrieval.latency_ms = elapsed_ms(start);
                return retrieval;
            }
            Err(_) => {
                retrieval.status = "unavailable".to_owned();
                retrieval.search_performed = false;
                retrieval.reason_code = Some("provider_store_unavailable".to_owned());
                retrieval.latency_ms = elapsed_ms(start);
                return retrieval;
            }
        };
        let Some(fts) = fts_query(query) else {
            retrieval.latency_ms = elapsed_ms(start);
            return retrieval;
        };
        let scope = request.scope_ref.trim_end_matches('/');
        let prefix = format!("{scope}/");
        let rows = conn
            .prepare(
                "SELECT r.resource_ref, r.content, bm25(resources_fts) AS rank
                 FROM resources_fts JOIN resources r ON r.id = resources_fts.rowid
                 WHERE resources_fts MATCH ?1 AND r.namespace = ?2
                   AND (r.resource_ref = ?3 OR substr(r.resource_ref, 1, length(?4)) = ?4)
                 ORDER BY rank, r.id LIMIT ?5",
            )
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![
                        fts,
                        namespace,
                        request.scope_ref,
                        prefix,
                        i64::try_from(limit).unwrap_or(8)
                    ],
                    |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, Vec<u8>>(1)?,
                            row.get::<_, f64>(2)?,
                        ))
                    },
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            });
        let rows = match rows {
            Ok(rows) => rows,
            Err(_) => {
                retrieval.status = "unavailable".to_owned();
                retrieval.reason_code = Some("provider_search_failed".to_owned());
                retrieval.latency_ms = elapsed_ms(start);
                return retrieval;
            }
        };
        for (resource_ref, content, rank) in rows {
            if !in_scope(&resource_ref, &request.scope_ref) {
                continue;
            }
            retrieval.read_performed = true;
            let Ok(content) = String::from_utf8(content) else {
                continue;
            };
            if content.is_empty() {
                continue;
            }
            retrieval.items.push(RetrievedItem {
                resource_ref,
                summary: DEFAULT_SUMMARY.to_owned(),
                content,
                score: Some(-rank),
            });
        }
        if retrieval.read_performed && retrieval.items.is_empty() {
            retrieval.reason_code = Some("provider_reads_unusable".to_owned());
        }
        retrieval.latency_ms = elapsed_ms(start);
        retrieval
    }
}

fn sha2_digest(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).to_vec()
}

impl ContextProvider for EmbeddedStore {
    fn provider_id(&self) -> &str {
        PROVIDER_ID
    }

    fn retrieve(&self, request: &RetrieveRequest) -> Retrieval {
        match Self::check_retrieve(request) {
            Ok((namespace, query, summary)) => {
                self.retrieve_checked(request, &namespace, &query, &summary)
            }
            Err(_) => Retrieval::refused(
                PROVIDER_ID,
                request,
                "provider_request_invalid",
                Some(Self::version()),
                0,
            ),
        }
    }

    fn try_retrieve(&self, request: &RetrieveRequest) -> Result<Retrieval, ProviderError> {
        let (namespace, query, summary) = Self::check_retrieve(request)?;
        Ok(self.retrieve_checked(request, &namespace, &query, &summary))
    }

    fn sync(&self, request: &SyncRequest) -> Sync {
        match Self::check_sync(request) {
            Ok(namespace) => self.sync_checked(request, &namespace),
            Err(_) => Sync {
                provider: PROVIDER_ID.to_owned(),
                namespace: request.namespace.clone(),
                status: "unavailable".to_owned(),
                observed_at: request.observed_at.clone(),
                requested_count: request.resources.len(),
                completed_count: 0,
                write_count: 0,
                reason_code: Some("provider_request_invalid".to_owned()),
                provider_version: Some(Self::version()),
                latency_ms: 0,
                result_refs: Vec::new(),
                pending_count: 0,
                reconciliation_performed: false,
                retry_disposition: "no_retry".to_owned(),
            },
        }
    }

    fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
        let namespace = Self::check_sync(request)?;
        Ok(self.sync_checked(request, &namespace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::SyncResource;

    fn sync_request(dir: &Path, name: &str, content: &str, target: &str) -> SyncRequest {
        let source = dir.join(name);
        std::fs::write(&source, content).expect("write source");
        SyncRequest {
            namespace: "reward_memory".to_owned(),
            resources: vec![SyncResource {
                local_source_path: source,
                target_ref: target.to_owned(),
            }],
            timeout_seconds: 5.0,
            observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
            execute: true,
        }
    }

    fn retrieve_request(query: &str, scope: &str) -> RetrieveRequest {
        RetrieveRequest {
            namespace: "reward_memory".to_owned(),
            scope_ref: scope.to_owned(),
            query: query.to_owned(),
            query_summary: "test".to_owned(),
            max_results: 3,
            timeout_seconds: 5.0,
            observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
        }
    }

    #[test]
    fn write_then_search_returns_exact_bytes_and_resync_is_idempotent() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::new(dir.path().join("s/embedded.sqlite3"));
        let target = "embedded://rm/c/a.json";
        let req = sync_request(dir.path(), "a.json", "{\"k\":\"alpha beta\"}\n", target);
        let first = store.try_sync(&req).expect("valid");
        assert_eq!((first.status.as_str(), first.write_count), ("completed", 1));
        assert_eq!(first.result_refs, vec![target.to_owned()]);
        let second = store.try_sync(&req).expect("valid");
        assert_eq!(
            (second.status.as_str(), second.write_count),
            ("completed", 0)
        );
        assert_eq!(store.count().expect("count"), 1);
        let stored = store
            .read("reward_memory", target)
            .expect("read")
            .expect("present");
        assert_eq!(stored.content, b"{\"k\":\"alpha beta\"}\n");
        let hits = store
            .try_retrieve(&retrieve_request("beta", "embedded://rm/c"))
            .expect("valid");
        assert_eq!(hits.status, "completed");
        assert_eq!(hits.items.len(), 1);
        assert_eq!(hits.items[0].content, "{\"k\":\"alpha beta\"}\n");
        let other_scope = store
            .try_retrieve(&retrieve_request("beta", "embedded://rm/other"))
            .expect("valid");
        assert!(other_scope.items.is_empty());
    }

    #[test]
    fn a_different_payload_is_a_revision_conflict_and_is_not_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::new(dir.path().join("embedded.sqlite3"));
        let target = "embedded://rm/c/a.json";
        store
            .try_sync(&sync_request(dir.path(), "a.json", "one", target))
            .expect("valid");
        let conflict = store
            .try_sync(&sync_request(dir.path(), "b.json", "two", target))
            .expect("valid");
        assert_eq!(conflict.status, "partial");
        assert_eq!(
            conflict.reason_code.as_deref(),
            Some("provider_sync_revision_conflict")
        );
        assert_eq!(conflict.write_count, 0);
        let stored = store
            .read("reward_memory", target)
            .expect("read")
            .expect("present");
        assert_eq!(stored.content, b"one");
    }

    #[test]
    fn bad_targets_and_scopes_are_call_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::new(dir.path().join("embedded.sqlite3"));
        let req = sync_request(dir.path(), "a.json", "x", "viking://resources/a.json");
        assert!(store.try_sync(&req).is_err());
        assert!(
            store
                .try_retrieve(&retrieve_request("x", "viking://x"))
                .is_err()
        );
        assert!(
            !store.path().exists(),
            "nothing is created for a refused call"
        );
    }

    #[test]
    fn a_missing_store_is_an_empty_search() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::new(dir.path().join("none.sqlite3"));
        let r = store
            .try_retrieve(&retrieve_request("anything", "embedded://rm"))
            .expect("valid");
        assert_eq!((r.status.as_str(), r.items.len()), ("completed", 0));
    }

    #[test]
    fn concurrent_writers_of_the_same_record_write_it_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("embedded.sqlite3");
        let target = "embedded://rm/c/a.json";
        let requests: Vec<SyncRequest> = (0..4)
            .map(|i| sync_request(dir.path(), &format!("s{i}.json"), "same bytes", target))
            .collect();
        let writes: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = requests
                .iter()
                .map(|req| {
                    let store = EmbeddedStore::new(path.clone());
                    scope.spawn(move || store.try_sync(req).expect("valid"))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    let sync = h.join().expect("no panic");
                    assert_eq!(sync.status, "completed");
                    sync.write_count
                })
                .sum()
        });
        assert_eq!(writes, 1);
        assert_eq!(EmbeddedStore::new(path).count().expect("count"), 1);
    }

    #[test]
    fn non_finite_timeouts_do_not_panic() {
        assert_eq!(busy_timeout(f64::NAN), Duration::from_secs(30));
        assert_eq!(busy_timeout(f64::INFINITY), Duration::from_secs(30));
        assert_eq!(busy_timeout(0.5), Duration::from_secs(1));
    }

    #[test]
    fn fts_queries_quote_every_word() {
        assert_eq!(
            fts_query("candidate:3a1d Keep \"it\" OR").as_deref(),
            Some("\"candidate\" OR \"3a1d\" OR \"keep\" OR \"it\" OR \"or\"")
        );
        assert_eq!(fts_query(" :: "), None);
    }
}
