//! Unit tests of the embedded store: writes, conflicts, rollback, locks, the integrity
//! check, failure causes and file modes.

use super::*;
use crate::provider::{ResultCap, SyncResource};
use rusqlite::Connection;

const NAMESPACE: &str = "reward_memory";

fn bytes_request(content: &str, target: &str) -> SyncRequest {
    SyncRequest {
        namespace: NAMESPACE.to_owned(),
        resources: vec![SyncResource {
            source: SyncSource::Bytes(content.as_bytes().to_vec()),
            target_ref: target.to_owned(),
            search_text: None,
        }],
        timeout_seconds: 5.0,
        observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
        execute: true,
    }
}

fn file_request(dir: &Path, name: &str, content: &str, target: &str) -> SyncRequest {
    let source = dir.join(name);
    std::fs::write(&source, content).expect("write source");
    SyncRequest {
        resources: vec![SyncResource {
            source: SyncSource::File(source),
            target_ref: target.to_owned(),
            search_text: None,
        }],
        ..bytes_request("", target)
    }
}

fn retrieve_request(query: &str, scope: &str) -> RetrieveRequest {
    RetrieveRequest {
        namespace: NAMESPACE.to_owned(),
        scope_ref: scope.to_owned(),
        query: query.to_owned(),
        query_summary: "test".to_owned(),
        max_results: 3,
        cap: ResultCap::Reference,
        timeout_seconds: 5.0,
        observed_at: "2026-07-16T00:30:00+00:00".to_owned(),
    }
}

/// A record of about the size of a real active record (1.1 KB), distinct per `i`.
fn record(i: usize) -> String {
    format!(
        "{{\"candidate_ref\":\"candidate:{i:020}\",\"content_summary\":\"Keep memory-core changes focused, variant {i}, word{i}x.\",\"padding\":\"{}\"}}\n",
        "p".repeat(1000)
    )
}

fn target(i: usize) -> String {
    format!("embedded://rm/c/record-{i}.json")
}

fn store_in(dir: &tempfile::TempDir) -> EmbeddedStore {
    EmbeddedStore::new(dir.path().join("s/embedded.sqlite3"))
}

fn sync(store: &EmbeddedStore, i: usize) -> Sync {
    store
        .try_sync(&bytes_request(&record(i), &target(i)))
        .expect("valid request")
}

fn sync_with_timeout(store: &EmbeddedStore, i: usize, seconds: f64) -> Sync {
    let mut request = bytes_request(&record(i), &target(i));
    request.timeout_seconds = seconds;
    store.try_sync(&request).expect("valid request")
}

/// (status, reason_code, retry_disposition, cause_code) of a sync.
fn verdict(s: &Sync) -> (&str, Option<&str>, &str, Option<&str>) {
    (
        s.status.as_str(),
        s.reason_code.as_deref(),
        s.retry_disposition.as_str(),
        s.cause_code.as_deref(),
    )
}

fn unavailable(
    cause: StoreCause,
) -> (
    &'static str,
    Option<&'static str>,
    &'static str,
    Option<&'static str>,
) {
    (
        "unavailable",
        Some(cause.reason_code()),
        cause.retry_disposition(),
        Some(cause.code()),
    )
}

fn connect(store: &EmbeddedStore) -> Connection {
    let conn = Connection::open(store.path()).expect("second connection");
    conn.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    conn
}

// --- writes ----------------------------------------------------------------------------

#[test]
fn write_then_search_returns_exact_bytes_and_resync_is_idempotent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    let target = "embedded://rm/c/a.json";
    let req = file_request(dir.path(), "a.json", "{\"k\":\"alpha beta\"}\n", target);
    let first = store.try_sync(&req).expect("valid");
    assert_eq!((first.status.as_str(), first.write_count), ("completed", 1));
    assert_eq!(first.result_refs, vec![target.to_owned()]);
    let second = store
        .try_sync(&bytes_request("{\"k\":\"alpha beta\"}\n", target))
        .expect("valid");
    assert_eq!(
        (second.status.as_str(), second.write_count),
        ("completed", 0)
    );
    assert_eq!(store.count(), Ok(1));
    let stored = store
        .read(NAMESPACE, target)
        .expect("read")
        .expect("present");
    assert_eq!(stored.content, b"{\"k\":\"alpha beta\"}\n");
    let hits = store
        .try_retrieve(&retrieve_request("beta", "embedded://rm/c"))
        .expect("valid");
    assert_eq!(hits.status, "completed");
    assert_eq!(hits.items.len(), 1);
    assert_eq!(hits.items[0].content, "{\"k\":\"alpha beta\"}\n");
    let other_scope = store
        .try_retrieve(&retrieve_request("beta", "embedded://rm/other"))
        .expect("valid");
    assert!(other_scope.items.is_empty());
}

