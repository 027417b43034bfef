//! The reduction of one subject: its identity (`mui_`/`mus_`/`mul_`), evidence-tier
//! precedence, the noisy-OR confidence, the joint evidence summary and the review state.
//! Shared by the reducer, which reduces each subject of a stream, and the readback
//! validator, which re-derives a printed subject from its history. Pure.

use std::collections::BTreeSet;

use crate::wire::digest;
use crate::wire::json::Json;

use super::super::bounds::{UTILITY_MAX, UTILITY_MIN};
use super::super::observation::{AttributionLevel, EvidenceBasis, Observation, UtilityLabel};
use super::super::strict::bounded;

/// One `(evidence_basis, utility_label)` pair of a subject's joint evidence summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryPair {
    pub basis: EvidenceBasis,
    pub label: UtilityLabel,
    pub count: usize,
    pub combined_confidence: f64,
}

/// A subject's review state.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub state: &'static str,
    pub proposed_action: &'static str,
    /// Sorted and unique.
    pub reason_codes: Vec<&'static str>,
}

impl Review {
    fn none() -> Review {
        Review {
            state: "none",
            proposed_action: "none",
            reason_codes: Vec::new(),
        }
    }

    /// True in the `conflict` state (which proposes quarantine).
    pub fn quarantine_proposed(&self) -> bool {
        self.state == "conflict"
    }
}

/// The reduced state of one subject.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectState {
    pub subject_id: String,
    pub level: AttributionLevel,
    pub memory_ref_digests: Vec<String>,
    pub utility_estimate: f64,
    pub effective_label: UtilityLabel,
    pub effective_basis: EvidenceBasis,
    pub confidence: f64,
    pub uncertainty: f64,
    /// Counts per label in [`UtilityLabel::ALL`] order.
    pub support: [usize; 4],
    /// Counts per tier in [`EvidenceBasis::ALL`] order.
    pub evidence_strength: [usize; 5],
    pub summary: Vec<SummaryPair>,
    pub observation_count: usize,
    pub last_observed_at: String,
    pub last_observation_id: String,
    pub review: Review,
}

/// Noisy-OR over confidences in the given order: `r6(1 − Π(1 − clamp01(c)))`.
pub fn combined_confidence<'a>(confidences: impl IntoIterator<Item = &'a f64>) -> f64 {
    let mut remaining = 1.0_f64;
    for &c in confidences {
        // Python's `min(1.0, max(0.0, c))`: the first argument wins ties.
        let low = if c > 0.0 { c } else { 0.0 };
        let clamped = if low < 1.0 { low } else { 1.0 };
        remaining *= 1.0 - clamped;
    }
    bounded(1.0 - remaining, 0.0, 1.0)
}

/// The subject identity of an observation: `mui_`/`mus_`/`mul_` + 64 hex.
pub fn subject_id(observation: &Observation) -> String {
    subject_id_for(
        observation.attribution_level,
        &observation.memory_ref_digests,
        &observation.application_receipt_id,
    )
}

/// The subject identity of a level, its sorted digests and (for `none` only) the
/// application receipt id.
pub fn subject_id_for(
    level: AttributionLevel,
    memory_ref_digests: &[String],
    application_receipt_id: &str,
) -> String {
    // Borrowed fields in sorted key order: the canonical bytes, without building a value.
    let digests = Json::Strs(memory_ref_digests);
    let level_text = Json::Str(level.as_str());
    match level {
        AttributionLevel::None => digest::prefixed_canonical_fields(
            "mul_",
            &[
                ("application_receipt_id", Json::Str(application_receipt_id)),
                ("attribution_level", level_text),
                ("memory_ref_digests", digests),
            ],
        ),
        AttributionLevel::Item | AttributionLevel::Set => digest::prefixed_canonical_fields(
            if level == AttributionLevel::Item {
                "mui_"
            } else {
                "mus_"
            },
            &[
                ("attribution_level", level_text),
                ("memory_ref_digests", digests),
            ],
        ),
    }
}

/// The observation with the greatest order key.
pub fn latest<'a>(observations: &[&'a Observation]) -> Option<&'a Observation> {
    observations
        .iter()
        .copied()
        .max_by(|a, b| a.order_key().cmp(&b.order_key()))
}

