//! Issue 19, items 1 and 3, through the binary: nothing outside our own files is removed
//! or trusted. The session sweep keeps what it did not write and never follows a link; a
//! session, store or ledger that is a link, another user's or writable by others is
//! refused (recall fails open and says why on stderr, apply and the ledger commands stop
//! with the path and the fix); a session edited after recall is refused.
//!
//! Owners other than this user need root: as root the tests hand files to uid 65534 with
//! `chown`, and the last test creates a throw-away user (`useradd`) that plants links and
//! owns stores in shared 1777 directories; elsewhere those parts say so on stderr.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::recall::{ingest_memories, loop_setup, recall, routed};
use crate::support::{Run, Scratch, note};

const BIN: &str = env!("CARGO_BIN_EXE_reward-memory");

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn set_mtime(path: &Path, unix_seconds: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| {
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_seconds))
        })
        .expect("set mtime");
}

fn running_as_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A file of the project that has nothing to do with reward-memory, long expired by its
/// modification time (2020-01-01): `<dir>/package.json`.
fn precious(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("project dir");
    let file = dir.join("package.json");
    std::fs::write(&file, "{}\n").expect("write");
    set_mtime(&file, 1_577_836_800);
    file
}

fn sessions_dir(s: &Scratch) -> PathBuf {
    s.path.join("rt/reward-memory/recall-sessions")
}

fn session_file(s: &Scratch, session: &str) -> PathBuf {
    sessions_dir(s).join(format!("{session}.json"))
}

/// A loop scratch after one recall with a stored session: the scratch, the session ref
/// and the first result's opaque memory ref.
fn recalled() -> (Scratch, String, String) {
    let s = loop_setup();
    ingest_memories(&s);
    let packet = recall(&s, &[]).json();
    let session = packet["recall_session_ref"]
        .as_str()
        .expect("session")
        .to_owned();
    let memory_ref = packet["results"][0]["memory_ref"]
        .as_str()
        .expect("ref")
        .to_owned();
    (s, session, memory_ref)
}

fn apply_applied(s: &Scratch, session: &str, memory_ref: &str) -> Run {
    routed(
        s,
        &[
            "apply",
            "--recall-session",
            session,
            "--application-id",
            "application:trust",
            "--artifact-ref",
            "pr:trust",
            "--outcome",
            "applied",
            "--memory-ref",
            memory_ref,
            "--reasoning-summary",
            "Decision of the trust test",
            "--current-artifact-verified",
            "--format",
            "json",
        ],
    )
}

fn error_of(run: &Run) -> String {
    assert_eq!(run.code, 2, "{}", run.transcript());
    let packet = run.json();
    assert_eq!(packet["status"], "invalid_request", "{}", run.stdout);
    packet["error"].as_str().unwrap_or_default().to_owned()
}

// --- item 1: the sweep ---------------------------------------------------------------------

