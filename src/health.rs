//! TODO(issue 2): not built yet.

use crate::cli::HealthCheckArgs;
use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;

/// Runs the subcommand.
pub fn command(_args: &HealthCheckArgs) -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}
