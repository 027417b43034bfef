//! The top-level error type and the one place that maps errors to exit codes.
//!
//! Every module has its own `thiserror` enum whose messages are the reference's error
//! strings; they convert into [`Error`] with `#[from]`. A request error becomes a
//! `reward_memory_error_v0` packet on stdout with exit 2. Only failing to write the
//! output is reported on stderr (exit 1); a broken pipe ends quietly. An argument error
//! (clap's, before any command runs) is [`Exit::Usage`].

use crate::contract::candidate::CandidateError;
use crate::contract::dogfood::DogfoodError;
use crate::contract::experiment::ExperimentError;
use crate::contract::health::HealthError;
use crate::contract::ingest::IngestError;
use crate::contract::operator::OperatorError;
use crate::contract::route::RouteError;
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
    /// A `health-check` packet could not be built.
    #[error(transparent)]
    Health(#[from] HealthError),
    /// A `candidate-review` packet could not be built.
    #[error(transparent)]
    Candidate(#[from] CandidateError),
    /// A `route-check` observation is invalid.
    #[error(transparent)]
    Route(#[from] RouteError),
    /// The registry route or the experiment config could not be resolved.
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    /// An `ingest-event` request is invalid.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A `dogfood-evaluate` batch is invalid.
    #[error(transparent)]
    Dogfood(#[from] DogfoodError),
    /// An `operator-control` request is invalid.
    #[error(transparent)]
    Operator(#[from] OperatorError),
    /// A `utility-correct` input is malformed or its checkpoint is not authorized.
    #[error(transparent)]
    Correction(#[from] crate::contract::correction::CorrectionError),
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
    /// A `utility-attribute` request (profile, evidence, receipt) is invalid.
    #[error(transparent)]
    Attribution(#[from] crate::attribution::AttributionError),
    /// A stored application receipt or pending attribution could not be read or written.
    #[error(transparent)]
    ReceiptStore(#[from] crate::runtime::receipts::ReceiptStoreError),
    /// A rank-prior profile, partition, candidate list or utility source is invalid.
    #[error(transparent)]
    RankPrior(#[from] crate::ranking::prior::RankPriorError),
    /// A ranking evaluation request (profile, episodes, sweep, plot) is invalid.
    #[error(transparent)]
    RankEvaluate(#[from] crate::ranking::evaluate::RankEvaluateError),
    /// A utility ledger could not be opened, read or written.
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// `init` refused its ids, found a file in the way or could not write one.
    #[error(transparent)]
    Init(#[from] crate::contract::experiment::starter::StarterError),
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
    /// The command line was not understood: nothing on stdout, one line on stderr.
    Usage,
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
            Exit::NotOk | Exit::Usage => 2,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_exit_has_its_documented_status() {
        assert_eq!(Exit::Success.code(), 0);
        assert_eq!(Exit::NotOk.code(), 2);
        assert_eq!(Exit::Usage.code(), 2);
        assert_eq!(Exit::Failure.code(), 1);
        let refused = Error::from(FieldError::new("x"));
        assert_eq!(refused.exit(), Exit::NotOk);
        let output = Error::Output(std::io::Error::other("disk"));
        assert_eq!(output.exit(), Exit::Failure);
    }

    #[test]
    fn contract_errors_keep_their_messages() {
        let ingest = Error::from(crate::contract::ingest::IngestError::UnpairedRoute);
        assert_eq!(
            ingest.to_string(),
            "--goal-id and --agent-id must be supplied together"
        );
        let route = Error::from(RouteError::Field(FieldError::new(
            "surface_count must be between 1 and 20",
        )));
        assert_eq!(route.to_string(), "surface_count must be between 1 and 20");
        assert!(route.is_request_error());
    }
}
