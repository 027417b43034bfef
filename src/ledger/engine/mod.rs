//! The ledger's operations over any [`super::LedgerBackend`]: append (classify deliveries,
//! maintain aggregates, recompute touched subjects with the reducer), project, subject
//! look-up, export and verify.
//!
//! Owns the incremental maintenance rules, never the utility rules: a touched subject is
//! always recomputed from all of its accepted observations, taken in `observation_id`
//! order, by [`crate::utility::reducer::reduce_subject`]; within the v0 caps a projection
//! is literally [`crate::utility::reducer::reduce`] over the partition's deliveries.
//! Memory stays bounded: deliveries are processed in chunks and touched subjects are
//! flushed in groups.
//!
//! One file per concern: `append.rs` drives a batch (the reading and validating threads,
//! the write transaction) over `intake.rs` (records validated into deliveries) and
//! `aggregate.rs` (classification, aggregates, touched subjects, taken a window of a
//! `run.rs` at a time); `state.rs` is a subject
//! as stored; `read.rs` projects and looks up, `export.rs` writes deliveries out (and
//! salvages a damaged file), `review.rs` lists the open review proposals, `verify.rs`
//! recomputes everything and compares. What they report is typed beside the packets ([`super::packets`]).

mod aggregate;
mod append;
mod export;
mod intake;
mod read;
pub mod review;
mod run;
mod state;
mod verify;

pub use append::{Records, append, append_with};
pub use export::{COMPACT, DELIVERY_SCHEMA_VERSION, export, salvage};
pub use intake::{NOT_PUBLIC_SAFE, Record, prepare_delivery};
pub use read::{
    Paging, Projected, SubjectLookup, project, rules_of, subjects, v0_projection, within_v0_caps,
};
pub use state::{
    decode_state, encode_state, member_of_delivery, reduce_members, reduce_members_v1,
    reduce_stored_subject, subject_level, upgrade_stored_v1, upgrade_stored_v1_inputs,
};
pub use verify::verify;