#[test]
fn a_different_payload_is_a_revision_conflict_and_is_not_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    let target = "embedded://rm/c/a.json";
    store
        .try_sync(&bytes_request("one", target))
        .expect("valid");
    let conflict = store
        .try_sync(&bytes_request("two", target))
        .expect("valid");
    assert_eq!(
        verdict(&conflict),
        (
            "partial",
            Some("provider_sync_revision_conflict"),
            "no_retry",
            None
        )
    );
    assert_eq!(conflict.write_count, 0);
    let stored = store
        .read(NAMESPACE, target)
        .expect("read")
        .expect("present");
    assert_eq!(stored.content, b"one");
}

#[test]
fn bad_targets_and_scopes_are_call_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    let req = bytes_request("x", "viking://resources/a.json");
    assert!(store.try_sync(&req).is_err());
    let missing = SyncRequest {
        resources: vec![SyncResource {
            source: SyncSource::File(dir.path().join("absent.json")),
            target_ref: "embedded://rm/a.json".to_owned(),
            search_text: None,
        }],
        ..bytes_request("x", "embedded://rm/a.json")
    };
    assert!(store.try_sync(&missing).is_err());
    assert!(
        store
            .try_retrieve(&retrieve_request("x", "viking://x"))
            .is_err()
    );
    assert!(
        !store.path().exists(),
        "nothing is created for a refused call"
    );
}

#[test]
fn a_missing_store_is_an_empty_search() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::new(dir.path().join("none.sqlite3"));
    let r = store
        .try_retrieve(&retrieve_request("anything", "embedded://rm"))
        .expect("valid");
    assert_eq!((r.status.as_str(), r.items.len()), ("completed", 0));
    assert!(!store.path().exists(), "a search creates nothing");
}

/// A plain retrieve keeps the reference's cap of 8; a rank-prior pool asks for more.
#[test]
fn a_pool_retrieve_goes_past_the_reference_cap_and_a_plain_one_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    for i in 0..12 {
        assert_eq!(sync(&store, i).status, "completed");
    }
    let mut request = retrieve_request("focused", "embedded://rm/c");
    request.max_results = 12;
    let plain = store.try_retrieve(&request).expect("valid");
    assert_eq!((plain.requested_limit, plain.items.len()), (8, 8));
    request.cap = ResultCap::Pool;
    let pool = store.try_retrieve(&request).expect("valid");
    assert_eq!((pool.requested_limit, pool.items.len()), (12, 12));
    assert_eq!(
        pool.items[..8],
        plain.items[..],
        "the pool begins with the plain answer"
    );
}

#[test]
fn concurrent_writers_of_the_same_record_write_it_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("embedded.sqlite3");
    let request = bytes_request("same bytes", "embedded://rm/c/a.json");
    let writes: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let store = EmbeddedStore::new(path.clone());
                let request = &request;
                scope.spawn(move || store.try_sync(request).expect("valid"))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                let sync = h.join().expect("no panic");
                assert_eq!(sync.status, "completed");
                sync.write_count
            })
            .sum()
    });
    assert_eq!(writes, 1);
    assert_eq!(EmbeddedStore::new(path).count(), Ok(1));
}

#[test]
fn non_finite_timeouts_do_not_panic() {
    assert_eq!(busy_timeout(f64::NAN), Duration::from_secs(30));
    assert_eq!(busy_timeout(f64::INFINITY), Duration::from_secs(30));
    assert_eq!(busy_timeout(0.5), Duration::from_secs(1));
}

