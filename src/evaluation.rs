//! TODO(issue 4): the Stage-4 evaluation harness.

use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;

/// Runs the subcommand.
pub fn command() -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}
