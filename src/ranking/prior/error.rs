//! What goes wrong with a rank-prior input: the one error type of the rank prior, its
//! request and its readers of a projection, a ledger's subjects and a verdict.

use crate::wire::text::FieldError;

/// What went wrong with a rank-prior input; each message says what to fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RankPriorError {
    /// A field of the profile, partition, candidates or utility source is invalid.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The utility source belongs to another partition: it must never apply.
    #[error(
        "utility {what} does not match the partition: the projection must come from the same scope, snapshot pair and reducer version"
    )]
    PartitionMismatch { what: &'static str },
    /// The `rank-prior` request as a whole is malformed: an unsupported or missing key,
    /// both or neither of two alternatives, or an option that does not fit the request.
    #[error("{0}")]
    Request(String),
}

/// A [`RankPriorError::Field`] with `message`.
pub(super) fn field(message: impl Into<String>) -> RankPriorError {
    RankPriorError::Field(FieldError(message.into()))
}