#[test]
fn query_words_are_the_distinct_lowered_words_in_order() {
    assert_eq!(
        query_words("candidate:3a1d Keep \"it\" OR keep"),
        ["candidate", "3a1d", "keep", "it", "or"]
    );
    assert!(query_words(" :: ").is_empty());
}

// --- one transaction: all or nothing ----------------------------------------------------

#[test]
fn a_failing_index_insert_rolls_the_whole_record_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    assert_eq!(sync(&store, 0).status, "completed");
    // An index table that refuses every row: the record row goes in, its index row fails.
    connect(&store)
        .execute_batch(
            "DROP TABLE resources_fts;
             CREATE TABLE resources_fts (body TEXT CHECK (body = 'never'));",
        )
        .expect("replace the index");
    let failed = sync(&store, 1);
    assert_eq!(
        verdict(&failed),
        (
            "partial",
            Some("provider_sync_write_failed_absent"),
            "safe_to_retry",
            None
        )
    );
    assert_eq!(failed.write_count, 0);
    assert_eq!(
        store.read(NAMESPACE, &target(1)),
        Ok(None),
        "absent means absent"
    );
    assert_eq!(store.count(), Ok(1));
}

#[test]
fn an_index_row_left_by_a_hand_deleted_record_does_not_block_new_records() {
    // The recipe: `DELETE FROM resources WHERE id = (SELECT max(id) ...)` leaves
    // the FTS row behind, and the next record gets the same rowid.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    assert_eq!(sync(&store, 0).status, "completed");
    connect(&store)
        .execute(
            "DELETE FROM resources WHERE id = (SELECT max(id) FROM resources)",
            [],
        )
        .expect("hand delete");
    let next = sync(&store, 1);
    assert_eq!(verdict(&next), ("completed", None, "no_retry", None));
    assert_eq!(next.write_count, 1);
    let conn = connect(&store);
    let (rows, indexed): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM resources),
                    (SELECT count(*) FROM resources r JOIN resources_fts f ON f.rowid = r.id
                     WHERE f.body = json_extract(CAST(r.content AS TEXT), '$.content_summary'))",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("counts");
    assert_eq!(
        (rows, indexed),
        (1, 1),
        "the new record is indexed by its own summary"
    );
    let hits = store
        .try_retrieve(&retrieve_request("word1x", "embedded://rm/c"))
        .expect("valid");
    assert_eq!(hits.items.len(), 1);
    assert_eq!(hits.items[0].content, record(1));
}

// --- locks -----------------------------------------------------------------------------

/// A second connection holding the write lock (an open `BEGIN IMMEDIATE` with an
/// uncommitted row) for as long as it lives.
fn hold_write_lock(store: &EmbeddedStore) -> Connection {
    let conn = connect(store);
    conn.execute_batch(
        "BEGIN IMMEDIATE;
         INSERT INTO store_meta (key, value) VALUES ('held', 'yes');",
    )
    .expect("take the write lock");
    conn
}

#[test]
fn a_writer_holding_the_lock_past_the_timeout_is_busy_and_safe_to_retry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let holder = hold_write_lock(&store);
    let started = Instant::now();
    let busy = sync_with_timeout(&store, 1, 1.0);
    assert_eq!(verdict(&busy), unavailable(StoreCause::Busy));
    assert_eq!(busy.reason_code.as_deref(), Some("provider_store_busy"));
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited the timeout"
    );
    drop(holder);
    assert_eq!(sync(&store, 1).write_count, 1, "the retry writes it");
}

#[test]
fn a_lock_released_within_the_timeout_is_waited_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let holder = hold_write_lock(&store);
    let released = std::thread::scope(|scope| {
        let writer = scope.spawn(|| sync_with_timeout(&store, 1, 5.0));
        std::thread::sleep(Duration::from_millis(300));
        drop(holder);
        writer.join().expect("no panic")
    });
    assert_eq!(verdict(&released), ("completed", None, "no_retry", None));
    assert_eq!(released.write_count, 1);
}

#[test]
fn opening_an_existing_store_and_resyncing_stored_bytes_need_no_write_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let _holder = hold_write_lock(&store);
    let again = sync_with_timeout(&store, 0, 1.0);
    assert_eq!(verdict(&again), ("completed", None, "no_retry", None));
    assert_eq!(again.write_count, 0);
}

