//! The process shell: one module per subcommand that reads its input, calls the contracts
//! and returns the packet.

pub mod rank_prior;
pub mod recall;
pub mod utility_ledger;
