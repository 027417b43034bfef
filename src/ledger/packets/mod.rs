//! The packets of the `utility-ledger` commands, one typed model each: the append receipt
//! ([`AppendReceipt`]), the paged ledger projection ([`LedgerProjectionPacket`]), the
//! subject look-up ([`LedgerSubjectPacket`]) and the verify report
//! ([`LedgerVerifyPacket`]), with the reports the engine fills them from.
//!
//! Each packet is a serde struct whose field order is the key order: [`to_value`] turns it
//! into the ordered value the output layer prints, and the same type derives the JSON
//! Schema that [`crate::schema`] commits. What these packets embed of the LoopX projection
//! contract (the reducer's 19-key subject, history entries, conflict records, review
//! proposals) keeps the reducer's bytes: it is held as the values the reducer's typed
//! printer makes, and described by LoopX's schema types where [`crate::schema`]
//! instantiates the packets. The export lines are LoopX's `memory_utility_observation_v0`
//! packets, printed from the observation. The markdown views ([`crate::output`]) and the
//! projection's readback ([`super::validate`], which also checks packets given to
//! `utility-validate`) read the printed value, as they do every packet; a test holds the
//! readback's key list to the typed packet's. Pure: every value comes in as an argument.

mod append;
mod base;
mod correction;
mod export;
mod projection;
mod review;
mod verify;

pub use append::{AppendReceipt, AppendReport, AppendStatus, Refusal, append_status};
pub use base::{
    AppendVersion, LedgerProjectionV1Version, LedgerProjectionVersion, LedgerReducerVersion,
    LedgerSubjectV1Version, LedgerSubjectVersion, LedgerVerifyVersion, PacketVersion,
    ledger_identity, to_value,
};
pub use correction::{CorrectionReceipt, CorrectionStatus};
pub use export::{SALVAGE_RANGES, SalvageReport, salvage_summary};
pub use projection::{
    LedgerProjectionPacket, LedgerProjectionPacketV1, LedgerProjectionStatus, LedgerSubjectPacket,
    LedgerSubjectPacketV1, Page, StoredSubject, SubjectStatus, SubjectWithHistory,
};
pub use review::{LedgerReviewPacket, MAX_REVIEW_PROPOSALS};
pub use verify::{LedgerVerifyPacket, VerifyReport, VerifyStatus};

/// Schema version of the paged projection printed beyond the v0 caps.
pub const PROJECTION_SCHEMA_VERSION: &str = LedgerProjectionVersion::VALUE;
/// Schema version of the paged projection of a `memory_utility_reducer_v1` partition.
pub const PROJECTION_V1_SCHEMA_VERSION: &str = LedgerProjectionV1Version::VALUE;
/// The reducer of ledger packets: the v0 subject rules, uncapped exact counters, history
/// bounded per subject, subjects paged in `subject_id` order.
pub const LEDGER_REDUCER_VERSION: &str = LedgerReducerVersion::VALUE;
/// Most refusals listed in a receipt (the counters stay exact).
pub const MAX_REFUSALS: usize = 64;
/// Largest page of the ledger projection (and its default).
pub const MAX_PAGE: usize = 128;
