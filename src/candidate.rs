//! TODO(issue 2): not built yet.

use crate::cli::CandidateReviewArgs;
use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;

/// Runs the subcommand.
pub fn command(_args: &CandidateReviewArgs) -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}