#[test]
fn reads_do_not_wait_for_a_writer_holding_the_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let _holder = hold_write_lock(&store);
    let started = Instant::now();
    let mut request = retrieve_request("word0x", "embedded://rm/c");
    request.timeout_seconds = 1.0;
    let hits = store.try_retrieve(&request).expect("valid");
    assert_eq!((hits.status.as_str(), hits.items.len()), ("completed", 1));
    assert_eq!(
        store.read(NAMESPACE, &target(0)).map(|r| r.is_some()),
        Ok(true)
    );
    assert!(started.elapsed() < Duration::from_secs(1), "no lock wait");
}

/// A connection in exclusive locking mode that has written: it keeps an exclusive lock
/// on the store, which blocks even WAL readers, until it is closed.
fn hold_exclusive_lock(store: &EmbeddedStore) -> Connection {
    let conn = connect(store);
    conn.execute_batch(
        "PRAGMA locking_mode = EXCLUSIVE;
         BEGIN IMMEDIATE;
         INSERT OR REPLACE INTO store_meta (key, value) VALUES ('held', 'yes');
         COMMIT;",
    )
    .expect("take an exclusive lock");
    conn
}

#[test]
fn a_read_blocked_past_the_timeout_reports_the_store_busy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let _holder = hold_exclusive_lock(&store);
    let mut request = retrieve_request("word0x", "embedded://rm/c");
    request.timeout_seconds = 1.0;
    let blocked = store.try_retrieve(&request).expect("valid");
    assert_eq!(
        (blocked.status.as_str(), blocked.reason_code.as_deref()),
        ("unavailable", Some("provider_store_busy"))
    );
}

#[test]
fn a_read_blocked_for_less_than_the_timeout_waits_and_succeeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let holder = hold_exclusive_lock(&store);
    let hits = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            store
                .try_retrieve(&retrieve_request("word0x", "embedded://rm/c"))
                .expect("valid")
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(holder);
        reader.join().expect("no panic")
    });
    assert_eq!((hits.status.as_str(), hits.items.len()), ("completed", 1));
}

// --- integrity -------------------------------------------------------------------------

/// Overwrites `len` bytes at `offset` of the store file, as `dd conv=notrunc` does.
fn overwrite(path: &Path, offset: u64, bytes: &[u8]) {
    use std::io::{Seek as _, SeekFrom, Write as _};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open store file");
    file.seek(SeekFrom::Start(offset)).expect("seek");
    file.write_all(bytes).expect("overwrite");
}

#[test]
fn no_write_goes_into_a_store_with_a_zeroed_page() {
    // The recipe on a 300-record store:
    // `dd if=/dev/zero of=$DB bs=4096 seek=199 count=1 conv=notrunc`.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    for i in 0..300 {
        assert_eq!(sync(&store, i).write_count, 1);
    }
    // The index holds only each record's summary, so the store is smaller than the
    // issue's: zero a page in its middle instead of page 199.
    let pages = std::fs::metadata(store.path()).expect("store").len() / 4096;
    assert!(pages > 60, "the store has {pages} pages");
    overwrite(store.path(), (pages / 2) * 4096, &[0u8; 4096]);
    let mut activated = 0;
    for i in 300..420 {
        let attempt = sync(&store, i);
        if attempt.status == "completed" {
            activated += 1;
        } else {
            assert_eq!(verdict(&attempt), unavailable(StoreCause::Corrupt));
        }
    }
    assert_eq!(activated, 0);
}

#[test]
fn a_store_changed_outside_is_checked_once_then_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    let record = file::check_record_path(store.path());
    let before = std::fs::read_to_string(&record).expect("the writer recorded the file");
    assert!(before.starts_with("reward_memory_embedded_store_check_v1 "));
    // A valid change made by another program: re-checked, found sound, written.
    connect(&store)
        .execute("INSERT INTO store_meta (key, value) VALUES ('k', 'v')", [])
        .expect("outside write");
    assert_eq!(sync(&store, 1).write_count, 1);
    let after = std::fs::read_to_string(&record).expect("recorded again");
    assert_ne!(before, after);
}

