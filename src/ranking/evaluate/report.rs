//! The verdict: bootstrap the run's metrics, apply the gate and build the
//! `memory_utility_ranking_evaluation_v0` packet (with the sweep, when there is one).
//!
//! Gate (`qualified` only when all hold, otherwise `hold` with reason codes): arm 3's nDCG@k
//! gain over arm 1 has a percentile interval entirely above 0; arm 3's false attenuation
//! is at most the profile's threshold; arm 3's harmful@k is not above arm 1's; no arm moved
//! a candidate with another partition's data. Pure: no I/O.

use crate::obj;
use crate::ranking::prior::{EVALUATION_SCHEMA_VERSION, MODIFIER_VERSION};
use crate::utility::observation::EvidenceBasis;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::round6;

use super::RankEvaluateError;
use super::metrics::{Bootstrapped, Estimate, Metric, bootstrap, bootstrap_share};
use super::profile::EvaluationProfile;
use super::rng::Rng;
use super::run::RunResult;

/// Arm keys the gate reads.
pub const SEMANTIC: &str = "semantic";
/// The arm under evaluation.
pub const BOUNDED: &str = "bounded_utility";

/// Every reason code a `hold` can carry, in the order they are checked.
pub mod reason {
    pub const NO_ANSWERABLE: &str = "no_answerable_held_out_episodes";
    pub const NDCG_GAIN: &str = "ndcg_gain_interval_not_above_zero";
    pub const FALSE_ATTENUATION: &str = "false_attenuation_above_threshold";
    pub const HARMFUL: &str = "harmful_at_k_worse_than_semantic";
    pub const SCOPE_LEAK: &str = "scope_leak_detected";
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
    pub reasons: Vec<&'static str>,
}

impl Gate {
    /// `qualified` or `hold`.
    pub fn verdict(&self) -> &'static str {
        if self.reasons.is_empty() {
            "qualified"
        } else {
            "hold"
        }
    }
}

/// A run with its bootstrap and gate.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub run: RunResult,
    pub boot: Bootstrapped,
    pub disagreement: Estimate,
    pub gate: Gate,
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
    let boot = bootstrap(
        &values,
        resamples,
        e.confidence_level,
        &mut Rng::stream(seed, "bootstrap", 0),
    );
    let disagreement = bootstrap_share(
        &run.disagreement,
        resamples,
        e.confidence_level,
        &mut Rng::stream(seed, "bootstrap-disagreement", 0),
    );
    let b = arm_index(&run, BOUNDED)?;
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
    Ok(Analysis {
        run,
        boot,
        disagreement,
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
        },
    })
}

fn num(v: Option<f64>) -> Value {
    v.map_or(Value::Null, |x| Value::Float(round6(x)))
}

fn estimate_value(e: &Estimate) -> Value {
    Value::Object(obj! {
        "estimate" => num(e.estimate),
        "lower" => num(e.lower),
        "upper" => num(e.upper),
        "n" => e.n.round() as i64,
    })
}

