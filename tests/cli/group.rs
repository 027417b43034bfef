//! Group-level behaviour: help, version, missing subcommand.

use crate::snap;
use crate::support::{Scratch, run};

#[test]
fn no_subcommand_is_an_argument_error() {
    let out = run(&[]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("a subcommand is required"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1);
}

#[test]
fn version_prints_the_crate_version_commit_and_reference() {
    let mut out = run(&["--version"]);
    // The commit is the checkout's HEAD at build time (`unknown` outside git).
    out.stdout = out
        .stdout
        .replace(env!("REWARD_MEMORY_GIT_COMMIT"), "[commit]");
    snap!("group_version", out);
}

#[test]
fn every_subcommand_has_help() {
    for sub in [
        "architecture",
        "corpus-registry",
        "health-check",
        "candidate-review",
        "route-check",
        "experiment-status",
        "ingest-event",
        "evaluate",
        "dogfood-evaluate",
        "operator-control",
        "utility-project",
        "utility-reduce",
        "utility-observe",
        "utility-validate",
    ] {
        let out = run(&[sub, "--help"]);
        assert_eq!(out.code, 0, "{sub} --help");
        assert!(out.stdout.contains("Usage: reward-memory"), "{sub} --help");
    }
}

#[test]
fn unknown_argument_is_an_argument_error() {
    snap!("group_unknown_argument", run(&["architecture", "--bogus"]));
}

/// Every command that reads `--input`, with the other arguments it requires.
const INPUT_COMMANDS: [&[&str]; 9] = [
    &["ingest-event"],
    &["dogfood-evaluate"],
    &[
        "operator-control",
        "--action",
        "retire",
        "--control-ref",
        "control:x",
        "--reasoning-summary",
        "stale",
    ],
    &["utility-project"],
    &["utility-observe"],
    &["utility-validate"],
    &["recall"],
    &["apply"],
    &["rank-prior"],
];

#[test]
fn every_input_command_refuses_a_file_over_max_input_bytes() {
    let scratch = Scratch::new();
    let body = format!("{{\"pad\": \"{}\"}}", "x".repeat(100));
    scratch.write("in.json", &body);
    let size = body.len().to_string();
    for args in INPUT_COMMANDS {
        let mut argv = args.to_vec();
        argv.extend([
            "--input",
            "in.json",
            "--max-input-bytes",
            "100",
            "--format",
            "json",
        ]);
        let out = scratch.run(&argv, None);
        assert_eq!(out.code, 2, "{args:?}");
        assert_eq!(
            out.json()["error"],
            "input JSON is larger than the 100-byte limit; send a smaller input or raise --max-input-bytes",
            "{args:?}"
        );
        // At the limit the document is parsed (and judged on its content).
        let mut argv = args.to_vec();
        argv.extend([
            "--input",
            "in.json",
            "--max-input-bytes",
            &size,
            "--format",
            "json",
        ]);
        let out = scratch.run(&argv, None);
        assert!(
            !out.stdout.contains("-byte limit"),
            "{args:?}: {}",
            out.stdout
        );
    }
}

#[test]
fn stdin_over_max_input_bytes_is_refused_with_an_error_packet() {
    let scratch = Scratch::new();
    let big = format!("[{}]", vec!["0"; 100_000].join(","));
    snap!(
        "group_stdin_over_max_input_bytes",
        scratch.run(
            &[
                "utility-project",
                "--input",
                "-",
                "--max-input-bytes",
                "1000",
                "--format",
                "json"
            ],
            Some(&big),
        )
    );
}

#[test]
fn max_input_bytes_must_be_positive() {
    let out = run(&["utility-project", "--input", "-", "--max-input-bytes", "0"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--max-input-bytes"), "{}", out.stderr);
}

/// `--format jsonl`: the packet of `--format json`, as exactly one newline-terminated line.
fn assert_one_line_of(jsonl: &crate::support::Run, json: &crate::support::Run) {
    assert_eq!(jsonl.code, json.code);
    assert!(jsonl.stdout.ends_with('\n'), "{}", jsonl.stdout);
    assert_eq!(jsonl.stdout.lines().count(), 1, "{}", jsonl.stdout);
    assert_eq!(jsonl.stdout.matches('\n').count(), 1);
    assert!(json.stdout.lines().count() > 1);
    assert_eq!(jsonl.json(), json.json());
}

#[test]
fn jsonl_prints_every_packet_as_one_line() {
    let scratch = Scratch::new();
    let commands: [&[&str]; 6] = [
        &["architecture"],
        &["corpus-registry"],
        // (`evaluate` is left out: its latencies differ from run to run.)
        &["candidate-review"],
        &["health-check", "--case", "stale"],
        // An error packet (exit 2).
        &["ingest-event", "--input", "missing.json"],
        &["utility-ledger", "verify", "--ledger", "missing.sqlite3"],
    ];
    for args in commands {
        let mut json = args.to_vec();
        json.extend(["--format", "json"]);
        let json = scratch.run(&json, None);
        let mut jsonl = args.to_vec();
        jsonl.extend(["--format", "jsonl"]);
        assert_one_line_of(&scratch.run(&jsonl, None), &json);
        // The global option too.
        let mut global = vec!["--format", "jsonl"];
        global.extend_from_slice(args);
        assert_one_line_of(&scratch.run(&global, None), &json);
    }
}

#[test]
fn environment_variables_set_the_defaults_and_flags_win() {
    let scratch = Scratch::new();
    // REWARD_MEMORY_FORMAT is the global --format; any --format wins.
    let env = [("REWARD_MEMORY_FORMAT", "jsonl")];
    let out = scratch.run_env(&["architecture"], None, &env);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    let out = scratch.run_env(&["architecture", "--format", "markdown"], None, &env);
    assert!(out.stdout.starts_with("# Reward Memory"), "{}", out.stdout);
    let out = scratch.run_env(&["--format", "json", "architecture"], None, &env);
    assert!(out.stdout.lines().count() > 1);
    // REWARD_MEMORY_REGISTRY is --registry: it wins over $LOOPX_REGISTRY, a flag over it.
    let registry = crate::support::read_json(
        &crate::support::fixtures_dir().join("ingest_event/embedded/registry.json"),
    );
    scratch.write("registry.json", &crate::support::pretty(&registry));
    let status = |env: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["experiment-status", "--goal-id", "embedded-demo"];
        args.extend(["--agent-id", "pilot", "--format", "json"]);
        args.extend_from_slice(extra);
        scratch.run_env(&args, None, env).json()
    };
    let found = status(&[("REWARD_MEMORY_REGISTRY", "registry.json")], &[]);
    assert_eq!(found["goal_id"], "embedded-demo", "{found}");
    assert_eq!(
        found["schema_version"],
        "reward_memory_experiment_status_v1"
    );
    let flag = status(
        &[("REWARD_MEMORY_REGISTRY", "registry.json")],
        &["--registry", "other.json"],
    );
    assert!(
        flag["error"]
            .as_str()
            .is_some_and(|e| e.contains("other.json")),
        "{flag}"
    );
    // REWARD_MEMORY_RUNTIME_ROOT is --runtime-root: its registry.global.json is found.
    scratch.write(
        "rt/registry.global.json",
        &crate::support::pretty(&registry),
    );
    let found = status(&[("REWARD_MEMORY_RUNTIME_ROOT", "rt")], &[]);
    assert_eq!(found["goal_id"], "embedded-demo", "{found}");
    let flag = status(
        &[("REWARD_MEMORY_RUNTIME_ROOT", "rt")],
        &["--runtime-root", "elsewhere"],
    );
    assert!(
        flag["error"]
            .as_str()
            .is_some_and(|e| e.contains("registry")),
        "{flag}"
    );
}
