//! Schema-only wire types of the `utility-ledger` packets: the append receipt, the paged
//! ledger projection, the subject look-up and the verify report.

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use super::utility::{
    AttributionLevel, EvidenceBasis, EvidenceLabelSummary, HistoryEntry, Rejection, ReviewProposal,
    SubjectReview, UtilityBounds, UtilityLabel, UtilityScope,
};
use super::{AlwaysFalse, AlwaysTrue, Nullable};
use crate::const_string;

const_string!(AppendVersion, "memory_utility_ledger_append_v0");
const_string!(
    LedgerProjectionVersion,
    "memory_utility_ledger_projection_v0"
);
const_string!(LedgerSubjectVersion, "memory_utility_ledger_subject_v0");
const_string!(LedgerVerifyVersion, "memory_utility_ledger_verify_v0");
const_string!(LedgerReducerVersion, "memory_utility_ledger_reducer_v0");

/// `sqlite` or `postgres`.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LedgerBackend {
    Sqlite,
    Postgres,
}

/// One refused delivery of an append.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Refusal {
    /// The input line the delivery starts on (1-based).
    pub line: u64,
    /// An observation reason code (`observation_malformed`, `observation_schema_mismatch`,
    /// `observation_write_boundary_violation`, `observation_malformed_scope`,
    /// `observation_malformed_snapshot`, `observation_identity_invalid`), or
    /// `observation_not_public_safe` for a valid observation whose text looks like it holds
    /// a credential.
    pub reason_code: String,
    /// The validator's message.
    pub error: String,
}

/// `committed` (nothing refused), `committed_with_refusals` (some deliveries refused,
/// the others stored) or `refused` (every delivery refused: nothing stored; the batch's
/// counts are still recorded).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppendStatus {
    Committed,
    CommittedWithRefusals,
    Refused,
}

/// `memory_utility_ledger_append_v0`: the receipt of one committed append batch.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AppendReceipt {
    /// True when no delivery was refused.
    pub ok: bool,
    pub schema_version: AppendVersion,
    pub status: AppendStatus,
    pub ledger_backend: LedgerBackend,
    /// The storage schema version (`ledger_meta`).
    pub ledger_schema_version: u64,
    pub batch_id: u64,
    /// Records read from the input.
    pub received: u64,
    /// Deliveries of observation ids new to the ledger.
    pub appended: u64,
    /// Deliveries repeating a stored (id, fingerprint): stored, counted, no new statement.
    pub duplicate: u64,
    /// Deliveries of a new payload under a stored id: stored and quarantined.
    pub conflicting: u64,
    /// Deliveries refused by the observation validator: never stored.
    pub refused: u64,
    /// The first 64 refusals.
    pub refusals: Vec<Refusal>,
    pub refusals_truncated: bool,
    pub first_sequence: Nullable<u64>,
    pub last_sequence: Nullable<u64>,
    /// The ledger's greatest delivery sequence after the commit.
    pub high_water_sequence: u64,
    /// Always true: the receipt is printed only after the commit.
    pub durable: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// A subject of a ledger packet: the projection's 19-key subject plus its latest history.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerSubject {
    pub subject_id: String,
    pub attribution_level: AttributionLevel,
    pub memory_ref_digests: Vec<String>,
    pub utility_estimate: f64,
    pub utility_bounds: UtilityBounds,
    pub effective_utility_label: UtilityLabel,
    pub effective_evidence_basis: EvidenceBasis,
    pub confidence: f64,
    pub uncertainty: f64,
    pub support: BTreeMap<String, u64>,
    pub evidence_strength: BTreeMap<String, u64>,
    pub evidence_label_summary: Vec<EvidenceLabelSummary>,
    pub observation_count: u64,
    pub last_observed_at: String,
    pub last_observation_id: String,
    pub review: SubjectReview,
    pub read_only: AlwaysTrue,
    pub automatic_deletion: AlwaysFalse,
    pub action_authority_granted: AlwaysFalse,
    /// The subject's latest accepted observations (at most 16), oldest first.
    pub observation_history: Vec<HistoryEntry>,
    /// True when the subject has more observations than its history shows.
    pub observation_history_truncated: bool,
}

