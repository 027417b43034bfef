//! `architecture`: the static Stage-0 packet.

use crate::snap;
use crate::support::run;

#[test]
fn architecture_markdown_is_the_default() {
    snap!("architecture_markdown", run(&["architecture"]));
}

#[test]
fn architecture_json_lists_five_classes() {
    let out = run(&["architecture", "--format", "json"]);
    assert_eq!(out.code, 0);
    let packet = out.json();
    assert_eq!(packet["schema_version"], "reward_memory_architecture_v0");
    assert_eq!(packet["memory_classes"].as_array().map(Vec::len), Some(5));
    assert!(out.stdout.ends_with("}\n"));
}

#[test]
fn subcommand_format_wins_over_global_format() {
    let out = run(&["--format", "markdown", "architecture", "--format", "json"]);
    assert!(out.stdout.starts_with('{'));
}

#[test]
fn global_option_after_subcommand_is_an_argument_error() {
    snap!(
        "architecture_registry_after_subcommand",
        run(&["architecture", "--registry", "x.json"])
    );
}
