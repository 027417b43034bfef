//! The Stage-3 recall/application seam (§10): explicit, exact-corpus recall and
//! model-owned application with a compact receipt.
//!
//! Pure modules with typed entry points, shared by `ingest-event` (readback),
//! `evaluate` and `dogfood-evaluate`. Nothing here reads files, the environment or the
//! clock: timestamps are inputs, and the provider is injected ([`ProviderSource`]).
//!
//! | step | function |
//! | --- | --- |
//! | provider binding (§10.1) | [`normalize_binding`] |
//! | recall request + read-authority checkpoint (§10.2) | [`build_recall_request`] |
//! | active record envelope (§10.3) | [`build_active_record`], [`serialize_record`] |
//! | recall execution (§10.4) | [`execute_recall`] → [`RecallSession`]; a rank-prior pool: [`fetch_recall`] |
//! | application + receipt (§10.5) | [`apply_recall`] |
//! | the agent's `apply` decision (§10.5) | [`decision::apply_input`] |
//! | receipt id (§10.6) | [`application_receipt_id`] |
//! | Issue Fix execution evidence (§10.7) | [`execution_evidence`] |
//! | the `recall` command's input, configured request and printed packet | [`command`] |
//! | `recall --rank-prior`: the setup and the re-ordering | [`prior`] |
//! | the private recall session document | [`session`] |
//! | the recall's retrieval and policy snapshot refs | [`snapshot`] |
//! | `recall --deliver-content`: the summaries handed to the caller only | [`delivery`] |
//! | the traffic events of recall, apply and outcome; `--explore` | [`traffic`] |
//!
//! The packets of §10 are LoopX's and stay ordered values built to the reference's
//! bytes; the inputs of our own commands (`recall --input`, `apply --input`) are typed
//! structs that are also their JSON Schemas ([`command::RecallInput`],
//! [`decision::Decision`]).

mod application;
mod binding;
pub mod command;
pub mod decision;
pub mod delivery;
mod evidence;
mod execute;
pub mod prior;
mod record;
mod request;
pub mod session;
pub mod snapshot;
pub mod traffic;

pub use application::{
    APPLICATION_OUTCOMES, APPLICATION_QUERY_KINDS, APPLICATION_RECEIPT_FIELDS,
    APPLICATION_RECEIPT_OPTIONAL_FIELDS, APPLICATION_RECEIPT_SCHEMA_VERSION,
    APPLICATION_RECEIPT_SCOPE_FIELDS, APPLICATION_SCHEMA_VERSION, Applier, MEMORY_DIGEST_RE,
    application_receipt_id, apply_recall, contains_non_finite, is_memory_digest,
};
pub use binding::{normalize_binding, timeout_seconds};
pub use decision::{ApplyError, ApplyOutcome};
pub use evidence::{EXECUTION_EVIDENCE_SCHEMA_VERSION, execution_evidence};
pub use execute::{
    Fetch, ProviderSource, RECALL_SCHEMA_VERSION, RecallError, RecallItem, RecallSession,
    active_item, execute_recall, fetch_recall, request_limit,
};
pub use record::{
    ACTIVE_RECORD_SCHEMA_VERSION, REVIEW_SCHEMA_VERSION, build_active_record,
    build_active_record_normalized, scope_matches, serialize_record,
};
pub use request::{
    MAX_QUERY_STEPS, MAX_RESULTS, RECALL_MODES, RECALL_REQUEST_SCHEMA_VERSION,
    build_recall_request, build_recall_request_normalized, credential_free, query_evidence,
};
pub use session::SessionError;

#[cfg(test)]
mod tests;
