//! The embedded store's file: creating it, opening it for a write or for a read, checking
//! its integrity, and naming why it could not be used.
//!
//! Owns everything that touches the store's files besides the SQL of a sync or a search:
//! * **Creation.** A new store file is made private (mode 0600) before SQLite creates its
//!   `-wal` and `-shm` files, which take the store file's mode; missing parent
//!   directories are created with mode 0700. The schema is created only when it is
//!   missing, so opening an existing store never needs the write lock.
//! * **Reads** (`open_for_read`) use a read-only connection: a writer holding the lock
//!   does not block them (WAL), and a lock that does (recovery, an exclusive-mode
//!   connection) is waited for until the binding's timeout, then reported as busy.
//! * **Integrity** (`open_for_write`). A write never goes into a store that fails
//!   `PRAGMA quick_check`. The check reads the whole file and, with SQLite 3.50, verifies
//!   the FTS5 index (about 0.2 s for 10,000 records, `bench/store-check.sh`), so it runs
//!   only when the store file is not exactly as a writer of this crate last left it:
//!   after each successful write the writer records the file's identity and change times
//!   (`<store>-checked`, mode 0600) once its connection is closed; a different stat (an
//!   outside edit such as `dd`, a restored copy, a crash in the middle of a checkpoint)
//!   or a missing record means one `quick_check` before the next write. A file recorded while a writer held it open is not re-checked, so an
//!   edit made in that window (milliseconds) is only caught by SQLite's own checks.
//! * **Trust** ([`check_trust`], [`crate::io::trust`]). Before any open, the store file and
//!   the files kept beside it (`-wal`, `-shm`, `-journal`, `-checked`) must not be links,
//!   files of another user (root's are fine) or writable by group or others; at the
//!   default location the directories from the runtime root down to the store's are
//!   checked the same way (and created 0700 by a write). Anything else is
//!   [`StoreCause::Untrusted`]: never opened, read or written. A store at a path the
//!   binding names (`provider_binary`) is the user's choice of directory; only its files
//!   are checked there, so a store in a directory others may write is as safe as that
//!   directory (between the check and SQLite's open, somebody allowed to write it could
//!   swap the file). The `-checked` record is written without following a link.
//! * **Causes** ([`StoreCause`]): each failure to use the store gets one public-safe cause
//!   code (no path), taken from the SQLite result code and, where that code is vague
//!   (`SQLITE_CANTOPEN`, `SQLITE_IOERR_*`), from the file system: what is at the path,
//!   the free space of its directory, and `-wal`/`-shm` files left without write
//!   permission.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::io::stat_record::StatRecord;

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use crate::io::trust::{self, Kind, Untrusted};

use super::STORE_SCHEMA_VERSION;
use super::index::{self, Tokenizer};

/// The schema, created in one write transaction when a store lacks it; the index and the
/// markers are added by [`schema`].
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS resources (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    resource_ref TEXT NOT NULL,
    content BLOB NOT NULL,
    content_sha256 TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    UNIQUE (namespace, resource_ref)
);
";

/// The whole schema of a new store: [`SCHEMA`], the schema version, the tokenizer and the
/// index built with it.
fn schema(tokenizer: Tokenizer) -> String {
    format!(
        "{SCHEMA}
INSERT OR IGNORE INTO store_meta (key, value) VALUES ('schema_version', '{STORE_SCHEMA_VERSION}');
INSERT OR IGNORE INTO store_meta (key, value) VALUES ('{}', '{}');
{}
",
        index::TOKENIZER_KEY,
        tokenizer.name(),
        index::create_index_sql(tokenizer)
    )
}

/// First word of the `<store>-checked` record; a record in another format is ignored.
const CHECK_RECORD_VERSION: &str = "reward_memory_embedded_store_check_v1";

/// Free space below which a vague I/O failure is put down to a full disk: more than the
/// largest single write SQLite makes (a 32 KiB `-shm` region, or one WAL frame).
const LOW_SPACE_BYTES: u64 = 64 * 1024;

