//! Memory providers: the context-provider interface (retrieve, sync) and its data model.
//!
//! A provider is an adapter at the edge of the crate: it may touch files, spawn
//! processes or open a database, and it reports every failure as a status plus a reason
//! code instead of an error, so callers can fail open. The pure recall/ingest modules
//! only see [`ContextProvider`]. Implementations: `embedded` (a local SQLite store, the
//! default on a fresh machine) and `openviking` (the `ov` CLI of an OpenViking server).
//!
//! A sync hands each resource's exact bytes over as a [`SyncSource`]: directly (ingest
//! does; the embedded store writes them as given) or as a local file. A provider whose
//! client reads files stages bytes under [`staging_root`] itself.
//!
//! [`DefaultFactory`] is the factory (§11.2; the shell roots it at a command's runtime
//! root): it maps a binding's `provider_id` to an implementation. Provider failures are
//! statuses; only a broken *call* (bad arguments, a crash of the adapter itself, what the
//! reference reports as an exception) is a [`ProviderError`], returned by
//! [`ContextProvider::try_sync`] / [`ContextProvider::try_retrieve`], which callers use so
//! that they can fail open.

pub mod embedded;
pub mod openviking;

use std::path::{Path, PathBuf};

use crate::obj;
use crate::wire::digest::opaque_provider_ref;
use crate::wire::json::{Map, Value};

/// Most resources one sync may carry (the reference's OpenViking limit, kept by every
/// provider).
pub const MAX_SYNC_RESOURCES: usize = 24;

/// The summary of a retrieved item whose provider row has no usable summary.
pub const DEFAULT_SUMMARY: &str = "Retrieved scoped public context from the configured provider.";

/// Where the exact bytes of a resource come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncSource {
    /// The bytes themselves. The embedded store writes them as given (nothing is staged);
    /// the OpenViking adapter, whose `ov` CLI reads files, stages them in a private file
    /// under its staging directory for the duration of the sync.
    Bytes(Vec<u8>),
    /// A local file holding the bytes (for OpenViking its basename must equal the
    /// target's last segment).
    File(PathBuf),
}

/// One resource to write: the exact bytes, and where they must end up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncResource {
    /// The exact bytes, given directly or as a local file.
    pub source: SyncSource,
    /// The provider URI the bytes must be readable at.
    pub target_ref: String,
    /// The text to index for search when it is not the record's own (the embedded store:
    /// the whole memory text of a summary the contract shortened); `None`: the store
    /// derives it from the bytes. Providers without their own index ignore it.
    pub search_text: Option<String>,
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
    /// Why the store could not be used (`provider_store_cause_*`, see
    /// [`embedded::StoreCause`]), set only by store failures. Not a key of the
    /// `context_provider_sync_v0` packet: the ingest receipt lists it after the reason code.
    pub cause_code: Option<String>,
}

/// The most results one retrieve of a rank-prior pool may ask for ([`ResultCap::Pool`]):
/// the rank prior's own bound on the candidates it ranks at once.
pub const MAX_POOL_RESULTS: usize = 10_000;

/// Which bound a retrieve's `max_results` is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultCap {
    /// The provider's reference cap (the embedded store 8, like §10.2's recall limit;
    /// OpenViking 6, the reference's): every LoopX path.
    #[default]
    Reference,
    /// `recall --rank-prior`'s semantic pool: up to [`MAX_POOL_RESULTS`], beyond the
    /// reference cap (the command cuts to its `--limit` after the prior).
    Pool,
}

/// A retrieve request.
#[derive(Debug, Clone)]
pub struct RetrieveRequest {
    pub namespace: String,
    pub scope_ref: String,
    pub query: String,
    pub query_summary: String,
    pub max_results: usize,
    /// The bound `max_results` is held to.
    pub cap: ResultCap,
    pub timeout_seconds: f64,
    pub observed_at: String,
}

