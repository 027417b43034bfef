//! The SQLite ledger's file as the operating system shows it: when an append must first
//! run `PRAGMA quick_check`, how a read opens a ledger it may not write, and what a
//! refused write says. Owns no SQL; [`super`] (the SQLite backend) asks these questions
//! and acts.
//!
//! * **The checked record** (the embedded store's rule, one record format for both:
//!   [`crate::io::stat_record`]). An append never writes into a file that fails
//!   `PRAGMA quick_check`, and the check reads the whole file, so it runs only when the
//!   ledger file is not exactly as an append of this crate last left it: after each
//!   committed append, once its connection is closed (closing checkpoints the WAL into
//!   the file), the writer records the file's identity, size and change times in
//!   `<ledger>-checked` (mode 0600). A different stat (an outside edit such as `dd`, a
//!   restored copy, a crash during a checkpoint) or a missing record means one
//!   `quick_check` before the next append. A record written while another connection had
//!   the file open is not re-checked, so an edit made in that window (milliseconds) is
//!   only caught by SQLite's own checks.
//! * **Reads** ([`read_plan`], [`read_only_start`], [`immutable_fallback`]). A ledger
//!   whose file and directory this process may write is read through an ordinary
//!   connection. Otherwise (a read-only file system, a `chmod 0444` copy in a `0555`
//!   directory): without a `-shm` and a `-wal` with content beside it, as `immutable` (no
//!   locks, no `-shm`, nothing created beside it); else through a read-only connection,
//!   which works as long as SQLite can open or create the `-shm` file, and when it cannot,
//!   as `immutable` again, but only when no `-wal` file with content lies beside it (an
//!   immutable read would ignore the batches in it). An immutable read is checked
//!   afterwards: the file's stat and the absence of a `-wal` must be as they were before
//!   the read ([`FileState`]). Any writer that could have changed the file meanwhile
//!   changes one or the other, so a read that saw a moving file is reported, never
//!   returned.
//! * **Writes** ([`write_refusal`]): a read-only file system, a ledger file, directory or
//!   `-wal`/`-shm` file this user may not write are each named as such, before SQLite is
//!   involved.

use std::path::{Path, PathBuf};

use crate::io::stat_record::{self, StatRecord};

use super::super::error::LedgerError;

/// First word of the `<ledger>-checked` record; a record in another format is ignored.
const CHECK_RECORD_VERSION: &str = "reward_memory_utility_ledger_check_v1";

pub use crate::io::stat_record::beside;

/// The directory holding `path` (`.` for a bare file name).
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// The `<ledger>-checked` record ([`crate::io::stat_record`]).
const CHECK_RECORD: StatRecord = StatRecord {
    version: CHECK_RECORD_VERSION,
};

/// The file recording the ledger's stat as an append last left it.
pub fn check_record_path(path: &Path) -> PathBuf {
    stat_record::record_path(path)
}

/// True when the ledger file is exactly as the last append recorded it.
pub fn unchanged_since_check(path: &Path) -> bool {
    CHECK_RECORD.unchanged(path)
}

/// Records the ledger file's current stat as checked. Call it only after the connection
/// of a verified, committed append was closed. Failing to record only costs one
/// `quick_check` next time. The record is never followed through a symbolic link.
pub fn record_checked(path: &Path) {
    CHECK_RECORD.record(path);
}

/// What `access(W_OK)` says about writing a path (the permission bits as they apply to
/// this user, ACLs, and a read-only mount; root passes every bit but not the mount).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Writable,
    /// `EROFS`: the file system is mounted read-only.
    ReadOnlyFileSystem,
    /// `EACCES`/`EPERM`: this user may not write it.
    Denied,
    /// Nothing at the path.
    Absent,
    /// Any other answer (treated as writable: SQLite then reports what it meets).
    Unknown,
}

