//! `experiment-status`: resolves the Reward Memory experiment of one goal and registered
//! agent through the registry route ([`super::resolve::experiment`]) and prints its status
//! packet ([`crate::contract::experiment`]). It never contacts a provider.

use crate::cli::ExperimentStatusArgs;
use crate::error::Error;
use crate::wire::json::Value;

use super::{Context, Notes, Outcome, resolve};

/// Runs `experiment-status` on the context with its route applied; `--detail` names the
/// registry file.
pub fn run(args: &ExperimentStatusArgs, ctx: &Context) -> Result<Outcome, Error> {
    let notes = Notes {
        registry: Some(resolve::registry_path(ctx)),
        ..Notes::default()
    };
    resolve::experiment(ctx, &args.goal_id, &args.agent_id)
        .map(|r| Outcome::success(Value::Object(r.status)).with_notes(notes))
}
