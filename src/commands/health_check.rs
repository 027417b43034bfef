//! `health-check`: classifies one built-in fixture case's retrieval health
//! ([`crate::contract::health`]).

use crate::cli::HealthCheckArgs;
use crate::contract::health::{self, HealthCase};
use crate::error::Error;
use crate::wire::json::Value;

use super::context::{Context, Outcome};

/// What `health-check` classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthCheckRequest {
    /// The fixture case.
    pub case: HealthCase,
}

impl From<&HealthCheckArgs> for HealthCheckRequest {
    fn from(args: &HealthCheckArgs) -> HealthCheckRequest {
        HealthCheckRequest { case: args.case }
    }
}

/// Runs `health-check`: the health packet, exit 0.
pub fn run(request: &HealthCheckRequest, _: &Context) -> Result<Outcome, Error> {
    let packet = health::fixture_packet(request.case)?;
    Ok(Outcome::success(Value::Object(packet)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let Command::HealthCheck(args) =
            parse_command(&["health-check", "--case", "wrong-surface"])
        else {
            panic!("health-check");
        };
        let json: HealthCheckRequest =
            serde_json::from_str(r#"{"case": "wrong-surface"}"#).expect("request");
        assert_eq!(HealthCheckRequest::from(&args), json);
        assert_eq!(json.case, HealthCase::WrongSurface);
        assert!(
            serde_json::from_str::<HealthCheckRequest>(r#"{"case": "wrong_surface"}"#).is_err()
        );
        assert!(
            serde_json::from_str::<HealthCheckRequest>(r#"{"case": "stale", "x": 1}"#).is_err()
        );
    }
}
