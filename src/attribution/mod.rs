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

pub mod pending;

pub use pending::PendingEntry;

/// True for an application receipt id: `rma_` and 64 lowercase hex digits.
pub fn is_receipt_id(text: &str) -> bool {
    text.strip_prefix("rma_")
        .is_some_and(|hex| crate::wire::text::is_hex_digest(hex, 64))
}
