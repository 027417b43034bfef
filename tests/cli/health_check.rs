//! `health-check`: the ten fixture observations of the `distilled_experiences` corpus.

use crate::snap;
use crate::support::run;

const CASES: [(&str, &str, &str); 10] = [
    ("unavailable", "unavailable", "provider_unavailable"),
    ("empty", "empty", "corpus_present_without_records"),
    ("stale", "stale", "source_revision_mismatch_or_unverified"),
    (
        "wrong-project",
        "wrong_project",
        "requested_project_outside_corpus_scope",
    ),
    (
        "wrong-surface",
        "wrong_surface",
        "requested_surface_outside_corpus_scope",
    ),
    (
        "index-unavailable",
        "index_unavailable",
        "required_index_missing",
    ),
    (
        "retrieval-failed",
        "retrieval_failed",
        "retrieval_query_failed_or_not_run",
    ),
    (
        "readback-unverified",
        "readback_unverified",
        "retrieval_result_not_read_back",
    ),
    (
        "retrieval-verified",
        "retrieval_verified",
        "verified_result_not_yet_applied",
    ),
    (
        "applied-verified",
        "applied_verified",
        "verified_result_has_application_receipt",
    ),
];

#[test]
fn default_case_is_retrieval_verified_in_markdown() {
    snap!("health_check_defaults_markdown", run(&["health-check"]));
}

#[test]
fn baseline_packet_as_json() {
    snap!(
        "health_check_retrieval_verified_json",
        run(&[
            "health-check",
            "--case",
            "retrieval-verified",
            "--format",
            "json"
        ])
    );
}

#[test]
fn every_case_has_its_state_and_reason() {
    for (case, state, reason) in CASES {
        let out = run(&["health-check", "--case", case, "--format", "json"]);
        assert_eq!(out.code, 0, "{case}");
        let packet = out.json();
        assert_eq!(packet["health_state"], state, "{case}");
        assert_eq!(
            packet["reason_codes"],
            serde_json::json!([reason]),
            "{case}"
        );
        assert_eq!(packet["corpus_id"], "distilled_experiences");
        let may_apply = matches!(state, "retrieval_verified" | "applied_verified");
        assert_eq!(packet["may_apply_memory"], may_apply, "{case}");
    }
}

#[test]
fn each_case_renders_state_and_reason_in_markdown() {
    for (case, _, _) in CASES {
        snap!(
            format!("health_check_{}_markdown", case.replace('-', "_")),
            run(&["health-check", "--case", case])
        );
    }
}

#[test]
fn unavailable_case_zeroes_the_pipeline() {
    snap!(
        "health_check_unavailable_json",
        run(&["health-check", "--case", "unavailable", "--format", "json"])
    );
}

#[test]
fn unknown_case_is_an_argument_error() {
    snap!(
        "health_check_invalid_case",
        run(&["health-check", "--case", "bogus"])
    );
}

#[test]
fn every_case_conforms_to_the_health_schema() {
    for (case, _, _) in CASES {
        crate::schemas::assert_conforms(
            "reward_memory_corpus_health_v0",
            &["health-check", "--case", case, "--format", "json"],
        );
    }
}
