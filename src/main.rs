//! The `reward-memory` binary: parse the command line, run, exit with the mapped status.

use clap::Parser as _;

fn main() {
    let cli = match reward_memory::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version: print to stdout, exit 0.
            let _ = err.print();
            std::process::exit(0);
        }
        Err(err) => {
            reward_memory::io::write_stderr_line(&reward_memory::cli::argument_error_line(&err));
            std::process::exit(2);
        }
    };
    let code = reward_memory::commands::run(cli, reward_memory::io::Env::capture());
    std::process::exit(code);
}
