//! Schema-only wire types of `rank-evaluate`: the verdict packet
//! `memory_utility_ranking_evaluation_v0`, one `EPISODES.jsonl` episode line
//! `memory_utility_ranking_episode_v0`, and the evaluation profile
//! `memory_utility_ranking_evaluation_profile_v0` (whose numeric sections are generated
//! from the same parameter tables the parser uses).

#![allow(dead_code)]

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::{AlwaysFalse, AlwaysTrue, Nullable};
use crate::const_string;
use crate::ranking::evaluate::profile::{Kind, ParamSpec, sections};

const_string!(EvaluationVersion, "memory_utility_ranking_evaluation_v0");
const_string!(EpisodeVersion, "memory_utility_ranking_episode_v0");
const_string!(
    ProfileVersion,
    "memory_utility_ranking_evaluation_profile_v0"
);
const_string!(ModifierVersion, "memory_utility_rank_prior_modifier_v0");
const_string!(Semantic, "semantic");

/// `qualified` (exit 0) or `hold` (exit 2).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Qualified,
    Hold,
}

/// Why a verdict is `hold`, in the order the gate checks them.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoldReason {
    NoAnswerableHeldOutEpisodes,
    NdcgGainIntervalNotAboveZero,
    FalseAttenuationAboveThreshold,
    HarmfulAtKWorseThanSemantic,
    ScopeLeakDetected,
}

/// `simulation` or `episodes`.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Simulation,
    Episodes,
}

/// A point estimate with its percentile bootstrap interval; `null` when no held-out
/// episode informs the metric.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Estimate {
    pub estimate: Nullable<f64>,
    pub lower: Nullable<f64>,
    pub upper: Nullable<f64>,
    /// The denominator of the full sample: episodes, or truly helpful pool members for
    /// false attenuation, or subjects for evaluator disagreement.
    pub n: u64,
}

/// The five metrics of one arm (or its difference against arm 1).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Metrics {
    /// nDCG@k over episodes whose pool holds a truly helpful memory.
    pub ndcg_at_k: Estimate,
    /// Share of those episodes whose top-ranked memory truly helped.
    pub success_at_1: Estimate,
    /// Truly harmful memories in the top k, per episode.
    pub harmful_at_k: Estimate,
    /// Memories ranked above the first truly helpful one.
    pub task_cost: Estimate,
    /// Share of truly helpful pool members overtaken by a non-helpful member that ranked
    /// below them semantically.
    pub false_attenuation: Estimate,
}

/// Scope-leak check of one arm.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScopeLeaks {
    /// Candidates whose final rank differs from the same arm prepared from its own
    /// partition's data alone (must be 0).
    pub count: u64,
    /// Held-out episodes with at least one such candidate.
    pub episodes: u64,
}

/// One arm's row of the table.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArmRow {
    /// 1-based arm number.
    pub number: u64,
    /// `semantic`, `semantic_hotness`, `bounded_utility`,
    /// `bounded_utility_without_inference` or `memrl`.
    pub arm: String,
    pub description: String,
    pub metrics: Metrics,
    pub scope_leaks: ScopeLeaks,
    /// Share of item subjects whose evaluator inference disagrees with a stronger tier;
    /// only on the arm that ranks with inference (`bounded_utility`).
    pub evaluator_disagreement: Nullable<Estimate>,
}

/// An arm's differences against arm 1 on the same bootstrap resamples.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DifferenceRow {
    pub number: u64,
    pub arm: String,
    pub versus: Semantic,
    pub metrics: Metrics,
}

/// Where the episodes came from.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Source {
    pub kind: SourceKind,
    /// The seed of the simulator and the bootstrap.
    pub seed: u64,
    /// SHA-256 of the episodes file (`episodes` only).
    pub input_sha256: Nullable<String>,
    /// Observation lines of the episodes file (`episodes` only).
    pub observation_lines: Nullable<u64>,
    pub training_episodes: u64,
    pub held_out_episodes: u64,
}

/// Metric and gate settings in force.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Settings {
    pub k: u64,
    pub bootstrap_resamples: u64,
    pub confidence_level: f64,
    pub false_attenuation_max: f64,
}

/// Counts of the held-out set.
#[derive(JsonSchema)]
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
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ByBasis {
    pub owner_correction: u64,
    pub controlled_replay: u64,
    pub deterministic_effect: u64,
    pub evaluator_inference: u64,
    pub insufficient: u64,
}

/// The utility ledger the run built.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Ledger {
    /// `sqlite` (the utility ledger's backend) or `reducer_in_memory`.
    pub backend: String,
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
}

/// The nDCG gate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NdcgGate {
    pub passed: bool,
    /// `bounded_utility` minus `semantic`.
    pub difference: Estimate,
}

/// The false-attenuation gate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FalseAttenuationGate {
    pub passed: bool,
    pub estimate: Nullable<f64>,
    pub threshold: f64,
}

/// The harmful@k gate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HarmfulGate {
    pub passed: bool,
    pub difference: Nullable<f64>,
}

/// The scope-leak gate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LeakGate {
    pub passed: bool,
    /// Summed over every arm.
    pub count: u64,
}

/// Every check of the gate.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Gate {
    pub ndcg_gain: NdcgGate,
    pub false_attenuation: FalseAttenuationGate,
    pub harmful_at_k: HarmfulGate,
    pub scope_leaks: LeakGate,
}

/// One arm at one sweep point.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SweepArm {
    pub arm: String,
    pub ndcg_at_k: Estimate,
    pub ndcg_difference_vs_semantic: Estimate,
}

