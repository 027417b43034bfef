//! The verdict of an evaluation on logged traffic: the `memory_utility_ranking_evaluation_v1`
//! packet with `source.kind` `ledger` (or `episodes_file` for an export read back) and
//! off-policy estimates in place of the ground-truth metrics, as typed data
//! ([`LedgerEvaluationPacket`], also its JSON Schema), and the gate that decides it.
//!
//! The gate ([`gate`]) is about the gated arm: the bounded prior of the reducer the
//! partitions are read under (`bounded_utility` for v0, `bounded_utility_v1` for v1).
//! `qualified` only when there are at least [`MIN_HELD_OUT_EPISODES`] held-out episodes
//! with a verified outcome (else `hold` with `insufficient_held_out_traffic`, and nothing
//! else is judged), the gated arm and semantic both have an effective sample size of at
//! least [`MIN_EFFECTIVE_SAMPLE_SIZE`] and no unsupported episode
//! (`insufficient_off_policy_support`), the lower end of the gated arm's SNIPS gain over
//! semantic is above 0 (`snips_gain_interval_not_above_zero`), its failure rate is not
//! above semantic's (`failure_rate_worse_than_semantic`), and no arm moved a candidate
//! with another partition's data (`scope_leak_detected`). Pure.

use schemars::JsonSchema;

use crate::ranking::prior::profile::ModifierVersion;
use crate::wire::pyfmt::round6;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

use super::super::packet::{Estimate, EvaluationVersion, RankingEvaluationPacket, Verdict};
use super::super::profile::EvaluationProfile;
use super::super::report::{BOUNDED_UTILITY, BOUNDED_UTILITY_V1, SEMANTIC};
use super::episodes::HELD_OUT_SHARE;
use super::estimate::{Estimates, Interval, WEIGHT_CLIP};

/// Fewest held-out episodes with a verified outcome a verdict may rest on.
pub const MIN_HELD_OUT_EPISODES: u64 = 30;
/// Smallest effective sample size of the bounded prior's and semantic's weights.
pub const MIN_EFFECTIVE_SAMPLE_SIZE: f64 = 30.0;

/// Why a ledger verdict is `hold`, in the order the gate checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LedgerHoldReason {
    InsufficientHeldOutTraffic,
    InsufficientOffPolicySupport,
    SnipsGainIntervalNotAboveZero,
    FailureRateWorseThanSemantic,
    ScopeLeakDetected,
}

/// `ledger` (the traffic log) or `episodes_file` (an `--export-episodes` file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoggedSourceKind {
    Ledger,
    EpisodesFile,
}

/// The ledger a verdict was computed from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SourceLedger {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The ledger's identity (`mul_` + 32 hex); null until ledgers carry one.
    #[schemars(with = "Nullable<String>")]
    pub ledger_id: Option<String>,
    /// The ledger's delivery high water when it was read.
    pub high_water_seq: u64,
    /// Deliveries up to this sequence trained the arms (the delivery high water the
    /// first held-out recall recorded).
    pub split_seq: u64,
    /// The traffic log's high water when it was read.
    pub traffic_high_water_seq: u64,
}

/// Where the episodes came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedSource {
    pub kind: LoggedSourceKind,
    /// The seed of the bootstrap.
    pub seed: u64,
    /// SHA-256 of the episodes file (`episodes_file` only).
    #[schemars(with = "Nullable<String>")]
    pub input_sha256: Option<String>,
    /// Observation lines of the episodes file (`episodes_file` only).
    #[schemars(with = "Nullable<u64>")]
    pub observation_lines: Option<u64>,
    #[schemars(with = "Nullable<SourceLedger>")]
    pub ledger: Option<SourceLedger>,
    /// The `mur_` reducer identities of the evaluated partitions, sorted.
    pub partitions: Vec<String>,
    /// RFC 3339 (UTC) `observed_at` of the last held-out recall.
    #[schemars(with = "Nullable<String>")]
    pub observed_until: Option<String>,
    pub training_episodes: u64,
    pub held_out_episodes: u64,
}

