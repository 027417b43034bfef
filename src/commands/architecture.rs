//! `architecture`: prints the Stage-0 architecture contract
//! ([`crate::contract::architecture`]).

use crate::contract::architecture;
use crate::error::Error;

use super::context::{Context, NoArguments, Outcome};

/// Runs `architecture`: the packet, exit 0.
pub fn run(_: &NoArguments, _: &Context) -> Result<Outcome, Error> {
    Ok(Outcome::success(architecture::packet()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::FormatArg;

    #[test]
    fn a_command_without_arguments_takes_an_empty_object() {
        let json: NoArguments = serde_json::from_str("{}").expect("request");
        assert_eq!(json, NoArguments::from(&FormatArg { format: None }));
        assert!(serde_json::from_str::<NoArguments>(r#"{"format": "json"}"#).is_err());
    }
}
