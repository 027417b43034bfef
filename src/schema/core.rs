//! Schema-only wire types of the Stage 0–2 packets and the error packet.
//!
//! These types are never built at run time; they describe the packets that the command
//! modules print, field order being key order.

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

const_string!(ErrorVersion, "reward_memory_error_v0");
const_string!(InvalidRequest, "invalid_request");
const_string!(ArchitectureVersion, "reward_memory_architecture_v0");
const_string!(DesignContract, "design_contract");
const_string!(RegistryVersion, "reward_memory_corpus_registry_v0");
const_string!(HealthVersion, "reward_memory_corpus_health_v0");
const_string!(ReviewVersion, "reward_memory_candidate_review_v0");
const_string!(CandidateVersion, "reward_memory_candidate_v0");
const_string!(
    AdapterVersion,
    "issue_fix_reward_memory_candidate_adapter_v0"
);
const_string!(RouteVersion, "reward_memory_pilot_meta_route_v0");
const_string!(DelegationVersion, "reward_memory_pilot_meta_delegation_v0");
const_string!(EvidenceAlways, "always");
const_string!(
    EvidenceWhenUserVisible,
    "when_user_visible_behavior_changes"
);
const_string!(
    EvidenceWhenQualityClaimed,
    "when_retrieval_or_memory_quality_is_claimed"
);
const_string!(
    EvidenceWhenHotPath,
    "when_hot_path_or_storage_behavior_changes"
);

/// Printed for every invalid request (exit 2).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ErrorPacket {
    pub ok: AlwaysFalse,
    pub schema_version: ErrorVersion,
    pub status: InvalidRequest,
    /// The reason, worded as the reference words it.
    pub error: String,
}

/// The five memory class ids.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClassId {
    RunBoundReward,
    HardPolicy,
    SoftPreference,
    ProceduralExperience,
    WorkingContext,
}

/// One memory class of the Stage-0 contract.
#[derive(JsonSchema)]
pub struct MemoryClass {
    pub class_id: ClassId,
    pub purpose: String,
    pub source_kinds: Vec<String>,
    pub scope_floor: Vec<String>,
    pub authority: String,
    pub future_influence: String,
    pub durability: String,
    pub supersession: String,
    pub revocation: String,
    pub expiry: String,
    pub privacy: String,
}

/// `reward-memory architecture`: the static Stage-0 contract.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArchitecturePacket {
    pub ok: AlwaysTrue,
    pub schema_version: ArchitectureVersion,
    pub status: DesignContract,
    /// Exactly five classes, in contract order.
    pub memory_classes: Vec<MemoryClass>,
    pub required_record_fields: Vec<String>,
    pub field_contracts: BTreeMap<String, serde_json::Value>,
    pub lifecycle_states: Vec<String>,
    pub routing_contract: BTreeMap<String, serde_json::Value>,
    pub precedence: Vec<String>,
    pub conflict_resolution: Vec<String>,
    pub safety_invariants: Vec<String>,
    pub existing_capability_reuse: BTreeMap<String, serde_json::Value>,
    pub provider_alignment: BTreeMap<String, serde_json::Value>,
    pub pilot_meta_delegation: PilotMetaDelegation,
    pub stage_boundaries: BTreeMap<String, String>,
    pub external_writes_performed: AlwaysFalse,
    pub raw_memory_captured: AlwaysFalse,
}

/// What a change must satisfy to be a pilot fix, in contract order.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PilotRequirement {
    ConfirmedBugSemantics,
    SingleBoundedSurface,
    NoSemanticContractChange,
    NoGenericBoundaryForSpecificPolicy,
    NamedReproduction,
    NamedValidation,
    LowOrMediumEdgeCaseComplexity,
    AllRelevanceGatedEvidencePresent,
}

/// What sends a change to the meta design gate, in contract order.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetaTrigger {
    ByDesignOrUncertainSemantics,
    SemanticContractChange,
    CrossSurfaceChange,
    GenericBoundaryForSpecificPolicy,
    HighEdgeCaseComplexity,
}

/// When each kind of evidence is required before a pilot fix.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RelevanceGatedEvidence {
    pub effect: EvidenceAlways,
    pub ux: EvidenceWhenUserVisible,
    pub benchmark: EvidenceWhenQualityClaimed,
    pub performance_cost: EvidenceWhenHotPath,
}

