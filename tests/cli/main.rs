//! The one integration test binary: each subcommand has a file of its own.

mod support;

mod apply;
mod architecture;
mod arguments;
mod candidate_review;
mod completions;
mod corpus_registry;
mod detail;
mod dogfood_evaluate;
mod embedded_search;
mod embedded_store;
mod error_text;
mod evaluate;
mod experiment_status;
mod group;
mod health_check;
mod ingest_event;
mod init;
mod layers;
mod lifecycle;
mod man;
mod mcp;
mod openviking;
mod operator_control;
mod rank_evaluate;
mod rank_prior;
mod readme;
mod reasons;
mod recall;
mod route_check;
mod schemas;
mod traffic_log;
mod trust;
mod utility_attribute;
mod utility_correct;
mod utility_ledger;
mod utility_observe;
mod utility_project;
mod utility_validate;

/// Every `.rs` file under `tests/cli` must be declared as a module above.
#[test]
fn every_test_file_is_declared() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let main = std::fs::read_to_string(dir.join("main.rs")).expect("main.rs is readable");
    let entries = std::fs::read_dir(&dir).expect("tests/cli is readable");
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if stem == "main" {
            continue;
        }
        assert!(
            main.contains(&format!("mod {stem};")),
            "tests/cli/{stem}.rs is not declared in tests/cli/main.rs"
        );
    }
}