#[test]
fn recall_never_sweeps_through_a_symlinked_session_directory() {
    // The issue's reproduction: the session directory is a link to a project whose
    // package.json expired long ago by its modification time.
    let s = loop_setup();
    ingest_memories(&s);
    let project = s.path.join("precious");
    let file = precious(&project);
    std::os::unix::fs::symlink(&project, sessions_dir(&s)).expect("symlink");
    let run = recall(&s, &[]);
    assert!(file.exists(), "the planted file survives");
    assert_eq!(run.code, 0, "{}", run.transcript());
    let packet = run.json();
    assert_eq!(packet["status"], "completed", "the recall still answers");
    assert_eq!(packet["recall_session_ref"], Value::Null);
    assert_eq!(
        packet["recall_session_reason_code"],
        "recall_session_store_untrusted"
    );
    assert_eq!(
        std::fs::read_dir(&project).expect("project").count(),
        1,
        "nothing was written behind the link"
    );
    assert!(
        run.stderr.contains(
            "reward-memory: warning: no recall session was stored: recall session directory \
             rt/reward-memory/recall-sessions is a symbolic link"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn the_sweep_removes_only_expired_sessions_it_wrote() {
    let (s, session, _) = recalled();
    let dir = sessions_dir(&s);
    // An expired session of ours goes; what a person put there stays, whatever its age.
    let ours = session_file(&s, &session);
    set_mtime(&ours, 978_307_200);
    std::fs::write(dir.join("notes.json"), "{}\n").expect("notes");
    set_mtime(&dir.join("notes.json"), 978_307_200);
    let look_alike = dir.join(format!("{session}.json.bak"));
    std::fs::write(&look_alike, "{}\n").expect("backup");
    set_mtime(&look_alike, 978_307_200);
    let outside = precious(&s.path.join("outside"));
    let linked = dir.join(format!("rms_{}.json", "a".repeat(32)));
    std::os::unix::fs::symlink(&outside, &linked).expect("symlink");
    let stale_tmp = dir.join(format!(".rms_{}.json.4294967295.tmp", "b".repeat(32)));
    std::fs::write(&stale_tmp, "{").expect("temporary");
    // The first recall swept a moment ago: the next minute's recalls do not list the
    // directory again.
    recall(&s, &[]);
    assert!(
        ours.exists() && stale_tmp.exists(),
        "swept at most once a minute"
    );
    set_mtime(&dir.join(".swept"), 978_307_200);
    let run = recall(&s, &[]);
    assert!(dir.join("notes.json").exists(), "notes.json survives");
    assert!(look_alike.exists(), "a name we never write survives");
    assert!(linked.symlink_metadata().is_ok(), "a link is not removed");
    assert!(outside.exists(), "nor what it points at");
    assert_eq!(run.json()["recall_session_reason_code"], Value::Null);
    assert!(!ours.exists(), "the expired session was swept");
    assert!(!stale_tmp.exists(), "a dead writer's temporary was swept");
}

// --- item 3: sessions ------------------------------------------------------------------------

#[test]
fn apply_refuses_a_session_edited_after_recall() {
    let (s, session, memory_ref) = recalled();
    let path = session_file(&s, &session);
    let original = std::fs::read_to_string(&path).expect("session");
    let edits: [(&str, &str); 3] = [
        (
            r#""provider_resource_ref":"[^"]+""#,
            r#""provider_resource_ref":"embedded://reward-memory/issue-fix/chosen-by-someone-else.json""#,
        ),
        (
            r#""content_digest":"[0-9a-f]{64}""#,
            r#""content_digest":"0000000000000000000000000000000000000000000000000000000000000000""#,
        ),
        (
            r#""relevance_score":[0-9.e-]+"#,
            r#""relevance_score":0.999"#,
        ),
    ];
    for (pattern, replacement) in edits {
        let re = regex::Regex::new(pattern).expect("pattern");
        assert!(re.is_match(&original), "{pattern}");
        std::fs::write(&path, re.replace(&original, replacement).as_bytes()).expect("edit");
        let run = apply_applied(&s, &session, &memory_ref);
        assert_eq!(
            error_of(&run),
            format!(
                "recall session {session} was modified after recall wrote it (its integrity tag does not match): run recall again"
            ),
            "{pattern}"
        );
        assert!(!run.stdout.contains("receipt"), "{}", run.stdout);
    }
    // Without its tag (an older binary's session, or one rewritten by hand) it is not
    // verifiable either; the untouched file still applies.
    let re = regex::Regex::new(r#","integrity":"[^"]+""#).expect("pattern");
    std::fs::write(&path, re.replace(&original, "").as_bytes()).expect("strip");
    assert!(
        error_of(&apply_applied(&s, &session, &memory_ref))
            .contains("cannot be verified: it carries no integrity tag")
    );
    std::fs::write(&path, &original).expect("restore");
    let run = apply_applied(&s, &session, &memory_ref);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(run.json()["receipt"]["outcome"], "applied");
}

#[test]
fn a_session_sealed_under_another_runtime_root_is_refused() {
    // The keyed tag: a session copied from elsewhere, though well-formed and live, was
    // not written with this runtime root's key.
    let (a, session, memory_ref) = recalled();
    let (b, _, _) = recalled();
    std::fs::copy(session_file(&a, &session), session_file(&b, &session)).expect("copy");
    assert!(
        error_of(&apply_applied(&b, &session, &memory_ref)).contains("was modified after recall")
    );
    // Without the key no session can be verified; the next recall makes a new one.
    std::fs::remove_file(a.path.join("rt/reward-memory/recall-session.key")).expect("rm key");
    let err = error_of(&apply_applied(&a, &session, &memory_ref));
    assert!(
        err.contains(
            "cannot be verified: the session key rt/reward-memory/recall-session.key is missing"
        ),
        "{err}"
    );
    assert!(recall(&a, &[]).json()["recall_session_ref"].is_string());
    let key = a.path.join("rt/reward-memory/recall-session.key");
    assert_eq!(
        std::fs::metadata(&key).expect("key").permissions().mode() & 0o777,
        0o600
    );
    chmod(&key, 0o644);
    let err = error_of(&apply_applied(&a, &session, &memory_ref));
    assert!(
        err.contains("recall session key rt/reward-memory/recall-session.key is readable by group or others (mode 0644): run chmod go-rwx on it"),
        "{err}"
    );
}

#[test]
fn apply_refuses_a_session_others_could_have_written() {
    let (s, session, memory_ref) = recalled();
    let path = session_file(&s, &session);
    let shown = format!("rt/reward-memory/recall-sessions/{session}.json");
    chmod(&path, 0o666);
    assert_eq!(
        error_of(&apply_applied(&s, &session, &memory_ref)),
        format!(
            "recall session {shown} is writable by group or others (mode 0666): run chmod go-w on it"
        )
    );
    chmod(&path, 0o600);
    // A link in place of the session, even to a good copy of it.
    let copy = s.path.join("copy.json");
    std::fs::rename(&path, &copy).expect("move");
    std::os::unix::fs::symlink(&copy, &path).expect("symlink");
    assert!(
        error_of(&apply_applied(&s, &session, &memory_ref))
            .starts_with(&format!("recall session {shown} is a symbolic link"))
    );
    std::fs::remove_file(&path).expect("rm link");
    std::fs::rename(&copy, &path).expect("move back");
    // The directories above it count as much.
    chmod(&sessions_dir(&s), 0o777);
    assert!(
        error_of(&apply_applied(&s, &session, &memory_ref)).starts_with(
            "recall session directory rt/reward-memory/recall-sessions is writable by group or others"
        )
    );
    chmod(&sessions_dir(&s), 0o700);
    chmod(&s.path.join("rt"), 0o777);
    assert!(
        error_of(&apply_applied(&s, &session, &memory_ref))
            .starts_with("runtime root rt is writable by group or others (mode 0777)")
    );
    chmod(&s.path.join("rt"), 0o755);
    if running_as_root() {
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).expect("chown");
        assert_eq!(
            error_of(&apply_applied(&s, &session, &memory_ref)),
            format!(
                "recall session {shown} is owned by uid 65534, not by this user (uid 0) or root: use one of your own"
            )
        );
        std::os::unix::fs::chown(&path, Some(0), Some(0)).expect("chown back");
    } else {
        note("not root: the foreign-owner session case needs chown");
    }
    assert_eq!(apply_applied(&s, &session, &memory_ref).code, 0);
}

// --- item 3: the embedded store ---------------------------------------------------------

fn store_path(s: &Scratch) -> PathBuf {
    s.path.join("rt/reward-memory/embedded.sqlite3")
}

#[test]
fn a_store_others_may_write_is_neither_recalled_from_nor_written() {
    let s = loop_setup();
    ingest_memories(&s);
    let store = store_path(&s);
    chmod(&store, 0o666);
    let before = std::fs::read(&store).expect("store");
    let run = recall(&s, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let packet = run.json();
    assert_eq!(packet["status"], "provider_unavailable", "{}", run.stdout);
    assert_eq!(packet["results"], serde_json::json!([]));
    assert_eq!(packet["recall_session_ref"], Value::Null);
    assert!(
        run.stderr.contains(
            "reward-memory: warning: embedded store rt/reward-memory/embedded.sqlite3 \
             is writable by group or others (mode 0666): run chmod go-w on it"
        ),
        "{}",
        run.stderr
    );
    // An executed ingest fails open with the public-safe cause and never writes.
    let ingest = routed(
        &s,
        &[
            "ingest-event",
            "--input",
            "event-a.json",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--execute",
            "--format",
            "json",
        ],
    );
    let receipt = ingest.json();
    assert_eq!(
        receipt["status"], "provider_unavailable",
        "{}",
        ingest.stdout
    );
    assert_eq!(
        receipt["reason_codes"],
        serde_json::json!([
            "provider_store_unavailable",
            "provider_store_cause_untrusted"
        ])
    );
    assert!(
        ingest.stderr.contains("run chmod go-w on it"),
        "{}",
        ingest.stderr
    );
    assert_eq!(
        std::fs::read(&store).expect("store"),
        before,
        "never written"
    );
    chmod(&store, 0o600);
    assert_eq!(recall(&s, &[]).json()["status"], "completed");
}

#[test]
fn a_store_behind_a_link_or_of_another_user_is_refused() {
    let s = loop_setup();
    ingest_memories(&s);
    let store = store_path(&s);
    // A link at the store's path, to the very same store.
    let real = s.path.join("elsewhere.sqlite3");
    std::fs::rename(&store, &real).expect("move");
    std::os::unix::fs::symlink(&real, &store).expect("symlink");
    let run = recall(&s, &[]);
    assert_eq!(run.json()["status"], "provider_unavailable");
    assert!(run.stderr.contains("is a symbolic link"), "{}", run.stderr);
    std::fs::remove_file(&store).expect("rm link");
    std::fs::rename(&real, &store).expect("move back");
    // A `-wal` beside it planted as a link.
    let wal = s.path.join("rt/reward-memory/embedded.sqlite3-wal");
    let _ = std::fs::remove_file(&wal);
    std::os::unix::fs::symlink(s.path.join("registry.json"), &wal).expect("symlink");
    let run = recall(&s, &[]);
    assert_eq!(run.json()["status"], "provider_unavailable");
    assert!(
        run.stderr.contains(
            "embedded store file rt/reward-memory/embedded.sqlite3-wal is a symbolic link"
        ),
        "{}",
        run.stderr
    );
    std::fs::remove_file(&wal).expect("rm link");
    if running_as_root() {
        std::os::unix::fs::chown(&store, Some(65534), Some(65534)).expect("chown");
        let run = recall(&s, &[]);
        assert_eq!(run.json()["status"], "provider_unavailable");
        assert!(
            run.stderr.contains("is owned by uid 65534"),
            "{}",
            run.stderr
        );
        std::os::unix::fs::chown(&store, Some(0), Some(0)).expect("chown back");
    } else {
        note("not root: the foreign-owner store case needs chown");
    }
    assert_eq!(recall(&s, &[]).json()["status"], "completed");
}

// --- item 3: the ledger ------------------------------------------------------------------------

const PARTITION: [&str; 12] = [
    "--agent-id",
    "agent:a",
    "--project-id",
    "project:ledger",
    "--corpus-id",
    "ledger-corpus",
    "--surface-id",
    "loopx.issue_fix",
    "--retrieval-snapshot-ref",
    "retrieval:ledger",
    "--policy-snapshot-ref",
    "policy:ledger",
];

/// Every `utility-ledger` subcommand on `ledger`.
fn every_ledger_command(s: &Scratch, ledger: &str) -> Vec<(&'static str, Run)> {
    let with = |sub: &str, extra: &[&str]| {
        let mut args = vec![
            "utility-ledger",
            sub,
            "--ledger",
            ledger,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        s.run(&args, Some(""))
    };
    let mut subject = PARTITION.to_vec();
    subject.extend(["--memory-ref-digest", "0000000000000001"]);
    vec![
        ("append", with("append", &["--input", "-"])),
        ("project", with("project", &PARTITION)),
        ("subject", with("subject", &subject)),
        ("verify", with("verify", &[])),
        ("export", with("export", &[])),
    ]
}

#[test]
fn a_symlinked_or_loose_ledger_is_refused_by_every_ledger_command() {
    let s = Scratch::new();
    let created = s.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "real.sqlite3",
            "--input",
            "-",
            "--format",
            "json",
        ],
        Some(""),
    );
    assert_eq!(created.code, 0, "{}", created.transcript());
    std::os::unix::fs::symlink(s.path.join("real.sqlite3"), s.path.join("link.sqlite3"))
        .expect("symlink");
    for (sub, run) in every_ledger_command(&s, "link.sqlite3") {
        assert_eq!(
            error_of(&run),
            "utility ledger link.sqlite3 is a symbolic link: point it at the real regular file instead (links are not followed)",
            "{sub}"
        );
    }
    chmod(&s.path.join("real.sqlite3"), 0o666);
    for (sub, run) in every_ledger_command(&s, "real.sqlite3") {
        assert_eq!(
            error_of(&run),
            "utility ledger real.sqlite3 is writable by group or others (mode 0666): run chmod go-w on it",
            "{sub}"
        );
    }
    chmod(&s.path.join("real.sqlite3"), 0o600);
    for (sub, run) in every_ledger_command(&s, "real.sqlite3") {
        assert_eq!(run.code, 0, "{sub}: {}", run.transcript());
    }
    // The integrity record beside the ledger is trusted only when it is ours too: a planted
    // one could claim an edited file is as the last append left it.
    let sidecar = s.path.join("real.sqlite3-checked");
    let _ = std::fs::remove_file(&sidecar);
    s.write("elsewhere", "x");
    std::os::unix::fs::symlink(s.path.join("elsewhere"), &sidecar).expect("symlink");
    for (sub, run) in every_ledger_command(&s, "real.sqlite3") {
        assert!(
            error_of(&run)
                .starts_with("utility ledger file real.sqlite3-checked is a symbolic link"),
            "{sub}: {}",
            run.transcript()
        );
    }
    assert_eq!(
        std::fs::read_to_string(s.path.join("elsewhere")).expect("kept"),
        "x"
    );
}

#[test]
fn recall_and_rank_prior_refuse_a_symlinked_ledger_at_the_default_location() {
    let s = loop_setup();
    ingest_memories(&s);
    let made = s.run(
        &[
            "utility-ledger",
            "append",
            "--ledger",
            "elsewhere.sqlite3",
            "--input",
            "-",
            "--format",
            "json",
        ],
        Some(""),
    );
    assert_eq!(made.code, 0, "{}", made.transcript());
    let default = s.path.join("rt/reward-memory/utility-ledger.sqlite3");
    std::os::unix::fs::symlink(s.path.join("elsewhere.sqlite3"), &default).expect("symlink");
    let expected = "utility ledger rt/reward-memory/utility-ledger.sqlite3 is a symbolic link: point it at the real regular file instead (links are not followed)";
    let prior = [
        "--rank-prior",
        "profile.json",
        "--partition",
        "partition.json",
        "--ledger",
        "--evaluation",
        "evaluation.json",
        "--allow-simulated-evaluation",
    ];
    assert_eq!(error_of(&recall(&s, &prior)), expected);
    s.write(
        "rank.json",
        &crate::support::pretty(&serde_json::json!({
            "profile": crate::support::read_json(&s.path.join("profile.json")),
            "partition": crate::support::read_json(&s.path.join("partition.json")),
            "candidates": [{"memory_ref_digest": "0000000000000001", "relevance_score": 0.5}],
        })),
    );
    let ranked = routed(
        &s,
        &[
            "rank-prior",
            "--input",
            "rank.json",
            "--ledger",
            "--format",
            "json",
        ],
    );
    assert_eq!(error_of(&ranked), expected);
    let listed = routed(&s, &["utility-ledger", "verify", "--format", "json"]);
    assert_eq!(error_of(&listed), expected);
}

// --- a second user ----------------------------------------------------------------------------

/// A throw-away user, removed (with its home) when dropped, even after a failed assertion.
struct ThrowAwayUser {
    name: String,
    uid: u32,
}

impl ThrowAwayUser {
    /// `None` (with a note) unless this runs as root with `useradd`, `userdel` and
    /// `setpriv` at hand.
    fn create() -> Option<ThrowAwayUser> {
        if !running_as_root() {
            note("skipped: the second-user test needs root (useradd)");
            return None;
        }
        let name = format!("rmtrust{}", std::process::id() % 1_000_000);
        let made = Command::new("useradd")
            .args(["--create-home", "--shell", "/bin/sh", "--user-group", &name])
            .output();
        match made {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                note(&format!(
                    "skipped: useradd failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                return None;
            }
            Err(err) => {
                note(&format!("skipped: no useradd here ({err})"));
                return None;
            }
        }
        // From here on the user exists: dropping `user` removes it.
        let mut user = ThrowAwayUser { name, uid: 0 };
        let uid = Command::new("id")
            .args(["-u", &user.name])
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|t| t.trim().parse().ok());
        let Some(uid) = uid else {
            note("skipped: the new user has no uid");
            return None;
        };
        user.uid = uid;
        Some(user)
    }

    /// `sh -c script` as this user, in `dir`; panics when it fails.
    fn sh(&self, dir: &Path, script: &str) {
        let out = self.command(dir, "/bin/sh", &["-c", script]);
        assert!(out.code == 0, "{script}: {}", out.transcript());
    }

    fn command(&self, dir: &Path, program: &str, args: &[&str]) -> Run {
        let uid = self.uid.to_string();
        let out = Command::new("setpriv")
            .args([
                &format!("--reuid={uid}"),
                &format!("--regid={uid}"),
                "--clear-groups",
                program,
            ])
            .args(args)
            .current_dir(dir)
            .env("HOME", dir.join(".home"))
            .env_remove("LOOPX_REGISTRY")
            .env_remove("REWARD_MEMORY_LEDGER")
            .output()
            .expect("setpriv runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Drop for ThrowAwayUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").args(["-r", &self.name]).output();
    }
}

/// Copies the regular files and directories of `from` into `to` (created), readable by all.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    chmod(to, 0o755);
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
            chmod(&target, 0o644);
        }
    }
}

