//! `operator-control`: authorized edit/retire decisions and every refusal of the
//! authority and consistency checks. Fixture inputs are named `<action>-<case>.json`.

use std::path::Path;

use crate::snap;
use crate::support::{Run, Scratch, assert_invalid_request, fixture_files, snake_stem as stem};

const EDITED: &str = "Prefer a focused current-artifact-verified change.";
const REASON: &str = "The owner narrowed the preference.";

fn action_of(path: &Path) -> &'static str {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name.starts_with("retire") {
        "retire"
    } else {
        "edit"
    }
}

/// Runs the control for a fixture with the standard flags for its action.
fn control(path: &Path, format: &str) -> Run {
    let action = action_of(path);
    let input = path.to_string_lossy().into_owned();
    let control_ref = format!("control:cli:{action}");
    let mut args = vec![
        "operator-control",
        "--input",
        &input,
        "--action",
        action,
        "--control-ref",
        &control_ref,
        "--reasoning-summary",
        REASON,
        "--format",
        format,
    ];
    if action == "edit" {
        args.extend(["--edited-content-summary", EDITED]);
    }
    Scratch::new().run(&args, None)
}

fn valid(name: &str) -> std::path::PathBuf {
    crate::support::fixtures_dir()
        .join("operator_control/valid")
        .join(name)
}

#[test]
fn every_valid_fixture_prepares_a_control() {
    let files = fixture_files("operator_control", "valid");
    assert!(files.len() >= 4);
    for path in files {
        let out = control(&path, "json");
        assert_eq!(out.code, 0, "{}: {}", path.display(), out.stdout);
        snap!(format!("operator_control_valid_{}", stem(&path)), out);
    }
}

#[test]
fn every_invalid_fixture_is_refused_with_an_error_packet() {
    let files = fixture_files("operator_control", "invalid");
    assert!(files.len() >= 30);
    for path in files {
        let out = control(&path, "json");
        assert_invalid_request(&out, &path);
        snap!(format!("operator_control_invalid_{}", stem(&path)), out);
    }
}

#[test]
fn edit_markdown_shows_decision_status_and_receipt_lines() {
    snap!(
        "operator_control_edit_markdown",
        control(&valid("edit.json"), "markdown")
    );
}

#[test]
fn retire_markdown_shows_decision_status_and_receipt_lines() {
    snap!(
        "operator_control_retire_markdown",
        control(&valid("retire.json"), "markdown")
    );
}

#[test]
fn retire_keeps_the_candidate_ref_and_both_digests_agree() {
    let packet = control(&valid("retire.json"), "json").json();
    let receipt = &packet["receipt"];
    assert_eq!(receipt["result_state"], "retired");
    assert_eq!(
        receipt["prior_candidate_ref_digest"],
        receipt["result_candidate_ref_digest"]
    );
    assert_eq!(
        packet["decision"]["persistence_next_step"],
        "caller_uses_declared_corpus_write_authority_then_readback"
    );
}

fn with_flags(flags: &[&str]) -> Run {
    let input = valid("edit.json").to_string_lossy().into_owned();
    let mut args = vec!["operator-control", "--input", &input, "--format", "json"];
    args.extend_from_slice(flags);
    Scratch::new().run(&args, None)
}

#[test]
fn an_unsafe_control_ref_is_refused() {
    snap!(
        "operator_control_invalid_flag_control_ref",
        with_flags(&[
            "--action",
            "edit",
            "--control-ref",
            "control ref",
            "--reasoning-summary",
            REASON,
            "--edited-content-summary",
            EDITED,
        ])
    );
}

#[test]
fn a_reasoning_summary_with_a_local_path_is_refused() {
    snap!(
        "operator_control_invalid_flag_reasoning_summary",
        with_flags(&[
            "--action",
            "edit",
            "--control-ref",
            "control:cli:edit",
            "--reasoning-summary",
            "see /Users/me/notes.txt",
            "--edited-content-summary",
            EDITED,
        ])
    );
}

#[test]
fn an_edit_without_edited_content_summary_is_refused() {
    snap!(
        "operator_control_invalid_flag_edited_content_summary_missing",
        with_flags(&[
            "--action",
            "edit",
            "--control-ref",
            "control:cli:edit",
            "--reasoning-summary",
            REASON,
        ])
    );
}

