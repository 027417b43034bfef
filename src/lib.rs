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
//!   clock, staging and the trust rule for our own files), [`runtime`] (the runtime
//!   root's recall sessions, application receipts and pending attributions), [`output`] (JSON or markdown
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
//! use nothing of the shell; [`error`] wraps their errors and is the one exit-code
//! mapping. No files import each other in a circle. A few imports still run from a lower
//! layer to a higher one, for reasons of the domain: [`recall`] uses the registry and
//! route types of [`contract`] and the [`ranking`] prior, [`ranking`] and [`ledger`] use
//! each other (the evaluation replays a ledger; the ledger builds the prior's utility
//! view), and [`utility`]'s observations are built from [`recall`]'s application receipts. `docs/architecture.md` states the rules, which
//! `tests/cli/layers.rs` checks against the source.

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
pub mod runtime;
pub mod schema;
pub mod utility;
pub mod wire;
