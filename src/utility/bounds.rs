//! The bounds of the v0 utility contract: the utility range and the caps on deliveries,
//! subjects, history, rejection records and per-record lists. Shared by the reducer, which
//! enforces them while it builds a projection, and the readback validator, which checks a
//! printed packet against them; constants only.

/// Lower utility bound.
pub const UTILITY_MIN: f64 = -1.0;
/// Upper utility bound.
pub const UTILITY_MAX: f64 = 1.0;
/// At most this many deliveries per reduction; more is rejected.
pub const MAX_OBSERVATIONS: usize = 1024;
/// At most this many subjects per projection; more is rejected.
pub const MAX_SUBJECTS: usize = 128;
/// At most this many history entries are printed.
pub const MAX_HISTORY: usize = 256;
/// At most this many conflict records are printed.
pub const MAX_REJECTIONS: usize = 64;
/// At most this many distinct fingerprints are listed per conflict.
pub const MAX_CONFLICT_FINGERPRINTS: usize = 16;
/// At most this many reason codes in reviews, history entries and rejections.
pub const MAX_REVIEW_REASON_CODES: usize = 12;
/// At most this many evidence refs per history entry.
pub const MAX_HISTORY_EVIDENCE_REFS: usize = 16;
