//! `evaluate`: runs the Stage-4 contract suite and release gate
//! ([`crate::contract::evaluation`]) with the process's monotonic clock.

use crate::cli::FormatArg;
use crate::contract::evaluation;
use crate::error::Error;
use crate::io;
use crate::wire::json::Value;

use super::{Context, Outcome};

/// `evaluate` takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateRequest {}

impl From<&FormatArg> for EvaluateRequest {
    fn from(_: &FormatArg) -> EvaluateRequest {
        EvaluateRequest {}
    }
}

/// Runs `evaluate`: the suite packet, exit 2 unless the gate is ready.
pub fn run(_: &EvaluateRequest, _: &Context) -> Result<Outcome, Error> {
    Ok(Outcome::by_ok(Value::Object(evaluation::run_evaluation(
        &io::monotonic_nanos,
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_an_empty_object() {
        let json: EvaluateRequest = serde_json::from_str("{}").expect("request");
        assert_eq!(json, EvaluateRequest::from(&FormatArg { format: None }));
    }
}
