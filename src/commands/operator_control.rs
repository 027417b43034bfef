//! `operator-control`: reads `{reviewed_record, corpus, operator_checkpoint}` and prepares
//! an authorized edit or retirement ([`crate::contract::operator`]); it writes nothing.

use crate::cli::OperatorControlArgs;
use crate::contract::operator::{self, ControlRequest, OperatorAction};
use crate::error::Error;

use super::context::{Context, Outcome};
use super::resolve::InputFile;

/// The control `operator-control` prepares, and the file with the record it targets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorControlRequest {
    /// `{"reviewed_record", "corpus", "operator_checkpoint"}` JSON.
    pub input: InputFile,
    pub action: OperatorAction,
    /// Public-safe reference of this control.
    pub control_ref: String,
    /// Compact reason for the control.
    pub reasoning_summary: String,
    /// Replacement content summary (an edit needs it).
    #[serde(default)]
    pub edited_content_summary: Option<String>,
}

impl From<&OperatorControlArgs> for OperatorControlRequest {
    fn from(args: &OperatorControlArgs) -> OperatorControlRequest {
        OperatorControlRequest {
            input: InputFile {
                path: args.input.clone(),
                max_bytes: args.input_limit.max_input_bytes,
            },
            action: args.action,
            control_ref: args.control_ref.clone(),
            reasoning_summary: args.reasoning_summary.clone(),
            edited_content_summary: args.edited_content_summary.clone(),
        }
    }
}

/// Runs `operator-control`: the control packet, exit 0.
pub fn run(request: &OperatorControlRequest, ctx: &Context) -> Result<Outcome, Error> {
    let source = request.input.read_object(ctx)?;
    let control = ControlRequest {
        action: request.action,
        control_ref: &request.control_ref,
        reasoning_summary: &request.reasoning_summary,
        edited_content_summary: request.edited_content_summary.as_deref(),
    };
    Ok(Outcome::success(operator::control_input(
        &source, &control,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let argv = [
            "operator-control",
            "--input",
            "control.json",
            "--action",
            "retire",
            "--control-ref",
            "control:1",
            "--reasoning-summary",
            "Outdated.",
        ];
        let Command::OperatorControl(args) = parse_command(&argv) else {
            panic!("operator-control");
        };
        let json: OperatorControlRequest = serde_json::from_str(
            r#"{"input": {"path": "control.json"}, "action": "retire",
                "control_ref": "control:1", "reasoning_summary": "Outdated."}"#,
        )
        .expect("request");
        assert_eq!(OperatorControlRequest::from(&args), json);
        assert_eq!(json.action, OperatorAction::Retire);
    }
}
