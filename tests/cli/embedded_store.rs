//! The embedded store under `ingest-event --execute`, as a hostile user would meet it:
//! a failure inside the write transaction, a held lock, every store failure cause (a
//! directory at the path, a file without permissions, a corrupt header, a zeroed page, a
//! full disk, read-only leftover `-wal`/`-shm` files), file modes and staging leftovers.
//!
//! Permission cases need a user that file modes apply to: when the tests run as root they
//! run the binary as `nobody` through `setpriv`. The full disk is a 256 KiB tmpfs mounted in
//! a private mount namespace (`unshare`); where neither can be set up the test says so on
//! stderr and checks nothing else. Unix only (file modes, `setpriv`, mount namespaces).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::ingest_event::{configured, conforms, embedded, embedded_setup, store};
use crate::support::{Run, Scratch, pretty};

const BIN: &str = env!("CARGO_BIN_EXE_reward-memory");

/// Writes `ev<i>.json` for `i` in `range`: the embedded example event with its own summary,
/// hence its own candidate and record.
fn write_events(s: &Scratch, range: std::ops::Range<usize>) {
    for i in range {
        let mut event = embedded("event.json");
        event["event"]["content_summary"] =
            json!(format!("Keep memory-core changes focused, variant {i}."));
        s.write(&format!("ev{i}.json"), &pretty(&event));
    }
}

fn store_path(s: &Scratch) -> PathBuf {
    s.path.join("rt/reward-memory/embedded.sqlite3")
}