impl Access {
    /// Asks the operating system.
    pub fn of(path: &Path) -> Access {
        match rustix::fs::access(path, rustix::fs::Access::WRITE_OK) {
            Ok(()) => Access::Writable,
            Err(rustix::io::Errno::ROFS) => Access::ReadOnlyFileSystem,
            Err(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => Access::Denied,
            Err(rustix::io::Errno::NOENT) => Access::Absent,
            Err(_) => Access::Unknown,
        }
    }

    /// The less writable of the ledger's `-wal` and `-shm` files ([`Access::Absent`] when
    /// neither exists).
    pub fn of_side_files(path: &Path) -> Access {
        let rank = |a: Access| match a {
            Access::ReadOnlyFileSystem => 0,
            Access::Denied => 1,
            Access::Unknown => 2,
            Access::Writable => 3,
            Access::Absent => 4,
        };
        ["-wal", "-shm"]
            .iter()
            .map(|suffix| Access::of(&beside(path, suffix)))
            .min_by_key(|a| rank(*a))
            .unwrap_or(Access::Absent)
    }
}

/// The file system is read-only (the message writers and readers share).
pub const READ_ONLY_FILE_SYSTEM: &str =
    "the ledger's file system is read-only; append to a ledger on a writable file system";

/// Why an append may not write the ledger at a path whose file, directory and `-wal`
/// and `-shm` files (the less writable of the two) have these [`Access`] answers (`file`
/// is [`Access::Absent`] when the append would create it), or `None` when it may try.
/// SQLite keeps its `-wal` and `-shm` files beside the ledger, so the directory, and those
/// files when they exist, must be writable too.
pub fn write_refusal(file: Access, dir: Access, wal_or_shm: Access) -> Option<String> {
    if file == Access::ReadOnlyFileSystem || dir == Access::ReadOnlyFileSystem {
        return Some(READ_ONLY_FILE_SYSTEM.to_owned());
    }
    if file == Access::Denied {
        return Some(
            "the ledger file is not writable by this user; append as its owner or give the \
             owner write permission"
                .to_owned(),
        );
    }
    if wal_or_shm == Access::Denied {
        return Some(
            "the ledger's -wal or -shm file is not writable by this user (a read of the \
             ledger while it was read-only can leave them so): make them writable, or remove \
             them while no process has the ledger open"
                .to_owned(),
        );
    }
    if dir == Access::Denied {
        return Some(if file == Access::Absent {
            "cannot create the ledger file: its directory is not writable by this user".to_owned()
        } else {
            "the ledger's directory is not writable by this user (SQLite keeps the ledger's \
             -wal and -shm files beside it)"
                .to_owned()
        });
    }
    None
}

/// The message of an OS error met while creating or opening the ledger for an append.
pub fn io_refusal(err: &std::io::Error, creating: bool) -> LedgerError {
    match err.raw_os_error() {
        Some(28) => LedgerError::DiskFull,
        Some(30) => LedgerError::ReadOnly(READ_ONLY_FILE_SYSTEM.to_owned()),
        Some(13 | 1) if creating => LedgerError::ReadOnly(
            "cannot create the ledger file: its directory is not writable by this user".into(),
        ),
        Some(13 | 1) => LedgerError::ReadOnly(
            "the ledger file is not writable by this user; append as its owner or give the \
             owner write permission"
                .into(),
        ),
        _ if creating => {
            LedgerError::Storage(format!("cannot create the ledger file ({})", err.kind()))
        }
        _ => LedgerError::Storage(format!("cannot open the ledger file ({})", err.kind())),
    }
}

/// How a read opens the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPlan {
    /// An ordinary connection (it may create `-wal`/`-shm` and checkpoint on close, as
    /// the appends do).
    ReadWrite,
    /// No writes: an immutable or read-only connection, as [`read_only_start`] and
    /// [`immutable_fallback`] decide.
    ReadOnly,
}

/// The connection a read uses, given whether this process may write the ledger file and
/// its directory.
pub fn read_plan(file: Access, dir: Access) -> ReadPlan {
    let writable = |a: Access| matches!(a, Access::Writable | Access::Unknown);
    if writable(file) && writable(dir) {
        ReadPlan::ReadWrite
    } else {
        ReadPlan::ReadOnly
    }
}

/// How a read of a ledger this process may not write starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnlyStart {
    /// A read-only connection through SQLite's `-shm` file (falling back as
    /// [`immutable_fallback`] says when SQLite cannot open it).
    Shared,
    /// Straight to an immutable read: nothing is created beside the ledger.
    Immutable,
}

/// The start of a read of a ledger this process may not write, given the length of its
/// `-wal` file (0 when there is none) and whether a `-shm` file exists. With neither a
/// `-shm` nor a `-wal` with content, no connection has the ledger open in WAL mode and
/// the file holds every batch: it is read as immutable, so that SQLite creates no
/// `-wal`/`-shm` beside it (in a writable directory they would take the ledger file's
/// read-only mode and later refuse the owner's appends). Otherwise SQLite reads through
/// the `-shm`, or builds one where it can.
pub fn read_only_start(wal_len: u64, shm_exists: bool) -> ReadOnlyStart {
    if wal_len == 0 && !shm_exists {
        ReadOnlyStart::Immutable
    } else {
        ReadOnlyStart::Shared
    }
}

