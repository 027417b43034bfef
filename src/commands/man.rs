//! `man [SUBCOMMAND]`: the roff man page of `reward-memory` or of one subcommand
//! ([`crate::cli::man_page`]).

use crate::cli::{self, ManArgs};
use crate::error::Error;

/// Runs `man`: the page's text.
pub fn run(args: &ManArgs) -> Result<Vec<u8>, Error> {
    cli::man_page(args.subcommand.as_deref()).map_err(Error::Output)
}
