//! `dogfood-evaluate`: Stage-5 dogfood receipts and the bounded Issue Fix pilot readiness
//! batch (`reward_memory_dogfood_batch_v1`).
//!
//! Owns the binding of one verified real module outcome to an existing Stage-3
//! application receipt (the disposition is derived from the receipt's outcome, never
//! taken from a caller label), the readback/artifact validity rules, the fail-open
//! utility-attribution sub-flow (which reuses [`crate::utility::observation`]), batch
//! limits, double-count checks and readiness. Operator control receipts are validated by
//! [`crate::contract::operator`]; the Stage-4 gate comes from [`crate::contract::evaluation`]. Writes nothing.

use crate::contract::operator;
use crate::obj;
use crate::utility::observation::{self as utility_observation, Observation};
use crate::wire::digest;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr_strip;
use crate::wire::text::{FieldError, FieldResult, compact, strict_bool, token};

/// Schema of one dogfood receipt (its identity is hashed under this name).
pub const RECEIPT_SCHEMA_VERSION: &str = "reward_memory_dogfood_receipt_v1";
/// Schema of the batch packet.
pub const BATCH_SCHEMA_VERSION: &str = "reward_memory_dogfood_batch_v1";
/// Status of a batch that may start the bounded Issue Fix pilot.
pub const READY: &str = "ready_for_bounded_issue_fix_pilot";
/// At most this many receipts per batch.
pub const MAX_RECEIPTS: usize = 24;
/// At most this many operator controls per batch.
pub const MAX_OPERATOR_CONTROLS: usize = 8;
/// Every disposition, sorted (readiness needs each one).
pub const DISPOSITIONS: [&str; 3] = ["applied", "not_applied", "refuted"];

/// Why a dogfood batch could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DogfoodError {
    /// An observation, a receipt, a control or the batch is invalid; the message is the
    /// reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
}

fn fail(message: &str) -> FieldError {
    FieldError::new(message)
}

/// How a receipt's application settled, derived from the Stage-3 receipt outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    Applied,
    NotApplied,
    Refuted,
}

impl Disposition {
    /// `applied` → applied, `refuted` → refuted, every other valid outcome → not applied.
    pub fn from_outcome(outcome: &str) -> Option<Disposition> {
        match outcome {
            "applied" => Some(Disposition::Applied),
            "refuted" => Some(Disposition::Refuted),
            "ignored" | "failed" | "not_available" | "available_not_applied" => {
                Some(Disposition::NotApplied)
            }
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Applied => "applied",
            Disposition::NotApplied => "not_applied",
            Disposition::Refuted => "refuted",
        }
    }

    /// Applied and refuted claims need exact readback, verification and memory refs.
    fn claims_memory(self) -> bool {
        self != Disposition::NotApplied
    }
}

/// The result of the optional utility attribution of one receipt.
#[derive(Debug, Clone, PartialEq)]
pub enum UtilityEvaluation {
    /// No `utility_attribution` key.
    NotRequested,
    /// The key was present but the observation could not be built (fail-open).
    Rejected,
    Accepted(Box<Observation>),
}

impl UtilityEvaluation {
    fn evaluation(&self) -> Map {
        match self {
            UtilityEvaluation::NotRequested => obj! {
                "status" => "not_requested",
                "reason_code" => "utility_attribution_not_requested",
            },
            UtilityEvaluation::Rejected => obj! {
                "status" => "rejected",
                "reason_code" => "utility_attribution_rejected",
            },
            UtilityEvaluation::Accepted(_) => obj! {"status" => "accepted"},
        }
    }

    fn observation(&self) -> Value {
        match self {
            UtilityEvaluation::Accepted(o) => o.to_value(),
            _ => Value::Null,
        }
    }
}

