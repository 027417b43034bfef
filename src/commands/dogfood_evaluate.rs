//! `dogfood-evaluate`: reads `{observations, operator_controls}` and evaluates the Stage-5
//! dogfood batch ([`crate::contract::dogfood`]), running the Stage-4 gate once
//! ([`crate::contract::evaluation`]) with the process's monotonic clock.

use crate::cli::InputArgs;
use crate::contract::{dogfood, evaluation};
use crate::error::Error;
use crate::io;

use super::{Context, Outcome};

/// Runs `dogfood-evaluate`: builds every receipt, runs the Stage-4 suite once and
/// evaluates the batch (exit 2 unless ready).
pub fn run(args: &InputArgs, ctx: &Context) -> Result<Outcome, Error> {
    let source = io::read_input_object(&ctx.env, &args.input, args.input_limit.max_input_bytes)?;
    dogfood::evaluate_input(&source, || {
        evaluation::gate_ready(&evaluation::run_evaluation(&io::monotonic_nanos))
    })
    .map(Outcome::by_ok)
}
