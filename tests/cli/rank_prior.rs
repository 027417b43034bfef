//! `rank-prior`: one fixture per reason code (valid), bad requests (invalid), and the
//! provider effect refused where no rank-prior contract exists.

use serde_json::json;

use crate::snap;
use crate::support::{
    Run, Scratch, assert_invalid_request, file_stem as stem, fixture_files, fixtures_dir, pretty,
    read_json, run_with_file,
};

fn rank_file(path: &std::path::Path) -> Run {
    let args = ["rank-prior", "--input", "input.json", "--format", "json"];
    run_with_file(path, "input.json", &args)
}

#[test]
fn valid_fixtures_rank_and_explain_every_modifier() {
    let files = fixture_files("rank_prior", "valid");
    assert!(files.len() >= 10, "one fixture per reason code");
    let mut codes = std::collections::BTreeSet::new();
    for path in files {
        let run = rank_file(&path);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
        crate::ingest_event::conforms("memory_utility_rank_prior_v0", &run);
        let packet = run.json();
        for c in packet["candidates"].as_array().expect("candidates") {
            let modifier = c["modifier"].as_f64().expect("number");
            assert!((0.5..=2.0).contains(&modifier), "{}", path.display());
            for code in c["reason_codes"].as_array().expect("codes") {
                codes.insert(code.as_str().expect("string").to_owned());
            }
        }
        snap!(format!("rank_prior_valid_{}", stem(&path)), run);
    }
    let expected = [
        "evaluator_inference_excluded",
        "evidence_tier_below_minimum",
        "negative_utility_attenuation",
        "neutral_utility",
        "no_utility_evidence",
        "positive_utility_boost",
        "review_proposed",
        "set_level_credit_only",
        "support_below_minimum",
        "utility_unknown",
    ];
    assert_eq!(codes.into_iter().collect::<Vec<_>>(), expected);
}

#[test]
fn invalid_fixtures_print_an_invalid_request_packet() {
    let files = fixture_files("rank_prior", "invalid");
    assert!(!files.is_empty());
    for path in files {
        let run = rank_file(&path);
        assert_invalid_request(&run, &path);
        assert!(run.stderr.is_empty(), "{}: {}", path.display(), run.stderr);
        snap!(format!("rank_prior_invalid_{}", stem(&path)), run);
    }
}

#[test]
fn the_semantic_stage_keeps_a_high_utility_candidate_below_the_floor_out() {
    let run = rank_file(&fixtures_dir().join("rank_prior/valid/semantic-stage.json"));
    let packet = run.json();
    let helpful = "0000000000000002";
    assert!(
        packet["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .all(|c| c["memory_ref_digest"] != helpful)
    );
    assert_eq!(packet["semantic_stage"]["below_floor_count"], 1);
    assert_eq!(packet["semantic_stage"]["outside_pool_count"], 1);
}

/// The OpenViking example route: the effect is refused and nothing is written.
#[test]
fn the_effect_is_refused_on_openviking_and_nothing_is_written() {
    let s = Scratch::new();
    let base = fixtures_dir().join("ingest_event/openviking");
    let mut registry = read_json(&base.join("registry.json"));
    registry["goals"][0]["repo"] = json!("project");
    s.write("registry.json", &pretty(&registry));
    let config_rel = "project/.loopx/config/reward-memory/experiment.json";
    let config = std::fs::read_to_string(base.join(config_rel)).expect("config");
    s.write(config_rel, &config.replace("@OV_BIN@", "/nonexistent/ov"));
    let partition = json!({
        "scope": {
            "agent_id": "pilot",
            "project_id": "project:example",
            "corpus_id": "example_reviewer_artifact_policy",
            "surface_id": "reviewer_artifact.summary",
        },
        "retrieval_snapshot_ref": "retrieval:ov",
        "policy_snapshot_ref": "policy:ov",
    });
    let mut project = partition.clone();
    project["observations"] = json!([]);
    s.write("project.json", &project.to_string());
    let projection = s.run(
        &[
            "utility-project",
            "--input",
            "project.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(projection.json()["status"], "empty");
    let request = json!({
        "profile": read_json(&fixtures_dir().join("recall/loop/profile.json")),
        "partition": partition,
        "projection": projection.json(),
    });
    s.write("request.json", &request.to_string());
    let args = [
        "--registry",
        "registry.json",
        "--runtime-root",
        "rt",
        "rank-prior",
        "--input",
        "request.json",
        "--execute",
        "--goal-id",
        "reward-memory-goal",
        "--agent-id",
        "pilot",
        "--format",
        "json",
    ];
    let run = s.run(&args, None);
    assert_eq!(run.code, 0, "{}", run.stdout);
    crate::ingest_event::conforms("memory_utility_rank_prior_effect_v0", &run);
    let packet = run.json();
    assert_eq!(packet["status"], "refused");
    assert_eq!(packet["reason_code"], "provider_rank_prior_contract_absent");
    assert_eq!(packet["provider_write_performed"], false);
    assert_eq!(packet["ranking"], "local_only");
    assert!(!s.path.join("rt").exists(), "nothing is written");
    snap!("rank_prior_effect_refused_openviking", run);
}

#[test]
fn execute_needs_the_route() {
    let run = crate::support::run(&["rank-prior", "--input", "x.json", "--execute"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--goal-id"), "{}", run.stderr);
}

#[test]
fn markdown_shows_the_refusal_and_says_it_on_stderr() {
    let path = fixtures_dir().join("rank_prior/invalid/bounds-exclude-one.json");
    let run = run_with_file(
        &path,
        "input.json",
        &["rank-prior", "--input", "input.json"],
    );
    assert_eq!(run.code, 2);
    let message = "profile.modifier_bounds must contain 1: 0 < lower <= 1 <= upper";
    assert!(
        run.stdout.contains(&format!("- error: `{message}`")),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, format!("reward-memory: {message}\n"));
}

#[test]
fn detail_reports_the_ranking_under_the_summary() {
    let path = fixtures_dir().join("rank_prior/valid/positive-utility-boost.json");
    let plain = run_with_file(
        &path,
        "input.json",
        &["rank-prior", "--input", "input.json"],
    );
    let detail = run_with_file(
        &path,
        "input.json",
        &["rank-prior", "--input", "input.json", "--detail"],
    );
    assert_eq!(detail.code, 0);
    let rest = detail
        .stdout
        .strip_prefix(&plain.stdout)
        .expect("the summary comes first");
    assert!(rest.starts_with("## "), "{rest}");
    snap!("rank_prior_detail", detail);
}
