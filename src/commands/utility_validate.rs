//! `utility-validate`: reads one projection packet and runs the readback validator on it
//! ([`crate::utility::validate_input`]).

use crate::cli::InputArgs;
use crate::error::Error;
use crate::io;
use crate::utility;

use super::{Context, Outcome};

/// Runs `utility-validate`: the validation packet, exit 2 when the projection is invalid.
pub fn run(args: &InputArgs, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_input_object(&ctx.env, &args.input, args.input_limit.max_input_bytes)?;
    Ok(Outcome::by_ok(utility::validate_input(&input)))
}