impl RetrieveRequest {
    /// `max_results` held to `1..=reference_cap` (the provider's own), or to
    /// `1..=`[`MAX_POOL_RESULTS`] for a rank-prior pool.
    pub fn limit(&self, reference_cap: usize) -> usize {
        let cap = match self.cap {
            ResultCap::Reference => reference_cap,
            ResultCap::Pool => MAX_POOL_RESULTS.max(reference_cap),
        };
        self.max_results.clamp(1, cap)
    }
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
    /// What this answer was computed from, for the `recall` command's
    /// `retrieval_snapshot_ref` (never part of a LoopX packet): the embedded store's
    /// generation digest, or the digest of what OpenViking returned. `None` when the
    /// provider cannot say (a double, a failed call).
    pub snapshot: Option<String>,
    /// Hits the provider left out for their lifecycle (retired, revoked, superseded or
    /// expired; the embedded store's [`embedded::lifecycle`]); 0 for a provider without
    /// lifecycle rows. Never part of a LoopX packet.
    pub lifecycle_skipped: usize,
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
    /// [`ContextProvider::retrieve`], or an error when the call itself is invalid (what
    /// the reference raises: bad arguments, a crashed preflight). Callers turn the error
    /// into `provider_execution_failed`. The default never fails.
    fn try_retrieve(&self, request: &RetrieveRequest) -> Result<Retrieval, ProviderError> {
        Ok(self.retrieve(request))
    }
    /// [`ContextProvider::sync`], or an error when the call itself is invalid. Ingest
    /// turns the error into `provider_sync_execution_failed`. The default never fails.
    fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
        Ok(self.sync(request))
    }
    /// The relevance score a retrieved item's provider `score` stands for (higher is
    /// more relevant), or `None` when there is none. The default passes a finite score
    /// through unchanged; the embedded store maps its BM25 rank into `[0, 1]`.
    fn relevance(&self, score: Option<f64>) -> Option<f64> {
        score.filter(|s| s.is_finite())
    }
}

/// A provider call or construction that could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The factory knows no provider with this id (`<missing>` when empty).
    #[error("unsupported context provider: {0}")]
    Unsupported(String),
    /// The provider rejected its configuration or the call's arguments.
    #[error("{0}")]
    Invalid(String),
}

/// What the factory needs to build a provider (§11.2), taken from a normalized binding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProviderConfig {
    /// `provider_id`, stripped.
    pub provider: String,
    /// OpenViking: the `ov` executable. Embedded: the store file (`~` expanded).
    pub provider_binary: Option<String>,
    pub minimum_provider_version: Option<String>,
    pub actor_peer_id: Option<String>,
    /// Embedded: the tokenizer the binding's `store_tokenizer` names (ours; `None`: the
    /// store's own).
    pub store_tokenizer: Option<embedded::Tokenizer>,
}

/// The binding key naming the embedded store's tokenizer (ours, optional).
pub const STORE_TOKENIZER_KEY: &str = "store_tokenizer";

impl ProviderConfig {
    /// Reads the factory input from a (normalized) provider binding.
    pub fn from_binding(binding: &Map) -> ProviderConfig {
        let text = |key: &str| {
            binding
                .get(key)
                .filter(|v| v.is_truthy())
                .map(|v| crate::wire::pyfmt::pystr(Some(v)))
        };
        ProviderConfig {
            provider: crate::wire::pyfmt::pystr_strip(binding.get("provider_id")),
            provider_binary: text("provider_binary"),
            minimum_provider_version: text("minimum_provider_version"),
            actor_peer_id: text("actor_peer_id")
                .map(|s| crate::wire::pyfmt::py_strip(&s).to_owned()),
            store_tokenizer: binding
                .get(STORE_TOKENIZER_KEY)
                .and_then(Value::as_str)
                .and_then(embedded::Tokenizer::from_name),
        }
    }
}

/// Builds providers from configurations. The pure recall code takes one of these (or an
/// already built provider) instead of reaching for the environment itself.
pub trait ProviderFactory {
    fn build(&self, config: &ProviderConfig) -> Result<Box<dyn ContextProvider>, ProviderError>;
}

