//! The trusted facts an observation is bound to: the application receipt (its envelope
//! checked exactly as Stage 3 printed it), the verified outcome and the attribution
//! context, and the checks that a proposal's echoes match them.

use crate::recall::{
    APPLICATION_OUTCOMES, APPLICATION_QUERY_KINDS, APPLICATION_RECEIPT_FIELDS,
    APPLICATION_RECEIPT_OPTIONAL_FIELDS, APPLICATION_RECEIPT_SCOPE_FIELDS, RECALL_MODES,
    contains_non_finite,
};
use crate::wire::digest;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt::pystr_strip;
use crate::wire::text::{self, FieldError, FieldResult};

use crate::utility::strict::exact_fields;

use super::kinds::{AttributionLevel, Scope};
use super::rules::{
    boolean, false_boundary, field, lenient_object, lenient_ref, lenient_scope, lenient_token,
    memory_ref_digests, strict_compact_text,
};
use super::{
    APPLICATION_RECEIPT_SCHEMA_VERSION, ATTRIBUTION_CONTEXT_FIELDS, QUERY_EVIDENCE_FIELDS,
    VERIFIED_OUTCOME_FIELDS,
};

/// The normalized facts of a `reward_memory_application_receipt_v0`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplicationReceipt {
    pub application_id: String,
    pub artifact_ref: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub outcome: String,
    pub memory_ref_digests: Vec<String>,
    pub retrieval_snapshot_ref: Option<String>,
    pub policy_snapshot_ref: Option<String>,
    /// The route's agent and project, when this port's `apply` recorded them
    /// ([`ReceiptFields::Scoped`]).
    pub agent_id: Option<String>,
    pub project_id: Option<String>,
    /// `rma_` + SHA-256 of the canonical JSON of the complete raw receipt.
    pub receipt_id: String,
}

/// Which receipt fields a reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptFields {
    /// §10.5's fields and its optional snapshot refs: LoopX's readers
    /// (`dogfood-evaluate`), whose messages and refusals stay the reference's.
    Reference,
    /// Those and the scope this port's `apply` records (`agent_id`, `project_id`):
    /// `utility-observe`.
    Scoped,
}

/// The reason code of an observation whose attribution context names another agent or
/// project than the application receipt records.
pub const SCOPE_MISMATCH_CODE: &str = "application_receipt_scope_mismatch";

pub(super) fn validate_receipt_envelope(raw: &Map, fields: ReceiptFields) -> FieldResult<()> {
    let missing: Vec<&str> = APPLICATION_RECEIPT_FIELDS
        .iter()
        .copied()
        .filter(|k| !raw.contains_key(k))
        .collect();
    let unknown: Vec<&str> = raw
        .keys()
        .filter(|k| {
            let scoped = fields == ReceiptFields::Scoped;
            !(APPLICATION_RECEIPT_FIELDS.contains(k)
                || APPLICATION_RECEIPT_OPTIONAL_FIELDS.contains(k)
                || scoped && APPLICATION_RECEIPT_SCOPE_FIELDS.contains(k))
        })
        .collect();
    if !missing.is_empty() || !unknown.is_empty() {
        return Err(FieldError(format!(
            "application_receipt has invalid fields: missing={}, unknown={}",
            keys::repr_list(missing),
            keys::repr_list(unknown)
        )));
    }
    if !RECALL_MODES.contains(&pystr_strip(raw.get("mode")).as_str()) {
        return Err(FieldError::new("application_receipt.mode is invalid"));
    }
    if !APPLICATION_QUERY_KINDS.contains(&pystr_strip(raw.get("query_kind")).as_str()) {
        return Err(FieldError::new("application_receipt.query_kind is invalid"));
    }
    let evidence = match raw.get("query_evidence") {
        Some(Value::Array(items)) if items.len() <= 3 => items,
        _ => {
            return Err(FieldError::new(
                "application_receipt.query_evidence must be a bounded list",
            ));
        }
    };
    for (index, item) in evidence.iter().enumerate() {
        let label = format!("application_receipt.query_evidence[{index}]");
        let item = lenient_object(item, &label)?;
        exact_fields(item, &QUERY_EVIDENCE_FIELDS, &label)?;
        if !text::is_hex_digest(&pystr_strip(item.get("query_digest")), 16) {
            return Err(FieldError(format!(
                "{label}.query_digest must be a canonical digest"
            )));
        }
        strict_compact_text(
            field(item, "query_summary"),
            &format!("{label}.query_summary"),
            220,
        )?;
        if item.get("exact_query_exposed") != Some(&Value::Bool(false)) {
            return Err(FieldError(format!(
                "{label}.exact_query_exposed must be false"
            )));
        }
    }
    strict_compact_text(
        field(raw, "reasoning_summary"),
        "application_receipt.reasoning_summary",
        500,
    )?;
    boolean(raw, "current_artifact_verified", "application_receipt")?;
    boolean(raw, "result_readback_verified", "application_receipt")?;
    if !boolean(raw, "model_reasoning_preserved", "application_receipt")? {
        return Err(FieldError::new(
            "application_receipt.model_reasoning_preserved must be true",
        ));
    }
    let count_ok = match raw.get("provider_call_count") {
        Some(Value::Int(i)) => *i >= 0,
        Some(Value::BigInt(s)) => !s.starts_with('-'),
        _ => false,
    };
    if !count_ok {
        return Err(FieldError::new(
            "application_receipt.provider_call_count must be a non-negative integer",
        ));
    }
    Ok(())
}

