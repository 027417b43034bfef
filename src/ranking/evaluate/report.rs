//! The verdict: bootstrap the run's metrics, apply the gate and build the
//! `memory_utility_ranking_evaluation_v1` packet (with the sweep, when there is one),
//! sealed with its `verdict_digest`.
//!
//! The gate is about the gated arm: the bounded-utility arm of the reducer the evaluated
//! partitions name (arm 3, `bounded_utility`, for `memory_utility_reducer_v0`; arm 6,
//! `bounded_utility_v1`, for a `memory_utility_reducer_v1` version). `qualified` only when
//! all hold, otherwise `hold` with reason codes: the gated arm's nDCG@k gain over arm 1 has
//! a percentile interval entirely above 0; its false attenuation is at most the profile's
//! threshold; its harmful@k is not above arm 1's; no arm moved a candidate with another
//! partition's data. Beside the gate, not part of it: the arm with the best nDCG@k, every
//! arm that beats the gated arm on nDCG@k with a paired interval above 0, and v1 against
//! v0 (arm 6 minus arm 3) on every metric, same resamples. Pure: no I/O.

use std::collections::BTreeMap;

use crate::ranking::prior::profile::ModifierVersion;
use crate::utility::observation::EvidenceBasis;
use crate::wire::json::{self, Value};
use crate::wire::pyfmt::round6;
use crate::wire::schema::{AlwaysFalse, AlwaysTrue};

use crate::ranking::prior::Partition;
use crate::ranking::prior::verdict::{VERDICT_DIGEST_KEY, verdict_digest};

use super::dataset::Dataset;
use super::episodes::iso_of_micros;
use super::error::RankEvaluateError;
use super::metrics::{Bootstrapped, Estimate, Metric, bootstrap, bootstrap_share};
use super::packet::{self as wire, EvaluationVersion, HoldReason, Semantic, SourceKind, Verdict};
use super::profile::EvaluationProfile;
use super::rng::Rng;
use super::run::RunResult;
use super::tuning::{ArmTuning, Method};

/// Arm keys the gate reads.
pub const SEMANTIC: &str = "semantic";
pub use super::arms::{BOUNDED_UTILITY, BOUNDED_UTILITY_V1};

/// Every reason a `hold` can carry, in the order they are checked.
pub mod reason {
    use super::HoldReason;

    pub const NO_ANSWERABLE: HoldReason = HoldReason::NoAnswerableHeldOutEpisodes;
    pub const NDCG_GAIN: HoldReason = HoldReason::NdcgGainIntervalNotAboveZero;
    pub const FALSE_ATTENUATION: HoldReason = HoldReason::FalseAttenuationAboveThreshold;
    pub const HARMFUL: HoldReason = HoldReason::HarmfulAtKWorseThanSemantic;
    pub const SCOPE_LEAK: HoldReason = HoldReason::ScopeLeakDetected;
}

/// Where the episodes came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Simulation {
        seed: u64,
    },
    Episodes {
        input_sha256: String,
        observation_lines: usize,
    },
}

/// What the held-out episodes cover: the partitions a verdict is about and when its last
/// held-out episode happened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// Sorted, distinct `mur_` reducer identities.
    pub partitions: Vec<String>,
    /// RFC 3339 (UTC) of the latest held-out episode.
    pub observed_until: Option<String>,
}

impl Coverage {
    /// The coverage of a dataset's held-out episodes.
    pub fn of(dataset: &Dataset) -> Coverage {
        let mut partitions: Vec<String> = dataset
            .held_out
            .iter()
            .filter_map(|e| dataset.partitions.get(e.partition))
            .map(Partition::reducer_identity)
            .collect();
        partitions.sort();
        partitions.dedup();
        let observed_until = dataset
            .held_out
            .iter()
            .map(|e| e.at)
            .max()
            .map(iso_of_micros);
        Coverage {
            partitions,
            observed_until,
        }
    }
}

