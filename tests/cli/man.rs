//! `man [SUBCOMMAND]`: roff pages generated from the same clap definition as `--help`.

use crate::support::run;

/// Lints a page with groff when it is installed (warnings are errors).
fn groff_accepts(page: &str) {
    use std::io::Write as _;
    let Ok(mut child) = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        return;
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write page");
    let out = child.wait_with_output().expect("groff runs");
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "groff warns: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_main_page_lists_options_subcommands_exit_status_and_version() {
    let out = run(&["man"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = out.stdout;
    assert!(page.contains(".TH reward-memory 1 "), "{page}");
    assert!(page.contains(env!("REWARD_MEMORY_GIT_COMMIT")));
    for needle in [
        r"\-\-detail",
        r"\-\-registry",
        r"\-\-runtime\-root",
        r"ingest\-event",
        r"utility\-validate",
        r"rank\-evaluate",
        r"rank\-evaluate (hold)",
        "Exit status:",
        "reward_memory_error_v0",
    ] {
        assert!(page.contains(needle), "man page lacks {needle}");
    }
    groff_accepts(&page);
}

#[test]
fn a_subcommand_page_names_its_options_and_route_globals() {
    let out = run(&["man", "ingest-event"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = out.stdout;
    assert!(page.contains(".TH reward-memory-ingest-event 1 "), "{page}");
    for needle in [
        r"\-\-input",
        r"\-\-execute",
        r"\-\-registry",
        r"\-\-runtime\-root",
        "LOOPX_REGISTRY",
        "embedded.sqlite3",
    ] {
        assert!(page.contains(needle), "ingest-event page lacks {needle}");
    }
    groff_accepts(&page);
}

#[test]
fn the_rank_evaluate_page_names_every_option_it_reads() {
    let out = run(&["man", "rank-evaluate"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = out.stdout;
    assert!(
        page.contains(".TH reward-memory-rank-evaluate 1 "),
        "{page}"
    );
    for needle in [
        r"\-\-input",
        r"\-\-simulate",
        r"\-\-seed",
        r"\-\-episodes",
        r"\-\-profile",
        r"\-\-sweep",
        r"\-\-plot",
        r"\-\-format",
        r"\-\-detail",
        "memory_utility_ranking_evaluation_v1",
        r"recall \-\-rank\-prior",
    ] {
        assert!(page.contains(needle), "rank-evaluate page lacks {needle}");
    }
    groff_accepts(&page);
}

#[test]
fn an_unknown_subcommand_is_an_argument_error_naming_the_subcommands() {
    let out = run(&["man", "evalute"]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr
            .contains("no subcommand 'evalute' (one of: architecture,")
    );
}
