//! `man [SUBCOMMAND]`: the roff man page of `reward-memory` or of one subcommand
//! ([`crate::cli::man_page`]).

use crate::cli::{self, ManArgs};
use crate::error::Error;

/// Whose page `man` prints: one subcommand's, or (`None`) the binary's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManRequest {
    pub subcommand: Option<String>,
}

impl From<&ManArgs> for ManRequest {
    fn from(args: &ManArgs) -> ManRequest {
        ManRequest {
            subcommand: args.subcommand.clone(),
        }
    }
}

/// Runs `man`: the page's text.
pub fn run(request: &ManRequest) -> Result<Vec<u8>, Error> {
    cli::man_page(request.subcommand.as_deref()).map_err(Error::Output)
}
