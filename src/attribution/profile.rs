//! `memory_utility_attribution_profile_v0`: which evaluators attribute an outcome, with
//! their limits (argv, timeout, output size, maximum evidence tier, sample rate, quota,
//! batch size), and the optional controlled replay. Its own versioned file
//! (`utility-attribute --profile FILE`), never a block of LoopX's experiment config,
//! which must stay byte-compatible with the reference.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::utility::observation::EvidenceBasis;
use crate::wire::text::is_ref;

use super::AttributionError;

crate::const_string!(ProfileVersion, "memory_utility_attribution_profile_v0");

/// The evaluator id of the built-in deterministic evaluator unless the profile names it.
pub const DETERMINISTIC_ID: &str = "evaluator:deterministic";
/// The evaluator id of `--evaluator-command`.
pub const COMMAND_ID: &str = "evaluator:command";
/// Default window of a pending entry, seconds (seven days).
pub const DEFAULT_PENDING_WINDOW_SECONDS: u64 = super::pending::DEFAULT_PENDING_WINDOW_SECONDS;

/// How many runs an evaluator may make within a sliding window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Most runs within the window (0: never runs).
    pub max: u64,
    /// The window's length in seconds (at least 1).
    pub window_seconds: u64,
}

/// An external evaluator: one process per attribution.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct External {
    /// An opaque public-safe reference, e.g. `evaluator:review-model`; it becomes the
    /// observation's `evaluator_ref`.
    pub evaluator_id: String,
    /// The program and its arguments (no shell): `["./evaluate", "--json"]`.
    pub argv: Vec<String>,
    /// Killed (with its whole process group) after this many milliseconds.
    pub timeout_ms: u64,
    /// Output above this many bytes is `malformed`.
    #[serde(default = "default_max_output")]
    pub max_output_bytes: u64,
    /// The strongest evidence basis it may claim; a proposal above it is `refused`.
    pub max_tier: EvidenceBasis,
    /// Share of attributions it runs for, 0 to 1 (deterministic by the observation key).
    #[serde(default = "one")]
    pub sample_rate: f64,
    /// Runs per sliding window; without it, no limit.
    #[serde(default)]
    pub quota: Option<Quota>,
    /// Most pending entries one `utility-attribute --pending` run settles with it.
    #[serde(default = "default_batch")]
    pub batch_size: u64,
}

impl<'de> Deserialize<'de> for EvidenceBasis {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<EvidenceBasis, D::Error> {
        let text = String::deserialize(de)?;
        EvidenceBasis::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown evidence basis {text:?}: use one of {}",
                EvidenceBasis::NAMES.join(", ")
            ))
        })
    }
}

fn default_max_output() -> u64 {
    64 * 1024
}
fn one() -> f64 {
    1.0
}
fn default_batch() -> u64 {
    1024
}

/// One declared evaluator.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Evaluator {
    /// The built-in deterministic evaluator (typed evidence items only).
    Deterministic {
        /// Its evaluator id (default `evaluator:deterministic`).
        #[serde(default = "deterministic_id")]
        evaluator_id: String,
    },
    /// An external command.
    External(External),
}

fn deterministic_id() -> String {
    DETERMINISTIC_ID.to_owned()
}

crate::const_string!(SetLevelOnly, "set_level");

/// Controlled replay: a command run only for ambiguous (set-level) outcomes, whose
/// result is a `controlled_replay` item observation.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ControlledReplay {
    /// Its evaluator id, e.g. `evaluator:replay`.
    pub evaluator_id: String,
    /// The program and its arguments (no shell).
    pub argv: Vec<String>,
    /// Killed (with its process group) after this many milliseconds.
    pub timeout_ms: u64,
    /// Output above this many bytes is `malformed`.
    #[serde(default = "default_max_output")]
    pub max_output_bytes: u64,
    /// Its own quota.
    #[serde(default)]
    pub quota: Option<Quota>,
    /// What it runs for: only `set_level` (outcomes the deterministic evaluator could not
    /// tell apart).
    #[schemars(with = "SetLevelOnly")]
    pub selects: String,
}

/// A parsed, checked profile.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[schemars(with = "ProfileVersion")]
    pub schema_version: String,
    /// An opaque public-safe reference naming the profile.
    pub profile_id: String,
    /// How long a pending entry waits for its outcome (default seven days).
    #[serde(default = "default_window")]
    pub pending_window_seconds: u64,
    /// The evaluators, run in this order; ids must be unique.
    pub evaluators: Vec<Evaluator>,
    /// Optional controlled replay.
    #[serde(default)]
    pub controlled_replay: Option<ControlledReplay>,
}

fn default_window() -> u64 {
    DEFAULT_PENDING_WINDOW_SECONDS
}

impl Evaluator {
    /// The evaluator's id.
    pub fn id(&self) -> &str {
        match self {
            Evaluator::Deterministic { evaluator_id } => evaluator_id,
            Evaluator::External(e) => &e.evaluator_id,
        }
    }
}

