//! Schema-only wire types of LoopX's utility-attribution packets: the observation
//! `memory_utility_observation_v0`, the projection `memory_utility_projection_v0` and the
//! `utility-project` / `utility-observe` inputs that carry them.
//!
//! These packets are the reference's: they are built as ordered values (the observation)
//! or printed from the reducer's own typed tables (`crate::utility::reducer`'s packet) to
//! the reference's exact bytes, and read back by the readback validator rule by rule with
//! the reference's messages, so no serde type builds or parses them; the structs here only
//! describe them (hence `dead_code`). The value kinds (label, level, tier) are the domain
//! enums. Our own `utility-validate` result is typed ([`crate::utility::ValidationPacket`]).

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

const_string!(ObservationVersion, "memory_utility_observation_v0");
const_string!(ProjectionVersion, "memory_utility_projection_v0");
const_string!(ProjectionV1Version, "memory_utility_projection_v1");

/// The value kinds of the contract, described by the domain types themselves.
pub use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};

/// The four opaque scope ids of an observation or projection (sorted keys in
/// observations; the rejected fallback keeps `agent, project, corpus, surface`).
pub type UtilityScope = BTreeMap<String, String>;

/// `memory_utility_observation_v0`: one append-only attribution statement.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ObservationPacket {
    pub schema_version: ObservationVersion,
    /// `muo_` + 64 hex over the canonical identity fields.
    pub observation_id: String,
    pub scope: UtilityScope,
    /// `rma_` + 64 hex.
    pub application_receipt_id: String,
    /// Sorted 16-hex or `sha256:`-prefixed digests.
    pub memory_ref_digests: Vec<String>,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub outcome_ref: String,
    pub utility_label: UtilityLabel,
    pub attribution_level: AttributionLevel,
    pub evidence_basis: EvidenceBasis,
    /// Between 0 and 1.
    pub confidence: f64,
    pub reason_codes: Vec<String>,
    pub evidence_refs: Vec<String>,
    pub evaluator_ref: String,
    pub evaluation_version: String,
    /// The aware ISO timestamp as supplied.
    pub created_at: String,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// Bounds of a utility estimate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UtilityBounds {
    pub min: f64,
    pub max: f64,
}

/// Support of one evidence tier and label.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvidenceLabelSummary {
    pub evidence_basis: EvidenceBasis,
    pub utility_label: UtilityLabel,
    pub observation_count: u64,
    /// Noisy-OR of the confidences, rounded to 6 digits.
    pub combined_confidence: f64,
}

/// Review state of a subject: a proposal only, never a mutation.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SubjectReview {
    pub state: String,
    pub proposed_action: String,
    pub reason_codes: Vec<String>,
    pub quarantine_proposed: bool,
    pub automatic_deletion: AlwaysFalse,
    pub action_authority_granted: AlwaysFalse,
}

/// One item, set or none subject of the projection.
#[derive(JsonSchema)]
pub struct Subject {
    /// `mui_`, `mus_` or `mul_` + 64 hex.
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
}

/// The Beta posterior of a `memory_utility_reducer_v1` subject's effective tier (every
/// value rounded to six decimals; the utility scale is `2p − 1`).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SubjectPosterior {
    /// Summed weights (confidence, halved per half-life of age) of the tier's helpful,
    /// harmful and neutral observations.
    pub helpful_weight: f64,
    pub harmful_weight: f64,
    pub neutral_weight: f64,
    /// Beta(alpha, beta) = Beta(1 + helpful + neutral/2, 1 + harmful + neutral/2).
    pub alpha: f64,
    pub beta: f64,
    pub mean_utility: f64,
    /// The one-sided 90% credible bounds of the utility.
    pub lower_utility: f64,
    pub upper_utility: f64,
}

/// One subject of a `memory_utility_projection_v1`: the v0 subject's keys (with the v1
/// rules' values), then its posterior.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SubjectV1 {
    #[serde(flatten)]
    pub subject: Subject,
    pub posterior: SubjectPosterior,
}

