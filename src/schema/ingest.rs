//! Schema-only wire types of the experiment route and ingest packets:
//! `reward_memory_experiment_status_v1`, `reward_memory_ingest_receipt_v0` and the packets
//! nested in a receipt (`context_provider_sync_v0`, `reward_memory_recall_v0`,
//! `issue_fix_reward_memory_execution_evidence_v0`).
//!
//! Keys that only some statuses carry are optional; field order is key order across all
//! statuses (the packets are built by ordered merges, so the order is the same for every
//! status that has the key).

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

const_string!(
    ExperimentStatusVersion,
    "reward_memory_experiment_status_v1"
);
const_string!(RouteVersion, "reward_memory_config_runtime_route_v0");
const_string!(ConfigVersion, "reward_memory_experiment_config_v1");
const_string!(IngestReceiptVersion, "reward_memory_ingest_receipt_v0");
const_string!(SyncVersion, "context_provider_sync_v0");
const_string!(RecallVersion, "reward_memory_recall_v0");
const_string!(
    EvidenceVersion,
    "issue_fix_reward_memory_execution_evidence_v0"
);
const_string!(FunctionBoundary, "function_boundary");
const_string!(InvokedRegistry, "invoked_registry");
const_string!(RegistryGoals, "registry.goals");
const_string!(ConfigPointer, "goal_repo_relative_config_pointer");
const_string!(Public, "public");

/// Experiment status values.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExperimentStatus {
    Disabled,
    AgentNotEnabled,
    ConfigMissing,
    ConfigInvalid,
    Available,
}

/// Where the status came from and whether the config was read back.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ConfigRuntimeRoute {
    pub schema_version: RouteVersion,
    pub registry_source: InvokedRegistry,
    /// `registry_role` of the registry, default `project-local`.
    pub registry_role: String,
    /// `shared_runtime` for a `global-local` registry, else `project_runtime`.
    pub runtime_scope: String,
    pub goal_source: RegistryGoals,
    pub config_source: ConfigPointer,
    /// `not_attempted`, `rejected` or `verified`.
    pub readback_status: String,
    pub exact_readback_verified: bool,
}

/// One configured surface of an available experiment.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SurfaceProfile {
    pub surface_id: String,
    pub adapter: String,
    pub corpus_count: u32,
    pub recall_profile_id: String,
}

/// `reward-memory experiment-status` (also the `experiment` key of a configured ingest).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExperimentStatusPacket {
    pub ok: AlwaysTrue,
    pub schema_version: ExperimentStatusVersion,
    pub goal_id: String,
    /// The normalized agent id.
    pub agent_id: String,
    pub experimental: bool,
    pub enabled: bool,
    pub configured_for_agent: bool,
    pub config_pointer_registered: bool,
    pub automatic_ingest: bool,
    pub automatic_recall: bool,
    pub fail_open: AlwaysTrue,
    pub config_runtime_route: ConfigRuntimeRoute,
    pub external_writes_performed: AlwaysFalse,
    pub status: ExperimentStatus,
    pub available: bool,
    /// `config_invalid` only.
    pub reason_code: Option<String>,
    pub config_schema_version: Option<ConfigVersion>,
    pub provider_id: Option<String>,
    pub corpus_count: Option<u32>,
    pub corpus_ids: Option<Vec<String>>,
    pub surface_ids: Option<Vec<String>>,
    pub surface_profiles: Option<Vec<SurfaceProfile>>,
    pub raw_content_captured: Option<AlwaysFalse>,
    /// Only when exactly one surface is configured.
    pub adapter: Option<String>,
    /// Only when exactly one surface is configured: its ingest corpus.
    pub corpus_id: Option<String>,
}

/// The policy guard of an ingest receipt.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct IngestGuard {
    pub passed: bool,
    /// Sorted, de-duplicated.
    pub reason_codes: Vec<String>,
    pub semantic_reasoning_preserved: AlwaysTrue,
    pub rule: String,
}

/// Latency of a provider call.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SyncTelemetry {
    /// Wall-clock milliseconds; 0 for a planned write.
    pub latency_ms: u64,
}

/// A `context_provider_sync_v0` packet.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SyncPacket {
    pub schema_version: SyncVersion,
    pub ok: bool,
    pub provider: String,
    pub namespace: String,
    pub visibility: Public,
    /// `planned`, `unavailable`, `completed`, `committed_pending` or `partial`.
    pub status: String,
    pub reason_code: Nullable<String>,
    pub provider_version: Nullable<String>,
    pub observed_at: String,
    pub requested_count: u32,
    pub completed_count: u32,
    pub write_count: u32,
    pub pending_count: u32,
    pub reconciliation_performed: bool,
    pub retry_disposition: String,
    /// Opaque `provider-` refs.
    pub result_refs: Vec<String>,
    pub telemetry: SyncTelemetry,
    pub external_writes_performed: bool,
    pub raw_provider_payload_captured: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    pub credentials_captured: AlwaysFalse,
}