/// The process-wide factory: `embedded` → the SQLite store, `openviking` → the OpenViking
/// adapter (the `ov` CLI).
#[derive(Debug, Clone)]
pub struct DefaultFactory {
    /// Home of the embedded store's default location.
    pub runtime_root: PathBuf,
    /// `HOME`, for `~` in an embedded `provider_binary`.
    pub env: crate::io::Env,
}

impl ProviderFactory for DefaultFactory {
    fn build(&self, config: &ProviderConfig) -> Result<Box<dyn ContextProvider>, ProviderError> {
        match config.provider.as_str() {
            embedded::PROVIDER_ID => Ok(Box::new(self.embedded_store(config))),
            openviking::PROVIDER_ID => Ok(Box::new(
                openviking::OpenVikingProvider::from_config(config)?
                    .with_staging_root(staging_root(&self.runtime_root)),
            )),
            "" => Err(ProviderError::Unsupported("<missing>".to_owned())),
            other => Err(ProviderError::Unsupported(other.to_owned())),
        }
    }
}

/// `<runtime_root>/reward-memory/staging`: where providers that read files (OpenViking)
/// stage record bytes, one private directory per run (see [`crate::io::stage_bytes`]).
pub fn staging_root(runtime_root: &Path) -> PathBuf {
    runtime_root.join("reward-memory").join("staging")
}

impl DefaultFactory {
    /// The file of the embedded store for `config`: its `provider_binary` (`~`
    /// expanded), else `<runtime_root>/reward-memory/embedded.sqlite3`.
    pub fn embedded_path(&self, config: &ProviderConfig) -> PathBuf {
        match &config.provider_binary {
            Some(file) => self.env.expand_user(file),
            None => embedded::default_store_path(&self.runtime_root),
        }
    }

    /// The embedded store of `config`: at its `provider_binary`, else at the default
    /// location, whose directories from the runtime root down are checked too.
    pub fn embedded_store(&self, config: &ProviderConfig) -> embedded::EmbeddedStore {
        match &config.provider_binary {
            Some(file) => embedded::EmbeddedStore::new(self.env.expand_user(file)),
            None => embedded::EmbeddedStore::in_runtime_root(&self.runtime_root),
        }
        .with_tokenizer(config.store_tokenizer)
    }

    /// Why the provider of `config` would refuse its store as untrusted, naming the path
    /// and the fix, for the person running the command (the packet carries only
    /// `provider_store_cause_untrusted`). `None` for other providers and trusted stores.
    pub fn store_trust_problem(&self, config: &ProviderConfig) -> Option<String> {
        (config.provider == embedded::PROVIDER_ID)
            .then(|| self.embedded_store(config).trust_problem())
            .flatten()
            .map(|problem| problem.to_string())
    }

    /// Where the provider of `config` keeps records, for a person: the embedded store's
    /// file, or the `ov` command whose own configuration names the OpenViking server.
    /// `None` for an unknown provider.
    pub fn store_location(&self, config: &ProviderConfig) -> Option<String> {
        match config.provider.as_str() {
            embedded::PROVIDER_ID => Some(self.embedded_path(config).display().to_string()),
            openviking::PROVIDER_ID => Some(format!(
                "OpenViking server of `{}` (its own configuration)",
                config.provider_binary.as_deref().unwrap_or("ov")
            )),
            _ => None,
        }
    }

    /// A factory rooted at an explicit directory (tests, library callers).
    pub fn at(runtime_root: &Path) -> DefaultFactory {
        DefaultFactory {
            runtime_root: runtime_root.to_path_buf(),
            env: crate::io::Env::default(),
        }
    }
}

impl Retrieval {
    /// An `unavailable` retrieval that searched and read nothing, for a request the
    /// provider refused before touching its store.
    pub fn refused(
        provider: &str,
        request: &RetrieveRequest,
        reason_code: &str,
        provider_version: Option<String>,
        requested_limit: usize,
    ) -> Retrieval {
        Retrieval {
            provider: provider.to_owned(),
            namespace: request.namespace.clone(),
            status: "unavailable".to_owned(),
            query_summary: request.query_summary.clone(),
            observed_at: request.observed_at.clone(),
            search_performed: false,
            read_performed: false,
            items: Vec::new(),
            reason_code: Some(reason_code.to_owned()),
            provider_version,
            latency_ms: 0,
            requested_limit,
            snapshot: None,
            lifecycle_skipped: 0,
        }
    }
}

