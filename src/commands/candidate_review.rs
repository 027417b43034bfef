//! `candidate-review`: builds and reviews the Issue Fix fixture candidate
//! ([`crate::contract::candidate`]).

use crate::cli::CandidateReviewArgs;
use crate::contract::candidate;
use crate::error::Error;
use crate::wire::json::Value;

use super::Outcome;

/// Runs `candidate-review --case --decision`: the review packet, exit 0.
pub fn run(args: &CandidateReviewArgs) -> Result<Outcome, Error> {
    Ok(Outcome::success(Value::Object(
        candidate::candidate_review_packet(args.case, args.decision)?,
    )))
}