/// The reward of an outcome.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RewardScale {
    pub succeeded: f64,
    pub partial: f64,
    pub failed: f64,
}

/// Estimator and gate settings in force.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedSettings {
    /// `top_slot`: the value of choosing the memory shown first.
    pub estimand: &'static str,
    pub reward: RewardScale,
    /// Importance weights are clipped at this value.
    pub weight_clip: f64,
    pub held_out_share: f64,
    pub min_held_out_episodes: u64,
    pub min_effective_sample_size: f64,
    pub bootstrap_resamples: u64,
    pub confidence_level: f64,
    /// The doubly robust estimate's reward model.
    pub reward_model: &'static str,
}

/// What the log held.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Traffic {
    pub recalls: u64,
    pub training_recalls: u64,
    pub held_out_recalls: u64,
    /// Training recalls whose verified outcome was logged before the split.
    pub training_rewards: u64,
    pub held_out_without_outcome: u64,
    /// With an outcome, but not estimable (a candidate without relevance, no shown top
    /// with a propensity, an empty semantic pool under the evaluated profile).
    pub held_out_unusable: u64,
    pub explored_recalls: u64,
    pub shadow_recalls: u64,
    pub semantic_policy_recalls: u64,
    pub rank_prior_policy_recalls: u64,
}

/// The held-out episodes estimated on, and what the logging policy itself earned.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedHeldOut {
    pub episodes: u64,
    /// Mean reward of the held-out episodes (the logging policy's own value).
    pub logged_value: Estimate,
    pub logged_failure_rate: Estimate,
}

/// The training ledger the utility arms read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrainingLedger {
    /// The evaluation's own ledger (`sqlite`, a private temporary file).
    pub backend: &'static str,
    pub partitions: u64,
    pub deliveries: u64,
    pub accepted: u64,
    pub duplicate: u64,
    pub conflicting: u64,
    pub inference_deliveries_removed_for_arm_4: u64,
}

/// Scope-leak check of one arm.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedLeaks {
    pub count: u64,
    pub episodes: u64,
}

/// One arm's off-policy estimates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedArm {
    pub number: u64,
    pub arm: &'static str,
    pub description: &'static str,
    pub ips: Estimate,
    pub snips: Estimate,
    #[schemars(with = "Nullable<Estimate>")]
    pub doubly_robust: Option<Estimate>,
    /// SNIPS of the share of failed outcomes.
    pub failure_rate: Estimate,
    pub effective_sample_size: f64,
    /// Held-out episodes whose shown top is this arm's top.
    pub matched_episodes: u64,
    /// Held-out episodes where the logging policy could never show this arm's top first.
    pub unsupported_episodes: u64,
    /// Weights clipped at `settings.weight_clip`.
    pub clipped_weights: u64,
    pub scope_leaks: LoggedLeaks,
}

/// An arm's paired differences against `semantic`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedDifference {
    pub number: u64,
    pub arm: &'static str,
    pub versus: super::super::packet::Semantic,
    pub snips: Estimate,
    pub ips: Estimate,
    #[schemars(with = "Nullable<Estimate>")]
    pub doubly_robust: Option<Estimate>,
    pub failure_rate: Estimate,
}

/// The traffic check.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrafficGate {
    pub passed: bool,
    pub episodes: u64,
    pub minimum: u64,
}

/// The support check.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SupportGate {
    pub passed: bool,
    /// Of the gated arm (`gate.arm`).
    pub gated_arm_effective_sample_size: f64,
    pub semantic_effective_sample_size: f64,
    pub minimum: f64,
    /// Held-out episodes unsupported for either arm.
    pub unsupported_episodes: u64,
}

/// The SNIPS gain check.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GainGate {
    pub passed: bool,
    /// The gated arm minus `semantic`.
    pub difference: Estimate,
}

