//! `corpus-registry`: prints the Stage-1 reference corpus registry
//! ([`crate::contract::registry`]).

use crate::contract::registry;
use crate::error::Error;

use super::context::{Context, NoArguments, Outcome};

/// Runs `corpus-registry`: the packet, exit 0.
pub fn run(_: &NoArguments, _: &Context) -> Result<Outcome, Error> {
    Ok(Outcome::success(registry::reference_registry_packet()))
}
