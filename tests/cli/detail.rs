//! `--detail`: a readable report under the pinned markdown summary, for every subcommand.
//! The summary above it is byte-identical to the plain markdown; JSON ignores the flag.

use serde_json::json;

use crate::snap;
use crate::support::{Run, Scratch, fixtures_dir, pretty, read_json};

fn fixture(rel: &str) -> String {
    fixtures_dir().join(rel).to_string_lossy().into_owned()
}

/// Runs `args` with and without `--detail` and checks that the detail run starts with the
/// plain markdown and adds at least one `## ` section; returns the detail run.
fn detail(scratch: &Scratch, args: &[&str]) -> Run {
    let plain = scratch.run(args, None);
    let mut with = args.to_vec();
    with.push("--detail");
    let out = scratch.run(&with, None);
    assert_eq!(out.code, plain.code, "{}", out.transcript());
    assert_eq!(out.stderr, plain.stderr);
    let rest = out.stdout.strip_prefix(&plain.stdout).unwrap_or_else(|| {
        panic!(
            "detail does not start with the summary:\n{}\n---\n{}",
            plain.stdout, out.stdout
        )
    });
    assert!(rest.starts_with("## "), "{}", out.stdout);
    assert!(rest.ends_with("\n\n"), "{rest:?}");
    out
}

/// Replaces `latency_ms: N` (wall clock) with a placeholder.
fn mask_latency(mut run: Run) -> Run {
    let re = regex::Regex::new(r"latency_ms: \d+").expect("valid pattern");
    run.stdout = re.replace_all(&run.stdout, "latency_ms: [ms]").into_owned();
    run
}

#[test]
fn evaluate_lists_cases_totals_and_gate() {
    let out = mask_latency(detail(&Scratch::new(), &["evaluate"]));
    assert!(out.stdout.contains("| compact_restart_survival "));
    assert!(out.stdout.contains("- assertion_count: 31\n"));
    assert!(out.stdout.contains("- decision: advance_stage_5\n"));
    snap!("detail_evaluate", out);
}

#[test]
fn utility_project_lists_subjects_with_estimate_and_review() {
    let input = fixture("utility_project/valid/harmful-item.json");
    let out = detail(&Scratch::new(), &["utility-project", "--input", &input]);
    assert!(
        out.stdout.contains(
            "| 0123456789abcdef | item  | harmful |    -0.95 |       0.95 | harmful 1 | deterministic_effect | attenuation_proposed (attenuate_or_review) |"
        ),
        "{}",
        out.stdout
    );
    snap!("detail_utility_project_harmful", out);
}

#[test]
fn utility_project_conflict_shows_the_review_proposal() {
    let input = fixture("utility_project/valid/same-tier-conflict.json");
    let out = detail(&Scratch::new(), &["utility-project", "--input", &input]);
    assert!(out.stdout.contains("same_evidence_tier_conflict"));
    snap!("detail_utility_project_conflict", out);
}

#[test]
fn utility_project_rejection_lists_the_rejection() {
    let input = fixture("utility_project/invalid/both-snapshots-mismatch.json");
    snap!(
        "detail_utility_project_rejected",
        detail(&Scratch::new(), &["utility-project", "--input", &input])
    );
}

#[test]
fn dogfood_evaluate_lists_receipts_and_readiness() {
    let input =
        fixture("dogfood_evaluate/valid/ready-helpful-item-attribution-and-null-attribution.json");
    snap!(
        "detail_dogfood_ready",
        detail(&Scratch::new(), &["dogfood-evaluate", "--input", &input])
    );
    let input = fixture("dogfood_evaluate/valid/hold-two-loopx-domains-required.json");
    snap!(
        "detail_dogfood_hold",
        detail(&Scratch::new(), &["dogfood-evaluate", "--input", &input])
    );
}

#[test]
fn corpus_registry_lists_the_corpora() {
    let out = detail(&Scratch::new(), &["corpus-registry"]);
    for corpus in [
        "run_reward_overlays",
        "authority_policy_sources",
        "scoped_preferences",
        "execution_trajectories",
        "distilled_experiences",
        "session_working_memory",
        "fresh_execution_context",
    ] {
        assert!(out.stdout.contains(&format!("| {corpus} ")), "{corpus}");
    }
    snap!("detail_corpus_registry", out);
}