#[test]
fn an_unknown_action_is_an_argument_error() {
    let out = with_flags(&[
        "--action",
        "delete",
        "--control-ref",
        "c:1",
        "--reasoning-summary",
        "x",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("--action"), "{}", out.stderr);
}

#[test]
fn input_can_come_from_stdin() {
    let text = std::fs::read_to_string(valid("edit.json")).expect("fixture");
    let out = Scratch::new().run(
        &[
            "operator-control",
            "--input",
            "-",
            "--action",
            "edit",
            "--control-ref",
            "control:cli:edit",
            "--reasoning-summary",
            REASON,
            "--edited-content-summary",
            EDITED,
            "--format",
            "json",
        ],
        Some(&text),
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        out.json()["receipt"]["result_candidate_ref_digest"],
        "3b7623f3ea4c4ff4"
    );
}

#[test]
fn valid_inputs_and_printed_controls_conform_to_their_schemas() {
    let named = |name: &str| {
        reward_memory::schema::all()
            .into_iter()
            .find(|f| f.file_name == format!("{name}.schema.json"))
            .unwrap_or_else(|| panic!("no schema {name}"))
            .schema
    };
    let input_schema = named("reward_memory_operator_control_input");
    let packet_schema = named("reward_memory_operator_control_v0");
    for path in fixture_files("operator_control", "valid") {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let input = reward_memory::wire::json::parse(&text).expect("fixture is JSON");
        if let Err(err) = reward_memory::schema::check(&input, &input_schema) {
            panic!(
                "{} does not conform to the input schema: {err}",
                path.display()
            );
        }
        let printed =
            reward_memory::wire::json::parse(&control(&path, "json").stdout).expect("packet JSON");
        if let Err(err) = reward_memory::schema::check(&printed, &packet_schema) {
            panic!("{} packet does not conform: {err}", path.display());
        }
    }
}

#[test]
fn a_printed_receipt_is_accepted_by_dogfood_evaluate() {
    let receipt = control(&valid("edit.json"), "json").json()["receipt"].clone();
    let scratch = Scratch::new();
    scratch.write(
        "batch.json",
        &serde_json::json!({"observations": [], "operator_controls": [receipt]}).to_string(),
    );
    let out = scratch.run(
        &[
            "dogfood-evaluate",
            "--input",
            "batch.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(out.code, 2);
    assert_eq!(out.json()["operator_controls"], serde_json::json!(["edit"]));
}

/// Runs a retirement of `retire.json` after `edit` changes its reviewed record.
fn retire_with(edit: impl FnOnce(&mut serde_json::Value)) -> Run {
    let mut input = crate::support::read_json(&valid("retire.json"));
    edit(&mut input["reviewed_record"]["record"]);
    let scratch = Scratch::new();
    scratch.write("control.json", &input.to_string());
    scratch.run(
        &[
            "operator-control",
            "--input",
            "control.json",
            "--action",
            "retire",
            "--control-ref",
            "control:cli:retire",
            "--reasoning-summary",
            REASON,
            "--format",
            "json",
        ],
        None,
    )
}

#[test]
fn a_record_past_the_candidate_bounds_is_refused_instead_of_echoed() {
    let at_limit = retire_with(|r| r["content_summary"] = "a".repeat(500).into());
    assert_eq!(at_limit.code, 0, "{}", at_limit.stdout);
    let over = retire_with(|r| r["content_summary"] = "é".repeat(501).into());
    assert_eq!(over.code, 2);
    assert_eq!(
        over.json()["error"],
        "reviewed record content_summary is outside the candidate contract bounds"
    );
    let nested = retire_with(|r| r["reasoning"]["summary"] = "x".repeat(100_000).into());
    assert_eq!(
        nested.json()["error"],
        "reviewed record reasoning is outside the candidate contract bounds"
    );
    let extra = retire_with(|r| r["notes"] = "x".repeat(501).into());
    assert_eq!(
        extra.json()["error"],
        "reviewed record extra field is outside the candidate contract bounds"
    );
    let short_extra = retire_with(|r| r["notes"] = "kept".into());
    assert_eq!(short_extra.code, 0, "{}", short_extra.stdout);
    assert_eq!(short_extra.json()["decision"]["record"]["notes"], "kept");
}
