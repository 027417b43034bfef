//! `completions SHELL`: a completion script for every shell clap_complete supports.

use crate::support::run;

const SUBCOMMANDS: &[&str] = &[
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
    "utility-observe",
    "utility-validate",
    "recall",
    "apply",
    "rank-prior",
    "rank-evaluate",
    "utility-ledger",
    "utility-attribute",
    "utility-correct",
    "init",
    "mcp",
    "completions",
    "man",
];

#[test]
fn the_list_above_is_every_subcommand() {
    let mut listed: Vec<&str> = SUBCOMMANDS.to_vec();
    listed.sort_unstable();
    let mut names = reward_memory::cli::subcommand_names();
    names.sort();
    assert_eq!(listed, names);
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand_and_option() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = run(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{shell}: {}", out.stderr);
        for name in SUBCOMMANDS {
            assert!(out.stdout.contains(name), "{shell} script lacks {name}");
        }
        // fish spells long options `-l detail`, the others `--detail`.
        for option in [
            "detail",
            "registry",
            "runtime-root",
            "goal-id",
            "simulate",
            "evaluation",
        ] {
            assert!(out.stdout.contains(option), "{shell} script lacks {option}");
        }
    }
}

/// Runs `shell -n` style syntax checks for the shells installed on this machine.
#[test]
fn bash_and_installed_shells_parse_their_script() {
    let checks: &[(&str, &[&str])] = &[
        ("bash", &["-n"]),
        ("zsh", &["-n"]),
        ("fish", &["--no-execute"]),
    ];
    let mut checked = 0;
    for (shell, flags) in checks {
        let Ok(status) = std::process::Command::new(shell).arg("--version").output() else {
            assert_ne!(*shell, "bash", "bash is required to check the bash script");
            continue;
        };
        assert!(status.status.success());
        let script = run(&["completions", shell]).stdout;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("reward-memory.completion");
        std::fs::write(&path, script).expect("write script");
        let out = std::process::Command::new(shell)
            .args(*flags)
            .arg(&path)
            .output()
            .expect("shell runs");
        assert!(
            out.status.success(),
            "{shell} rejects its script: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 1);
}

#[test]
fn bash_completion_offers_subcommands_and_values() {
    // Source the script and ask it to complete `reward-memory ev` and a shell name.
    let script = run(&["completions", "bash"]).stdout;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("reward-memory.bash");
    std::fs::write(&path, script).expect("write script");
    let probe = format!(
        r#"source {}
fn=$(complete -p reward-memory | sed -E 's/.*-F ([^ ]+).*/\1/')
complete_words() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=(); "$fn" reward-memory "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"; printf '%s\n' "${{COMPREPLY[@]}}"; }}
complete_words reward-memory ev
echo --
complete_words reward-memory completions ""
echo --
complete_words reward-memory ingest-event --ex
echo --
complete_words reward-memory ingest-event --format ""
"#,
        path.display()
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(probe)
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<Vec<&str>> = text
        .split("--\n")
        .map(|a| a.split_whitespace().collect())
        .collect();
    assert_eq!(answers.len(), 4, "{text}");
    assert_eq!(answers[0], ["evaluate"], "{text}");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        assert!(answers[1].contains(&shell), "{text}");
    }
    // A subcommand's own options and values complete too (clap-rs/clap#6421 worked around).
    assert_eq!(answers[2], ["--execute"], "{text}");
    assert_eq!(answers[3], ["markdown", "json", "jsonl"], "{text}");
}

#[test]
fn an_unknown_shell_is_an_argument_error_naming_the_shells() {
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("bash, elvish, fish, powershell, zsh"),
        "{}",
        out.stderr
    );
}