#[test]
fn architecture_health_candidate_and_route_have_reports() {
    let scratch = Scratch::new();
    snap!("detail_architecture", detail(&scratch, &["architecture"]));
    snap!(
        "detail_health_check",
        detail(&scratch, &["health-check", "--case", "stale"])
    );
    snap!(
        "detail_candidate_review",
        detail(&scratch, &["candidate-review", "--decision", "edit"])
    );
    snap!(
        "detail_route_check",
        detail(&scratch, &["route-check", "--case", "pr-3237"])
    );
}

#[test]
fn operator_control_and_utility_commands_have_reports() {
    let scratch = Scratch::new();
    let control = fixture("operator_control/valid/retire.json");
    snap!(
        "detail_operator_control",
        detail(
            &scratch,
            &[
                "operator-control",
                "--input",
                &control,
                "--action",
                "retire",
                "--control-ref",
                "control:example:retire",
                "--reasoning-summary",
                "Current source truth supersedes this record.",
            ],
        )
    );
    let observe = fixture("utility_observe/valid/harmful-owner-correction-int-confidence.json");
    snap!(
        "detail_utility_observe",
        detail(&scratch, &["utility-observe", "--input", &observe])
    );
    let invalid = fixture("utility_validate/invalid/relabelled-subject.json");
    snap!(
        "detail_utility_validate_invalid",
        detail(&scratch, &["utility-validate", "--input", &invalid])
    );
}

/// A scratch dir holding the embedded demo registry, its goal repo pointing at the
/// fixture project.
fn embedded_route() -> Scratch {
    let scratch = Scratch::new();
    let dir = fixtures_dir().join("ingest_event/embedded");
    let mut registry = read_json(&dir.join("registry.json"));
    registry["goals"][0]["repo"] = json!(dir.join("project").to_string_lossy());
    scratch.write("registry.json", &pretty(&registry));
    scratch
}

#[test]
fn ingest_event_shows_provider_store_location_and_readback() {
    let scratch = embedded_route();
    let event = fixture("ingest_event/embedded/event.json");
    let args = [
        "--registry",
        "registry.json",
        "--runtime-root",
        "runtime",
        "ingest-event",
        "--input",
        &event,
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--execute",
        "--detail",
    ];
    let out = scratch.run(&args, None);
    assert_eq!(out.code, 0, "{}", out.transcript());
    assert!(
        out.stdout
            .contains("- store: runtime/reward-memory/embedded.sqlite3\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("- exact_readback_verified: true\n"));
    assert!(out.stdout.contains("- registry: registry.json\n"));
    snap!("detail_ingest_event_activated", out);
}

#[test]
fn ingest_event_dry_run_says_the_provider_was_not_called() {
    let input = fixture("ingest_event/valid/guard-blocked-stale-source.json");
    let out = detail(&Scratch::new(), &["ingest-event", "--input", &input]);
    assert!(
        out.stdout
            .contains("- write: not called (dry run or blocked before the provider)\n")
    );
    snap!("detail_ingest_event_guard_blocked", out);
}

#[test]
fn experiment_status_shows_the_registry_it_read() {
    let scratch = embedded_route();
    let out = detail(
        &scratch,
        &[
            "--registry",
            "registry.json",
            "experiment-status",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
        ],
    );
    assert!(out.stdout.contains("- registry: registry.json\n"));
    snap!("detail_experiment_status", out);
}

#[test]
fn detail_is_accepted_before_the_subcommand_and_ignored_by_json() {
    let scratch = Scratch::new();
    let before = scratch.run(&["--detail", "corpus-registry"], None);
    let after = scratch.run(&["corpus-registry", "--detail"], None);
    assert_eq!(before.stdout, after.stdout);
    let json = scratch.run(&["corpus-registry", "--format", "json"], None);
    let json_detail = scratch.run(&["corpus-registry", "--format", "json", "--detail"], None);
    assert_eq!(json.stdout, json_detail.stdout);
    assert_eq!(json_detail.code, 0);
}

#[test]
fn request_errors_add_no_report() {
    let out = Scratch::new().run(
        &["utility-project", "--input", "nope.json", "--detail"],
        None,
    );
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stdout,
        "# Reward Memory\n\n- status: `invalid_request`\n\
         - error: `cannot read input JSON: [Errno 2] No such file or directory: 'nope.json'`\n\n"
    );
}
