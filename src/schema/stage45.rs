//! Schema-only wire types of the Stage-4/5 packets: the `evaluate` packet, the
//! `dogfood-evaluate` input and batch, the `operator-control` input, packet and receipt.
//!
//! These types are never built at run time; they describe what the `evaluation`,
//! `dogfood` and `operator` modules read and print, field order being key order.

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use super::core::CandidateReviewPacket;
use super::utility::ObservationPacket;
use crate::const_string;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

const_string!(EvaluationVersion, "reward_memory_evaluation_v0");
const_string!(ReleaseGateVersion, "reward_memory_release_gate_v0");
const_string!(SuiteName, "stage4_provider_neutral_contract");
const_string!(RunnerName, "loopx_reward_memory_evaluation");
const_string!(ClaimScope, "core_contract_invariants_only");
const_string!(DogfoodBatchVersion, "reward_memory_dogfood_batch_v1");
const_string!(OperatorControlVersion, "reward_memory_operator_control_v0");
const_string!(ControlReady, "control_ready");
const_string!(
    ApplicationReceiptVersion,
    "reward_memory_application_receipt_v0"
);

// ---------------------------------------------------------------------------------------
// evaluate
// ---------------------------------------------------------------------------------------

/// The eight contract cases, in execution order.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaseId {
    CompactRestartSurvival,
    ProjectModuleScopeIsolation,
    SupersedeRevokeRejection,
    StaleSourceRejection,
    MultiPersonAuthorityConditions,
    GateNonOverride,
    CandidateRankingInfluence,
    LargeEdgeCasePatchProtection,
}

/// `passed` when the release gate has no reason code.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvaluationStatus {
    Passed,
    Failed,
}

/// One executed contract case.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluationCase {
    pub case_id: CaseId,
    /// Every assertion held.
    pub passed: bool,
    pub assertion_count: u64,
    /// `null`, `assertion_failed`, or the kind of error that stopped the case.
    pub failure_kind: Nullable<String>,
    /// Wall-clock milliseconds spent in the case (floored); volatile.
    pub latency_ms: u64,
    /// UTF-8 length of the evidence as sorted compact JSON.
    pub public_evidence_bytes: u64,
    pub model_tokens: u64,
    pub storage_write_bytes: u64,
    pub provider_write_count: u64,
    pub external_write_count: u64,
    /// 1 when the evidence reports a false application.
    pub false_application_count: u64,
    pub maintainer_interruption_count: u64,
    pub user_gate_count: u64,
    /// Compact public evidence; its keys depend on the case (empty when it errored).
    pub evidence: BTreeMap<String, serde_json::Value>,
}

