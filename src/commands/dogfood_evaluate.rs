//! `dogfood-evaluate`: reads `{observations, operator_controls}` and evaluates the Stage-5
//! dogfood batch ([`crate::contract::dogfood`]), running the Stage-4 gate once
//! ([`crate::contract::evaluation`]) with the process's monotonic clock.

use crate::cli::InputArgs;
use crate::contract::{dogfood, evaluation};
use crate::error::Error;
use crate::io;

use super::context::{Context, Outcome};
use super::resolve::InputFile;

/// The batch `dogfood-evaluate` reads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DogfoodEvaluateRequest {
    /// `{"observations", "operator_controls"}` JSON.
    pub input: InputFile,
}

impl From<&InputArgs> for DogfoodEvaluateRequest {
    fn from(args: &InputArgs) -> DogfoodEvaluateRequest {
        DogfoodEvaluateRequest {
            input: InputFile::from(args),
        }
    }
}

/// Runs `dogfood-evaluate`: builds every receipt, runs the Stage-4 suite once and
/// evaluates the batch (exit 2 unless ready).
pub fn run(request: &DogfoodEvaluateRequest, ctx: &Context) -> Result<Outcome, Error> {
    let source = request.input.read_object(ctx)?;
    let batch = dogfood::evaluate_input(&source, || {
        evaluation::gate_ready(&evaluation::run_evaluation(&io::monotonic_nanos))
    })?;
    Ok(Outcome::by_ok(batch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let Command::DogfoodEvaluate(args) =
            parse_command(&["dogfood-evaluate", "--input", "batch.json"])
        else {
            panic!("dogfood-evaluate");
        };
        let json: DogfoodEvaluateRequest =
            serde_json::from_str(r#"{"input": {"path": "batch.json"}}"#).expect("request");
        assert_eq!(DogfoodEvaluateRequest::from(&args), json);
        assert_eq!(json.input, InputFile::new("batch.json"));
    }
}
