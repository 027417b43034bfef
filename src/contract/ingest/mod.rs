//! `ingest-event`: one compact, already-distilled feedback event becomes a guarded memory
//! write (§9): candidate → standing-policy guard → accept review → active record →
//! (with `--execute`) provider sync → exact readback. Dry run by default.
//!
//! All of it is pure: [`request`] is the validation order of one request (§9.2) over the
//! parsed input, the experiment resolution and the time; [`policy`], [`core`] and
//! [`adapters`] are the steps it runs. The `ingest-event` handler of the shell reads
//! `--input` and the registry/config and, for an executed write, clears staging
//! directories that killed runs left under the runtime root and builds the provider,
//! which gets the record's bytes directly (see [`crate::provider::SyncSource`]).

pub mod adapters;
pub mod core;
pub mod policy;
pub mod request;

use crate::contract::experiment::ExperimentError;
use crate::recall::RecallError;
use crate::wire::text::FieldError;

pub use adapters::Staged;
pub use request::{Form, Plan, form, ingest, plan, plan_with, stage};

/// The fields of the full form's input (no route: the input carries its own corpus,
/// standing policy and provider binding).
pub const FULL_FORM_FIELDS: &[&str] = &[
    "adapter",
    "event",
    "corpus",
    "standing_policy",
    "provider_binding",
    "observed_at",
];
/// The fields of the configured form's input (`--goal-id`/`--agent-id`: the route comes
/// from the experiment config).
pub const CONFIGURED_FORM_FIELDS: &[&str] = &["adapter", "event", "observed_at"];

/// Why an ingest request was refused. The messages are the reference's.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Only one of the goal id and the agent id was given.
    #[error("--goal-id and --agent-id must be supplied together")]
    UnpairedRoute,
    /// An executed write was asked for without an experiment route.
    #[error("--execute requires an enabled experiment route via --goal-id and --agent-id")]
    ExecuteWithoutRoute,
    /// The input has keys its form does not take (listed as [`crate::wire::keys::list`]
    /// shows them).
    #[error("ingest input contains unsupported fields: {0}")]
    UnsupportedFields(String),
    /// The experiment route is not available to the agent; the status says why.
    #[error("Reward Memory experiment is unavailable for this agent: {0}")]
    ExperimentUnavailable(String),
    /// `event`, `corpus`, `standing_policy` or `provider_binding` is not an object.
    #[error("{0} must be an object")]
    NotAnObject(&'static str),
    /// The adapter is neither of the two (§9.3, §9.4).
    #[error("adapter is unsupported; semantic routing is intentionally not inferred")]
    UnsupportedAdapter,
    /// A field of the event, the corpus, the policy or the binding is invalid.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The surface route of the experiment config could not be selected.
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    /// The readback recall of an executed write could not run.
    #[error(transparent)]
    Recall(#[from] RecallError),
}