/// `reward_memory_pilot_meta_delegation_v0`: the pilot/meta delegation contract inside the
/// architecture packet, which `route-check` applies to one change.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PilotMetaDelegation {
    pub schema_version: DelegationVersion,
    /// The eight pilot requirements, in contract order.
    pub pilot_requires: Vec<PilotRequirement>,
    /// The five meta triggers, in contract order.
    pub meta_triggers: Vec<MetaTrigger>,
    pub relevance_gated_evidence: RelevanceGatedEvidence,
    /// `pilot_fix`, `meta_design_gate`, `hold_for_evidence`.
    pub decisions: Vec<RouteDecision>,
    /// Delegation never lets one agent act with another's authority.
    pub no_cross_agent_authority: AlwaysTrue,
}

/// Scope of a normalized corpus.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusScope {
    pub workspace_ref: String,
    pub project_ref: String,
    /// Sorted module-qualified surface ids (1–20).
    pub surface_ids: Vec<String>,
    pub user_ref: Nullable<String>,
    pub peer_ref: Nullable<String>,
    pub session_ref: Nullable<String>,
}

/// Freshness of a normalized corpus.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusFreshness {
    pub mode: String,
    pub source_revision: Nullable<String>,
    pub max_age_seconds: Nullable<u64>,
}

/// Lifecycle of a normalized corpus.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusLifecycle {
    pub state: String,
    pub supersedes: Vec<String>,
    pub superseded_by: Nullable<String>,
    pub retirement_reason: Nullable<String>,
}

/// Retrieval requirements of a corpus.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusRetrieval {
    pub index_required: bool,
    pub readback_required: bool,
    pub application_receipt_required: bool,
}

/// Maintenance contract of a corpus.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusMaintenance {
    pub writeback_triggers: Vec<String>,
    pub closure_policy: String,
    pub retirement_authority: String,
}

/// Privacy of a corpus.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusPrivacy {
    pub visibility: String,
    pub raw_content_in_registry: AlwaysFalse,
}

/// A normalized Stage-1 corpus declaration.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Corpus {
    pub corpus_id: String,
    pub class_id: ClassId,
    pub provider_id: String,
    pub owner_ref: String,
    pub source_of_truth: String,
    pub read_authority: String,
    pub write_authority: String,
    pub scope: CorpusScope,
    pub freshness: CorpusFreshness,
    pub lifecycle: CorpusLifecycle,
    pub retrieval: CorpusRetrieval,
    pub maintenance: CorpusMaintenance,
    pub privacy: CorpusPrivacy,
    pub provider_scope_ref_digest: Option<String>,
    pub read_role: Option<String>,
}

/// `reward-memory corpus-registry`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorpusRegistryPacket {
    pub ok: AlwaysTrue,
    pub schema_version: RegistryVersion,
    /// `reference_registry` for the built-in corpora.
    pub status: String,
    pub registry_role: String,
    pub corpus_count: u32,
    pub corpora: Vec<Corpus>,
    /// Class id → sorted corpus ids.
    pub class_coverage: BTreeMap<String, Vec<String>>,
    pub maintenance_contract: BTreeMap<String, String>,
    pub provider_alignment: BTreeMap<String, BTreeMap<String, String>>,
    pub raw_memory_captured: AlwaysFalse,
    pub registry_persisted: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
}

/// Scope part of a health classification.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HealthScopeCheck {
    pub project_matches: bool,
    pub surface_matches: bool,
}

/// Freshness part of a health classification.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HealthFreshnessCheck {
    pub lifecycle_state: String,
    pub source_revision_matches: bool,
    pub freshness_window_satisfied: bool,
}

/// The retrieval pipeline states, never collapsed into one.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HealthPipeline {
    pub provider_available: bool,
    pub corpus_present: bool,
    pub record_count: u64,
    pub index_required: bool,
    pub index_present: bool,
    pub retrieval_query_succeeded: bool,
    pub result_readback_verified: bool,
    pub memory_applied_with_receipt: bool,
}

