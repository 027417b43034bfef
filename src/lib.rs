//! `reward-memory`: the LoopX Reward Memory contracts as one Rust binary.
//!
//! The binary prints packets that are byte-compatible with `loopx reward-memory`. This
//! crate root only lists the modules; `main.rs` parses the command line with [`cli`] and
//! hands it to [`commands::run`].
//!
//! The layers, folder by folder, top to bottom:
//! * the process shell: [`cli`] (the clap types and what is derived from them alone),
//!   [`commands`] (one handler per subcommand, the resolve step, the `Context` and
//!   `Outcome` of a run, dispatch), [`io`] (files, standard streams, the environment, the
//!   clock, staging and the trust rule for our own files), [`output`] (JSON or markdown
//!   rendering of a packet) and [`error`] (the top-level error and the one exit-code
//!   mapping);
//! * the Stage 0–5 contracts, [`contract`]: typed input, packets out;
//! * the attribution loop: [`recall`] (the Stage-3 recall/application seam), [`utility`]
//!   (observations, the reducer and its projection, the readback validator), [`ledger`]
//!   (the durable utility ledger, SQLite or PostgreSQL), [`ranking`] (the bounded rank
//!   prior and its held-out evaluation), and [`provider`] (the memory providers behind
//!   the context-provider trait, edge adapters that touch files and processes);
//!   [`schema`] describes the packets as JSON Schemas;
//! * the wire layer, [`wire`]: Python-compatible JSON, float formatting, timestamps,
//!   digests and text guards; it uses nothing above it.
//!
//! The contracts and the attribution loop declare their own domain enums and errors and
//! use nothing of the shell; [`error`] wraps their errors. Not every arrow points down
//! yet: [`io`] carries the ledger's PostgreSQL settings; [`contract`] and [`recall`] use
//! each other, as do [`utility`], [`ledger`] and [`ranking`].

pub mod attribution;
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
