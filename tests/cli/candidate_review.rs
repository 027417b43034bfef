//! `candidate-review`: the Issue Fix fixture candidate under each review decision.

use crate::snap;
use crate::support::run;

#[test]
fn candidate_review_defaults_to_accept_in_markdown() {
    snap!(
        "candidate_review_defaults_markdown",
        run(&["candidate-review"])
    );
}

#[test]
fn accept_activates_the_fixture_record() {
    snap!(
        "candidate_review_accept_json",
        run(&[
            "candidate-review",
            "--decision",
            "accept",
            "--format",
            "json"
        ])
    );
}

#[test]
fn edit_supersedes_the_original_candidate_ref() {
    snap!(
        "candidate_review_edit_json",
        run(&["candidate-review", "--decision", "edit", "--format", "json"])
    );
}

#[test]
fn retire_accepts_first_then_retires() {
    let out = run(&[
        "candidate-review",
        "--decision",
        "retire",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0);
    let packet = out.json();
    assert_eq!(packet["status"], "retired");
    assert_eq!(packet["review"]["review_ref"], "review:fixture:retire");
    assert_eq!(
        packet["record"]["lifecycle"],
        serde_json::json!({"state": "retired", "supersedes_refs": [], "retired_reason": "reviewed_retirement"})
    );
    assert_eq!(
        packet["adapter"]["shared_candidate"]["candidate"]["lifecycle"]["state"],
        "candidate"
    );
}

#[test]
fn reject_and_no_write_need_no_persistence() {
    for (decision, status, reason) in [
        ("reject", "rejected", "rejected_in_review"),
        ("no_write", "no_write", "no_write_rationale"),
    ] {
        let out = run(&[
            "candidate-review",
            "--decision",
            decision,
            "--format",
            "json",
        ]);
        assert_eq!(out.code, 0);
        let packet = out.json();
        assert_eq!(packet["status"], status);
        assert_eq!(packet["effective_decision"], decision);
        assert_eq!(packet["persistence_next_step"], "none");
        assert_eq!(packet["record"]["lifecycle"]["retired_reason"], reason);
    }
}

#[test]
fn each_decision_renders_status_and_effective_decision_in_markdown() {
    for decision in ["edit", "reject", "retire", "no_write"] {
        snap!(
            format!("candidate_review_{decision}_markdown"),
            run(&["candidate-review", "--decision", decision])
        );
    }
}

#[test]
fn unknown_decision_is_an_argument_error() {
    snap!(
        "candidate_review_invalid_decision",
        run(&["candidate-review", "--decision", "approve"])
    );
}

#[test]
fn unknown_case_is_an_argument_error() {
    snap!(
        "candidate_review_invalid_case",
        run(&["candidate-review", "--case", "bogus"])
    );
}

#[test]
fn every_decision_conforms_to_the_review_schema() {
    for decision in ["accept", "edit", "reject", "retire", "no_write"] {
        crate::schemas::assert_conforms(
            "reward_memory_candidate_review_v0",
            &[
                "candidate-review",
                "--decision",
                decision,
                "--format",
                "json",
            ],
        );
    }
}
