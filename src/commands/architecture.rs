//! `architecture`: prints the Stage-0 architecture contract
//! ([`crate::contract::architecture`]).

use crate::cli::FormatArg;
use crate::contract::architecture;
use crate::error::Error;

use super::{Context, Outcome};

/// `architecture` takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureRequest {}

impl From<&FormatArg> for ArchitectureRequest {
    fn from(_: &FormatArg) -> ArchitectureRequest {
        ArchitectureRequest {}
    }
}

/// Runs `architecture`: the packet, exit 0.
pub fn run(_: &ArchitectureRequest, _: &Context) -> Result<Outcome, Error> {
    Ok(Outcome::success(architecture::packet()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_an_empty_object() {
        let json: ArchitectureRequest = serde_json::from_str("{}").expect("request");
        assert_eq!(json, ArchitectureRequest::from(&FormatArg { format: None }));
        assert!(serde_json::from_str::<ArchitectureRequest>(r#"{"format": "json"}"#).is_err());
    }
}
