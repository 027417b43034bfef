//! The `memory_utility_ranking_evaluation_v1` packet as typed data: one struct per
//! object, in key order, that [`super::report::packet`] builds the verdict from and whose
//! JSON Schema is the packet's ([`RankingEvaluationPacket`]). The evaluated profile
//! prints as [`EvaluationProfile`] normalizes it. Pure.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::ranking::prior::profile::ModifierVersion;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};

use super::profile::EvaluationProfile;

const_string!(EvaluationVersion, "memory_utility_ranking_evaluation_v1");
const_string!(Semantic, "semantic");

/// `qualified` (exit 0) or `hold` (exit 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Qualified,
    Hold,
}

/// Why a verdict is `hold`, in the order the gate checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoldReason {
    NoAnswerableHeldOutEpisodes,
    NdcgGainIntervalNotAboveZero,
    FalseAttenuationAboveThreshold,
    HarmfulAtKWorseThanSemantic,
    ScopeLeakDetected,
}

/// Where the episodes came from: the simulator (a known truth, never the deployment's),
/// an `EPISODES.jsonl` file, or the deployment's own traffic in a utility ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Simulation,
    EpisodesFile,
    Ledger,
}

/// The utility ledger whose traffic a `ledger` verdict was computed from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LedgerSource {
    /// `sqlite` or `postgresql`.
    pub backend: &'static str,
    /// The ledger's `mul_` identity (`ledger_meta`); `null` for a ledger that has none
    /// yet (it gets one at its next write).
    #[schemars(with = "Nullable<String>")]
    pub ledger_id: Option<String>,
    /// The last delivery sequence number the evaluation read.
    pub high_water_seq: u64,
    /// Training is everything up to this sequence number; held-out is strictly later.
    pub split_seq: u64,
}

/// How a learned comparison arm's values were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TuningMethod {
    /// The best point of the stated grid on the validation split of the training episodes.
    ValidationGrid,
    /// The profile's values (tuning off, or no validation ground truth).
    ProfileValues,
}

/// One grid point of a tuning.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TuningPoint {
    pub parameters: BTreeMap<String, f64>,
    #[schemars(with = "Nullable<f64>")]
    pub validation_ndcg_at_k: Option<f64>,
}

/// How a learned comparison arm was set up before the held-out comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Tuning {
    pub method: TuningMethod,
    /// Why the profile's values were used: `tuning_disabled` or
    /// `no_validation_ground_truth`.
    #[schemars(with = "Nullable<String>")]
    pub reason: Option<&'static str>,
    /// The values the arm ranks the held-out episodes with.
    pub parameters: BTreeMap<String, f64>,
    /// Training episodes of the validation split (0 when not tuned).
    pub validation_episodes: u64,
    /// nDCG@k of the chosen values on the validation split.
    #[schemars(with = "Nullable<f64>")]
    pub validation_ndcg_at_k: Option<f64>,
    /// Every grid point tried, in grid order.
    pub grid: Vec<TuningPoint>,
}

/// A point estimate with its percentile bootstrap interval; `null` when no held-out
/// episode informs the metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Estimate {
    #[schemars(with = "Nullable<f64>")]
    pub estimate: Option<f64>,
    #[schemars(with = "Nullable<f64>")]
    pub lower: Option<f64>,
    #[schemars(with = "Nullable<f64>")]
    pub upper: Option<f64>,
    /// The denominator of the full sample: episodes, or truly helpful pool members for
    /// false attenuation, or subjects for evaluator disagreement.
    pub n: u64,
}

/// The five metrics of one arm (or its difference against arm 1).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Metrics {
    /// nDCG@k over episodes whose pool holds a truly helpful memory.
    pub ndcg_at_k: Estimate,
    /// Share of those episodes whose top-ranked memory truly helped.
    pub success_at_1: Estimate,
    /// Truly harmful memories in the top k, per episode.
    pub harmful_at_k: Estimate,
    /// Memories read down to the first truly helpful one, times the memory-read cost,
    /// plus the arm's evidence cost per task.
    pub task_cost: Estimate,
    /// Share of truly helpful pool members the arm attenuated: modifier below 1 (arms 3
    /// and 4), score below the arm's semantic baseline score (the others).
    pub false_attenuation: Estimate,
}

/// Scope-leak check of one arm.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScopeLeaks {
    /// Candidates whose final rank differs from the same arm prepared from its own
    /// partition's data alone (must be 0).
    pub count: u64,
    /// Held-out episodes with at least one such candidate.
    pub episodes: u64,
}

