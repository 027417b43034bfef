//! TODO(issue 3): ingest-event.

pub mod policy;

use crate::Context;
use crate::cli::IngestEventArgs;
use crate::error::Error;
use crate::json::Value;
use crate::text::FieldError;

/// Runs the subcommand.
pub fn command(_args: &IngestEventArgs, _ctx: &Context) -> Result<Value, Error> {
    Err(FieldError::new("not implemented yet").into())
}
