//! Test-only builders: the spec's stage-2 fixture world and a compact way to make many
//! valid observations.

use crate::obj;
use crate::wire::json::{self, Value};

use super::observation::{Observation, build_observation};
use super::reducer::{ProjectionRequest, reduce};

pub const DIGEST_A: &str = "0123456789abcdef";

/// The spec §8.1 application receipt over `digests` (must be sorted).
pub fn receipt(digests: &[&str]) -> Value {
    Value::Object(obj! {
        "schema_version" => "reward_memory_application_receipt_v0",
        "application_id" => "application:stage2",
        "artifact_ref" => "artifact:stage2",
        "corpus_id" => "reward-memory-corpus",
        "surface_id" => "loopx.issue_fix",
        "mode" => "function_boundary",
        "query_kind" => "business_recall",
        "query_evidence" => vec![Value::Object(obj! {
            "query_digest" => "aabbccddeeff0011",
            "query_summary" => "bounded utility fixture",
            "exact_query_exposed" => false,
        })],
        "outcome" => "applied",
        "memory_ref_digests" => json::str_list(digests),
        "reasoning_summary" => "Applied the recalled guidance to the fixture.",
        "current_artifact_verified" => true,
        "result_readback_verified" => true,
        "provider_call_count" => 1,
        "model_reasoning_preserved" => true,
        "grants_new_action_authority" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

pub fn scope() -> Value {
    Value::Object(obj! {
        "agent_id" => "agent:stage2",
        "project_id" => "project:loopx",
        "corpus_id" => "reward-memory-corpus",
        "surface_id" => "loopx.issue_fix",
    })
}

pub fn outcome() -> Value {
    Value::Object(obj! {
        "verified" => true,
        "outcome_ref" => "effect:stage2",
        "artifact_ref" => "artifact:stage2",
        "outcome_status" => "succeeded",
    })
}

pub fn context() -> Value {
    Value::Object(obj! {
        "scope" => scope(),
        "retrieval_snapshot_ref" => "retrieval:stage2",
        "policy_snapshot_ref" => "policy:stage2",
    })
}

/// What varies between generated observations.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The receipt's digests (sorted, non-empty).
    pub receipt_digests: Vec<String>,
    /// `item` binds `item_digest`; `set`/`none` bind the whole receipt.
    pub level: &'static str,
    pub item_digest: String,
    pub label: &'static str,
    pub basis: &'static str,
    pub confidence: f64,
    pub version: String,
    pub evidence_ref: String,
    pub created_at: String,
}

impl Spec {
    pub fn item(label: &'static str, basis: &'static str, confidence: f64, version: &str) -> Spec {
        Spec {
            receipt_digests: vec![DIGEST_A.to_owned()],
            level: "item",
            item_digest: DIGEST_A.to_owned(),
            label,
            basis,
            confidence,
            version: version.to_owned(),
            evidence_ref: format!("evidence:{version}"),
            created_at: "2026-08-15T00:00:00Z".to_owned(),
        }
    }

    pub fn at(mut self, created_at: &str) -> Spec {
        self.created_at = created_at.to_owned();
        self
    }

    pub fn proposal(&self) -> Value {
        let digests: Vec<&str> = if self.level == "item" {
            vec![self.item_digest.as_str()]
        } else {
            self.receipt_digests.iter().map(String::as_str).collect()
        };
        Value::Object(obj! {
            "scope" => scope(),
            "application_id" => "application:stage2",
            "artifact_ref" => "artifact:stage2",
            "outcome_ref" => "effect:stage2",
            "outcome_status" => "succeeded",
            "retrieval_snapshot_ref" => "retrieval:stage2",
            "policy_snapshot_ref" => "policy:stage2",
            "memory_ref_digests" => json::str_list(&digests),
            "utility_label" => self.label,
            "attribution_level" => self.level,
            "evidence_basis" => self.basis,
            "confidence" => self.confidence,
            "reason_codes" => json::str_list(&["stage2_fixture"]),
            "evidence_refs" => if self.evidence_ref.is_empty() {
                Value::Array(Box::default())
            } else {
                json::str_list(&[self.evidence_ref.as_str()])
            },
            "evaluator_ref" => "evaluator:stage2",
            "evaluation_version" => self.version.as_str(),
        })
    }

    pub fn build(&self) -> Observation {
        let digests: Vec<&str> = self.receipt_digests.iter().map(String::as_str).collect();
        build_observation(
            &receipt(&digests),
            &outcome(),
            &context(),
            &self.proposal(),
            &Value::from(self.created_at.as_str()),
        )
        .unwrap_or_else(|e| panic!("fixture {self:?} must build: {e}"))
    }
}

/// `first` (at 2026-08-15T00:00:00Z) followed by 256 later helpful evaluator
/// inferences on the same item: one more entry than the projection's history keeps.
pub fn history_overflow(first: Spec) -> Vec<Value> {
    let mut stream = vec![first.at("2026-08-15T00:00:00Z").build().to_value()];
    for i in 1..257 {
        let at = format!("2026-08-15T01:{:02}:{:02}Z", i / 60, i % 60);
        stream.push(
            Spec::item("helpful", "evaluator_inference", 0.1, &format!("v{i}"))
                .at(&at)
                .build()
                .to_value(),
        );
    }
    stream
}

/// Reduces observation packets in the stage-2 context.
pub fn project(observations: &[Value]) -> Value {
    let version = Value::from("memory_utility_reducer_v0");
    let retrieval = Value::from("retrieval:stage2");
    let policy = Value::from("policy:stage2");
    let scope = scope();
    reduce(&ProjectionRequest {
        observations,
        scope: &scope,
        retrieval_snapshot_ref: &retrieval,
        policy_snapshot_ref: &policy,
        reducer_version: &version,
        previous_projection: None,
    })
    .unwrap_or_else(|e| panic!("projection must pass readback: {e}"))
}

/// The subject of `projection` with `subject_id`, if any.
pub fn subjects(projection: &Value) -> &[Value] {
    projection
        .get("subjects")
        .and_then(Value::as_array)
        .unwrap_or(&[])
}
