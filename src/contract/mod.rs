//! The LoopX Reward Memory Stage 0–5 contracts: memory classes ([`architecture`]), the
//! corpus registry ([`registry`]), corpus health ([`health`]), candidate review
//! ([`candidate`]), the route check ([`route`]), the experiment route ([`experiment`]),
//! event ingest ([`ingest`]), the Stage-4 suite ([`evaluation`]), dogfood evaluation
//! ([`dogfood`]) and operator controls ([`operator`]).
//!
//! Typed in, typed out: each contract validates its input and builds its packet. None
//! reads a file, the environment or the clock: the registry's bytes and the config reader
//! (`experiment`), the monotonic clock (`evaluation`) and, for an executed ingest, the
//! provider ([`crate::provider::ContextProvider`]) are handed in by the shell. Some
//! still take their domain enums from the clap types of `cli.rs` and return
//! [`crate::error::Error`].

pub mod architecture;
pub mod candidate;
pub mod dogfood;
pub mod evaluation;
pub mod experiment;
pub mod health;
pub mod ingest;
pub mod operator;
pub mod registry;
pub mod route;
