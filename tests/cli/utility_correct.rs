//! `utility-correct`: an owner correction is appended only under an authorized operator
//! checkpoint (with provenance `correct`, shown by `subject` and `export --provenance`);
//! a refused one leaves the ledger byte for byte as it was.

use std::path::Path;

use crate::support::{Run, Scratch, fixture_files, fixtures_dir};

const PARTITION: [&str; 12] = [
    "--agent-id",
    "agent:fixture",
    "--project-id",
    "project:dogfood",
    "--corpus-id",
    "dogfood_preferences",
    "--surface-id",
    "module.owned_surface",
    "--retrieval-snapshot-ref",
    "retrieval:fixture",
    "--policy-snapshot-ref",
    "policy:fixture",
];

fn valid_input() -> String {
    fixtures_dir()
        .join("utility_correct/valid/harmful.json")
        .to_string_lossy()
        .into_owned()
}

fn correct(scratch: &Scratch, input: &str, ledger: &str) -> Run {
    scratch.run(
        &[
            "utility-correct",
            "--input",
            input,
            "--ledger",
            ledger,
            "--format",
            "json",
        ],
        None,
    )
}

fn subject(scratch: &Scratch, ledger: &str) -> serde_json::Value {
    let mut args = vec![
        "utility-ledger",
        "subject",
        "--ledger",
        ledger,
        "--memory-ref-digest",
        "0123456789abcdef",
        "--format",
        "json",
    ];
    args.extend(PARTITION);
    let run = scratch.run(&args, None);
    assert_eq!(run.code, 0, "{}", run.transcript());
    run.json()
}

fn history(subject: &serde_json::Value) -> Vec<serde_json::Value> {
    subject["subjects"][0]["observation_history"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_correction_without_authority_appends_nothing() {
    let scratch = Scratch::new();
    let ledger = scratch.path.join("ledger.sqlite3");
    let ledger = ledger.to_string_lossy().into_owned();
    let first = correct(&scratch, &valid_input(), &ledger);
    assert_eq!(first.code, 0, "{}", first.transcript());
    let before = std::fs::read(&ledger).expect("ledger bytes");
    let invalid = fixture_files("utility_correct", "invalid");
    assert!(invalid.len() >= 3);
    for path in invalid {
        let run = correct(&scratch, &path.to_string_lossy(), &ledger);
        assert_eq!(run.code, 2, "{}: {}", path.display(), run.transcript());
        let error = run.json()["error"].as_str().unwrap_or_default().to_owned();
        assert!(
            error.starts_with("operator authority"),
            "{}: the operator-control wording, got {error}",
            path.display()
        );
        assert_eq!(
            std::fs::read(&ledger).expect("ledger bytes"),
            before,
            "{}: the ledger is unchanged",
            path.display()
        );
    }
    // A refused correction does not even create a ledger.
    let absent = scratch.path.join("absent.sqlite3");
    let path = fixtures_dir().join("utility_correct/invalid/authority-not-owner.json");
    let run = correct(&scratch, &path.to_string_lossy(), &absent.to_string_lossy());
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(!Path::new(&absent).exists());
}

#[test]
fn a_correction_with_authority_appends_one_owner_correction_with_provenance_correct() {
    let scratch = Scratch::new();
    let ledger = scratch.path.join("ledger.sqlite3");
    let ledger = ledger.to_string_lossy().into_owned();
    let run = correct(&scratch, &valid_input(), &ledger);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let receipt = run.json();
    assert_eq!(
        receipt["schema_version"],
        "memory_utility_correction_receipt_v0"
    );
    assert_eq!(receipt["status"], "appended");
    assert_eq!(receipt["evidence_basis"], "owner_correction");
    assert_eq!(receipt["attribution_level"], "item");
    assert_eq!(receipt["high_water_sequence"], 1);
    let provenance =
        serde_json::json!({"kind": "correct", "checkpoint_ref": "authority:fixture:correct"});
    assert_eq!(receipt["provenance"], provenance);

    let entries = history(&subject(&scratch, &ledger));
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["evidence_basis"], "owner_correction");
    assert_eq!(entries[0]["utility_label"], "harmful");
    assert_eq!(entries[0]["provenance"], provenance);

    let export = scratch.run(
        &[
            "utility-ledger",
            "export",
            "--ledger",
            &ledger,
            "--provenance",
        ],
        None,
    );
    assert_eq!(export.code, 0, "{}", export.transcript());
    let lines: Vec<serde_json::Value> = export
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0]["schema_version"],
        "memory_utility_ledger_delivery_v0"
    );
    assert_eq!(lines[0]["provenance"], provenance);
    assert_eq!(
        lines[0]["observation"]["evidence_basis"],
        "owner_correction"
    );

    // Plain export lines are the observations; appended elsewhere they are imports.
    let plain = scratch.run(&["utility-ledger", "export", "--ledger", &ledger], None);
    assert_eq!(plain.code, 0, "{}", plain.transcript());
    scratch.write("export.jsonl", &plain.stdout);
    let copy = scratch.path.join("copy.sqlite3");
    let copy = copy.to_string_lossy().into_owned();
    let appended = scratch.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            &copy,
            "--input",
            "export.jsonl",
        ],
        None,
    );
    assert_eq!(appended.code, 0, "{}", appended.transcript());
    let entries = history(&subject(&scratch, &copy));
    assert_eq!(
        entries[0]["provenance"],
        serde_json::json!({"kind": "import"})
    );

    // The same correction again is a duplicate: counted once.
    let again = correct(&scratch, &valid_input(), &ledger);
    assert_eq!(again.code, 0, "{}", again.transcript());
    assert_eq!(again.json()["status"], "duplicate");
    assert_eq!(history(&subject(&scratch, &ledger)).len(), 1);
    let verify = scratch.run(
        &[
            "utility-ledger",
            "verify",
            "--ledger",
            &ledger,
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(verify.code, 0, "{}", verify.transcript());
}
