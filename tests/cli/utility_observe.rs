//! `utility-observe`: building one observation from receipt, outcome, context and
//! proposal.

use crate::snap;
use crate::support::{Run, Scratch, file_stem as stem, fixture_files, run_with_file};

fn observe_file(path: &std::path::Path) -> Run {
    let args = [
        "utility-observe",
        "--input",
        "input.json",
        "--format",
        "json",
    ];
    run_with_file(path, "input.json", &args)
}

#[test]
fn valid_fixtures_build_an_observation() {
    let files = fixture_files("utility_observe", "valid");
    assert!(!files.is_empty());
    for path in files {
        let run = observe_file(&path);
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stdout);
        assert_eq!(
            run.json()["schema_version"],
            "memory_utility_observation_v0"
        );
        snap!(format!("utility_observe_valid_{}", stem(&path)), run);
    }
}

#[test]
fn invalid_fixtures_print_an_invalid_request_packet() {
    let files = fixture_files("utility_observe", "invalid");
    assert!(!files.is_empty());
    for path in files {
        let run = observe_file(&path);
        crate::support::assert_invalid_request(&run, &path);
        snap!(format!("utility_observe_invalid_{}", stem(&path)), run);
    }
}

#[test]
fn built_observation_reduces_to_a_ready_projection() {
    let path =
        crate::support::fixtures_dir().join("utility_observe/valid/set-neutral-deterministic.json");
    let observation = observe_file(&path).json();
    let input = serde_json::json!({
        "observations": [observation],
        "scope": observation["scope"],
        "retrieval_snapshot_ref": "retrieval:stage2",
        "policy_snapshot_ref": "policy:stage2",
    });
    let scratch = Scratch::new();
    scratch.write("input.json", &input.to_string());
    let run = scratch.run(crate::utility_project::PROJECT_INPUT_JSON, None);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let packet = run.json();
    assert_eq!(packet["set_subject_count"], 1);
    assert_eq!(packet["subjects"][0]["effective_utility_label"], "neutral");
}
