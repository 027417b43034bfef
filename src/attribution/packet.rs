//! `memory_utility_attribution_receipt_v0`: what one `utility-attribute` run did, per
//! receipt and per evaluator, with the ledger's high-water sequence afterwards.

use schemars::JsonSchema;
use serde::Serialize;

use crate::wire::schema::{AlwaysTrue, Nullable};

crate::const_string!(
    AttributionReceiptVersion,
    "memory_utility_attribution_receipt_v0"
);

/// What became of one evaluator's attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Its observations were appended to the ledger.
    Appended,
    /// The ledger already held them (same observation ids): nothing new.
    Duplicate,
    /// Its sample rate left this attribution out.
    SampledOut,
    /// Its quota for the window is used up; it did not run.
    QuotaExhausted,
    /// It ran past its timeout and was killed with its process group.
    Timeout,
    /// Its output was not one valid proposal object (or too large).
    Malformed,
    /// Its program is missing or cannot be run.
    Unavailable,
    /// Its proposal claims what it may not (a tier above its maximum,
    /// `owner_correction`, evidence it was not given) or the receipt binds no memory.
    Refused,
    /// Not run: the selection did not pick this attribution (controlled replay runs only
    /// for set-level outcomes).
    NotSelected,
}

/// One evaluator's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluatorResult {
    pub evaluator_id: String,
    pub status: Status,
    /// A reason code, or `null`.
    #[schemars(with = "Nullable<String>")]
    pub reason: Option<String>,
    /// The observations it produced (appended or duplicate), sorted.
    pub observation_ids: Vec<String>,
}

/// The four scope ids of the partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScopeIds {
    pub agent_id: String,
    pub project_id: String,
    pub corpus_id: String,
    pub surface_id: String,
}

/// The ledger partition the observations land in (the shape `--partition` reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Partition {
    pub scope: ScopeIds,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

/// The attribution of one receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Attribution {
    pub application_receipt_id: String,
    pub outcome_ref: String,
    /// `succeeded`, `failed` or `partial`.
    pub outcome_status: String,
    pub partition: Partition,
    pub evaluators: Vec<EvaluatorResult>,
}

/// What `--pending` did with the queue (all zero without `--pending`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PendingSummary {
    /// Entries settled (their outcome was given and every evaluator finished).
    pub settled: u64,
    /// Entries still waiting (no outcome given yet, or beyond `--max`).
    pub waiting: u64,
    /// Entries past their window, moved aside to `attribution-expired/`.
    pub expired: Vec<String>,
    /// Outcome lines naming a receipt with no pending entry (attributed anyway; the
    /// ledger keeps it idempotent).
    pub not_pending: u64,
}

/// `memory_utility_attribution_receipt_v0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AttributionReceipt {
    pub ok: AlwaysTrue,
    pub schema_version: AttributionReceiptVersion,
    pub profile_id: String,
    pub attributions: Vec<Attribution>,
    pub pending: PendingSummary,
    /// The ledger's high-water sequence after the run.
    pub high_water_sequence: i64,
}
