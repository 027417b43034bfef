//! Schema-only wire types of the Stage-3 packets: the `recall` packet (with the command's
//! relevance, rank, session and rank-prior fields) and the `apply` packet.
//!
//! Both embed LoopX's §10 packets (`reward_memory_recall_v0`, the application and its
//! receipt) byte for byte: [`crate::recall`] builds them as ordered values from the
//! reference's own packet, so no serde type builds them and the structs here only
//! describe them (hence `dead_code`). Their rank-prior parts are the typed
//! [`crate::ranking::prior::RankPriorPacket`] and [`CandidateFetch`]; the inputs
//! (`recall --input`, `apply --input`) are typed in [`crate::recall`].

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use super::ingest::QueryEvidence;
use super::stage45::{ApplicationOutcome, ApplicationReceiptVersion, QueryKind, RecallMode};
use crate::const_string;
use crate::ranking::prior::RankPriorPacket;
use crate::recall::command::CandidateFetch;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

const_string!(RecallVersion, "reward_memory_recall_v0");
const_string!(ApplicationVersion, "reward_memory_application_v0");

/// One recalled record, by opaque ref, with what the `recall` command adds.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecallResult {
    /// `provider-` + 20 hex: opaque, never the raw provider ref.
    pub memory_ref: String,
    pub candidate_ref: String,
    pub target_class: String,
    pub content_summary: Nullable<String>,
    pub content_exposed: bool,
    /// 16 hex: the digest application receipts and observations carry.
    pub memory_ref_digest: String,
    /// The provider's relevance (embedded: `x/(1+x)` of the negated BM25 rank, in
    /// `[0, 1)`; OpenViking: its score as it comes); null when the provider gave none.
    pub relevance_score: Nullable<f64>,
    /// 1-based position in this packet (after the rank prior when it was applied).
    pub rank: u32,
    /// `--deliver-content` (always in the MCP server's recall tool) only: the memory's
    /// text for the caller.
    pub delivered_content: Option<DeliveredContent>,
}

const_string!(
    DeliveredContentVersion,
    "reward_memory_delivered_content_v0"
);
const_string!(CallerPrivate, "caller_private");

/// The content summary of a recalled memory, delivered to the caller that asked for it
/// (`recall --deliver-content`): printed in this packet only, never written to the recall
/// session, the application receipt, the traffic log or the ledger.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DeliveredContent {
    pub schema_version: DeliveredContentVersion,
    /// For the caller only: do not forward it where the corpus's privacy does not allow.
    pub visibility: CallerPrivate,
    /// Always false: this binary keeps no copy of it.
    pub persisted: AlwaysFalse,
    /// The active record's summary (at most 500 characters of compact text).
    pub content_summary: String,
}

/// `reward-memory recall`: a `reward_memory_recall_v0` packet (§10.4 fields and order)
/// followed by the command's session and rank-prior fields. With `--rank-prior` the
/// results are the first `--limit` of the fetched pool, `result_count` counts them and
/// `provider_call_count` the calls that fetched it.
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
    /// `rms_` + 32 hex when the recall completed with results, else null.
    pub recall_session_ref: Nullable<String>,
    /// When `apply` stops accepting the session.
    pub recall_session_expires_at: Nullable<String>,
    /// Why there is no session: `recall_not_completed` (nothing to apply),
    /// `recall_session_store_untrusted` (a directory of the session store or the session
    /// key is a link, another user's or writable by others; stderr names it) or
    /// `recall_session_store_unavailable` (the runtime root is not writable); the recall
    /// itself is unaffected either way. Null when a session was stored.
    pub recall_session_reason_code: Nullable<String>,
    pub rank_prior_applied: bool,
    /// Why the prior was not applied (`rank_prior_not_requested`, `recall_not_completed`,
    /// `partition_corpus_not_recalled`, `rank_prior_evaluation_missing`,
    /// `ranking_evaluation_profile_mismatch`, `ranking_evaluation_not_qualified`,
    /// `relevance_scores_unavailable`, `relevance_scores_unusable`,
    /// `utility_ledger_unavailable`), or null when applied.
    pub rank_prior_reason_code: Nullable<String>,
    #[schemars(with = "Nullable<RankPriorPacket>")]
    pub rank_prior: Option<RankPriorPacket>,
    /// `--rank-prior` only (absent otherwise): the profile's semantic pool the recall
    /// fetched, and how many of it `--limit` cut after the prior.
    pub candidate_fetch: Option<CandidateFetch>,
    /// `retrieval:<provider>:<32 hex>`: what the provider's answer was computed from
    /// (the embedded store's generation, the digest of what OpenViking returned); the
    /// session keeps it for the receipt. Null without a completed recall, or when the
    /// provider reported no snapshot.
    pub retrieval_snapshot_ref: Nullable<String>,
    /// `policy:<32 hex>`: the digest of the surface route's settings, the answering
    /// corpus, its binding and standing policy and, when it was applied, the rank-prior
    /// profile. Null without a completed recall.
    pub policy_snapshot_ref: Nullable<String>,
    /// Hits the provider left out because their record is retired, revoked, superseded
    /// or expired (a superseded record's active successor is recalled in its place);
    /// 0 for a provider without lifecycle rows (OpenViking) or a recall that did not
    /// reach the provider.
    #[schemars(with = "u32")]
    pub lifecycle_skipped_count: usize,
}

/// The receipt `apply` prints: `reward_memory_application_receipt_v0` (§10.5) with this
/// port's scope fields and the recall's snapshot refs, complete and unchanged (its
/// canonical JSON is hashed into `application_receipt_id`). Each added field is absent
/// when the session has no value for it (the explicit form has no agent or project).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AppliedReceipt {
    pub schema_version: ApplicationReceiptVersion,
    pub application_id: String,
    pub artifact_ref: String,
    /// The agent of the route that produced the recall (this port's addition).
    pub agent_id: Option<String>,
    /// The project (`project_ref`) of the corpus that answered (this port's addition).
    pub project_id: Option<String>,
    pub corpus_id: String,
    pub surface_id: String,
    /// The recall's `retrieval_snapshot_ref`.
    pub retrieval_snapshot_ref: Option<String>,
    /// The recall's `policy_snapshot_ref`.
    pub policy_snapshot_ref: Option<String>,
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
}

/// `reward-memory apply`: the §10.5 application packet, its receipt id and the session.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApplicationPacket {
    pub ok: AlwaysTrue,
    pub schema_version: ApplicationVersion,
    /// The receipt outcome (`applied`, `ignored`, `refuted`; `failed`,
    /// `not_available`, `available_not_applied` on the fail-open paths).
    pub status: String,
    /// The command records decisions, not outputs: always null.
    pub output: Nullable<serde_json::Value>,
    pub receipt: AppliedReceipt,
    pub fail_open_preserved_base: bool,
    /// `rma_` + 64 hex of the receipt's canonical JSON (§10.6).
    pub application_receipt_id: String,
    pub recall_session_ref: String,
}