/// `reward-memory health-check`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HealthPacket {
    pub ok: AlwaysTrue,
    pub schema_version: HealthVersion,
    pub corpus_id: String,
    pub class_id: ClassId,
    pub health_state: String,
    pub reason_codes: Vec<String>,
    pub scope_check: HealthScopeCheck,
    pub freshness_check: HealthFreshnessCheck,
    pub pipeline: HealthPipeline,
    pub may_apply_memory: bool,
    pub memory_patch_authority: AlwaysFalse,
    pub external_write_authorized: AlwaysFalse,
    pub raw_memory_captured: AlwaysFalse,
}

/// Source of a candidate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CandidateSource {
    pub source_kind: String,
    pub source_ref: String,
    pub actor_ref: String,
    pub actor_role: String,
}

/// Scope of a candidate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CandidateScope {
    pub workspace_ref: String,
    pub project_ref: String,
    pub surface_ids: Vec<String>,
    pub revision_ref: Nullable<String>,
}

/// The model-owned reasoning of a candidate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CandidateReasoning {
    pub summary: String,
    /// `low`, `medium` or `high`.
    pub confidence: String,
}

/// Guard observations of a candidate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CandidateGuardContext {
    pub source_freshness: String,
    pub conflict_state: String,
    pub current_artifact_verified: bool,
}

/// Lifecycle of a candidate or reviewed record.
#[derive(JsonSchema)]
pub struct CandidateLifecycle {
    pub state: String,
    pub supersedes_refs: Vec<String>,
    pub retired_reason: Option<String>,
}

/// Privacy of a candidate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CandidatePrivacy {
    pub raw_content_captured: AlwaysFalse,
}

/// A `reward_memory_candidate_v0` record.
#[derive(JsonSchema)]
pub struct CandidateRecord {
    pub schema_version: CandidateVersion,
    pub target_class: ClassId,
    pub content_summary: String,
    pub source: CandidateSource,
    pub scope: CandidateScope,
    pub reasoning: CandidateReasoning,
    pub guard_context: CandidateGuardContext,
    pub requested_action_scopes: Vec<String>,
    pub lifecycle: CandidateLifecycle,
    pub privacy: CandidatePrivacy,
    /// `candidate:` + 20 hex.
    pub candidate_ref: String,
}

/// The reviewer's compact receipt.
#[derive(JsonSchema)]
pub struct Review {
    pub reviewer_ref: String,
    pub review_ref: String,
    pub reasoning_summary: String,
}

/// The Issue Fix adapter's view of the shared candidate.
#[derive(JsonSchema)]
pub struct IssueFixAdapter {
    pub ok: bool,
    pub schema_version: AdapterVersion,
    pub issue_ref: String,
    pub surface_id: String,
    pub shared_candidate: serde_json::Value,
}

/// `reward-memory candidate-review`: a `reward_memory_candidate_review_v0` packet.
#[derive(JsonSchema)]
pub struct CandidateReviewPacket {
    pub ok: bool,
    pub schema_version: ReviewVersion,
    /// `active`, `review_ready`, `rejected`, `retired` or `no_write`.
    pub status: String,
    pub requested_decision: String,
    pub effective_decision: String,
    pub guard_passed: bool,
    pub review: Review,
    pub record: CandidateRecord,
    pub persistence_next_step: String,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    /// Present on the CLI packet: the Issue Fix adapter that built the candidate.
    pub adapter: Option<IssueFixAdapter>,
}

/// Route decisions.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteDecision {
    PilotFix,
    HoldForEvidence,
    MetaDesignGate,
}

/// `reward-memory route-check`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RoutePacket {
    pub ok: AlwaysTrue,
    pub schema_version: RouteVersion,
    pub case_ref: String,
    pub decision: RouteDecision,
    pub reason_codes: Vec<String>,
    pub required_evidence: Vec<String>,
    pub missing_required_evidence: Vec<String>,
    pub pilot_authorized: bool,
    pub meta_review_required: bool,
    pub route_check_role: String,
    pub live_reasoning_required: AlwaysTrue,
    pub memory_patch_authority: AlwaysFalse,
    pub external_write_authorized: AlwaysFalse,
    pub raw_issue_or_memory_captured: AlwaysFalse,
}
