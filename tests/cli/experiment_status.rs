//! `experiment-status`: registry routes, goal policy statuses and config v1 validation.

use serde_json::{Value, json};

use crate::ingest_event::conforms;
use crate::snap;
use crate::support::{Scratch, fixtures_dir, pretty, read_json};

fn fixture(rel: &str) -> Value {
    read_json(&fixtures_dir().join("experiment_status").join(rel))
}

/// A scratch dir with `registry.json` (goal `reward-memory-goal`, repo `project`) and,
/// when given, the experiment config at the goal's config pointer.
fn setup(edit_registry: impl FnOnce(&mut Value), config: Option<Value>) -> Scratch {
    let scratch = Scratch::new();
    let mut registry = fixture("valid/registry.json");
    edit_registry(&mut registry);
    scratch.write("registry.json", &pretty(&registry));
    if let Some(config) = config {
        scratch.write(
            "project/.loopx/config/reward-memory/experiment.json",
            &pretty(&config),
        );
    }
    scratch
}

fn policy(registry: &mut Value) -> &mut Value {
    &mut registry["goals"][0]["control_plane"]["reward_memory"]
}

const STATUS: &[&str] = &[
    "--registry",
    "registry.json",
    "experiment-status",
    "--goal-id",
    "reward-memory-goal",
    "--agent-id",
    "pilot",
    "--format",
    "json",
];

#[test]
fn available_single_surface_names_adapter_and_corpus() {
    let s = setup(|_| {}, Some(fixture("valid/experiment.json")));
    let out = s.run(STATUS, None);
    assert_eq!(out.json()["corpus_id"], "openviking_patch_policy");
    conforms("reward_memory_experiment_status_v1", &out);
    snap!("experiment_status_available", out);
}

#[test]
fn available_two_surfaces_lists_sorted_profiles_without_single_route_keys() {
    let s = setup(|_| {}, Some(fixture("valid/experiment-two-surfaces.json")));
    let out = s.run(STATUS, None);
    assert_eq!(out.json()["status"], "available");
    assert!(out.json().get("adapter").is_none());
    conforms("reward_memory_experiment_status_v1", &out);
    snap!("experiment_status_available_two_surfaces", out);
}

#[test]
fn available_markdown_shows_status_and_corpus_count() {
    let s = setup(|_| {}, Some(fixture("valid/experiment.json")));
    let mut args = STATUS.to_vec();
    args.truncate(STATUS.len() - 2);
    snap!("experiment_status_available_markdown", s.run(&args, None));
}

#[test]
fn global_local_registry_role_is_a_shared_runtime() {
    let s = setup(
        |r| r["registry_role"] = json!(" global-local "),
        Some(fixture("valid/experiment.json")),
    );
    let out = s.run(STATUS, None);
    assert_eq!(
        out.json()["config_runtime_route"]["runtime_scope"],
        "shared_runtime"
    );
}

#[test]
fn string_true_does_not_enable_the_experiment() {
    let s = setup(
        |r| policy(r)["enabled"] = json!("true"),
        Some(fixture("valid/experiment.json")),
    );
    snap!("experiment_status_disabled", s.run(STATUS, None));
}

#[test]
fn agent_outside_the_allowlist_is_not_enabled() {
    let s = setup(
        |r| policy(r)["enabled_agents"] = json!(["meta"]),
        Some(fixture("valid/experiment.json")),
    );
    let out = s.run(STATUS, None);
    conforms("reward_memory_experiment_status_v1", &out);
    snap!("experiment_status_agent_not_enabled", out);
}

#[test]
fn empty_config_pointer_is_config_missing() {
    let s = setup(|r| policy(r)["config_path"] = json!("  "), None);
    snap!("experiment_status_config_missing", s.run(STATUS, None));
}

#[test]
fn absent_config_file_is_config_invalid() {
    let s = setup(|_| {}, None);
    let out = s.run(STATUS, None);
    conforms("reward_memory_experiment_status_v1", &out);
    snap!("experiment_status_config_absent", out);
}

#[test]
fn v0_and_unknown_fields_in_config_are_config_invalid() {
    let s = setup(|_| {}, Some(fixture("invalid/experiment-v0.json")));
    assert_eq!(s.run(STATUS, None).json()["status"], "config_invalid");
    let mut config = fixture("valid/experiment.json");
    config["surfaces"][0]["comment"] = json!("raw");
    let s = setup(|_| {}, Some(config));
    assert_eq!(s.run(STATUS, None).json()["status"], "config_invalid");
    let mut config = fixture("valid/experiment.json");
    config["automation"]["fail_open"] = json!(false);
    let s = setup(|_| {}, Some(config));
    assert_eq!(s.run(STATUS, None).json()["status"], "config_invalid");
    let mut config = fixture("valid/experiment.json");
    config["project_provider_binding"]["corpus_scopes"][0]["scope_ref"] =
        json!("viking://resources/elsewhere");
    let s = setup(|_| {}, Some(config));
    assert_eq!(
        s.run(STATUS, None).json()["status"],
        "config_invalid",
        "a scope ref that does not match the corpus digest"
    );
}