/// One `reward_memory_dogfood_receipt_v1`: a verified module outcome bound to a Stage-3
/// application receipt. Cost and intervention counts are non-negative integers of any
/// size (kept as JSON integers).
#[derive(Debug, Clone, PartialEq)]
pub struct DogfoodReceipt {
    pub domain_family: String,
    pub domain_id: String,
    pub application_id: String,
    pub application_receipt_id: String,
    pub artifact_ref: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub application_outcome: String,
    pub disposition: Disposition,
    pub outcome_ref: String,
    pub outcome_status: String,
    pub outcome_summary: String,
    pub utility: UtilityEvaluation,
    pub memory_ref_digests: Vec<String>,
    pub result_readback_verified: bool,
    pub current_artifact_verified: bool,
    /// `latency_ms`, `model_tokens`, `provider_call_count`.
    pub cost: [Value; 3],
    pub intervention_count: Value,
    pub intervention_summary: Option<String>,
    pub bot_feedback_captured: bool,
    pub bot_feedback_summary: Option<String>,
    /// `dogfood:` + 20 hex over the settlement identity (never domain, cost or utility).
    pub receipt_id: String,
}

const COST_KEYS: [&str; 3] = ["latency_ms", "model_tokens", "provider_call_count"];

/// A non-negative JSON integer (booleans and floats are not counts).
fn counter(map: &Map, key: &str) -> FieldResult<Value> {
    match map.get(key) {
        Some(v @ Value::Int(n)) if *n >= 0 => Ok(v.clone()),
        Some(v @ Value::BigInt(digits)) if !digits.starts_with('-') => Ok(v.clone()),
        _ => Err(FieldError(format!("{key} must be a non-negative integer"))),
    }
}

fn digits_of(v: &Value) -> String {
    match v {
        Value::Int(n) => n.to_string(),
        Value::BigInt(d) => d.to_string(),
        _ => "0".to_owned(),
    }
}

