//! `memory_utility_reducer_v1`: the subject rules of the second reducer contract, beside
//! LoopX's v0 (which stays exactly as it is).
//!
//! Owns the contract's name and parameter (the optional half-life, spelled in the
//! reducer version: `memory_utility_reducer_v1` or
//! `memory_utility_reducer_v1:half_life_days:N`), which rules a reducer version selects
//! ([`Rules`]), the per-tier Beta posterior ([`Posterior`], arithmetic in [`beta`]) and
//! the v1 reduction of one subject ([`apply_v1`]). Everything a subject carries besides
//! its utility (identity, support, tiers, joint summary, counts, latest observation) is
//! v0's, computed by [`super::reduce_subject`]; deduplication, conflicts, subjects,
//! history and counters are the stream reducer's ([`super::project_with`]). Pure.
//!
//! The rules (`docs/rank-prior.md` has them with a worked example):
//!
//! * the effective tier is the strongest tier holding directional (helpful, harmful or
//!   neutral) evidence; `unknown` observations only add lineage;
//! * within it, `p` (how often an application of the memory is helpful rather than
//!   harmful) has the posterior Beta(1 + h + z/2, 1 + k + z/2), where h, k, z are the
//!   summed weights of its helpful, harmful and neutral observations: the confidence (ten
//!   times it for an owner correction, a judgment rather than a sample), halved for every
//!   half-life the observation is older than the tier's newest one;
//! * the utility interval is `[2·q₀.₁ − 1, 2·q₀.₉ − 1]` (each bound one-sided 90%
//!   credible); the subject is helpful when the lower bound is above 0 (its utility that
//!   bound), harmful when the upper bound is below 0 (that bound), neutral when the tier
//!   holds only neutral observations, and unknown otherwise, with a review when the tier
//!   is split (both directions, weighing at least [`SPLIT_MIN_WEIGHT`] together).

pub mod beta;
#[cfg(test)]
pub(crate) mod props;

use crate::utility::bounds::{UTILITY_MAX, UTILITY_MIN};
use crate::utility::observation::{AttributionLevel, EvidenceBasis, Observation, UtilityLabel};
use crate::utility::strict::bounded;
use crate::wire::json::{Json, Value};

use super::subject::{Review, SubjectState};

/// The v1 reducer's name (without decay).
pub const REDUCER_V1: &str = "memory_utility_reducer_v1";
/// Schema version of a v1 projection packet.
pub const PROJECTION_V1_SCHEMA_VERSION: &str = "memory_utility_projection_v1";
/// Prior pseudo-observations of each direction (Beta(1, 1): every balance of helpful and
/// harmful equally likely before any evidence).
pub const PRIOR_WEIGHT: f64 = 1.0;
/// The one-sided credibility of each interval bound.
pub const CREDIBLE_LEVEL: f64 = 0.9;
/// The weight of helpful plus harmful evidence an undecided tier needs, both directions
/// among it, to be split (and proposed for review): four observations at full confidence.
pub const SPLIT_MIN_WEIGHT: f64 = 4.0;
/// How many outcome observations one owner correction weighs: an owner's correction is a
/// deliberate judgment, not a noisy sample of outcomes, so one of them decides its tier
/// (Beta(11, 1) at full confidence) and two that disagree are split.
pub const OWNER_CORRECTION_WEIGHT: f64 = 10.0;
/// The largest half-life, in days.
pub const MAX_HALF_LIFE_DAYS: u32 = 36_500;

const HALF_LIFE_SPELLING: &str = ":half_life_days:";
const MICROS_PER_DAY: f64 = 86_400_000_000.0;

/// The parameter of a v1 reducer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct V1Params {
    /// Without it, every observation of the tier weighs its confidence.
    pub half_life_days: Option<u32>,
}

