//! The embedded memory provider: a local SQLite store (FTS5 full-text search), the default
//! on a machine without a memory server.
//!
//! Owns the store's tables, its transactions and its `embedded://` scope scheme; it must
//! not interpret records (that is the recall seam's job). The store file itself (creation
//! with private modes, locks, the integrity check, failure causes) is [`mod@file`]'s. Layout:
//! one table `resources` keyed by `(namespace, resource_ref)` holding the **exact bytes**
//! written, their SHA-256 and the first `observed_at`, an FTS5 table `resources_fts`
//! (rowid = `resources.id`) over the text for recall, and the term index kept from it
//! ([`search`], which answers searches with FTS5's scores). The database runs in WAL mode
//! with `synchronous=FULL`.
//!
//! A sync takes the bytes directly ([`SyncSource::Bytes`]; nothing is staged on disk) and
//! first looks its resources up in a read transaction: when every one is already stored
//! with the same bytes it completes without the write lock. Otherwise it writes in one
//! `BEGIN IMMEDIATE` transaction, and **any** failure inside it (a row, its FTS row, the
//! commit) rolls the whole transaction back, so a record is stored with its index row or
//! not at all, and a receipt that says absent means absent. An acknowledged write survives
//! a crash. A lock held past the binding's timeout is `provider_store_busy` /
//! `safe_to_retry`; every other store failure is `provider_store_unavailable` with a
//! cause code ([`StoreCause`], carried in [`Sync::cause_code`]).
//!
//! Scope refs look like `embedded://<collection>/<...>`; a resource belongs to a scope when
//! its ref equals it or starts with it plus `/`. Re-syncing identical bytes (up to the
//! transport newline, see [`crate::wire::digest::canonical_text`]) is a no-op; different bytes
//! at an existing ref are refused with `provider_sync_revision_conflict`, never
//! overwritten.
//!
//! Location: the binding's `provider_binary` when set (a file path, `~` expanded), else
//! [`default_store_path`] = `<runtime_root>/reward-memory/embedded.sqlite3`.

pub mod bulk;
pub mod effects;
pub mod file;
mod hits;
pub mod index;
pub mod lifecycle;
mod porter;
pub mod postings;
pub mod search;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension as _, Transaction, TransactionBehavior, params};

use crate::wire::digest::canonical_text;
use crate::wire::json::Value;
use crate::wire::text::public_safe_text;

pub use file::StoreCause;
pub use index::Tokenizer;

use super::{
    ContextProvider, ProviderError, Retrieval, RetrieveRequest, RetrievedItem, Sync, SyncRequest,
    SyncSource,
};

/// The `provider_id` that selects this store.
pub const PROVIDER_ID: &str = "embedded";
/// Scheme every scope and target ref of this store starts with.
pub const SCOPE_SCHEME: &str = "embedded://";
/// Schema marker kept in the `store_meta` table: v2 indexes each record's search text
/// ([`index`]); a v1 store (whose index held whole records) is migrated by its next write.
pub const STORE_SCHEMA_VERSION: &str = "reward_memory_embedded_store_v2";

use super::{DEFAULT_SUMMARY, MAX_SYNC_RESOURCES};
const MAX_RESULTS: usize = 8;

/// `<runtime_root>/reward-memory/embedded.sqlite3`.
pub fn default_store_path(runtime_root: &Path) -> PathBuf {
    runtime_root.join("reward-memory").join("embedded.sqlite3")
}

/// The embedded SQLite store at one file path. Opening is lazy: each call opens its own
/// connection, so a store that cannot be opened is a status, not a construction error.
/// Every open first applies the trust rule ([`file::check_trust`]).
#[derive(Debug, Clone)]
pub struct EmbeddedStore {
    path: PathBuf,
    /// The runtime root, when the store is at its default location there: the directories
    /// from it down are checked (and created 0700) too.
    root: Option<PathBuf>,
    /// The tokenizer the binding names (`None`: the store's own, `porter` for a new one).
    tokenizer: Option<Tokenizer>,
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

fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn in_scope(resource_ref: &str, scope_ref: &str) -> bool {
    let scope = scope_ref.trim_end_matches('/');
    resource_ref == scope_ref || resource_ref.starts_with(&format!("{scope}/"))
}

/// The distinct words of `query`, lower-cased, in order: what a search looks for.
pub fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if !word.is_empty() && !words.contains(&word) {
            words.push(word);
        }
    }
    words
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

