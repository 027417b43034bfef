//! `utility-validate`: reads one projection packet and runs the readback validator on it
//! ([`crate::ledger::validate::validate_input`]).

use crate::cli::InputArgs;
use crate::error::Error;
use crate::io;
use crate::ledger;

use super::context::{Context, Outcome};

/// What `utility-validate` is asked to read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
pub struct UtilityValidateRequest {
    /// The JSON input file; `-` reads standard input.
    pub input: String,
    /// Largest JSON input accepted, in bytes.
    pub max_input_bytes: u64,
}

impl From<&InputArgs> for UtilityValidateRequest {
    fn from(args: &InputArgs) -> UtilityValidateRequest {
        UtilityValidateRequest {
            input: args.input.clone(),
            max_input_bytes: args.input_limit.max_input_bytes,
        }
    }
}

/// Runs `utility-validate`: the validation packet, exit 2 when the projection is invalid.
pub fn run(request: &UtilityValidateRequest, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_input_object(&ctx.env, &request.input, request.max_input_bytes)?;
    Ok(Outcome::by_ok(ledger::validate::validate_input(&input)))
}