#[test]
fn a_store_with_a_corrupt_header_is_unavailable_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    sync(&store, 0);
    overwrite(store.path(), 0, b"this is not a sqlite header at all");
    let before = std::fs::read(store.path()).expect("store");
    assert_eq!(verdict(&sync(&store, 1)), unavailable(StoreCause::Corrupt));
    assert_eq!(std::fs::read(store.path()).expect("store"), before);
    let search = store
        .try_retrieve(&retrieve_request("word0x", "embedded://rm/c"))
        .expect("valid");
    assert_eq!(
        search.reason_code.as_deref(),
        Some("provider_store_unavailable")
    );
}

// --- causes and files -------------------------------------------------------------------

#[test]
fn a_directory_at_the_store_path_is_not_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::new(dir.path().to_path_buf());
    assert_eq!(verdict(&sync(&store, 0)), unavailable(StoreCause::NotAFile));
    let search = store
        .try_retrieve(&retrieve_request("x", "embedded://rm"))
        .expect("valid");
    assert_eq!(
        (search.status.as_str(), search.reason_code.as_deref()),
        ("unavailable", Some("provider_store_unavailable"))
    );
}

#[test]
fn a_file_where_a_parent_directory_should_be_is_not_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("blocker"), "x").expect("blocker");
    let store = EmbeddedStore::new(dir.path().join("blocker/embedded.sqlite3"));
    assert_eq!(verdict(&sync(&store, 0)), unavailable(StoreCause::NotAFile));
}

#[test]
fn cause_codes_are_distinct_and_only_busy_is_retried() {
    let codes: std::collections::BTreeSet<&str> =
        StoreCause::ALL.iter().map(|c| c.code()).collect();
    assert_eq!(codes.len(), StoreCause::ALL.len());
    for cause in StoreCause::ALL {
        assert!(cause.code().starts_with("provider_store_cause_"));
        let busy = cause == StoreCause::Busy;
        assert_eq!(cause.retry_disposition() == "safe_to_retry", busy);
        assert_eq!(cause.reason_code() == "provider_store_busy", busy);
    }
}

#[cfg(unix)]
#[test]
fn a_new_store_and_its_directory_are_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::new(dir.path().join("a/b/embedded.sqlite3"));
    sync(&store, 0);
    assert_eq!(mode(store.path()), 0o600);
    assert_eq!(mode(&file::check_record_path(store.path())), 0o600);
    assert_eq!(mode(&dir.path().join("a")), 0o700);
    assert_eq!(mode(&dir.path().join("a/b")), 0o700);
    // While another connection keeps them, the -wal and -shm files exist: also 0600.
    let reader = connect(&store);
    let _: i64 = reader
        .query_row("SELECT count(*) FROM resources", [], |r| r.get(0))
        .expect("read");
    sync(&store, 1);
    for suffix in ["-wal", "-shm"] {
        let mut name = store.path().as_os_str().to_owned();
        name.push(suffix);
        assert_eq!(mode(Path::new(&name)), 0o600, "{suffix}");
    }
}

// --- trust ------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_store_others_may_write_or_behind_a_link_is_never_opened() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    assert_eq!(sync(&store, 0).status, "completed");
    let bytes = std::fs::read(store.path()).expect("store");
    let chmod = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    chmod(store.path(), 0o666);
    assert_eq!(
        verdict(&sync(&store, 1)),
        unavailable(StoreCause::Untrusted)
    );
    assert_eq!(store.count(), Err(StoreCause::Untrusted));
    assert_eq!(
        store.read(NAMESPACE, &target(0)),
        Err(StoreCause::Untrusted)
    );
    let search = store
        .try_retrieve(&retrieve_request("variant", "embedded://rm"))
        .expect("valid");
    assert_eq!(
        (search.status.as_str(), search.reason_code.as_deref()),
        ("unavailable", Some("provider_store_unavailable"))
    );
    assert!(search.items.is_empty());
    assert_eq!(
        std::fs::read(store.path()).expect("store"),
        bytes,
        "untouched"
    );
    assert_eq!(
        store.trust_problem().map(|p| p.code()),
        Some("untrusted_mode")
    );
    chmod(store.path(), 0o600);
    assert_eq!(store.trust_problem(), None);
    // The same store through a link.
    let link = EmbeddedStore::new(dir.path().join("link.sqlite3"));
    std::os::unix::fs::symlink(store.path(), link.path()).expect("symlink");
    assert_eq!(link.count(), Err(StoreCause::Untrusted));
    assert_eq!(
        link.trust_problem().map(|p| p.code()),
        Some("untrusted_symlink")
    );
    assert_eq!(store.count(), Ok(1));
}

