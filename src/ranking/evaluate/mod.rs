//! `rank-evaluate`: the held-out ranking evaluation of attribution RFC §9 Stage 4 and §10.
//! Does bounded utility earn its influence on ranking?
//!
//! Six arms (seven in a simulation) rank the same semantic pool of every held-out episode
//! (see [`arms`]), among them the bounded prior under reducer v0 and under
//! `memory_utility_reducer_v1` from the same deliveries; the learned comparison arms are
//! first tuned on a validation split of the training episodes ([`tuning`]); their nDCG@k,
//! success@1, harmful@k, task cost and false attenuation are measured against ground truth
//! with a seeded, paired bootstrap ([`metrics`]); every ranking is checked for scope
//! leaks; evaluator disagreement is measured on the ledger. The verdict packet
//! `memory_utility_ranking_evaluation_v1` ([`report`], typed in [`packet`]) gates the
//! bounded arm of the reducer the partitions name, binds the rank-prior profile's `murp_`
//! digest, the partitions (their `mur_` identities under that reducer) and the source,
//! is sealed by its `verdict_digest`, reports v1 against v0, and says which arm wins.
//!
//! Episodes come from `--input EPISODES.jsonl` ([`episodes`]) or from the deterministic
//! simulator ([`simulate`]): a world where memories cause outcomes ([`world`]), evidence
//! produced from outcomes and re-runs only ([`evidence`]), and the product path:
//! application receipts from [`crate::recall::apply_recall`], observations from
//! `utility-observe`'s builder, the ledger seam ([`ledger`]) over the reducer, and the real
//! rank prior. Pure apart from the evaluation's ledgers, which [`ledger::SqliteOpener`]
//! keeps as SQLite files in a directory its caller gives; the `rank-evaluate` handler of
//! the shell reads the inputs, makes that directory and writes the chart. Design and every
//! parameter: `docs/rank-evaluate.md`.
//! The evaluation on the deployment's own traffic (the ledger's traffic log, off-policy
//! estimates, no ground truth) is [`logged`].

pub mod arms;
pub mod dataset;
pub mod episodes;
pub mod error;
pub mod evidence;
pub mod ledger;
pub mod logged;
pub mod metrics;
pub mod packet;
pub mod plot;
pub mod profile;
pub mod report;
pub mod rng;
pub mod run;
pub mod simulate;
pub mod tuning;
pub mod world;

use crate::wire::json::Value;

pub use error::RankEvaluateError;
use ledger::LedgerOpener;
use profile::{EvaluationProfile, Sweep};
use report::{Source, SweepPoint, SweepResult};

/// Runs the evaluation of one dataset (and, for a simulation, the sweep) and returns the
/// verdict packet.
pub fn evaluate(
    dataset: &dataset::Dataset,
    profile: &EvaluationProfile,
    source: &Source,
    sweep: Option<&Sweep>,
    opener: &dyn LedgerOpener,
) -> Result<Value, RankEvaluateError> {
    if let Some(sweep) = sweep {
        check_sweep(sweep, profile)?;
    }
    let run = run::run(dataset, profile, &arms::arms_for(dataset), opener)?;
    let analysis = report::analyze(run, profile, profile.seed)?;
    let swept = match sweep {
        None => None,
        Some(sweep) => {
            let mut points = Vec::with_capacity(sweep.values.len());
            for &value in &sweep.values {
                let mut point = profile.clone();
                point.set_param(&sweep.parameter, value)?;
                let data = simulate::simulate(&point)?;
                let run = run::run(&data, &point, &arms::arms_for(&data), opener)?;
                points.push(SweepPoint {
                    value,
                    analysis: report::analyze(run, &point, point.seed)?,
                });
            }
            Some(SweepResult {
                parameter: sweep.parameter.clone(),
                points,
            })
        }
    };
    report::packet(
        &analysis,
        profile,
        source,
        &report::Coverage::of(dataset),
        swept.as_ref(),
    )
}

/// A sweep of a value that tuning chooses would change nothing: refuse it unless tuning
/// is off.
fn check_sweep(sweep: &Sweep, profile: &EvaluationProfile) -> Result<(), RankEvaluateError> {
    let tuned = matches!(
        sweep.parameter.as_str(),
        "hotness.alpha" | "hotness.half_life_days" | "memrl.alpha" | "memrl.mix_weight"
    );
    if tuned && profile.evaluation.tune_baselines >= 0.5 {
        return Err(RankEvaluateError::Sweep(format!(
            "--sweep {} changes nothing while the comparison arms are tuned: set evaluation.tune_baselines to 0 in the profile to sweep it",
            sweep.parameter
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
