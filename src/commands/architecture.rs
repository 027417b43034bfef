//! `architecture`: prints the Stage-0 architecture contract
//! ([`crate::contract::architecture`]).

use crate::contract::architecture;
use crate::error::Error;

use super::Outcome;

/// Runs `architecture`: the packet, exit 0.
pub fn run() -> Result<Outcome, Error> {
    Ok(Outcome::success(architecture::packet()))
}