/// Sums over all cases.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluationMetrics {
    pub case_count: u64,
    pub passed_case_count: u64,
    pub failed_case_count: u64,
    pub assertion_count: u64,
    pub latency_ms: u64,
    pub model_tokens: u64,
    pub public_evidence_bytes: u64,
    pub storage_write_bytes: u64,
    pub provider_write_count: u64,
    pub external_write_count: u64,
    pub false_application_count: u64,
    pub maintainer_interruption_count: u64,
    pub user_gate_count: u64,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TaskOutcome {
    pub case_count: u64,
    pub passed_case_count: u64,
    pub failed_case_count: u64,
    pub assertion_count: u64,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UserExperience {
    pub maintainer_interruption_count: u64,
    pub user_gate_count: u64,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PerformanceAndCost {
    pub latency_ms: u64,
    pub model_tokens: u64,
    pub public_evidence_bytes: u64,
    pub storage_write_bytes: u64,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApplicationQuality {
    pub false_application_count: u64,
}

/// The metrics grouped by what they measure.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluationDimensions {
    pub task_outcome: TaskOutcome,
    pub user_experience: UserExperience,
    pub performance_and_cost: PerformanceAndCost,
    pub application_quality: ApplicationQuality,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    ReadyForBoundedDogfood,
    Hold,
}

#[derive(JsonSchema)]
pub enum GateDecision {
    #[serde(rename = "advance_stage_5")]
    AdvanceStage5,
    #[serde(rename = "repair_stage_4")]
    RepairStage4,
}

/// `reward_memory_release_gate_v0`: ready only when every case passed and every write,
/// false-application, interruption and user-gate count is zero.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReleaseGate {
    pub schema_version: ReleaseGateVersion,
    pub status: GateStatus,
    pub decision: GateDecision,
    /// `case_failed:<case_id>` per failed case, then `nonzero:<metric>`.
    pub reason_codes: Vec<String>,
    pub claim_scope: ClaimScope,
    pub semantic_uplift_claim_allowed: AlwaysFalse,
    pub production_rollout_allowed: AlwaysFalse,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluationBoundaries {
    pub provider_writes_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_memory_captured: AlwaysFalse,
    pub model_reasoning_replaced: AlwaysFalse,
    pub new_store_provider_or_scheduler_added: AlwaysFalse,
}

/// `reward-memory evaluate`: the Stage-4 contract suite (exit 2 unless `ok`).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvaluationPacket {
    pub ok: bool,
    pub schema_version: EvaluationVersion,
    pub status: EvaluationStatus,
    pub suite: SuiteName,
    pub runner: RunnerName,
    pub executes_real_core: AlwaysTrue,
    pub uses_surrogate_evaluator: AlwaysFalse,
    pub cases: Vec<EvaluationCase>,
    pub metrics: EvaluationMetrics,
    pub dimensions: EvaluationDimensions,
    pub release_gate: ReleaseGate,
    pub boundaries: EvaluationBoundaries,
}

// ---------------------------------------------------------------------------------------
// Stage-3 application receipt and utility observation (as dogfood reads and prints them)
// ---------------------------------------------------------------------------------------

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecallMode {
    FunctionBoundary,
    BoundedAgenticSearch,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    BusinessRecall,
    IngestVerification,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApplicationOutcome {
    Applied,
    Ignored,
    Refuted,
    Failed,
    NotAvailable,
    AvailableNotApplied,
}

pub use super::ingest::QueryEvidence;

/// `reward_memory_application_receipt_v0`, complete and unchanged: its canonical JSON is
/// hashed into `application_receipt_id`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApplicationReceipt {
    pub schema_version: ApplicationReceiptVersion,
    pub application_id: String,
    pub artifact_ref: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub mode: RecallMode,
    pub query_kind: QueryKind,
    /// At most three entries.
    pub query_evidence: Vec<QueryEvidence>,
    pub outcome: ApplicationOutcome,
    /// 0–16 canonical memory digests, sorted and unique.
    pub memory_ref_digests: Vec<String>,
    pub reasoning_summary: String,
    pub current_artifact_verified: bool,
    pub result_readback_verified: bool,
    pub provider_call_count: u64,
    pub model_reasoning_preserved: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    pub retrieval_snapshot_ref: Option<String>,
    pub policy_snapshot_ref: Option<String>,
}

// ---------------------------------------------------------------------------------------
// dogfood-evaluate
// ---------------------------------------------------------------------------------------

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DomainFamily {
    IssueFix,
    Loopx,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    Applied,
    NotApplied,
    Refuted,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlAction {
    Edit,
    Retire,
}

/// The verified real module outcome a dogfood observation reports.
#[derive(JsonSchema)]
pub struct ModuleOutcomeInput {
    /// Must equal the application receipt's `artifact_ref`.
    pub artifact_ref: String,
    pub outcome_verified: AlwaysTrue,
    pub outcome_ref: String,
    pub outcome_status: String,
    /// Compact public-safe text (≤360).
    pub summary: String,
}

/// Non-negative integer costs of one observation.
#[derive(JsonSchema)]
pub struct Cost {
    pub latency_ms: u64,
    pub model_tokens: u64,
    pub provider_call_count: u64,
}

/// Maintainer intervention; `summary` is required only when `count` > 0.
#[derive(JsonSchema)]
pub struct InterventionInput {
    pub count: u64,
    pub summary: Option<String>,
}

/// Optional bot feedback; `summary` is required only when `captured`.
#[derive(JsonSchema)]
pub struct BotFeedbackInput {
    pub captured: bool,
    pub summary: Option<String>,
}

/// The four scope ids of a utility attribution context.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UtilityScope {
    pub agent_id: String,
    pub project_id: String,
    pub corpus_id: String,
    pub surface_id: String,
}

/// Trusted attribution context supplied by the execution boundary.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AttributionContext {
    pub scope: UtilityScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

/// A request to attribute utility to the applied memory. Any defect makes the
/// evaluation `rejected`; it never fails the observation.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UtilityAttributionInput {
    pub context: AttributionContext,
    /// The untrusted evaluator proposal: `scope, application_id, artifact_ref,
    /// outcome_ref, outcome_status, retrieval_snapshot_ref, policy_snapshot_ref,
    /// memory_ref_digests, utility_label, attribution_level, evidence_basis, confidence,
    /// reason_codes, evidence_refs, evaluator_ref, evaluation_version`.
    pub proposal: BTreeMap<String, serde_json::Value>,
    /// ISO timestamp with a UTC offset.
    pub created_at: String,
}

