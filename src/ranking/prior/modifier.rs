//! The modifier function `memory_utility_rank_prior_modifier_v0`: one memory's bounded,
//! monotone modifier from its item-level utility under a profile, with the reason codes
//! that explain its value ([`Reason`], also the JSON Schema of a reason code). Pure.

use crate::utility::observation::{EvidenceBasis, UtilityLabel};
use crate::wire::pyfmt;

use super::profile::Profile;
use super::view::UtilityView;

/// Why a candidate's modifier has its value. Exactly one primary reason per candidate,
/// plus [`Reason::ReviewProposed`] with an attenuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// No subject of the partition mentions the memory: 1.0.
    NoUtilityEvidence,
    /// Only set-level (or unresolved) subjects mention it; set credit never moves an
    /// item: 1.0.
    SetLevelCreditOnly,
    /// Its item subject's effective label is unknown (including same-tier conflicts): 1.0.
    UtilityUnknown,
    /// Its effective evidence is model inference and the profile excludes it: 1.0.
    EvaluatorInferenceExcluded,
    /// Its effective evidence tier is below the profile's minimum: 1.0.
    EvidenceTierBelowMinimum,
    /// The profile requires attested tiers and its effective tier (above
    /// `evaluator_inference`) cannot be attested: the utility came from a projection
    /// packet, which carries no provenance: 1.0.
    EvidenceTierUnattested,
    /// Fewer observations than `min_support` at its effective tier and label: 1.0.
    SupportBelowMinimum,
    /// Neutral (or zero-strength) utility: 1.0.
    NeutralUtility,
    /// Positive admitted utility: above 1.0, at most the upper bound.
    PositiveUtilityBoost,
    /// Negative admitted utility: below 1.0, at least the lower bound; never removed.
    NegativeUtilityAttenuation,
    /// Accompanies an attenuation: the memory is proposed for review (no deletion).
    ReviewProposed,
}

impl Reason {
    /// Every reason code, in this order.
    pub const ALL: [Reason; 11] = [
        Reason::NoUtilityEvidence,
        Reason::SetLevelCreditOnly,
        Reason::UtilityUnknown,
        Reason::EvaluatorInferenceExcluded,
        Reason::EvidenceTierBelowMinimum,
        Reason::EvidenceTierUnattested,
        Reason::SupportBelowMinimum,
        Reason::NeutralUtility,
        Reason::PositiveUtilityBoost,
        Reason::NegativeUtilityAttenuation,
        Reason::ReviewProposed,
    ];

    /// The wire code.
    pub fn code(self) -> &'static str {
        match self {
            Reason::NoUtilityEvidence => "no_utility_evidence",
            Reason::SetLevelCreditOnly => "set_level_credit_only",
            Reason::UtilityUnknown => "utility_unknown",
            Reason::EvaluatorInferenceExcluded => "evaluator_inference_excluded",
            Reason::EvidenceTierBelowMinimum => "evidence_tier_below_minimum",
            Reason::EvidenceTierUnattested => "evidence_tier_unattested",
            Reason::SupportBelowMinimum => "support_below_minimum",
            Reason::NeutralUtility => "neutral_utility",
            Reason::PositiveUtilityBoost => "positive_utility_boost",
            Reason::NegativeUtilityAttenuation => "negative_utility_attenuation",
            Reason::ReviewProposed => "review_proposed",
        }
    }
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl schemars::JsonSchema for Reason {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RankPriorReason".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::wire::schema::string_enum(
            "A modifier reason code.",
            Reason::ALL.iter().map(|r| r.code()),
        )
    }
}

/// A modifier value with the reasons that explain it.
#[derive(Debug, Clone, PartialEq)]
pub struct Modifier {
    /// Within `[lower, upper]`; exactly 1.0 unless admitted directional utility exists.
    pub value: f64,
    pub reasons: Vec<Reason>,
}

impl Modifier {
    fn neutral(reason: Reason) -> Modifier {
        Modifier {
            value: 1.0,
            reasons: vec![reason],
        }
    }
}

/// Weight of an effective evidence tier in the modifier (1.0 for an owner correction).
pub fn tier_weight(basis: EvidenceBasis) -> f64 {
    match basis {
        EvidenceBasis::OwnerCorrection => 1.0,
        EvidenceBasis::ControlledReplay => 0.85,
        EvidenceBasis::DeterministicEffect => 0.7,
        EvidenceBasis::EvaluatorInference => 0.4,
        EvidenceBasis::Insufficient => 0.0,
    }
}

/// Weight of `n` supporting observations: `n / (n + 1)` (½ for one, → 1).
pub fn support_weight(n: usize) -> f64 {
    let n = n as f64;
    n / (n + 1.0)
}

/// The modifier of one memory under `profile` (see `docs/rank-prior.md`):
///
/// `s = utility_estimate × tier_weight(effective tier) × support_weight(support)`, then
/// `m = 1 + s·(upper − 1)` for `s > 0`, `m = 1 + s·(1 − lower)` for `s < 0`, rounded to
/// six decimals and clamped to `[lower, upper]`. Exactly 1.0 for unknown, no-utility,
/// set-level-only, neutral, excluded-tier, unattested-tier and below-support memories.
pub fn modifier(view: &UtilityView, digest: &str, profile: &Profile) -> Modifier {
    let Some(subject) = view.item(digest) else {
        return Modifier::neutral(if view.in_group(digest) {
            Reason::SetLevelCreditOnly
        } else {
            Reason::NoUtilityEvidence
        });
    };
    if subject.effective_label == UtilityLabel::Unknown {
        return Modifier::neutral(Reason::UtilityUnknown);
    }
    if profile.require_attested_tiers
        && !view.tiers_attested()
        && subject.effective_basis > EvidenceBasis::EvaluatorInference
        && profile.admits(subject.effective_basis)
    {
        return Modifier::neutral(Reason::EvidenceTierUnattested);
    }
    if !profile.admits(subject.effective_basis) {
        return Modifier::neutral(
            if subject.effective_basis == EvidenceBasis::EvaluatorInference
                && !profile.allow_evaluator_inference
            {
                Reason::EvaluatorInferenceExcluded
            } else {
                Reason::EvidenceTierBelowMinimum
            },
        );
    }
    if subject.effective_support < profile.min_support {
        return Modifier::neutral(Reason::SupportBelowMinimum);
    }
    let strength = subject.utility_estimate
        * tier_weight(subject.effective_basis)
        * support_weight(subject.effective_support);
    if subject.effective_label == UtilityLabel::Neutral || strength == 0.0 {
        return Modifier::neutral(Reason::NeutralUtility);
    }
    let raw = if strength > 0.0 {
        1.0 + strength * (profile.upper() - 1.0)
    } else {
        1.0 + strength * (1.0 - profile.lower())
    };
    let value = pyfmt::round6(raw).clamp(profile.lower(), profile.upper());
    if strength > 0.0 {
        Modifier {
            value,
            reasons: vec![Reason::PositiveUtilityBoost],
        }
    } else {
        Modifier {
            value,
            reasons: vec![Reason::NegativeUtilityAttenuation, Reason::ReviewProposed],
        }
    }
}
