//! The SQLite backend of the utility ledger: one file, WAL (a new file's first
//! transaction under a rollback journal), `synchronous=FULL`.
//!
//! Owns the file's creation (mode 0600, parent directories 0700, never over an existing
//! file), its schema and every SQL statement of this backend. An append is one
//! `BEGIN IMMEDIATE` transaction: concurrent appenders wait on the busy timeout and retry
//! taking the lock, and what a committed batch wrote survives a crash. A file that is not
//! a ledger is reported, never replaced or truncated.
//!
//! One file per concern: this one holds [`SqliteLedger`] (opening the file for a write,
//! for a read, the checks before a write); `schema.rs` the tables, `codec.rs` the stored
//! forms of ids, order keys and enums and the row decoders, `backend.rs` the statements
//! of [`super::LedgerBackend`], `salvage.rs` the reading of a damaged file, `traffic.rs` the
//! traffic log's tables and statements ([`super::traffic`]), [`file`](mod@file) what the
//! operating system says about the file.

mod backend;
mod codec;
pub mod file;
mod salvage;
mod schema;
mod traffic;
mod verdicts;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, params};

use super::backend::{LedgerBackend as _, check_format, check_version};
use super::error::{LedgerError, LedgerResult};
use file::{Access, FileState, ReadOnlyStart, ReadPlan};

/// How long one append waits for another to release the ledger.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// SQLite's page cache per connection, in KiB (negative `cache_size`). Appends visit
/// pages in key order a window at a time, so a larger cache buys little (a 1M-delivery
/// append took as long with 8, 24, 32 or 128 MB, and no less CPU time with 256 MB); the
/// memory goes to the staged runs instead.
const CACHE_KIB: i64 = 8_000;

/// The page size of a ledger file that a delivery append creates (SQLite's default is
/// 4096; a file keeps the size it was created with). A fresh ledger's 1M-delivery append
/// took 15-20% less time with 16 KiB pages, alternately measured (fewer, shallower b-tree
/// levels to descend and rebalance for the observation and subject keys, and a quarter of
/// the page writes), for about 25 MB more resident memory; 32 and 64 KiB gained little
/// more and held more memory. A file that a traffic write creates keeps 4 KiB pages: its
/// writes are single events, each a few pages into the write-ahead log.
const LEDGER_PAGE_SIZE: i64 = 16_384;

/// Maps a SQLite failure to the ledger's error (no paths, no SQL).
pub fn map_error(err: &rusqlite::Error) -> LedgerError {
    use rusqlite::ErrorCode as C;
    let detail = match err {
        rusqlite::Error::SqliteFailure(e, Some(msg)) => format!("{msg} ({})", e.extended_code),
        rusqlite::Error::SqliteFailure(e, None) => format!("{e}"),
        other => other.to_string(),
    };
    match err.sqlite_error_code() {
        Some(C::NotADatabase) => LedgerError::Corrupt(detail),
        Some(C::DatabaseCorrupt) => LedgerError::damaged(detail),
        Some(C::DatabaseBusy | C::DatabaseLocked) => LedgerError::Busy,
        Some(C::ReadOnly | C::PermissionDenied) => LedgerError::ReadOnly(detail),
        Some(C::DiskFull) => LedgerError::DiskFull,
        Some(C::CannotOpen) => {
            LedgerError::Storage(format!("cannot open the ledger file: {detail}"))
        }
        _ => LedgerError::Storage(detail),
    }
}

impl From<rusqlite::Error> for LedgerError {
    fn from(err: rusqlite::Error) -> LedgerError {
        map_error(&err)
    }
}

fn sq<T>(result: rusqlite::Result<T>) -> LedgerResult<T> {
    result.map_err(|e| map_error(&e))
}

fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs `op` again while SQLite reports the database busy, up to [`BUSY_TIMEOUT`].
fn retry_busy<T>(op: impl FnMut() -> rusqlite::Result<T>) -> LedgerResult<T> {
    retry_busy_within(BUSY_TIMEOUT, op)
}

/// [`retry_busy`] up to `limit`.
fn retry_busy_within<T>(
    limit: Duration,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> LedgerResult<T> {
    let start = Instant::now();
    let mut pause = 2u64;
    loop {
        match op() {
            Err(err) if is_busy(&err) && start.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(pause));
                pause = (pause * 2).min(50);
            }
            other => return sq(other),
        }
    }
}

/// How the open connection was made (see [`file`](mod@file)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// An ordinary connection: appends, and reads where this process may write.
    ReadWrite,
    /// A read-only connection with a `-shm` file.
    ReadOnly,
    /// A read-only connection without locks or `-shm`, checked by the file's stat.
    Immutable,
}

