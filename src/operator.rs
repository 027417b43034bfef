//! TODO(issue 4): operator-control.

use crate::Context;
use crate::cli::OperatorControlArgs;
use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;

/// Runs the subcommand.
pub fn command(_args: &OperatorControlArgs, _ctx: &Context) -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}
