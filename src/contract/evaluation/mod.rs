//! `evaluate`: the Stage-4 provider-neutral contract suite and its release gate
//! (`reward_memory_evaluation_v0`).
//!
//! Owns case orchestration, the assertions of the eight cases, per-case metrics, the
//! aggregates, the four reporting dimensions and the release gate. Setup and the provider
//! double live in [`fixtures`]. The suite is pure except for time: the caller passes a
//! monotonic clock (the `evaluate` and `dogfood-evaluate` handlers of the shell pass
//! the process's). It never writes anything.

pub mod fixtures;

use crate::contract::route::RouteError;
use crate::obj;
use crate::recall::RecallError;
use crate::wire::digest;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr;
use crate::wire::text::FieldError;

use fixtures::WriteTally;

/// Schema of the evaluation packet.
pub const EVALUATION_SCHEMA_VERSION: &str = "reward_memory_evaluation_v0";
/// Schema of the release gate inside it.
pub const RELEASE_GATE_SCHEMA_VERSION: &str = "reward_memory_release_gate_v0";
/// Release gate status when every case passed and every guarded count is zero.
pub const GATE_READY: &str = "ready_for_bounded_dogfood";

/// The eight contract cases, in execution order.
pub const CASE_IDS: [&str; 8] = [
    "compact_restart_survival",
    "project_module_scope_isolation",
    "supersede_revoke_rejection",
    "stale_source_rejection",
    "multi_person_authority_conditions",
    "gate_non_override",
    "candidate_ranking_influence",
    "large_edge_case_patch_protection",
];

/// Metrics that must stay zero for the gate to pass, in reason-code order.
const ZERO_METRICS: [&str; 6] = [
    "storage_write_bytes",
    "provider_write_count",
    "external_write_count",
    "false_application_count",
    "maintainer_interruption_count",
    "user_gate_count",
];

