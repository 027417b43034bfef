//! The attribution runtime's pure rules (attribution RFC §5, §7, §8.2): the versioned
//! attribution profile and its evaluators, typed evidence items, the built-in
//! deterministic evaluator, the check of an external evaluator's proposal, the quota and
//! sample decisions, pending entries, and the `memory_utility_attribution_receipt_v0`
//! packet. Everything the receipt determines (scope ids from the receipt, application id,
//! artifact, outcome, snapshots, digests) is bound here from trusted facts, never taken
//! from an evaluator.
//!
//! No I/O: processes, files, the clock and the ledger stay with the shell
//! ([`crate::commands`], [`crate::io`]), which passes times, counts and outputs in.

/// True for an application receipt id: `rma_` and 64 lowercase hex digits.
pub fn is_receipt_id(text: &str) -> bool {
    text.strip_prefix("rma_")
        .is_some_and(|hex| crate::wire::text::is_hex_digest(hex, 64))
}

pub mod evidence;
pub mod facts;
pub mod judgment;
pub mod packet;
pub mod pending;
pub mod profile;
pub mod proposal;
pub mod schedule;

pub use evidence::EvidenceItem;
pub use facts::Facts;
pub use judgment::{Judgment, OutcomeStatus};
pub use packet::{AttributionReceipt, Status};
pub use pending::PendingEntry;
pub use profile::Profile;

/// Why an attribution request cannot run; each message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttributionError {
    #[error("attribution profile is invalid: {0}")]
    Profile(String),
    #[error("{0}")]
    Evidence(String),
    #[error("the application receipt is not valid: {0}")]
    Receipt(String),
    #[error("{0}")]
    Request(String),
    #[error("the observation could not be built: {0}")]
    Judgment(String),
}