/// Reduces one subject's observations, taken in the order given (which fixes the
/// multiplication order of the noisy-OR). `observations` must not be empty.
pub fn reduce_subject(
    subject_id: &str,
    level: AttributionLevel,
    memory_ref_digests: &[String],
    observations: &[&Observation],
) -> SubjectState {
    let mut support = [0usize; 4];
    let mut strength = [0usize; 5];
    // One bucket per (tier, label) pair keeps each pair's confidences in subject order.
    let mut buckets: Vec<Vec<f64>> = vec![Vec::new(); 20];
    for o in observations {
        support[o.utility_label.index()] += 1;
        strength[o.evidence_basis.index()] += 1;
        buckets[o.evidence_basis.index() * 4 + o.utility_label.index()].push(o.confidence);
    }
    let strongest = EvidenceBasis::ALL
        .iter()
        .copied()
        .rev()
        .find(|b| strength[b.index()] > 0)
        .unwrap_or(EvidenceBasis::Insufficient);
    let summary: Vec<SummaryPair> = EvidenceBasis::ALL
        .iter()
        .flat_map(|&basis| UtilityLabel::ALL.iter().map(move |&label| (basis, label)))
        .filter_map(|(basis, label)| {
            let bucket = &buckets[basis.index() * 4 + label.index()];
            (!bucket.is_empty()).then(|| SummaryPair {
                basis,
                label,
                count: bucket.len(),
                combined_confidence: combined_confidence(bucket),
            })
        })
        .collect();

    let unknown = |review: Review| (UtilityLabel::Unknown, 0.0, 0.0, 1.0, review);
    let known = observations
        .iter()
        .any(|o| o.utility_label.direction().is_some());
    let (label, utility, confidence, uncertainty, review) = if level == AttributionLevel::None {
        unknown(Review {
            state: "unresolved_attribution",
            proposed_action: "collect_attribution",
            reason_codes: vec!["attribution_not_established"],
        })
    } else if !known {
        unknown(Review::none())
    } else {
        let top: Vec<&Observation> = observations
            .iter()
            .copied()
            .filter(|o| o.evidence_basis == strongest)
            .collect();
        let top_has_unknown = top.iter().any(|o| o.utility_label == UtilityLabel::Unknown);
        let directional: Vec<&Observation> = top
            .iter()
            .copied()
            .filter(|o| o.utility_label.direction().is_some())
            .collect();
        let directional_labels: BTreeSet<UtilityLabel> =
            directional.iter().map(|o| o.utility_label).collect();
        let lower_direction = observations
            .iter()
            .any(|o| o.utility_label.direction().is_some() && o.evidence_basis < strongest);
        if top_has_unknown {
            let mut reasons = Vec::new();
            if !directional.is_empty() || lower_direction {
                reasons.push("strongest_evidence_unknown");
            }
            if directional_labels.len() > 1 {
                reasons.push("same_evidence_tier_conflict");
            }
            reasons.sort_unstable();
            let review = if reasons.is_empty() {
                Review::none()
            } else {
                Review {
                    state: "conflict",
                    proposed_action: "manual_review",
                    reason_codes: reasons,
                }
            };
            unknown(review)
        } else if directional_labels.len() != 1 {
            unknown(Review {
                state: "conflict",
                proposed_action: "manual_review",
                reason_codes: vec!["same_evidence_tier_conflict"],
            })
        } else {
            let label = directional[0].utility_label;
            let confidence = combined_confidence(directional.iter().map(|o| &o.confidence));
            let direction = label.direction().unwrap_or(0.0);
            let utility = bounded(direction * confidence, UTILITY_MIN, UTILITY_MAX);
            let uncertainty = bounded(1.0 - confidence, 0.0, 1.0);
            let review = if label == UtilityLabel::Harmful {
                Review {
                    state: "attenuation_proposed",
                    proposed_action: "attenuate_or_review",
                    reason_codes: vec!["negative_utility_requires_review"],
                }
            } else {
                Review::none()
            };
            (label, utility, confidence, uncertainty, review)
        }
    };
    let last = latest(observations);
    SubjectState {
        subject_id: subject_id.to_owned(),
        level,
        memory_ref_digests: memory_ref_digests.to_vec(),
        utility_estimate: utility,
        effective_label: label,
        effective_basis: strongest,
        confidence,
        uncertainty,
        support,
        evidence_strength: strength,
        summary,
        observation_count: observations.len(),
        last_observed_at: last.map_or_else(String::new, |o| o.created_at.as_str().to_owned()),
        last_observation_id: last
            .map_or_else(String::new, |o| o.observation_id.as_str().to_owned()),
        review,
    }
}
