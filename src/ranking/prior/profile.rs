//! The rank-prior profile (`memory_utility_rank_prior_profile_v0`): the semantic stage,
//! the modifier bounds and which evidence may move the prior, read strictly from its
//! object, printed in its normalized form and named by its `murp_` digest. The
//! [`Profile`] type is also the profile's JSON Schema. Pure.

use schemars::JsonSchema;

use crate::const_string;
use crate::utility::observation::EvidenceBasis;
use crate::utility::strict;
use crate::wire::credential;
use crate::wire::digest;
use crate::wire::json::{self, Value};
use crate::wire::text;

use super::candidate::MAX_CANDIDATES;
use super::error::{RankPriorError, field};

/// Schema version of a rank-prior profile (optional in the profile object).
pub const PROFILE_SCHEMA_VERSION: &str = ProfileVersion::VALUE;
/// Version of the modifier function ([`super::modifier()`]); part of every profile digest.
pub const MODIFIER_VERSION: &str = ModifierVersion::VALUE;
/// The largest accepted upper modifier bound.
pub const MAX_UPPER_BOUND: f64 = 1e6;
/// The largest accepted `min_support`.
pub const MAX_MIN_SUPPORT: i64 = 1_000_000;

const_string!(ProfileVersion, "memory_utility_rank_prior_profile_v0");
const_string!(ModifierVersion, "memory_utility_rank_prior_modifier_v0");

/// A rank-prior profile: the semantic stage, the modifier bounds and which evidence may
/// move the prior.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(rename = "RankPriorProfile", deny_unknown_fields)]
pub struct Profile {
    /// Optional in the object; the normalized profile always carries it.
    #[schemars(with = "Option<ProfileVersion>")]
    pub schema_version: ProfileVersion,
    pub profile_id: String,
    /// Candidates with a lower relevance never enter the pool: `0 ≤ floor ≤ 1`.
    pub semantic_floor: f64,
    /// At most this many candidates (the most relevant) form the pool: 1–10000.
    #[schemars(with = "u32", range(min = 1, max = 10_000))]
    pub candidate_pool: usize,
    /// `[lower, upper]`, `0 < lower ≤ 1 ≤ upper ≤ 1e6`, finite.
    pub modifier_bounds: [f64; 2],
    /// The weakest tier that may move the prior: `deterministic_effect`,
    /// `controlled_replay`, `owner_correction`, or `evaluator_inference` with
    /// `allow_evaluator_inference: true`.
    pub min_evidence_basis: EvidenceBasis,
    /// Model inference may move the prior only when this is true (RFC §4.2; default
    /// false).
    #[schemars(with = "Option<bool>")]
    pub allow_evaluator_inference: bool,
    /// Fewer observations than this at the effective tier and label: no movement;
    /// 1–1000000.
    #[schemars(with = "u32", range(min = 1, max = 1_000_000))]
    pub min_support: usize,
    /// Evidence above `evaluator_inference` (deterministic_effect, controlled_replay,
    /// owner_correction) moves the prior only when the attribution runtime produced it
    /// (ledger provenance `attribute` or `correct`, not `import`); default false. The
    /// normalized profile (and so its digest) carries the key only when it is true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(with = "Option<bool>")]
    pub require_attested_tiers: bool,
    /// A verdict whose last held-out episode is older than this many days no longer
    /// opens the gate (default 30; 1–3650). The normalized profile carries the key only
    /// when it is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3650))]
    pub verdict_max_age_days: Option<u32>,
    /// A ledger verdict no longer opens the gate once the ledger has received more than
    /// this many deliveries since it (default: no bound; 0–1e12). Carried only when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_max_new_deliveries: Option<u64>,
}

const PROFILE_FIELDS: [&str; 11] = [
    "schema_version",
    "profile_id",
    "semantic_floor",
    "candidate_pool",
    "modifier_bounds",
    "min_evidence_basis",
    "allow_evaluator_inference",
    "min_support",
    "require_attested_tiers",
    "verdict_max_age_days",
    "verdict_max_new_deliveries",
];

fn number(v: Option<&Value>, label: &str) -> Result<f64, RankPriorError> {
    let f = match v {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        Some(Value::BigInt(s)) => strict::bigint_to_f64(s),
        _ => return Err(field(format!("{label} must be a number"))),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(field(format!(
            "{label} must be finite (NaN and Infinity are refused)"
        )))
    }
}

fn integer(v: Option<&Value>, label: &str, min: i64, max: i64) -> Result<i64, RankPriorError> {
    match v {
        Some(Value::Int(i)) if (min..=max).contains(i) => Ok(*i),
        _ => Err(field(format!(
            "{label} must be an integer between {min} and {max}"
        ))),
    }
}

