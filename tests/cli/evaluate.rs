//! `evaluate`: the Stage-4 contract suite packet, its exit code and its schema. The
//! `latency_ms` values are wall-clock timings and are masked in snapshots.

use crate::snap;
use crate::support::{mask_latency, run};

#[test]
fn the_suite_passes_and_advances_to_stage_5() {
    snap!(
        "evaluate_json",
        run(&["evaluate", "--format", "json"]).masked(mask_latency)
    );
}

#[test]
fn markdown_is_the_default_format() {
    snap!("evaluate_markdown", run(&["evaluate"]));
}

#[test]
fn the_global_format_flag_selects_json() {
    let out = run(&["--format", "json", "evaluate"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.json()["status"], "passed");
}

#[test]
fn totals_match_the_cases_and_the_gate_is_ready() {
    let packet = run(&["evaluate", "--format", "json"]).json();
    let cases = packet["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 8);
    let sum = |key: &str| -> u64 { cases.iter().map(|c| c[key].as_u64().expect("count")).sum() };
    assert_eq!(packet["metrics"]["assertion_count"], 31);
    assert_eq!(packet["metrics"]["public_evidence_bytes"], 997);
    assert_eq!(
        packet["metrics"]["latency_ms"].as_u64(),
        Some(sum("latency_ms"))
    );
    assert_eq!(
        packet["release_gate"]["status"],
        "ready_for_bounded_dogfood"
    );
    assert_eq!(
        packet["release_gate"]["reason_codes"],
        serde_json::json!([])
    );
    assert!(cases.iter().all(|c| c["false_application_count"] == 0));
}

#[test]
fn the_packet_conforms_to_its_schema() {
    crate::schemas::assert_conforms(
        "reward_memory_evaluation_v0",
        &["evaluate", "--format", "json"],
    );
}
