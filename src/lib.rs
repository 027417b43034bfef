//! `reward-memory`: the LoopX Reward Memory contracts as one Rust binary.
//!
//! The binary prints packets that are byte-compatible with `loopx reward-memory`. This
//! crate root only lists the modules; `main.rs` parses the command line with [`cli`] and
//! hands it to [`commands::run`].

pub mod cli;
pub mod commands;
pub mod contract;
pub mod error;
pub mod io;
pub mod ledger;
pub mod output;
pub mod provider;
pub mod ranking;
pub mod recall;
pub mod schema;
pub mod utility;
pub mod wire;