impl Profile {
    /// Reads a profile object strictly (unknown keys refused).
    pub fn from_value(value: &Value) -> Result<Profile, RankPriorError> {
        let map = strict::object(value, "profile")?;
        text::reject_unknown(map, "profile", &PROFILE_FIELDS)?;
        strict::reject_missing(
            map,
            "profile",
            &[
                "profile_id",
                "semantic_floor",
                "candidate_pool",
                "modifier_bounds",
                "min_evidence_basis",
                "min_support",
            ],
        )?;
        if let Some(version) = map.get("schema_version")
            && version.as_str() != Some(PROFILE_SCHEMA_VERSION)
        {
            return Err(field(format!(
                "profile.schema_version must be {PROFILE_SCHEMA_VERSION}"
            )));
        }
        let profile_id = strict::strict_ref(
            map.get("profile_id").unwrap_or(&Value::Null),
            "profile.profile_id",
        )?
        .to_owned();
        credential::check(&profile_id, "profile.profile_id")?;
        let floor = number(map.get("semantic_floor"), "profile.semantic_floor")?;
        if !(0.0..=1.0).contains(&floor) {
            return Err(field("profile.semantic_floor must be between 0 and 1"));
        }
        let pool = integer(
            map.get("candidate_pool"),
            "profile.candidate_pool",
            1,
            MAX_CANDIDATES as i64,
        )?;
        let bounds = match map.get("modifier_bounds") {
            Some(Value::Array(items)) if items.len() == 2 => items,
            _ => {
                return Err(field(
                    "profile.modifier_bounds must be a list [lower, upper]",
                ));
            }
        };
        let lower = number(bounds.first(), "profile.modifier_bounds[0]")?;
        let upper = number(bounds.get(1), "profile.modifier_bounds[1]")?;
        if !(lower > 0.0 && lower <= 1.0 && upper >= 1.0) {
            return Err(field(
                "profile.modifier_bounds must contain 1: 0 < lower <= 1 <= upper",
            ));
        }
        if upper > MAX_UPPER_BOUND {
            return Err(field(format!(
                "profile.modifier_bounds upper must be at most {MAX_UPPER_BOUND:e}"
            )));
        }
        let allow_inference = match map.get("allow_evaluator_inference") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(field("profile.allow_evaluator_inference must be a boolean"));
            }
        };
        let require_attested = match map.get("require_attested_tiers") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(field("profile.require_attested_tiers must be a boolean"));
            }
        };
        let basis = map
            .get("min_evidence_basis")
            .and_then(Value::as_str)
            .and_then(EvidenceBasis::parse)
            .filter(|b| *b != EvidenceBasis::Insufficient)
            .ok_or_else(|| {
                field(
                    "profile.min_evidence_basis must be evaluator_inference, deterministic_effect, controlled_replay or owner_correction",
                )
            })?;
        if basis == EvidenceBasis::EvaluatorInference && !allow_inference {
            return Err(field(
                "profile.min_evidence_basis evaluator_inference needs allow_evaluator_inference: true",
            ));
        }
        let support = integer(
            map.get("min_support"),
            "profile.min_support",
            1,
            MAX_MIN_SUPPORT,
        )?;
        let max_age = match map.get("verdict_max_age_days") {
            None => None,
            v => Some(integer(v, "profile.verdict_max_age_days", 1, 3650)? as u32),
        };
        let max_new = match map.get("verdict_max_new_deliveries") {
            None => None,
            v => Some(integer(
                v,
                "profile.verdict_max_new_deliveries",
                0,
                1_000_000_000_000,
            )? as u64),
        };
        Ok(Profile {
            schema_version: ProfileVersion,
            profile_id,
            semantic_floor: floor,
            candidate_pool: usize::try_from(pool).unwrap_or(MAX_CANDIDATES),
            modifier_bounds: [lower, upper],
            min_evidence_basis: basis,
            allow_evaluator_inference: allow_inference,
            min_support: usize::try_from(support).unwrap_or(usize::MAX),
            require_attested_tiers: require_attested,
            verdict_max_age_days: max_age,
            verdict_max_new_deliveries: max_new,
        })
    }

    /// The lower modifier bound: `0 < lower ≤ 1`.
    pub fn lower(&self) -> f64 {
        self.modifier_bounds[0]
    }

    /// The upper modifier bound: `1 ≤ upper ≤ MAX_UPPER_BOUND`.
    pub fn upper(&self) -> f64 {
        self.modifier_bounds[1]
    }

    /// The normalized profile object (the digest covers exactly this plus the modifier
    /// version).
    pub fn to_value(&self) -> Value {
        // Serializing a struct of strings and numbers cannot fail.
        json::to_value(self).unwrap_or_default()
    }

    /// `murp_` + SHA-256 of the canonical `{modifier_version, profile}`: names this exact
    /// ranking behaviour (an evaluation verdict and a provider effect are bound to it).
    pub fn digest(&self) -> String {
        digest::prefixed_canonical(
            "murp_",
            &Value::Object(crate::obj! {
                "modifier_version" => MODIFIER_VERSION,
                "profile" => self.to_value(),
            }),
        )
    }

    /// True when evidence at `basis` may move the prior.
    pub fn admits(&self, basis: EvidenceBasis) -> bool {
        if basis == EvidenceBasis::EvaluatorInference && !self.allow_evaluator_inference {
            return false;
        }
        basis != EvidenceBasis::Insufficient && basis >= self.min_evidence_basis
    }
}