/// One accepted observation kept in the bounded public history.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HistoryEntry {
    pub observation_id: String,
    /// `muof_` + 64 hex.
    pub observation_fingerprint: String,
    pub subject_id: String,
    pub application_receipt_id: String,
    pub outcome_ref: String,
    pub memory_ref_digests: Vec<String>,
    pub attribution_level: AttributionLevel,
    pub utility_label: UtilityLabel,
    pub evidence_basis: EvidenceBasis,
    pub confidence: f64,
    pub reason_codes: Vec<String>,
    pub evidence_refs: Vec<String>,
    pub evaluator_ref: String,
    pub evaluation_version: String,
    pub created_at: String,
}

/// A rejection record: conflicting deliveries, or the reasons of a rejected packet.
#[derive(JsonSchema)]
pub struct Rejection {
    pub observation_id: Option<String>,
    pub reason_codes: Vec<String>,
    pub delivery_count: Option<u64>,
    pub delivery_fingerprints: Option<Vec<String>>,
    pub delivery_fingerprints_truncated: Option<bool>,
    pub quarantine_proposed: Option<bool>,
    pub automatic_deletion: Option<AlwaysFalse>,
    pub action_authority_granted: Option<AlwaysFalse>,
}

/// A review proposal for one subject.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReviewProposal {
    pub subject_id: String,
    pub attribution_level: AttributionLevel,
    pub memory_ref_digests: Vec<String>,
    pub state: String,
    pub proposed_action: String,
    pub reason_codes: Vec<String>,
    pub quarantine_proposed: bool,
    pub automatic_deletion: AlwaysFalse,
    pub action_authority_granted: AlwaysFalse,
}

/// Projection status.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProjectionStatus {
    Ready,
    Empty,
    ReviewRequired,
    Rejected,
}

// With `ProjectionV1Version` and `SubjectV1` this is `memory_utility_projection_v1`, the
// same stream's packet under `memory_utility_reducer_v1` (printed by `utility-ledger
// project`).
/// `memory_utility_projection_v0`: the read-only reduction of an observation stream.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, rename = "ProjectionPacket")]
pub struct ProjectionPacket<V = ProjectionVersion, S = Subject> {
    pub ok: bool,
    pub schema_version: V,
    pub status: ProjectionStatus,
    pub projection_ready: bool,
    pub reducer_version: String,
    /// `mur_` + 64 hex.
    pub reducer_identity: String,
    pub scope: UtilityScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub accepted_observation_count: u64,
    pub duplicate_observation_count: u64,
    pub conflicting_observation_count: u64,
    pub rejected_observation_count: u64,
    pub lineage_observation_count: u64,
    pub subject_count: u64,
    pub item_subject_count: u64,
    pub set_subject_count: u64,
    pub unresolved_lineage_count: u64,
    pub last_observed_at: Nullable<String>,
    pub last_observation_id: Nullable<String>,
    pub subjects: Vec<S>,
    /// At most 256 entries.
    pub observation_history: Vec<HistoryEntry>,
    pub observation_history_truncated: bool,
    pub rejections: Vec<Rejection>,
    pub review_proposals: Vec<ReviewProposal>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// `memory_utility_projection_v1`.
pub type ProjectionPacketV1 = ProjectionPacket<ProjectionV1Version, SubjectV1>;

/// `utility-project --input`: one complete observation stream and its context.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProjectionInput {
    /// At most 1024 deliveries; the same `observation_id` may be delivered again.
    pub observations: Vec<ObservationPacket>,
    pub scope: UtilityScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    /// Defaults to `memory_utility_reducer_v0` when the key is absent.
    pub reducer_version: Option<String>,
    /// The projection this stream extends (its reducer identity must match), or `null`.
    pub previous_projection: Option<ProjectionPacket>,
}

/// `utility-observe --input`: the four facts an observation is built from.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ObserveInput {
    /// A `reward_memory_application_receipt_v0` packet, complete and unmodified.
    pub application_receipt: BTreeMap<String, serde_json::Value>,
    /// The verified work outcome (`outcome_ref` and its verification).
    pub verified_outcome: BTreeMap<String, serde_json::Value>,
    /// Scope ids and the retrieval/policy snapshot refs visible during execution.
    pub attribution_context: BTreeMap<String, serde_json::Value>,
    /// The evaluator's typed proposal: label, level, evidence basis, confidence, refs.
    pub evaluator_proposal: BTreeMap<String, serde_json::Value>,
    /// An aware ISO-8601 timestamp.
    pub created_at: String,
}
