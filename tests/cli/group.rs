//! Group-level behaviour: help, version, missing subcommand.

use crate::snap;
use crate::support::run;

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
