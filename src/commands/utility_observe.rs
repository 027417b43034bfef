//! `utility-observe`: reads the five inputs of one observation and prints the built
//! `memory_utility_observation_v0` ([`crate::utility::observe_input`]).

use crate::cli::InputArgs;
use crate::error::Error;
use crate::io;
use crate::utility;

use super::context::{Context, Outcome};

/// What `utility-observe` is asked to read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
pub struct UtilityObserveRequest {
    /// The JSON input file; `-` reads standard input.
    pub input: String,
    /// Largest JSON input accepted, in bytes.
    pub max_input_bytes: u64,
}

impl From<&InputArgs> for UtilityObserveRequest {
    fn from(args: &InputArgs) -> UtilityObserveRequest {
        UtilityObserveRequest {
            input: args.input.clone(),
            max_input_bytes: args.input_limit.max_input_bytes,
        }
    }
}

/// Runs `utility-observe`: the observation, exit 0.
pub fn run(request: &UtilityObserveRequest, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_input_object(&ctx.env, &request.input, request.max_input_bytes)?;
    Ok(utility::observe_input(&input).map(Outcome::success)?)
}
