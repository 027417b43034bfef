//! `memory_utility_correction_receipt_v0`: the receipt of `utility-correct`, one owner
//! correction committed to the ledger with provenance `correct`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::const_string;
use crate::utility::correction::Correction;
use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};
use crate::wire::schema::{AlwaysFalse, AlwaysTrue};

use super::super::provenance::Provenance;
use super::append::AppendReport;
use super::base::BackendName;

const_string!(
    CorrectionReceiptVersion,
    "memory_utility_correction_receipt_v0"
);

/// What the ledger did with the correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CorrectionStatus {
    /// A new observation id: the correction now counts.
    Appended,
    /// The same correction (same id and payload) was already stored: stored again,
    /// counted once.
    Duplicate,
    /// Another payload under the same id was stored before: quarantined, never counted.
    Conflicting,
}

/// `memory_utility_correction_receipt_v0`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CorrectionReceipt {
    pub ok: AlwaysTrue,
    pub schema_version: CorrectionReceiptVersion,
    pub status: CorrectionStatus,
    pub observation_id: String,
    pub corpus_id: String,
    /// The partition's scope, keys sorted.
    pub scope: BTreeMap<String, String>,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub memory_ref_digest: String,
    pub utility_label: UtilityLabel,
    pub attribution_level: AttributionLevel,
    pub evidence_basis: EvidenceBasis,
    pub reason_code: String,
    /// How the delivery is recorded: `correct` with the checkpoint's `source_ref`.
    pub provenance: Provenance,
    pub operator_ref: String,
    pub authority_ref: String,
    #[schemars(with = "BackendName")]
    pub ledger_backend: &'static str,
    #[schemars(with = "u64")]
    pub batch_id: i64,
    /// The ledger's greatest delivery sequence after the commit.
    #[schemars(with = "u64")]
    pub high_water_sequence: i64,
    /// Always true: the receipt is printed only after the commit.
    pub durable: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

impl CorrectionReceipt {
    /// The receipt of a committed correction; `None` when the append refused it (which a
    /// correction validated as the ledger validates cannot be).
    pub fn new(correction: &Correction, report: &AppendReport) -> Option<CorrectionReceipt> {
        let b = &report.batch;
        let status = if b.appended == 1 {
            CorrectionStatus::Appended
        } else if b.duplicate == 1 {
            CorrectionStatus::Duplicate
        } else if b.conflicting == 1 {
            CorrectionStatus::Conflicting
        } else {
            return None;
        };
        let o = &correction.observation;
        let scope = o
            .scope
            .ids()
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Some(CorrectionReceipt {
            ok: AlwaysTrue,
            schema_version: CorrectionReceiptVersion,
            status,
            observation_id: o.observation_id.to_string(),
            corpus_id: correction.corpus_id.clone(),
            scope,
            retrieval_snapshot_ref: o.retrieval_snapshot_ref.to_string(),
            policy_snapshot_ref: o.policy_snapshot_ref.to_string(),
            memory_ref_digest: o.memory_ref_digests.first().cloned().unwrap_or_default(),
            utility_label: o.utility_label,
            attribution_level: o.attribution_level,
            evidence_basis: o.evidence_basis,
            reason_code: o.reason_codes.first().cloned().unwrap_or_default(),
            provenance: Provenance::Correct {
                checkpoint_ref: correction.checkpoint_ref.clone(),
            },
            operator_ref: correction.operator_ref.clone(),
            authority_ref: correction.authority_ref.clone(),
            ledger_backend: report.backend,
            batch_id: b.batch_id,
            high_water_sequence: report.high_water,
            durable: AlwaysTrue,
            grants_new_action_authority: AlwaysFalse,
            provider_write_performed: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        })
    }
}