/// The binary (copied where any user may run it) on the loop's route with `root`.
fn loop_command(bin: &Path, work: &Path, root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(work)
        .env("HOME", work.join(".home"))
        .env_remove("LOOPX_REGISTRY")
        .env_remove("REWARD_MEMORY_LEDGER")
        .args(["--registry", "registry.json", "--runtime-root"])
        .arg(root)
        .args(args);
    cmd
}

const INGEST: [&str; 8] = [
    "ingest-event",
    "--goal-id",
    "embedded-demo",
    "--agent-id",
    "pilot",
    "--execute",
    "--format",
    "json",
];
const RECALL: [&str; 12] = [
    "recall",
    "--goal-id",
    "embedded-demo",
    "--agent-id",
    "pilot",
    "--query",
    "test commits",
    "--query-summary",
    "review habits",
    "--format",
    "json",
    "--session-ttl=60",
];

/// Ingests the loop's three memories and recalls, as root (user A), in `root`.
fn ingest_and_recall(bin: &Path, work: &Path, root: &Path) -> Run {
    for event in ["event-a.json", "event-b.json", "event-c.json"] {
        let mut args = INGEST.to_vec();
        args.extend(["--input", event]);
        let _ = loop_command(bin, work, root, &args)
            .output()
            .expect("ingest");
    }
    let out = loop_command(bin, work, root, &RECALL)
        .output()
        .expect("recall");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn another_user_cannot_make_recall_delete_files_or_feed_it_a_session_or_store() {
    let Some(b) = ThrowAwayUser::create() else {
        return;
    };
    // Everything in a fresh directory of /tmp that user B may enter: the binary, the
    // loop's route and events, shared 1777 directories, B's and A's projects.
    let base = tempfile::Builder::new()
        .prefix("rm-trust-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let t = base.path();
    chmod(t, 0o755);
    let bin = t.join("bin/reward-memory");
    std::fs::create_dir_all(bin.parent().expect("bin dir")).expect("bin dir");
    chmod(bin.parent().expect("bin dir"), 0o755);
    std::fs::copy(BIN, &bin).expect("copy binary");
    chmod(&bin, 0o755);
    let work = t.join("work");
    copy_tree(&loop_setup().path, &work);
    let shared = |name: &str| {
        let dir = t.join(name);
        std::fs::create_dir(&dir).expect("shared dir");
        chmod(&dir, 0o1777);
        dir
    };

    // (a1) The runtime root is a shared 1777 directory: B plants reward-memory/ with the
    // session directory as a link to B's project.
    let s1 = shared("shared1");
    b.sh(
        &s1,
        "mkdir -p project reward-memory && echo '{}' > project/package.json && \
         touch -d 2020-01-01 project/package.json && \
         ln -s \"$PWD/project\" reward-memory/recall-sessions",
    );
    let run = ingest_and_recall(&bin, &work, &s1);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        s1.join("project/package.json").exists(),
        "B's file survives"
    );
    assert_eq!(run.json()["recall_session_ref"], Value::Null);
    assert!(
        run.stderr.contains(&format!(
            "runtime root {} is writable by group or others (mode 1777)",
            s1.display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        !s1.join("reward-memory/embedded.sqlite3").exists(),
        "no store in B's dir"
    );

    // (a2) B creates the runtime root A is about to use, linking the session directory to
    // A's project.
    let a_project = t.join("a-project");
    let a_file = precious(&a_project);
    let s2 = shared("shared2");
    b.sh(
        &s2,
        &format!(
            "mkdir -p rt/reward-memory && ln -s {} rt/reward-memory/recall-sessions",
            a_project.display()
        ),
    );
    let run = ingest_and_recall(&bin, &work, &s2.join("rt"));
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(a_file.exists(), "A's file survives");
    assert!(
        run.stderr.contains(&format!(
            "runtime root {} is owned by uid {}, not by this user (uid 0) or root",
            s2.join("rt").display(),
            b.uid
        )),
        "{}",
        run.stderr
    );

    // (b) B's own runtime root works for B (the rule is not root's alone), and what B
    // wrote there is refused when A points at it: the store and the session.
    let s3 = shared("shared3");
    let b_root = s3.join("b-rt");
    let b_run = |args: &[&str]| {
        let mut all = vec![
            "--registry",
            "registry.json",
            "--runtime-root",
            b_root.to_str().expect("path"),
        ];
        all.extend_from_slice(args);
        b.command(&work, bin.to_str().expect("path"), &all)
    };
    for event in ["event-a.json", "event-b.json", "event-c.json"] {
        let mut args = INGEST.to_vec();
        args.extend(["--input", event]);
        assert_eq!(b_run(&args).json()["status"], "activated");
    }
    let b_recall = b_run(&RECALL);
    let b_packet = b_recall.json();
    assert_eq!(b_packet["status"], "completed", "{}", b_recall.transcript());
    let b_session = b_packet["recall_session_ref"]
        .as_str()
        .expect("B's session")
        .to_owned();
    let memory_ref = b_packet["results"][0]["memory_ref"]
        .as_str()
        .expect("ref")
        .to_owned();
    let out = loop_command(&bin, &work, &b_root, &RECALL)
        .output()
        .expect("recall");
    let a_recall = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(
        a_recall.json()["status"],
        "provider_unavailable",
        "{}",
        a_recall.stdout
    );
    assert!(
        a_recall
            .stderr
            .contains(&format!("is owned by uid {}", b.uid)),
        "{}",
        a_recall.stderr
    );
    let apply = [
        "apply",
        "--recall-session",
        &b_session,
        "--application-id",
        "application:trust",
        "--artifact-ref",
        "pr:trust",
        "--outcome",
        "applied",
        "--memory-ref",
        &memory_ref,
        "--reasoning-summary",
        "Decision of the trust test",
        "--current-artifact-verified",
        "--format",
        "json",
    ];
    let out = loop_command(&bin, &work, &b_root, &apply)
        .output()
        .expect("apply");
    let a_apply = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        error_of(&a_apply).starts_with(&format!(
            "runtime root {} is owned by uid {}",
            b_root.display(),
            b.uid
        )),
        "{}",
        a_apply.stdout
    );
    // B's session file moved into A's own session directory keeps its owner: refused
    // before its (foreign) tag is even looked at.
    let a_root = t.join("a-rt");
    let run = ingest_and_recall(&bin, &work, &a_root);
    assert_eq!(run.json()["status"], "completed", "{}", run.transcript());
    let planted = a_root
        .join("reward-memory/recall-sessions")
        .join(format!("{b_session}.json"));
    std::fs::rename(
        b_root
            .join("reward-memory/recall-sessions")
            .join(format!("{b_session}.json")),
        &planted,
    )
    .expect("move B's session");
    let out = loop_command(&bin, &work, &a_root, &apply)
        .output()
        .expect("apply");
    let a_apply = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(
        error_of(&a_apply),
        format!(
            "recall session {} is owned by uid {}, not by this user (uid 0) or root: use one of your own",
            planted.display(),
            b.uid
        )
    );
}
