//! The trusted facts of one attribution, all from the application receipt and the
//! caller's verified outcome (never from an evaluator), and the binding of a judgment
//! to them through the observation builder
//! ([`crate::utility::observation::build_observation`]), so the ledger accepts the
//! observation unchanged.

use crate::obj;
use crate::utility::observation::{self, Observation, Scope};
use crate::wire::json::{Text, Value, str_list};
use crate::wire::text::is_ref;

use super::AttributionError;
use super::evidence::{EvidenceItem, check_targets};
use super::judgment::{Judgment, OutcomeStatus};

/// The snapshot refs of a receipt that carries none (receipts of `apply` before snapshots
/// were captured): an explicit "not recorded", never a value the caller typed.
pub const UNRECORDED_RETRIEVAL_SNAPSHOT: &str = "retrieval:unrecorded";
/// See [`UNRECORDED_RETRIEVAL_SNAPSHOT`].
pub const UNRECORDED_POLICY_SNAPSHOT: &str = "policy:unrecorded";
/// The observation's `evaluation_version` for every evaluator of the runtime.
pub const EVALUATION_VERSION: &str = "memory_utility_attribution_v0";

/// Everything an attribution is bound to.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// The receipt exactly as `apply` printed it.
    pub receipt: Value,
    pub receipt_id: String,
    pub application_id: String,
    pub artifact_ref: String,
    /// The receipt's outcome is `applied`.
    pub applied: bool,
    pub memory_ref_digests: Vec<String>,
    pub scope: Scope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    pub outcome_ref: String,
    pub outcome_status: OutcomeStatus,
    pub evidence: Vec<EvidenceItem>,
}

/// One member of the partition's scope: the receipt's (`apply` records the route's agent
/// and project), which a flag may only repeat; the flag's when the receipt has none (a
/// receipt of `recall --input`).
fn scope_member(
    key: &str,
    recorded: Option<&str>,
    given: Option<&str>,
) -> Result<String, AttributionError> {
    let flag = format!("--{}", key.replace('_', "-"));
    match (recorded, given) {
        (Some(recorded), Some(given)) if recorded != given => {
            Err(AttributionError::Request(format!(
                "{flag} {given:?} is not the receipt's {key} {recorded:?} ({}): attribute a receipt in the partition of the route that produced it",
                observation::SCOPE_MISMATCH_CODE
            )))
        }
        (Some(recorded), _) => Ok(recorded.to_owned()),
        (None, Some(given)) => Ok(given.to_owned()),
        (None, None) => Err(AttributionError::Request(format!(
            "the receipt records no {key} (it does not come from a routed apply): give {flag}"
        ))),
    }
}

impl Facts {
    /// The facts of `receipt` (a `reward_memory_application_receipt_v0`) and a verified
    /// outcome. The partition's `agent_id`/`project_id` are the receipt's; `agent_id` and
    /// `project_id` may repeat them (a different value is refused) and are needed only
    /// for a receipt that records none.
    pub fn new(
        receipt: &Value,
        agent_id: Option<&str>,
        project_id: Option<&str>,
        outcome_ref: &str,
        outcome_status: OutcomeStatus,
        evidence: Vec<EvidenceItem>,
    ) -> Result<Facts, AttributionError> {
        let checked =
            observation::application_receipt_with(receipt, 0, observation::ReceiptFields::Scoped)
                .map_err(|e| AttributionError::Receipt(e.0))?;
        let agent_id = scope_member("agent_id", checked.agent_id.as_deref(), agent_id)?;
        let project_id = scope_member("project_id", checked.project_id.as_deref(), project_id)?;
        let (agent_id, project_id) = (agent_id.as_str(), project_id.as_str());
        for (flag, value) in [
            ("--agent-id", agent_id),
            ("--project-id", project_id),
            ("--outcome-ref", outcome_ref),
        ] {
            if !is_ref(value) {
                return Err(AttributionError::Request(format!(
                    "{flag} {value:?} must be an opaque public-safe reference (letters, digits, _.:-)"
                )));
            }
        }
        check_targets(&evidence, &checked.memory_ref_digests)?;
        Ok(Facts {
            receipt: receipt.clone(),
            receipt_id: checked.receipt_id,
            application_id: checked.application_id,
            artifact_ref: checked.artifact_ref,
            applied: checked.outcome == "applied",
            scope: Scope {
                agent_id: Text::from(agent_id),
                project_id: Text::from(project_id),
                corpus_id: Text::from(checked.corpus_id),
                surface_id: Text::from(checked.surface_id),
            },
            memory_ref_digests: checked.memory_ref_digests,
            retrieval_snapshot_ref: checked
                .retrieval_snapshot_ref
                .unwrap_or_else(|| UNRECORDED_RETRIEVAL_SNAPSHOT.to_owned()),
            policy_snapshot_ref: checked
                .policy_snapshot_ref
                .unwrap_or_else(|| UNRECORDED_POLICY_SNAPSHOT.to_owned()),
            outcome_ref: outcome_ref.to_owned(),
            outcome_status,
            evidence,
        })
    }

