//! `corpus-registry`: prints the Stage-1 reference corpus registry
//! ([`crate::contract::registry`]).

use crate::cli::FormatArg;
use crate::contract::registry;
use crate::error::Error;

use super::{Context, Outcome};

/// `corpus-registry` takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorpusRegistryRequest {}

impl From<&FormatArg> for CorpusRegistryRequest {
    fn from(_: &FormatArg) -> CorpusRegistryRequest {
        CorpusRegistryRequest {}
    }
}

/// Runs `corpus-registry`: the packet, exit 0.
pub fn run(_: &CorpusRegistryRequest, _: &Context) -> Result<Outcome, Error> {
    Ok(Outcome::success(registry::reference_registry_packet()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_an_empty_object() {
        let json: CorpusRegistryRequest = serde_json::from_str("{}").expect("request");
        assert_eq!(
            json,
            CorpusRegistryRequest::from(&FormatArg { format: None })
        );
    }
}
