//! Bulk writes into the embedded store: one connection for a whole run and one
//! `BEGIN IMMEDIATE` transaction per batch of syncs, committed by the caller.
//!
//! [`BulkStore`] is a [`ContextProvider`] for `ingest-event --input FILE.jsonl`: each
//! event's sync runs the same per-resource pass as a single sync (the store's `pass`: look
//! the ref up, refuse different bytes at a stored ref with
//! `provider_sync_revision_conflict`, else insert the row and its FTS row) inside the
//! open batch transaction, without the read-only look-up first. Its readback
//! ([`ContextProvider::retrieve`]) returns the row the last sync wrote, read in the same
//! transaction, and only when its FTS row is there too (no ranking, so no score): the
//! recall seam then checks that record exactly as for a search hit. A record is stored
//! with its index row or not at all: any failed statement marks the batch, and
//! [`BulkStore::commit`] then rolls the whole batch back. The caller prints a batch's
//! receipts only after its commit, so every acknowledged record survives a kill.
//! The store's generation advances once per batch, over the batch's rows in id order
//! (the same chain as single writes). It must not print, and owns no schema of its own.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension as _, params};

use super::file::{self, StoreCause};
use super::{
    EmbeddedStore, GENERATION_KEY, Item, PROVIDER_ID, fold_generation, generation, in_scope, pass,
};
use crate::provider::{
    ContextProvider, DEFAULT_SUMMARY, ProviderError, Retrieval, RetrieveRequest, RetrievedItem,
    Sync, SyncRequest, SyncSource,
};

/// The open batch: where the generation chain resumes, and whether a statement failed.
#[derive(Debug, Default)]
struct Batch {
    open: bool,
    last_id: i64,
    previous: String,
    writes: usize,
    /// A statement of the batch failed: the commit rolls everything back.
    failed: Option<Option<StoreCause>>,
    /// `(namespace, resource_ref)` of the last resource a sync of this batch completed.
    last_synced: Option<(String, String)>,
}

/// A write connection to the embedded store that groups syncs into batch transactions.
pub struct BulkStore {
    opened: file::Opened,
    path: PathBuf,
    timeout: Duration,
    batch: RefCell<Batch>,
    /// True once a batch committed (the `-checked` record is written on [`BulkStore::close`]).
    committed: RefCell<bool>,
}

/// Why a batch did not commit; it was rolled back: none of its records is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchFailure {
    /// The store's cause, when the failure was the store's (busy, full, ...).
    pub cause: Option<StoreCause>,
}

impl BatchFailure {
    /// `provider_store_cause_*`, or `provider_sync_write_failed_absent`.
    pub fn code(self) -> &'static str {
        self.cause
            .map_or("provider_sync_write_failed_absent", StoreCause::code)
    }
}

/// The page cache of a batch connection, in KiB (SQLite's default is 2,000 KiB): a batch
/// revisits the term index's and FTS5's pages of the terms it adds, and as the store
/// grows they no longer fit the default (50,000 events: about a tenth faster, 15 MB more
/// resident).
const BULK_CACHE_KIB: i64 = 16 * 1024;

