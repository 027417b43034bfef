//! Building one observation: an untrusted evaluator proposal bound to the trusted facts,
//! then validated again with them.

use crate::wire::json::{Text, Value};
use crate::wire::text::{FieldError, FieldResult};

use crate::utility::strict::exact_fields;

use super::facts::{
    ApplicationReceipt, AttributionContext, ReceiptFields, VerifiedOutcome,
    application_receipt_with, attribution_context, validate_attribution_subject, validate_bindings,
    verified_outcome,
};
use super::rules::{
    UtilityFields, field, lenient_object, lenient_ref, lenient_scope, lenient_timestamp,
    lenient_token, memory_ref_digests, utility_fields,
};
use super::{Observation, PROPOSAL_FIELDS, validate_observation_with_facts_with};

/// Builds one observation by binding an untrusted evaluator proposal to trusted facts.
///
/// * `application_receipt`: the complete Stage-3 receipt exactly as supplied (its raw
///   canonical JSON is hashed into `application_receipt_id`, so any change changes the id);
///   it must bind at least one memory digest.
/// * `verified_outcome`: `{verified: true, outcome_ref, artifact_ref, outcome_status}`.
/// * `attribution_context`: `{scope, retrieval_snapshot_ref, policy_snapshot_ref}` from the
///   execution boundary.
/// * `evaluator_proposal`: the 16-key proposal; its echoes must match the trusted facts.
/// * `created_at`: an aware ISO timestamp (kept verbatim after stripping).
///
/// The observation is then validated again, structure plus all trusted facts, exactly as
/// the reference does. Errors carry the reference's message; the `dogfood-evaluate`
/// utility sub-flow maps any error to `utility_attribution_rejected`.
pub fn build_observation(
    application_receipt: &Value,
    verified_outcome: &Value,
    attribution_context: &Value,
    evaluator_proposal: &Value,
    created_at: &Value,
) -> FieldResult<Observation> {
    build_observation_with(
        application_receipt,
        verified_outcome,
        attribution_context,
        evaluator_proposal,
        created_at,
        ReceiptFields::Reference,
    )
}

/// [`build_observation`] reading the receipt with `fields`: `utility-observe` takes
/// [`ReceiptFields::Scoped`], so a receipt of this port's `apply` binds the observation's
/// `agent_id`/`project_id` to the route that produced the recall.
pub fn build_observation_with(
    application_receipt: &Value,
    verified_outcome: &Value,
    attribution_context: &Value,
    evaluator_proposal: &Value,
    created_at: &Value,
    fields: ReceiptFields,
) -> FieldResult<Observation> {
    let receipt = application_receipt_with(application_receipt, 1, fields)?;
    let outcome = self::verified_outcome(verified_outcome)?;
    let context = self::attribution_context(attribution_context)?;
    validate_bindings(&receipt, &outcome, &context)?;
    let proposal = evaluator_proposal_fields(evaluator_proposal, &receipt, &outcome, &context)?;
    let (created_at, created_instant) = lenient_timestamp(created_at, "created_at")?;
    let mut observation = Observation {
        observation_id: Text::default(),
        scope: context.scope.clone(),
        application_receipt_id: receipt.receipt_id.as_str().into(),
        memory_ref_digests: proposal.memory_ref_digests,
        retrieval_snapshot_ref: context.retrieval_snapshot_ref.as_str().into(),
        policy_snapshot_ref: context.policy_snapshot_ref.as_str().into(),
        outcome_ref: outcome.outcome_ref.as_str().into(),
        utility_label: proposal.utility.utility_label,
        attribution_level: proposal.utility.attribution_level,
        evidence_basis: proposal.utility.evidence_basis,
        confidence: proposal.utility.confidence,
        reason_codes: proposal.utility.reason_codes,
        evidence_refs: proposal.utility.evidence_refs,
        evaluator_ref: Text::from(proposal.utility.evaluator_ref),
        evaluation_version: Text::from(proposal.utility.evaluation_version),
        created_at: Text::from(created_at),
        created_instant,
    };
    observation.observation_id = Text::from(observation.computed_id());
    validate_observation_with_facts_with(
        &observation.to_value(),
        application_receipt,
        verified_outcome,
        attribution_context,
        fields,
    )
}

pub(super) struct Proposal {
    memory_ref_digests: Vec<String>,
    utility: UtilityFields,
}

pub(super) fn evaluator_proposal_fields(
    value: &Value,
    receipt: &ApplicationReceipt,
    outcome: &VerifiedOutcome,
    context: &AttributionContext,
) -> FieldResult<Proposal> {
    let raw = lenient_object(value, "evaluator_proposal")?;
    exact_fields(raw, &PROPOSAL_FIELDS, "evaluator_proposal")?;
    let label = |key: &str| format!("evaluator_proposal.{key}");
    let scope = lenient_scope(field(raw, "scope"), &label("scope"))?;
    let application_id = lenient_token(field(raw, "application_id"), label("application_id"))?;
    let artifact_ref = lenient_token(field(raw, "artifact_ref"), label("artifact_ref"))?;
    let outcome_ref = lenient_ref(field(raw, "outcome_ref"), label("outcome_ref"))?;
    let outcome_status = lenient_ref(field(raw, "outcome_status"), label("outcome_status"))?;
    let retrieval = lenient_ref(
        field(raw, "retrieval_snapshot_ref"),
        label("retrieval_snapshot_ref"),
    )?;
    let policy = lenient_ref(
        field(raw, "policy_snapshot_ref"),
        label("policy_snapshot_ref"),
    )?;
    let digests = memory_ref_digests(
        field(raw, "memory_ref_digests"),
        &label("memory_ref_digests"),
        1,
    )?;
    let utility = utility_fields(|k| field(raw, k))?;
    let echoes = [
        ("scope", scope == context.scope),
        ("application_id", application_id == receipt.application_id),
        ("artifact_ref", artifact_ref == outcome.artifact_ref),
        ("outcome_ref", outcome_ref == outcome.outcome_ref),
        ("outcome_status", outcome_status == outcome.outcome_status),
        (
            "retrieval_snapshot_ref",
            retrieval == context.retrieval_snapshot_ref,
        ),
        ("policy_snapshot_ref", policy == context.policy_snapshot_ref),
    ];
    for (key, matches) in echoes {
        if !matches {
            return Err(FieldError(format!(
                "evaluator_proposal.{key} does not match trusted context"
            )));
        }
    }
    validate_attribution_subject(
        &digests,
        utility.attribution_level,
        &receipt.memory_ref_digests,
    )?;
    Ok(Proposal {
        memory_ref_digests: digests,
        utility,
    })
}