/// What a pass over the resources of a sync found or did.
#[derive(Debug, Default)]
struct Pass {
    completed: Vec<String>,
    writes: usize,
    /// Why the pass stopped before the last resource.
    stop: Option<&'static str>,
    /// The read-only pass met a resource that is not stored yet.
    needs_write: bool,
}

/// How the write transaction of a sync failed; it was rolled back either way.
enum WriteFailure {
    /// The store itself failed (busy, corrupt, full, ...).
    Store(StoreCause),
    /// A statement failed for another reason; nothing was written.
    Absent,
}

/// One resource of a sync: its target, its exact bytes, and the search text the writer
/// gave (`None`: [`index::search_text`] of the bytes).
struct Item<'a> {
    target_ref: &'a str,
    bytes: Vec<u8>,
    search_text: Option<&'a str>,
}

/// Looks every resource up and, when `write` is set, inserts the missing ones with their
/// FTS rows (the search text, never the envelope). Stops at a revision conflict. Any SQL error is returned as is: the caller
/// drops the transaction, which rolls it back.
fn pass(
    tx: &Connection,
    namespace: &str,
    resources: &[Item<'_>],
    observed_at: &str,
    write: bool,
) -> rusqlite::Result<Pass> {
    let mut out = Pass::default();
    for item in resources {
        let (target_ref, bytes) = (item.target_ref, &item.bytes);
        let stored: Option<Vec<u8>> = tx
            .prepare_cached(
                "SELECT content FROM resources WHERE namespace = ?1 AND resource_ref = ?2",
            )?
            .query_row(params![namespace, target_ref], |row| row.get(0))
            .optional()?;
        match stored {
            Some(stored) => {
                let same = canonical_text(&String::from_utf8_lossy(&stored))
                    == canonical_text(&String::from_utf8_lossy(bytes));
                if !same {
                    out.stop = Some("provider_sync_revision_conflict");
                    break;
                }
            }
            None if !write => {
                out.needs_write = true;
                break;
            }
            None => {
                tx.prepare_cached(
                    "INSERT INTO resources (namespace, resource_ref, content, content_sha256, observed_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![namespace, target_ref, bytes, hex::encode(sha2_digest(bytes)), observed_at])?;
                let id = tx.last_insert_rowid();
                // An index row left behind by a record deleted by hand (outside this
                // crate) would otherwise block every new record that gets its rowid.
                tx.prepare_cached("DELETE FROM resources_fts WHERE rowid = ?1")?
                    .execute(params![id])?;
                let body = match item.search_text {
                    Some(text) => text.to_owned(),
                    None => index::search_text(bytes),
                };
                tx.prepare_cached("INSERT INTO resources_fts (rowid, body) VALUES (?1, ?2)")?
                    .execute(params![id, body])?;
                out.writes += 1;
            }
        }
        out.completed.push(target_ref.to_owned());
    }
    Ok(out)
}

impl EmbeddedStore {
    /// A store at `path` (created on the first executed sync).
    pub fn new(path: PathBuf) -> EmbeddedStore {
        EmbeddedStore {
            path,
            root: None,
            tokenizer: None,
        }
    }

    /// The store at the default location of `runtime_root` ([`default_store_path`]).
    pub fn in_runtime_root(runtime_root: &Path) -> EmbeddedStore {
        EmbeddedStore {
            path: default_store_path(runtime_root),
            root: Some(runtime_root.to_path_buf()),
            tokenizer: None,
        }
    }

    /// The same store, whose next write builds (or rebuilds) its index with `tokenizer`.
    pub fn with_tokenizer(mut self, tokenizer: Option<Tokenizer>) -> EmbeddedStore {
        self.tokenizer = tokenizer;
        self
    }

    /// The tokenizer the binding names, if any.
    pub fn tokenizer(&self) -> Option<Tokenizer> {
        self.tokenizer
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The runtime root the store's directories are checked from (default location only).
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Why the store may not be trusted, naming the path and the fix (`None`: nothing
    /// found that is refused); every open checks the same and fails with
    /// [`StoreCause::Untrusted`].
    pub fn trust_problem(&self) -> Option<crate::io::trust::Untrusted> {
        file::check_trust(&self.path, self.root()).err()
    }

    fn version() -> String {
        format!("sqlite {}", rusqlite::version())
    }

    /// Reads one stored resource exactly (`None` when absent or the store does not exist),
    /// through a read-only connection.
    pub fn read(
        &self,
        namespace: &str,
        resource_ref: &str,
    ) -> Result<Option<StoredResource>, StoreCause> {
        let Some(opened) = file::open_for_read(&self.path, self.root(), Duration::from_secs(5))?
        else {
            return Ok(None);
        };
        opened.conn.query_row(
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
        .map_err(|err| opened.cause_of(&err))
    }

    /// Number of stored resources (for operators and tests).
    pub fn count(&self) -> Result<i64, StoreCause> {
        match file::open_for_read(&self.path, self.root(), Duration::from_secs(5))? {
            None => Ok(0),
            Some(opened) => opened
                .conn
                .query_row("SELECT count(*) FROM resources", [], |r| r.get(0))
                .map_err(|err| opened.cause_of(&err)),
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
            if let SyncSource::File(path) = &resource.source
                && !path.is_file()
            {
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

    /// The write itself: a read pass without the write lock, then, when something is
    /// missing, one immediate transaction that commits completely or not at all.
    fn write(
        opened: &file::Opened,
        namespace: &str,
        resources: &[Item<'_>],
        observed_at: &str,
        deadline: Instant,
    ) -> Result<Pass, WriteFailure> {
        let conn = &opened.conn;
        let failure = |err: rusqlite::Error| match opened.cause(&err) {
            Some(cause) => WriteFailure::Store(cause),
            None => WriteFailure::Absent,
        };
        let looked = file::retry_busy(deadline, || {
            let tx = Transaction::new_unchecked(conn, TransactionBehavior::Deferred)?;
            pass(&tx, namespace, resources, observed_at, false)
        })
        .map_err(failure)?;
        if !looked.needs_write {
            return Ok(looked);
        }
        let tx = file::retry_busy(deadline, || {
            Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        })
        .map_err(failure)?;
        // On an error `tx` is dropped here, which rolls every statement of it back.
        let written = (|| {
            let last_id: i64 =
                tx.query_row("SELECT coalesce(max(id), 0) FROM resources", [], |r| {
                    r.get(0)
                })?;
            let previous = generation(&tx)?;
            let written = pass(&tx, namespace, resources, observed_at, true)?;
            if written.writes > 0 {
                let next = fold_generation(&tx, previous.clone(), last_id)?;
                search::update(&tx, &previous, last_id, &next)?;
                tx.execute(
                    "INSERT INTO store_meta (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![GENERATION_KEY, next],
                )?;
            }
            Ok(written)
        })()
        .map_err(failure)?;
        tx.commit().map_err(failure)?;
        Ok(written)
    }

    fn sync_checked(&self, request: &SyncRequest, namespace: &str) -> Sync {
        let start = Instant::now();
        let requested = request.resources.len();
        if !request.execute {
            return Sync::planned(PROVIDER_ID, namespace, &request.observed_at, requested);
        }
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
            cause_code: None,
        };
        let store_failure = |mut outcome: Sync, cause: StoreCause| {
            outcome.status = "unavailable".to_owned();
            outcome.reason_code = Some(cause.reason_code().to_owned());
            outcome.retry_disposition = cause.retry_disposition().to_owned();
            outcome.cause_code = Some(cause.code().to_owned());
            outcome.latency_ms = elapsed_ms(start);
            outcome
        };
        // The exact bytes, in order; a file source that cannot be read ends the list.
        let mut resources: Vec<Item<'_>> = Vec::with_capacity(requested);
        let mut unreadable = false;
        for resource in &request.resources {
            let bytes = match &resource.source {
                SyncSource::Bytes(bytes) => Some(bytes.clone()),
                SyncSource::File(path) => std::fs::read(path).ok(),
            };
            match bytes {
                Some(bytes) => resources.push(Item {
                    target_ref: resource.target_ref.as_str(),
                    bytes,
                    search_text: resource.search_text.as_deref(),
                }),
                None => {
                    unreadable = true;
                    break;
                }
            }
        }
        let timeout = busy_timeout(request.timeout_seconds);
        let deadline = Instant::now() + timeout;
        let opened = match file::open_for_write(&self.path, self.root(), timeout, self.tokenizer) {
            Ok(opened) => opened,
            Err(cause) => return store_failure(outcome, cause),
        };
        let written = Self::write(
            &opened,
            namespace,
            &resources,
            &request.observed_at,
            deadline,
        );
        // Closing checkpoints the WAL into the file; only then is its stat final.
        drop(opened);
        let written = match written {
            Ok(written) => {
                file::record_checked(&self.path);
                written
            }
            Err(WriteFailure::Store(cause)) => return store_failure(outcome, cause),
            Err(WriteFailure::Absent) => {
                outcome.status = "partial".to_owned();
                outcome.reason_code = Some("provider_sync_write_failed_absent".to_owned());
                outcome.retry_disposition = "safe_to_retry".to_owned();
                outcome.latency_ms = elapsed_ms(start);
                return outcome;
            }
        };
        outcome.completed_count = written.completed.len();
        outcome.write_count = written.writes;
        outcome.result_refs = written.completed;
        outcome.latency_ms = elapsed_ms(start);
        let stop = written
            .stop
            .or(unreadable.then_some("provider_sync_source_read_failed"));
        match stop {
            None => outcome.status = "completed".to_owned(),
            Some(reason) => {
                outcome.status = "partial".to_owned();
                outcome.reason_code = Some(reason.to_owned());
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
        let limit = request.limit(MAX_RESULTS);
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
            snapshot: None,
            lifecycle_skipped: 0,
        };
        let timeout = busy_timeout(request.timeout_seconds);
        let deadline = Instant::now() + timeout;
        let opened = match file::open_for_read(&self.path, self.root(), timeout) {
            Ok(Some(opened)) => opened,
            // A store that was never written holds nothing: an empty, successful search.
            Ok(None) => {
                retrieval.snapshot = Some(initial_generation());
                retrieval.latency_ms = elapsed_ms(start);
                return retrieval;
            }
            Err(cause) => {
                retrieval.status = "unavailable".to_owned();
                retrieval.search_performed = false;
                retrieval.reason_code = Some(cause.reason_code().to_owned());
                retrieval.latency_ms = elapsed_ms(start);
                return retrieval;
            }
        };
        let words = query_words(query);
        if words.is_empty() {
            retrieval.snapshot = file::retry_busy(deadline, || generation(&opened.conn)).ok();
            retrieval.latency_ms = elapsed_ms(start);
            return retrieval;
        }
        let scope = request.scope_ref.trim_end_matches('/');
        let prefix = format!("{scope}/");
        let search = || {
            // The generation and the search read one snapshot of the store.
            let tx = Transaction::new_unchecked(&opened.conn, TransactionBehavior::Deferred)?;
            let generation = generation(&tx)?;
            // Hits the lifecycle drops must not shorten the answer (`lifecycle::visible`).
            let fetch = limit + lifecycle::inactive_count(&tx, namespace)?;
            let scores = search::search(&tx, &generation, &words)?;
            let rows =
                hits::best_rows(&tx, &scores, namespace, &request.scope_ref, &prefix, fetch)?;
            let visible = lifecycle::visible(&tx, namespace, rows, limit, &request.observed_at)?;
            Ok((generation, visible))
        };
        let rows = match file::retry_busy(deadline, search) {
            Ok((generation, (rows, skipped))) => {
                retrieval.snapshot = Some(generation);
                retrieval.lifecycle_skipped = skipped;
                rows
            }
            Err(err) => {
                retrieval.status = "unavailable".to_owned();
                retrieval.reason_code = Some(
                    match opened.cause(&err) {
                        Some(StoreCause::Busy) => "provider_store_busy",
                        _ => "provider_search_failed",
                    }
                    .to_owned(),
                );
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

/// The `store_meta` key of the store's generation digest.
pub const GENERATION_KEY: &str = "generation";
/// What the generation digest of a store without records is the SHA-256 of.
const GENERATION_SEED: &str = "reward_memory_embedded_generation_v1";

/// The generation of a store that holds no record: SHA-256 hex of
/// `reward_memory_embedded_generation_v1`.
pub fn initial_generation() -> String {
    crate::wire::digest::sha256_hex(GENERATION_SEED)
}

/// The generation after one more record: SHA-256 hex of
/// `previous \n namespace \n resource_ref \n content_sha256`. A chain, so the digest names
/// every record written and their order, and changes with each write.
pub fn next_generation(
    previous: &str,
    namespace: &str,
    resource_ref: &str,
    content_sha256: &str,
) -> String {
    crate::wire::digest::sha256_hex(&format!(
        "{previous}\n{namespace}\n{resource_ref}\n{content_sha256}"
    ))
}

/// `start` advanced by every record with an id above `after_id`, in id order.
fn fold_generation(conn: &Connection, start: String, after_id: i64) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(
        "SELECT namespace, resource_ref, content_sha256 FROM resources WHERE id > ?1 ORDER BY id",
    )?;
    let mut rows = stmt.query(params![after_id])?;
    let mut generation = start;
    while let Some(row) = rows.next()? {
        let namespace: String = row.get(0)?;
        let resource_ref: String = row.get(1)?;
        let sha: String = row.get(2)?;
        generation = next_generation(&generation, &namespace, &resource_ref, &sha);
    }
    Ok(generation)
}

/// The generation of a store written before generations were kept, from its record
/// count and its last record (no pass over the records' digests): [`initial_generation`]
/// when it holds none, else SHA-256 hex of
/// `seed/legacy \n count \n last id \n last record's namespace \n ref \n content_sha256`.
/// Its next write starts the chain from this value and stores it.
fn legacy_generation(conn: &Connection) -> rusqlite::Result<String> {
    let count: i64 = conn.query_row("SELECT count(*) FROM resources", [], |r| r.get(0))?;
    if count == 0 {
        return Ok(initial_generation());
    }
    let (id, namespace, resource_ref, sha): (i64, String, String, String) = conn.query_row(
        "SELECT id, namespace, resource_ref, content_sha256 FROM resources
         ORDER BY id DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    Ok(crate::wire::digest::sha256_hex(&format!(
        "{GENERATION_SEED}/legacy\n{count}\n{id}\n{namespace}\n{resource_ref}\n{sha}"
    )))
}

/// The store's generation digest: the one each write keeps in `store_meta` (one row
/// read), or, for a store written before generations were kept, [`legacy_generation`].
fn generation(conn: &Connection) -> rusqlite::Result<String> {
    let stored: Option<String> = conn
        .query_row(
            "SELECT value FROM store_meta WHERE key = ?1",
            params![GENERATION_KEY],
            |row| row.get(0),
        )
        .optional()?;
    match stored {
        Some(generation) => Ok(generation),
        None => legacy_generation(conn),
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
                cause_code: None,
            },
        }
    }

    fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
        let namespace = Self::check_sync(request)?;
        Ok(self.sync_checked(request, &namespace))
    }

    fn relevance(&self, score: Option<f64>) -> Option<f64> {
        score.map(bm25_relevance)
    }
}

/// The relevance in `[0, 1)` of an item whose `score` is its BM25 score `x` (`x > 0`
/// grows with the match):
/// `x / (1 + x)`; `x ≤ 0` or NaN gives 0 and `+∞` gives 1. Monotone, so the order of a
/// search is kept.
pub fn bm25_relevance(score: f64) -> f64 {
    if score.is_nan() || score <= 0.0 {
        0.0
    } else if score.is_infinite() {
        1.0
    } else {
        score / (1.0 + score)
    }
}

#[cfg(test)]
mod tests;