impl BulkStore {
    /// Opens `store` for writing (created when missing, verified as a single write
    /// verifies it), waiting up to `timeout` for a lock.
    pub fn open(store: &EmbeddedStore, timeout: Duration) -> Result<BulkStore, StoreCause> {
        let opened = file::open_for_write(store.path(), store.root(), timeout, store.tokenizer())?;
        opened
            .conn
            .pragma_update(None, "cache_size", -BULK_CACHE_KIB)
            .map_err(|err| opened.cause_of(&err))?;
        Ok(BulkStore {
            opened,
            path: store.path().to_path_buf(),
            timeout,
            batch: RefCell::new(Batch::default()),
            committed: RefCell::new(false),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn begin(&self) -> Result<(), Option<StoreCause>> {
        let conn = &self.opened.conn;
        let deadline = Instant::now() + self.timeout;
        let cause = |err: rusqlite::Error| self.opened.cause(&err);
        file::retry_busy(deadline, || conn.execute_batch("BEGIN IMMEDIATE")).map_err(cause)?;
        let started = (|| {
            let last_id: i64 =
                conn.query_row("SELECT coalesce(max(id), 0) FROM resources", [], |r| {
                    r.get(0)
                })?;
            Ok((last_id, generation(conn)?))
        })();
        match started {
            Ok((last_id, previous)) => {
                *self.batch.borrow_mut() = Batch {
                    open: true,
                    last_id,
                    previous,
                    ..Batch::default()
                };
                Ok(())
            }
            Err(err) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(cause(err))
            }
        }
    }

    /// Commits the open batch (a no-op without one) and returns how many records it
    /// wrote; on any failure the batch is rolled back.
    pub fn commit(&self) -> Result<usize, BatchFailure> {
        let batch = std::mem::take(&mut *self.batch.borrow_mut());
        if !batch.open {
            return match batch.failed {
                Some(cause) => Err(BatchFailure { cause }),
                None => Ok(0),
            };
        }
        let conn = &self.opened.conn;
        let finished = match batch.failed {
            Some(cause) => Err(BatchFailure { cause }),
            None => (|| {
                if batch.writes > 0 {
                    let next = fold_generation(conn, batch.previous.clone(), batch.last_id)?;
                    super::search::update(conn, &batch.previous, batch.last_id, &next)?;
                    conn.prepare_cached(
                        "INSERT INTO store_meta (key, value) VALUES (?1, ?2)
                         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    )?
                    .execute(params![GENERATION_KEY, next])?;
                }
                conn.execute_batch("COMMIT")
            })()
            .map_err(|err| BatchFailure {
                cause: self.opened.cause(&err),
            }),
        };
        match finished {
            Ok(()) => {
                *self.committed.borrow_mut() = true;
                Ok(batch.writes)
            }
            Err(failure) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(failure)
            }
        }
    }

    /// Rolls the open batch back (nothing of it is stored) and closes the connection,
    /// recording the file as checked when a batch committed.
    pub fn close(self) {
        if self.batch.borrow().open {
            let _ = self.opened.conn.execute_batch("ROLLBACK");
        }
        let committed = *self.committed.borrow();
        let path = self.path.clone();
        // Closing checkpoints the WAL into the file; only then is its stat final.
        drop(self);
        if committed {
            file::record_checked(&path);
        }
    }

    fn outcome(request: &SyncRequest, namespace: &str) -> Sync {
        Sync {
            provider: PROVIDER_ID.to_owned(),
            namespace: namespace.to_owned(),
            status: "unavailable".to_owned(),
            observed_at: request.observed_at.clone(),
            requested_count: request.resources.len(),
            completed_count: 0,
            write_count: 0,
            reason_code: None,
            provider_version: Some(EmbeddedStore::version()),
            latency_ms: 0,
            result_refs: Vec::new(),
            pending_count: 0,
            reconciliation_performed: false,
            retry_disposition: "no_retry".to_owned(),
            cause_code: None,
        }
    }

    fn sync_checked(&self, request: &SyncRequest, namespace: &str) -> Sync {
        let start = Instant::now();
        if !request.execute {
            return Sync::planned(
                PROVIDER_ID,
                namespace,
                &request.observed_at,
                request.resources.len(),
            );
        }
        let mut outcome = Self::outcome(request, namespace);
        let failed = |mut outcome: Sync, cause: Option<StoreCause>| {
            match cause {
                Some(cause) => {
                    outcome.reason_code = Some(cause.reason_code().to_owned());
                    outcome.retry_disposition = cause.retry_disposition().to_owned();
                    outcome.cause_code = Some(cause.code().to_owned());
                }
                None => {
                    outcome.status = "partial".to_owned();
                    outcome.reason_code = Some("provider_sync_write_failed_absent".to_owned());
                    outcome.retry_disposition = "safe_to_retry".to_owned();
                }
            }
            outcome.latency_ms = super::elapsed_ms(start);
            outcome
        };
        if let Some(cause) = self.batch.borrow().failed {
            return failed(outcome, cause);
        }
        if !self.batch.borrow().open
            && let Err(cause) = self.begin()
        {
            self.batch.borrow_mut().failed = Some(cause);
            return failed(outcome, cause);
        }
        let mut resources: Vec<Item<'_>> = Vec::with_capacity(request.resources.len());
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
        let written = match pass(
            &self.opened.conn,
            namespace,
            &resources,
            &request.observed_at,
            true,
        ) {
            Ok(written) => written,
            Err(err) => {
                let cause = self.opened.cause(&err);
                self.batch.borrow_mut().failed = Some(cause);
                return failed(outcome, cause);
            }
        };
        {
            let mut batch = self.batch.borrow_mut();
            batch.writes += written.writes;
            batch.last_synced = written
                .completed
                .last()
                .map(|r| (namespace.to_owned(), r.clone()));
        }
        outcome.completed_count = written.completed.len();
        outcome.write_count = written.writes;
        outcome.result_refs = written.completed;
        outcome.latency_ms = super::elapsed_ms(start);
        match written
            .stop
            .or(unreadable.then_some("provider_sync_source_read_failed"))
        {
            None => outcome.status = "completed".to_owned(),
            Some(reason) => {
                outcome.status = "partial".to_owned();
                outcome.reason_code = Some(reason.to_owned());
            }
        }
        outcome
    }

    /// The row the last sync completed, with its FTS row present, in the open batch.
    fn last_synced(&self, namespace: &str, scope_ref: &str) -> rusqlite::Result<Option<Vec<u8>>> {
        let Some((synced_namespace, resource_ref)) = self.batch.borrow().last_synced.clone() else {
            return Ok(None);
        };
        if synced_namespace != namespace || !in_scope(&resource_ref, scope_ref) {
            return Ok(None);
        }
        let conn = &self.opened.conn;
        let row: Option<(i64, Vec<u8>)> = conn
            .prepare_cached(
                "SELECT id, content FROM resources WHERE namespace = ?1 AND resource_ref = ?2",
            )?
            .query_row(params![namespace, resource_ref], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let Some((id, content)) = row else {
            return Ok(None);
        };
        let indexed: Option<i64> = conn
            .prepare_cached("SELECT rowid FROM resources_fts WHERE rowid = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?;
        Ok(indexed.map(|_| content))
    }

    fn retrieve_checked(
        &self,
        request: &RetrieveRequest,
        namespace: &str,
        summary: &str,
    ) -> Retrieval {
        let start = Instant::now();
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
            provider_version: Some(EmbeddedStore::version()),
            latency_ms: 0,
            requested_limit: request.limit(super::MAX_RESULTS),
            lifecycle_skipped: 0,
            snapshot: None,
        };
        match self.last_synced(namespace, &request.scope_ref) {
            Ok(Some(content)) => {
                retrieval.read_performed = true;
                let (Some(resource_ref), Ok(content)) = (
                    self.batch.borrow().last_synced.clone().map(|(_, r)| r),
                    String::from_utf8(content),
                ) else {
                    retrieval.reason_code = Some("provider_reads_unusable".to_owned());
                    retrieval.latency_ms = super::elapsed_ms(start);
                    return retrieval;
                };
                retrieval.items.push(RetrievedItem {
                    resource_ref,
                    summary: DEFAULT_SUMMARY.to_owned(),
                    content,
                    score: None,
                });
            }
            Ok(None) => {}
            Err(err) => {
                retrieval.status = "unavailable".to_owned();
                retrieval.reason_code = Some(
                    match self.opened.cause(&err) {
                        Some(StoreCause::Busy) => "provider_store_busy",
                        _ => "provider_search_failed",
                    }
                    .to_owned(),
                );
            }
        }
        retrieval.latency_ms = super::elapsed_ms(start);
        retrieval
    }
}

impl ContextProvider for BulkStore {
    fn provider_id(&self) -> &str {
        PROVIDER_ID
    }

    fn retrieve(&self, request: &RetrieveRequest) -> Retrieval {
        match EmbeddedStore::check_retrieve(request) {
            Ok((namespace, _, summary)) => self.retrieve_checked(request, &namespace, &summary),
            Err(_) => Retrieval::refused(
                PROVIDER_ID,
                request,
                "provider_request_invalid",
                Some(EmbeddedStore::version()),
                0,
            ),
        }
    }

    fn try_retrieve(&self, request: &RetrieveRequest) -> Result<Retrieval, ProviderError> {
        let (namespace, _, summary) = EmbeddedStore::check_retrieve(request)?;
        Ok(self.retrieve_checked(request, &namespace, &summary))
    }

    fn sync(&self, request: &SyncRequest) -> Sync {
        match self.try_sync(request) {
            Ok(sync) => sync,
            Err(_) => {
                let mut outcome = Self::outcome(request, &request.namespace);
                outcome.reason_code = Some("provider_request_invalid".to_owned());
                outcome
            }
        }
    }

    fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
        let namespace = EmbeddedStore::check_sync(request)?;
        Ok(self.sync_checked(request, &namespace))
    }

    fn relevance(&self, score: Option<f64>) -> Option<f64> {
        score.map(super::bm25_relevance)
    }
}
