//! TODO(issue 4): dogfood-evaluate.

use crate::Context;
use crate::cli::InputArgs;
use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;

/// Runs the subcommand.
pub fn command(_args: &InputArgs, _ctx: &Context) -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}