/// True when a read-only connection failed because SQLite could not open or create the
/// `-shm` file (or take the locks) it needs beside the ledger: `SQLITE_CANTOPEN` or a
/// `SQLITE_READONLY_*` code.
pub fn needs_shm(code: Option<rusqlite::ErrorCode>) -> bool {
    matches!(
        code,
        Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
    )
}

/// Whether a read-only connection that failed for want of a `-shm` file ([`needs_shm`])
/// may read the ledger as `immutable` instead: only when no `-wal` with content lies
/// beside it (`wal_len` 0 when there is none), since an immutable read ignores the WAL
/// and its batches.
pub fn immutable_fallback(wal_len: u64) -> Result<(), LedgerError> {
    if wal_len == 0 {
        Ok(())
    } else {
        Err(LedgerError::ReadOnly(
            "the ledger has a write-ahead log (-wal) that SQLite can only read with a -shm \
             file, which cannot be created here; read the ledger where its directory is \
             writable (copy it with its -wal file), or run one append there to checkpoint it"
                .into(),
        ))
    }
}

/// Refuses an immutable read of a ledger beside which lies a rollback journal with
/// content: what an append interrupted while filling a new ledger left (its first
/// transaction runs under a rollback journal), which an immutable read would ignore, and
/// with it the fact that the file holds no committed batch.
pub fn no_rollback_journal(path: &Path) -> Result<(), LedgerError> {
    match std::fs::metadata(beside(path, "-journal")) {
        Ok(meta) if meta.len() > 0 => Err(LedgerError::ReadOnly(
            "the ledger has a rollback journal (-journal) left by an interrupted first \
             append, which a read without locks would ignore; run any command on the \
             ledger where it is writable (it rolls the journal back), then read it here"
                .into(),
        )),
        _ => Ok(()),
    }
}

/// The ledger as an immutable read found it: compared again when the read ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    stat: Option<String>,
    wal_len: Option<u64>,
}

impl FileState {
    /// The ledger file's stat and its `-wal` file's length (`None`: no `-wal`).
    pub fn of(path: &Path) -> FileState {
        FileState {
            stat: CHECK_RECORD.stat_line(path),
            wal_len: std::fs::metadata(beside(path, "-wal"))
                .ok()
                .map(|m| m.len()),
        }
    }
}

