//! `--detail`: a readable report under the pinned markdown summary, for every subcommand.
//! The summary above it is byte-identical to the plain markdown; JSON ignores the flag.

use serde_json::json;

use crate::snap;
use crate::support::{Run, Scratch, fixtures_dir, mask_latency, pretty, read_json};

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

#[test]
fn evaluate_lists_cases_totals_and_gate() {
    let out = detail(&Scratch::new(), &["evaluate"]).masked(mask_latency);
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
fn rank_evaluate_adds_differences_sweep_ledger_and_profile() {
    let out = detail(
        &Scratch::new(),
        &[
            "rank-evaluate",
            "--simulate",
            "--episodes",
            "200",
            "--seed",
            "3",
            "--sweep",
            "evaluator_accuracy=0.5,1",
        ],
    );
    for section in [
        "## Evaluation\n",
        "## Arms\n",
        "## Gate\n",
        "## Differences against arm 1 (semantic), same resamples\n",
        "## Sweep of evaluator_accuracy (nDCG@3 per arm; Δ against semantic)\n",
        "## Held-out episodes\n",
        "## Training ledger\n",
        "## Rank-prior profile evaluated\n",
    ] {
        assert!(out.stdout.contains(section), "{section}: {}", out.stdout);
    }
    snap!("detail_rank_evaluate_sweep", out);
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

/// The six partition flags of the `utility_project/valid` fixtures.
const STAGE2_PARTITION: [&str; 12] = [
    "--agent-id",
    "agent:stage2",
    "--project-id",
    "project:loopx",
    "--corpus-id",
    "reward-memory-corpus",
    "--surface-id",
    "loopx.issue_fix",
    "--retrieval-snapshot-ref",
    "retrieval:stage2",
    "--policy-snapshot-ref",
    "policy:stage2",
];

/// A scratch dir with `ledger.sqlite3` holding `mixed-levels.json`: four subjects (two
/// item, one set, one unresolved) of one partition.
fn ledger_scratch() -> Scratch {
    let scratch = Scratch::new();
    let input = fixture("utility_project/valid/mixed-levels.json");
    let out = scratch.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "ledger.sqlite3",
            "--input",
            &input,
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.transcript());
    scratch
}

#[test]
fn ledger_append_adds_the_batch_and_where_the_ledger_is() {
    let scratch = Scratch::new();
    let input = fixture("utility_ledger/append/every-refusal.jsonl");
    let run = |ledger: &str, detail: bool| {
        let mut args = vec![
            "utility-ledger",
            "append",
            "--ledger",
            ledger,
            "--input",
            &input,
        ];
        if detail {
            args.push("--detail");
        }
        scratch.run(&args, None)
    };
    // Two fresh ledgers: an append is not idempotent in its counts.
    let plain = run("plain.sqlite3", false);
    let out = run("detail.sqlite3", true);
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr, plain.stderr);
    let rest = out
        .stdout
        .strip_prefix(&plain.stdout)
        .unwrap_or_else(|| panic!("{}\n---\n{}", plain.stdout, out.stdout));
    assert!(
        rest.starts_with("## Batch\n\n- ledger: detail.sqlite3 (sqlite)\n"),
        "{rest}"
    );
    snap!("detail_utility_ledger_append", out);
}

#[test]
fn ledger_projection_page_adds_subjects_and_paging() {
    let scratch = ledger_scratch();
    let mut args = vec![
        "utility-ledger",
        "project",
        "--ledger",
        "ledger.sqlite3",
        "--limit",
        "2",
    ];
    args.extend(STAGE2_PARTITION);
    let out = detail(&scratch, &args);
    assert!(
        out.stdout.contains(
            "- observations: `deliveries 4, accepted 4, duplicate 0, conflicting 0, rejected 0`\n\
             - subjects: `4 (item 2, set 1, unresolved 1, in conflict 0)`\n\
             - page: `2 subjects (limit 2), next page: --after mui_"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("## Subjects (this page, by subject_id)\n"),
        "{}",
        out.stdout
    );
    snap!("detail_utility_ledger_projection_page", out);
}

#[test]
fn ledger_project_within_the_caps_shows_the_v0_view_and_the_ledger() {
    let scratch = ledger_scratch();
    let mut args = vec!["utility-ledger", "project", "--ledger", "ledger.sqlite3"];
    args.extend(STAGE2_PARTITION);
    let out = detail(&scratch, &args);
    assert!(
        out.stdout
            .contains("## Projection\n\n- ledger: ledger.sqlite3 (sqlite)\n- status: ready\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn ledger_subject_shows_subjects_by_default_and_their_history_in_detail() {
    let scratch = ledger_scratch();
    let mut args = vec![
        "utility-ledger",
        "subject",
        "--ledger",
        "ledger.sqlite3",
        "--memory-ref-digest",
        "0123456789abcdef",
        "--memory-ref-digest",
        "00000000000000aa",
    ];
    args.extend(STAGE2_PARTITION);
    let plain = scratch.run(&args, None);
    assert_eq!(plain.code, 0, "{}", plain.transcript());
    assert!(
        plain.stdout.contains(
            "- status: `found`\n- subject_count: `3`\n\
             - missing_memory_ref_digests: `00000000000000aa`\n\n## Subjects\n\n"
        ),
        "{}",
        plain.stdout
    );
    assert!(
        plain.stdout.contains(
            "| item  | helpful |      0.9 |        0.9 | helpful 1 | deterministic_effect | none "
        ),
        "{}",
        plain.stdout
    );
    let out = detail(&scratch, &args);
    assert!(
        out.stdout
            .contains("## Latest observations of 0123456789abcdef (mui_"),
        "{}",
        out.stdout
    );
    snap!("detail_utility_ledger_subject", out);
}

#[test]
fn ledger_verify_lists_what_was_checked() {
    let scratch = ledger_scratch();
    let out = detail(
        &scratch,
        &["utility-ledger", "verify", "--ledger", "ledger.sqlite3"],
    );
    assert!(
        out.stdout
            .contains("- first_difference: -\n\nEvery observation aggregate"),
        "{}",
        out.stdout
    );
    snap!("detail_utility_ledger_verify", out);
}

#[test]
fn ledger_runtime_root_after_the_leaf_wins_and_names_the_default_ledger() {
    let scratch = Scratch::new();
    let input = fixture("utility_project/valid/mixed-levels.json");
    let out = scratch.run(
        &[
            "--runtime-root",
            "before",
            "utility-ledger",
            "append",
            "--input",
            &input,
            "--runtime-root",
            "after",
            "--detail",
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.transcript());
    assert!(
        out.stdout
            .contains("- ledger: after/reward-memory/utility-ledger.sqlite3 (sqlite)\n"),
        "{}",
        out.stdout
    );
    assert!(
        scratch
            .path
            .join("after/reward-memory/utility-ledger.sqlite3")
            .is_file()
    );
    assert!(!scratch.path.join("before").exists());
    let verify = scratch.run(
        &["utility-ledger", "verify", "--runtime-root", "after"],
        None,
    );
    assert_eq!(verify.code, 0, "{}", verify.transcript());
}