/// Adds two non-negative decimal digit strings.
fn add_decimal(a: &str, b: &str) -> String {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let (mut i, mut j, mut carry) = (a.len(), b.len(), 0u8);
    while i > 0 || j > 0 || carry > 0 {
        let mut digit = carry;
        if i > 0 {
            i -= 1;
            digit += a[i].saturating_sub(b'0');
        }
        if j > 0 {
            j -= 1;
            digit += b[j].saturating_sub(b'0');
        }
        out.push(b'0' + digit % 10);
        carry = digit / 10;
    }
    out.reverse();
    let text = String::from_utf8_lossy(&out).into_owned();
    let trimmed = text.trim_start_matches('0');
    if trimmed.is_empty() {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// The sum of non-negative JSON integers, as a JSON integer.
fn sum_counts<'a>(values: impl Iterator<Item = &'a Value>) -> Value {
    let total = values.fold("0".to_owned(), |acc, v| add_decimal(&acc, &digits_of(v)));
    total
        .parse::<i64>()
        .map_or(Value::BigInt(total.into()), Value::Int)
}

/// The fail-open utility sub-flow: any failure is `Rejected`, never an error.
fn utility_evaluation(
    observation: &Map,
    application: &Value,
    verified_outcome: &Value,
) -> UtilityEvaluation {
    let Some(attribution) = observation.get("utility_attribution") else {
        return UtilityEvaluation::NotRequested;
    };
    let built = (|| -> FieldResult<Observation> {
        let attribution = attribution
            .as_object()
            .ok_or_else(|| fail("utility_attribution must be an object"))?;
        let expected = ["context", "proposal", "created_at"];
        if attribution.len() != expected.len()
            || !expected.iter().all(|k| attribution.contains_key(k))
        {
            return Err(fail("utility_attribution has invalid fields"));
        }
        let context = attribution
            .get("context")
            .filter(|v| v.as_object().is_some());
        let context =
            context.ok_or_else(|| fail("utility attribution context must be an object"))?;
        let proposal = attribution
            .get("proposal")
            .filter(|v| v.as_object().is_some());
        let proposal =
            proposal.ok_or_else(|| fail("utility attribution proposal must be an object"))?;
        let created_at = attribution
            .get("created_at")
            .cloned()
            .unwrap_or(Value::Null);
        utility_observation::build_observation(
            application,
            verified_outcome,
            context,
            proposal,
            &created_at,
        )
    })();
    match built {
        Ok(o) => UtilityEvaluation::Accepted(Box::new(o)),
        Err(_) => UtilityEvaluation::Rejected,
    }
}

fn optional_summary(
    needed: bool,
    map: &Map,
    label: &str,
    limit: usize,
) -> FieldResult<Option<String>> {
    if needed {
        compact(map.get("summary"), label, limit).map(Some)
    } else {
        Ok(None)
    }
}

/// Binds one dogfood observation to its application receipt (§5.2, checks in order).
pub fn build_receipt(observation: &Map) -> FieldResult<DogfoodReceipt> {
    if strict_bool(
        observation.get("raw_content_captured"),
        "raw_content_captured",
    )? {
        return Err(fail("dogfood observations must not contain raw content"));
    }
    let family = pystr_strip(observation.get("domain_family"));
    if family != "issue_fix" && family != "loopx" {
        return Err(fail("domain_family must be issue_fix or loopx"));
    }
    let domain_id = token(observation.get("domain_id"), "domain_id")?;
    if !domain_id.starts_with(&format!("{family}.")) {
        return Err(FieldError(format!(
            "{family} domain_id must use the {family} namespace"
        )));
    }
    let application_value = observation
        .get("application_receipt")
        .cloned()
        .unwrap_or_default();
    let Value::Object(application) = &application_value else {
        return Err(fail("application_receipt must be an object"));
    };
    if application.get("schema_version").and_then(Value::as_str)
        != Some(utility_observation::APPLICATION_RECEIPT_SCHEMA_VERSION)
    {
        return Err(fail(
            "application_receipt must use the Stage-3 receipt schema",
        ));
    }
    let application_id = token(application.get("application_id"), "application_id")?;
    let facts = utility_observation::application_receipt(&application_value, 0)?;
    let artifact_ref = token(application.get("artifact_ref"), "artifact_ref")?;
    let corpus_id = token(application.get("corpus_id"), "corpus_id")?;
    let surface_id = token(application.get("surface_id"), "surface_id")?;
    let application_outcome = pystr_strip(application.get("outcome"));
    let disposition = Disposition::from_outcome(&application_outcome)
        .ok_or_else(|| fail("application receipt outcome is invalid"))?;
    let readback = strict_bool(
        application.get("result_readback_verified"),
        "result_readback_verified",
    )?;
    let current = strict_bool(
        application.get("current_artifact_verified"),
        "current_artifact_verified",
    )?;
    if disposition.claims_memory() {
        if !readback {
            return Err(fail(
                "applied or refuted requires exact provider result readback",
            ));
        }
        if !current {
            return Err(fail(
                "applied or refuted requires current-artifact verification",
            ));
        }
        if facts.memory_ref_digests.is_empty() {
            return Err(fail(
                "applied or refuted requires attributed memory references",
            ));
        }
    }

    let Some(Value::Object(module_outcome)) = observation.get("module_outcome") else {
        return Err(fail("module_outcome must be an object"));
    };
    if token(
        module_outcome.get("artifact_ref"),
        "module_outcome.artifact_ref",
    )? != artifact_ref
    {
        return Err(fail(
            "module outcome and application artifact_ref must match",
        ));
    }
    if !strict_bool(module_outcome.get("outcome_verified"), "outcome_verified")? {
        return Err(fail("dogfood requires a verified real module outcome"));
    }
    let outcome_ref = token(
        module_outcome.get("outcome_ref"),
        "module_outcome.outcome_ref",
    )?;
    let outcome_status = token(
        module_outcome.get("outcome_status"),
        "module_outcome.outcome_status",
    )?;
    let outcome_summary = compact(module_outcome.get("summary"), "module_outcome.summary", 360)?;

    let verified_outcome = Value::Object(obj! {
        "verified" => true,
        "outcome_ref" => outcome_ref.as_str(),
        "artifact_ref" => artifact_ref.as_str(),
        "outcome_status" => outcome_status.as_str(),
    });
    let utility = utility_evaluation(observation, &application_value, &verified_outcome);

    let Some(Value::Object(cost)) = observation.get("cost") else {
        return Err(fail("cost must be an object"));
    };
    let cost = [
        counter(cost, COST_KEYS[0])?,
        counter(cost, COST_KEYS[1])?,
        counter(cost, COST_KEYS[2])?,
    ];
    let Some(Value::Object(intervention)) = observation.get("intervention") else {
        return Err(fail("intervention must be an object"));
    };
    let intervention_count = counter(intervention, "count")?;
    let intervention_summary = optional_summary(
        intervention_count.is_truthy(),
        intervention,
        "intervention.summary",
        240,
    )?;
    let feedback_default = Map::new();
    let feedback = match observation.get("bot_feedback") {
        Some(v) if v.is_truthy() => v
            .as_object()
            .ok_or_else(|| fail("bot_feedback must be an object"))?,
        _ => &feedback_default,
    };
    let captured = if feedback.is_empty() {
        false
    } else {
        strict_bool(feedback.get("captured"), "captured")?
    };
    let feedback_summary = optional_summary(captured, feedback, "bot_feedback.summary", 240)?;

    let identity = Value::Object(obj! {
        "schema_version" => RECEIPT_SCHEMA_VERSION,
        "application_receipt_id" => facts.receipt_id.as_str(),
        "application_outcome" => application_outcome.as_str(),
        "application_disposition" => disposition.as_str(),
        "module_outcome_ref" => outcome_ref.as_str(),
        "module_outcome_status" => outcome_status.as_str(),
    });
    let receipt_id = format!(
        "dogfood:{}",
        digest::sha256_prefix(&digest::j1(&identity), 20)
    );
    Ok(DogfoodReceipt {
        domain_family: family,
        domain_id,
        application_id,
        application_receipt_id: facts.receipt_id,
        artifact_ref,
        corpus_id,
        surface_id,
        application_outcome,
        disposition,
        outcome_ref,
        outcome_status,
        outcome_summary,
        utility,
        memory_ref_digests: facts.memory_ref_digests,
        result_readback_verified: readback,
        current_artifact_verified: current,
        cost,
        intervention_count,
        intervention_summary,
        bot_feedback_captured: captured,
        bot_feedback_summary: feedback_summary,
        receipt_id,
    })
}

impl DogfoodReceipt {
    fn cost_map(&self) -> Map {
        obj! {
            "latency_ms" => self.cost[0].clone(),
            "model_tokens" => self.cost[1].clone(),
            "provider_call_count" => self.cost[2].clone(),
        }
    }

    /// The compact batch entry (§5.6 key order).
    pub fn entry(&self) -> Map {
        obj! {
            "receipt_id" => self.receipt_id.as_str(),
            "domain_family" => self.domain_family.as_str(),
            "domain_id" => self.domain_id.as_str(),
            "application" => obj! {
                "application_id" => self.application_id.as_str(),
                "application_receipt_id" => self.application_receipt_id.as_str(),
                "artifact_ref" => self.artifact_ref.as_str(),
                "corpus_id" => self.corpus_id.as_str(),
                "surface_id" => self.surface_id.as_str(),
                "outcome" => self.application_outcome.as_str(),
                "disposition" => self.disposition.as_str(),
                "memory_ref_digests" => crate::wire::json::str_list(&self.memory_ref_digests),
                "verification" => obj! {
                    "result_readback_verified" => self.result_readback_verified,
                    "current_artifact_verified" => self.current_artifact_verified,
                },
            },
            "module_outcome" => obj! {
                "verified" => true,
                "outcome_ref" => self.outcome_ref.as_str(),
                "outcome_status" => self.outcome_status.as_str(),
                "summary" => self.outcome_summary.as_str(),
            },
            "utility" => obj! {
                "evaluation" => self.utility.evaluation(),
                "observation" => self.utility.observation(),
            },
            "cost" => self.cost_map(),
            "intervention" => obj! {
                "count" => self.intervention_count.clone(),
                "summary" => self.intervention_summary.clone(),
            },
            "bot_feedback" => obj! {
                "captured" => self.bot_feedback_captured,
                "summary" => self.bot_feedback_summary.clone(),
            },
        }
    }

    fn utility_label(&self) -> Option<&'static str> {
        match &self.utility {
            UtilityEvaluation::Accepted(o) => Some(o.utility_label.as_str()),
            _ => None,
        }
    }
}