/// Why a case could not run to its assertions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvaluationError {
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error(transparent)]
    Recall(#[from] RecallError),
    #[error(transparent)]
    Route(#[from] RouteError),
    #[error("fixture is inconsistent: {0}")]
    Fixture(&'static str),
}

impl EvaluationError {
    /// The `failure_kind` reported for a case that stopped with this error (the
    /// reference reports the exception class; a field error is its `ValueError`).
    pub fn kind(&self) -> &'static str {
        match self {
            EvaluationError::Field(_)
            | EvaluationError::Recall(RecallError::Field(_))
            | EvaluationError::Route(RouteError::Field(_)) => "ValueError",
            EvaluationError::Recall(RecallError::Provider(_)) => "ProviderError",
            EvaluationError::Fixture(_) => "FixtureError",
        }
    }
}

/// A monotonic clock in nanoseconds (any fixed origin).
pub type Clock<'a> = &'a dyn Fn() -> u128;

/// What a case observed: one bool per assertion, its public evidence and the writes
/// its provider doubles saw.
struct Check {
    assertions: Vec<bool>,
    evidence: Map,
    writes: WriteTally,
}

type CaseFn = fn() -> Result<Check, EvaluationError>;

fn strings(items: &[String]) -> Value {
    Value::from(items.to_vec())
}

fn compact_restart_case() -> Result<Check, EvaluationError> {
    let o = fixtures::compact_restart()?;
    Ok(Check {
        assertions: vec![
            o.record_schema_version == "reward_memory_active_record_v0",
            o.recall_status == "completed",
            o.readback_verified,
            o.provider_call_count == 1,
        ],
        evidence: obj! {
            "serialized_bytes" => o.serialized_bytes,
            "recall_status" => o.recall_status,
            "readback_verified" => o.readback_verified,
        },
        writes: o.writes,
    })
}

fn scope_case() -> Result<Check, EvaluationError> {
    let o = fixtures::scope_isolation()?;
    let has = |codes: &[String], code: &str| codes.iter().any(|c| c == code);
    Ok(Check {
        assertions: vec![
            o.project_status == "guard_blocked",
            has(&o.project_reason_codes, "project_scope_mismatch"),
            o.surface_status == "guard_blocked",
            has(&o.surface_reason_codes, "surface_scope_mismatch"),
            o.provider_call_count == 0,
        ],
        evidence: obj! {
            "project_status" => o.project_status,
            "surface_status" => o.surface_status,
            "provider_call_count" => o.provider_call_count,
            "false_application_observed" => o.provider_call_count > 0,
        },
        writes: o.writes,
    })
}

fn inactive_case() -> Result<Check, EvaluationError> {
    let o = fixtures::inactive_lifecycle()?;
    Ok(Check {
        assertions: vec![
            o.recall_status == "empty",
            o.result_count == 0,
            !o.readback_verified,
        ],
        evidence: obj! {
            "recall_status" => o.recall_status,
            "accepted_result_count" => o.result_count,
            "false_application_observed" => o.result_count > 0,
        },
        writes: o.writes,
    })
}

fn stale_case() -> Result<Check, EvaluationError> {
    let o = fixtures::stale_source()?;
    let has = |code: &str| o.reason_codes.iter().any(|c| c == code);
    Ok(Check {
        assertions: vec![
            o.recall_status == "guard_blocked",
            has("source_revision_mismatch"),
            has("request_revision_mismatch"),
            o.provider_call_count == 0,
        ],
        evidence: obj! {
            "recall_status" => o.recall_status.as_str(),
            "reason_codes" => strings(&o.reason_codes),
            "provider_call_count" => o.provider_call_count,
            "false_application_observed" => o.provider_call_count > 0,
        },
        writes: o.writes,
    })
}

fn multi_person_case() -> Result<Check, EvaluationError> {
    let o = fixtures::multi_person_authority()?;
    Ok(Check {
        assertions: vec![
            o.matching_actor_guard,
            !o.mismatched_actor_guard,
            o.reason_codes
                .iter()
                .any(|c| c == "authority_actor_mismatch"),
        ],
        evidence: obj! {
            "matching_actor_guard" => o.matching_actor_guard,
            "mismatched_actor_guard" => o.mismatched_actor_guard,
            "reason_codes" => strings(&o.reason_codes),
        },
        writes: WriteTally::default(),
    })
}

fn receipt_flag(receipt: &Map, key: &str) -> Value {
    receipt.get(key).cloned().unwrap_or(Value::Null)
}

fn gate_case() -> Result<Check, EvaluationError> {
    let o = fixtures::issue_fix_application()?;
    let receipt = o.receipt();
    let grants = receipt_flag(&receipt, "grants_new_action_authority");
    let current = receipt_flag(&receipt, "current_artifact_verified");
    Ok(Check {
        assertions: vec![
            o.status() == "applied",
            grants == Value::Bool(false),
            current == Value::Bool(true),
            receipt_flag(&receipt, "external_writes_performed") == Value::Bool(false),
        ],
        evidence: obj! {
            "application_status" => o.status(),
            "grants_new_action_authority" => grants.clone(),
            "current_artifact_verified" => current,
            "false_application_observed" => grants,
        },
        writes: o.writes,
    })
}

fn ranking_case() -> Result<Check, EvaluationError> {
    let o = fixtures::issue_fix_application()?;
    let top = o.top_candidate();
    let has_digests = o
        .receipt()
        .get("memory_ref_digests")
        .is_some_and(Value::is_truthy);
    Ok(Check {
        assertions: vec![
            top.as_deref() == Some("focused_fix"),
            o.status() == "applied",
            has_digests,
            o.shared_core == fixtures::SHARED_CORE,
        ],
        evidence: obj! {
            "top_candidate" => top,
            "application_status" => o.status(),
            "shared_core" => o.shared_core,
        },
        writes: o.writes,
    })
}

fn edge_case() -> Result<Check, EvaluationError> {
    let route = fixtures::pr_3237_route()?;
    let flag = |key: &str| route.get(key) == Some(&Value::Bool(true));
    let missing = route
        .get("missing_required_evidence")
        .cloned()
        .unwrap_or(Value::Null);
    let mut missing_set: Vec<String> = missing
        .as_array()
        .map(|items| items.iter().map(|i| pystr(Some(i))).collect())
        .unwrap_or_default();
    missing_set.sort_unstable();
    missing_set.dedup();
    let decision = pystr(route.get("decision"));
    Ok(Check {
        assertions: vec![
            decision == "meta_design_gate",
            route.get("pilot_authorized") == Some(&Value::Bool(false)),
            route.get("memory_patch_authority") == Some(&Value::Bool(false)),
            missing_set == ["effect", "performance", "ux"],
        ],
        evidence: obj! {
            "decision" => decision,
            "pilot_authorized" => route.get("pilot_authorized").cloned().unwrap_or(Value::Null),
            "memory_patch_authority" => route.get("memory_patch_authority").cloned().unwrap_or(Value::Null),
            "missing_required_evidence" => missing,
            "false_application_observed" => flag("pilot_authorized") || flag("memory_patch_authority"),
        },
        writes: WriteTally::default(),
    })
}

fn case_fn(case_id: &str) -> CaseFn {
    match case_id {
        "compact_restart_survival" => compact_restart_case,
        "project_module_scope_isolation" => scope_case,
        "supersede_revoke_rejection" => inactive_case,
        "stale_source_rejection" => stale_case,
        "multi_person_authority_conditions" => multi_person_case,
        "gate_non_override" => gate_case,
        "candidate_ranking_influence" => ranking_case,
        _ => edge_case,
    }
}

/// Runs one case and returns its record (§3.3 key order). A case that stops with an
/// error fails with one assertion, empty evidence and the error's kind.
fn run_case(case_id: &str, check: CaseFn, clock: Clock<'_>) -> Map {
    let started = clock();
    let outcome = check();
    let latency_ms = clock().saturating_sub(started) / 1_000_000;
    let (passed, assertion_count, failure_kind, evidence, writes) = match outcome {
        Ok(c) => {
            let passed = c.assertions.iter().all(|a| *a);
            let kind = (!passed).then_some("assertion_failed");
            (passed, c.assertions.len(), kind, c.evidence, c.writes)
        }
        Err(err) => (
            false,
            1,
            Some(err.kind()),
            Map::new(),
            WriteTally::default(),
        ),
    };
    let evidence_bytes = digest::j3(&Value::Object(evidence.clone())).len();
    let false_application = evidence
        .get("false_application_observed")
        .is_some_and(Value::is_truthy);
    obj! {
        "case_id" => case_id,
        "passed" => passed,
        "assertion_count" => assertion_count,
        "failure_kind" => failure_kind,
        "latency_ms" => u64::try_from(latency_ms).unwrap_or(u64::MAX),
        "public_evidence_bytes" => evidence_bytes,
        "model_tokens" => 0,
        "storage_write_bytes" => 0,
        "provider_write_count" => writes.provider_write_attempts,
        "external_write_count" => 0,
        "false_application_count" => usize::from(false_application),
        "maintainer_interruption_count" => 0,
        "user_gate_count" => 0,
        "evidence" => evidence,
    }
}

fn count(record: &Map, key: &str) -> u64 {
    match record.get(key) {
        Some(Value::Int(n)) => u64::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

fn metrics(cases: &[Map], failed: usize) -> Map {
    let sum = |key: &str| cases.iter().map(|c| count(c, key)).sum::<u64>();
    obj! {
        "case_count" => cases.len(),
        "passed_case_count" => cases.len() - failed,
        "failed_case_count" => failed,
        "assertion_count" => sum("assertion_count"),
        "latency_ms" => sum("latency_ms"),
        "model_tokens" => sum("model_tokens"),
        "public_evidence_bytes" => sum("public_evidence_bytes"),
        "storage_write_bytes" => sum("storage_write_bytes"),
        "provider_write_count" => sum("provider_write_count"),
        "external_write_count" => sum("external_write_count"),
        "false_application_count" => sum("false_application_count"),
        "maintainer_interruption_count" => sum("maintainer_interruption_count"),
        "user_gate_count" => sum("user_gate_count"),
    }
}

fn pick(metrics: &Map, keys: &[&str]) -> Map {
    let mut out = Map::new();
    for key in keys {
        out.insert(*key, metrics.get(key).cloned().unwrap_or(Value::Null));
    }
    out
}

/// Assembles the evaluation packet from finished case records.
fn evaluation_packet(cases: Vec<Map>) -> Map {
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| c.get("passed") != Some(&Value::Bool(true)))
        .map(|c| pystr(c.get("case_id")))
        .collect();
    let metrics = metrics(&cases, failed.len());
    let mut reasons: Vec<String> = failed
        .iter()
        .map(|id| format!("case_failed:{id}"))
        .collect();
    for metric in ZERO_METRICS {
        if count(&metrics, metric) != 0 {
            reasons.push(format!("nonzero:{metric}"));
        }
    }
    let passed = reasons.is_empty();
    let dimensions = obj! {
        "task_outcome" => pick(&metrics, &["case_count", "passed_case_count", "failed_case_count", "assertion_count"]),
        "user_experience" => pick(&metrics, &["maintainer_interruption_count", "user_gate_count"]),
        "performance_and_cost" => pick(&metrics, &["latency_ms", "model_tokens", "public_evidence_bytes", "storage_write_bytes"]),
        "application_quality" => pick(&metrics, &["false_application_count"]),
    };
    obj! {
        "ok" => passed,
        "schema_version" => EVALUATION_SCHEMA_VERSION,
        "status" => if passed { "passed" } else { "failed" },
        "suite" => "stage4_provider_neutral_contract",
        "runner" => "loopx_reward_memory_evaluation",
        "executes_real_core" => true,
        "uses_surrogate_evaluator" => false,
        "cases" => Value::Array(cases.into_iter().map(Value::Object).collect()),
        "metrics" => metrics,
        "dimensions" => dimensions,
        "release_gate" => obj! {
            "schema_version" => RELEASE_GATE_SCHEMA_VERSION,
            "status" => if passed { GATE_READY } else { "hold" },
            "decision" => if passed { "advance_stage_5" } else { "repair_stage_4" },
            "reason_codes" => reasons,
            "claim_scope" => "core_contract_invariants_only",
            "semantic_uplift_claim_allowed" => false,
            "production_rollout_allowed" => false,
        },
        "boundaries" => obj! {
            "provider_writes_performed" => false,
            "external_writes_performed" => false,
            "raw_memory_captured" => false,
            "model_reasoning_replaced" => false,
            "new_store_provider_or_scheduler_added" => false,
        },
    }
}

/// Runs the eight cases against the real core, timing each with `clock`, and returns
/// the `reward_memory_evaluation_v0` packet with its release gate.
pub fn run_evaluation(clock: Clock<'_>) -> Map {
    let cases = CASE_IDS
        .iter()
        .map(|id| run_case(id, case_fn(id), clock))
        .collect();
    evaluation_packet(cases)
}

/// True when `evaluation` is a passed Stage-4 packet whose release gate is ready for
/// bounded dogfood (what `dogfood-evaluate` requires before a pilot).
pub fn gate_ready(evaluation: &Map) -> bool {
    let is = |v: Option<&Value>, s: &str| v.and_then(Value::as_str) == Some(s);
    is(evaluation.get("schema_version"), EVALUATION_SCHEMA_VERSION)
        && is(evaluation.get("status"), "passed")
        && is(
            evaluation.get("release_gate").and_then(|g| g.get("status")),
            GATE_READY,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frozen() -> u128 {
        0
    }

    #[test]
    fn the_suite_passes_with_the_recorded_totals() {
        let packet = run_evaluation(&frozen);
        let metrics = packet
            .get("metrics")
            .and_then(Value::as_object)
            .expect("metrics");
        assert_eq!(packet.get("status"), Some(&Value::from("passed")));
        assert_eq!(metrics.get("assertion_count"), Some(&Value::Int(31)));
        assert_eq!(metrics.get("public_evidence_bytes"), Some(&Value::Int(997)));
        assert!(gate_ready(&packet));
    }

    #[test]
    fn latency_is_the_floored_clock_difference() {
        let ticks = std::cell::Cell::new(0u128);
        let clock = || {
            let now = ticks.get();
            ticks.set(now + 2_500_000);
            now
        };
        let record = run_case("large_edge_case_patch_protection", edge_case, &clock);
        assert_eq!(record.get("latency_ms"), Some(&Value::Int(2)));
    }

    #[test]
    fn a_failing_case_holds_the_gate_with_its_reason() {
        fn broken() -> Result<Check, EvaluationError> {
            Err(EvaluationError::Fixture("broken on purpose"))
        }
        let mut cases: Vec<Map> = CASE_IDS
            .iter()
            .map(|id| run_case(id, case_fn(id), &frozen))
            .collect();
        cases[2] = run_case(CASE_IDS[2], broken, &frozen);
        let packet = evaluation_packet(cases);
        let gate = packet.get("release_gate").expect("gate");
        assert_eq!(gate.get("status"), Some(&Value::from("hold")));
        assert_eq!(
            gate.get("reason_codes"),
            Some(&Value::from(vec!["case_failed:supersede_revoke_rejection"]))
        );
        assert!(!gate_ready(&packet));
    }

    #[test]
    fn a_false_application_trips_the_nonzero_gate() {
        fn leaky() -> Result<Check, EvaluationError> {
            Ok(Check {
                assertions: vec![true],
                evidence: obj! {"false_application_observed" => true},
                writes: WriteTally::default(),
            })
        }
        let cases = vec![run_case("leaky", leaky, &frozen)];
        let packet = evaluation_packet(cases);
        let gate = packet.get("release_gate").expect("gate");
        assert_eq!(
            gate.get("reason_codes"),
            Some(&Value::from(vec!["nonzero:false_application_count"]))
        );
    }
}
