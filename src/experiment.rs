//! TODO(issue 3): experiment-status and registry route resolution.

use crate::Context;
use crate::cli::ExperimentStatusArgs;
use crate::error::Error;
use crate::json::Value;

/// Registry route failures.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("not implemented yet")]
    Pending,
}

/// Runs the subcommand.
pub fn command(_args: &ExperimentStatusArgs, _ctx: &Context) -> Result<Value, Error> {
    Err(ExperimentError::Pending.into())
}