impl V1Params {
    /// The reducer version that names these parameters.
    pub fn reducer_version(&self) -> String {
        match self.half_life_days {
            None => REDUCER_V1.to_owned(),
            Some(days) => format!("{REDUCER_V1}{HALF_LIFE_SPELLING}{days}"),
        }
    }
}

/// Which subject rules a reducer version selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// LoopX's v0 rules: every reducer version outside the v1 family (the version is then
    /// only a name in the identity, as in `utility-project`).
    V0,
    /// `memory_utility_reducer_v1[:half_life_days:N]`.
    V1(V1Params),
}

/// A reducer version that starts like a v1 name but is none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error(
        "reducer_version {0} is not a {REDUCER_V1} name: use {REDUCER_V1}, or {REDUCER_V1}:half_life_days:N with N whole days from 1 to {MAX_HALF_LIFE_DAYS} (no leading zeros)"
    )]
    NotAV1Name(String),
}

impl Rules {
    /// The rules `reducer_version` names: v1 for `memory_utility_reducer_v1` and
    /// `memory_utility_reducer_v1:half_life_days:N` (`N` in 1–36500, no leading zero),
    /// v0 for every version that neither is nor starts with `memory_utility_reducer_v1:`.
    pub fn of(reducer_version: &str) -> Result<Rules, RulesError> {
        let Some(rest) = reducer_version.strip_prefix(REDUCER_V1) else {
            return Ok(Rules::V0);
        };
        if rest.is_empty() {
            return Ok(Rules::V1(V1Params::default()));
        }
        if !rest.starts_with(':') {
            return Ok(Rules::V0);
        }
        let refuse = || RulesError::NotAV1Name(reducer_version.to_owned());
        let days = rest.strip_prefix(HALF_LIFE_SPELLING).ok_or_else(refuse)?;
        if days.is_empty() || days.starts_with('0') || !days.bytes().all(|b| b.is_ascii_digit()) {
            return Err(refuse());
        }
        match days.parse::<u32>() {
            Ok(n) if (1..=MAX_HALF_LIFE_DAYS).contains(&n) => Ok(Rules::V1(V1Params {
                half_life_days: Some(n),
            })),
            _ => Err(refuse()),
        }
    }

    /// The v1 parameters, when these are the v1 rules.
    pub fn v1(self) -> Option<V1Params> {
        match self {
            Rules::V0 => None,
            Rules::V1(params) => Some(params),
        }
    }

    /// The projection packet these rules print.
    pub fn projection_schema_version(self) -> &'static str {
        match self {
            Rules::V0 => super::PROJECTION_SCHEMA_VERSION,
            Rules::V1(_) => PROJECTION_V1_SCHEMA_VERSION,
        }
    }
}

/// The keys of a v1 subject's `posterior`, in order.
pub const POSTERIOR_FIELDS: [&str; 8] = [
    "helpful_weight",
    "harmful_weight",
    "neutral_weight",
    "alpha",
    "beta",
    "mean_utility",
    "lower_utility",
    "upper_utility",
];

/// The Beta posterior of a subject's effective tier, as printed (every value rounded to
/// six decimals): the tier's summed weights, the posterior's parameters, and its mean
/// and credible interval on the utility scale (`2p − 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Posterior {
    pub helpful_weight: f64,
    pub harmful_weight: f64,
    pub neutral_weight: f64,
    pub alpha: f64,
    pub beta: f64,
    pub mean_utility: f64,
    pub lower_utility: f64,
    pub upper_utility: f64,
}

/// `r6(2q − 1)` within the utility bounds.
fn utility_of(q: f64) -> f64 {
    bounded(2.0 * q - 1.0, UTILITY_MIN, UTILITY_MAX)
}

impl Posterior {
    /// The posterior without evidence: Beta(1, 1), interval `[-0.8, 0.8]`.
    pub const PRIOR: Posterior = Posterior {
        helpful_weight: 0.0,
        harmful_weight: 0.0,
        neutral_weight: 0.0,
        alpha: PRIOR_WEIGHT,
        beta: PRIOR_WEIGHT,
        mean_utility: 0.0,
        lower_utility: -0.8,
        upper_utility: 0.8,
    };

