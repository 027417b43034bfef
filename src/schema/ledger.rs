//! The utility ledger's packets for [`super::all`]: the typed packets themselves
//! ([`crate::ledger::packets`], [`crate::ledger::PartitionInput`]), the projection and
//! subject packets instantiated with what they embed of the LoopX projection contract.
//!
//! That embedded part keeps LoopX's bytes (the reducer's typed printer makes it, as
//! ordered values), so its description stays here, schema-only: a [`LedgerSubject`] is
//! the projection's subject ([`super::utility`]) plus the ledger's history keys; conflict
//! records and review proposals are LoopX's [`Rejection`] and [`ReviewProposal`].

use std::collections::BTreeMap;

use schemars::JsonSchema;

use super::utility::{
    AttributionLevel, EvidenceBasis, EvidenceLabelSummary, HistoryEntry, Rejection, ReviewProposal,
    Subject, SubjectPosterior, SubjectReview, UtilityBounds, UtilityLabel,
};
use crate::ledger::{Provenance, packets};
use crate::wire::schema::{AlwaysFalse, AlwaysTrue};

pub use crate::ledger::PartitionInput;
pub use crate::ledger::packets::{
    AppendReceipt, CorrectionReceipt, LedgerReviewPacket, LedgerVerifyPacket,
};

/// `memory_utility_ledger_projection_v0` as described: its subjects, conflict records and
/// review proposals are LoopX's.
pub type LedgerProjectionPacket =
    packets::LedgerProjectionPacket<LedgerSubject, Rejection, ReviewProposal>;

/// `memory_utility_ledger_subject_v0` as described: its history entries also say how
/// each delivery arrived.
pub type LedgerSubjectPacket = packets::LedgerSubjectPacket<LedgerSubjectWithProvenance>;

/// `memory_utility_ledger_projection_v1` as described: the v0 page with v1 subjects.
pub type LedgerProjectionPacketV1 = packets::LedgerProjectionPacket<
    LedgerSubjectV1,
    Rejection,
    ReviewProposal,
    packets::LedgerProjectionV1Version,
>;

/// `memory_utility_ledger_subject_v1` as described: the v0 packet with v1 subjects.
pub type LedgerSubjectPacketV1 =
    packets::LedgerSubjectPacket<LedgerSubjectWithProvenanceV1, packets::LedgerSubjectV1Version>;

/// A subject of a v1 ledger page: the projection's v1 subject plus its latest history.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // Schema-only: built as `packets::SubjectWithHistory`.
pub struct LedgerSubjectV1 {
    #[serde(flatten)]
    pub subject: Subject,
    pub posterior: SubjectPosterior,
    /// The subject's latest accepted observations (at most 16), oldest first.
    pub observation_history: Vec<HistoryEntry>,
    /// True when the subject has more observations than its history shows.
    pub observation_history_truncated: bool,
}

/// A subject of `memory_utility_ledger_subject_v1`: [`LedgerSubjectV1`] whose history
/// entries carry their provenance.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // Schema-only: built as `packets::SubjectWithHistory`.
pub struct LedgerSubjectWithProvenanceV1 {
    #[serde(flatten)]
    pub subject: Subject,
    pub posterior: SubjectPosterior,
    /// The subject's latest accepted observations (at most 16), oldest first.
    pub observation_history: Vec<LedgerHistoryEntry>,
    /// True when the subject has more observations than its history shows.
    pub observation_history_truncated: bool,
}

/// A subject of a ledger packet: the projection's 19-key subject plus its latest history.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // Schema-only: built as `packets::SubjectWithHistory`.
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

/// A subject of `memory_utility_ledger_subject_v0`: [`LedgerSubject`] whose history
/// entries carry their provenance.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, rename = "LedgerSubjectWithProvenance")]
#[allow(dead_code)] // Schema-only: built as `packets::SubjectWithHistory`.
pub struct LedgerSubjectWithProvenance {
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
    pub observation_history: Vec<LedgerHistoryEntry>,
    /// True when the subject has more observations than its history shows.
    pub observation_history_truncated: bool,
}

/// A history entry of `memory_utility_ledger_subject_v0`: LoopX's [`HistoryEntry`] plus
/// how its delivery arrived in the ledger.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // Schema-only: built by the ledger's subject read.
pub struct LedgerHistoryEntry {
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
    /// How the delivery arrived: `import` (`utility-ledger append`, and every delivery
    /// stored before provenance was recorded), `attribute` (with the evaluator id) or
    /// `correct` (with the operator checkpoint ref).
    pub provenance: Provenance,
}

/// The `--input` of `utility-correct` (`memory_utility_correction_input`).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // Schema-only: read by `contract::correction::build_correction`.
pub struct CorrectionInput {
    /// A corpus declaration, as `operator-control` takes it (active).
    pub corpus: BTreeMap<String, serde_json::Value>,
    /// A verified operator checkpoint of the corpus (`corpus_id`, `project_ref`), with
    /// `action: "correct"` and `authority_ref` the corpus `owner_ref`; its `source_ref`
    /// becomes the delivery's provenance ref.
    pub operator_checkpoint: BTreeMap<String, serde_json::Value>,
    /// `{scope, retrieval_snapshot_ref, policy_snapshot_ref}`; `scope.corpus_id` is the
    /// corpus.
    pub partition: BTreeMap<String, serde_json::Value>,
    /// The corrected memory: 16 lowercase hex.
    pub memory_ref_digest: String,
    pub utility_label: UtilityLabel,
    /// One reason code (a token).
    pub reason_code: String,
    /// Up to 15 further evidence refs (the checkpoint's `source_ref` is always added).
    pub evidence_refs: Option<Vec<String>>,
    /// An aware ISO timestamp.
    pub created_at: String,
}
