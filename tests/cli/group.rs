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
