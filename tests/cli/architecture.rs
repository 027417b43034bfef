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

#[test]
fn pilot_meta_delegation_conforms_to_its_own_schema() {
    let out = run(&["architecture", "--format", "json"]);
    let packet = reward_memory::wire::json::parse(&out.stdout).expect("JSON packet");
    let delegation = packet.get("pilot_meta_delegation").expect("delegation");
    let schema = crate::support::schema_named("reward_memory_pilot_meta_delegation_v0");
    reward_memory::schema::check(delegation, &schema).expect("conforms");
    // The typed schema refuses what the old untyped map allowed.
    let mut changed = delegation.as_object().expect("object").clone();
    changed.insert("no_cross_agent_authority", false);
    let changed = reward_memory::wire::json::Value::Object(changed);
    assert!(reward_memory::schema::check(&changed, &schema).is_err());
}
