//! `evaluate`: runs the Stage-4 contract suite and release gate
//! ([`crate::contract::evaluation`]) with the process's monotonic clock.

use crate::contract::evaluation;
use crate::error::Error;
use crate::io;
use crate::wire::json::Value;

use super::context::{Context, NoArguments, Outcome};

/// Runs `evaluate`: the suite packet, exit 2 unless the gate is ready.
pub fn run(_: &NoArguments, _: &Context) -> Result<Outcome, Error> {
    Ok(Outcome::by_ok(Value::Object(evaluation::run_evaluation(
        &io::monotonic_nanos,
    ))))
}
