//! `memory_utility_ledger_verify_v0`: what `verify` checked and the first difference it
//! found, from its report.

use schemars::JsonSchema;
use serde::Serialize;

use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

use super::super::rows::LEDGER_SCHEMA_VERSION;
use super::base::{BackendName, LedgerVerifyVersion};

/// What verify found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerifyReport {
    pub backend: &'static str,
    pub high_water: i64,
    pub batches: i64,
    pub partitions: i64,
    pub deliveries: i64,
    pub observations: i64,
    pub subjects: i64,
    /// The first difference between stored and recomputed state.
    pub first_difference: Option<String>,
    /// The storage's integrity check failed (then nothing was recomputed and every
    /// count is 0): its first problems.
    pub damage: Option<String>,
}

/// `verified`, `mismatch` (stored state differs from what the deliveries give) or
/// `damaged` (the file fails SQLite's `PRAGMA quick_check`; nothing was recomputed and
/// every count is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifyStatus {
    Verified,
    Mismatch,
    Damaged,
}

/// `memory_utility_ledger_verify_v0`: materialized state recomputed from raw deliveries.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerVerifyPacket {
    pub ok: bool,
    pub schema_version: LedgerVerifyVersion,
    pub status: VerifyStatus,
    #[schemars(with = "BackendName")]
    pub ledger_backend: &'static str,
    #[schemars(with = "u64")]
    pub ledger_schema_version: i64,
    #[schemars(with = "u64")]
    pub high_water_sequence: i64,
    #[schemars(with = "u64")]
    pub batch_count: i64,
    #[schemars(with = "u64")]
    pub partition_count: i64,
    #[schemars(with = "u64")]
    pub delivery_count: i64,
    #[schemars(with = "u64")]
    pub observation_count: i64,
    #[schemars(with = "u64")]
    pub subject_count: i64,
    /// The first difference found (when damaged: the integrity check's problems and what
    /// to do), null when verified.
    #[schemars(with = "Nullable<String>")]
    pub first_difference: Option<String>,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

impl LedgerVerifyPacket {
    /// The report as printed: a damaged file says what to do with it.
    pub fn new(report: &VerifyReport) -> LedgerVerifyPacket {
        let (status, difference) = match (&report.damage, &report.first_difference) {
            (Some(damage), _) => (
                VerifyStatus::Damaged,
                Some(format!(
                    "the ledger file is damaged ({damage}): copy out its readable deliveries with `utility-ledger export --salvage` and append them to a new ledger, or restore a backup"
                )),
            ),
            (None, Some(difference)) => (VerifyStatus::Mismatch, Some(difference.clone())),
            (None, None) => (VerifyStatus::Verified, None),
        };
        LedgerVerifyPacket {
            ok: difference.is_none(),
            schema_version: LedgerVerifyVersion,
            status,
            ledger_backend: report.backend,
            ledger_schema_version: LEDGER_SCHEMA_VERSION,
            high_water_sequence: report.high_water,
            batch_count: report.batches,
            partition_count: report.partitions,
            delivery_count: report.deliveries,
            observation_count: report.observations,
            subject_count: report.subjects,
            first_difference: difference,
            read_only: AlwaysTrue,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            external_writes_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }
}