/// The page of a ledger projection.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Page {
    /// 1 to 128.
    pub limit: u64,
    pub after: Nullable<String>,
    pub returned: u64,
    /// The `--after` of the next page; null on the last page.
    pub next_after: Nullable<String>,
}

/// `ready`, `empty` or `review_required`.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LedgerProjectionStatus {
    Ready,
    Empty,
    ReviewRequired,
}

/// `memory_utility_ledger_projection_v0`: one page of a partition's projection with exact,
/// uncapped counters (printed beyond the v0 caps or when a page is asked for).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerProjectionPacket {
    pub ok: AlwaysTrue,
    pub schema_version: LedgerProjectionVersion,
    pub status: LedgerProjectionStatus,
    pub projection_ready: bool,
    pub ledger_reducer_version: LedgerReducerVersion,
    /// The subject rules' version (default `memory_utility_reducer_v0`).
    pub reducer_version: String,
    /// `mur_` + 64 hex over the ledger packet's identity (never a v0 identity).
    pub reducer_identity: String,
    pub scope: UtilityScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub delivery_count: u64,
    pub accepted_observation_count: u64,
    pub duplicate_observation_count: u64,
    pub conflicting_observation_count: u64,
    pub rejected_observation_count: u64,
    pub lineage_observation_count: u64,
    pub subject_count: u64,
    pub item_subject_count: u64,
    pub set_subject_count: u64,
    pub unresolved_lineage_count: u64,
    pub conflict_subject_count: u64,
    pub last_observed_at: Nullable<String>,
    pub last_observation_id: Nullable<String>,
    pub page: Page,
    /// 16.
    pub history_per_subject: u64,
    pub subjects: Vec<LedgerSubject>,
    /// The first 64 conflicting ids, by id.
    pub rejections: Vec<Rejection>,
    pub rejections_truncated: bool,
    /// For the subjects of this page.
    pub review_proposals: Vec<ReviewProposal>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// `found` or `not_found`.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubjectStatus {
    Found,
    NotFound,
}

/// `memory_utility_ledger_subject_v0`: the subjects of a partition that contain digests.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerSubjectPacket {
    pub ok: AlwaysTrue,
    pub schema_version: LedgerSubjectVersion,
    pub status: SubjectStatus,
    pub ledger_reducer_version: LedgerReducerVersion,
    pub reducer_version: String,
    pub reducer_identity: String,
    pub scope: UtilityScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    /// The requested digests, sorted and unique.
    pub memory_ref_digests: Vec<String>,
    /// Requested digests no subject contains.
    pub missing_memory_ref_digests: Vec<String>,
    pub subject_count: u64,
    pub history_per_subject: u64,
    /// Ordered by `subject_id`.
    pub subjects: Vec<LedgerSubject>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// `verified`, `mismatch` (stored state differs from what the deliveries give) or
/// `damaged` (the file fails SQLite's `PRAGMA quick_check`; nothing was recomputed and
/// every count is 0).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifyStatus {
    Verified,
    Mismatch,
    Damaged,
}

/// `memory_utility_ledger_verify_v0`: materialized state recomputed from raw deliveries.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerVerifyPacket {
    pub ok: bool,
    pub schema_version: LedgerVerifyVersion,
    pub status: VerifyStatus,
    pub ledger_backend: LedgerBackend,
    pub ledger_schema_version: u64,
    pub high_water_sequence: u64,
    pub batch_count: u64,
    pub partition_count: u64,
    pub delivery_count: u64,
    pub observation_count: u64,
    pub subject_count: u64,
    /// The first difference found (when damaged: the integrity check's problems and what
    /// to do), null when verified.
    pub first_difference: Nullable<String>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// The `--input` of `utility-ledger project|subject|export`: a partition.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PartitionInput {
    pub scope: UtilityScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    /// Defaults to `memory_utility_reducer_v0`.
    pub reducer_version: Option<String>,
}
