//! `health-check`: classifies one built-in fixture case's retrieval health
//! ([`crate::contract::health`]).

use crate::cli::HealthCheckArgs;
use crate::contract::health;
use crate::error::Error;
use crate::wire::json::Value;

use super::Outcome;

/// Runs `health-check --case`: the health packet, exit 0.
pub fn run(args: &HealthCheckArgs) -> Result<Outcome, Error> {
    Ok(Outcome::success(Value::Object(health::fixture_packet(
        args.case,
    )?)))
}
