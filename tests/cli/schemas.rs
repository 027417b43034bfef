//! Schemas: the committed files match the generated ones, and printed packets conform.

use std::path::Path;

use reward_memory::schema;

use crate::support::{Scratch, schema_named};

fn schemas_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

/// Generated schemas must equal the committed files; `UPDATE_SCHEMAS=1` rewrites them.
#[test]
fn committed_schemas_match_generated() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    let mut expected_names = Vec::new();
    for file in schema::all() {
        let path = schemas_dir().join(&file.file_name);
        let text = schema::render(&file.schema);
        expected_names.push(file.file_name.clone());
        if update {
            std::fs::create_dir_all(schemas_dir()).expect("schemas dir");
            std::fs::write(&path, &text).expect("write schema");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(file.file_name);
        }
    }
    assert!(
        stale.is_empty(),
        "schemas drifted (run UPDATE_SCHEMAS=1 cargo test): {stale:?}"
    );
    let mut committed: Vec<String> = std::fs::read_dir(schemas_dir())
        .expect("schemas dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".schema.json"))
        .collect();
    committed.sort();
    expected_names.sort();
    assert_eq!(
        committed, expected_names,
        "schemas/ holds files no schema generates"
    );
}

/// Runs a command with `--format json` and checks its packet against a schema.
pub fn assert_conforms(schema_version: &str, args: &[&str]) {
    let scratch = Scratch::new();
    let out = scratch.run(args, None);
    let packet = reward_memory::wire::json::parse(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON: {e}"));
    if let Err(err) = schema::check(&packet, &schema_named(schema_version)) {
        panic!("{args:?} does not conform to {schema_version}: {err}");
    }
}

#[test]
fn printed_packets_conform_to_their_schemas() {
    let cases: &[(&str, &[&str])] = &[
        (
            "reward_memory_architecture_v0",
            &["architecture", "--format", "json"],
        ),
        (
            "reward_memory_corpus_registry_v0",
            &["corpus-registry", "--format", "json"],
        ),
        (
            "reward_memory_error_v0",
            &["ingest-event", "--input", "absent.json", "--format", "json"],
        ),
        (
            "reward_memory_evaluation_v0",
            &["evaluate", "--format", "json"],
        ),
        (
            "reward_memory_error_v0",
            &[
                "dogfood-evaluate",
                "--input",
                "absent.json",
                "--format",
                "json",
            ],
        ),
        (
            "reward_memory_error_v0",
            &[
                "operator-control",
                "--input",
                "absent.json",
                "--action",
                "retire",
                "--control-ref",
                "control:x",
                "--reasoning-summary",
                "x",
                "--format",
                "json",
            ],
        ),
    ];
    for (schema_version, args) in cases {
        assert_conforms(schema_version, args);
    }
}

#[test]
fn stage5_packets_conform_to_their_schemas() {
    let fixture = |rel: &str| {
        crate::support::fixtures_dir()
            .join(rel)
            .to_string_lossy()
            .into_owned()
    };
    let batch = fixture("dogfood_evaluate/valid/ready-three-domains-two-controls.json");
    let hold = fixture("dogfood_evaluate/valid/hold-empty-batch.json");
    let edit = fixture("operator_control/valid/edit.json");
    let retire = fixture("operator_control/valid/retire.json");
    let control = |input: &str, action: &str| -> Vec<String> {
        let mut args: Vec<String> = [
            "operator-control",
            "--input",
            input,
            "--action",
            action,
            "--control-ref",
            "control:schema",
            "--reasoning-summary",
            "Schema check.",
            "--format",
            "json",
        ]
        .map(str::to_owned)
        .to_vec();
        if action == "edit" {
            args.extend(["--edited-content-summary".to_owned(), "Edited.".to_owned()]);
        }
        args
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "reward_memory_dogfood_batch_v1",
            ["dogfood-evaluate", "--input", &batch, "--format", "json"]
                .map(str::to_owned)
                .to_vec(),
        ),
        (
            "reward_memory_dogfood_batch_v1",
            ["dogfood-evaluate", "--input", &hold, "--format", "json"]
                .map(str::to_owned)
                .to_vec(),
        ),
        ("reward_memory_operator_control_v0", control(&edit, "edit")),
        (
            "reward_memory_operator_control_v0",
            control(&retire, "retire"),
        ),
    ];
    for (schema_version, args) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_conforms(schema_version, &args);
    }
}

#[test]
fn schema_check_rejects_a_packet_with_keys_out_of_order() {
    let packet = reward_memory::wire::json::parse(
        r#"{"schema_version": "reward_memory_error_v0", "ok": false, "status": "invalid_request", "error": "x"}"#,
    )
    .expect("valid");
    let err = schema::check(&packet, &schema_named("reward_memory_error_v0")).expect_err("order");
    assert!(err.contains("out of order"), "{err}");
}

/// Checks a printed packet against the schema its own `schema_version` names.
fn assert_packet_conforms(args: &[&str]) {
    let out = Scratch::new().run(args, None);
    let packet = reward_memory::wire::json::parse(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON: {e}"));
    let version = packet
        .get("schema_version")
        .and_then(|v| v.as_str())
        .unwrap_or_else(|| panic!("{args:?} printed no schema_version"))
        .to_owned();
    if let Err(err) = schema::check(&packet, &schema_named(&version)) {
        panic!("{args:?} does not conform to {version}: {err}");
    }
}

#[test]
fn utility_packets_conform_to_their_schemas() {
    for (sub, dir) in [
        ("utility-project", "utility_project"),
        ("utility-observe", "utility_observe"),
        ("utility-validate", "utility_validate"),
    ] {
        for kind in ["valid", "invalid"] {
            for path in crate::support::fixture_files(dir, kind) {
                let path = path.to_string_lossy().into_owned();
                assert_packet_conforms(&[sub, "--input", &path, "--format", "json"]);
            }
        }
    }
}

/// Every valid utility input fixture conforms to its input schema.
#[test]
fn valid_utility_inputs_conform_to_their_schemas() {
    for (dir, name) in [
        ("utility_project", "memory_utility_projection_input"),
        ("utility_observe", "memory_utility_observe_input"),
    ] {
        let input_schema = schema_named(name);
        let files = crate::support::fixture_files(dir, "valid");
        assert!(!files.is_empty(), "no fixtures in {dir}");
        for path in files {
            let text = std::fs::read_to_string(&path).expect("fixture");
            let input = reward_memory::wire::json::parse(&text).expect("fixture is JSON");
            if let Err(err) = schema::check(&input, &input_schema) {
                panic!("{} does not conform to {name}: {err}", path.display());
            }
        }
    }
}