    /// The posterior of summed helpful, harmful and neutral weights (a neutral weight
    /// counts half toward each direction).
    pub fn of_weights(helpful: f64, harmful: f64, neutral: f64) -> Posterior {
        if helpful == 0.0 && harmful == 0.0 && neutral == 0.0 {
            return Posterior::PRIOR;
        }
        let alpha = PRIOR_WEIGHT + helpful + neutral / 2.0;
        let beta = PRIOR_WEIGHT + harmful + neutral / 2.0;
        let r6 = crate::wire::pyfmt::round6;
        Posterior {
            helpful_weight: r6(helpful),
            harmful_weight: r6(harmful),
            neutral_weight: r6(neutral),
            alpha: r6(alpha),
            beta: r6(beta),
            mean_utility: bounded((alpha - beta) / (alpha + beta), UTILITY_MIN, UTILITY_MAX),
            lower_utility: utility_of(beta::quantile(1.0 - CREDIBLE_LEVEL, alpha, beta)),
            upper_utility: utility_of(beta::quantile(CREDIBLE_LEVEL, alpha, beta)),
        }
    }

    /// The eight values in [`POSTERIOR_FIELDS`] order.
    pub fn values(&self) -> [f64; 8] {
        [
            self.helpful_weight,
            self.harmful_weight,
            self.neutral_weight,
            self.alpha,
            self.beta,
            self.mean_utility,
            self.lower_utility,
            self.upper_utility,
        ]
    }

    /// Hands `f` the `posterior` object, borrowed.
    pub fn with_json<R>(&self, f: impl FnOnce(&Json<'_>) -> R) -> R {
        let values = self.values();
        let mut entries = [("", Json::Null); 8];
        for ((slot, key), value) in entries.iter_mut().zip(POSTERIOR_FIELDS).zip(values) {
            *slot = (key, Json::Float(value));
        }
        f(&Json::Object(&entries))
    }

    /// The `posterior` object.
    pub fn to_value(&self) -> Value {
        self.with_json(|json| json.to_value())
    }
}

/// What the v1 rules read of one accepted observation: its label, tier, confidence and
/// creation instant (for the half-life). [`apply_v1_sorted`] takes them in
/// `observation_id` order, so a reader that has them in that order (a ledger's stored
/// aggregates) needs no observation at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct V1Input {
    pub utility_label: UtilityLabel,
    pub evidence_basis: EvidenceBasis,
    pub confidence: f64,
    /// `created_instant` in microseconds.
    pub created_micros: i128,
}

impl V1Input {
    /// What the v1 rules read of `observation`.
    pub fn of(observation: &Observation) -> V1Input {
        V1Input {
            utility_label: observation.utility_label,
            evidence_basis: observation.evidence_basis,
            confidence: observation.confidence,
            created_micros: observation.created_instant.micros,
        }
    }
}

/// How many observations one observation of `tier` weighs at full confidence.
pub fn tier_scale(tier: EvidenceBasis) -> f64 {
    if tier == EvidenceBasis::OwnerCorrection {
        OWNER_CORRECTION_WEIGHT
    } else {
        1.0
    }
}

/// The weight of one observation: its confidence (clamped to [0, 1]) times its tier's
/// scale, halved for every `half_life_days` it is older than `newest`.
fn weight(observation: &V1Input, newest_micros: i128, params: V1Params) -> f64 {
    let c = observation.confidence;
    let c = if c > 0.0 { c.min(1.0) } else { 0.0 };
    let c = c * tier_scale(observation.evidence_basis);
    match params.half_life_days {
        None => c,
        Some(days) => {
            let age = (newest_micros - observation.created_micros) as f64 / MICROS_PER_DAY;
            c * (-age / f64::from(days)).exp2()
        }
    }
}

