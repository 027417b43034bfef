//! The check of an external evaluator's output: one JSON object holding only the fields
//! the runtime does not fill (`utility_label`, `attribution_level`, `evidence_basis`,
//! `confidence`, `reason_codes`, `evidence_refs`, and `memory_ref_digests` for an item).
//! A field the receipt determines may be repeated only with the receipt's value; a
//! basis above the evaluator's maximum tier is refused (never lowered), and
//! `owner_correction` is refused from every evaluator.

use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};
use crate::wire::json::{self, Value};

use super::facts::{EVALUATION_VERSION, Facts};
use super::judgment::Judgment;
use super::packet::Status;

/// Why a proposal is not used: `malformed` or `refused`, with a reason code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection {
    pub status: Status,
    pub reason: &'static str,
}

fn malformed(reason: &'static str) -> Rejection {
    Rejection {
        status: Status::Malformed,
        reason,
    }
}

fn refused(reason: &'static str) -> Rejection {
    Rejection {
        status: Status::Refused,
        reason,
    }
}

/// The keys an evaluator fills.
const PROPOSAL_KEYS: [&str; 7] = [
    "utility_label",
    "attribution_level",
    "evidence_basis",
    "confidence",
    "reason_codes",
    "evidence_refs",
    "memory_ref_digests",
];

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect(),
        Some(_) => None,
    }
}

