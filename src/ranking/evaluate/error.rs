//! [`RankEvaluateError`]: what can go wrong in `rank-evaluate`, each message saying what
//! to fix.

use crate::ranking::prior::RankPriorError;

use super::rng::MAX_SEED;

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
    /// `--record` was asked for a verdict that is not recorded (a simulation).
    #[error("{0}")]
    Record(String),
    /// An internal invariant broke; please report it.
    #[error("rank-evaluate internal error: {0}")]
    Internal(&'static str),
}
