//! `memory_utility_ledger_append_v0`: the receipt of one committed append, from the
//! report of what the append did.

use schemars::JsonSchema;
use serde::Serialize;

use crate::wire::keys;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

use super::super::rows::{BatchRow, LEDGER_SCHEMA_VERSION};
use super::base::{AppendVersion, BackendName};

/// One refused delivery of an append.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Refusal {
    /// The input line the delivery starts on (1-based).
    pub line: u64,
    /// An observation reason code (`observation_malformed`, `observation_schema_mismatch`,
    /// `observation_write_boundary_violation`, `observation_malformed_scope`,
    /// `observation_malformed_snapshot`, `observation_identity_invalid`), or
    /// `observation_not_public_safe` for a valid observation whose text looks like it holds
    /// a credential.
    pub reason_code: &'static str,
    /// The validator's message.
    pub error: String,
}

/// What an append did.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendReport {
    pub batch: BatchRow,
    /// The first [`super::MAX_REFUSALS`] refusals.
    pub refusals: Vec<Refusal>,
    pub high_water: i64,
    pub backend: &'static str,
}

/// `committed` (nothing refused), `committed_with_refusals` (some deliveries refused,
/// the others stored) or `refused` (every delivery refused: nothing stored; the batch's
/// counts are still recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppendStatus {
    Committed,
    CommittedWithRefusals,
    Refused,
}

impl AppendStatus {
    /// The status as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            AppendStatus::Committed => "committed",
            AppendStatus::CommittedWithRefusals => "committed_with_refusals",
            AppendStatus::Refused => "refused",
        }
    }
}

/// `committed` (nothing refused), `refused` (something refused and nothing stored) or
/// `committed_with_refusals`.
pub fn append_status(b: &BatchRow) -> AppendStatus {
    if b.refused == 0 {
        AppendStatus::Committed
    } else if b.appended + b.duplicate + b.conflicting == 0 {
        AppendStatus::Refused
    } else {
        AppendStatus::CommittedWithRefusals
    }
}

/// `memory_utility_ledger_append_v0`: the receipt of one committed append batch.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AppendReceipt {
    /// True when no delivery was refused.
    pub ok: bool,
    pub schema_version: AppendVersion,
    pub status: AppendStatus,
    #[schemars(with = "BackendName")]
    pub ledger_backend: &'static str,
    /// The storage schema version (`ledger_meta`).
    #[schemars(with = "u64")]
    pub ledger_schema_version: i64,
    #[schemars(with = "u64")]
    pub batch_id: i64,
    /// Records read from the input.
    #[schemars(with = "u64")]
    pub received: i64,
    /// Deliveries of observation ids new to the ledger.
    #[schemars(with = "u64")]
    pub appended: i64,
    /// Deliveries repeating a stored (id, fingerprint): stored, counted, no new statement.
    #[schemars(with = "u64")]
    pub duplicate: i64,
    /// Deliveries of a new payload under a stored id: stored and quarantined.
    #[schemars(with = "u64")]
    pub conflicting: i64,
    /// Deliveries refused by the observation validator: never stored.
    #[schemars(with = "u64")]
    pub refused: i64,
    /// The first 64 refusals.
    pub refusals: Vec<Refusal>,
    pub refusals_truncated: bool,
    #[schemars(with = "Nullable<u64>")]
    pub first_sequence: Option<i64>,
    #[schemars(with = "Nullable<u64>")]
    pub last_sequence: Option<i64>,
    /// The ledger's greatest delivery sequence after the commit.
    #[schemars(with = "u64")]
    pub high_water_sequence: i64,
    /// Always true: the receipt is printed only after the commit.
    pub durable: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

impl AppendReceipt {
    /// The receipt of a committed append (each refusal's error cut to
    /// [`keys::MAX_ERROR_BYTES`]).
    pub fn new(report: &AppendReport) -> AppendReceipt {
        let b = &report.batch;
        let stored = b.appended + b.duplicate + b.conflicting > 0;
        let refusals = report
            .refusals
            .iter()
            .map(|r| Refusal {
                error: keys::bound(&r.error).into_owned(),
                ..r.clone()
            })
            .collect();
        AppendReceipt {
            ok: b.refused == 0,
            schema_version: AppendVersion,
            status: append_status(b),
            ledger_backend: report.backend,
            ledger_schema_version: LEDGER_SCHEMA_VERSION,
            batch_id: b.batch_id,
            received: b.received,
            appended: b.appended,
            duplicate: b.duplicate,
            conflicting: b.conflicting,
            refused: b.refused,
            refusals,
            refusals_truncated: b.refused > report.refusals.len() as i64,
            first_sequence: stored.then_some(b.first_seq),
            last_sequence: stored.then_some(b.last_seq),
            high_water_sequence: report.high_water,
            durable: AlwaysTrue,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::Value;

    #[test]
    fn a_refusal_text_over_one_kib_is_cut_in_the_receipt() {
        let report = AppendReport {
            batch: BatchRow {
                batch_id: 1,
                first_seq: 0,
                last_seq: 0,
                received: 1,
                appended: 0,
                duplicate: 0,
                conflicting: 0,
                refused: 1,
            },
            refusals: vec![Refusal {
                line: 1,
                reason_code: "observation_malformed",
                error: "x".repeat(100_000),
            }],
            high_water: 0,
            backend: "sqlite",
        };
        let receipt =
            super::super::base::to_value(&AppendReceipt::new(&report)).expect("printable");
        let error = receipt
            .get("refusals")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .and_then(|r| r.get("error"))
            .and_then(Value::as_str)
            .expect("error text");
        assert!(
            error.len() <= keys::MAX_ERROR_BYTES,
            "{} bytes",
            error.len()
        );
        assert!(error.starts_with("xxx"), "{error}");
    }

    #[test]
    fn an_append_that_stored_nothing_is_refused() {
        let batch = |appended, duplicate, refused| BatchRow {
            appended,
            duplicate,
            refused,
            ..BatchRow::default()
        };
        assert_eq!(append_status(&batch(0, 0, 0)).as_str(), "committed");
        assert_eq!(append_status(&batch(2, 0, 0)).as_str(), "committed");
        assert_eq!(append_status(&batch(0, 0, 3)).as_str(), "refused");
        assert_eq!(
            append_status(&batch(1, 0, 3)).as_str(),
            "committed_with_refusals"
        );
        assert_eq!(
            append_status(&batch(0, 1, 3)).as_str(),
            "committed_with_refusals"
        );
    }
}
