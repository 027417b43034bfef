//! `route-check`: pilot fix, evidence hold or meta design gate for one observation.

use crate::snap;
use crate::support::run;

#[test]
fn no_flags_hold_for_evidence_in_markdown() {
    snap!("route_check_defaults_markdown", run(&["route-check"]));
}

#[test]
fn pr_3237_case_is_a_meta_design_gate() {
    snap!(
        "route_check_pr_3237_json",
        run(&["route-check", "--case", "pr-3237", "--format", "json"])
    );
}

#[test]
fn case_ignores_every_other_flag() {
    let with_flags = run(&[
        "route-check",
        "--case",
        "pr-3237",
        "--surface-count",
        "0",
        "--effect-evidence",
        "--format",
        "json",
    ]);
    let plain = run(&["route-check", "--case", "pr-3237", "--format", "json"]);
    assert_eq!(with_flags.code, 0);
    assert_eq!(with_flags.stdout, plain.stdout);
}

#[test]
fn reproduction_validation_and_effect_evidence_authorize_a_pilot() {
    snap!(
        "route_check_pilot_json",
        run(&[
            "route-check",
            "--named-reproduction",
            "--named-validation",
            "--effect-evidence",
            "--edge-case-complexity",
            "medium",
            "--format",
            "json",
        ])
    );
}

#[test]
fn claims_add_required_evidence_in_fixed_order() {
    let out = run(&[
        "route-check",
        "--named-reproduction",
        "--named-validation",
        "--user-visible-behavior-change",
        "--retrieval-or-memory-quality-claim",
        "--hot-path-or-storage-change",
        "--effect-evidence",
        "--benchmark-evidence",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0);
    let packet = out.json();
    assert_eq!(packet["decision"], "hold_for_evidence");
    assert_eq!(
        packet["required_evidence"],
        serde_json::json!(["effect", "ux", "benchmark", "performance"])
    );
    assert_eq!(
        packet["missing_required_evidence"],
        serde_json::json!(["ux", "performance"])
    );
}

#[test]
fn meta_reasons_come_before_missing_evidence() {
    snap!(
        "route_check_meta_uncertain_markdown",
        run(&[
            "route-check",
            "--behavior-status",
            "uncertain",
            "--surface-count",
            "3",
            "--semantic-contract-change",
        ])
    );
}

#[test]
fn surface_count_outside_bounds_is_an_invalid_request() {
    for (value, name) in [
        ("0", "zero"),
        ("21", "21"),
        ("99999999999999999999", "huge"),
    ] {
        snap!(
            format!("route_check_surface_count_{name}"),
            run(&["route-check", "--surface-count", value, "--format", "json"])
        );
    }
}

#[test]
fn surface_count_accepts_python_int_syntax() {
    let out = run(&[
        "route-check",
        "--surface-count",
        " 1_0 ",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0);
    assert_eq!(out.json()["reason_codes"][0], "cross_surface_change");
}

#[test]
fn non_integer_surface_count_is_an_argument_error() {
    snap!(
        "route_check_surface_count_not_int",
        run(&["route-check", "--surface-count", "two"])
    );
}

#[test]
fn unknown_choices_are_argument_errors() {
    for (flag, value, name) in [
        ("--case", "pr-1", "case"),
        ("--behavior-status", "maybe", "behavior_status"),
        ("--edge-case-complexity", "extreme", "complexity"),
    ] {
        snap!(
            format!("route_check_invalid_{name}"),
            run(&["route-check", flag, value])
        );
    }
}

#[test]
fn route_packets_conform_to_the_route_schema() {
    for args in [
        &["route-check", "--case", "pr-3237", "--format", "json"][..],
        &["route-check", "--format", "json"][..],
        &[
            "route-check",
            "--named-reproduction",
            "--named-validation",
            "--effect-evidence",
            "--format",
            "json",
        ][..],
    ] {
        crate::schemas::assert_conforms("reward_memory_pilot_meta_route_v0", args);
    }
    crate::schemas::assert_conforms(
        "reward_memory_error_v0",
        &["route-check", "--surface-count", "0", "--format", "json"],
    );
}
