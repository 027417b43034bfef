//! `utility-project` (alias `utility-reduce`): fixture-driven projections and the input
//! rules of the command.

use crate::snap;
use crate::support::{Run, Scratch, file_stem as stem, fixture_files, run_with_file};

/// `utility-project` of `input.json` as JSON.
pub const PROJECT_INPUT_JSON: &[&str] = &[
    "utility-project",
    "--input",
    "input.json",
    "--format",
    "json",
];

fn project_file(path: &std::path::Path, extra: &[&str]) -> Run {
    let mut args = vec!["utility-project", "--input", "input.json"];
    args.extend_from_slice(extra);
    run_with_file(path, "input.json", &args)
}

#[test]
fn valid_fixtures_project_with_exit_zero() {
    let files = fixture_files("utility_project", "valid");
    assert!(!files.is_empty(), "fixtures/utility_project/valid is empty");
    for path in files {
        let run = project_file(&path, &["--format", "json"]);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
        assert_eq!(run.json()["ok"], true, "{}", path.display());
        snap!(format!("utility_project_valid_{}", stem(&path)), run);
    }
}

#[test]
fn invalid_fixtures_are_rejected_with_exit_two() {
    let files = fixture_files("utility_project", "invalid");
    assert!(
        !files.is_empty(),
        "fixtures/utility_project/invalid is empty"
    );
    for path in files {
        let run = project_file(&path, &["--format", "json"]);
        assert_eq!(run.code, 2, "{}: {}", path.display(), run.stdout);
        assert_eq!(run.json()["ok"], false, "{}", path.display());
        snap!(format!("utility_project_invalid_{}", stem(&path)), run);
    }
}

#[test]
fn default_format_is_markdown_with_status_only() {
    let path = crate::support::fixtures_dir().join("utility_project/valid/mixed-levels.json");
    snap!("utility_project_markdown", project_file(&path, &[]));
}

#[test]
fn utility_reduce_alias_prints_the_same_packet() {
    let path = crate::support::fixtures_dir().join("utility_project/valid/harmful-item.json");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let scratch = Scratch::new();
    scratch.write("input.json", &text);
    let a = scratch.run(PROJECT_INPUT_JSON, None);
    let b = scratch.run(
        &[
            "utility-reduce",
            "--input",
            "input.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(a.code, 0);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn reads_standard_input_with_a_dash() {
    let path = crate::support::fixtures_dir().join("utility_project/valid/empty.json");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let run = Scratch::new().run(
        &["utility-project", "--input", "-", "--format", "json"],
        Some(&text),
    );
    assert_eq!(run.code, 0);
    assert_eq!(run.json()["status"], "empty");
}

#[test]
fn missing_file_is_an_error_packet() {
    let run = Scratch::new().run(
        &[
            "utility-project",
            "--input",
            "absent.json",
            "--format",
            "json",
        ],
        None,
    );
    snap!("utility_project_missing_file", run);
}

#[test]
fn non_json_input_reports_the_decoder_position() {
    let scratch = Scratch::new();
    scratch.write("input.json", "{\"observations\": [,]}");
    snap!(
        "utility_project_not_json",
        scratch.run(PROJECT_INPUT_JSON, None)
    );
}

#[test]
fn more_than_1024_deliveries_are_rejected_not_reduced() {
    let path = crate::support::fixtures_dir().join("utility_project/valid/helpful-item.json");
    let mut input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("json");
    let one = input["observations"][0].clone();
    input["observations"] = serde_json::Value::Array(vec![one; 1025]);
    let scratch = Scratch::new();
    scratch.write("input.json", &input.to_string());
    let run = scratch.run(PROJECT_INPUT_JSON, None);
    assert_eq!(run.code, 2);
    let packet = run.json();
    assert_eq!(packet["status"], "rejected");
    assert_eq!(
        packet["rejections"],
        serde_json::json!([{"reason_codes": ["observation_malformed"]}])
    );
}

#[test]
fn own_projection_is_accepted_as_previous_projection_and_changes_nothing() {
    let path = crate::support::fixtures_dir().join("utility_project/valid/mixed-levels.json");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let scratch = Scratch::new();
    scratch.write("input.json", &text);
    let first = scratch.run(PROJECT_INPUT_JSON, None);
    assert_eq!(first.code, 0);
    let mut input: serde_json::Value = serde_json::from_str(&text).expect("json");
    input["previous_projection"] = first.json();
    scratch.write("chained.json", &input.to_string());
    let second = scratch.run(
        &[
            "utility-project",
            "--input",
            "chained.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(second.code, 0);
    assert_eq!(first.stdout, second.stdout);

    input["reducer_version"] = serde_json::json!("memory_utility_reducer_v1");
    scratch.write("other-version.json", &input.to_string());
    let third = scratch.run(
        &[
            "utility-project",
            "--input",
            "other-version.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(third.code, 2);
    assert_eq!(
        third.json()["rejections"],
        serde_json::json!([{"reason_codes": ["reducer_identity_mismatch"]}])
    );
}