/// One sweep point: the whole simulation rerun with one parameter changed.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SweepPoint {
    pub value: f64,
    pub verdict: Verdict,
    pub reason_codes: Vec<HoldReason>,
    pub arms: Vec<SweepArm>,
    /// Of `bounded_utility`.
    pub false_attenuation: Estimate,
    pub evaluator_disagreement: Estimate,
}

/// `--sweep NAME=V1,V2,...`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Sweep {
    pub parameter: String,
    pub points: Vec<SweepPoint>,
}

/// `memory_utility_ranking_evaluation_v0`: does bounded utility earn its influence on
/// ranking? `recall --rank-prior --evaluation` reads `verdict` and `profile_digest`.
#[derive(JsonSchema)]
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
    /// `mure_` + 64 hex of the normalized evaluation profile (`profile` below).
    pub evaluation_profile_digest: String,
    pub source: Source,
    pub settings: Settings,
    pub held_out: HeldOut,
    pub ledger: Ledger,
    pub arms: Vec<ArmRow>,
    /// Arms 2 to 5 against arm 1.
    pub differences: Vec<DifferenceRow>,
    pub gate: Gate,
    pub sweep: Nullable<Sweep>,
    /// The normalized evaluation profile (every parameter, defaults filled in).
    pub profile: RankingEvaluationProfile,
    pub read_only: AlwaysTrue,
    pub grants_new_action_authority: AlwaysFalse,
    pub provider_write_performed: AlwaysFalse,
    pub external_writes_performed: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// `training` (learned from) or `held_out` (scored).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    Training,
    HeldOut,
}

/// Hidden ground truth of a held-out candidate.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroundTruth {
    Helpful,
    Harmful,
    Neutral,
}

/// The partition of an episode (the rank prior's partition object).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EpisodePartition {
    /// Exactly `agent_id`, `project_id`, `corpus_id`, `surface_id`.
    pub scope: std::collections::BTreeMap<String, String>,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
    /// Default `memory_utility_reducer_v0`.
    pub reducer_version: Option<String>,
}

/// One candidate of an episode. Training: `memory_ref_digest`, optional
/// `relevance_score` and `used`. Held-out: `memory_ref_digest`, `relevance_score`,
/// `ground_truth`, and `gain` (helpful only, default 1).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EpisodeCandidate {
    /// 16 lowercase hex or `sha256:` + 64 hex.
    pub memory_ref_digest: String,
    /// Finite, 0 to 1e12 (required for held-out episodes).
    pub relevance_score: Option<f64>,
    /// Training only: the memory was applied (its Q-value learns the terminal reward).
    pub used: Option<bool>,
    /// Held-out only.
    pub ground_truth: Option<GroundTruth>,
    /// Held-out helpful only: the nDCG gain, above 0 and at most 1e6 (default 1).
    pub gain: Option<f64>,
}

/// `memory_utility_ranking_episode_v0`: one line of `EPISODES.jsonl` (the other kind of
/// line is a `memory_utility_observation_v0` delivery).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RankingEpisode {
    pub schema_version: EpisodeVersion,
    /// Opaque ref, unique in the file.
    pub episode_id: String,
    pub split: Split,
    /// Aware ISO timestamp: recency for hotness, and the order of Q-updates.
    pub observed_at: String,
    pub partition: EpisodePartition,
    /// 1 to 1000, digests unique. Training: what was recalled (accessed). Held-out:
    /// the candidates every arm ranks.
    pub candidates: Vec<EpisodeCandidate>,
    /// Training only (required there): the terminal reward every used memory's Q-value
    /// learns.
    pub terminal_reward: Option<f64>,
}

/// `memory_utility_ranking_evaluation_profile_v0`, generated from the parameter tables.
pub struct RankingEvaluationProfile;

fn section_schema(specs: &[ParamSpec]) -> serde_json::Value {
    let mut properties = serde_json::Map::new();
    for spec in specs {
        let schema = match spec.kind {
            Kind::Int => serde_json::json!({
                "description": spec.doc.trim(),
                "type": "integer",
                "minimum": spec.min as i64,
                "maximum": spec.max as i64,
                "default": spec.default as i64,
            }),
            Kind::Float => serde_json::json!({
                "description": spec.doc.trim(),
                "type": "number",
                "minimum": spec.min,
                "maximum": spec.max,
                "default": spec.default,
            }),
        };
        properties.insert(spec.name.to_owned(), schema);
    }
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
    })
}

impl JsonSchema for RankingEvaluationProfile {
    fn schema_name() -> Cow<'static, str> {
        "RankingEvaluationProfile".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut properties = serde_json::Map::new();
        properties.insert(
            "schema_version".into(),
            serde_json::json!({"type": "string", "const": "memory_utility_ranking_evaluation_profile_v0"}),
        );
        properties.insert(
            "seed".into(),
            serde_json::json!({"description": "Seed of the simulator and the bootstrap (default 1; --seed wins)", "type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991_u64}),
        );
        properties.insert(
            "rank_prior".into(),
            serde_json::json!({"description": "The memory_utility_rank_prior_profile_v0 under evaluation (default: profile:rank-evaluate-default, see docs/rank-evaluate.md)", "type": "object"}),
        );
        for (section, specs) in sections() {
            properties.insert(section.into(), section_schema(specs));
        }
        let value = serde_json::json!({
            "title": "RankingEvaluationProfile",
            "description": "memory_utility_ranking_evaluation_profile_v0: every key optional; unknown keys are refused.",
            "type": "object",
            "additionalProperties": false,
            "properties": properties,
        });
        Schema::try_from(value).unwrap_or_else(|_| json_schema!({"type": "object"}))
    }
}