#[cfg(unix)]
#[test]
fn the_default_location_needs_a_private_chain_from_the_runtime_root() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("rt");
    std::fs::create_dir(&root).expect("root");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let store = EmbeddedStore::in_runtime_root(&root);
    assert_eq!(
        verdict(&sync(&store, 0)),
        unavailable(StoreCause::Untrusted)
    );
    assert!(!root.join("reward-memory").exists(), "nothing created");
    let problem = store.trust_problem().expect("refused");
    assert!(
        problem.to_string().starts_with("runtime root "),
        "{problem}"
    );
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    assert_eq!(sync(&store, 0).status, "completed");
    let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&root.join("reward-memory")), 0o700);
}

#[cfg(unix)]
#[test]
fn the_check_record_is_never_written_through_a_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    assert_eq!(sync(&store, 0).status, "completed");
    let record = file::check_record_path(store.path());
    std::fs::remove_file(&record).expect("rm record");
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").expect("victim");
    std::os::unix::fs::symlink(&victim, &record).expect("symlink");
    file::record_checked(store.path());
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "precious"
    );
    assert_eq!(
        verdict(&sync(&store, 1)),
        unavailable(StoreCause::Untrusted)
    );
}

fn snapshot_of(store: &EmbeddedStore) -> String {
    store
        .try_retrieve(&retrieve_request("memory", "embedded://rm/c"))
        .expect("valid request")
        .snapshot
        .expect("a generation")
}

#[test]
fn the_generation_changes_with_each_write_and_only_then() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store_in(&dir);
    assert_eq!(snapshot_of(&store), initial_generation(), "no store yet");
    sync(&store, 1);
    let one = snapshot_of(&store);
    assert_ne!(one, initial_generation());
    let stored = store
        .read(NAMESPACE, &target(1))
        .expect("read")
        .expect("row");
    assert_eq!(
        one,
        next_generation(
            &initial_generation(),
            NAMESPACE,
            &target(1),
            &stored.content_sha256
        )
    );
    assert_eq!(snapshot_of(&store), one, "reading changes nothing");
    sync(&store, 1);
    assert_eq!(snapshot_of(&store), one, "an identical re-sync is no write");
    sync(&store, 2);
    let two = snapshot_of(&store);
    assert_ne!(two, one);
    // A query without words (no search) still names the generation.
    let wordless = store
        .try_retrieve(&retrieve_request("-", "embedded://rm/c"))
        .expect("valid request");
    assert_eq!(wordless.snapshot.as_deref(), Some(two.as_str()));
    // A store written before generations were kept: a value of its count and last record
    // (no pass over the records), stable until the next write, which continues from it.
    connect(&store)
        .execute(
            "DELETE FROM store_meta WHERE key = ?1",
            params![GENERATION_KEY],
        )
        .expect("delete");
    let legacy = snapshot_of(&store);
    assert_ne!(legacy, two);
    assert_ne!(legacy, initial_generation());
    assert_eq!(
        snapshot_of(&store),
        legacy,
        "stable while nothing is written"
    );
    sync(&store, 3);
    let three = snapshot_of(&store);
    let stored = store
        .read(NAMESPACE, &target(3))
        .expect("read")
        .expect("row");
    assert_eq!(
        three,
        next_generation(&legacy, NAMESPACE, &target(3), &stored.content_sha256),
        "the next write continues the chain from the legacy value"
    );
    let kept: String = connect(&store)
        .query_row(
            "SELECT value FROM store_meta WHERE key = ?1",
            params![GENERATION_KEY],
            |r| r.get(0),
        )
        .expect("stored");
    assert_eq!(kept, three);
}
