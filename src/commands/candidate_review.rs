//! `candidate-review`: builds and reviews the Issue Fix fixture candidate
//! ([`crate::contract::candidate`]).

use crate::cli::CandidateReviewArgs;
use crate::contract::candidate::{self, CandidateCase, ReviewDecision};
use crate::error::Error;
use crate::wire::json::Value;

use super::context::{Context, Outcome};

/// What `candidate-review` builds and how it is reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CandidateReviewRequest {
    /// The candidate fixture.
    pub case: CandidateCase,
    /// The review decision to apply.
    pub decision: ReviewDecision,
}

impl From<&CandidateReviewArgs> for CandidateReviewRequest {
    fn from(args: &CandidateReviewArgs) -> CandidateReviewRequest {
        CandidateReviewRequest {
            case: args.case,
            decision: args.decision,
        }
    }
}

/// Runs `candidate-review`: the review packet, exit 0.
pub fn run(request: &CandidateReviewRequest, _: &Context) -> Result<Outcome, Error> {
    let packet = candidate::candidate_review_packet(request.case, request.decision)?;
    Ok(Outcome::success(Value::Object(packet)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let Command::CandidateReview(args) =
            parse_command(&["candidate-review", "--decision", "no_write"])
        else {
            panic!("candidate-review");
        };
        let json: CandidateReviewRequest = serde_json::from_str(
            r#"{"case": "issue-fix-verified-contributor", "decision": "no_write"}"#,
        )
        .expect("request");
        assert_eq!(CandidateReviewRequest::from(&args), json);
        assert_eq!(json.decision, ReviewDecision::NoWrite);
    }
}
