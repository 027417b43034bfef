//! The readback rules of one observation history entry, and the observation it
//! describes (re-derived in the partition's context).

use crate::wire::json::{Map, Value};
use crate::wire::text::FieldResult;

use crate::utility::bounds::{MAX_HISTORY_EVIDENCE_REFS, MAX_REVIEW_REASON_CODES};
use crate::utility::observation::{
    AttributionLevel, EvidenceBasis, Observation, UtilityLabel, validate_observation_fields,
};
use crate::utility::reducer::context::ReducerContext;
use crate::utility::strict::{
    check_memory_digests, check_opaque_refs, enum_str, exact_fields, finite_float, is_fingerprint,
    observation_ref, strict_ref, strict_timestamp,
};

use super::{HISTORY_FIELDS, fail, get};

pub(crate) fn validate_history_entry(entry: &Map, index: usize) -> FieldResult<()> {
    exact_fields(
        entry,
        &HISTORY_FIELDS,
        format_args!("projection.observation_history[{index}]"),
    )?;
    observation_ref(get(entry, "observation_id"), "history.observation_id")?;
    for key in [
        "subject_id",
        "application_receipt_id",
        "outcome_ref",
        "evaluator_ref",
        "evaluation_version",
    ] {
        strict_ref(get(entry, key), format_args!("history.{key}"))?;
    }
    match get(entry, "observation_fingerprint") {
        Value::Str(s) if is_fingerprint(s) => {}
        _ => return fail("history.observation_fingerprint is invalid"),
    }
    check_memory_digests(
        get(entry, "memory_ref_digests"),
        "history.memory_ref_digests",
    )?;
    enum_str(
        get(entry, "attribution_level"),
        AttributionLevel::NAMES,
        "history attribution_level",
    )?;
    enum_str(
        get(entry, "utility_label"),
        UtilityLabel::NAMES,
        "history utility_label",
    )?;
    enum_str(
        get(entry, "evidence_basis"),
        EvidenceBasis::NAMES,
        "history evidence_basis",
    )?;
    check_opaque_refs(
        get(entry, "reason_codes"),
        "history.reason_codes",
        0,
        MAX_REVIEW_REASON_CODES,
    )?;
    check_opaque_refs(
        get(entry, "evidence_refs"),
        "history.evidence_refs",
        0,
        MAX_HISTORY_EVIDENCE_REFS,
    )?;
    match finite_float(get(entry, "confidence"), "history.confidence") {
        Ok(c) if (0.0..=1.0).contains(&c) => {}
        _ => return fail("history confidence is invalid"),
    }
    strict_timestamp(get(entry, "created_at"), "history.created_at")?;
    Ok(())
}

/// Rebuilds the full observation a history entry stands for, in the packet's context:
/// the entry's fields plus the context's scope and snapshots, fixed schema version and
/// false boundary flags, validated as
/// [`validate_observation`](super::observation::validate_observation) validates that packet.
pub(crate) fn observation_from_history(
    entry: &Map,
    context: &ReducerContext,
) -> Option<Observation> {
    let scope = Value::Object(context.scope.to_sorted_map());
    let retrieval = Value::from(context.retrieval_snapshot_ref.as_str());
    let policy = Value::from(context.policy_snapshot_ref.as_str());
    validate_observation_fields(|key| match key {
        "scope" => &scope,
        "retrieval_snapshot_ref" => &retrieval,
        "policy_snapshot_ref" => &policy,
        _ => get(entry, key),
    })
    .ok()
}
