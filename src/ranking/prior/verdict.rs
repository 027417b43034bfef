//! The evaluation gate of `recall --rank-prior`: the parts of a
//! `memory_utility_ranking_evaluation_v0` verdict it reads ([`Verdict`]) and whether they
//! let a profile apply. `rank-evaluate` fills the verdict ([`crate::ranking::evaluate`]).
//! Pure.

use crate::utility::strict;
use crate::wire::json::Value;

use super::error::{RankPriorError, field};
use super::profile::Profile;

/// Schema version of a ranking evaluation verdict.
pub const EVALUATION_SCHEMA_VERSION: &str = "memory_utility_ranking_evaluation_v0";

/// Why `recall --rank-prior` left the prior off: no `--evaluation` verdict was given.
/// Ranking influence stays default-off until a `qualified` verdict for the profile is
/// supplied (attribution RFC §9 Stage 4; `docs/recall.md`).
pub const EVALUATION_MISSING: &str = "rank_prior_evaluation_missing";

/// The parts of a `memory_utility_ranking_evaluation_v0` verdict the gate reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `verdict == "qualified"`.
    pub qualified: bool,
    /// The `murp_` digest of the profile the evaluation qualified.
    pub profile_digest: String,
}

impl Verdict {
    /// Reads a verdict packet: `schema_version`, a string `verdict` and a string
    /// `profile_digest` are required; other fields belong to the evaluation.
    pub fn from_value(value: &Value) -> Result<Verdict, RankPriorError> {
        let map = strict::object(value, "evaluation")?;
        if map.get("schema_version").and_then(Value::as_str) != Some(EVALUATION_SCHEMA_VERSION) {
            return Err(field(format!(
                "evaluation must be a {EVALUATION_SCHEMA_VERSION} packet"
            )));
        }
        let verdict = map
            .get("verdict")
            .and_then(Value::as_str)
            .ok_or_else(|| field("evaluation.verdict must be a string"))?;
        let profile_digest = map
            .get("profile_digest")
            .and_then(Value::as_str)
            .ok_or_else(|| field("evaluation.profile_digest must be a string"))?;
        Ok(Verdict {
            qualified: verdict == "qualified",
            profile_digest: profile_digest.to_owned(),
        })
    }

    /// `None` when this verdict lets `profile` apply, else the reason code that keeps
    /// the prior off: `ranking_evaluation_profile_mismatch` or
    /// `ranking_evaluation_not_qualified`.
    pub fn blocks(&self, profile: &Profile) -> Option<&'static str> {
        if self.profile_digest != profile.digest() {
            Some("ranking_evaluation_profile_mismatch")
        } else if !self.qualified {
            Some("ranking_evaluation_not_qualified")
        } else {
            None
        }
    }
}