/// The no-harm check.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HarmGate {
    pub passed: bool,
    /// The gated arm's failure rate minus `semantic`'s (point estimate).
    #[schemars(with = "Nullable<f64>")]
    pub difference: Option<f64>,
}

/// The scope-leak check.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LeakGate {
    pub passed: bool,
    pub count: u64,
}

/// Every check of the gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedGate {
    /// The arm every check is about: the bounded-utility arm of `reducer_version`
    /// (`bounded_utility` for `memory_utility_reducer_v0`, `bounded_utility_v1` for a
    /// `memory_utility_reducer_v1` version).
    pub arm: &'static str,
    pub held_out_traffic: TrafficGate,
    pub off_policy_support: SupportGate,
    pub snips_gain: GainGate,
    pub failure_rate: HarmGate,
    pub scope_leaks: LeakGate,
    /// The arm with the highest SNIPS estimate (ties: the lower number), when any.
    #[schemars(with = "Nullable<String>")]
    pub best_arm_by_snips: Option<&'static str>,
}

/// v1 against v0 on the same logged episodes: `bounded_utility_v1` minus
/// `bounded_utility`, on the same resamples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggedReducerComparison {
    /// `bounded_utility_v1`.
    pub arm: &'static str,
    /// `bounded_utility`.
    pub versus: &'static str,
    pub snips: Estimate,
    pub ips: Estimate,
    #[schemars(with = "Nullable<Estimate>")]
    pub doubly_robust: Option<Estimate>,
    pub failure_rate: Estimate,
}

/// `memory_utility_ranking_evaluation_v1` from logged traffic: does bounded utility earn
/// its influence on the deployment's own traffic? `recall --rank-prior --evaluation`
/// reads `verdict` and `profile_digest`, as of every verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerEvaluationPacket {
    pub ok: bool,
    pub schema_version: EvaluationVersion,
    pub status: Verdict,
    pub verdict: Verdict,
    pub reason_codes: Vec<LedgerHoldReason>,
    pub profile_id: String,
    pub profile_digest: String,
    pub modifier_version: ModifierVersion,
    /// The reducer version the partitions were read under (`source.partitions` are their
    /// `mur_` identities under it); the gate qualifies its bounded-utility arm.
    pub reducer_version: String,
    pub evaluation_profile_digest: String,
    pub source: LoggedSource,
    pub settings: LoggedSettings,
    pub traffic: Traffic,
    pub held_out: LoggedHeldOut,
    pub ledger: TrainingLedger,
    pub arms: Vec<LoggedArm>,
    /// Arms 2 to 6 against arm 1.
    pub differences: Vec<LoggedDifference>,
    /// v1 against v0 on the same episodes (`null` when one of the two arms did not run).
    #[schemars(with = "Nullable<LoggedReducerComparison>")]
    pub reducer_comparison: Option<LoggedReducerComparison>,
    pub gate: LoggedGate,
    pub profile: EvaluationProfile,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    /// `murv_` + SHA-256 of the canonical JSON of this packet without this key.
    pub verdict_digest: String,
}

/// The schema of `memory_utility_ranking_evaluation_v1`: a verdict on ground truth (the
/// simulator, an episodes file) or on logged traffic (schema only).
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "RankingEvaluation")]
pub enum AnyRankingEvaluation {
    GroundTruth(Box<RankingEvaluationPacket>),
    LoggedTraffic(Box<LedgerEvaluationPacket>),
}

fn wire(i: &Interval) -> Estimate {
    Estimate {
        estimate: i.estimate.map(round6),
        lower: i.lower.map(round6),
        upper: i.upper.map(round6),
        n: i.n as u64,
    }
}