/// The strongest tier holding directional evidence among `observations`.
pub fn directional_tier(observations: &[&Observation]) -> Option<EvidenceBasis> {
    observations
        .iter()
        .filter(|o| o.utility_label.direction().is_some())
        .map(|o| o.evidence_basis)
        .max()
}

/// [`directional_tier`] of inputs.
fn directional_tier_of(inputs: &[V1Input]) -> Option<EvidenceBasis> {
    inputs
        .iter()
        .filter(|o| o.utility_label.direction().is_some())
        .map(|o| o.evidence_basis)
        .max()
}

/// Whether an undecided tier whose posterior is `posterior`, holding `helpful` and
/// `harmful` observations, is split: both directions observed and their printed weights
/// summing to at least [`SPLIT_MIN_WEIGHT`].
pub fn is_split(helpful: usize, harmful: usize, posterior: &Posterior) -> bool {
    helpful >= 1
        && harmful >= 1
        && posterior.helpful_weight + posterior.harmful_weight >= SPLIT_MIN_WEIGHT
}

/// The review of a split subject.
fn split_review() -> Review {
    Review {
        state: "conflict",
        proposed_action: "manual_review",
        reason_codes: vec!["same_evidence_tier_conflict"],
    }
}

/// The review of a harmful subject (as v0's).
fn attenuation_review() -> Review {
    Review {
        state: "attenuation_proposed",
        proposed_action: "attenuate_or_review",
        reason_codes: vec!["negative_utility_requires_review"],
    }
}

fn no_review() -> Review {
    Review {
        state: "none",
        proposed_action: "none",
        reason_codes: Vec::new(),
    }
}

/// Turns `state`, the v0 reduction of `observations` (one subject's accepted
/// observations), into its v1 reduction, and returns the effective tier's posterior.
/// Only the utility fields change (effective tier, label, estimate, confidence,
/// uncertainty, review); the lineage stays v0's. A `none` subject, and one without
/// directional evidence, keep v0's (unknown) state and the prior.
pub fn apply_v1(
    state: &mut SubjectState,
    observations: &[&Observation],
    params: V1Params,
) -> Posterior {
    // A fixed summation order, whatever order the caller passes.
    let mut sorted: Vec<&Observation> = observations.to_vec();
    sorted.sort_by(|a, b| a.observation_id.cmp(&b.observation_id));
    let inputs: Vec<V1Input> = sorted.into_iter().map(V1Input::of).collect();
    apply_v1_sorted(state, &inputs, params)
}

/// [`apply_v1`] of the subject's accepted observations given as [`V1Input`]s in
/// `observation_id` order (the order the sums are taken in).
pub fn apply_v1_sorted(
    state: &mut SubjectState,
    inputs: &[V1Input],
    params: V1Params,
) -> Posterior {
    if state.level == AttributionLevel::None {
        return Posterior::PRIOR;
    }
    let Some(tier) = directional_tier_of(inputs) else {
        return Posterior::PRIOR;
    };
    let directional: Vec<&V1Input> = inputs
        .iter()
        .filter(|o| o.evidence_basis == tier && o.utility_label.direction().is_some())
        .collect();
    let newest = directional
        .iter()
        .map(|o| o.created_micros)
        .max()
        .unwrap_or_default();
    let (mut helpful, mut harmful, mut neutral) = (0.0, 0.0, 0.0);
    let (mut helpful_count, mut harmful_count) = (0usize, 0usize);
    for o in &directional {
        let w = weight(o, newest, params);
        match o.utility_label {
            UtilityLabel::Helpful => {
                helpful += w;
                helpful_count += 1;
            }
            UtilityLabel::Harmful => {
                harmful += w;
                harmful_count += 1;
            }
            _ => neutral += w,
        }
    }
    let posterior = Posterior::of_weights(helpful, harmful, neutral);
    state.effective_basis = tier;
    let (label, utility, confidence, review) = if posterior.lower_utility > 0.0 {
        let u = posterior.lower_utility;
        (UtilityLabel::Helpful, u, u, no_review())
    } else if posterior.upper_utility < 0.0 {
        let u = posterior.upper_utility;
        (UtilityLabel::Harmful, u, -u, attenuation_review())
    } else if helpful_count == 0 && harmful_count == 0 {
        let confidence = state
            .summary
            .iter()
            .find(|p| p.basis == tier && p.label == UtilityLabel::Neutral)
            .map_or(0.0, |p| p.combined_confidence);
        (UtilityLabel::Neutral, 0.0, confidence, no_review())
    } else if is_split(helpful_count, harmful_count, &posterior) {
        (UtilityLabel::Unknown, 0.0, 0.0, split_review())
    } else {
        (UtilityLabel::Unknown, 0.0, 0.0, no_review())
    };
    state.effective_label = label;
    state.utility_estimate = utility;
    state.confidence = confidence;
    state.uncertainty = bounded(1.0 - confidence, 0.0, 1.0);
    state.review = review;
    posterior
}

