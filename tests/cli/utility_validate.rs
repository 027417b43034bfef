//! `utility-validate`: the readback validator on reference projections and on tampered
//! ones.

use crate::snap;
use crate::support::{Run, Scratch, file_stem as stem, fixture_files, run_with_file};

/// `utility-validate` of `projection.json` as JSON.
const VALIDATE_PROJECTION_JSON: &[&str] = &[
    "utility-validate",
    "--input",
    "projection.json",
    "--format",
    "json",
];

fn validate_file(path: &std::path::Path) -> Run {
    let args = [
        "utility-validate",
        "--input",
        "projection.json",
        "--format",
        "json",
    ];
    run_with_file(path, "projection.json", &args)
}

#[test]
fn reference_projections_read_back_as_valid() {
    let files = fixture_files("utility_validate", "valid");
    assert!(!files.is_empty());
    for path in files {
        let run = validate_file(&path);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
        assert_eq!(
            run.json(),
            serde_json::json!({
                "ok": true,
                "schema_version": "memory_utility_projection_validation_v0",
                "status": "valid",
                "error": null,
            })
        );
    }
}

#[test]
fn tampered_projections_report_the_first_violated_rule() {
    let files = fixture_files("utility_validate", "invalid");
    assert!(!files.is_empty());
    for path in files {
        let run = validate_file(&path);
        assert_eq!(run.code, 2, "{}: {}", path.display(), run.stdout);
        assert_eq!(run.json()["status"], "invalid");
        snap!(format!("utility_validate_invalid_{}", stem(&path)), run);
    }
}

#[test]
fn every_projection_we_emit_reads_back_as_valid() {
    for path in fixture_files("utility_project", "valid") {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let scratch = Scratch::new();
        scratch.write("input.json", &text);
        let projection = scratch.run(crate::utility_project::PROJECT_INPUT_JSON, None);
        scratch.write("projection.json", &projection.stdout);
        let run = scratch.run(VALIDATE_PROJECTION_JSON, None);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
    }
}

#[test]
fn non_object_input_is_an_error_packet() {
    let scratch = Scratch::new();
    scratch.write("projection.json", "[]");
    snap!(
        "utility_validate_not_object",
        scratch.run(&["utility-validate", "--input", "projection.json"], None)
    );
}
