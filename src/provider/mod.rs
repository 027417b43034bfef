//! Memory providers: the context-provider interface (retrieve, sync) and its data model.
//!
//! A provider is an adapter at the edge of the crate: it may touch files, spawn
//! processes or open a database, and it reports every failure as a status plus a reason
//! code instead of an error, so callers can fail open. The pure recall/ingest modules
//! only see [`ContextProvider`]. Implementations: `embedded` (a local SQLite store, the
//! default on a fresh machine) and `openviking` (the `ov` CLI of an OpenViking server).

pub mod openviking;

/// One resource to write: the exact bytes, and where they must end up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncResource {
    /// The local file holding the exact bytes (its basename equals the target's last
    /// segment, as the OpenViking adapter requires).
    pub local_source_path: std::path::PathBuf,
    /// The provider URI the bytes must be readable at.
    pub target_ref: String,
}

/// A sync request.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub namespace: String,
    pub resources: Vec<SyncResource>,
    pub timeout_seconds: f64,
    pub observed_at: String,
    pub execute: bool,
}

/// The outcome of a sync (`planned`, `unavailable`, `completed`, `committed_pending`,
/// `partial`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sync {
    pub provider: String,
    pub namespace: String,
    pub status: String,
    pub observed_at: String,
    pub requested_count: usize,
    pub completed_count: usize,
    pub write_count: usize,
    pub reason_code: Option<String>,
    pub provider_version: Option<String>,
    pub latency_ms: u64,
    pub result_refs: Vec<String>,
    pub pending_count: usize,
    pub reconciliation_performed: bool,
    /// `no_retry`, `execute_required`, `wait_and_reconcile`, `safe_to_retry`,
    /// `manual_reconcile`.
    pub retry_disposition: String,
}

/// A retrieve request.
#[derive(Debug, Clone)]
pub struct RetrieveRequest {
    pub namespace: String,
    pub scope_ref: String,
    pub query: String,
    pub query_summary: String,
    pub max_results: usize,
    pub timeout_seconds: f64,
    pub observed_at: String,
}

/// One retrieved resource with its exact content.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievedItem {
    pub resource_ref: String,
    pub summary: String,
    pub content: String,
    pub score: Option<f64>,
}

/// The outcome of a retrieve (`completed` or `unavailable`).
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    pub provider: String,
    pub namespace: String,
    pub status: String,
    pub query_summary: String,
    pub observed_at: String,
    pub search_performed: bool,
    pub read_performed: bool,
    pub items: Vec<RetrievedItem>,
    pub reason_code: Option<String>,
    pub provider_version: Option<String>,
    pub latency_ms: u64,
    pub requested_limit: usize,
}

/// A memory provider. Implementations never panic and never return errors for
/// provider-side failures: they report a status and a reason code.
pub trait ContextProvider {
    /// The provider id of the binding (`embedded`, `openviking`).
    fn provider_id(&self) -> &str;
    /// Searches `scope_ref` and reads back the exact content of each hit.
    fn retrieve(&self, request: &RetrieveRequest) -> Retrieval;
    /// Writes each resource's exact bytes at its target (idempotently), or plans it.
    fn sync(&self, request: &SyncRequest) -> Sync;
}
