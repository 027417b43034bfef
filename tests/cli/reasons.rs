//! Reasons in the default (markdown) view: every kind of refusal or reasoned outcome shows
//! what a person needs to act, and an exit-2 packet adds one `reward-memory: ...` line on
//! stderr. `--format json` stays the packet alone.

use serde_json::json;

use crate::snap;
use crate::support::{Run, Scratch, fixtures_dir, pretty, read_json};

fn fixture(rel: &str) -> String {
    fixtures_dir().join(rel).to_string_lossy().into_owned()
}

/// Runs `args` in markdown, asserting the exit status, that the markdown holds `line`,
/// and that stderr is exactly `stderr` (one line, or nothing).
fn markdown(args: &[&str], code: i32, line: &str, stderr: Option<&str>) -> Run {
    let out = Scratch::new().run(args, None);
    assert_eq!(out.code, code, "{}", out.transcript());
    assert!(
        out.stdout.starts_with("# Reward Memory\n\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(line),
        "missing {line:?}:\n{}",
        out.stdout
    );
    match stderr {
        Some(expected) => assert_eq!(out.stderr, format!("{expected}\n")),
        None => assert!(out.stderr.is_empty(), "{}", out.stderr),
    }
    out
}

#[test]
fn invalid_request_shows_the_error_and_says_it_on_stderr() {
    let out = markdown(
        &["utility-project", "--input", "nope.json"],
        2,
        "- error: `cannot read input JSON: [Errno 2] No such file or directory: 'nope.json'`\n",
        Some(
            "reward-memory: cannot read input JSON: [Errno 2] No such file or directory: 'nope.json'",
        ),
    );
    snap!("reasons_invalid_request", out);
}

#[test]
fn invalid_request_in_json_prints_nothing_on_stderr() {
    let out = Scratch::new().run(
        &[
            "utility-project",
            "--input",
            "nope.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(out.code, 2);
    assert_eq!(out.json()["schema_version"], "reward_memory_error_v0");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn guard_blocked_ingest_shows_the_guard_reasons() {
    let input = fixture("ingest_event/valid/guard-blocked-stale-source.json");
    let out = markdown(
        &["ingest-event", "--input", &input],
        0,
        "- status: `guard_blocked`\n- guard.reason_codes: `source_freshness_not_current`\n",
        None,
    );
    snap!("reasons_ingest_guard_blocked", out);
}

#[test]
fn provider_failure_shows_its_reason_code() {
    let scratch = Scratch::new();
    let embedded = fixtures_dir().join("ingest_event/embedded");
    let registry = embedded
        .join("registry.json")
        .to_string_lossy()
        .into_owned();
    let root = scratch.path.join("runtime").to_string_lossy().into_owned();
    let run = |event: &str| {
        let event = embedded.join(event).to_string_lossy().into_owned();
        let args = [
            "--registry",
            &registry,
            "--runtime-root",
            &root,
            "ingest-event",
            "--input",
            &event,
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--execute",
        ];
        // The registry's goal repo is relative to the repository root.
        let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("reward-memory");
        let output = cmd
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("HOME", scratch.path.join(".home"))
            .env_remove("LOOPX_REGISTRY")
            .args(args)
            .output()
            .expect("binary runs");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    assert_eq!(
        run("event.json"),
        (
            Some(0),
            "# Reward Memory\n\n- status: `activated`\n- reason_codes: ``\n\n".to_owned()
        )
    );
    assert_eq!(
        run("event-conflict.json"),
        (
            Some(0),
            "# Reward Memory\n\n- status: `provider_unavailable`\n\
             - reason_codes: `provider_sync_revision_conflict`\n\n"
                .to_owned()
        )
    );
}

#[test]
fn rejected_projection_shows_the_rejection_reasons() {
    let input = fixture("utility_project/invalid/both-snapshots-mismatch.json");
    let out = markdown(
        &["utility-project", "--input", &input],
        2,
        "- status: `rejected`\n- rejections: `policy_snapshot_mismatch, retrieval_snapshot_mismatch`\n",
        Some("reward-memory: rejected: policy_snapshot_mismatch, retrieval_snapshot_mismatch"),
    );
    snap!("reasons_utility_project_rejected", out);
}

#[test]
fn invalid_projection_shows_the_violated_rule() {
    let input = fixture("utility_validate/invalid/wrong-reducer-identity.json");
    let out = markdown(
        &["utility-validate", "--input", &input],
        2,
        "- status: `invalid`\n- error: `projection.reducer_identity is invalid`\n",
        Some("reward-memory: invalid: projection.reducer_identity is invalid"),
    );
    snap!("reasons_utility_validate_invalid", out);
}

#[test]
fn observation_shows_its_label_level_basis_and_confidence() {
    let input = fixture("utility_observe/valid/harmful-owner-correction-int-confidence.json");
    let out = markdown(
        &["utility-observe", "--input", &input],
        0,
        "- utility_label: `harmful`\n- attribution_level: `item`\n\
         - evidence_basis: `owner_correction`\n- confidence: `1.0`\n",
        None,
    );
    snap!("reasons_utility_observe", out);
}

#[test]
fn refused_observation_shows_the_violated_rule() {
    let input = fixture("utility_observe/invalid/helpful-with-insufficient-evidence.json");
    markdown(
        &["utility-observe", "--input", &input],
        2,
        "- error: `insufficient evidence must produce unknown utility`\n",
        Some("reward-memory: insufficient evidence must produce unknown utility"),
    );
}

#[test]
fn dogfood_hold_shows_its_reasons_and_says_them_on_stderr() {
    let input = fixture("dogfood_evaluate/valid/hold-two-loopx-domains-required.json");
    let out = markdown(
        &["dogfood-evaluate", "--input", &input],
        2,
        "- status: `hold`\n- reason_codes: `two_loopx_domains_required`\n",
        Some("reward-memory: hold: two_loopx_domains_required"),
    );
    snap!("reasons_dogfood_hold", out);
}

#[test]
fn rank_evaluate_hold_shows_its_reasons_table_and_says_them_on_stderr() {
    // 100 training episodes are too few: the gain's interval is not above 0.
    let out = markdown(
        &["rank-evaluate", "--simulate", "--episodes", "100"],
        2,
        "- status: `hold`\n- reason_codes: `ndcg_gain_interval_not_above_zero, false_attenuation_above_threshold`\n",
        Some(
            "reward-memory: hold: ndcg_gain_interval_not_above_zero, false_attenuation_above_threshold",
        ),
    );
    assert!(out.stdout.contains("\n## Arms\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "- [ ] nDCG@3 gain of bounded_utility over semantic has its interval above 0: "
        ),
        "{}",
        out.stdout
    );
    snap!("reasons_rank_evaluate_hold", out);
}

#[test]
fn rank_evaluate_malformed_episodes_show_the_lines_and_reasons() {
    let input = fixture("rank_evaluate/invalid/not-json.jsonl");
    markdown(
        &["rank-evaluate", "--input", &input],
        2,
        "- error: `episodes input has 1 malformed line: line 2: not JSON: ",
        Some(
            "reward-memory: episodes input has 1 malformed line: line 2: not JSON: Expecting property name enclosed in double quotes: line 1 column 79 (char 78)",
        ),
    );
}

#[test]
fn invalid_experiment_config_shows_its_reason_code() {
    let scratch = Scratch::new();
    let registry = read_json(&fixtures_dir().join("experiment_status/valid/registry.json"));
    scratch.write("registry.json", &pretty(&registry));
    scratch.write(
        "project/.loopx/config/reward-memory/experiment.json",
        &pretty(&json!({"schema_version": "reward_memory_experiment_config_v0"})),
    );
    let out = scratch.run(
        &[
            "--registry",
            "registry.json",
            "experiment-status",
            "--goal-id",
            "reward-memory-goal",
            "--agent-id",
            "pilot",
        ],
        None,
    );
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains(
            "- status: `config_invalid`\n- reason_code: `config_unavailable_or_invalid`\n"
        ),
        "{}",
        out.stdout
    );
    // Issue 26: one stderr line says which file and what is wrong in it.
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "reward-memory: warning: the experiment config project/.loopx/config/reward-memory/experiment.json is not valid: "
        ) && out.stderr.contains("reward_memory_experiment_config_v1"),
        "{}",
        out.stderr
    );
}

#[test]
fn operator_control_refusal_shows_the_error() {
    let input = fixture("operator_control/invalid/edit-checkpoint-missing.json");
    markdown(
        &[
            "operator-control",
            "--input",
            &input,
            "--action",
            "edit",
            "--control-ref",
            "control:x",
            "--reasoning-summary",
            "x",
            "--edited-content-summary",
            "y",
        ],
        2,
        "- status: `invalid_request`\n- error: `operator_checkpoint must be an object`\n",
        Some("reward-memory: operator_checkpoint must be an object"),
    );
}

#[test]
fn route_check_out_of_range_shows_the_error() {
    markdown(
        &["route-check", "--surface-count", "21"],
        2,
        "- error: `surface_count must be between 1 and 20`\n",
        Some("reward-memory: surface_count must be between 1 and 20"),
    );
}

#[test]
fn ledger_append_refusals_show_every_line_and_reason_and_say_them_on_stderr() {
    // One line per refusal kind of the observation validator, plus one valid delivery.
    let input = fixture("utility_ledger/append/every-refusal.jsonl");
    let out = markdown(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "ledger.sqlite3",
            "--input",
            &input,
        ],
        2,
        "- status: `committed_with_refusals`\n\
         - deliveries: `received 8, appended 1, duplicate 0, conflicting 0, refused 7`\n\
         - ledger: `high-water sequence 1`\n\
         - refusals: `line 2 observation_malformed, line 3 observation_schema_mismatch, \
         line 4 observation_write_boundary_violation, line 5 observation_malformed_scope, \
         line 6 observation_malformed_snapshot, line 7 observation_identity_invalid, \
         line 8 observation_malformed`\n",
        Some(
            "reward-memory: committed_with_refusals: received 8, appended 1, duplicate 0, \
             conflicting 0, refused 7; high-water sequence 1; line 2 observation_malformed, \
             line 3 observation_schema_mismatch, line 4 observation_write_boundary_violation, \
             line 5 observation_malformed_scope, line 6 observation_malformed_snapshot, \
             line 7 observation_identity_invalid, line 8 observation_malformed",
        ),
    );
    for line in [
        "- line 2: observation_malformed: Expecting value: line 1 column 62 (char 61)\n",
        "- line 3: observation_schema_mismatch: observation.schema_version must be memory_utility_observation_v0\n",
        "- line 4: observation_write_boundary_violation: observation.provider_write_performed must be false\n",
        "- line 5: observation_malformed_scope: observation.scope has invalid fields: ",
        "- line 6: observation_malformed_snapshot: observation.retrieval_snapshot_ref must be an opaque public-safe reference\n",
        "- line 7: observation_identity_invalid: observation.observation_id does not match canonical identity\n",
        "- line 8: observation_malformed: confidence must be a finite number between 0 and 1\n",
    ] {
        assert!(
            out.stdout.contains(line),
            "missing {line:?}:\n{}",
            out.stdout
        );
    }
    snap!("reasons_utility_ledger_append_refusals", out);
}

#[test]
fn ledger_append_object_form_refusals_name_the_line_of_each_element() {
    let input = fixture("utility_ledger/append/object-form-refusals.json");
    let out = markdown(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "ledger.sqlite3",
            "--input",
            &input,
        ],
        2,
        "- refusals: `line 43 observation_schema_mismatch, line 77 observation_malformed, \
         line 78 observation_identity_invalid`\n",
        Some(
            "reward-memory: committed_with_refusals: received 4, appended 1, duplicate 0, \
             conflicting 0, refused 3; high-water sequence 1; line 43 observation_schema_mismatch, \
             line 77 observation_malformed, line 78 observation_identity_invalid",
        ),
    );
    assert!(
        out.stdout
            .contains("- line 77: observation_malformed: observation must be an object\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn ledger_append_without_refusals_shows_the_counts_and_nothing_on_stderr() {
    let input = fixture("utility_project/valid/mixed-levels.json");
    markdown(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "ledger.sqlite3",
            "--input",
            &input,
        ],
        0,
        "- status: `committed`\n\
         - deliveries: `received 4, appended 4, duplicate 0, conflicting 0, refused 0`\n\
         - ledger: `high-water sequence 4`\n\n",
        None,
    );
}

#[test]
fn ledger_verify_mismatch_shows_the_first_difference_and_says_it_on_stderr() {
    let scratch = Scratch::new();
    let input = fixture("utility_project/valid/mixed-levels.json");
    let append = scratch.run(
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
    assert_eq!(append.code, 0, "{}", append.transcript());
    let verified = scratch.run(
        &["utility-ledger", "verify", "--ledger", "ledger.sqlite3"],
        None,
    );
    assert_eq!(verified.code, 0, "{}", verified.transcript());
    assert!(verified.stdout.contains(
        "- checked: `deliveries 4, observation ids 4, subjects 4, partitions 1, batches 1, high-water sequence 4`\n"
    ), "{}", verified.stdout);
    // Tamper with a derived counter: verify recomputes it from the raw deliveries.
    let conn = rusqlite::Connection::open(scratch.path.join("ledger.sqlite3")).expect("ledger");
    conn.execute(
        "UPDATE partitions SET duplicate_count = duplicate_count + 1",
        [],
    )
    .expect("tamper");
    drop(conn);
    let out = scratch.run(
        &["utility-ledger", "verify", "--ledger", "ledger.sqlite3"],
        None,
    );
    assert_eq!(out.code, 2, "{}", out.transcript());
    assert!(
        out.stdout
            .contains("- status: `mismatch`\n- first_difference: `partition "),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .starts_with("reward-memory: mismatch: partition "),
        "{}",
        out.stderr
    );
    snap!("reasons_utility_ledger_verify_mismatch", out);
}

#[test]
fn ledger_project_of_an_invalid_partition_shows_the_rejection() {
    markdown(
        &[
            "utility-ledger",
            "project",
            "--ledger",
            "ledger.sqlite3",
            "--agent-id",
            "agent:a",
            "--project-id",
            "project:a",
            "--corpus-id",
            "corpus:a",
            "--surface-id",
            "surface:a",
            "--retrieval-snapshot-ref",
            "bad ref with spaces",
            "--policy-snapshot-ref",
            "policy:a",
        ],
        2,
        "- status: `rejected`\n- rejections: `observation_malformed`\n",
        Some("reward-memory: rejected: observation_malformed"),
    );
}
