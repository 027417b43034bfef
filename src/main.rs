//! The `reward-memory` binary: parse the command line, run, exit with the mapped status.

use clap::Parser as _;

fn main() {
    let code = match reward_memory::cli::Cli::try_parse() {
        Ok(cli) => reward_memory::commands::run(cli, reward_memory::io::Env::capture()),
        Err(err) => reward_memory::commands::argument_error(&err),
    };
    std::process::exit(code);
}