/// `path` plus a suffix such as `-wal`.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// (status, reason_codes, write.status, write.retry_disposition) of a receipt.
fn outcome(run: &Run) -> (String, Value, String, String) {
    let p = run.json();
    (
        p["status"].as_str().unwrap_or_default().to_owned(),
        p["reason_codes"].clone(),
        p["write"]["status"].as_str().unwrap_or_default().to_owned(),
        p["write"]["retry_disposition"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

fn unavailable(cause: &str) -> (String, Value, String, String) {
    (
        "provider_unavailable".to_owned(),
        json!(["provider_store_unavailable", cause]),
        "unavailable".to_owned(),
        "no_retry".to_owned(),
    )
}

fn row_count(s: &Scratch) -> i64 {
    store(s)
        .query_row("SELECT count(*) FROM resources", [], |r| r.get(0))
        .expect("count")
}

// --- one transaction -------------------------------------------------------------------

#[test]
fn a_failed_index_insert_rolls_the_record_back_and_the_receipt_says_absent() {
    let s = embedded_setup(|_| {});
    write_events(&s, 0..2);
    assert_eq!(
        configured(&s, "ev0.json", true).json()["status"],
        "activated"
    );
    store(&s)
        .execute_batch(
            "DROP TABLE resources_fts;
             CREATE TABLE resources_fts (body TEXT CHECK (body = 'never'));",
        )
        .expect("an index that refuses every row");
    for _attempt in 0..2 {
        let out = configured(&s, "ev1.json", true);
        assert_eq!(
            outcome(&out),
            (
                "provider_unavailable".to_owned(),
                json!(["provider_sync_write_failed_absent"]),
                "partial".to_owned(),
                "safe_to_retry".to_owned()
            )
        );
        assert_eq!(out.json()["write"]["write_count"], 0);
        conforms("reward_memory_ingest_receipt_v0", &out);
        assert_eq!(row_count(&s), 1, "the record was not committed");
    }
}

#[test]
fn a_hand_deleted_record_does_not_break_the_next_ingest() {
    // The issue's recipe: the deleted record's FTS row stays, the next record takes its id.
    let s = embedded_setup(|_| {});
    write_events(&s, 0..2);
    assert_eq!(
        configured(&s, "ev0.json", true).json()["status"],
        "activated"
    );
    store(&s)
        .execute(
            "DELETE FROM resources WHERE id = (SELECT max(id) FROM resources)",
            [],
        )
        .expect("hand delete");
    let first = configured(&s, "ev1.json", true);
    assert_eq!(outcome(&first).0, "activated");
    assert_eq!(first.json()["write"]["write_count"], 1);
    let indexed: i64 = store(&s)
        .query_row(
            "SELECT count(*) FROM resources r JOIN resources_fts f ON f.rowid = r.id
             WHERE f.body = json_extract(CAST(r.content AS TEXT), '$.content_summary')",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(indexed, 1, "the new record is indexed by its own summary");
    let again = configured(&s, "ev1.json", true);
    assert_eq!(outcome(&again).0, "activated");
    assert_eq!(again.json()["deduplicated"], true);
}

// --- locks -----------------------------------------------------------------------------

#[test]
fn a_lock_held_past_the_timeout_is_busy_and_the_retry_activates() {
    let s = embedded_setup(|c| c["project_provider_binding"]["timeout_seconds"] = json!(1));
    write_events(&s, 0..2);
    assert_eq!(
        configured(&s, "ev0.json", true).json()["status"],
        "activated"
    );
    let holder = store(&s);
    holder
        .execute_batch(
            "BEGIN IMMEDIATE;
             INSERT INTO store_meta (key, value) VALUES ('held', 'yes');",
        )
        .expect("hold the write lock");
    let busy = configured(&s, "ev1.json", true);
    assert_eq!(
        outcome(&busy),
        (
            "provider_unavailable".to_owned(),
            json!(["provider_store_busy", "provider_store_cause_busy"]),
            "unavailable".to_owned(),
            "safe_to_retry".to_owned()
        )
    );
    assert_eq!(busy.json()["write"]["reason_code"], "provider_store_busy");
    conforms("reward_memory_ingest_receipt_v0", &busy);
    // Opening the store, re-syncing stored bytes and the readback take no write lock.
    let stored = configured(&s, "ev0.json", true);
    assert_eq!(outcome(&stored).0, "activated");
    assert_eq!(stored.json()["exact_readback_verified"], true);
    holder.execute_batch("ROLLBACK").expect("release");
    let retried = configured(&s, "ev1.json", true);
    assert_eq!(outcome(&retried).0, "activated");
    assert_eq!(retried.json()["write"]["write_count"], 1);
}

// --- causes ----------------------------------------------------------------------------

#[test]
fn a_directory_at_the_store_path_is_not_a_file() {
    let s = embedded_setup(|c| {
        c["project_provider_binding"]["provider_binary"] = json!("a-directory");
    });
    std::fs::create_dir_all(s.path.join("a-directory")).expect("directory");
    let out = configured(&s, "event.json", true);
    assert_eq!(
        outcome(&out),
        unavailable("provider_store_cause_not_a_file")
    );
    conforms("reward_memory_ingest_receipt_v0", &out);
}

#[test]
fn a_corrupt_header_is_reported_and_the_file_is_left_alone() {
    let s = embedded_setup(|_| {});
    write_events(&s, 0..2);
    assert_eq!(
        configured(&s, "ev0.json", true).json()["status"],
        "activated"
    );
    let path = store_path(&s);
    let mut bytes = std::fs::read(&path).expect("store");
    bytes[..16].copy_from_slice(b"not a database!!");
    std::fs::write(&path, &bytes).expect("corrupt header");
    let out = configured(&s, "ev1.json", true);
    assert_eq!(outcome(&out), unavailable("provider_store_cause_corrupt"));
    assert_eq!(std::fs::read(&path).expect("store"), bytes);
}

#[test]
fn a_store_with_a_zeroed_page_is_never_written() {
    // The issue's recipe on a 300-record store, then ingests of new events:
    // `dd if=/dev/zero of=$DB bs=4096 seek=199 count=1 conv=notrunc`.
    use reward_memory::provider::embedded::EmbeddedStore;
    use reward_memory::provider::{ContextProvider as _, SyncRequest, SyncResource, SyncSource};
    let s = embedded_setup(|_| {});
    write_events(&s, 0..12);
    assert_eq!(
        configured(&s, "ev0.json", true).json()["status"],
        "activated"
    );
    let path = store_path(&s);
    let filler = EmbeddedStore::new(path.clone());
    for i in 1..300 {
        let record = format!(
            "{{\"candidate_ref\":\"candidate:{i:020}\",\"padding\":\"{}\"}}\n",
            "p".repeat(1100)
        );
        let sync = filler.sync(&SyncRequest {
            namespace: "reward_memory".to_owned(),
            resources: vec![SyncResource {
                source: SyncSource::Bytes(record.into_bytes()),
                target_ref: format!("embedded://reward-memory/issue-fix/filler-{i}.json"),
                search_text: None,
            }],
            timeout_seconds: 5.0,
            observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
            execute: true,
        });
        assert_eq!(sync.write_count, 1);
    }
    let mut bytes = std::fs::read(&path).expect("store");
    assert!(bytes.len() > 200 * 4096);
    bytes[199 * 4096..200 * 4096].fill(0);
    std::fs::write(&path, &bytes).expect("zero one page");
    let mut activated = 0;
    for i in 2..12 {
        let out = configured(&s, &format!("ev{i}.json"), true);
        if out.json()["status"] == "activated" {
            activated += 1;
        } else {
            assert_eq!(outcome(&out), unavailable("provider_store_cause_corrupt"));
        }
    }
    assert_eq!(activated, 0);
    assert_eq!(
        std::fs::read(&path).expect("store"),
        bytes,
        "nothing written"
    );
}

/// True when this process runs as root (file modes do not stop root).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Uid:"))
                .and_then(|line| line.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// The configured `ingest-event --execute` of `input`, run as a user that file modes apply
/// to (`nobody` through `setpriv` when the tests run as root). `None` when no such user
/// can be had here.
fn run_unprivileged(s: &Scratch, input: &str) -> Option<Run> {
    let args = [
        "--registry",
        "registry.json",
        "--runtime-root",
        "rt",
        "ingest-event",
        "--input",
        input,
        "--goal-id",
        "embedded-demo",
        "--agent-id",
        "pilot",
        "--execute",
        "--format",
        "json",
    ];
    if running_as_root() && !reachable_by_others(&s.path) {
        // e.g. a checkout inside a `mktemp -d` directory (mode 0700): the unprivileged
        // user cannot reach the scratch dir or the binary, which says nothing of the store.
        crate::support::note(&format!(
            "skipped: {} is not reachable by an unprivileged user",
            s.path.display()
        ));
        return None;
    }
    let mut cmd = if running_as_root() {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        cmd
    } else {
        Command::new(BIN)
    };
    cmd.current_dir(&s.path)
        .env("HOME", s.path.join(".home"))
        .env_remove("LOOPX_REGISTRY")
        .args(args);
    let output = cmd.output().ok()?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if stdout.is_empty() {
        crate::support::note(&format!(
            "cannot run as an unprivileged user: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
        return None;
    }
    Some(Run {
        code: output.status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// True when every directory above `path` (and the binary's) lets others through.
fn reachable_by_others(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    [path, Path::new(BIN)].iter().all(|p| {
        p.ancestors().skip(1).all(|dir| {
            dir.as_os_str().is_empty()
                || std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
        })
    })
}

/// A scratch setup whose runtime root belongs to the unprivileged user.
fn unprivileged_setup() -> Scratch {
    let s = embedded_setup(|_| {});
    write_events(&s, 0..3);
    std::fs::create_dir_all(s.path.join("rt")).expect("runtime root");
    if running_as_root() {
        std::os::unix::fs::chown(s.path.join("rt"), Some(65534), Some(65534)).expect("chown");
    }
    s
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn a_store_file_without_permissions_is_permission_denied() {
    let s = unprivileged_setup();
    let Some(first) = run_unprivileged(&s, "ev0.json") else {
        return;
    };
    assert_eq!(outcome(&first).0, "activated");
    let path = store_path(&s);
    chmod(&path, 0o000);
    let denied = run_unprivileged(&s, "ev1.json").expect("ran before");
    assert_eq!(
        outcome(&denied),
        unavailable("provider_store_cause_permission_denied")
    );
    chmod(&path, 0o600);
    assert_eq!(
        outcome(&run_unprivileged(&s, "ev1.json").expect("ran before")).0,
        "activated"
    );
}

#[test]
fn read_only_wal_and_shm_left_by_a_read_only_attempt_are_named() {
    // Item 9 of the issue: the store made read-only, an ingest attempted (SQLite creates
    // `-wal`/`-shm` with the store's mode), the store made writable again.
    let s = unprivileged_setup();
    let Some(first) = run_unprivileged(&s, "ev0.json") else {
        return;
    };
    assert_eq!(outcome(&first).0, "activated");
    let path = store_path(&s);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(beside(&path, suffix));
    }
    chmod(&path, 0o444);
    let read_only = run_unprivileged(&s, "ev1.json").expect("ran before");
    assert_eq!(
        outcome(&read_only),
        unavailable("provider_store_cause_permission_denied")
    );
    chmod(&path, 0o600);
    for _attempt in 0..2 {
        let leftover = run_unprivileged(&s, "ev1.json").expect("ran before");
        assert_eq!(
            outcome(&leftover),
            unavailable("provider_store_cause_readonly_wal_shm")
        );
    }
    std::fs::remove_file(beside(&path, "-shm")).expect("remove the read-only -shm");
    assert_eq!(
        outcome(&run_unprivileged(&s, "ev1.json").expect("ran before")).0,
        "activated"
    );
}

#[test]
fn a_full_disk_is_disk_full() {
    let s = embedded_setup(|_| {});
    write_events(&s, 0..2);
    std::fs::create_dir_all(s.path.join("small")).expect("mount point");
    // In a private mount namespace the tmpfs disappears with the script, whatever happens.
    let script = r#"
        set -u
        mount -t tmpfs -o size=256k tmpfs small || exit 77
        run() {
            "$BIN" --registry registry.json --runtime-root small/rt ingest-event --input "$1" \
                --goal-id embedded-demo --agent-id pilot --execute --format json
        }
        run ev0.json > first.json
        head -c 1048576 /dev/zero > small/fill 2>/dev/null
        run ev1.json > second.json
        df -k small | tail -1 > df.txt
    "#;
    let mut cmd = Command::new("unshare");
    cmd.arg("--mount");
    if !running_as_root() {
        cmd.arg("--map-root-user");
    }
    let status = cmd
        .args(["sh", "-c", script])
        .env("BIN", BIN)
        .env("HOME", s.path.join(".home"))
        .current_dir(&s.path)
        .status();
    match status {
        Ok(status) if status.success() => {}
        other => {
            crate::support::note(&format!(
                "skipped: cannot mount a small tmpfs in a private mount namespace here ({other:?})"
            ));
            return;
        }
    }
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(s.path.join(name)).expect("receipt"))
            .expect("JSON receipt")
    };
    assert_eq!(read("first.json")["status"], "activated");
    let second = read("second.json");
    assert_eq!(
        (second["status"].clone(), second["reason_codes"].clone()),
        (
            json!("provider_unavailable"),
            json!([
                "provider_store_unavailable",
                "provider_store_cause_disk_full"
            ])
        ),
        "df: {}",
        std::fs::read_to_string(s.path.join("df.txt")).unwrap_or_default()
    );
}

// --- files -----------------------------------------------------------------------------

#[test]
fn store_files_are_private_and_nothing_is_staged() {
    use std::os::unix::fs::PermissionsExt as _;
    let s = embedded_setup(|_| {});
    write_events(&s, 0..1);
    let tmp = s.path.join("tmp");
    std::fs::create_dir_all(&tmp).expect("TMPDIR");
    let mut cmd = Command::new(BIN);
    cmd.current_dir(&s.path)
        .env("HOME", s.path.join(".home"))
        .env("TMPDIR", &tmp)
        .env_remove("LOOPX_REGISTRY")
        .args([
            "--registry",
            "registry.json",
            "--runtime-root",
            "rt",
            "ingest-event",
            "--input",
            "ev0.json",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--execute",
            "--format",
            "json",
        ]);
    let output = cmd.output().expect("runs");
    let receipt: Value = serde_json::from_slice(&output.stdout).expect("receipt");
    assert_eq!(receipt["status"], "activated");
    let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    let path = store_path(&s);
    assert_eq!(mode(&s.path.join("rt/reward-memory")), 0o700);
    for file in [
        path.clone(),
        beside(&path, "-wal"),
        beside(&path, "-shm"),
        beside(&path, "-checked"),
    ] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    assert_eq!(
        std::fs::read_dir(&tmp).expect("TMPDIR").count(),
        0,
        "nothing under TMPDIR"
    );
    assert!(
        !s.path.join("rt/reward-memory/staging").exists(),
        "the embedded store stages nothing"
    );
}