/// The SQLite ledger at one path. The connection is opened by the first transaction and
/// kept for the next ones; when it is dropped after a committed append, it is closed
/// and the file's stat recorded as checked ([`file::record_checked`]).
pub struct SqliteLedger {
    path: PathBuf,
    conn: Option<Connection>,
    opening: Opening,
    /// For an [`Opening::Immutable`] connection: the file as it was before it was opened.
    immutable_state: Option<FileState>,
    /// The open connection found the file sound before its first write (it was created
    /// now, recorded as checked, or passed `quick_check`); its own writes since need no
    /// check.
    verified: bool,
    /// An append committed on the open connection.
    committed: bool,
    /// The open write transaction is a traffic write ([`super::traffic`]).
    traffic_write: bool,
    /// The open write transaction fills a file this process created, under a rollback
    /// journal; the file takes write-ahead logging at its commit.
    first_write: bool,
    /// The open write transaction created the schema: it builds
    /// [`schema::DELIVERY_INDEX`] before its commit.
    index_pending: bool,
}

impl Drop for SqliteLedger {
    fn drop(&mut self) {
        self.close();
    }
}

impl SqliteLedger {
    /// A ledger at `path` (created by the first append).
    pub fn new(path: PathBuf) -> SqliteLedger {
        SqliteLedger {
            path,
            conn: None,
            opening: Opening::ReadWrite,
            immutable_state: None,
            verified: false,
            committed: false,
            traffic_write: false,
            first_write: false,
            index_pending: false,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&mut self) -> LedgerResult<&mut Connection> {
        self.conn
            .as_mut()
            .ok_or_else(|| LedgerError::Storage("the ledger is not open".into()))
    }

    /// Closes the connection. After a committed append, closing checkpoints the WAL into
    /// the file (when no other connection is open): only then is the file's stat the one
    /// to record as checked.
    fn close(&mut self) {
        let record = self.committed && self.opening == Opening::ReadWrite;
        self.immutable_state = None;
        self.verified = false;
        self.committed = false;
        if let Some(conn) = self.conn.take()
            && conn.close().is_ok()
            && record
        {
            file::record_checked(&self.path);
        }
    }

    /// Before an append writes: refuses a location it may not write with the reason,
    /// and creates the file (0600) and missing parent directories (0700) when absent.
    /// `true` when the file was created now.
    fn prepare_file(&self) -> LedgerResult<bool> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let dir = file::directory_of(&self.path);
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) if meta.is_dir() => return Err(LedgerError::NotAFile),
            Ok(_) => {
                if let Some(why) = file::write_refusal(
                    Access::of(&self.path),
                    Access::of(dir),
                    Access::of_side_files(&self.path),
                ) {
                    return Err(LedgerError::ReadOnly(why));
                }
                // SQLite would fall back to a read-only connection, with a vaguer message.
                return match std::fs::OpenOptions::new().write(true).open(&self.path) {
                    Ok(_) => Ok(false),
                    Err(e) => Err(file::io_refusal(&e, false)),
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(file::io_refusal(&e, false)),
        }
        if dir.exists() {
            if let Some(why) = file::write_refusal(
                Access::Absent,
                Access::of(dir),
                Access::of_side_files(&self.path),
            ) {
                return Err(LedgerError::ReadOnly(why));
            }
        } else {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| file::io_refusal(&e, true))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.path)
        {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(file::io_refusal(&e, true)),
        }
    }

    /// The ledger file must be a file; `Missing` when there is none.
    fn check_exists(&self) -> LedgerResult<()> {
        match std::fs::metadata(&self.path) {
            Ok(meta) if meta.is_dir() => Err(LedgerError::NotAFile),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LedgerError::Missing),
            Err(e) => Err(file::io_refusal(&e, false)),
        }
    }

    fn configure(conn: &Connection) -> LedgerResult<()> {
        sq(conn.busy_timeout(BUSY_TIMEOUT))?;
        sq(conn.pragma_update(None, "cache_size", -CACHE_KIB))
    }

    /// An ordinary connection (a read-only one left by a read is closed first).
    fn open_for_write(&mut self) -> LedgerResult<()> {
        if self.conn.is_some() && self.opening == Opening::ReadWrite {
            return Ok(());
        }
        self.close();
        self.check_exists()?;
        let conn = sq(Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ))?;
        Self::configure(&conn)?;
        self.conn = Some(conn);
        self.opening = Opening::ReadWrite;
        Ok(())
    }

    /// The connection of a read ([`file::read_plan`]): an ordinary one where this
    /// process could write, else a read-only one, else (no `-shm` can be made and no
    /// `-wal` holds batches) an immutable one whose read is checked when it ends.
    fn open_for_read(&mut self) -> LedgerResult<()> {
        if self.conn.is_some() {
            return Ok(());
        }
        self.check_exists()?;
        let dir = file::directory_of(&self.path);
        if file::read_plan(Access::of(&self.path), Access::of(dir)) == ReadPlan::ReadWrite {
            return self.open_for_write();
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let before = FileState::of(&self.path);
        let wal_len = std::fs::metadata(file::beside(&self.path, "-wal")).map_or(0, |m| m.len());
        let shm = file::beside(&self.path, "-shm").exists();
        if file::read_only_start(wal_len, shm) == ReadOnlyStart::Shared {
            // SQLite opens (or creates) the `-shm` file on the first read.
            let shared = Connection::open_with_flags(&self.path, flags).and_then(|conn| {
                conn.busy_timeout(BUSY_TIMEOUT)?;
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })?;
                Ok(conn)
            });
            match shared {
                Ok(conn) => {
                    Self::configure(&conn)?;
                    self.conn = Some(conn);
                    self.opening = Opening::ReadOnly;
                    return Ok(());
                }
                Err(err) if file::needs_shm(err.sqlite_error_code()) => {
                    file::immutable_fallback(wal_len)?;
                }
                Err(err) => return Err(map_error(&err)),
            }
        }
        file::no_rollback_journal(&self.path)?;
        let conn = sq(Connection::open_with_flags(
            file::immutable_uri(&self.path),
            flags | OpenFlags::SQLITE_OPEN_URI,
        ))?;
        Self::configure(&conn)?;
        self.conn = Some(conn);
        self.opening = Opening::Immutable;
        self.immutable_state = Some(before);
        Ok(())
    }

    /// After a read on an immutable connection: the file and the absence of a `-wal`
    /// must be as they were before it was opened.
    fn check_unchanged(&self) -> LedgerResult<()> {
        match &self.immutable_state {
            Some(before) if *before != FileState::of(&self.path) => {
                Err(LedgerError::ChangedDuringRead)
            }
            _ => Ok(()),
        }
    }

    /// `PRAGMA quick_check` before the first write into an existing ledger that is not
    /// as the last append left it ([`file::unchanged_since_check`]).
    fn check_before_write(&mut self) -> LedgerResult<()> {
        if self.verified {
            return Ok(());
        }
        let non_empty = std::fs::metadata(&self.path).is_ok_and(|m| m.len() > 0);
        if non_empty
            && !file::unchanged_since_check(&self.path)
            && let Some(problem) = self.integrity_problem()?
        {
            return Err(LedgerError::damaged(problem));
        }
        self.verified = true;
        Ok(())
    }

    /// The schema version check; `Ok(false)` on a database without tables.
    fn check_schema(conn: &Connection) -> LedgerResult<bool> {
        let tables: i64 =
            sq(conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)))?;
        if tables == 0 {
            return Ok(false);
        }
        let has_meta: i64 = sq(conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'",
            [],
            |r| r.get(0),
        ))?;
        if has_meta == 0 {
            return Err(LedgerError::NotALedger);
        }
        let meta = |key: &str| -> LedgerResult<Option<String>> {
            sq(conn
                .query_row(
                    "SELECT value FROM ledger_meta WHERE key = ?1",
                    params![key],
                    |r| r.get(0),
                )
                .optional())
        };
        check_version(meta("ledger_schema_version")?.as_deref())?;
        check_format(meta("ledger_format")?.as_deref())?;
        Ok(true)
    }
}

/// `PRAGMA quick_check`: every b-tree page, cell and free-list entry is consistent.
/// `Some` of the first problems (on one line) when it fails.
fn quick_check(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let mut stmt = conn.prepare("PRAGMA quick_check(4)")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut problems = Vec::new();
    for row in rows {
        problems.push(row?);
    }
    if problems.len() == 1 && problems[0] == "ok" {
        return Ok(None);
    }
    let text = problems.join("; ").replace(['\n', '\r'], " ");
    let mut short: String = text.chars().take(300).collect();
    if short.len() < text.len() {
        short.push_str("...");
    }
    Ok(Some(short))
}

/// `PRAGMA integrity_check` of a ledger file (for tests and operators): `ok` or the
/// first problem.
pub fn integrity_check(path: &Path) -> LedgerResult<String> {
    let conn = sq(Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ))?;
    sq(conn.busy_timeout(BUSY_TIMEOUT))?;
    sq(conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)))
}