/// Why the embedded store could not be used. Each has a public-safe cause code (no
/// paths); every cause but [`StoreCause::Busy`] keeps the fail-open status reason
/// `provider_store_unavailable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StoreCause {
    /// Another connection held the lock past the binding's timeout (safe to retry).
    #[error("the store is locked by another writer")]
    Busy,
    /// The file is not a SQLite database, or fails `PRAGMA quick_check`.
    #[error("the store file is corrupt")]
    Corrupt,
    /// The file or its directory may not be opened or written by this user, or the file
    /// system is read-only.
    #[error("the store file or its directory is not writable")]
    PermissionDenied,
    /// The file system holding the store has no room left.
    #[error("the disk holding the store is full")]
    DiskFull,
    /// The path names a directory or another non-file, or one of its parents is a file.
    #[error("the store path is not a file")]
    NotAFile,
    /// The store's `-wal` or `-shm` file exists without write permission (left by a
    /// read-only attempt), so SQLite can only open the store read-only.
    #[error("the store's -wal or -shm file is read-only")]
    ReadonlyWalShm,
    /// Any other I/O failure.
    #[error("the store file could not be read or written")]
    IoError,
    /// The store, a file beside it or (at the default location) a directory above it is
    /// a link, belongs to another user or may be written by group or others
    /// ([`check_trust`]).
    #[error("the store could have been written by another user")]
    Untrusted,
}

impl StoreCause {
    /// Every cause, in documentation order.
    pub const ALL: [StoreCause; 8] = [
        StoreCause::Busy,
        StoreCause::Corrupt,
        StoreCause::PermissionDenied,
        StoreCause::DiskFull,
        StoreCause::NotAFile,
        StoreCause::ReadonlyWalShm,
        StoreCause::IoError,
        StoreCause::Untrusted,
    ];

    /// The public cause code, e.g. `provider_store_cause_corrupt`.
    pub fn code(self) -> &'static str {
        match self {
            StoreCause::Busy => "provider_store_cause_busy",
            StoreCause::Corrupt => "provider_store_cause_corrupt",
            StoreCause::PermissionDenied => "provider_store_cause_permission_denied",
            StoreCause::DiskFull => "provider_store_cause_disk_full",
            StoreCause::NotAFile => "provider_store_cause_not_a_file",
            StoreCause::ReadonlyWalShm => "provider_store_cause_readonly_wal_shm",
            StoreCause::IoError => "provider_store_cause_io_error",
            StoreCause::Untrusted => "provider_store_cause_untrusted",
        }
    }

    /// The status reason code: `provider_store_busy` or `provider_store_unavailable`.
    pub fn reason_code(self) -> &'static str {
        match self {
            StoreCause::Busy => "provider_store_busy",
            _ => "provider_store_unavailable",
        }
    }

    /// `safe_to_retry` for a busy store, else `no_retry`.
    pub fn retry_disposition(self) -> &'static str {
        match self {
            StoreCause::Busy => "safe_to_retry",
            _ => "no_retry",
        }
    }
}

/// `<store><suffix>`, e.g. the `-wal` file beside the store.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The files SQLite and this crate keep beside the store.
const SIBLINGS: [&str; 4] = ["-wal", "-shm", "-journal", "-checked"];

/// The trust rule for the store at `path`: with `root` (the default location under the
/// runtime root), the directories from `root` down to the store's; then the store file
/// and the files beside it (`-wal`, `-shm`, `-journal`, `-checked`). Only refusals
/// ([`Untrusted::is_refusal`]) are returned: what is missing is created later, and a
/// wrong kind or a failed inspection keeps its own cause.
pub fn check_trust(path: &Path, root: Option<&Path>) -> Result<(), Untrusted> {
    let refusal = |result: Result<bool, Untrusted>| match result {
        Err(err) if err.is_refusal() => Err(err),
        _ => Ok(()),
    };
    if let Some(root) = root
        && let Some(parent) = path.parent()
    {
        refusal(trust::check_private_dirs(
            root,
            parent,
            "embedded store directory",
        ))?;
    }
    refusal(trust::check(path, Kind::File, "embedded store"))?;
    for suffix in SIBLINGS {
        refusal(trust::check(
            &beside(path, suffix),
            Kind::File,
            "embedded store file",
        ))?;
    }
    Ok(())
}

