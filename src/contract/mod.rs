//! The LoopX Reward Memory Stage 0–5 contracts: memory classes ([`architecture`]), the
//! corpus registry ([`registry`]), corpus health ([`health`]), candidate review
//! ([`candidate`]), the route check ([`route`]), the experiment route ([`experiment`]),
//! event ingest ([`ingest`]), the Stage-4 suite ([`evaluation`]), dogfood evaluation
//! ([`dogfood`]) and operator controls ([`operator`]).
//!
//! Typed in, typed out: each contract validates its input and builds its packet.
//! Reading files and the clock is the callers' business, with the exceptions their own
//! docs name.

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
