//! `ingest-event`: one compact, already-distilled feedback event becomes a guarded memory
//! write (§9): candidate → standing-policy guard → accept review → active record →
//! (with `--execute`) provider sync → exact readback. Dry run by default.
//!
//! [`policy`], [`core`] and [`adapters`] are pure; this module names the two input forms.
//! The flow of the subcommand and its validation order (§9.2) are the `ingest-event`
//! handler's, in the shell: it reads `--input` and the registry/config and, for
//! an executed write, clears staging directories that killed runs left under the runtime
//! root, then makes the provider calls (which get the record's bytes directly; see
//! [`crate::provider::SyncSource`]).

pub mod adapters;
pub mod core;
pub mod policy;

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
