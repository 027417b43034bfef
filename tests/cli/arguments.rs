//! Argument errors and help texts: one line on stderr that keeps clap's suggestions, never
//! an empty `(allowed: )`, a hint for a global option typed after its subcommand, and help
//! that names every option a command reads.

use crate::snap;
use crate::support::{Scratch, fixtures_dir, run};

/// Asserts an argument error: exit 2, empty stdout, one stderr line; returns that line.
fn argument_error(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.code, 2, "{}", out.transcript());
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    out.stderr.trim_end().to_owned()
}

#[test]
fn a_mistyped_subcommand_keeps_clap_suggestion() {
    let line = argument_error(&["evalute"]);
    assert!(
        line.starts_with("reward-memory: error: unrecognized subcommand 'evalute'"),
        "{line}"
    );
    assert!(line.contains("'evaluate'"), "{line}");
    snap!("arguments_mistyped_subcommand", run(&["evalute"]));
}

#[test]
fn a_mistyped_option_keeps_clap_suggestion() {
    let line = argument_error(&["architecture", "--formt", "json"]);
    assert!(
        line.ends_with("; tip: a similar argument exists: '--format'"),
        "{line}"
    );
}

#[test]
fn a_missing_value_lists_no_empty_allowed_values() {
    let line = argument_error(&["ingest-event", "--input"]);
    assert_eq!(
        line,
        "reward-memory: error: a value is required for '--input <FILE>' but none was supplied"
    );
}

#[test]
fn an_invalid_choice_names_the_allowed_values_once() {
    let line = argument_error(&["health-check", "--case", "bogus"]);
    assert_eq!(line.matches("retrieval-verified").count(), 1, "{line}");
}

#[test]
fn a_global_option_after_a_subcommand_that_does_not_read_it_gets_a_hint() {
    let line = argument_error(&["architecture", "--registry", "r.json"]);
    assert!(
        line.contains(
            "tip: --registry is a global option: give it before the subcommand \
             (only health-check, experiment-status, ingest-event, operator-control, recall, apply, \
             rank-prior and mcp read it, and also accept it after their name)"
        ),
        "{line}"
    );
    let line = argument_error(&["man", "--runtime-root=x"]);
    assert!(
        line.contains("tip: --runtime-root is a global option"),
        "{line}"
    );
    // A command group counts as a reader when its leaves read it.
    assert!(
        line.contains("utility-ledger, utility-correct and mcp read it"),
        "{line}"
    );
    assert!(!line.contains("as a value"), "{line}");
}

#[test]
fn route_options_after_the_subcommand_are_accepted_and_win() {
    let scratch = Scratch::new();
    let registry = fixtures_dir().join("ingest_event/embedded/registry.json");
    let registry = registry.to_string_lossy();
    fn status<'a>(args: &[&'a str]) -> Vec<&'a str> {
        let mut full = args.to_vec();
        full.extend([
            "experiment-status",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "meta",
            "--format",
            "json",
        ]);
        full
    }
    let before = scratch.run(&status(&["--registry", &registry]), None);
    assert_eq!(before.code, 0, "{}", before.transcript());
    let mut after_args = status(&[]);
    after_args.extend(["--registry", &registry]);
    let after = scratch.run(&after_args, None);
    assert_eq!(after.stdout, before.stdout);
    // Given twice, the one after the subcommand wins.
    let mut both = status(&["--registry", "absent.json"]);
    both.extend(["--registry", &registry]);
    assert_eq!(scratch.run(&both, None).stdout, before.stdout);
}

#[test]
fn top_level_help_lists_every_exit_status() {
    let out = run(&["--help"]);
    assert_eq!(out.code, 0);
    for needle in [
        "Exit status:",
        "0  success",
        "1  the output could not be written",
        "2  argument error",
        "2  invalid request: stdout carries a reward_memory_error_v0 packet",
        "evaluate",
        "dogfood-evaluate",
        "utility-project (rejected)",
        "utility-validate (invalid)",
        "rank-evaluate (hold)",
        "utility-ledger append (committed_with_refusals",
        "utility-ledger verify (mismatch)",
        "utility-ledger project (rejected partition)",
        "--detail",
    ] {
        assert!(out.stdout.contains(needle), "help lacks {needle}");
    }
}

#[test]
fn ingest_and_experiment_help_name_the_route_options_they_read() {
    for sub in ["ingest-event", "experiment-status"] {
        let out = run(&[sub, "--help"]);
        assert_eq!(out.code, 0);
        for needle in [
            "--registry <PATH>",
            "--runtime-root <DIR>",
            "$LOOPX_REGISTRY",
            ".loopx/registry.json",
            "registry.global.json",
            "~/.codex/loopx",
        ] {
            assert!(out.stdout.contains(needle), "{sub} --help lacks {needle}");
        }
    }
    let out = run(&["ingest-event", "--help"]);
    assert!(
        out.stdout
            .contains("RUNTIME_ROOT/reward-memory/embedded.sqlite3")
    );
}

#[test]
fn every_packet_subcommand_help_names_format_and_detail() {
    // Built: the subcommands' own arguments and leaves are declared on demand.
    let cli = reward_memory::cli::full_command();
    for sub in reward_memory::cli::subcommand_names() {
        // Text commands and the MCP server (JSON-RPC on stdio) print no packet.
        if sub == "completions" || sub == "man" || sub == "mcp" {
            continue;
        }
        // A command group (utility-ledger) prints packets from its leaves.
        let leaves: Vec<Vec<String>> = cli
            .find_subcommand(&sub)
            .map(|c| {
                c.get_subcommands()
                    .filter(|leaf| leaf.get_name() != "help")
                    .map(|leaf| vec![sub.clone(), leaf.get_name().to_owned()])
                    .collect()
            })
            .filter(|leaves: &Vec<Vec<String>>| !leaves.is_empty())
            .unwrap_or_else(|| vec![vec![sub.clone()]]);
        for path in leaves {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            let out = run(&args);
            assert_eq!(out.code, 0, "{path:?}");
            for option in ["--format <FORMAT>", "--detail"] {
                assert!(
                    out.stdout.contains(option),
                    "{path:?} --help lacks {option}"
                );
            }
        }
    }
}