    /// Every evidence reference an evaluator may cite: the evidence items' `KIND:REF`,
    /// the outcome ref and the receipt id.
    pub fn permitted_refs(&self) -> Vec<String> {
        let mut refs: Vec<String> = self
            .evidence
            .iter()
            .map(EvidenceItem::evidence_ref)
            .collect();
        refs.push(self.outcome_ref.clone());
        refs.push(self.receipt_id.clone());
        refs.sort();
        refs.dedup();
        refs
    }

    /// `{scope, retrieval_snapshot_ref, policy_snapshot_ref}`: the attribution context,
    /// which is also the ledger partition the observations land in.
    pub fn context(&self) -> Value {
        Value::Object(obj! {
            "scope" => Value::Object(self.scope.to_map()),
            "retrieval_snapshot_ref" => self.retrieval_snapshot_ref.as_str(),
            "policy_snapshot_ref" => self.policy_snapshot_ref.as_str(),
        })
    }

    /// The verified outcome object of the observation contract.
    pub fn verified_outcome(&self) -> Value {
        Value::Object(obj! {
            "verified" => true,
            "outcome_ref" => self.outcome_ref.as_str(),
            "artifact_ref" => self.artifact_ref.as_str(),
            "outcome_status" => self.outcome_status.as_str(),
        })
    }

    /// Binds `judgment` of evaluator `evaluator_id` to the facts: the 16-key proposal
    /// gets every echo from the facts, then the builder validates it all again.
    pub fn observation(
        &self,
        judgment: &Judgment,
        evaluator_id: &str,
        created_at: &str,
    ) -> Result<Observation, AttributionError> {
        let proposal = Value::Object(obj! {
            "scope" => Value::Object(self.scope.to_map()),
            "application_id" => self.application_id.as_str(),
            "artifact_ref" => self.artifact_ref.as_str(),
            "outcome_ref" => self.outcome_ref.as_str(),
            "outcome_status" => self.outcome_status.as_str(),
            "retrieval_snapshot_ref" => self.retrieval_snapshot_ref.as_str(),
            "policy_snapshot_ref" => self.policy_snapshot_ref.as_str(),
            "memory_ref_digests" => str_list(&judgment.memory_ref_digests),
            "utility_label" => judgment.label.as_str(),
            "attribution_level" => judgment.level.as_str(),
            "evidence_basis" => judgment.basis.as_str(),
            "confidence" => judgment.confidence,
            "reason_codes" => str_list(&judgment.reason_codes),
            "evidence_refs" => str_list(&judgment.evidence_refs),
            "evaluator_ref" => evaluator_id,
            "evaluation_version" => EVALUATION_VERSION,
        });
        observation::build_observation_with(
            &self.receipt,
            &self.verified_outcome(),
            &self.context(),
            &proposal,
            &Value::from(created_at),
            observation::ReceiptFields::Scoped,
        )
        .map_err(|e| AttributionError::Judgment(e.0))
    }
}