/// One arm's row of the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArmRow {
    /// 1-based arm number.
    pub number: u64,
    /// `semantic`, `semantic_hotness`, `bounded_utility`,
    /// `bounded_utility_without_inference`, `memrl`, `bounded_utility_v1` or
    /// `memrl_on_policy`.
    pub arm: &'static str,
    pub description: &'static str,
    pub metrics: Metrics,
    pub scope_leaks: ScopeLeaks,
    /// Share of item subjects whose evaluator inference disagrees with a stronger tier,
    /// or, where inference is the only evidence, with the verified outcomes (of the
    /// ledger's v0 subjects); only on `bounded_utility`'s row.
    #[schemars(with = "Nullable<Estimate>")]
    pub evaluator_disagreement: Option<Estimate>,
    /// The evidence cost per task included in `task_cost` (evidence the arm needs).
    pub evidence_cost_per_task: f64,
    /// For a learned comparison arm: how its values were chosen.
    #[schemars(with = "Nullable<Tuning>")]
    pub tuning: Option<Tuning>,
}

/// An arm's differences against arm 1 on the same bootstrap resamples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DifferenceRow {
    pub number: u64,
    pub arm: &'static str,
    pub versus: Semantic,
    pub metrics: Metrics,
}

/// Where the episodes came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Source {
    pub kind: SourceKind,
    /// The seed of the simulator and the bootstrap.
    pub seed: u64,
    /// SHA-256 of the episodes file (`episodes` only).
    #[schemars(with = "Nullable<String>")]
    pub input_sha256: Option<String>,
    /// Observation lines of the episodes file (`episodes` only).
    #[schemars(with = "Nullable<u64>")]
    pub observation_lines: Option<u64>,
    /// The ledger (`ledger` only).
    #[schemars(with = "Nullable<LedgerSource>")]
    pub ledger: Option<LedgerSource>,
    /// The `mur_` reducer identities (scope, snapshot refs, reducer version) of the
    /// partitions the held-out episodes belong to, sorted: the partitions the verdict is
    /// about.
    pub partitions: Vec<String>,
    /// When the last held-out episode happened (RFC 3339, UTC); `null` without one.
    #[schemars(with = "Nullable<String>")]
    pub observed_until: Option<String>,
    pub training_episodes: u64,
    pub held_out_episodes: u64,
}

/// Metric and gate settings in force.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Settings {
    pub k: u64,
    pub bootstrap_resamples: u64,
    pub confidence_level: f64,
    pub false_attenuation_max: f64,
}

/// Counts of the held-out set.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HeldOut {
    pub episodes: u64,
    /// Episodes whose semantic pool holds a truly helpful memory.
    pub answerable_episodes: u64,
    pub pool_candidates: u64,
    pub truly_helpful_in_pool: u64,
    pub truly_harmful_in_pool: u64,
}

/// Deliveries per evidence tier, strongest first.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ByBasis {
    pub owner_correction: u64,
    pub controlled_replay: u64,
    pub deterministic_effect: u64,
    pub evaluator_inference: u64,
    pub insufficient: u64,
}

/// Evidence runs behind the training deliveries (what the evidence part of task cost
/// counts).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EvidenceRuns {
    pub evaluator_inference: u64,
    pub deterministic_effect: u64,
    pub controlled_replay: u64,
    pub owner_correction: u64,
}

/// The utility ledger the run built.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Ledger {
    /// `sqlite` (the utility ledger's backend) or `reducer_in_memory`.
    pub backend: &'static str,
    pub partitions: u64,
    pub deliveries: u64,
    pub accepted: u64,
    pub duplicate: u64,
    pub conflicting: u64,
    pub item_subjects: u64,
    pub set_subjects: u64,
    pub none_subjects: u64,
    pub inference_deliveries_removed_for_arm_4: u64,
    pub deliveries_by_basis: ByBasis,
    pub evidence_runs: EvidenceRuns,
}

/// v1 against v0 on the same episodes: `bounded_utility_v1` minus `bounded_utility`, on
/// the same resamples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ReducerComparison {
    /// `bounded_utility_v1`.
    pub arm: &'static str,
    /// `bounded_utility`.
    pub versus: &'static str,
    pub metrics: Metrics,
}

/// The nDCG gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NdcgGate {
    pub passed: bool,
    /// The gated arm minus `semantic`.
    pub difference: Estimate,
}

/// The false-attenuation gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FalseAttenuationGate {
    pub passed: bool,
    #[schemars(with = "Nullable<f64>")]
    pub estimate: Option<f64>,
    pub threshold: f64,
}

/// The harmful@k gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HarmfulGate {
    pub passed: bool,
    #[schemars(with = "Nullable<f64>")]
    pub difference: Option<f64>,
}

