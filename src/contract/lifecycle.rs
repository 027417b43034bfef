//! `operator-control --execute`: the lifecycle change an operator control performs on the
//! configured corpus, and the `reward_memory_lifecycle_receipt_v0` receipt of it.
//!
//! Pure: [`plan`] checks the input against the corpus the goal's experiment config
//! declares (not the corpus the input carries): the input names that corpus, the
//! operator checkpoint is for that corpus and names the authority the corpus declares
//! for the action (`maintenance.retirement_authority` to retire, `owner_ref` to edit or
//! revoke), and then the same checks as the prepared control ([`super::operator`]). A
//! refusal carries a reason code. An edit becomes a supersession: the edited record,
//! accepted by the operator, is the successor's active record envelope. The shell finds
//! the target in the store, performs the change
//! ([`crate::provider::embedded::lifecycle`]) and prints [`receipt`].

use crate::contract::candidate;
use crate::contract::operator::{self, ControlRequest, OperatorAction};
use crate::contract::registry;
use crate::obj;
use crate::recall::{build_active_record, serialize_record};
use crate::wire::digest::short16;
use crate::wire::json::{Map, Value};
use crate::wire::text::{FieldError, object, token};

/// Schema of the receipt `operator-control --execute` prints.
pub const LIFECYCLE_RECEIPT_SCHEMA_VERSION: &str = "reward_memory_lifecycle_receipt_v0";

/// Why a control is not performed: a public reason code and what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub reason_code: &'static str,
    pub message: String,
}

fn refuse(reason_code: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        reason_code,
        message: message.into(),
    }
}

impl From<FieldError> for Refusal {
    fn from(err: FieldError) -> Refusal {
        refuse("operator_control_invalid", err.0)
    }
}

/// The change to perform, as checked.
#[derive(Debug, Clone, PartialEq)]
pub struct LifecyclePlan {
    /// `retire`, `revoke` or `supersede`.
    pub change: &'static str,
    pub action: OperatorAction,
    pub control_ref: String,
    pub corpus_id: String,
    pub target_candidate_ref: String,
    pub operator_ref: String,
    pub authority_ref: String,
    pub authority_source_ref: String,
    /// A supersession's successor: its candidate ref and stored bytes.
    pub successor: Option<(String, Vec<u8>)>,
}

fn text_at<'a>(map: &'a Map, path: &[&str]) -> &'a str {
    map.at(path).and_then(Value::as_str).unwrap_or_default()
}