/// Validates a complete application receipt and derives its `rma_` id.
///
/// `min_digests` is 1 when an observation is built from the receipt and 0 when only the
/// receipt id is needed (dogfood settlement). Every message is the reference's.
pub fn application_receipt(value: &Value, min_digests: usize) -> FieldResult<ApplicationReceipt> {
    application_receipt_with(value, min_digests, ReceiptFields::Reference)
}

/// [`application_receipt`] accepting the receipt fields `fields` names.
pub fn application_receipt_with(
    value: &Value,
    min_digests: usize,
    fields: ReceiptFields,
) -> FieldResult<ApplicationReceipt> {
    let raw = lenient_object(value, "application_receipt")?;
    if raw.get("schema_version").and_then(Value::as_str) != Some(APPLICATION_RECEIPT_SCHEMA_VERSION)
    {
        return Err(FieldError::new(
            "application_receipt must use reward_memory_application_receipt_v0",
        ));
    }
    validate_receipt_envelope(raw, fields)?;
    let outcome = pystr_strip(raw.get("outcome"));
    if !APPLICATION_OUTCOMES.contains(&outcome.as_str()) {
        return Err(FieldError::new("application_receipt.outcome is invalid"));
    }
    let label = "application_receipt.memory_ref_digests";
    let digests = memory_ref_digests(field(raw, "memory_ref_digests"), label, min_digests)?;
    let canonical = match raw.get("memory_ref_digests") {
        Some(Value::Array(items)) => {
            items.len() == digests.len()
                && items
                    .iter()
                    .zip(&digests)
                    .all(|(item, d)| item.as_str() == Some(d.as_str()))
        }
        _ => false,
    };
    if !canonical {
        return Err(FieldError(format!("{label} must be sorted and canonical")));
    }
    let application_id = lenient_token(
        field(raw, "application_id"),
        "application_receipt.application_id",
    )?;
    let artifact_ref = lenient_token(
        field(raw, "artifact_ref"),
        "application_receipt.artifact_ref",
    )?;
    let corpus_id = lenient_ref(field(raw, "corpus_id"), "application_receipt.corpus_id")?;
    let surface_id = lenient_ref(field(raw, "surface_id"), "application_receipt.surface_id")?;
    for key in [
        "grants_new_action_authority",
        "external_writes_performed",
        "raw_content_captured",
    ] {
        false_boundary(raw, key, "application_receipt")?;
    }
    let optional = |key: &str| -> FieldResult<Option<String>> {
        raw.get(key)
            .map(|v| lenient_ref(v, format!("application_receipt.{key}")))
            .transpose()
    };
    let retrieval_snapshot_ref = optional("retrieval_snapshot_ref")?;
    let policy_snapshot_ref = optional("policy_snapshot_ref")?;
    let agent_id = optional("agent_id")?;
    let project_id = optional("project_id")?;
    if contains_non_finite(value) {
        return Err(FieldError::new(
            "application_receipt must be canonical JSON data",
        ));
    }
    Ok(ApplicationReceipt {
        application_id,
        artifact_ref,
        corpus_id,
        surface_id,
        outcome,
        memory_ref_digests: digests,
        retrieval_snapshot_ref,
        policy_snapshot_ref,
        agent_id,
        project_id,
        receipt_id: digest::application_receipt_id(value),
    })
}

