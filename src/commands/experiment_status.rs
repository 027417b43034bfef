//! `experiment-status`: resolves the Reward Memory experiment of one goal and registered
//! agent through the registry route ([`super::resolve::experiment`]) and prints its status
//! packet ([`crate::contract::experiment`]). It never contacts a provider.

use crate::cli::ExperimentStatusArgs;
use crate::error::Error;
use crate::wire::json::Value;

use super::context::{Context, Outcome};
use super::resolve;
use crate::output::notes::Notes;

/// The goal and agent whose experiment `experiment-status` resolves (through the
/// registry route of the context).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentStatusRequest {
    /// Goal id in the registry.
    pub goal_id: String,
    /// Registered agent id of that goal.
    pub agent_id: String,
}

impl From<&ExperimentStatusArgs> for ExperimentStatusRequest {
    fn from(args: &ExperimentStatusArgs) -> ExperimentStatusRequest {
        ExperimentStatusRequest {
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
        }
    }
}

/// Runs `experiment-status` on the context with its route applied; `--detail` names the
/// registry file.
pub fn run(request: &ExperimentStatusRequest, ctx: &Context) -> Result<Outcome, Error> {
    let notes = Notes {
        registry: Some(resolve::registry_path(ctx)),
        ..Notes::default()
    };
    let resolution = resolve::experiment(ctx, &request.goal_id, &request.agent_id)?;
    // The packet stays the reference's; stderr names the file and what is wrong in it.
    let notes = Notes {
        warnings: resolution.problem.into_iter().collect(),
        ..notes
    };
    Ok(Outcome::success(Value::Object(resolution.status)).with_notes(notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let argv = [
            "experiment-status",
            "--goal-id",
            "g1",
            "--agent-id",
            "pilot",
        ];
        let Command::ExperimentStatus(args) = parse_command(&argv) else {
            panic!("experiment-status");
        };
        let json: ExperimentStatusRequest =
            serde_json::from_str(r#"{"goal_id": "g1", "agent_id": "pilot"}"#).expect("request");
        assert_eq!(ExperimentStatusRequest::from(&args), json);
    }
}