/// The gate's checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub ndcg_gain: Estimate,
    pub ndcg_passed: bool,
    pub false_attenuation: Option<f64>,
    pub false_attenuation_passed: bool,
    pub harmful_difference: Option<f64>,
    pub harmful_passed: bool,
    pub scope_leaks: usize,
    pub leaks_passed: bool,
    pub reasons: Vec<HoldReason>,
    /// The arm (index) the checks are about.
    pub arm: usize,
    /// The arm (index) with the highest nDCG@k point estimate (ties: the lower number).
    pub best_arm: usize,
    /// Arms (index, nDCG@k difference against the gated arm) whose paired interval is
    /// above 0.
    pub beating_gated: Vec<(usize, Estimate)>,
}

impl Gate {
    /// `qualified` or `hold`.
    pub fn verdict(&self) -> Verdict {
        if self.reasons.is_empty() {
            Verdict::Qualified
        } else {
            Verdict::Hold
        }
    }
}

/// A run with its bootstrap and gate.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub run: RunResult,
    pub boot: Bootstrapped,
    /// Against a stronger tier or the outcomes (both kinds of subjects).
    pub disagreement: Estimate,
    pub disagreement_stronger: Estimate,
    pub disagreement_outcomes: Estimate,
    pub gate: Gate,
    /// `[metric]`: arm 6 (v1) minus arm 3 (v0) on the same resamples, when both ran.
    pub v1_versus_v0: Option<[Estimate; 5]>,
}

fn arm_index(run: &RunResult, key: &str) -> Result<usize, RankEvaluateError> {
    run.arms
        .iter()
        .position(|a| a.key == key)
        .ok_or(RankEvaluateError::Internal("the gate's arms are missing"))
}

/// Bootstraps a run (streams of `seed`) and applies the gate.
pub fn analyze(
    run: RunResult,
    profile: &EvaluationProfile,
    seed: u64,
) -> Result<Analysis, RankEvaluateError> {
    let e = &profile.evaluation;
    let resamples = e.bootstrap_resamples as usize;
    let values: Vec<_> = run.arms.iter().map(|a| a.values.clone()).collect();
    if arm_index(&run, SEMANTIC)? != 0 {
        return Err(RankEvaluateError::Internal(
            "arm 1 must be the semantic arm",
        ));
    }
    let b = arm_index(&run, run.gated_arm)?;
    let boot = bootstrap(
        &values,
        b,
        resamples,
        e.confidence_level,
        &mut Rng::stream(seed, "bootstrap", 0),
    );
    // v1 against v0: the versus row of the main bootstrap when v0 is the gated arm, else
    // a bootstrap with v0 as reference (the same stream: the same resamples).
    let v0 = run.arms.iter().position(|a| a.key == BOUNDED_UTILITY);
    let v1 = run.arms.iter().position(|a| a.key == BOUNDED_UTILITY_V1);
    let v1_versus_v0 = match (v0, v1) {
        (Some(v0), Some(v1)) if v0 == b => Some(boot.versus[v1]),
        (Some(v0), Some(v1)) => Some(
            bootstrap(
                &values,
                v0,
                resamples,
                e.confidence_level,
                &mut Rng::stream(seed, "bootstrap", 0),
            )
            .versus[v1],
        ),
        _ => None,
    };
    let share = |flags: &[bool], stream: &str| {
        bootstrap_share(
            flags,
            resamples,
            e.confidence_level,
            &mut Rng::stream(seed, stream, 0),
        )
    };
    let both: Vec<bool> = run
        .disagreement
        .iter()
        .chain(&run.outcome_disagreement)
        .copied()
        .collect();
    let disagreement = share(&both, "bootstrap-disagreement");
    let disagreement_stronger = share(&run.disagreement, "bootstrap-disagreement-stronger");
    let disagreement_outcomes = share(&run.outcome_disagreement, "bootstrap-disagreement-outcomes");
    let ndcg_gain = boot.differences[b][Metric::Ndcg as usize];
    let mut reasons = Vec::new();
    let answerable = run.held_out.answerable > 0;
    if !answerable {
        reasons.push(reason::NO_ANSWERABLE);
    }
    let ndcg_passed = answerable && ndcg_gain.lower.is_some_and(|l| l > 0.0);
    if answerable && !ndcg_passed {
        reasons.push(reason::NDCG_GAIN);
    }
    let false_attenuation = boot.arms[b][Metric::FalseAttenuation as usize].estimate;
    let false_attenuation_passed = false_attenuation.unwrap_or(0.0) <= e.false_attenuation_max;
    if !false_attenuation_passed {
        reasons.push(reason::FALSE_ATTENUATION);
    }
    let harmful_difference = boot.differences[b][Metric::HarmfulAtK as usize].estimate;
    let harmful_passed = harmful_difference.unwrap_or(0.0) <= 0.0;
    if !harmful_passed {
        reasons.push(reason::HARMFUL);
    }
    let scope_leaks: usize = run.arms.iter().map(|a| a.leaks).sum();
    let leaks_passed = scope_leaks == 0;
    if !leaks_passed {
        reasons.push(reason::SCOPE_LEAK);
    }
    let ndcg = |i: usize| boot.arms[i][Metric::Ndcg as usize].estimate;
    let mut best_arm = 0;
    for i in 1..run.arms.len() {
        if let Some(v) = ndcg(i)
            && ndcg(best_arm).is_none_or(|best| v > best)
        {
            best_arm = i;
        }
    }
    let beating_gated = (0..run.arms.len())
        .filter(|&i| i != b)
        .map(|i| (i, boot.versus[i][Metric::Ndcg as usize]))
        .filter(|(_, d)| d.lower.is_some_and(|l| l > 0.0))
        .collect();
    Ok(Analysis {
        run,
        boot,
        disagreement,
        disagreement_stronger,
        disagreement_outcomes,
        v1_versus_v0,
        gate: Gate {
            ndcg_gain,
            ndcg_passed,
            false_attenuation,
            false_attenuation_passed,
            harmful_difference,
            harmful_passed,
            scope_leaks,
            leaks_passed,
            reasons,
            arm: b,
            best_arm,
            beating_gated,
        },
    })
}