fn metrics_value(row: &[Estimate; 5]) -> Value {
    let mut m = Map::with_capacity(5);
    for metric in Metric::ALL {
        m.insert(metric.key(), estimate_value(&row[metric as usize]));
    }
    Value::Object(m)
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

fn sweep_value(sweep: &SweepResult) -> Result<Value, RankEvaluateError> {
    let mut points = Vec::with_capacity(sweep.points.len());
    for point in &sweep.points {
        let a = &point.analysis;
        let b = arm_index(&a.run, BOUNDED)?;
        let arms: Vec<Value> = a
            .run
            .arms
            .iter()
            .enumerate()
            .map(|(i, arm)| {
                Value::Object(obj! {
                    "arm" => arm.key,
                    "ndcg_at_k" => estimate_value(&a.boot.arms[i][Metric::Ndcg as usize]),
                    "ndcg_difference_vs_semantic" => estimate_value(&a.boot.differences[i][Metric::Ndcg as usize]),
                })
            })
            .collect();
        points.push(Value::Object(obj! {
            "value" => Value::Float(point.value),
            "verdict" => a.gate.verdict(),
            "reason_codes" => crate::wire::json::str_list(&a.gate.reasons),
            "arms" => Value::from(arms),
            "false_attenuation" => estimate_value(&a.boot.arms[b][Metric::FalseAttenuation as usize]),
            "evaluator_disagreement" => estimate_value(&a.disagreement),
        }));
    }
    Ok(Value::Object(obj! {
        "parameter" => sweep.parameter.as_str(),
        "points" => Value::from(points),
    }))
}

/// The `memory_utility_ranking_evaluation_v0` packet.
pub fn packet(
    analysis: &Analysis,
    profile: &EvaluationProfile,
    source: &Source,
    sweep: Option<&SweepResult>,
) -> Result<Value, RankEvaluateError> {
    let run = &analysis.run;
    let gate = &analysis.gate;
    let e = &profile.evaluation;
    let (kind, seed, sha, lines) = match source {
        Source::Simulation { seed } => (
            "simulation",
            Value::Int(*seed as i64),
            Value::Null,
            Value::Null,
        ),
        Source::Episodes {
            input_sha256,
            observation_lines,
        } => (
            "episodes",
            Value::Int(profile.seed as i64),
            Value::from(input_sha256.as_str()),
            Value::Int(*observation_lines as i64),
        ),
    };
    let mut by_basis = Map::with_capacity(5);
    for basis in EvidenceBasis::ALL.iter().rev() {
        by_basis.insert(
            basis.as_str(),
            run.ledger.deliveries_by_basis[basis.index()],
        );
    }
    let b = arm_index(run, BOUNDED)?;
    let arms: Vec<Value> = run
        .arms
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            Value::Object(obj! {
                "number" => i + 1,
                "arm" => arm.key,
                "description" => arm.title,
                "metrics" => metrics_value(&analysis.boot.arms[i]),
                "scope_leaks" => obj! {"count" => arm.leaks, "episodes" => arm.leak_episodes},
                "evaluator_disagreement" => if i == b { estimate_value(&analysis.disagreement) } else { Value::Null },
            })
        })
        .collect();
    let differences: Vec<Value> = run
        .arms
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, arm)| {
            Value::Object(obj! {
                "number" => i + 1,
                "arm" => arm.key,
                "versus" => SEMANTIC,
                "metrics" => metrics_value(&analysis.boot.differences[i]),
            })
        })
        .collect();
    let l = &run.ledger;
    Ok(Value::Object(obj! {
        "ok" => gate.reasons.is_empty(),
        "schema_version" => EVALUATION_SCHEMA_VERSION,
        // The verdict again, under the key every packet's readers look at first (the
        // markdown summary, the refusal line, the README's exit-status recipe).
        "status" => gate.verdict(),
        "verdict" => gate.verdict(),
        "reason_codes" => crate::wire::json::str_list(&gate.reasons),
        "profile_id" => profile.rank_prior.profile_id.as_str(),
        "profile_digest" => profile.rank_prior.digest(),
        "modifier_version" => MODIFIER_VERSION,
        "evaluation_profile_digest" => profile.digest(),
        "source" => obj! {
            "kind" => kind,
            "seed" => seed,
            "input_sha256" => sha,
            "observation_lines" => lines,
            "training_episodes" => run.training_episodes,
            "held_out_episodes" => run.held_out.episodes,
        },
        "settings" => obj! {
            "k" => e.k as i64,
            "bootstrap_resamples" => e.bootstrap_resamples as i64,
            "confidence_level" => Value::Float(e.confidence_level),
            "false_attenuation_max" => Value::Float(e.false_attenuation_max),
        },
        "held_out" => obj! {
            "episodes" => run.held_out.episodes,
            "answerable_episodes" => run.held_out.answerable,
            "pool_candidates" => run.held_out.pool_candidates,
            "truly_helpful_in_pool" => run.held_out.helpful_in_pool,
            "truly_harmful_in_pool" => run.held_out.harmful_in_pool,
        },
        "ledger" => obj! {
            "backend" => l.backend,
            "partitions" => l.partitions,
            "deliveries" => l.counters.deliveries,
            "accepted" => l.counters.accepted,
            "duplicate" => l.counters.duplicate,
            "conflicting" => l.counters.conflicting,
            "item_subjects" => l.item_subjects,
            "set_subjects" => l.set_subjects,
            "none_subjects" => l.none_subjects,
            "inference_deliveries_removed_for_arm_4" => l.inference_deliveries_removed,
            "deliveries_by_basis" => by_basis,
        },
        "arms" => Value::from(arms),
        "differences" => Value::from(differences),
        "gate" => obj! {
            "ndcg_gain" => obj! {"passed" => gate.ndcg_passed, "difference" => estimate_value(&gate.ndcg_gain)},
            "false_attenuation" => obj! {
                "passed" => gate.false_attenuation_passed,
                "estimate" => num(gate.false_attenuation),
                "threshold" => Value::Float(e.false_attenuation_max),
            },
            "harmful_at_k" => obj! {"passed" => gate.harmful_passed, "difference" => num(gate.harmful_difference)},
            "scope_leaks" => obj! {"passed" => gate.leaks_passed, "count" => gate.scope_leaks},
        },
        "sweep" => match sweep { Some(s) => sweep_value(s)?, None => Value::Null },
        "profile" => profile.to_value(),
        "read_only" => true,
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    }))
}
