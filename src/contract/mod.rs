//! The LoopX Reward Memory Stage 0–5 contracts: memory classes ([`architecture`]), the
//! corpus registry ([`registry`]), corpus health ([`health`]), candidate review
//! ([`candidate`]), the route check ([`route`]), the experiment route ([`experiment`]),
//! event ingest ([`ingest`]), the Stage-4 suite ([`evaluation`]), dogfood evaluation
//! ([`dogfood`]) and operator controls ([`operator`]).
//!
//! Typed in, typed out: each contract validates its input and builds its packet. None
//! reads a file, the environment or the clock: the parsed registry and the config reader
//! (`experiment`), the monotonic clock (`evaluation`) and, for an executed ingest, the
//! provider ([`crate::provider::ContextProvider`]) are handed in by the shell.
//!
//! Each contract declares its own domain enums (fixture cases, decisions, actions) as
//! [`crate::wire::choice`] sets, which the command line parses, and its own error enum
//! (`HealthError`, `CandidateError`, `RouteError`, `RegistryError`, `ExperimentError`,
//! `IngestError`, `DogfoodError`, `OperatorError`, `EvaluationError`), returned by the
//! functions the shell calls; [`crate::error::Error`] wraps them. The field validators
//! that several contracts and the recall seam share (one corpus, a standing policy, a
//! candidate, a review, an operator receipt) return the wire layer's
//! [`crate::wire::text::FieldError`], which every contract error wraps. No contract
//! knows the shell: nothing here uses `cli`, `commands`, `error` or `io` (the layering test
//! `tests/cli/layers.rs` holds every folder to its rule).

pub mod architecture;
pub mod candidate;
pub mod correction;
pub mod dogfood;
pub mod evaluation;
pub mod experiment;
pub mod health;
pub mod ingest;
pub mod lifecycle;
pub mod operator;
pub mod registry;
pub mod route;