/// The normalized verified work outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedOutcome {
    pub outcome_ref: String,
    pub artifact_ref: String,
    pub outcome_status: String,
}

/// Validates `{verified: true, outcome_ref, artifact_ref, outcome_status}`.
pub fn verified_outcome(value: &Value) -> FieldResult<VerifiedOutcome> {
    let raw = lenient_object(value, "verified_outcome")?;
    exact_fields(raw, &VERIFIED_OUTCOME_FIELDS, "verified_outcome")?;
    if raw.get("verified") != Some(&Value::Bool(true)) {
        return Err(FieldError::new("verified_outcome.verified must be true"));
    }
    Ok(VerifiedOutcome {
        outcome_ref: lenient_ref(field(raw, "outcome_ref"), "verified_outcome.outcome_ref")?,
        artifact_ref: lenient_token(field(raw, "artifact_ref"), "verified_outcome.artifact_ref")?,
        outcome_status: lenient_ref(
            field(raw, "outcome_status"),
            "verified_outcome.outcome_status",
        )?,
    })
}

/// The trusted execution context: scope and the snapshots visible during execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributionContext {
    pub scope: Scope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

/// Validates `{scope, retrieval_snapshot_ref, policy_snapshot_ref}`.
pub fn attribution_context(value: &Value) -> FieldResult<AttributionContext> {
    let raw = lenient_object(value, "attribution_context")?;
    exact_fields(raw, &ATTRIBUTION_CONTEXT_FIELDS, "attribution_context")?;
    Ok(AttributionContext {
        scope: lenient_scope(field(raw, "scope"), "attribution_context.scope")?,
        retrieval_snapshot_ref: lenient_ref(
            field(raw, "retrieval_snapshot_ref"),
            "attribution_context.retrieval_snapshot_ref",
        )?,
        policy_snapshot_ref: lenient_ref(
            field(raw, "policy_snapshot_ref"),
            "attribution_context.policy_snapshot_ref",
        )?,
    })
}

pub(super) fn validate_bindings(
    receipt: &ApplicationReceipt,
    outcome: &VerifiedOutcome,
    context: &AttributionContext,
) -> FieldResult<()> {
    if outcome.artifact_ref != receipt.artifact_ref {
        return Err(FieldError::new(
            "verified_outcome.artifact_ref must match the application receipt",
        ));
    }
    if context.scope.corpus_id != receipt.corpus_id {
        return Err(FieldError::new(
            "attribution_context.scope.corpus_id must match the application receipt",
        ));
    }
    if context.scope.surface_id != receipt.surface_id {
        return Err(FieldError::new(
            "attribution_context.scope.surface_id must match the application receipt",
        ));
    }
    // The route's scope, when the receipt records it (this port's `apply` does).
    let route_scope = [
        ("agent_id", &receipt.agent_id, &context.scope.agent_id),
        ("project_id", &receipt.project_id, &context.scope.project_id),
    ];
    for (key, expected, actual) in route_scope {
        if expected.as_deref().is_some_and(|e| e != actual.as_str()) {
            return Err(FieldError(format!(
                "attribution_context.scope.{key} must match the application receipt's {key}, \
                 the route that produced the recall ({SCOPE_MISMATCH_CODE})"
            )));
        }
    }
    let snapshots = [
        (
            "retrieval_snapshot_ref",
            &receipt.retrieval_snapshot_ref,
            &context.retrieval_snapshot_ref,
        ),
        (
            "policy_snapshot_ref",
            &receipt.policy_snapshot_ref,
            &context.policy_snapshot_ref,
        ),
    ];
    for (key, expected, actual) in snapshots {
        if expected.as_ref().is_some_and(|e| e != actual) {
            return Err(FieldError(format!(
                "attribution_context.{key} must match the application receipt"
            )));
        }
    }
    Ok(())
}

pub(super) fn validate_attribution_subject(
    digests: &[String],
    level: AttributionLevel,
    receipt_digests: &[String],
) -> FieldResult<()> {
    if level == AttributionLevel::Item {
        if digests.len() != 1 || !receipt_digests.contains(&digests[0]) {
            return Err(FieldError::new(
                "item attribution must bind exactly one digest from the application receipt",
            ));
        }
        return Ok(());
    }
    if digests != receipt_digests {
        return Err(FieldError::new(
            "set or none attribution must bind the complete application memory set",
        ));
    }
    Ok(())
}