#[test]
fn registry_is_found_through_env_then_cwd_then_runtime_root() {
    let s = setup(|_| {}, Some(fixture("valid/experiment.json")));
    let args = &STATUS[2..];
    // No --registry, no env, no .loopx/registry.json, no global registry: reported.
    snap!("experiment_status_no_registry_anywhere", s.run(args, None));
    // The runtime root's global registry.
    let registry = std::fs::read_to_string(s.path.join("registry.json")).expect("registry");
    s.write("rt/registry.global.json", &registry);
    let mut with_root = vec!["--runtime-root", "rt"];
    with_root.extend_from_slice(args);
    assert_eq!(s.run(&with_root, None).json()["status"], "available");
    // The working directory's .loopx/registry.json wins over the global one.
    let mut local: Value = serde_json::from_str(&registry).expect("json");
    policy(&mut local)["enabled"] = json!(false);
    s.write(".loopx/registry.json", &pretty(&local));
    assert_eq!(s.run(&with_root, None).json()["status"], "disabled");
}

#[test]
fn loopx_registry_env_is_used_without_fallback() {
    let s = setup(|_| {}, Some(fixture("valid/experiment.json")));
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("reward-memory");
    let out = cmd
        .current_dir(&s.path)
        .env("HOME", s.path.join(".home"))
        .env("LOOPX_REGISTRY", "registry.json")
        .args(&STATUS[2..])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let packet: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(packet["status"], "available");
}

#[test]
fn unknown_goal_and_unregistered_agent_are_request_errors() {
    let s = setup(|_| {}, Some(fixture("valid/experiment.json")));
    let mut args = STATUS.to_vec();
    args[4] = "missing-goal";
    snap!("experiment_status_unknown_goal", s.run(&args, None));
    let mut args = STATUS.to_vec();
    args[6] = "ghost";
    snap!("experiment_status_unregistered_agent", s.run(&args, None));
}

#[test]
fn invalid_agent_id_is_rejected_before_the_registry_is_read() {
    let s = Scratch::new();
    let mut args = STATUS.to_vec();
    args[6] = "9 bad/agent";
    snap!("experiment_status_invalid_agent_id", s.run(&args, None));
}

#[test]
fn registry_problems_are_request_errors_not_crashes() {
    let s = Scratch::new();
    snap!("experiment_status_registry_absent", s.run(STATUS, None));
    s.write("registry.json", "[]");
    snap!("experiment_status_registry_array", s.run(STATUS, None));
    s.write("registry.json", "{'goals': []}");
    snap!("experiment_status_registry_not_json", s.run(STATUS, None));
}

#[test]
fn numeric_enabled_agents_is_a_request_error() {
    let s = setup(
        |r| policy(r)["enabled_agents"] = json!(7),
        Some(fixture("valid/experiment.json")),
    );
    snap!(
        "experiment_status_enabled_agents_number",
        s.run(STATUS, None)
    );
}

#[test]
fn config_invalid_keeps_the_packet_and_names_the_file_and_the_field_on_stderr() {
    let mut config = fixture("valid/experiment.json");
    config["surfaces"][0]["adapter"] = json!("bogus");
    let s = setup(|_| {}, Some(config));
    let out = s.run(STATUS, None);
    assert_eq!(out.code, 0);
    let packet = out.json();
    assert_eq!(packet["status"], "config_invalid");
    assert_eq!(packet["reason_code"], "config_unavailable_or_invalid");
    conforms("reward_memory_experiment_status_v1", &out);
    assert!(
        out.stderr.contains(
            "reward-memory: warning: the experiment config project/.loopx/config/reward-memory/experiment.json is not valid: reward-memory experiment adapter must be one of"
        ),
        "{}",
        out.stderr
    );
    // An absent file says so.
    let s = setup(|_| {}, None);
    let out = s.run(STATUS, None);
    assert_eq!(out.json()["status"], "config_invalid");
    assert!(
        out.stderr
            .contains("is not valid: cannot read it: [Errno 2] No such file or directory"),
        "{}",
        out.stderr
    );
    // The configured recall's refusal names them too.
    let mut config = fixture("valid/experiment.json");
    config["surfaces"][0]["adapter"] = json!("bogus");
    let s = setup(|_| {}, Some(config));
    let mut args = STATUS[..3].to_vec();
    args[2] = "recall";
    args.extend([
        "--goal-id",
        "reward-memory-goal",
        "--agent-id",
        "pilot",
        "--query",
        "q",
        "--query-summary",
        "s",
        "--format",
        "json",
    ]);
    let out = s.run(&args, None);
    assert_eq!(out.code, 2);
    let error = out.json()["error"].as_str().unwrap_or_default().to_owned();
    assert!(
        error.contains("config_invalid (the experiment config ") && error.contains("adapter"),
        "{error}"
    );
}
