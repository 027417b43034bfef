//! Schema-only wire types of `operator-control --execute`: the
//! `reward_memory_lifecycle_receipt_v0` receipt of a lifecycle change on the store
//! ([`crate::contract::lifecycle`]), field order being key order.

#![allow(dead_code)]

use schemars::JsonSchema;

use crate::const_string;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

const_string!(
    LifecycleReceiptVersion,
    "reward_memory_lifecycle_receipt_v0"
);
const_string!(Refused, "refused");

/// The control asked for.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutedAction {
    Edit,
    Retire,
    Revoke,
}

/// The change on the store: an edit is a supersession.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleChange {
    Retire,
    Revoke,
    Supersede,
}

/// How a change that reached the store (or the provider check) ended.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PerformedStatus {
    /// Written (or found already written: `deduplicated`) and read back exactly.
    Applied,
    /// Written, but the fresh read did not return exactly what was written.
    ReadbackUnverified,
    /// The store could not be used, or the provider has no lifecycle contract
    /// (`provider_lifecycle_contract_absent`); nothing was written.
    ProviderUnavailable,
    /// The target is not in the store (`lifecycle_target_not_found`), no longer active
    /// (`lifecycle_target_not_active`) or the successor's ref holds other bytes
    /// (`provider_sync_revision_conflict`); nothing was written.
    Refused,
}

/// `operator-control --execute`: the receipt of a planned change. `ok` only when
/// `applied`; a retry of the same `control_ref` is `applied` with `deduplicated`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PerformedReceipt {
    pub ok: bool,
    pub schema_version: LifecycleReceiptVersion,
    pub status: PerformedStatus,
    pub reason_code: Nullable<String>,
    /// The store's public-safe cause code when it could not be used.
    pub cause_code: Nullable<String>,
    pub goal_id: String,
    pub agent_id: String,
    pub action: ExecutedAction,
    pub lifecycle_change: LifecycleChange,
    pub control_ref: String,
    pub corpus_id: String,
    pub provider_id: String,
    pub operator_ref: String,
    pub authority_ref: String,
    pub authority_source_ref: String,
    pub authority_verified: AlwaysTrue,
    pub target_candidate_ref: String,
    /// Opaque `provider-<hex>` ref of the target record (null when not found).
    pub target_memory_ref: Nullable<String>,
    /// A supersession's successor (null otherwise).
    pub successor_candidate_ref: Nullable<String>,
    pub successor_memory_ref: Nullable<String>,
    /// The target's state before the change: `active`, `retired`, `revoked`,
    /// `superseded`.
    pub prior_state: Nullable<String>,
    pub result_state: Nullable<String>,
    /// The appended lifecycle row (its id in the store).
    pub lifecycle_sequence: Nullable<i64>,
    pub observed_at: String,
    pub provider_write_performed: bool,
    pub deduplicated: bool,
    pub readback_verified: bool,
    /// The old record's bytes are kept; its state changed by an appended row.
    pub history_kept: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// `operator-control --execute`: a control refused before the store was touched
/// (`operator_control_corpus_not_configured`, `operator_checkpoint_other_corpus`,
/// `operator_checkpoint_authority_mismatch`, `operator_control_invalid`,
/// `operator_control_guard_blocked`, `experiment_unavailable`).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RefusedReceipt {
    pub ok: AlwaysFalse,
    pub schema_version: LifecycleReceiptVersion,
    pub status: Refused,
    pub reason_code: String,
    /// What to fix.
    pub message: String,
    pub goal_id: String,
    pub agent_id: String,
    pub action: ExecutedAction,
    pub control_ref: String,
    pub provider_write_performed: AlwaysFalse,
    pub readback_verified: AlwaysFalse,
    pub grants_new_action_authority: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// `reward_memory_lifecycle_receipt_v0`: a performed or a refused control.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum LifecycleReceipt {
    Performed(PerformedReceipt),
    Refused(RefusedReceipt),
}