/// The `file:` URI of `path` with `immutable=1`, every byte outside the unreserved set
/// and `/` percent-encoded (a path may hold `?`, `#` or `%`).
pub fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_immutable_read_is_refused_beside_a_rollback_journal_with_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = dir.path().join("l.sqlite3");
        assert!(no_rollback_journal(&ledger).is_ok(), "no journal");
        std::fs::write(beside(&ledger, "-journal"), b"").expect("empty journal");
        assert!(
            no_rollback_journal(&ledger).is_ok(),
            "an empty journal is no hot one"
        );
        std::fs::write(beside(&ledger, "-journal"), [0xd9_u8; 512]).expect("journal");
        match no_rollback_journal(&ledger) {
            Err(LedgerError::ReadOnly(why)) => assert!(why.contains("rollback journal"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn writes_name_the_read_only_file_system_before_permissions() {
        use Access::*;
        for (file, dir) in [
            (ReadOnlyFileSystem, ReadOnlyFileSystem),
            (Absent, ReadOnlyFileSystem),
            (ReadOnlyFileSystem, Denied),
        ] {
            let why = write_refusal(file, dir, Absent).expect("refused");
            assert!(
                why.contains("file system is read-only"),
                "{file:?} {dir:?}: {why}"
            );
        }
        let why = write_refusal(Denied, Writable, Absent).expect("refused");
        assert!(why.starts_with("the ledger file is not writable"), "{why}");
        let why = write_refusal(Writable, Denied, Absent).expect("refused");
        assert!(
            why.starts_with("the ledger's directory is not writable"),
            "{why}"
        );
        let why = write_refusal(Absent, Denied, Absent).expect("refused");
        assert!(why.starts_with("cannot create the ledger file"), "{why}");
        let why = write_refusal(Writable, Writable, Denied).expect("refused");
        assert!(
            why.starts_with("the ledger's -wal or -shm file is not writable"),
            "{why}"
        );
        for (file, dir, side) in [
            (Writable, Writable, Absent),
            (Writable, Writable, Writable),
            (Absent, Writable, Absent),
            (Unknown, Unknown, Unknown),
        ] {
            assert_eq!(
                write_refusal(file, dir, side),
                None,
                "{file:?} {dir:?} {side:?}"
            );
        }
        // An existing file is never reported as one that cannot be created.
        for file in [ReadOnlyFileSystem, Denied, Writable] {
            for dir in [ReadOnlyFileSystem, Denied, Writable] {
                if let Some(why) = write_refusal(file, dir, Absent) {
                    assert!(!why.contains("cannot create"), "{file:?} {dir:?}: {why}");
                }
            }
        }
    }

    #[test]
    fn reads_use_an_ordinary_connection_only_where_they_could_write() {
        use Access::*;
        assert_eq!(read_plan(Writable, Writable), ReadPlan::ReadWrite);
        assert_eq!(read_plan(Unknown, Writable), ReadPlan::ReadWrite);
        for (file, dir) in [
            (ReadOnlyFileSystem, ReadOnlyFileSystem),
            (Denied, Denied),
            (Denied, Writable),
            (Writable, Denied),
        ] {
            assert_eq!(read_plan(file, dir), ReadPlan::ReadOnly, "{file:?} {dir:?}");
        }
    }

    #[test]
    fn a_read_only_ledger_without_wal_or_shm_is_read_as_immutable_at_once() {
        assert_eq!(read_only_start(0, false), ReadOnlyStart::Immutable);
        assert_eq!(read_only_start(0, true), ReadOnlyStart::Shared);
        assert_eq!(read_only_start(4152, false), ReadOnlyStart::Shared);
        assert_eq!(read_only_start(4152, true), ReadOnlyStart::Shared);
    }

    #[test]
    fn an_immutable_read_is_allowed_only_without_a_write_ahead_log() {
        assert!(needs_shm(Some(rusqlite::ErrorCode::CannotOpen)));
        assert!(needs_shm(Some(rusqlite::ErrorCode::ReadOnly)));
        assert!(!needs_shm(Some(rusqlite::ErrorCode::DatabaseCorrupt)));
        assert!(!needs_shm(Some(rusqlite::ErrorCode::NotADatabase)));
        assert!(!needs_shm(None));
        assert_eq!(immutable_fallback(0), Ok(()));
        let refused = immutable_fallback(4152).expect_err("a WAL with content");
        assert!(refused.to_string().contains("write-ahead log"), "{refused}");
    }

    #[test]
    fn immutable_uris_encode_every_reserved_byte() {
        let uri = immutable_uri(Path::new("/tmp/a b/l?#%.sqlite3"));
        assert_eq!(uri, "file:/tmp/a%20b/l%3F%23%25.sqlite3?immutable=1");
    }

    #[test]
    fn the_check_record_matches_only_the_stat_it_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("l.sqlite3");
        std::fs::write(&path, b"ledger").expect("write");
        assert!(!unchanged_since_check(&path), "no record yet");
        record_checked(&path);
        assert!(unchanged_since_check(&path));
        // File times may advance in clock ticks of a few milliseconds.
        std::thread::sleep(std::time::Duration::from_millis(50));
        {
            use std::os::unix::fs::FileExt as _;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("open");
            // Same size, same bytes: only the change time moves.
            file.write_all_at(b"l", 0).expect("write");
        }
        assert!(!unchanged_since_check(&path), "an outside write is noticed");
    }

    #[test]
    fn an_immutable_read_notices_a_write_or_a_new_write_ahead_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("l.sqlite3");
        std::fs::write(&path, b"ledger").expect("write");
        let before = FileState::of(&path);
        assert_eq!(FileState::of(&path), before, "nothing changed");
        std::fs::write(beside(&path, "-wal"), b"").expect("wal");
        assert_ne!(FileState::of(&path), before, "a writer's WAL appeared");
        std::fs::remove_file(beside(&path, "-wal")).expect("remove");
        assert_eq!(FileState::of(&path), before);
        // File times may advance in clock ticks of a few milliseconds.
        std::thread::sleep(std::time::Duration::from_millis(50));
        {
            use std::os::unix::fs::FileExt as _;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("open");
            file.write_all_at(b"l", 0).expect("write");
        }
        assert_ne!(
            FileState::of(&path),
            before,
            "a checkpoint rewrote the file"
        );
    }
}
