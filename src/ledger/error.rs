//! The ledger's one error type: what failed, in words that say what to fix.

use super::rows::LEDGER_SCHEMA_VERSION;

/// A ledger failure. Messages say what to fix and never carry credentials or paths,
/// except [`LedgerError::Untrusted`], which names the SQLite file or directory to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// The read commands found no ledger at the location.
    #[error("utility ledger does not exist yet: utility-ledger append creates it")]
    Missing,
    /// A directory (or another non-file) sits at the ledger path.
    #[error("utility ledger location is a directory, not a ledger file")]
    NotAFile,
    /// The file is not a SQLite database, or its pages are damaged.
    #[error("utility ledger is corrupt or not a SQLite database: {0}")]
    Corrupt(String),
    /// The file fails `PRAGMA quick_check` (or a read met a damaged page): nothing is
    /// written to it.
    #[error(
        "utility ledger file is damaged, SQLite found corrupt pages ({detail}){}: copy out its readable deliveries with `utility-ledger export --salvage` and append them to a new ledger, or restore a backup",
        nothing_appended_note(.nothing_appended)
    )]
    Damaged {
        /// SQLite's account of the damage.
        detail: String,
        /// Reported by an append (which then wrote nothing).
        nothing_appended: bool,
    },
    /// A database without `ledger_meta`.
    #[error("utility ledger location holds a database that is not a utility ledger")]
    NotALedger,
    /// A ledger whose `ledger_meta` lacks a row every ledger has.
    #[error(
        "utility ledger location holds a database that is not a complete utility ledger (ledger_meta has no {0} row): restore a backup of the ledger"
    )]
    Incomplete(&'static str),
    /// Written by a newer binary.
    #[error(
        "utility ledger schema version {0} is newer than this reward-memory supports ({LEDGER_SCHEMA_VERSION}): upgrade reward-memory"
    )]
    NewerSchema(i64),
    /// Written by an older binary in a layout this one no longer reads.
    #[error(
        "utility ledger schema version {0} is older than this reward-memory reads ({LEDGER_SCHEMA_VERSION}): export it with the reward-memory that wrote it and append the export to a new ledger"
    )]
    OlderSchema(i64),
    /// A `ledger_meta` value this binary cannot read.
    #[error("utility ledger schema version is unknown: {0}")]
    UnknownSchema(String),
    /// The file, its directory or its file system refuses writes (or a read that needs
    /// one).
    #[error("utility ledger cannot be written: {0}")]
    ReadOnly(String),
    /// The disk is full; nothing of the batch was committed.
    #[error("utility ledger disk is full: the batch was not committed")]
    DiskFull,
    /// Another appender held the ledger for longer than the busy timeout.
    #[error("utility ledger is busy: another append holds it, retry later")]
    Busy,
    /// A read without locks (a ledger on a read-only location) saw the file change.
    #[error("utility ledger changed while it was read without locks: retry the read")]
    ChangedDuringRead,
    /// The PostgreSQL server could not be reached.
    #[error("PostgreSQL ledger is unreachable: {0}")]
    Unreachable(String),
    /// The PostgreSQL server refused the credentials.
    #[error("PostgreSQL ledger refused the credentials: {0}")]
    Auth(String),
    /// A bad `--ledger` value.
    #[error("{0}")]
    Location(String),
    /// Any other storage failure.
    #[error("utility ledger storage failed: {0}")]
    Storage(String),
    /// A bad request to a ledger command (flags, input shape).
    #[error("{0}")]
    Request(String),
    /// The SQLite ledger, a file beside it or a directory above it fails the trust rule
    /// ([`super::check_sqlite_trust`]); the message names the path and the fix.
    #[error("{0}")]
    Untrusted(String),
}

fn nothing_appended_note(nothing_appended: &bool) -> &'static str {
    if *nothing_appended {
        ", nothing was appended"
    } else {
        ""
    }
}

impl LedgerError {
    /// A damaged file, as a read or a check found it.
    pub fn damaged(detail: impl Into<String>) -> LedgerError {
        LedgerError::Damaged {
            detail: detail.into(),
            nothing_appended: false,
        }
    }
}

/// Result of a ledger operation.
pub type LedgerResult<T> = Result<T, LedgerError>;