/// Where the next explicit recall goes.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NextRecall {
    pub corpus_id: String,
    pub surface_ids: Vec<String>,
    pub mode: FunctionBoundary,
    pub automatic_recall: AlwaysFalse,
}

/// One query's public evidence.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct QueryEvidence {
    /// 16 hex.
    pub query_digest: String,
    pub query_summary: String,
    pub exact_query_exposed: AlwaysFalse,
}

/// One recalled record, by opaque ref.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecallResult {
    pub memory_ref: String,
    pub candidate_ref: String,
    pub target_class: String,
    pub content_summary: Nullable<String>,
    pub content_exposed: bool,
}

/// A `reward_memory_recall_v0` packet.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecallPacket {
    pub ok: AlwaysTrue,
    pub schema_version: RecallVersion,
    pub corpus_id: String,
    pub surface_id: String,
    pub mode: String,
    pub query_kind: String,
    pub query_evidence: Vec<QueryEvidence>,
    pub provider_id: String,
    pub result_count: u32,
    pub results: Vec<RecallResult>,
    pub result_readback_verified: bool,
    pub provider_call_count: u32,
    pub automatic_recall: AlwaysFalse,
    pub fail_open: AlwaysTrue,
    pub provider_failure_is_user_gate: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_provider_payload_captured: AlwaysFalse,
    pub raw_content_persisted: AlwaysFalse,
    /// `completed`, `empty`, `provider_unavailable` or `guard_blocked`.
    pub status: String,
    /// `guard_blocked` only.
    pub reason_codes: Option<Vec<String>>,
    /// Every other status.
    pub reason_code: Option<Nullable<String>>,
    /// `provider_unavailable` only.
    pub setup_hints: Option<BTreeMap<String, String>>,
}

/// The minimum evidence behind an Issue Fix claim.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MinimumEvidence {
    pub query_kind: String,
    pub query_evidence: Vec<QueryEvidence>,
    pub provider_call_count: u32,
    pub exact_readback_verified: bool,
    pub application_receipt: Nullable<serde_json::Value>,
}

/// An `issue_fix_reward_memory_execution_evidence_v0` packet.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExecutionEvidence {
    pub schema_version: EvidenceVersion,
    pub verified_result: String,
    pub unknowns: Vec<String>,
    pub minimum_evidence: MinimumEvidence,
    pub claim_policy: String,
    pub raw_content_captured: AlwaysFalse,
}

/// Ingest receipt statuses.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IngestStatus {
    GuardBlocked,
    Planned,
    ProviderUnavailable,
    CommittedPending,
    ReadbackUnverified,
    Activated,
}

/// `reward-memory ingest-event`: a `reward_memory_ingest_receipt_v0` with the adapter's
/// extension keys (and `experiment` in the configured form).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct IngestReceiptPacket {
    pub ok: AlwaysTrue,
    pub schema_version: IngestReceiptVersion,
    pub candidate_ref: String,
    pub corpus_id: String,
    pub policy_id: String,
    pub surface_ids: Vec<String>,
    pub guard: IngestGuard,
    pub deduplicated: bool,
    pub exact_readback_verified: bool,
    pub memory_available_for_recall: bool,
    pub fail_open: AlwaysTrue,
    pub provider_failure_is_user_gate: AlwaysFalse,
    pub grants_new_action_authority: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    pub raw_provider_payload_captured: AlwaysFalse,
    pub external_writes_performed: bool,
    /// Absent when the guard blocked.
    pub activation_ref: Option<String>,
    pub provider_ref: Option<String>,
    pub write: Option<SyncPacket>,
    pub next_recall: Option<NextRecall>,
    pub status: IngestStatus,
    /// `activated` / `readback_unverified` only.
    pub readback: Option<RecallPacket>,
    pub reason_codes: Option<Vec<String>>,
    /// Ours, embedded store only: the event's `content_summary` was longer than the
    /// record's 500 characters (the whole text is indexed for search).
    pub content_summary_shortened: Option<AlwaysTrue>,
    /// Ours, with `content_summary_shortened`: the event summary's length in characters.
    pub content_summary_chars: Option<u64>,
    pub adapter_schema_version: String,
    /// Issue Fix adapter.
    pub issue_ref: Option<Nullable<String>>,
    /// Scoped feedback adapter.
    pub event_schema_version: Option<String>,
    pub feedback_ref: Option<String>,
    pub event_summary_digest: String,
    /// Issue Fix adapter.
    pub execution_evidence: Option<ExecutionEvidence>,
    pub next_issue_fix_call: Option<String>,
    /// Scoped feedback adapter.
    pub next_reward_memory_call: Option<String>,
    /// Configured form only.
    pub experiment: Option<ExperimentStatusPacket>,
}
