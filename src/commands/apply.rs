//! `apply`: records the agent's decision about an earlier recall (§10.5) as an
//! application receipt. The decision comes from the flags or from `--input`
//! ([`crate::recall::decision`]); the opaque refs are mapped back through the recall
//! session that `recall` stored under the runtime root, read back and checked by
//! [`super::recall`]'s session store. A ref the recall did not return, an unknown,
//! expired, untrusted or modified session are request errors.

use crate::cli::ApplyArgs;
use crate::error::Error;
use crate::io;
use crate::recall::decision::{self, ApplyError, Decision};

use super::{Context, Outcome};

fn decision_from_flags(args: &ApplyArgs) -> Result<Decision, ApplyError> {
    let missing = ApplyError::MissingFlag;
    Ok(Decision {
        session_ref: args
            .recall_session
            .clone()
            .ok_or_else(|| missing("--recall-session"))?,
        application_id: args
            .application_id
            .clone()
            .ok_or_else(|| missing("--application-id"))?,
        artifact_ref: args
            .artifact_ref
            .clone()
            .ok_or_else(|| missing("--artifact-ref"))?,
        outcome: args.outcome.ok_or_else(|| missing("--outcome"))?,
        memory_refs: args.memory_ref.clone(),
        reasoning_summary: args
            .reasoning_summary
            .clone()
            .ok_or_else(|| missing("--reasoning-summary"))?,
        current_artifact_verified: args.current_artifact_verified,
    })
}

/// Runs `apply` on the context with its route applied: the application packet, exit 0.
pub fn run(args: &ApplyArgs, ctx: &Context) -> Result<Outcome, Error> {
    let decision = match &args.input {
        Some(spec) => decision::decision_from_value(&io::read_input_object(
            &ctx.env,
            spec,
            args.input_limit.max_input_bytes,
        )?)?,
        None => decision_from_flags(args)?,
    };
    let summary = decision::check_decision(&decision)?;
    let stored = super::recall::load_session(&decision.session_ref, ctx)?;
    Ok(decision::application(&decision, &summary, &stored).map(Outcome::success)?)
}
