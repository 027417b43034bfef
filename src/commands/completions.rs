//! `completions SHELL`: the shell completion script of the whole command line
//! ([`crate::cli::completion_script`]).

use crate::cli::{self, CompletionsArgs};
use crate::error::Error;

/// Runs `completions`: the script's text.
pub fn run(args: &CompletionsArgs) -> Result<Vec<u8>, Error> {
    Ok(cli::completion_script(args.shell))
}
