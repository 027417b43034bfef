//! `utility-observe`: reads the five inputs of one observation and prints the built
//! `memory_utility_observation_v0` ([`crate::utility::observe_input`]).

use crate::cli::InputArgs;
use crate::error::Error;
use crate::io;
use crate::utility;

use super::{Context, Outcome};

/// Runs `utility-observe`: the observation, exit 0.
pub fn run(args: &InputArgs, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_input_object(&ctx.env, &args.input, args.input_limit.max_input_bytes)?;
    Ok(utility::observe_input(&input).map(Outcome::success)?)
}