/// The v1 reduction of one subject (see [`super::reduce_subject`] for the arguments).
pub fn reduce_subject_v1(
    subject_id: &str,
    level: AttributionLevel,
    memory_ref_digests: &[String],
    observations: &[&Observation],
    params: V1Params,
) -> (SubjectState, Posterior) {
    let mut state = super::reduce_subject(subject_id, level, memory_ref_digests, observations);
    let posterior = apply_v1(&mut state, observations, params);
    (state, posterior)
}

/// A v1 subject as printed: the v0 subject's 19 keys, then `posterior`.
pub fn subject_value(state: &SubjectState, posterior: &Posterior) -> Value {
    let mut value = state.to_value();
    if let Value::Object(map) = &mut value {
        map.insert("posterior", posterior.to_value());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utility::testkit::Spec;

    fn subject(specs: &[Spec], params: V1Params) -> (SubjectState, Posterior) {
        let built: Vec<Observation> = specs.iter().map(Spec::build).collect();
        let refs: Vec<&Observation> = built.iter().collect();
        let first = &built[0];
        reduce_subject_v1(
            &super::super::subject_id(first),
            first.attribution_level,
            &first.memory_ref_digests,
            &refs,
            params,
        )
    }

    fn items(label: &'static str, basis: &'static str, c: f64, n: usize, tag: &str) -> Vec<Spec> {
        (0..n)
            .map(|i| Spec::item(label, basis, c, &format!("{tag}{i}")))
            .collect()
    }

    #[test]
    fn reducer_versions_name_their_rules() {
        let v1 = |days| {
            Ok(Rules::V1(V1Params {
                half_life_days: days,
            }))
        };
        assert_eq!(Rules::of("memory_utility_reducer_v0"), Ok(Rules::V0));
        assert_eq!(Rules::of("memory_utility_reducer_v10"), Ok(Rules::V0));
        assert_eq!(Rules::of("reducer:custom"), Ok(Rules::V0));
        assert_eq!(Rules::of("memory_utility_reducer_v1"), v1(None));
        assert_eq!(
            Rules::of("memory_utility_reducer_v1:half_life_days:30"),
            v1(Some(30))
        );
        assert_eq!(
            Rules::of("memory_utility_reducer_v1:half_life_days:36500"),
            v1(Some(36_500))
        );
        for bad in [
            "memory_utility_reducer_v1:",
            "memory_utility_reducer_v1:half_life_days:",
            "memory_utility_reducer_v1:half_life_days:0",
            "memory_utility_reducer_v1:half_life_days:030",
            "memory_utility_reducer_v1:half_life_days:36501",
            "memory_utility_reducer_v1:half_life_days:3.5",
            "memory_utility_reducer_v1:half_life:30",
        ] {
            assert_eq!(
                Rules::of(bad),
                Err(RulesError::NotAV1Name(bad.to_owned())),
                "{bad}"
            );
        }
        for days in [None, Some(1), Some(30)] {
            let params = V1Params {
                half_life_days: days,
            };
            assert_eq!(Rules::of(&params.reducer_version()), v1(days));
        }
    }

    /// [`Posterior::PRIOR`] is what the arithmetic gives for Beta(1, 1) (a neutral weight
    /// too small to move the parameters takes the computed path).
    #[test]
    fn the_prior_is_beta_one_one() {
        let computed = Posterior::of_weights(0.0, 0.0, 1e-300);
        assert_eq!(computed.alpha, 1.0);
        assert_eq!(computed.lower_utility, Posterior::PRIOR.lower_utility);
        assert_eq!(computed.upper_utility, Posterior::PRIOR.upper_utility);
        assert_eq!(computed.mean_utility, 0.0);
    }

    /// The noisy memory: 7 harmful and 1 helpful deterministic-effect
    /// observations are weighed, not flipped to unknown (v0's same-tier conflict).
    #[test]
    fn seven_harmful_and_one_helpful_stay_harmful() {
        for c in [0.6, 0.8, 1.0] {
            let mut specs = items("harmful", "deterministic_effect", c, 7, "bad");
            specs.extend(items("helpful", "deterministic_effect", c, 1, "good"));
            let (state, posterior) = subject(&specs, V1Params::default());
            assert_eq!(state.effective_label, UtilityLabel::Harmful, "{c}");
            assert!(state.utility_estimate < 0.0, "{c}");
            assert_eq!(state.utility_estimate, posterior.upper_utility);
            assert_eq!(state.review.state, "attenuation_proposed");
            assert_eq!(state.effective_basis, EvidenceBasis::DeterministicEffect);
        }
        let mut specs = items("harmful", "deterministic_effect", 0.8, 14, "bad");
        specs.extend(items("helpful", "deterministic_effect", 0.8, 2, "good"));
        let (state, _) = subject(&specs, V1Params::default());
        assert_eq!(state.effective_label, UtilityLabel::Harmful);
    }

    /// The worked example of docs/rank-prior.md.
    #[test]
    fn the_documented_example_holds() {
        let mut specs = items("harmful", "deterministic_effect", 0.8, 7, "bad");
        specs.extend(items("helpful", "deterministic_effect", 0.8, 1, "good"));
        let (state, posterior) = subject(&specs, V1Params::default());
        assert_eq!(
            posterior,
            Posterior {
                helpful_weight: 0.8,
                harmful_weight: 5.6,
                neutral_weight: 0.0,
                alpha: 1.8,
                beta: 6.6,
                mean_utility: -0.571429,
                lower_utility: -0.880282,
                upper_utility: -0.195012,
            }
        );
        assert_eq!(state.utility_estimate, -0.195012);
        assert_eq!(state.confidence, 0.195012);
        assert_eq!(state.uncertainty, 0.804988);
    }

    #[test]
    fn one_observation_moves_nothing_and_consistent_evidence_moves_more() {
        let (one, _) = subject(
            &items("helpful", "deterministic_effect", 1.0, 1, "a"),
            V1Params::default(),
        );
        assert_eq!(one.effective_label, UtilityLabel::Unknown);
        assert_eq!(one.review.state, "none");
        let mut previous = 0.0;
        for n in 3..12 {
            let (state, _) = subject(
                &items("helpful", "deterministic_effect", 1.0, n, "a"),
                V1Params::default(),
            );
            assert_eq!(state.effective_label, UtilityLabel::Helpful, "{n}");
            assert!(state.utility_estimate > previous, "{n}");
            previous = state.utility_estimate;
        }
    }

    #[test]
    fn a_split_tier_is_proposed_for_review_and_a_thin_one_is_not() {
        let mut split = items("helpful", "controlled_replay", 0.9, 3, "a");
        split.extend(items("harmful", "controlled_replay", 0.9, 3, "b"));
        let (state, _) = subject(&split, V1Params::default());
        assert_eq!(state.effective_label, UtilityLabel::Unknown);
        assert_eq!(state.review.state, "conflict");
        assert_eq!(state.review.reason_codes, ["same_evidence_tier_conflict"]);

        let mut thin = items("helpful", "controlled_replay", 0.9, 1, "a");
        thin.extend(items("harmful", "controlled_replay", 0.9, 1, "b"));
        let (state, _) = subject(&thin, V1Params::default());
        assert_eq!(state.effective_label, UtilityLabel::Unknown);
        assert_eq!(state.review.state, "none");
    }

    /// One owner correction decides its tier; two that disagree are split.
    #[test]
    fn owner_corrections_weigh_as_judgments() {
        let (one, posterior) = subject(
            &items("harmful", "owner_correction", 1.0, 1, "o"),
            V1Params::default(),
        );
        assert_eq!(posterior.harmful_weight, 10.0);
        assert_eq!(one.effective_label, UtilityLabel::Harmful);
        assert_eq!(one.review.state, "attenuation_proposed");
        let mut both = items("harmful", "owner_correction", 1.0, 1, "o");
        both.extend(items("helpful", "owner_correction", 1.0, 1, "p"));
        let (split, _) = subject(&both, V1Params::default());
        assert_eq!(split.effective_label, UtilityLabel::Unknown);
        assert_eq!(split.review.state, "conflict");
    }

    #[test]
    fn neutral_evidence_is_neutral_with_v0_confidence() {
        let (state, posterior) = subject(
            &items("neutral", "deterministic_effect", 0.5, 3, "n"),
            V1Params::default(),
        );
        assert_eq!(state.effective_label, UtilityLabel::Neutral);
        assert_eq!(state.utility_estimate, 0.0);
        assert_eq!(state.confidence, 0.875);
        assert_eq!(posterior.alpha, posterior.beta);
    }

    #[test]
    fn unknown_evidence_above_a_directional_tier_adds_lineage_only() {
        let mut specs = items("harmful", "deterministic_effect", 0.8, 7, "bad");
        let (without, p1) = subject(&specs, V1Params::default());
        specs.extend(items("unknown", "owner_correction", 1.0, 2, "u"));
        let (with, p2) = subject(&specs, V1Params::default());
        assert_eq!(p1, p2);
        assert_eq!(with.effective_label, without.effective_label);
        assert_eq!(with.utility_estimate, without.utility_estimate);
        assert_eq!(with.effective_basis, EvidenceBasis::DeterministicEffect);
        assert_eq!(with.review, without.review);
        assert_eq!(with.observation_count, 9);
    }

    #[test]
    fn older_evidence_weighs_less_with_a_half_life() {
        let mut specs: Vec<Spec> = (0..6)
            .map(|i| {
                Spec::item("harmful", "deterministic_effect", 1.0, &format!("old{i}"))
                    .at("2026-01-01T00:00:00Z")
            })
            .collect();
        specs.extend((0..3).map(|i| {
            Spec::item("helpful", "deterministic_effect", 1.0, &format!("new{i}"))
                .at("2026-03-02T00:00:00Z")
        }));
        let (flat, _) = subject(&specs, V1Params::default());
        assert_eq!(flat.effective_label, UtilityLabel::Unknown);
        let (decayed, posterior) = subject(
            &specs,
            V1Params {
                half_life_days: Some(10),
            },
        );
        // 60 days is six half-lives: the six harmful weigh 6/64 together.
        assert_eq!(posterior.harmful_weight, 0.09375);
        assert_eq!(posterior.helpful_weight, 3.0);
        assert_eq!(decayed.effective_label, UtilityLabel::Helpful);
    }
}