/// Creates the store's missing directories (mode 0700): with `root`, every directory
/// from it down, each checked by the trust rule.
fn create_dirs(path: &Path, root: Option<&Path>) -> Result<(), StoreCause> {
    let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    let Some(root) = root else {
        return crate::io::create_private_dir_all(parent).map_err(|err| io_cause(&err));
    };
    match trust::ensure_private_dirs(root, parent, "embedded store directory") {
        Ok(()) => Ok(()),
        Err(trust::TrustedDirError::Untrusted(err)) if err.is_refusal() => {
            Err(StoreCause::Untrusted)
        }
        Err(trust::TrustedDirError::Untrusted(Untrusted::WrongKind { .. })) => {
            Err(StoreCause::NotAFile)
        }
        Err(trust::TrustedDirError::Untrusted(_)) => Err(StoreCause::IoError),
        Err(trust::TrustedDirError::Create(err)) => Err(io_cause(&err)),
    }
}

/// The cause of an OS error met before SQLite was involved.
pub(super) fn io_cause(err: &std::io::Error) -> StoreCause {
    use std::io::ErrorKind as K;
    match err.kind() {
        K::PermissionDenied | K::ReadOnlyFilesystem => StoreCause::PermissionDenied,
        K::NotADirectory | K::IsADirectory | K::AlreadyExists => StoreCause::NotAFile,
        K::StorageFull | K::QuotaExceeded => StoreCause::DiskFull,
        _ => StoreCause::IoError,
    }
}

/// True when `path` exists and this process may not write it (`access(W_OK)`: the
/// owner, group and other bits as they apply to this user, and a read-only mount).
#[cfg(unix)]
fn exists_unwritable(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
        && rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_err()
}

#[cfg(not(unix))]
fn exists_unwritable(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.permissions().readonly())
}

/// True when a `-wal` or `-shm` file beside the store exists and may not be written.
fn readonly_wal_or_shm(path: &Path) -> bool {
    ["-wal", "-shm"]
        .iter()
        .any(|suffix| exists_unwritable(&beside(path, suffix)))
}

/// True when the file system holding `path` has less than [`LOW_SPACE_BYTES`] free.
#[cfg(unix)]
fn low_space(path: &Path) -> bool {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    rustix::fs::statvfs(dir).is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) < LOW_SPACE_BYTES)
}

#[cfg(not(unix))]
fn low_space(_path: &Path) -> bool {
    false
}

/// The store cause of a SQLite error, or `None` when the error is not about the store
/// itself (a constraint, a type mismatch, a bug in a statement). `readonly_seen`: a
/// read-only `-wal`/`-shm` was seen before the store was opened.
fn sqlite_cause(err: &rusqlite::Error, path: &Path, readonly_seen: bool) -> Option<StoreCause> {
    let code = err.sqlite_error_code()?;
    match code {
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Some(StoreCause::Busy),
        ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => Some(StoreCause::Corrupt),
        ErrorCode::DiskFull => Some(StoreCause::DiskFull),
        ErrorCode::ReadOnly
        | ErrorCode::CannotOpen
        | ErrorCode::PermissionDenied
        | ErrorCode::SystemIoFailure
        | ErrorCode::FileLockingProtocolFailed
        | ErrorCode::NoLargeFileSupport => Some(file_system_cause(path, code, readonly_seen)),
        _ => None,
    }
}

/// A vague SQLite failure explained by looking at the file system, most specific first:
/// what is at the path, whether the store file itself may be written, leftover read-only
/// `-wal`/`-shm` files, free space, and only then SQLite's code.
fn file_system_cause(path: &Path, code: ErrorCode, readonly_seen: bool) -> StoreCause {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return StoreCause::NotAFile,
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => return io_cause(&err),
        _ => {}
    }
    if exists_unwritable(path) {
        return StoreCause::PermissionDenied;
    }
    if readonly_seen || readonly_wal_or_shm(path) {
        return StoreCause::ReadonlyWalShm;
    }
    if low_space(path) {
        return StoreCause::DiskFull;
    }
    match code {
        ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
            StoreCause::PermissionDenied
        }
        _ => StoreCause::IoError,
    }
}

