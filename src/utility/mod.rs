//! TODO(issue 5): utility observation, reducer and readback validator.

use crate::cli::InputArgs;
use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;
use crate::{Context, Outcome};

/// `utility-project`.
pub fn project_command(_args: &InputArgs, _ctx: &Context) -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}

/// `utility-observe`.
pub fn observe_command(_args: &InputArgs, _ctx: &Context) -> Result<Outcome, Error> {
    Err(FieldError::new("not implemented yet").into())
}

/// `utility-validate`.
pub fn validate_command(_args: &InputArgs, _ctx: &Context) -> Result<Outcome, Error> {
    Err(FieldError::new("not implemented yet").into())
}
