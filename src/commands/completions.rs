//! `completions SHELL`: the shell completion script of the whole command line
//! ([`crate::cli::completion_script`]).

use crate::cli::{self, CompletionsArgs};
use crate::error::Error;

/// The shell `completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionsRequest {
    pub shell: clap_complete::Shell,
}

impl From<&CompletionsArgs> for CompletionsRequest {
    fn from(args: &CompletionsArgs) -> CompletionsRequest {
        CompletionsRequest { shell: args.shell }
    }
}

/// Runs `completions`: the script's text.
pub fn run(request: &CompletionsRequest) -> Result<Vec<u8>, Error> {
    Ok(cli::completion_script(request.shell))
}