/// Checks an evaluator's standard output against the facts and its maximum tier.
pub fn check(
    output: &[u8],
    facts: &Facts,
    evaluator_id: &str,
    max_tier: EvidenceBasis,
) -> Result<Judgment, Rejection> {
    let text = std::str::from_utf8(output).map_err(|_| malformed("output_not_utf8"))?;
    let value = json::parse(text.trim()).map_err(|_| malformed("output_not_json"))?;
    let map = value.as_object().ok_or(malformed("output_not_object"))?;
    let echoes: [(&str, Value); 9] = [
        ("scope", Value::Object(facts.scope.to_map())),
        ("application_id", Value::from(facts.application_id.as_str())),
        ("artifact_ref", Value::from(facts.artifact_ref.as_str())),
        ("outcome_ref", Value::from(facts.outcome_ref.as_str())),
        ("outcome_status", Value::from(facts.outcome_status.as_str())),
        (
            "retrieval_snapshot_ref",
            Value::from(facts.retrieval_snapshot_ref.as_str()),
        ),
        (
            "policy_snapshot_ref",
            Value::from(facts.policy_snapshot_ref.as_str()),
        ),
        ("evaluator_ref", Value::from(evaluator_id)),
        ("evaluation_version", Value::from(EVALUATION_VERSION)),
    ];
    for (key, value) in map.iter() {
        if PROPOSAL_KEYS.contains(&key) {
            continue;
        }
        match echoes.iter().find(|(k, _)| *k == key) {
            Some((_, trusted)) if trusted == value => {}
            Some(_) => return Err(malformed("proposal_contradicts_receipt")),
            None => return Err(malformed("proposal_unknown_field")),
        }
    }
    let text_of = |key: &str| map.get(key).and_then(Value::as_str);
    let basis = EvidenceBasis::parse(text_of("evidence_basis").unwrap_or_default())
        .ok_or(malformed("proposal_invalid_evidence_basis"))?;
    if basis == EvidenceBasis::OwnerCorrection {
        return Err(refused("owner_correction_not_attributable"));
    }
    if basis > max_tier {
        return Err(refused("evidence_basis_above_max_tier"));
    }
    let label = UtilityLabel::parse(text_of("utility_label").unwrap_or_default())
        .ok_or(malformed("proposal_invalid_utility_label"))?;
    let level = AttributionLevel::parse(text_of("attribution_level").unwrap_or_default())
        .ok_or(malformed("proposal_invalid_attribution_level"))?;
    let confidence = match map.get("confidence") {
        Some(Value::Float(f)) => *f,
        Some(Value::Int(i)) => *i as f64,
        _ => return Err(malformed("proposal_invalid_confidence")),
    };
    let reason_codes =
        strings(map.get("reason_codes")).ok_or(malformed("proposal_invalid_reason_codes"))?;
    let evidence_refs =
        strings(map.get("evidence_refs")).ok_or(malformed("proposal_invalid_evidence_refs"))?;
    let permitted = facts.permitted_refs();
    if evidence_refs.iter().any(|r| !permitted.contains(r)) {
        return Err(refused("evidence_ref_not_permitted"));
    }
    let digests = match level {
        AttributionLevel::Item => strings(map.get("memory_ref_digests"))
            .ok_or(malformed("proposal_invalid_memory_ref_digests"))?,
        _ => match map.get("memory_ref_digests") {
            None => facts.memory_ref_digests.clone(),
            Some(_) => strings(map.get("memory_ref_digests"))
                .ok_or(malformed("proposal_invalid_memory_ref_digests"))?,
        },
    };
    Ok(Judgment {
        label,
        level,
        basis,
        confidence,
        reason_codes,
        evidence_refs,
        memory_ref_digests: digests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::judgment::{OutcomeStatus, deterministic};

    fn facts(evidence: &[&str]) -> Facts {
        let receipt = json::parse(include_str!(
            "../../fixtures/utility_attribute/receipt.json"
        ))
        .expect("fixture");
        let evidence = evidence
            .iter()
            .map(|e| crate::attribution::EvidenceItem::parse(e).expect("evidence"))
            .collect();
        Facts::new(
            &receipt,
            Some("pilot"),
            Some("repository:example"),
            "effect:loop-1",
            OutcomeStatus::Succeeded,
            evidence,
        )
        .expect("facts")
    }

    #[test]
    fn a_deterministic_judgment_binds_to_the_receipt_through_the_builder() {
        let facts = facts(&["test:ci-17:passed:173d6e8701131c6b"]);
        let judgments = deterministic(
            &facts.memory_ref_digests,
            facts.applied,
            facts.outcome_status,
            &facts.evidence,
        );
        let observation = facts
            .observation(
                &judgments[0],
                "evaluator:deterministic",
                "2026-07-16T02:00:00+00:00",
            )
            .expect("observation");
        assert_eq!(
            observation.evidence_basis,
            EvidenceBasis::DeterministicEffect
        );
        assert_eq!(
            observation.retrieval_snapshot_ref.as_str(),
            "retrieval:unrecorded"
        );
        let again = facts
            .observation(
                &judgments[0],
                "evaluator:deterministic",
                "2027-01-01T00:00:00+00:00",
            )
            .expect("observation");
        assert_eq!(
            observation.observation_id, again.observation_id,
            "created_at is not identity"
        );
    }

    #[test]
    fn proposals_above_the_tier_or_contradicting_the_receipt_are_not_used() {
        let facts = facts(&[]);
        let owner = br#"{"utility_label": "helpful", "attribution_level": "item", "evidence_basis": "owner_correction", "confidence": 0.99, "reason_codes": [], "evidence_refs": ["effect:loop-1"], "memory_ref_digests": ["173d6e8701131c6b"]}"#;
        let no = check(
            owner,
            &facts,
            "evaluator:m",
            EvidenceBasis::EvaluatorInference,
        )
        .expect_err("owner");
        assert_eq!(
            (no.status, no.reason),
            (Status::Refused, "owner_correction_not_attributable")
        );
        let det =
            String::from_utf8_lossy(owner).replace("owner_correction", "deterministic_effect");
        let no = check(
            det.as_bytes(),
            &facts,
            "evaluator:m",
            EvidenceBasis::EvaluatorInference,
        )
        .expect_err("tier");
        assert_eq!(no.reason, "evidence_basis_above_max_tier");
        let inf = String::from_utf8_lossy(owner).replace("owner_correction", "evaluator_inference");
        let made_up = inf.replace("effect:loop-1", "x:1");
        assert_eq!(
            check(
                made_up.as_bytes(),
                &facts,
                "evaluator:m",
                EvidenceBasis::EvaluatorInference
            )
            .expect_err("ref")
            .reason,
            "evidence_ref_not_permitted"
        );
        let echo = inf.replacen('{', r#"{"application_id": "application:other", "#, 1);
        assert_eq!(
            check(
                echo.as_bytes(),
                &facts,
                "evaluator:m",
                EvidenceBasis::EvaluatorInference
            )
            .expect_err("echo")
            .reason,
            "proposal_contradicts_receipt"
        );
        assert_eq!(
            check(
                b"garbage",
                &facts,
                "evaluator:m",
                EvidenceBasis::EvaluatorInference
            )
            .expect_err("garbage")
            .status,
            Status::Malformed
        );
        let ok = check(
            inf.as_bytes(),
            &facts,
            "evaluator:m",
            EvidenceBasis::EvaluatorInference,
        )
        .expect("valid");
        assert!(
            facts
                .observation(&ok, "evaluator:m", "2026-07-16T02:00:00+00:00")
                .is_ok()
        );
    }
}
