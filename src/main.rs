//! The `reward-memory` binary: parse the command line, run, exit with the mapped status.

use clap::Parser as _;

/// mimalloc (v2, without transparent huge pages) instead of glibc's malloc: a ledger
/// append allocates and frees millions of small values across two threads, where glibc's
/// malloc took a quarter of the time (1,000,000 deliveries: 22.1 s before, 16.0 s with
/// it). Without huge pages its start-up costs about 0.1 ms (a huge page to zero cost 0.3).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = match reward_memory::cli::Cli::try_parse() {
        Ok(cli) => reward_memory::commands::run(cli, reward_memory::io::Env::capture()),
        Err(err) => reward_memory::commands::argument_error(&err),
    };
    std::process::exit(code);
}
