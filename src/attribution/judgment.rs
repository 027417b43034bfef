//! A judgment: what an evaluator concluded about one memory or the applied set (label,
//! level, basis, confidence, reason codes, evidence refs, the digests it binds), before
//! it is bound to the receipt's facts. The built-in deterministic evaluator's table lives
//! here ([`deterministic`]).

use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};

use super::evidence::{CheckResult, EvidenceItem, Target};

/// The verified outcome's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeStatus {
    Succeeded,
    Failed,
    Partial,
}

impl OutcomeStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Succeeded => "succeeded",
            OutcomeStatus::Failed => "failed",
            OutcomeStatus::Partial => "partial",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<OutcomeStatus> {
        match text {
            "succeeded" => Some(OutcomeStatus::Succeeded),
            "failed" => Some(OutcomeStatus::Failed),
            "partial" => Some(OutcomeStatus::Partial),
            _ => None,
        }
    }
}

/// One evaluator conclusion, not yet bound to the receipt.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgment {
    pub label: UtilityLabel,
    pub level: AttributionLevel,
    pub basis: EvidenceBasis,
    pub confidence: f64,
    pub reason_codes: Vec<String>,
    pub evidence_refs: Vec<String>,
    /// One digest for an item judgment; the whole applied set otherwise.
    pub memory_ref_digests: Vec<String>,
}

/// The confidence of a deterministic effect: a check tied to one memory shows the
/// memory's part in the outcome, not that the memory alone caused it.
pub const DETERMINISTIC_CONFIDENCE: f64 = 0.8;

/// The label a check's results give one memory (or the set) under the outcome: helpful
/// when only passing checks are tied to it and the outcome succeeded or was partial;
/// harmful when only failing checks are and the outcome failed or was partial; nothing
/// when the checks disagree with each other or with the outcome.
fn label_of(results: &[CheckResult], outcome: OutcomeStatus) -> Option<UtilityLabel> {
    let passed = results.contains(&CheckResult::Passed);
    let failed = results.contains(&CheckResult::Failed);
    match (passed, failed, outcome) {
        (true, false, OutcomeStatus::Succeeded | OutcomeStatus::Partial) => {
            Some(UtilityLabel::Helpful)
        }
        (false, true, OutcomeStatus::Failed | OutcomeStatus::Partial) => {
            Some(UtilityLabel::Harmful)
        }
        _ => None,
    }
}

fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}

