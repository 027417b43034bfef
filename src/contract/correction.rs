//! The admission of an owner correction (`utility-correct`, ours, not LoopX's): one
//! `owner_correction` item observation for one memory digest in one partition, admitted
//! only under an operator checkpoint that the corpus declaration authorizes: the checks
//! of `operator-control` (`operator::checkpoint_authority`) with the action `correct`
//! and the corpus owner (`owner_ref`) as the authority.
//!
//! Owns the correction input (`memory_utility_correction_input`) and its checks; the
//! admitted [`Correction`] (the observation, normalized by
//! [`crate::utility::observation::validate_observation`] as `utility-ledger append`
//! validates it, and the refs its provenance and receipt carry) is the utility layer's.
//! Pure: it stores nothing (the `utility-correct` handler appends the observation with
//! provenance `correct`) and reads no clock (`created_at` is input).

use crate::contract::{operator, registry};
use crate::obj;
use crate::utility::correction::{CORRECTION_VERSION, Correction};
use crate::utility::observation::{
    AttributionLevel, EvidenceBasis, MAX_EVIDENCE_REFS, Observation, UtilityLabel,
    attribution_context, memory_ref_digests, validate_observation,
};
use crate::wire::digest;
use crate::wire::json::{Text, Value};
use crate::wire::text::{self, FieldError};
use crate::wire::timestamp;

/// The checkpoint `action` an owner correction needs.
pub const CORRECTION_ACTION: &str = "correct";
/// The confidence of an owner correction: the owner's own judgment.
pub const CORRECTION_CONFIDENCE: f64 = 1.0;

/// The keys of a correction input.
pub const CORRECTION_FIELDS: [&str; 8] = [
    "corpus",
    "operator_checkpoint",
    "partition",
    "memory_ref_digest",
    "utility_label",
    "reason_code",
    "evidence_refs",
    "created_at",
];

/// Why a correction was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorrectionError {
    /// The corpus declaration or the operator checkpoint does not authorize the
    /// correction (the wording is `operator-control`'s).
    #[error("{0}")]
    Unauthorized(FieldError),
    /// The input is malformed.
    #[error("{0}")]
    Invalid(FieldError),
}

fn invalid(message: impl Into<String>) -> CorrectionError {
    CorrectionError::Invalid(FieldError(message.into()))
}

/// Checks the authority, then the correction itself, and builds its observation.
///
/// Order: the input's keys; the corpus declaration (normalized as `operator-control`
/// does, active); the checkpoint (`operator-control`'s checks, action `correct`,
/// authority the corpus owner); then the partition (`{scope, retrieval_snapshot_ref,
/// policy_snapshot_ref}`, whose `scope.corpus_id` must be the corpus), the digest, the
/// label, the reason code, the evidence refs and `created_at`.
pub fn build_correction(input: &Value) -> Result<Correction, CorrectionError> {
    let map = text::strict_object(Some(input), "correction input", &CORRECTION_FIELDS)
        .map_err(CorrectionError::Invalid)?;
    let corpus = map
        .get("corpus")
        .filter(|v| v.as_object().is_some())
        .ok_or_else(|| invalid("corpus must be an object"))?;
    let corpus = registry::normalize_corpus(corpus).map_err(CorrectionError::Unauthorized)?;
    if !operator::corpus_active(&corpus) {
        return Err(CorrectionError::Unauthorized(FieldError::new(
            "operator control corpus must be active",
        )));
    }
    let checkpoint = text::object(map.get("operator_checkpoint"), "operator_checkpoint")
        .map_err(CorrectionError::Unauthorized)?;
    let authority = operator::checkpoint_authority(
        checkpoint,
        &corpus,
        CORRECTION_ACTION,
        operator::corpus_owner(&corpus),
    )
    .map_err(CorrectionError::Unauthorized)?;
    let corpus_id = operator::corpus_id(&corpus).to_owned();

    let partition = map.get("partition").unwrap_or(&Value::Null);
    let context = attribution_context(partition).map_err(|e| {
        invalid(
            e.0.replacen("attribution_context", "partition", 1)
                .replace("attribution_context.", "partition."),
        )
    })?;
    if context.scope.corpus_id.as_str() != corpus_id {
        return Err(invalid(
            "partition.scope.corpus_id must be the corpus of the declaration",
        ));
    }
    let digest_value = map.get("memory_ref_digest").unwrap_or(&Value::Null);
    let digests = memory_ref_digests(
        &Value::Array(vec![digest_value.clone()].into_boxed_slice()),
        "memory_ref_digest",
        1,
    )
    .map_err(CorrectionError::Invalid)?;
    let label = map
        .get("utility_label")
        .and_then(Value::as_str)
        .and_then(UtilityLabel::parse)
        .ok_or_else(|| invalid("utility_label must be helpful, harmful, neutral or unknown"))?;
    let reason_code =
        text::token(map.get("reason_code"), "reason_code").map_err(CorrectionError::Invalid)?;
    let mut evidence_refs = match map.get("evidence_refs") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() < MAX_EVIDENCE_REFS => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| invalid("evidence_refs must be a list of refs"))?,
        Some(_) => {
            return Err(invalid(format!(
                "evidence_refs must be a list of at most {} refs",
                MAX_EVIDENCE_REFS - 1
            )));
        }
    };
    if !evidence_refs.contains(&authority.source_ref) {
        evidence_refs.push(authority.source_ref.clone());
    }
    evidence_refs.sort();
    evidence_refs.dedup();
    let (created_at, created_instant) =
        timestamp::timestamp_field(map.get("created_at"), "created_at")
            .map_err(CorrectionError::Invalid)?;
    let digest = digests.first().cloned().unwrap_or_default();
    let correction_ref = digest::prefixed_canonical(
        "mucr_",
        &Value::Object(obj! {
            "schema_version" => CORRECTION_VERSION,
            "scope" => Value::Object(context.scope.to_sorted_map()),
            "retrieval_snapshot_ref" => context.retrieval_snapshot_ref.as_str(),
            "policy_snapshot_ref" => context.policy_snapshot_ref.as_str(),
            "memory_ref_digest" => digest.as_str(),
            "utility_label" => label.as_str(),
            "reason_code" => reason_code.as_str(),
            "checkpoint_ref" => authority.source_ref.as_str(),
            "created_at" => created_at.as_str(),
        }),
    );
    let mut observation = Observation {
        observation_id: Text::default(),
        scope: context.scope.clone(),
        application_receipt_id: Text::from(correction_ref),
        memory_ref_digests: digests,
        retrieval_snapshot_ref: context.retrieval_snapshot_ref.as_str().into(),
        policy_snapshot_ref: context.policy_snapshot_ref.as_str().into(),
        outcome_ref: authority.source_ref.as_str().into(),
        utility_label: label,
        attribution_level: AttributionLevel::Item,
        evidence_basis: EvidenceBasis::OwnerCorrection,
        confidence: CORRECTION_CONFIDENCE,
        reason_codes: vec![reason_code],
        evidence_refs,
        evaluator_ref: authority.operator_ref.as_str().into(),
        evaluation_version: Text::from(CORRECTION_VERSION),
        created_at: Text::from(created_at),
        created_instant,
    };
    observation.observation_id = Text::from(observation.computed_id());
    // Validated again as `utility-ledger append` will validate it.
    let observation =
        validate_observation(&observation.to_value()).map_err(|e| invalid(e.message))?;
    Ok(Correction {
        observation,
        checkpoint_ref: authority.source_ref,
        operator_ref: authority.operator_ref,
        authority_ref: authority.authority_ref,
        corpus_id,
    })
}
