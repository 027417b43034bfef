//! `operator-control`: reads `{reviewed_record, corpus, operator_checkpoint}` and prepares
//! an authorized edit or retirement ([`crate::contract::operator`]); it writes nothing.

use crate::cli::OperatorControlArgs;
use crate::contract::operator::{self, ControlRequest};
use crate::error::Error;
use crate::io;

use super::{Context, Outcome};

/// Runs `operator-control`: the control packet, exit 0.
pub fn run(args: &OperatorControlArgs, ctx: &Context) -> Result<Outcome, Error> {
    let source = io::read_input_object(&ctx.env, &args.input, args.input_limit.max_input_bytes)?;
    let request = ControlRequest {
        action: args.action.into(),
        control_ref: &args.control_ref,
        reasoning_summary: &args.reasoning_summary,
        edited_content_summary: args.edited_content_summary.as_deref(),
    };
    operator::control_input(&source, &request).map(Outcome::success)
}