/// The built-in deterministic evaluator over the receipt's applied digests (sorted,
/// at least one), whether the receipt's outcome is `applied`, the verified outcome and
/// the evidence items (already checked to name applied digests only).
///
/// * Memories tied to agreeing checks → one `item` judgment each, `deterministic_effect`,
///   helpful or harmful by the table above `label_of`.
/// * Else checks tied to the whole `set` that agree → one `set` judgment,
///   `deterministic_effect`.
/// * Else `unknown` / `insufficient`: at `set` level when several memories were applied
///   (`no_distinguishing_evidence`), at `none` level for one (`no_attribution_evidence`),
///   or `evidence_contradicts_outcome` when checks disagreed; `memory_not_applied` when
///   the receipt's outcome is not `applied`. Applied and succeeded never becomes
///   `helpful` by itself.
pub fn deterministic(
    applied: &[String],
    receipt_applied: bool,
    outcome: OutcomeStatus,
    evidence: &[EvidenceItem],
) -> Vec<Judgment> {
    let unknown = |level: AttributionLevel, reason: &str| Judgment {
        label: UtilityLabel::Unknown,
        level,
        basis: EvidenceBasis::Insufficient,
        confidence: 0.0,
        reason_codes: vec![reason.to_owned()],
        evidence_refs: Vec::new(),
        memory_ref_digests: applied.to_vec(),
    };
    if !receipt_applied {
        return vec![unknown(AttributionLevel::None, "memory_not_applied")];
    }
    let tied = |target: &Target| -> (Vec<CheckResult>, Vec<String>) {
        let matching: Vec<&EvidenceItem> =
            evidence.iter().filter(|e| &e.target == target).collect();
        (
            matching.iter().map(|e| e.result).collect(),
            sorted(matching.iter().map(|e| e.evidence_ref()).collect()),
        )
    };
    let mut judgments = Vec::new();
    for digest in applied {
        let (results, refs) = tied(&Target::Memory(digest.clone()));
        if let Some(label) = label_of(&results, outcome) {
            let reason = if label == UtilityLabel::Helpful {
                "deterministic_check_passed"
            } else {
                "deterministic_check_failed"
            };
            judgments.push(Judgment {
                label,
                level: AttributionLevel::Item,
                basis: EvidenceBasis::DeterministicEffect,
                confidence: DETERMINISTIC_CONFIDENCE,
                reason_codes: vec![reason.to_owned()],
                evidence_refs: refs,
                memory_ref_digests: vec![digest.clone()],
            });
        }
    }
    if !judgments.is_empty() {
        return judgments;
    }
    let (results, refs) = tied(&Target::Set);
    if let Some(label) = label_of(&results, outcome) {
        let reason = if label == UtilityLabel::Helpful {
            "deterministic_set_check_passed"
        } else {
            "deterministic_set_check_failed"
        };
        return vec![Judgment {
            label,
            level: AttributionLevel::Set,
            basis: EvidenceBasis::DeterministicEffect,
            confidence: DETERMINISTIC_CONFIDENCE,
            reason_codes: vec![reason.to_owned()],
            evidence_refs: refs,
            memory_ref_digests: applied.to_vec(),
        }];
    }
    let level = if applied.len() > 1 {
        AttributionLevel::Set
    } else {
        AttributionLevel::None
    };
    let reason = if !evidence.is_empty() {
        "evidence_contradicts_outcome"
    } else if applied.len() > 1 {
        "no_distinguishing_evidence"
    } else {
        "no_attribution_evidence"
    };
    vec![unknown(level, reason)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef";
    const B: &str = "fedcba9876543210";

    fn ev(text: &str) -> EvidenceItem {
        EvidenceItem::parse(text).expect("evidence")
    }

    #[test]
    fn success_without_evidence_is_unknown_and_never_helpful() {
        for applied in [vec![A.to_owned()], vec![A.to_owned(), B.to_owned()]] {
            let j = deterministic(&applied, true, OutcomeStatus::Succeeded, &[]);
            assert_eq!(j.len(), 1);
            assert_eq!(j[0].label, UtilityLabel::Unknown);
            assert_eq!(j[0].basis, EvidenceBasis::Insufficient);
            assert_ne!(j[0].level, AttributionLevel::Item);
        }
    }

    #[test]
    fn a_check_tied_to_one_memory_is_an_item_deterministic_effect() {
        let applied = vec![A.to_owned(), B.to_owned()];
        let passed = ev(&format!("test:ci-17:passed:{A}"));
        let j = deterministic(
            &applied,
            true,
            OutcomeStatus::Succeeded,
            std::slice::from_ref(&passed),
        );
        assert_eq!(j.len(), 1);
        assert_eq!(
            (j[0].label, j[0].level, j[0].basis),
            (
                UtilityLabel::Helpful,
                AttributionLevel::Item,
                EvidenceBasis::DeterministicEffect
            )
        );
        assert_eq!(j[0].memory_ref_digests, vec![A.to_owned()]);
        assert_eq!(j[0].evidence_refs, vec!["test:ci-17".to_owned()]);
        let failed = ev(&format!("test:ci-18:failed:{B}"));
        let j = deterministic(&applied, true, OutcomeStatus::Failed, &[failed]);
        assert_eq!(
            (j[0].label, j[0].memory_ref_digests.clone()),
            (UtilityLabel::Harmful, vec![B.to_owned()])
        );
        // A passing check under a failed outcome contradicts it: no item.
        let j = deterministic(&applied, true, OutcomeStatus::Failed, &[passed]);
        assert_eq!(
            j[0].reason_codes,
            vec!["evidence_contradicts_outcome".to_owned()]
        );
        assert_eq!(j[0].level, AttributionLevel::Set);
    }

    #[test]
    fn set_evidence_is_set_level_and_an_ignored_receipt_is_not_applied() {
        let applied = vec![A.to_owned(), B.to_owned()];
        let j = deterministic(
            &applied,
            true,
            OutcomeStatus::Succeeded,
            &[ev("test:suite:passed:set")],
        );
        assert_eq!(
            (j[0].label, j[0].level),
            (UtilityLabel::Helpful, AttributionLevel::Set)
        );
        let j = deterministic(
            &applied,
            false,
            OutcomeStatus::Succeeded,
            &[ev("test:suite:passed:set")],
        );
        assert_eq!(j[0].reason_codes, vec!["memory_not_applied".to_owned()]);
    }
}
