//! `rank-evaluate`: the held-out ranking evaluation of attribution RFC §9 Stage 4 and §10.
//! Does bounded utility earn its influence on ranking?
//!
//! Five arms rank the same semantic pool of every held-out episode (see [`arms`]); their
//! nDCG@k, success@1, harmful@k, task cost and false attenuation are measured against
//! hidden ground truth with a seeded, paired bootstrap ([`metrics`]); every ranking is
//! checked for scope leaks; evaluator disagreement is measured on the ledger. The verdict
//! packet `memory_utility_ranking_evaluation_v0` ([`report`], typed in [`packet`]) binds
//! the rank-prior profile's `murp_` digest, so `recall --rank-prior --evaluation` can
//! require a `qualified` verdict for exactly the profile it applies.
//!
//! Episodes come from `--input EPISODES.jsonl` ([`episodes`]) or from the deterministic
//! simulator ([`simulate`]), which goes through the product: application receipts from
//! [`crate::recall::apply_recall`], observations from `utility-observe`'s builder, the
//! ledger seam ([`ledger`]) over the reducer, and the real rank prior. Pure apart from the
//! evaluation's ledgers, which [`ledger::SqliteOpener`] keeps as SQLite files in a
//! directory its caller gives; the `rank-evaluate` handler of the shell reads the inputs,
//! makes that directory and writes the chart. Design and every parameter:
//! `docs/rank-evaluate.md`. The evaluation on the deployment's own traffic (the ledger's
//! traffic log, off-policy estimates, no ground truth) is [`logged`].

pub mod arms;
pub mod dataset;
pub mod episodes;
pub mod error;
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
    let run = run::run(dataset, profile, &arms::standard_arms(), opener)?;
    let analysis = report::analyze(run, profile, profile.seed)?;
    let swept = match sweep {
        None => None,
        Some(sweep) => {
            let mut points = Vec::with_capacity(sweep.values.len());
            for &value in &sweep.values {
                let mut point = profile.clone();
                point.set_param(&sweep.parameter, value)?;
                let data = simulate::simulate(&point)?;
                let run = run::run(&data, &point, &arms::standard_arms(), opener)?;
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
    report::packet(&analysis, profile, source, swept.as_ref())
}

#[cfg(test)]
mod tests;