impl Sync {
    /// The `planned` outcome of a dry run (no provider involved).
    pub fn planned(provider: &str, namespace: &str, observed_at: &str, requested: usize) -> Sync {
        Sync {
            provider: provider.to_owned(),
            namespace: namespace.to_owned(),
            status: "planned".to_owned(),
            observed_at: observed_at.to_owned(),
            requested_count: requested,
            completed_count: 0,
            write_count: 0,
            reason_code: Some("execute_required_for_resource_write".to_owned()),
            provider_version: None,
            latency_ms: 0,
            result_refs: Vec::new(),
            pending_count: 0,
            reconciliation_performed: false,
            retry_disposition: "execute_required".to_owned(),
            cause_code: None,
        }
    }

    /// The `context_provider_sync_v0` packet (§11.1): raw refs become opaque refs.
    pub fn public_packet(&self) -> Map {
        let refs: Vec<Value> = self
            .result_refs
            .iter()
            .map(|r| Value::from(opaque_provider_ref(&self.provider, &self.namespace, r)))
            .collect();
        obj! {
            "schema_version" => "context_provider_sync_v0",
            "ok" => matches!(self.status.as_str(), "completed" | "planned" | "committed_pending"),
            "provider" => self.provider.as_str(),
            "namespace" => self.namespace.as_str(),
            "visibility" => "public",
            "status" => self.status.as_str(),
            "reason_code" => self.reason_code.clone(),
            "provider_version" => self.provider_version.clone(),
            "observed_at" => self.observed_at.as_str(),
            "requested_count" => self.requested_count,
            "completed_count" => self.completed_count,
            "write_count" => self.write_count,
            "pending_count" => self.pending_count,
            "reconciliation_performed" => self.reconciliation_performed,
            "retry_disposition" => self.retry_disposition.as_str(),
            "result_refs" => Value::Array(refs.into()),
            "telemetry" => obj! {"latency_ms" => self.latency_ms},
            "external_writes_performed" => self.write_count > 0,
            "raw_provider_payload_captured" => false,
            "raw_content_captured" => false,
            "credentials_captured" => false,
        }
    }
}

impl Retrieval {
    /// The `context_provider_retrieval_v0` packet (§11.1).
    pub fn public_packet(&self) -> Map {
        let results: Vec<Value> = self
            .items
            .iter()
            .map(|item| {
                Value::Object(obj! {
                    "provider_ref" => opaque_provider_ref(&self.provider, &self.namespace, &item.resource_ref),
                    "summary" => item.summary.as_str(),
                    "score" => item.score,
                })
            })
            .collect();
        obj! {
            "schema_version" => "context_provider_retrieval_v0",
            "ok" => self.status == "completed",
            "provider" => self.provider.as_str(),
            "namespace" => self.namespace.as_str(),
            "visibility" => "public",
            "status" => self.status.as_str(),
            "reason_code" => self.reason_code.clone(),
            "provider_version" => self.provider_version.clone(),
            "query_summary" => self.query_summary.as_str(),
            "observed_at" => self.observed_at.as_str(),
            "search_performed" => self.search_performed,
            "read_performed" => self.read_performed,
            "requested_limit" => self.requested_limit,
            "result_count" => self.items.len(),
            "results" => Value::Array(results.into()),
            "telemetry" => obj! {
                "latency_ms" => self.latency_ms,
                "result_cap_applied" => self.requested_limit > 0 && self.items.len() >= self.requested_limit,
            },
            "fail_open" => true,
            "external_writes_performed" => false,
            "raw_provider_payload_captured" => false,
            "raw_content_captured" => false,
            "credentials_captured" => false,
        }
    }
}