fn check_command(
    id: &str,
    argv: &[String],
    timeout_ms: u64,
    quota: Option<Quota>,
) -> Result<(), AttributionError> {
    let bad = |why: &str| AttributionError::Profile(format!("evaluator {id}: {why}"));
    if argv.is_empty() || argv[0].is_empty() {
        return Err(bad("argv must name a program: [\"./evaluate\", ...]"));
    }
    if timeout_ms == 0 {
        return Err(bad("timeout_ms must be at least 1"));
    }
    if quota.is_some_and(|q| q.window_seconds == 0) {
        return Err(bad("quota.window_seconds must be at least 1"));
    }
    Ok(())
}

impl Profile {
    /// The profile without `--profile`: the deterministic evaluator alone, or with
    /// `--evaluator-command PROGRAM --evaluator-timeout-ms N` that one program alone at
    /// tier `evaluator_inference`.
    pub fn ad_hoc(program: Option<&str>, timeout_ms: u64) -> Profile {
        let mut evaluators = Vec::new();
        match program {
            None => evaluators.push(Evaluator::Deterministic {
                evaluator_id: deterministic_id(),
            }),
            Some(program) => evaluators.push(Evaluator::External(External {
                evaluator_id: COMMAND_ID.to_owned(),
                argv: vec![program.to_owned()],
                timeout_ms,
                max_output_bytes: default_max_output(),
                max_tier: EvidenceBasis::EvaluatorInference,
                sample_rate: 1.0,
                quota: None,
                batch_size: default_batch(),
            })),
        }
        Profile {
            schema_version: ProfileVersion::VALUE.to_owned(),
            profile_id: "attribution:ad-hoc".to_owned(),
            pending_window_seconds: DEFAULT_PENDING_WINDOW_SECONDS,
            evaluators,
            controlled_replay: None,
        }
    }

    /// Parses and checks a profile file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<Profile, AttributionError> {
        let profile: Profile =
            serde_json::from_slice(bytes).map_err(|e| AttributionError::Profile(e.to_string()))?;
        profile.check()?;
        Ok(profile)
    }

    /// The rules serde cannot say: ids are references and unique, commands name a
    /// program, limits are positive, no evaluator may claim `owner_correction`.
    pub fn check(&self) -> Result<(), AttributionError> {
        let bad = |why: String| Err(AttributionError::Profile(why));
        if self.schema_version != ProfileVersion::VALUE {
            return bad(format!("schema_version must be {}", ProfileVersion::VALUE));
        }
        if !is_ref(&self.profile_id) {
            return bad("profile_id must be an opaque public-safe reference".to_owned());
        }
        if self.evaluators.is_empty() {
            return bad("evaluators must list at least one evaluator".to_owned());
        }
        let mut ids: Vec<&str> = self.evaluators.iter().map(Evaluator::id).collect();
        ids.extend(
            self.controlled_replay
                .as_ref()
                .map(|r| r.evaluator_id.as_str()),
        );
        for id in &ids {
            if !is_ref(id) {
                return bad(format!(
                    "evaluator_id {id:?} must be an opaque public-safe reference"
                ));
            }
        }
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return bad(format!("evaluator_id {} is declared twice", w[0]));
        }
        for evaluator in &self.evaluators {
            if let Evaluator::External(e) = evaluator {
                check_command(&e.evaluator_id, &e.argv, e.timeout_ms, e.quota)?;
                if e.max_tier == EvidenceBasis::OwnerCorrection {
                    return bad(format!(
                        "evaluator {}: max_tier owner_correction is never attributable (utility-correct records owner corrections)",
                        e.evaluator_id
                    ));
                }
                if !(e.sample_rate.is_finite() && (0.0..=1.0).contains(&e.sample_rate)) {
                    return bad(format!(
                        "evaluator {}: sample_rate must be between 0 and 1",
                        e.evaluator_id
                    ));
                }
                if e.batch_size == 0 {
                    return bad(format!(
                        "evaluator {}: batch_size must be at least 1",
                        e.evaluator_id
                    ));
                }
            }
        }
        if let Some(r) = &self.controlled_replay {
            if r.selects != SetLevelOnly::VALUE {
                return bad(format!(
                    "controlled_replay.selects must be {}",
                    SetLevelOnly::VALUE
                ));
            }
            check_command(&r.evaluator_id, &r.argv, r.timeout_ms, r.quota)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_parses_with_its_defaults_and_refuses_owner_correction() {
        let text = br#"{"schema_version": "memory_utility_attribution_profile_v0",
            "profile_id": "attribution:test",
            "evaluators": [{"kind": "deterministic"},
              {"kind": "external", "evaluator_id": "evaluator:m", "argv": ["./m"],
               "timeout_ms": 1000, "max_tier": "evaluator_inference",
               "quota": {"max": 2, "window_seconds": 60}}]}"#;
        let profile = Profile::parse(text).expect("profile");
        assert_eq!(profile.evaluators[0].id(), DETERMINISTIC_ID);
        assert_eq!(
            profile.pending_window_seconds,
            DEFAULT_PENDING_WINDOW_SECONDS
        );
        let owner = String::from_utf8_lossy(text)
            .replace("\"evaluator_inference\"", "\"owner_correction\"");
        let err = Profile::parse(owner.as_bytes()).expect_err("owner");
        assert!(err.to_string().contains("never attributable"), "{err}");
        let unknown =
            String::from_utf8_lossy(text).replace("\"argv\"", "\"shell\": \"x\", \"argv\"");
        assert!(Profile::parse(unknown.as_bytes()).is_err());
    }
}