/// Checks `source` (`{reviewed_record, corpus, operator_checkpoint}`) against the
/// configured corpus declaration and builds the change.
pub fn plan(
    source: &Value,
    request: &ControlRequest<'_>,
    configured_corpus: &Map,
    observed_at: &str,
) -> Result<LifecyclePlan, Refusal> {
    let reviewed_record = object(source.get("reviewed_record"), "reviewed_record")?;
    let checkpoint = object(source.get("operator_checkpoint"), "operator_checkpoint")?;
    let input_corpus = object(source.get("corpus"), "corpus")?;
    let corpus = registry::normalize_corpus(&Value::Object(configured_corpus.clone()))?;
    let corpus_id = operator::corpus_id(&corpus).to_owned();
    if text_at(input_corpus, &["corpus_id"]) != corpus_id {
        return Err(refuse(
            "operator_control_corpus_not_configured",
            format!("the input's corpus is not the goal's configured corpus {corpus_id}"),
        ));
    }
    if text_at(checkpoint, &["corpus_id"]) != corpus_id {
        return Err(refuse(
            "operator_checkpoint_other_corpus",
            format!("the operator checkpoint is for another corpus than {corpus_id}"),
        ));
    }
    let expected = match request.action {
        OperatorAction::Retire => text_at(&corpus, &["maintenance", "retirement_authority"]),
        OperatorAction::Edit | OperatorAction::Revoke => operator::corpus_owner(&corpus),
    };
    if text_at(checkpoint, &["authority_ref"]) != expected {
        return Err(refuse(
            "operator_checkpoint_authority_mismatch",
            format!(
                "the operator checkpoint's authority_ref must be {expected}, the authority the corpus declares for {}",
                request.action.as_str()
            ),
        ));
    }
    let corpus_value = Value::Object(corpus.clone());
    let (change, target, authority, successor) = match request.action {
        OperatorAction::Revoke => {
            let (record, authority) =
                operator::revoke_checks(reviewed_record, &corpus, checkpoint)?;
            let target = token(record.get("candidate_ref"), "candidate_ref")?;
            (
                "revoke",
                target,
                (
                    authority.operator_ref,
                    authority.authority_ref,
                    authority.source_ref,
                ),
                None,
            )
        }
        action => {
            let packet = operator::build_operator_control(
                reviewed_record,
                &corpus_value,
                checkpoint,
                request,
            )
            .map_err(|operator::OperatorError::Field(e)| Refusal::from(e))?;
            let receipt = packet.get("receipt").and_then(Value::as_object);
            let field = |key: &str| {
                receipt
                    .and_then(|r| r.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let authority = (
                field("operator_ref"),
                field("authority_ref"),
                field("authority_source_ref"),
            );
            let target = token(
                reviewed_record.at(&["record", "candidate_ref"]),
                "candidate_ref",
            )?;
            if action == OperatorAction::Edit {
                let decision = packet
                    .get("decision")
                    .and_then(Value::as_object)
                    .ok_or_else(|| {
                        refuse("operator_control_invalid", "the edit has no decision")
                    })?;
                let successor = successor(
                    decision,
                    &corpus_value,
                    &authority.0,
                    request,
                    &target,
                    observed_at,
                )?;
                ("supersede", target, authority, Some(successor))
            } else {
                ("retire", target, authority, None)
            }
        }
    };
    Ok(LifecyclePlan {
        change,
        action: request.action,
        control_ref: token(Some(&Value::from(request.control_ref)), "control_ref")?,
        corpus_id,
        target_candidate_ref: target,
        operator_ref: authority.0,
        authority_ref: authority.1,
        authority_source_ref: authority.2,
        successor,
    })
}

/// The successor of an edit: the edited candidate accepted by the operator, as the
/// active record envelope a corpus owner stores (`lifecycle.supersedes_refs` names the
/// old record), and its candidate ref.
fn successor(
    decision: &Map,
    corpus: &Value,
    operator_ref: &str,
    request: &ControlRequest<'_>,
    old_ref: &str,
    observed_at: &str,
) -> Result<(String, Vec<u8>), Refusal> {
    let accepted = candidate::review_candidate(
        decision,
        &obj! {
            "decision" => "accept",
            "reviewer_ref" => operator_ref,
            "review_ref" => request.control_ref,
            "reasoning_summary" => request.reasoning_summary,
        },
    )?;
    if accepted.get("status").and_then(Value::as_str) != Some("active") {
        return Err(refuse(
            "operator_control_guard_blocked",
            "the edited record does not pass the guard, so it cannot replace the old one",
        ));
    }
    let mut envelope = build_active_record(&accepted, corpus, observed_at)?;
    let new_ref = token(envelope.get("candidate_ref"), "candidate_ref")?;
    if let Some(Value::Object(lifecycle)) = envelope.get_mut("lifecycle") {
        lifecycle.insert("supersedes_refs", vec![old_ref.to_owned()]);
    }
    Ok((
        new_ref,
        format!("{}\n", serialize_record(&envelope)).into_bytes(),
    ))
}

/// The successor's file name under the corpus's scope ref.
pub fn successor_file_name(control_ref: &str, candidate_ref: &str) -> String {
    let hash = candidate_ref
        .split_once(':')
        .map_or(candidate_ref, |(_, h)| h);
    let control: String = short16(control_ref).chars().take(12).collect();
    format!("reward-memory-{control}-{hash}.json")
}

/// What the store did with a plan, as the receipt reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreResult {
    /// `applied`, `readback_unverified`, `provider_unavailable` or `refused`.
    pub status: &'static str,
    pub reason_code: Option<&'static str>,
    pub provider_id: String,
    /// The opaque refs of the target and the successor (`provider-<hex>`).
    pub target_memory_ref: Option<String>,
    pub successor_memory_ref: Option<String>,
    pub prior_state: Option<String>,
    pub result_state: Option<String>,
    pub lifecycle_sequence: Option<i64>,
    pub write_performed: bool,
    pub deduplicated: bool,
    pub exact_readback_verified: bool,
    pub cause_code: Option<&'static str>,
    pub observed_at: String,
}

/// The `reward_memory_lifecycle_receipt_v0` packet; `ok` only when applied.
pub fn receipt(plan: &LifecyclePlan, goal_id: &str, agent_id: &str, store: &StoreResult) -> Value {
    Value::Object(obj! {
        "ok" => store.status == "applied",
        "schema_version" => LIFECYCLE_RECEIPT_SCHEMA_VERSION,
        "status" => store.status,
        "reason_code" => store.reason_code,
        "cause_code" => store.cause_code,
        "goal_id" => goal_id,
        "agent_id" => agent_id,
        "action" => plan.action.as_str(),
        "lifecycle_change" => plan.change,
        "control_ref" => plan.control_ref.as_str(),
        "corpus_id" => plan.corpus_id.as_str(),
        "provider_id" => store.provider_id.as_str(),
        "operator_ref" => plan.operator_ref.as_str(),
        "authority_ref" => plan.authority_ref.as_str(),
        "authority_source_ref" => plan.authority_source_ref.as_str(),
        "authority_verified" => true,
        "target_candidate_ref" => plan.target_candidate_ref.as_str(),
        "target_memory_ref" => store.target_memory_ref.clone(),
        "successor_candidate_ref" => plan.successor.as_ref().map(|(r, _)| r.clone()),
        "successor_memory_ref" => store.successor_memory_ref.clone(),
        "prior_state" => store.prior_state.clone(),
        "result_state" => store.result_state.clone(),
        "lifecycle_sequence" => store.lifecycle_sequence,
        "observed_at" => store.observed_at.as_str(),
        "provider_write_performed" => store.write_performed,
        "deduplicated" => store.deduplicated,
        "readback_verified" => store.exact_readback_verified,
        "history_kept" => true,
        "grants_new_action_authority" => false,
        "raw_content_captured" => false,
    })
}

/// The receipt of a control refused before the store was touched.
pub fn refusal_receipt(
    refusal: &Refusal,
    request: &ControlRequest<'_>,
    goal_id: &str,
    agent_id: &str,
) -> Value {
    Value::Object(obj! {
        "ok" => false,
        "schema_version" => LIFECYCLE_RECEIPT_SCHEMA_VERSION,
        "status" => "refused",
        "reason_code" => refusal.reason_code,
        "message" => refusal.message.as_str(),
        "goal_id" => goal_id,
        "agent_id" => agent_id,
        "action" => request.action.as_str(),
        "control_ref" => request.control_ref,
        "provider_write_performed" => false,
        "readback_verified" => false,
        "grants_new_action_authority" => false,
        "raw_content_captured" => false,
    })
}