/// The scope-leak gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LeakGate {
    pub passed: bool,
    /// Summed over every arm.
    pub count: u64,
}

/// The arm with the highest nDCG@k point estimate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BestArm {
    pub arm: &'static str,
    pub ndcg_at_k: Estimate,
}

/// An arm whose nDCG@k beats the gated arm's (paired interval above 0).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BeatsBounded {
    pub arm: &'static str,
    /// This arm minus the gated arm, on the same resamples.
    pub ndcg_difference: Estimate,
}

/// Every check of the gate, and (not gating) which arm wins.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Gate {
    /// The arm every check is about: the bounded-utility arm of `reducer_version`
    /// (`bounded_utility` for `memory_utility_reducer_v0`, `bounded_utility_v1` for a
    /// `memory_utility_reducer_v1` version).
    pub arm: &'static str,
    pub ndcg_gain: NdcgGate,
    pub false_attenuation: FalseAttenuationGate,
    pub harmful_at_k: HarmfulGate,
    pub scope_leaks: LeakGate,
    /// Not a check: the arm with the highest nDCG@k.
    pub best_arm: BestArm,
    /// Not a check: every arm that beats the gated arm on nDCG@k. The verdict asks only
    /// whether the gated arm beats `semantic` without harm.
    pub arms_beating_gated_arm: Vec<BeatsBounded>,
}

/// Evaluator disagreement by what it is measured against (their union is the
/// `evaluator_disagreement` of `bounded_utility`'s row).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Disagreement {
    /// Item subjects with directional inference and a stronger directional tier.
    pub against_stronger_tier: Estimate,
    /// Item subjects whose only evidence is inference, against the verified outcomes of
    /// the episodes the judge labelled.
    pub against_outcomes: Estimate,
}

/// One arm at one sweep point.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SweepArm {
    pub arm: &'static str,
    pub ndcg_at_k: Estimate,
    pub ndcg_difference_vs_semantic: Estimate,
}

/// One sweep point: the whole simulation rerun with one parameter changed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SweepPoint {
    pub value: f64,
    pub verdict: Verdict,
    pub reason_codes: Vec<HoldReason>,
    pub arms: Vec<SweepArm>,
    /// Of the gated arm.
    pub false_attenuation: Estimate,
    pub evaluator_disagreement: Estimate,
    /// The arm with the highest nDCG@k at this point.
    pub best_arm: &'static str,
}

/// `--sweep NAME=V1,V2,...`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Sweep {
    pub parameter: String,
    pub points: Vec<SweepPoint>,
}

/// `memory_utility_ranking_evaluation_v1`: does bounded utility earn its influence on
/// ranking? `recall --rank-prior` checks the whole packet against its `verdict_digest`,
/// its figures against its verdict, and its source, partitions and profile against the
/// recall (`ranking::prior::verdict`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RankingEvaluationPacket {
    /// True exactly when `verdict` is `qualified`.
    pub ok: bool,
    pub schema_version: EvaluationVersion,
    /// The verdict, as every packet's `status`.
    pub status: Verdict,
    pub verdict: Verdict,
    /// Empty when qualified.
    pub reason_codes: Vec<HoldReason>,
    pub profile_id: String,
    /// `murp_` + 64 hex: the rank-prior profile (with its modifier version) the verdict
    /// is about.
    pub profile_digest: String,
    pub modifier_version: ModifierVersion,
    /// The reducer version the evaluated partitions name (`source.partitions` are their
    /// `mur_` identities under it); the gate qualifies its bounded-utility arm.
    pub reducer_version: String,
    /// `mure_` + 64 hex of the normalized evaluation profile (`profile` below).
    pub evaluation_profile_digest: String,
    pub source: Source,
    pub settings: Settings,
    pub held_out: HeldOut,
    pub ledger: Ledger,
    pub arms: Vec<ArmRow>,
    /// Arms 2 and up against arm 1.
    pub differences: Vec<DifferenceRow>,
    /// v1 against v0 on the same episodes (`null` when one of the two arms did not run).
    #[schemars(with = "Nullable<ReducerComparison>")]
    pub reducer_comparison: Option<ReducerComparison>,
    pub evaluator_disagreement: Disagreement,
    pub gate: Gate,
    #[schemars(with = "Nullable<Sweep>")]
    pub sweep: Option<Sweep>,
    /// The normalized evaluation profile (every parameter, defaults filled in).
    pub profile: EvaluationProfile,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
    /// `murv_` + SHA-256 of the canonical JSON of this packet without this key: any edit
    /// of the packet shows. A digest, not a signature: who can write the ledger or the
    /// file can write a verdict (docs/rank-evaluate.md, "Trust").
    pub verdict_digest: String,
}