/// Python `==` between two JSON values, where `1 == 1.0 == true`.
fn py_equal(a: &Value, b: &Value) -> bool {
    fn number(v: &Value) -> Option<f64> {
        match v {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn has_duplicates<T>(items: &[T], eq: impl Fn(&T, &T) -> bool) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(i, a)| items[i + 1..].iter().any(|b| eq(a, b)))
}

/// Evaluates built receipts and operator control receipts into the
/// `reward_memory_dogfood_batch_v1` packet. `stage4_gate_verified` is whether the
/// Stage-4 suite passed with a ready release gate ([`crate::contract::evaluation::gate_ready`]).
pub fn build_batch(
    receipts: &[DogfoodReceipt],
    controls: &[Map],
    stage4_gate_verified: bool,
) -> FieldResult<Map> {
    if receipts.len() > MAX_RECEIPTS {
        return Err(FieldError(format!(
            "dogfood batch accepts at most {MAX_RECEIPTS} receipts"
        )));
    }
    if controls.len() > MAX_OPERATOR_CONTROLS {
        return Err(FieldError(format!(
            "dogfood batch accepts at most {MAX_OPERATOR_CONTROLS} controls"
        )));
    }
    for control in controls {
        operator::validate_control_receipt(control)?;
    }
    if has_duplicates(receipts, |a, b| a.receipt_id == b.receipt_id) {
        return Err(fail("dogfood batch must not double-count a receipt"));
    }
    if has_duplicates(receipts, |a, b| {
        a.application_receipt_id == b.application_receipt_id
    }) {
        return Err(fail(
            "dogfood batch must not double-count an application settlement",
        ));
    }
    let control_refs: Vec<Value> = controls
        .iter()
        .map(|c| c.get("control_ref").cloned().unwrap_or_default())
        .collect();
    if has_duplicates(&control_refs, py_equal) {
        return Err(fail(
            "dogfood batch must not double-count an operator control",
        ));
    }

    let issue_fix_count = receipts
        .iter()
        .filter(|r| r.domain_family == "issue_fix")
        .count();
    let mut loopx_domains: Vec<&str> = receipts
        .iter()
        .filter(|r| r.domain_family == "loopx")
        .map(|r| r.domain_id.as_str())
        .collect();
    loopx_domains.sort_unstable();
    loopx_domains.dedup();
    let present = |d: &str| receipts.iter().any(|r| r.disposition.as_str() == d);
    let dispositions: Vec<&str> = DISPOSITIONS.into_iter().filter(|d| present(d)).collect();
    // Actions are counted as supplied: a validated ` edit ` is listed as such and does
    // not satisfy the `edit` requirement (the reference keeps the raw value).
    let mut control_actions: Vec<&str> = controls
        .iter()
        .filter_map(|c| c.get("action").and_then(Value::as_str))
        .collect();
    control_actions.sort_unstable();
    control_actions.dedup();

    let mut reasons: Vec<String> = Vec::new();
    if !stage4_gate_verified {
        reasons.push("stage4_release_gate_not_ready".to_owned());
    }
    if issue_fix_count < 1 {
        reasons.push("issue_fix_outcome_missing".to_owned());
    }
    if loopx_domains.len() < 2 {
        reasons.push("two_loopx_domains_required".to_owned());
    }
    for d in DISPOSITIONS.into_iter().filter(|d| !present(d)) {
        reasons.push(format!("application_disposition_missing:{d}"));
    }
    for a in operator::PREPARED_ACTIONS.iter().map(|a| a.as_str()) {
        if !control_actions.contains(&a) {
            reasons.push(format!("operator_control_missing:{a}"));
        }
    }
    let ready = reasons.is_empty();

    let count_where =
        |f: &dyn Fn(&DogfoodReceipt) -> bool| receipts.iter().filter(|r| f(r)).count();
    let label_count = |label: &str| count_where(&|r| r.utility_label() == Some(label));
    let metrics = obj! {
        "receipt_count" => receipts.len(),
        "issue_fix_receipt_count" => issue_fix_count,
        "loopx_domain_count" => loopx_domains.len(),
        "applied_count" => count_where(&|r| r.disposition == Disposition::Applied),
        "not_applied_count" => count_where(&|r| r.disposition == Disposition::NotApplied),
        "refuted_count" => count_where(&|r| r.disposition == Disposition::Refuted),
        "utility_observation_count" => count_where(&|r| r.utility_label().is_some()),
        "utility_helpful_count" => label_count("helpful"),
        "utility_harmful_count" => label_count("harmful"),
        "utility_neutral_count" => label_count("neutral"),
        "utility_unknown_count" => label_count("unknown"),
        "utility_rejected_count" => count_where(&|r| r.utility == UtilityEvaluation::Rejected),
        "utility_not_requested_count" => count_where(&|r| r.utility == UtilityEvaluation::NotRequested),
        "latency_ms" => sum_counts(receipts.iter().map(|r| &r.cost[0])),
        "model_tokens" => sum_counts(receipts.iter().map(|r| &r.cost[1])),
        "provider_call_count" => sum_counts(receipts.iter().map(|r| &r.cost[2])),
        "intervention_count" => sum_counts(receipts.iter().map(|r| &r.intervention_count)),
        "bot_feedback_count" => count_where(&|r| r.bot_feedback_captured),
    };
    Ok(obj! {
        "ok" => ready,
        "schema_version" => BATCH_SCHEMA_VERSION,
        "status" => if ready { READY } else { "hold" },
        "reason_codes" => reasons,
        "stage4_gate_verified" => stage4_gate_verified,
        "loopx_domains" => loopx_domains,
        "application_dispositions" => dispositions,
        "operator_controls" => control_actions,
        "metrics" => metrics,
        "receipts" => Value::Array(receipts.iter().map(|r| Value::Object(r.entry())).collect()),
        "boundaries" => obj! {
            "semantic_uplift_claim_allowed" => false,
            "production_rollout_allowed" => false,
            "automatic_recall_enabled" => false,
            "new_store_provider_or_scheduler_added" => false,
            "operator_write_performed" => false,
            "raw_content_captured" => false,
        },
    })
}

fn list<'a>(source: &'a Value, key: &str) -> FieldResult<&'a [Value]> {
    source
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| FieldError(format!("{key} must be a list")))
}