/// The gate's checks and reasons.
pub fn gate(e: &Estimates) -> (LoggedGate, Vec<LedgerHoldReason>) {
    let find = |key: &str| e.arms.iter().position(|a| a.key == key);
    let (s, b) = (find(SEMANTIC).unwrap_or(0), find(e.gated_arm).unwrap_or(0));
    let mut reasons = Vec::new();
    let enough = e.episodes as u64 >= MIN_HELD_OUT_EPISODES;
    if !enough {
        reasons.push(LedgerHoldReason::InsufficientHeldOutTraffic);
    }
    let (ess_b, ess_s) = (
        e.arms.get(b).map_or(0.0, |a| a.effective_sample_size),
        e.arms.get(s).map_or(0.0, |a| a.effective_sample_size),
    );
    let unsupported = e.arms.get(b).map_or(0, |a| a.unsupported) as u64
        + e.arms.get(s).map_or(0, |a| a.unsupported) as u64;
    let supported = ess_b >= MIN_EFFECTIVE_SAMPLE_SIZE
        && ess_s >= MIN_EFFECTIVE_SAMPLE_SIZE
        && unsupported == 0;
    let gain = e
        .differences
        .iter()
        .find(|d| d.key == e.gated_arm)
        .map(|d| d.snips)
        .unwrap_or_default();
    let gain_passed = gain.lower.is_some_and(|l| l > 0.0);
    let harm = e
        .differences
        .iter()
        .find(|d| d.key == e.gated_arm)
        .and_then(|d| d.failure_rate.estimate);
    let harm_passed = harm.is_some_and(|d| d <= 0.0);
    if enough {
        if !supported {
            reasons.push(LedgerHoldReason::InsufficientOffPolicySupport);
        }
        if !gain_passed {
            reasons.push(LedgerHoldReason::SnipsGainIntervalNotAboveZero);
        }
        if !harm_passed {
            reasons.push(LedgerHoldReason::FailureRateWorseThanSemantic);
        }
    }
    let leaks: usize = e.arms.iter().map(|a| a.leaks).sum();
    if leaks > 0 {
        reasons.push(LedgerHoldReason::ScopeLeakDetected);
    }
    let best = e
        .arms
        .iter()
        .filter_map(|a| a.snips.estimate.map(|v| (a.key, v)))
        .fold(None::<(&'static str, f64)>, |best, (k, v)| match best {
            Some((_, bv)) if bv >= v => best,
            _ => Some((k, v)),
        })
        .map(|(k, _)| k);
    (
        LoggedGate {
            arm: e.gated_arm,
            held_out_traffic: TrafficGate {
                passed: enough,
                episodes: e.episodes as u64,
                minimum: MIN_HELD_OUT_EPISODES,
            },
            off_policy_support: SupportGate {
                passed: supported,
                gated_arm_effective_sample_size: round6(ess_b),
                semantic_effective_sample_size: round6(ess_s),
                minimum: MIN_EFFECTIVE_SAMPLE_SIZE,
                unsupported_episodes: unsupported,
            },
            snips_gain: GainGate {
                passed: gain_passed,
                difference: wire(&gain),
            },
            failure_rate: HarmGate {
                passed: harm_passed,
                difference: harm.map(round6),
            },
            scope_leaks: LeakGate {
                passed: leaks == 0,
                count: leaks as u64,
            },
            best_arm_by_snips: best,
        },
        reasons,
    )
}

