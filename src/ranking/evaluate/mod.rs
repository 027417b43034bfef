//! `rank-evaluate`: the held-out ranking evaluation of attribution RFC §9 Stage 4 and §10.
//! Does bounded utility earn its influence on ranking?
//!
//! Five arms rank the same semantic pool of every held-out episode (see [`arms`]); their
//! nDCG@k, success@1, harmful@k, task cost and false attenuation are measured against
//! hidden ground truth with a seeded, paired bootstrap ([`metrics`]); every ranking is
//! checked for scope leaks; evaluator disagreement is measured on the ledger. The verdict
//! packet `memory_utility_ranking_evaluation_v0` ([`report`]) binds the rank-prior
//! profile's `murp_` digest, so `recall --rank-prior --evaluation` can require a
//! `qualified` verdict for exactly the profile it applies.
//!
//! Episodes come from `--input EPISODES.jsonl` ([`episodes`]) or from the deterministic
//! simulator ([`simulate`]), which goes through the product: application receipts from
//! [`crate::recall::apply_recall`], observations from `utility-observe`'s builder, the
//! ledger seam ([`ledger`]) over the reducer, and the real rank prior. This module owns
//! the command entry point; everything below it is pure. Design and every parameter:
//! `docs/rank-evaluate.md`.

pub mod arms;
pub mod dataset;
pub mod episodes;
pub mod ledger;
pub mod metrics;
pub mod plot;
pub mod profile;
pub mod report;
pub mod rng;
pub mod run;
pub mod simulate;

use crate::cli::RankEvaluateArgs;
use crate::error::Error;
use crate::ranking::prior::RankPriorError;
use crate::wire::json::Value;
use crate::{Context, Outcome, io};

use ledger::{LedgerOpener, SqliteOpener};
use profile::{EvaluationProfile, MAX_SEED, Sweep, parse_sweep};
use report::{Source, SweepPoint, SweepResult};

/// What went wrong in `rank-evaluate`; each message says what to fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RankEvaluateError {
    /// The evaluation profile is invalid.
    #[error("{0}")]
    Profile(String),
    /// `--sweep` is invalid.
    #[error("{0}")]
    Sweep(String),
    /// `--seed` is out of range.
    #[error("--seed must be an integer between 0 and {MAX_SEED}")]
    Seed,
    /// `EPISODES.jsonl` has malformed lines (listed with their numbers).
    #[error("{0}")]
    Episodes(String),
    /// The simulator could not build a product object (a bug in the simulator or a
    /// contract change it does not follow).
    #[error("{0}")]
    Simulator(String),
    /// The evaluation's utility ledger failed.
    #[error("rank-evaluate ledger: {0}")]
    Ledger(String),
    /// The rank prior refused a candidate list or partition.
    #[error(transparent)]
    RankPrior(#[from] RankPriorError),
    /// The chart could not be drawn.
    #[error("cannot draw the plot: {0}")]
    Plot(String),
    /// The chart could not be written.
    #[error("cannot write the plot {path}: {reason}")]
    PlotWrite { path: String, reason: String },
    /// An internal invariant broke; please report it.
    #[error("rank-evaluate internal error: {0}")]
    Internal(&'static str),
}

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

/// `rank-evaluate`: reads the profile and the episodes (or simulates them), evaluates,
/// optionally writes the chart, and prints the verdict (exit 0 `qualified`, 2 `hold`).
pub fn command(args: &RankEvaluateArgs, ctx: &Context) -> Result<Outcome, Error> {
    if !args.simulate && (args.episodes.is_some() || args.sweep.is_some()) {
        return Err(RankEvaluateError::Sweep(
            "--episodes and --sweep change the simulator: use them with --simulate".to_owned(),
        )
        .into());
    }
    let mut profile = match &args.profile {
        Some(path) => EvaluationProfile::from_value(&io::read_input_object(
            &ctx.env,
            path,
            args.input_limit.max_input_bytes,
        )?)?,
        None => EvaluationProfile::defaults(),
    };
    if let Some(seed) = args.seed {
        if seed > MAX_SEED {
            return Err(RankEvaluateError::Seed.into());
        }
        profile.seed = seed;
    }
    if let Some(episodes) = args.episodes {
        profile
            .set_param("training_episodes", episodes as f64)
            .map_err(|_| {
                RankEvaluateError::Profile(
                    "--episodes must be an integer between 1 and 1000000".to_owned(),
                )
            })?;
    }
    let sweep = args.sweep.as_deref().map(parse_sweep).transpose()?;
    let (dataset, source) = match (&args.input, args.simulate) {
        (Some(input), false) => {
            let bytes = io::read_bytes(&ctx.env, input, args.input_limit.max_input_bytes)?;
            let parsed = episodes::parse(&bytes)?;
            let source = Source::Episodes {
                input_sha256: sha256_hex_bytes(&bytes),
                observation_lines: parsed.observation_lines,
            };
            (parsed.dataset, source)
        }
        _ => (
            simulate::simulate(&profile)?,
            Source::Simulation { seed: profile.seed },
        ),
    };
    // The ledgers are SQLite files in a private temporary directory, removed on return.
    let dir = io::private_temp_dir("reward-memory-rank-evaluate-").map_err(|e| {
        RankEvaluateError::Ledger(format!("cannot create a temporary directory: {e}"))
    })?;
    let opener = SqliteOpener::new(dir.path().to_path_buf());
    let packet = evaluate(&dataset, &profile, &source, sweep.as_ref(), &opener)?;
    if let Some(path) = &args.plot {
        let svg = plot::render(&packet)?;
        io::write_file(path, svg.as_bytes()).map_err(|e| RankEvaluateError::PlotWrite {
            path: path.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(Outcome::by_ok(packet))
}

/// Lowercase hex SHA-256 of the raw input bytes (the file may not be UTF-8).
fn sha256_hex_bytes(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests;