/// An open connection to the store, with what was seen beside the store just before it
/// was opened: SQLite gives an empty read-only `-wal` back its mode while opening it (and
/// still uses it read-only), so only a look beforehand can name that cause.
pub(super) struct Opened {
    pub(super) conn: Connection,
    path: PathBuf,
    readonly_seen: bool,
}

impl Opened {
    /// The store cause of an error on this connection (`None`: not about the store).
    pub(super) fn cause(&self, err: &rusqlite::Error) -> Option<StoreCause> {
        sqlite_cause(err, &self.path, self.readonly_seen)
    }

    /// [`Opened::cause`], [`StoreCause::IoError`] when the error names none.
    pub(super) fn cause_of(&self, err: &rusqlite::Error) -> StoreCause {
        self.cause(err).unwrap_or(StoreCause::IoError)
    }
}

fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `op` again while SQLite reports the database busy or locked (some lock waits,
/// such as switching to WAL or WAL recovery, do not go through the busy handler), until
/// `deadline`.
pub(super) fn retry_busy<T>(
    deadline: Instant,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    loop {
        match op() {
            Err(err) if is_busy(&err) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Makes `path` readable and writable by its owner only (a no-op when it is absent).
#[cfg(unix)]
fn make_private(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    // Best effort: a store whose mode cannot be changed is still usable.
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn make_private(_path: &Path) {}

/// The `<store>-checked` record ([`crate::io::stat_record`]).
const CHECK_RECORD: StatRecord = StatRecord {
    version: CHECK_RECORD_VERSION,
};

/// The file recording the store's stat as a writer last left it.
#[cfg(test)]
pub(super) fn check_record_path(path: &Path) -> PathBuf {
    crate::io::stat_record::record_path(path)
}

/// True when the store file is exactly as the last writer recorded it.
fn unchanged_since_check(path: &Path) -> bool {
    CHECK_RECORD.unchanged(path)
}

/// Records the store file's current stat as checked. Call it only after a verified
/// connection was closed. Failing to record only costs one `quick_check` next time.
pub(super) fn record_checked(path: &Path) {
    CHECK_RECORD.record(path);
}

/// `PRAGMA quick_check`: every b-tree page, cell and free-list entry is consistent.
fn quick_check(conn: &Connection) -> rusqlite::Result<bool> {
    let verdict: String = conn.query_row("PRAGMA quick_check(1)", [], |row| row.get(0))?;
    Ok(verdict == "ok")
}

/// True when the store's three tables exist (a store created by an older version, or
/// whose creator was killed before the schema was written, may lack them).
pub(super) fn schema_present(conn: &Connection) -> rusqlite::Result<bool> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master
         WHERE type = 'table' AND name IN ('store_meta', 'resources', 'resources_fts')",
        [],
        |row| row.get(0),
    )?;
    Ok(tables == 3)
}

/// WAL journal (switched only when the store is not in WAL yet), full syncs, the schema
/// when it is missing, and the index when it must be rebuilt: a store of schema v1 (or
/// without a recorded version) is migrated, a `tokenizer` other than the recorded one
/// rebuilds the index with it (`None`: keep the store's). On an existing current store
/// this needs no write lock.
fn prepare(conn: &Connection, tokenizer: Option<Tokenizer>) -> rusqlite::Result<()> {
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    if !schema_present(conn)? {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        tx.execute_batch(&schema(tokenizer.unwrap_or(Tokenizer::NEW_STORE)))?;
        tx.commit()?;
    }
    if index_outdated(conn, tokenizer)? {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        // Decided again under the write lock: another writer may have rebuilt it.
        let from_records = is_v1(&index::schema_version(&tx)?);
        let recorded = index::recorded_tokenizer(&tx)?;
        let wanted = tokenizer.unwrap_or(recorded);
        if from_records || wanted != recorded {
            index::rebuild(&tx, wanted, from_records, STORE_SCHEMA_VERSION)?;
            // The term index was built from the old rows: the next write rebuilds it.
            super::search::invalidate(&tx)?;
        }
        tx.commit()?;
    }
    Ok(())
}

/// True for the schema marker of a store whose index holds whole records: v1, or none.
fn is_v1(version: &Option<String>) -> bool {
    version
        .as_deref()
        .is_none_or(|v| v == index::STORE_SCHEMA_V1)
}

/// True when the store's index must be rebuilt ([`prepare`]).
fn index_outdated(conn: &Connection, tokenizer: Option<Tokenizer>) -> rusqlite::Result<bool> {
    if is_v1(&index::schema_version(conn)?) {
        return Ok(true);
    }
    Ok(match tokenizer {
        Some(wanted) => wanted != index::recorded_tokenizer(conn)?,
        None => false,
    })
}

/// Statements a write connection keeps prepared (rusqlite's default is 16).
const WRITE_STATEMENT_CACHE: usize = 64;

/// Opens the store at `path` for a write, creating it (and its directories) when it does
/// not exist, and migrating or re-indexing it as [`prepare`] says (`tokenizer`: the one the
/// binding names, if any). The connection returned is verified: the store was just created, or is as
/// the last writer recorded it, or passed `PRAGMA quick_check`. `root`: the runtime root
/// when `path` is the default location ([`check_trust`]).
pub(super) fn open_for_write(
    path: &Path,
    root: Option<&Path>,
    timeout: Duration,
    tokenizer: Option<Tokenizer>,
) -> Result<Opened, StoreCause> {
    let deadline = Instant::now() + timeout;
    check_trust(path, root).map_err(|_| StoreCause::Untrusted)?;
    let existing = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => true,
        Ok(_) => return Err(StoreCause::NotAFile),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => false,
        Err(err) => return Err(io_cause(&err)),
    };
    if !existing || root.is_some() {
        create_dirs(path, root)?;
    }
    let readonly_seen = readonly_wal_or_shm(path);
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if !existing {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|err| sqlite_cause(&err, path, readonly_seen).unwrap_or(StoreCause::IoError))?;
    let opened = Opened {
        conn,
        path: path.to_path_buf(),
        readonly_seen,
    };
    let conn = &opened.conn;
    conn.busy_timeout(timeout)
        .map_err(|err| opened.cause_of(&err))?;
    // A bulk write runs a score of cached statements per event (the write, the exact
    // readback, the term index at commit): room for all of them, so none is parsed twice.
    conn.set_prepared_statement_cache_capacity(WRITE_STATEMENT_CACHE);
    if !existing {
        // Before SQLite creates `-wal`/`-shm`, which copy the store file's mode.
        make_private(path);
    } else if !unchanged_since_check(path) {
        match retry_busy(deadline, || quick_check(conn)) {
            Ok(true) => {}
            Ok(false) => return Err(StoreCause::Corrupt),
            Err(err) => return Err(opened.cause_of(&err)),
        }
    }
    retry_busy(deadline, || prepare(conn, tokenizer)).map_err(|err| opened.cause_of(&err))?;
    if !existing {
        for suffix in ["-wal", "-shm"] {
            make_private(&beside(path, suffix));
        }
    }
    Ok(opened)
}

/// Opens the store at `path` for reading: a read-only connection that never takes the
/// write lock. `None` when there is no store yet (no file, or no schema). `root`: as for
/// [`open_for_write`]; nothing is created.
pub(super) fn open_for_read(
    path: &Path,
    root: Option<&Path>,
    timeout: Duration,
) -> Result<Option<Opened>, StoreCause> {
    let deadline = Instant::now() + timeout;
    check_trust(path, root).map_err(|_| StoreCause::Untrusted)?;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(StoreCause::NotAFile),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_cause(&err)),
    }
    let readonly_seen = readonly_wal_or_shm(path);
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|err| sqlite_cause(&err, path, readonly_seen).unwrap_or(StoreCause::IoError))?;
    let opened = Opened {
        conn,
        path: path.to_path_buf(),
        readonly_seen,
    };
    opened
        .conn
        .busy_timeout(timeout)
        .map_err(|err| opened.cause_of(&err))?;
    match retry_busy(deadline, || schema_present(&opened.conn)) {
        Ok(true) => Ok(Some(opened)),
        Ok(false) => Ok(None),
        Err(err) => Err(opened.cause_of(&err)),
    }
}