/// Builds the packet.
pub fn packet(
    e: &Estimates,
    profile: &EvaluationProfile,
    source: LoggedSource,
) -> LedgerEvaluationPacket {
    let (gate, reasons) = gate(e);
    let verdict = if reasons.is_empty() {
        Verdict::Qualified
    } else {
        Verdict::Hold
    };
    let ev = &profile.evaluation;
    let c = &e.counts;
    LedgerEvaluationPacket {
        ok: reasons.is_empty(),
        schema_version: EvaluationVersion,
        status: verdict,
        verdict,
        reason_codes: reasons,
        profile_id: profile.rank_prior.profile_id.clone(),
        profile_digest: profile.rank_prior.digest(),
        modifier_version: ModifierVersion,
        reducer_version: e.reducer_version.clone(),
        evaluation_profile_digest: profile.digest(),
        source,
        settings: LoggedSettings {
            estimand: "top_slot",
            reward: RewardScale {
                succeeded: 1.0,
                partial: 0.5,
                failed: 0.0,
            },
            weight_clip: WEIGHT_CLIP,
            held_out_share: HELD_OUT_SHARE,
            min_held_out_episodes: MIN_HELD_OUT_EPISODES,
            min_effective_sample_size: MIN_EFFECTIVE_SAMPLE_SIZE,
            bootstrap_resamples: ev.bootstrap_resamples as u64,
            confidence_level: ev.confidence_level,
            reward_model: "mean training reward of the memory shown first, shrunk to its partition's mean with weight 1",
        },
        traffic: Traffic {
            recalls: c.recalls as u64,
            training_recalls: c.training_recalls as u64,
            held_out_recalls: c.held_out_recalls as u64,
            training_rewards: c.training_rewards as u64,
            held_out_without_outcome: c.held_out_without_outcome as u64,
            held_out_unusable: c.held_out_unusable as u64,
            explored_recalls: c.explored_recalls as u64,
            shadow_recalls: c.shadow_recalls as u64,
            semantic_policy_recalls: c.semantic_policy_recalls as u64,
            rank_prior_policy_recalls: c.rank_prior_policy_recalls as u64,
        },
        held_out: LoggedHeldOut {
            episodes: e.episodes as u64,
            logged_value: wire(&e.logged_value),
            logged_failure_rate: wire(&e.logged_failure_rate),
        },
        ledger: TrainingLedger {
            backend: e.ledger.backend,
            partitions: e.ledger.partitions as u64,
            deliveries: e.ledger.counters.deliveries as u64,
            accepted: e.ledger.counters.accepted as u64,
            duplicate: e.ledger.counters.duplicate as u64,
            conflicting: e.ledger.counters.conflicting as u64,
            inference_deliveries_removed_for_arm_4: e.ledger.inference_deliveries_removed as u64,
        },
        arms: e
            .arms
            .iter()
            .enumerate()
            .map(|(i, a)| LoggedArm {
                number: i as u64 + 1,
                arm: a.key,
                description: a.title,
                ips: wire(&a.ips),
                snips: wire(&a.snips),
                doubly_robust: a.doubly_robust.as_ref().map(wire),
                failure_rate: wire(&a.failure_rate),
                effective_sample_size: round6(a.effective_sample_size),
                matched_episodes: a.matched as u64,
                unsupported_episodes: a.unsupported as u64,
                clipped_weights: a.clipped as u64,
                scope_leaks: LoggedLeaks {
                    count: a.leaks as u64,
                    episodes: a.leak_episodes as u64,
                },
            })
            .collect(),
        differences: e
            .differences
            .iter()
            .enumerate()
            .map(|(i, d)| LoggedDifference {
                number: i as u64 + 2,
                arm: d.key,
                versus: super::super::packet::Semantic,
                snips: wire(&d.snips),
                ips: wire(&d.ips),
                doubly_robust: d.doubly_robust.as_ref().map(wire),
                failure_rate: wire(&d.failure_rate),
            })
            .collect(),
        reducer_comparison: e.v1_versus_v0.as_ref().map(|d| LoggedReducerComparison {
            arm: BOUNDED_UTILITY_V1,
            versus: BOUNDED_UTILITY,
            snips: wire(&d.snips),
            ips: wire(&d.ips),
            doubly_robust: d.doubly_robust.as_ref().map(wire),
            failure_rate: wire(&d.failure_rate),
        }),
        gate,
        profile: profile.clone(),
        read_only: AlwaysTrue,
        grants_new_action_authority: AlwaysFalse,
        provider_write_performed: AlwaysFalse,
        external_writes_performed: AlwaysFalse,
        raw_content_captured: AlwaysFalse,
        verdict_digest: String::new(),
    }
}