fn parameters(list: &[(&'static str, f64)]) -> BTreeMap<String, f64> {
    list.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

fn tuning(t: &ArmTuning) -> wire::Tuning {
    wire::Tuning {
        method: match t.method {
            Method::ValidationGrid => wire::TuningMethod::ValidationGrid,
            Method::ProfileValues => wire::TuningMethod::ProfileValues,
        },
        reason: t.reason,
        parameters: parameters(&t.parameters),
        validation_episodes: t.validation_episodes as u64,
        validation_ndcg_at_k: num(t.validation_ndcg),
        grid: t
            .grid
            .iter()
            .map(|g| wire::TuningPoint {
                parameters: parameters(&g.parameters),
                validation_ndcg_at_k: num(g.validation_ndcg),
            })
            .collect(),
    }
}

fn num(v: Option<f64>) -> Option<f64> {
    v.map(round6)
}

fn estimate(e: &Estimate) -> wire::Estimate {
    wire::Estimate {
        estimate: num(e.estimate),
        lower: num(e.lower),
        upper: num(e.upper),
        n: e.n.round() as u64,
    }
}

fn metrics(row: &[Estimate; 5]) -> wire::Metrics {
    let of = |metric: Metric| estimate(&row[metric as usize]);
    wire::Metrics {
        ndcg_at_k: of(Metric::Ndcg),
        success_at_1: of(Metric::SuccessAt1),
        harmful_at_k: of(Metric::HarmfulAtK),
        task_cost: of(Metric::TaskCost),
        false_attenuation: of(Metric::FalseAttenuation),
    }
}

/// One sweep point: the swept value and that run's analysis.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    pub value: f64,
    pub analysis: Analysis,
}

/// A finished sweep.
#[derive(Debug, Clone)]
pub struct SweepResult {
    pub parameter: String,
    pub points: Vec<SweepPoint>,
}

fn sweep(sweep: &SweepResult) -> Result<wire::Sweep, RankEvaluateError> {
    let mut points = Vec::with_capacity(sweep.points.len());
    for point in &sweep.points {
        let a = &point.analysis;
        let b = a.gate.arm;
        let arms = a
            .run
            .arms
            .iter()
            .enumerate()
            .map(|(i, arm)| wire::SweepArm {
                arm: arm.key,
                ndcg_at_k: estimate(&a.boot.arms[i][Metric::Ndcg as usize]),
                ndcg_difference_vs_semantic: estimate(
                    &a.boot.differences[i][Metric::Ndcg as usize],
                ),
            })
            .collect();
        points.push(wire::SweepPoint {
            value: point.value,
            verdict: a.gate.verdict(),
            reason_codes: a.gate.reasons.clone(),
            arms,
            false_attenuation: estimate(&a.boot.arms[b][Metric::FalseAttenuation as usize]),
            evaluator_disagreement: estimate(&a.disagreement),
            best_arm: a.run.arms.get(a.gate.best_arm).map_or("", |arm| arm.key),
        });
    }
    Ok(wire::Sweep {
        parameter: sweep.parameter.clone(),
        points,
    })
}

/// The `memory_utility_ranking_evaluation_v1` packet, sealed: its `verdict_digest` is
/// the digest of everything before it.
pub fn packet(
    analysis: &Analysis,
    profile: &EvaluationProfile,
    source: &Source,
    coverage: &Coverage,
    sweep_result: Option<&SweepResult>,
) -> Result<Value, RankEvaluateError> {
    let typed = typed_packet(analysis, profile, source, coverage, sweep_result)?;
    let mut value = json::to_value(&typed)
        .map_err(|_| RankEvaluateError::Internal("the verdict packet does not serialize"))?;
    if let Value::Object(map) = &mut value {
        let seal = verdict_digest(map);
        map.insert(VERDICT_DIGEST_KEY, seal);
    }
    Ok(value)
}

/// The `memory_utility_ranking_evaluation_v1` packet as typed data; its
/// `verdict_digest` is empty until [`packet`] seals it.
pub fn typed_packet(
    analysis: &Analysis,
    profile: &EvaluationProfile,
    source: &Source,
    coverage: &Coverage,
    sweep_result: Option<&SweepResult>,
) -> Result<wire::RankingEvaluationPacket, RankEvaluateError> {
    let run = &analysis.run;
    let gate = &analysis.gate;
    let e = &profile.evaluation;
    let source = match source {
        Source::Simulation { seed } => wire::Source {
            kind: SourceKind::Simulation,
            seed: *seed,
            input_sha256: None,
            observation_lines: None,
            ledger: None,
            partitions: coverage.partitions.clone(),
            observed_until: coverage.observed_until.clone(),
            training_episodes: run.training_episodes as u64,
            held_out_episodes: run.held_out.episodes as u64,
        },
        Source::Episodes {
            input_sha256,
            observation_lines,
        } => wire::Source {
            kind: SourceKind::EpisodesFile,
            seed: profile.seed,
            input_sha256: Some(input_sha256.clone()),
            observation_lines: Some(*observation_lines as u64),
            ledger: None,
            partitions: coverage.partitions.clone(),
            observed_until: coverage.observed_until.clone(),
            training_episodes: run.training_episodes as u64,
            held_out_episodes: run.held_out.episodes as u64,
        },
    };
    let by_basis = |basis: EvidenceBasis| run.ledger.deliveries_by_basis[basis.index()] as u64;
    // Evaluator disagreement is a property of the ledger's v0 subjects: on arm 3's row.
    let v0 = arm_index(run, BOUNDED_UTILITY)?;
    let arms = run
        .arms
        .iter()
        .enumerate()
        .map(|(i, arm)| wire::ArmRow {
            number: i as u64 + 1,
            arm: arm.key,
            description: arm.title,
            metrics: metrics(&analysis.boot.arms[i]),
            scope_leaks: wire::ScopeLeaks {
                count: arm.leaks as u64,
                episodes: arm.leak_episodes as u64,
            },
            evaluator_disagreement: (i == v0).then(|| estimate(&analysis.disagreement)),
            evidence_cost_per_task: round6(arm.evidence_cost_per_task),
            tuning: run.tuned.of(arm.key).map(tuning),
        })
        .collect();
    let differences = run
        .arms
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, arm)| wire::DifferenceRow {
            number: i as u64 + 1,
            arm: arm.key,
            versus: Semantic,
            metrics: metrics(&analysis.boot.differences[i]),
        })
        .collect();
    let l = &run.ledger;
    Ok(wire::RankingEvaluationPacket {
        ok: gate.reasons.is_empty(),
        schema_version: EvaluationVersion,
        // The verdict again, under the key every packet's readers look at first (the
        // markdown summary, the refusal line, the README's exit-status recipe).
        status: gate.verdict(),
        verdict: gate.verdict(),
        reason_codes: gate.reasons.clone(),
        profile_id: profile.rank_prior.profile_id.clone(),
        profile_digest: profile.rank_prior.digest(),
        modifier_version: ModifierVersion,
        reducer_version: run.reducer_version.clone(),
        evaluation_profile_digest: profile.digest(),
        source,
        settings: wire::Settings {
            k: e.k as u64,
            bootstrap_resamples: e.bootstrap_resamples as u64,
            confidence_level: e.confidence_level,
            false_attenuation_max: e.false_attenuation_max,
        },
        held_out: wire::HeldOut {
            episodes: run.held_out.episodes as u64,
            answerable_episodes: run.held_out.answerable as u64,
            pool_candidates: run.held_out.pool_candidates as u64,
            truly_helpful_in_pool: run.held_out.helpful_in_pool as u64,
            truly_harmful_in_pool: run.held_out.harmful_in_pool as u64,
        },
        ledger: wire::Ledger {
            backend: l.backend,
            partitions: l.partitions as u64,
            deliveries: l.counters.deliveries as u64,
            accepted: l.counters.accepted as u64,
            duplicate: l.counters.duplicate as u64,
            conflicting: l.counters.conflicting as u64,
            item_subjects: l.item_subjects as u64,
            set_subjects: l.set_subjects as u64,
            none_subjects: l.none_subjects as u64,
            inference_deliveries_removed_for_arm_4: l.inference_deliveries_removed as u64,
            deliveries_by_basis: wire::ByBasis {
                owner_correction: by_basis(EvidenceBasis::OwnerCorrection),
                controlled_replay: by_basis(EvidenceBasis::ControlledReplay),
                deterministic_effect: by_basis(EvidenceBasis::DeterministicEffect),
                evaluator_inference: by_basis(EvidenceBasis::EvaluatorInference),
                insufficient: by_basis(EvidenceBasis::Insufficient),
            },
            evidence_runs: wire::EvidenceRuns {
                evaluator_inference: run.evidence_work.evaluator_inference as u64,
                deterministic_effect: run.evidence_work.deterministic_effect as u64,
                controlled_replay: run.evidence_work.controlled_replay as u64,
                owner_correction: run.evidence_work.owner_correction as u64,
            },
        },
        arms,
        differences,
        reducer_comparison: analysis
            .v1_versus_v0
            .as_ref()
            .map(|row| wire::ReducerComparison {
                arm: BOUNDED_UTILITY_V1,
                versus: BOUNDED_UTILITY,
                metrics: metrics(row),
            }),
        evaluator_disagreement: wire::Disagreement {
            against_stronger_tier: estimate(&analysis.disagreement_stronger),
            against_outcomes: estimate(&analysis.disagreement_outcomes),
        },
        gate: wire::Gate {
            arm: run.gated_arm,
            ndcg_gain: wire::NdcgGate {
                passed: gate.ndcg_passed,
                difference: estimate(&gate.ndcg_gain),
            },
            false_attenuation: wire::FalseAttenuationGate {
                passed: gate.false_attenuation_passed,
                estimate: num(gate.false_attenuation),
                threshold: e.false_attenuation_max,
            },
            harmful_at_k: wire::HarmfulGate {
                passed: gate.harmful_passed,
                difference: num(gate.harmful_difference),
            },
            scope_leaks: wire::LeakGate {
                passed: gate.leaks_passed,
                count: gate.scope_leaks as u64,
            },
            best_arm: wire::BestArm {
                arm: run.arms.get(gate.best_arm).map_or("", |a| a.key),
                ndcg_at_k: estimate(&analysis.boot.arms[gate.best_arm][Metric::Ndcg as usize]),
            },
            arms_beating_gated_arm: gate
                .beating_gated
                .iter()
                .map(|(i, d)| wire::BeatsBounded {
                    arm: run.arms.get(*i).map_or("", |a| a.key),
                    ndcg_difference: estimate(d),
                })
                .collect(),
        },
        sweep: sweep_result.map(sweep).transpose()?,
        profile: profile.clone(),
        read_only: AlwaysTrue,
        grants_new_action_authority: AlwaysFalse,
        provider_write_performed: AlwaysFalse,
        external_writes_performed: AlwaysFalse,
        raw_content_captured: AlwaysFalse,
        verdict_digest: String::new(),
    })
}