/// One compact real-module observation bound to a Stage-3 application receipt.
#[derive(JsonSchema)]
pub struct DogfoodObservation {
    pub raw_content_captured: AlwaysFalse,
    pub domain_family: DomainFamily,
    /// `issue_fix.…` or `loopx.…`, matching the family.
    pub domain_id: String,
    pub application_receipt: ApplicationReceipt,
    pub module_outcome: ModuleOutcomeInput,
    pub cost: Cost,
    pub intervention: InterventionInput,
    /// Missing or `null` means not captured.
    pub bot_feedback: Option<BotFeedbackInput>,
    /// Present (even `null`) requests a utility evaluation.
    pub utility_attribution: Option<UtilityAttributionInput>,
}

/// `dogfood-evaluate --input`: at most 24 observations and 8 operator control receipts.
#[derive(JsonSchema)]
pub struct DogfoodInput {
    pub observations: Vec<DogfoodObservation>,
    pub operator_controls: Vec<OperatorControlReceipt>,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Verification {
    pub result_readback_verified: bool,
    pub current_artifact_verified: bool,
}

/// The application side of a receipt entry.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReceiptApplication {
    pub application_id: String,
    pub application_receipt_id: String,
    pub artifact_ref: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub outcome: ApplicationOutcome,
    /// Derived from `outcome`, never supplied by the caller.
    pub disposition: Disposition,
    pub memory_ref_digests: Vec<String>,
    pub verification: Verification,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReceiptModuleOutcome {
    pub verified: AlwaysTrue,
    pub outcome_ref: String,
    pub outcome_status: String,
    pub summary: String,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UtilityEvaluationStatus {
    Accepted,
    Rejected,
    NotRequested,
}

/// `{status: accepted}` or `{status, reason_code: utility_attribution_<status>}`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UtilityEvaluation {
    pub status: UtilityEvaluationStatus,
    pub reason_code: Option<String>,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReceiptUtility {
    pub evaluation: UtilityEvaluation,
    /// The observation when accepted, else `null`.
    pub observation: Nullable<ObservationPacket>,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReceiptIntervention {
    pub count: u64,
    pub summary: Nullable<String>,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReceiptBotFeedback {
    pub captured: bool,
    pub summary: Nullable<String>,
}

/// One compact `reward_memory_dogfood_receipt_v1` in the batch.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DogfoodReceiptEntry {
    /// `dogfood:` + 20 hex over the application settlement.
    pub receipt_id: String,
    pub domain_family: DomainFamily,
    pub domain_id: String,
    pub application: ReceiptApplication,
    pub module_outcome: ReceiptModuleOutcome,
    pub utility: ReceiptUtility,
    pub cost: Cost,
    pub intervention: ReceiptIntervention,
    pub bot_feedback: ReceiptBotFeedback,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DogfoodMetrics {
    pub receipt_count: u64,
    pub issue_fix_receipt_count: u64,
    pub loopx_domain_count: u64,
    pub applied_count: u64,
    pub not_applied_count: u64,
    pub refuted_count: u64,
    pub utility_observation_count: u64,
    pub utility_helpful_count: u64,
    pub utility_harmful_count: u64,
    pub utility_neutral_count: u64,
    pub utility_unknown_count: u64,
    pub utility_rejected_count: u64,
    pub utility_not_requested_count: u64,
    pub latency_ms: u64,
    pub model_tokens: u64,
    pub provider_call_count: u64,
    pub intervention_count: u64,
    pub bot_feedback_count: u64,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DogfoodBoundaries {
    pub semantic_uplift_claim_allowed: AlwaysFalse,
    pub production_rollout_allowed: AlwaysFalse,
    pub automatic_recall_enabled: AlwaysFalse,
    pub new_store_provider_or_scheduler_added: AlwaysFalse,
    pub operator_write_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    ReadyForBoundedIssueFixPilot,
    Hold,
}

/// `reward-memory dogfood-evaluate`: bounded Issue Fix pilot readiness (exit 2 on hold).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DogfoodBatchPacket {
    pub ok: bool,
    pub schema_version: DogfoodBatchVersion,
    pub status: BatchStatus,
    /// `stage4_release_gate_not_ready`, `issue_fix_outcome_missing`,
    /// `two_loopx_domains_required`, `application_disposition_missing:<d>`,
    /// `operator_control_missing:<a>`, in that order.
    pub reason_codes: Vec<String>,
    pub stage4_gate_verified: bool,
    pub loopx_domains: Vec<String>,
    pub application_dispositions: Vec<Disposition>,
    pub operator_controls: Vec<ControlAction>,
    pub metrics: DogfoodMetrics,
    pub receipts: Vec<DogfoodReceiptEntry>,
    pub boundaries: DogfoodBoundaries,
}

// ---------------------------------------------------------------------------------------
// operator-control
// ---------------------------------------------------------------------------------------

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultState {
    Candidate,
    Retired,
}

/// The `reward_memory_operator_control_v0` receipt a dogfood batch counts.
#[derive(JsonSchema)]
pub struct OperatorControlReceipt {
    pub schema_version: OperatorControlVersion,
    pub control_ref: String,
    pub action: ControlAction,
    pub effective_action: ControlAction,
    pub operator_ref: String,
    pub authority_ref: String,
    pub authority_source_ref: String,
    pub authority_verified: AlwaysTrue,
    pub corpus_id: String,
    /// First 16 hex of SHA-256 of the original `candidate_ref`.
    pub prior_candidate_ref_digest: String,
    /// Same for the decision record's `candidate_ref`.
    pub result_candidate_ref_digest: String,
    pub result_state: ResultState,
    pub reasoning_summary: String,
    pub provider_write_performed: AlwaysFalse,
    pub readback_verified: AlwaysFalse,
    pub next_step: String,
    pub grants_new_action_authority: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
}

/// `reward-memory operator-control`: the prepared decision and its receipt (no write).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OperatorControlPacket {
    pub ok: AlwaysTrue,
    pub schema_version: OperatorControlVersion,
    pub status: ControlReady,
    /// The shared candidate-review step applied to the reviewed record.
    pub decision: CandidateReviewPacket,
    pub receipt: OperatorControlReceipt,
}

/// The verified operator authority for one control.
#[derive(JsonSchema)]
pub struct OperatorCheckpoint {
    pub verified: AlwaysTrue,
    pub operator_ref: String,
    /// The corpus owner for `edit`, its retirement authority for `retire`.
    pub authority_ref: String,
    pub source_ref: String,
    pub corpus_id: String,
    pub project_ref: String,
    pub action: ControlAction,
}

/// `operator-control --input`.
#[derive(JsonSchema)]
pub struct OperatorControlInput {
    /// An active, guard-passed `reward_memory_candidate_review_v0` packet.
    pub reviewed_record: CandidateReviewPacket,
    /// The Stage-1 corpus declaration the record belongs to.
    pub corpus: BTreeMap<String, serde_json::Value>,
    pub operator_checkpoint: OperatorCheckpoint,
}