fn objects<'a>(items: &'a [Value], message: &str) -> FieldResult<Vec<&'a Map>> {
    items
        .iter()
        .map(|item| item.as_object().ok_or_else(|| fail(message)))
        .collect()
}

/// The command on an already parsed input; `stage4_ready` runs the Stage-4 gate once
/// every receipt has been built.
pub fn evaluate_input(
    source: &Value,
    stage4_ready: impl FnOnce() -> bool,
) -> Result<Value, DogfoodError> {
    let observations = list(source, "observations")?;
    let controls = list(source, "operator_controls")?;
    let observations = objects(observations, "each observation must be an object")?;
    let controls = objects(controls, "each operator control must be an object")?;
    let receipts: Vec<DogfoodReceipt> = observations
        .into_iter()
        .map(build_receipt)
        .collect::<FieldResult<_>>()?;
    let controls: Vec<Map> = controls.into_iter().cloned().collect();
    let batch = build_batch(&receipts, &controls, stage4_ready())?;
    Ok(Value::Object(batch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_sums_grow_past_i64() {
        assert_eq!(add_decimal("999", "1"), "1000");
        let huge = Value::BigInt("9223372036854775808".into());
        assert_eq!(
            sum_counts([Value::Int(1), huge].iter()),
            Value::BigInt("9223372036854775809".into())
        );
        assert_eq!(
            sum_counts([Value::Int(2), Value::Int(3)].iter()),
            Value::Int(5)
        );
    }

    #[test]
    fn dispositions_come_from_the_receipt_outcome() {
        assert_eq!(
            Disposition::from_outcome("ignored"),
            Some(Disposition::NotApplied)
        );
        assert_eq!(
            Disposition::from_outcome("refuted"),
            Some(Disposition::Refuted)
        );
        assert_eq!(Disposition::from_outcome("hit"), None);
    }

    #[test]
    fn a_failed_stage4_gate_holds_the_batch_first() {
        let batch = build_batch(&[], &[], false).expect("empty batch is valid");
        let reasons = batch
            .get("reason_codes")
            .and_then(Value::as_array)
            .expect("list");
        assert_eq!(
            reasons.first(),
            Some(&Value::from("stage4_release_gate_not_ready"))
        );
        assert_eq!(reasons.len(), 8);
        assert_eq!(batch.get("stage4_gate_verified"), Some(&Value::Bool(false)));
    }

    #[test]
    fn control_refs_compare_like_python() {
        assert!(py_equal(&Value::Int(1), &Value::Bool(true)));
        assert!(!py_equal(&Value::Int(5), &Value::from("5")));
    }
}
