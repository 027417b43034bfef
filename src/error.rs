//! The top-level error type and the one place that maps errors to exit codes.
//!
//! Every module has its own `thiserror` enum whose messages are the reference's error
//! strings; they convert into [`Error`] with `#[from]`. A request error becomes a
//! `reward_memory_error_v0` packet on stdout with exit 2. Only failing to write the
//! output is reported on stderr (exit 1); a broken pipe ends quietly.

use crate::io::InputError;
use crate::wire::text::FieldError;

/// Any failure of a subcommand.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A field failed validation; the message is the reference's error string.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The input file could not be read or parsed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The registry route could not be resolved.
    #[error(transparent)]
    Registry(#[from] crate::contract::experiment::ExperimentError),
    /// A recall could not run (invalid request, unknown provider id).
    #[error(transparent)]
    Recall(#[from] crate::recall::RecallError),
    /// The `recall` command's request does not fit (input keys, queries, limit,
    /// surface, the rank prior's partition).
    #[error(transparent)]
    RecallCommand(#[from] crate::recall::command::RecallCommandError),
    /// A utility observation, projection or validation request failed.
    #[error(transparent)]
    Utility(#[from] crate::utility::UtilityError),
    /// An `apply` decision is malformed or names refs its session did not return.
    #[error(transparent)]
    Apply(#[from] crate::recall::decision::ApplyError),
    /// A recall session could not be created, found or used.
    #[error(transparent)]
    Session(#[from] crate::recall::SessionError),
    /// A rank-prior profile, partition, candidate list or utility source is invalid.
    #[error(transparent)]
    RankPrior(#[from] crate::ranking::prior::RankPriorError),
    /// A ranking evaluation request (profile, episodes, sweep, plot) is invalid.
    #[error(transparent)]
    RankEvaluate(#[from] crate::ranking::evaluate::RankEvaluateError),
    /// A utility ledger could not be opened, read or written.
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// Writing to stdout failed for a reason other than a closed pipe.
    #[error("cannot write output: {0}")]
    Output(std::io::Error),
}

/// How the process should end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    /// A packet was printed but it is not ok (`evaluate`, `dogfood-evaluate`,
    /// `utility-project`), or a request error packet was printed.
    NotOk,
    /// Output could not be written.
    Failure,
}

impl Exit {
    /// `Success` for a packet whose `ok` is `true`, else `NotOk`.
    pub fn by_ok(ok: bool) -> Exit {
        if ok { Exit::Success } else { Exit::NotOk }
    }

    /// The process exit status.
    pub fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::NotOk => 2,
            Exit::Failure => 1,
        }
    }
}

impl Error {
    /// True when the error is reported as a `reward_memory_error_v0` packet.
    pub fn is_request_error(&self) -> bool {
        !matches!(self, Error::Output(_))
    }

    /// The single exit-code mapping of the crate.
    pub fn exit(&self) -> Exit {
        if self.is_request_error() {
            Exit::NotOk
        } else {
            Exit::Failure
        }
    }
}
