//! `init DIR`: the setup it writes works as printed: its three commands ingest the
//! example lesson into the agent-learnings corpus, recall it with its text and apply it;
//! nothing is ever overwritten.

use serde_json::Value;

use crate::ingest_event::conforms;
use crate::support::{Scratch, note};

/// `init ARGS` with the scratch dir's real path in its output (the runner masks it).
fn init(s: &Scratch, args: &[&str]) -> crate::support::Run {
    let mut all = vec!["init"];
    all.extend_from_slice(args);
    let mut run = s.run(&all, None);
    run.stdout = run.stdout.replace("@CASE_DIR@", &s.path.to_string_lossy());
    run
}

/// Runs one printed command line in `bash`, in the scratch dir.
fn shell(s: &Scratch, line: &str) -> crate::support::Run {
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(&s.path)
        .env("HOME", s.path.join(".home"))
        .env_remove("LOOPX_REGISTRY")
        .env_remove("REWARD_MEMORY_LEDGER")
        .output()
        .expect("bash runs");
    crate::support::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn has_jq() -> bool {
    std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_printed_commands_ingest_recall_with_its_text_and_apply_the_lesson() {
    let s = Scratch::new();
    let run = init(&s, &["setup", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    conforms("reward_memory_init_v0", &run);
    let packet = run.json();
    let dir = s.path.join("setup");
    for (key, rel) in [
        ("registry", "registry.json"),
        (
            "experiment_config",
            ".loopx/config/reward-memory/experiment.json",
        ),
        ("lesson_event", "lesson.json"),
    ] {
        let path = packet[key].as_str().expect("path");
        assert!(std::path::Path::new(path).is_absolute(), "{key}: {path}");
        assert!(dir.join(rel).is_file(), "{rel} written");
    }
    let registry: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("registry.json")).expect("read"))
            .expect("JSON");
    let repo = registry["goals"][0]["repo"].as_str().expect("repo");
    assert!(std::path::Path::new(repo).is_absolute(), "{repo}");
    // The route resolves from any working directory: the repo is absolute.
    let status = s.run(
        &[
            "experiment-status",
            "--registry",
            packet["registry"].as_str().expect("registry"),
            "--goal-id",
            "my-goal",
            "--agent-id",
            "agent",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(status.json()["status"], "available", "{}", status.stdout);

    let ingest = shell(&s, packet["commands"]["ingest"].as_str().expect("ingest"));
    assert_eq!(ingest.code, 0, "{}{}", ingest.stdout, ingest.stderr);
    assert!(ingest.stdout.contains("`activated`"), "{}", ingest.stdout);
    let recall = shell(&s, packet["commands"]["recall"].as_str().expect("recall"));
    assert_eq!(recall.code, 0, "{}{}", recall.stdout, recall.stderr);
    let recalled = recall.json();
    assert_eq!(recalled["status"], "completed", "{}", recall.stdout);
    assert_eq!(recalled["corpus_id"], "agent_learnings");
    let lesson: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("lesson.json")).expect("read"))
            .expect("JSON");
    assert_eq!(
        recalled["results"][0]["delivered_content"]["content_summary"],
        lesson["event"]["content_summary"],
        "the recall carries the ingested memory's text"
    );
    if !has_jq() {
        note(
            "jq is not installed: the printed apply command (which reads the recall with jq) was not run",
        );
        return;
    }
    let apply = shell(&s, packet["commands"]["apply"].as_str().expect("apply"));
    assert_eq!(apply.code, 0, "{}{}", apply.stdout, apply.stderr);
    assert!(apply.stdout.contains("`applied`"), "{}", apply.stdout);
    assert!(apply.stdout.contains("rma_"), "{}", apply.stdout);
}

#[test]
fn the_lesson_is_advisory_procedural_experience_from_the_agent() {
    let s = Scratch::new();
    let packet = init(&s, &["setup", "--format", "json"]).json();
    let learnings = &packet["corpora"][1];
    assert_eq!(learnings["class_id"], "procedural_experience");
    assert_eq!(learnings["allowed_source_kinds"][0], "agent_observation");
    assert_eq!(learnings["allowed_action_scopes"], serde_json::json!([]));
    // A lesson that asks for action authority is blocked by LoopX's own guard.
    let mut lesson: Value = serde_json::from_str(
        &std::fs::read_to_string(s.path.join("setup/lesson.json")).expect("read"),
    )
    .expect("JSON");
    lesson["event"]["requested_action_scopes"] = serde_json::json!(["issue_fix:scope_selection"]);
    s.write("authority.json", &lesson.to_string());
    let run = s.run(
        &[
            "--registry",
            "setup/registry.json",
            "ingest-event",
            "--input",
            "authority.json",
            "--goal-id",
            "my-goal",
            "--agent-id",
            "agent",
            "--format",
            "json",
        ],
        None,
    );
    let receipt = run.json();
    assert_eq!(receipt["status"], "guard_blocked", "{}", run.stdout);
    assert!(
        receipt
            .to_string()
            .contains("advisory_class_requested_action_authority"),
        "{}",
        run.stdout
    );
}

#[test]
fn init_never_overwrites_and_refuses_bad_ids() {
    let s = Scratch::new();
    assert_eq!(init(&s, &["setup"]).code, 0);
    let registry = std::fs::read(s.path.join("setup/registry.json")).expect("read");
    let again = init(&s, &["setup", "--goal-id", "other", "--format", "json"]);
    assert_eq!(again.code, 2);
    assert_eq!(again.json()["status"], "invalid_request");
    assert!(
        again.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("registry.json already exists")),
        "{}",
        again.stdout
    );
    assert_eq!(
        std::fs::read(s.path.join("setup/registry.json")).expect("read"),
        registry,
        "nothing was overwritten"
    );
    let bad = init(
        &s,
        &["other", "--agent-id", "has space?", "--format", "json"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stdout);
    assert!(!s.path.join("other/registry.json").exists());
}

#[test]
fn markdown_prints_the_commands_in_a_shell_block() {
    let s = Scratch::new();
    let run = init(&s, &["setup"]);
    assert_eq!(run.code, 0);
    let block: Vec<&str> = run
        .stdout
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a shell block")
        .lines()
        .collect();
    assert_eq!(block.len(), 3, "{}", run.stdout);
    assert!(block[0].contains(" ingest-event --input "));
    assert!(block[1].contains(" recall ") && block[1].contains("--deliver-content"));
    assert!(block[2].contains(" apply --recall-session "));
}

#[test]
fn the_demo_runs_the_whole_loop_once_and_every_step_passes() {
    let s = Scratch::new();
    let run = init(&s, &["--demo", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    conforms("reward_memory_demo_v0", &run);
    let packet = run.json();
    assert_eq!(packet["status"], "completed");
    let steps: Vec<&str> = packet["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|step| {
            assert_eq!(step["passed"], true, "{step}");
            step["step"].as_str().expect("step")
        })
        .collect();
    assert_eq!(
        steps,
        [
            "ingest",
            "recall",
            "apply",
            "attribute",
            "ledger",
            "evaluate",
            "recall_with_prior",
            "recall_without_prior"
        ]
    );
    // A temporary setup is removed afterwards; a given directory is kept.
    assert_eq!(packet["kept"], false);
    let temporary = packet["directory"].as_str().expect("directory");
    assert!(!std::path::Path::new(temporary).exists(), "{temporary}");
    let kept = init(&s, &["--demo", "kept", "--format", "json"]).json();
    assert_eq!(kept["status"], "completed", "{kept}");
    assert!(s.path.join("kept/ledger.sqlite3").is_file());
    assert!(s.path.join("kept/evaluation.json").is_file());
}
