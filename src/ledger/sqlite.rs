//! The SQLite backend of the utility ledger: one file, WAL, `synchronous=FULL`.
//!
//! Owns the file's creation (mode 0600, parent directories 0700, never over an existing
//! file), its schema and every SQL statement of this backend. An append is one
//! `BEGIN IMMEDIATE` transaction: concurrent appenders wait on the busy timeout and retry
//! taking the lock, and what a committed batch wrote survives a crash. A file that is not
//! a ledger is reported, never replaced or truncated.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, Row, params};

use super::sqlite_file::{self, Access, FileState, ReadOnlyStart, ReadPlan};
use super::{
    BatchRow, COUNTER_COLUMNS, ConflictRow, Counters, DeliveryRow, LEDGER_FORMAT,
    LEDGER_SCHEMA_VERSION, LedgerBackend, LedgerError, LedgerResult, ObservationKey,
    ObservationRow, PartitionKey, PartitionRow, SubjectKey, SubjectRow, check_format,
    check_version, format_seqs, parse_seqs,
};
use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};
use crate::wire::digest;

/// How long one append waits for another to release the ledger.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// SQLite's page cache per connection, in KiB (negative `cache_size`). Appends visit
/// pages in key order a window at a time, so a larger cache buys little (a 1M-delivery
/// append took as long with 24 MB); the memory goes to larger staged runs instead, and
/// with the validating thread's chunks this keeps an append of any size under 64 MiB
/// resident.
const CACHE_KIB: i64 = 8_000;

/// Schema version 2. Identifiers (`muo_`, `muof_`, `mui_`/`mus_`/`mul_` + 64 hex) are
/// stored as their 32 bytes (subjects with a leading level byte `i`, `s` or `l`), whose
/// byte order is the text order; order keys as an 8-byte big-endian instant, the raw
/// `created_at` and (for subjects) `0x01` and the observation id's bytes. Observation
/// aggregates are keyed by (partition, subject, observation) and carry the reducer's
/// inputs of their representative delivery, so that a subject is recomputed from one
/// contiguous key range, without reading deliveries.
const SCHEMA: &str = "
CREATE TABLE ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE partitions (
    partition_id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    corpus_id TEXT NOT NULL,
    surface_id TEXT NOT NULL,
    retrieval_snapshot_ref TEXT NOT NULL,
    policy_snapshot_ref TEXT NOT NULL,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    accepted_count INTEGER NOT NULL DEFAULT 0,
    duplicate_count INTEGER NOT NULL DEFAULT 0,
    conflicting_count INTEGER NOT NULL DEFAULT 0,
    rejected_count INTEGER NOT NULL DEFAULT 0,
    subject_count INTEGER NOT NULL DEFAULT 0,
    item_subject_count INTEGER NOT NULL DEFAULT 0,
    set_subject_count INTEGER NOT NULL DEFAULT 0,
    none_subject_count INTEGER NOT NULL DEFAULT 0,
    conflict_subject_count INTEGER NOT NULL DEFAULT 0,
    latest_key TEXT NOT NULL DEFAULT '',
    UNIQUE (agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, policy_snapshot_ref)
);
CREATE TABLE batches (
    batch_id INTEGER PRIMARY KEY,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    received INTEGER NOT NULL,
    appended INTEGER NOT NULL,
    duplicate INTEGER NOT NULL,
    conflicting INTEGER NOT NULL,
    refused INTEGER NOT NULL
);
CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY,
    batch_id INTEGER NOT NULL,
    partition_id INTEGER NOT NULL,
    observation_id BLOB NOT NULL,
    application_receipt_id TEXT NOT NULL,
    memory_ref_digests TEXT NOT NULL,
    outcome_ref TEXT NOT NULL,
    utility_label INTEGER NOT NULL,
    attribution_level INTEGER NOT NULL,
    evidence_basis INTEGER NOT NULL,
    confidence REAL NOT NULL,
    reason_codes TEXT NOT NULL,
    evidence_refs TEXT NOT NULL,
    evaluator_ref TEXT NOT NULL,
    evaluation_version TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX deliveries_by_partition ON deliveries (partition_id, seq);
CREATE TABLE observations (
    partition_id INTEGER NOT NULL,
    subject_id BLOB NOT NULL,
    observation_id BLOB NOT NULL,
    version_count INTEGER NOT NULL,
    delivery_count INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,
    rep_seq INTEGER NOT NULL,
    rep_order BLOB NOT NULL,
    utility_label INTEGER NOT NULL,
    evidence_basis INTEGER NOT NULL,
    confidence REAL NOT NULL,
    PRIMARY KEY (partition_id, subject_id, observation_id)
);
CREATE INDEX observations_conflicting ON observations (partition_id, observation_id)
    WHERE version_count > 1;
CREATE TABLE conflict_versions (
    observation_id BLOB NOT NULL,
    fingerprint BLOB NOT NULL,
    PRIMARY KEY (observation_id, fingerprint)
) WITHOUT ROWID;
CREATE TABLE subjects (
    partition_id INTEGER NOT NULL,
    subject_id BLOB NOT NULL,
    review_state TEXT NOT NULL,
    observation_count INTEGER NOT NULL,
    last_key BLOB NOT NULL,
    state TEXT NOT NULL,
    history_seqs TEXT NOT NULL,
    PRIMARY KEY (partition_id, subject_id)
);
CREATE TABLE subject_digests (
    partition_id INTEGER NOT NULL,
    memory_ref_digest TEXT NOT NULL,
    subject_id BLOB NOT NULL,
    PRIMARY KEY (partition_id, memory_ref_digest, subject_id)
) WITHOUT ROWID;
";

const DELIVERY_COLUMNS: &str = "seq, batch_id, partition_id, observation_id, \
    application_receipt_id, memory_ref_digests, outcome_ref, utility_label, \
    attribution_level, evidence_basis, confidence, reason_codes, evidence_refs, \
    evaluator_ref, evaluation_version, created_at";

const DELIVERY_COLUMNS_D: &str = "d.seq, d.batch_id, d.partition_id, d.observation_id, \
    d.application_receipt_id, d.memory_ref_digests, d.outcome_ref, d.utility_label, \
    d.attribution_level, d.evidence_basis, d.confidence, d.reason_codes, d.evidence_refs, \
    d.evaluator_ref, d.evaluation_version, d.created_at";

const SUBJECT_COLUMNS: &str = "partition_id, subject_id, review_state, observation_count, \
    last_key, state, history_seqs";

const SUBJECT_COLUMNS_S: &str = "s.partition_id, s.subject_id, s.review_state, \
    s.observation_count, s.last_key, s.state, s.history_seqs";

const OBSERVATION_COLUMNS: &str = "partition_id, subject_id, observation_id, version_count, \
    delivery_count, fingerprint, rep_seq, rep_order, utility_label, evidence_basis, confidence";

const PARTITION_COLUMNS: &str = "partition_id, agent_id, project_id, corpus_id, surface_id, \
    retrieval_snapshot_ref, policy_snapshot_ref, delivery_count, accepted_count, \
    duplicate_count, conflicting_count, rejected_count, subject_count, item_subject_count, \
    set_subject_count, none_subject_count, conflict_subject_count, latest_key";

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
fn retry_busy<T>(mut op: impl FnMut() -> rusqlite::Result<T>) -> LedgerResult<T> {
    let start = Instant::now();
    let mut pause = 2u64;
    loop {
        match op() {
            Err(err) if is_busy(&err) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(pause));
                pause = (pause * 2).min(50);
            }
            other => return sq(other),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Stored forms of identifiers and order keys
// ---------------------------------------------------------------------------------------

/// A stored value this binary could not have written (a damaged row).
fn damaged(column: usize) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Blob,
        "damaged ledger value".into(),
    )
}

/// A value that cannot be stored in this layout (never produced by the validator).
fn unstorable(what: &str) -> LedgerError {
    LedgerError::Storage(format!("{what} is not in its canonical form"))
}

/// 64 lowercase hex digits → their 32 bytes appended to `out`.
fn push_hex(out: &mut Vec<u8>, hex: &str) -> Option<()> {
    out.extend_from_slice(&decode_hex(hex)?);
    Some(())
}

/// 64 lowercase hex digits → their 32 bytes (on the stack: no allocation per id).
fn decode_hex(hex: &str) -> Option<[u8; 32]> {
    digest::decode_hex32(hex.as_bytes())
}

fn hex_of(prefix: &str, bytes: &[u8]) -> Option<String> {
    if bytes.len() != 32 {
        return None;
    }
    let mut out = String::with_capacity(prefix.len() + 64);
    out.push_str(prefix);
    digest::push_hex(&mut out, bytes);
    Some(out)
}

/// `prefix` + 64 lowercase hex → the 32 bytes.
fn id_blob(text: &str, prefix: &str) -> Option<[u8; 32]> {
    decode_hex(text.strip_prefix(prefix)?)
}

fn observation_blob(id: &str) -> LedgerResult<[u8; 32]> {
    id_blob(id, "muo_").ok_or_else(|| unstorable("an observation id"))
}

fn fingerprint_blob(fp: &str) -> LedgerResult<[u8; 32]> {
    id_blob(fp, "muof_").ok_or_else(|| unstorable("a fingerprint"))
}

/// `mui_`/`mus_`/`mul_` + 64 hex → the level letter then the 32 bytes.
fn subject_blob(id: &str) -> Option<[u8; 33]> {
    let tag = match id.get(..4)? {
        "mui_" => b'i',
        "mus_" => b's',
        "mul_" => b'l',
        _ => return None,
    };
    let mut out = [0u8; 33];
    out[0] = tag;
    out[1..].copy_from_slice(&decode_hex(id.get(4..)?)?);
    Some(out)
}

fn subject_blob_of(id: &str) -> LedgerResult<[u8; 33]> {
    subject_blob(id).ok_or_else(|| unstorable("a subject id"))
}

fn subject_text(blob: &[u8]) -> Option<String> {
    let (tag, rest) = blob.split_first()?;
    let prefix = match tag {
        b'i' => "mui_",
        b's' => "mus_",
        b'l' => "mul_",
        _ => return None,
    };
    hex_of(prefix, rest)
}

fn level_of_subject(blob: &[u8]) -> Option<&'static str> {
    match blob.first()? {
        b'i' => Some("item"),
        b's' => Some("set"),
        b'l' => Some("none"),
        _ => None,
    }
}

/// An [`super::order_prefix`] text → 8-byte big-endian instant + `created_at`.
fn order_blob(text: &str) -> Option<Vec<u8>> {
    let (micros, created_at) = text.split_once('\u{1}')?;
    if micros.len() != 20 {
        return None;
    }
    let micros: u64 = micros.parse().ok()?;
    let mut out = Vec::with_capacity(8 + created_at.len() + 33);
    out.extend_from_slice(&micros.to_be_bytes());
    out.extend_from_slice(created_at.as_bytes());
    Some(out)
}

fn order_text(blob: &[u8]) -> Option<String> {
    let (micros, created_at) = blob.split_at_checked(8)?;
    let micros = u64::from_be_bytes(micros.try_into().ok()?);
    let created_at = std::str::from_utf8(created_at).ok()?;
    Some(format!("{micros:020}\u{1}{created_at}"))
}

/// An [`super::order_key_text`] → [`order_blob`] of its prefix, `0x01`, the id's bytes.
fn key_blob(text: &str) -> Option<Vec<u8>> {
    let (prefix, id) = text.rsplit_once('\u{1}')?;
    let mut out = order_blob(prefix)?;
    out.push(1);
    push_hex(&mut out, id.strip_prefix("muo_")?)?;
    Some(out)
}

fn key_text(blob: &[u8]) -> Option<String> {
    let split = blob.len().checked_sub(33)?;
    let (order, id) = blob.split_at(split);
    let (sep, id) = id.split_first()?;
    if *sep != 1 {
        return None;
    }
    Some(format!(
        "{}\u{1}{}",
        order_text(order)?,
        hex_of("muo_", id)?
    ))
}

fn label_index(text: &str) -> LedgerResult<i64> {
    UtilityLabel::parse(text)
        .map(|l| l.index() as i64)
        .ok_or_else(|| unstorable("a utility label"))
}

fn level_index(text: &str) -> LedgerResult<i64> {
    AttributionLevel::parse(text)
        .map(|l| l.index() as i64)
        .ok_or_else(|| unstorable("an attribution level"))
}

fn basis_index(text: &str) -> LedgerResult<i64> {
    EvidenceBasis::parse(text)
        .map(|l| l.index() as i64)
        .ok_or_else(|| unstorable("an evidence basis"))
}

fn from_index<T: Copy>(all: &[T], row: &Row<'_>, column: usize) -> rusqlite::Result<T> {
    let i: i64 = row.get(column)?;
    usize::try_from(i)
        .ok()
        .and_then(|i| all.get(i).copied())
        .ok_or_else(|| damaged(column))
}

fn blob_column<T>(
    row: &Row<'_>,
    column: usize,
    convert: impl Fn(&[u8]) -> Option<T>,
) -> rusqlite::Result<T> {
    let value = row.get_ref(column)?;
    let bytes = value.as_blob().map_err(|_| damaged(column))?;
    convert(bytes).ok_or_else(|| damaged(column))
}

fn delivery(row: &Row<'_>) -> rusqlite::Result<DeliveryRow> {
    Ok(DeliveryRow {
        seq: row.get(0)?,
        batch_id: row.get(1)?,
        partition_id: row.get(2)?,
        observation_id: blob_column(row, 3, |b| hex_of("muo_", b))?,
        application_receipt_id: row.get(4)?,
        memory_ref_digests: row.get(5)?,
        outcome_ref: row.get(6)?,
        utility_label: from_index(UtilityLabel::ALL, row, 7)?.as_str().to_owned(),
        attribution_level: from_index(AttributionLevel::ALL, row, 8)?
            .as_str()
            .to_owned(),
        evidence_basis: from_index(EvidenceBasis::ALL, row, 9)?.as_str().to_owned(),
        confidence: row.get(10)?,
        reason_codes: row.get(11)?,
        evidence_refs: row.get(12)?,
        evaluator_ref: row.get(13)?,
        evaluation_version: row.get(14)?,
        created_at: row.get(15)?,
    })
}

fn subject(row: &Row<'_>) -> rusqlite::Result<SubjectRow> {
    let seqs: String = row.get(6)?;
    Ok(SubjectRow {
        partition_id: row.get(0)?,
        subject_id: blob_column(row, 1, subject_text)?,
        attribution_level: blob_column(row, 1, level_of_subject)?.to_owned(),
        review_state: row.get(2)?,
        observation_count: row.get(3)?,
        last_key: blob_column(row, 4, key_text)?,
        state: row.get(5)?,
        history_seqs: parse_seqs(&seqs),
    })
}

/// An observation aggregate (columns of [`OBSERVATION_COLUMNS`] from `base`), without
/// its conflict fingerprints.
fn observation(row: &Row<'_>, base: usize) -> rusqlite::Result<ObservationRow> {
    Ok(ObservationRow {
        partition_id: row.get(base)?,
        subject_id: blob_column(row, base + 1, subject_text)?,
        observation_id: blob_column(row, base + 2, |b| hex_of("muo_", b))?,
        version_count: row.get(base + 3)?,
        delivery_count: row.get(base + 4)?,
        fingerprint: blob_column(row, base + 5, |b| hex_of("muof_", b))?,
        rep_seq: row.get(base + 6)?,
        rep_order: blob_column(row, base + 7, order_text)?,
        fingerprints: Vec::new(),
        utility_label: from_index(UtilityLabel::ALL, row, base + 8)?,
        evidence_basis: from_index(EvidenceBasis::ALL, row, base + 9)?,
        confidence: row.get(base + 10)?,
    })
}

fn partition(row: &Row<'_>) -> rusqlite::Result<PartitionRow> {
    let mut counters = [0i64; 10];
    for (i, c) in counters.iter_mut().enumerate() {
        *c = row.get(7 + i)?;
    }
    Ok(PartitionRow {
        partition_id: row.get(0)?,
        key: PartitionKey {
            agent_id: row.get(1)?,
            project_id: row.get(2)?,
            corpus_id: row.get(3)?,
            surface_id: row.get(4)?,
            retrieval_snapshot_ref: row.get(5)?,
            policy_snapshot_ref: row.get(6)?,
        },
        counters: Counters::from_array(counters),
        latest_key: row.get(17)?,
    })
}

/// How the open connection was made (see [`sqlite_file`]).
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
/// and the file's stat recorded as checked ([`sqlite_file::record_checked`]).
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
            sqlite_file::record_checked(&self.path);
        }
    }

    /// Before an append writes: refuses a location it may not write with the reason,
    /// and creates the file (0600) and missing parent directories (0700) when absent.
    /// `true` when the file was created now.
    fn prepare_file(&self) -> LedgerResult<bool> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let dir = sqlite_file::directory_of(&self.path);
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) if meta.is_dir() => return Err(LedgerError::NotAFile),
            Ok(_) => {
                if let Some(why) = sqlite_file::write_refusal(
                    Access::of(&self.path),
                    Access::of(dir),
                    Access::of_side_files(&self.path),
                ) {
                    return Err(LedgerError::ReadOnly(why));
                }
                // SQLite would fall back to a read-only connection, with a vaguer message.
                return match std::fs::OpenOptions::new().write(true).open(&self.path) {
                    Ok(_) => Ok(false),
                    Err(e) => Err(sqlite_file::io_refusal(&e, false)),
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(sqlite_file::io_refusal(&e, false)),
        }
        if dir.exists() {
            if let Some(why) = sqlite_file::write_refusal(
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
                .map_err(|e| sqlite_file::io_refusal(&e, true))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.path)
        {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(sqlite_file::io_refusal(&e, true)),
        }
    }

    /// The ledger file must be a file; `Missing` when there is none.
    fn check_exists(&self) -> LedgerResult<()> {
        match std::fs::metadata(&self.path) {
            Ok(meta) if meta.is_dir() => Err(LedgerError::NotAFile),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LedgerError::Missing),
            Err(e) => Err(sqlite_file::io_refusal(&e, false)),
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

    /// The connection of a read ([`sqlite_file::read_plan`]): an ordinary one where this
    /// process could write, else a read-only one, else (no `-shm` can be made and no
    /// `-wal` holds batches) an immutable one whose read is checked when it ends.
    fn open_for_read(&mut self) -> LedgerResult<()> {
        if self.conn.is_some() {
            return Ok(());
        }
        self.check_exists()?;
        let dir = sqlite_file::directory_of(&self.path);
        if sqlite_file::read_plan(Access::of(&self.path), Access::of(dir)) == ReadPlan::ReadWrite {
            return self.open_for_write();
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let before = FileState::of(&self.path);
        let wal_len =
            std::fs::metadata(sqlite_file::beside(&self.path, "-wal")).map_or(0, |m| m.len());
        let shm = sqlite_file::beside(&self.path, "-shm").exists();
        if sqlite_file::read_only_start(wal_len, shm) == ReadOnlyStart::Shared {
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
                Err(err) if sqlite_file::needs_shm(err.sqlite_error_code()) => {
                    sqlite_file::immutable_fallback(wal_len)?;
                }
                Err(err) => return Err(map_error(&err)),
            }
        }
        let conn = sq(Connection::open_with_flags(
            sqlite_file::immutable_uri(&self.path),
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
    /// as the last append left it ([`sqlite_file::unchanged_since_check`]).
    fn check_before_write(&mut self) -> LedgerResult<()> {
        if self.verified {
            return Ok(());
        }
        let non_empty = std::fs::metadata(&self.path).is_ok_and(|m| m.len() > 0);
        if non_empty
            && !sqlite_file::unchanged_since_check(&self.path)
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

impl LedgerBackend for SqliteLedger {
    fn backend_name(&self) -> &'static str {
        "sqlite"
    }

    fn subject_window(&self) -> usize {
        256
    }

    fn begin_write(&mut self) -> LedgerResult<()> {
        let created = self.prepare_file()?;
        self.open_for_write()?;
        // Check what the file holds before anything is written to it: a damaged file,
        // a foreign database or a newer ledger stays byte for byte as it was.
        if created {
            self.verified = true;
        }
        self.check_before_write()?;
        let conn = self.conn()?;
        Self::check_schema(conn)?;
        let mode: String =
            retry_busy(|| conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(LedgerError::Storage(format!(
                "the ledger file cannot use write-ahead logging (journal mode {mode})"
            )));
        }
        sq(conn.pragma_update(None, "synchronous", "FULL"))?;
        retry_busy(|| conn.execute_batch("BEGIN IMMEDIATE"))?;
        let ready = match Self::check_schema(conn) {
            Ok(ready) => ready,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        };
        if !ready {
            let init = conn.execute_batch(SCHEMA).and_then(|()| {
                conn.execute(
                    "INSERT INTO ledger_meta (key, value) VALUES ('ledger_schema_version', ?1), \
                     ('ledger_format', ?2)",
                    params![LEDGER_SCHEMA_VERSION.to_string(), LEDGER_FORMAT],
                )
            });
            if let Err(e) = init {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(map_error(&e));
            }
        }
        Ok(())
    }

    fn commit(&mut self) -> LedgerResult<()> {
        let conn = self.conn()?;
        if let Err(e) = conn.execute_batch("COMMIT") {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(map_error(&e));
        }
        self.committed = true;
        Ok(())
    }

    fn rollback(&mut self) {
        if let Some(conn) = self.conn.as_mut()
            && !conn.is_autocommit()
        {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }

    fn begin_read(&mut self) -> LedgerResult<()> {
        self.open_for_read()?;
        let conn = self.conn()?;
        retry_busy(|| conn.execute_batch("BEGIN"))?;
        match Self::check_schema(conn) {
            Ok(true) => Ok(()),
            Ok(false) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(LedgerError::Missing)
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn end_read(&mut self) -> LedgerResult<()> {
        self.rollback();
        self.check_unchanged()
    }

    fn integrity_problem(&mut self) -> LedgerResult<Option<String>> {
        let conn = self.conn()?;
        match retry_busy(|| quick_check(conn)) {
            Ok(None) => Ok(None),
            Ok(Some(problem)) => Ok(Some(format!("PRAGMA quick_check: {problem}"))),
            // A page so damaged that the check itself stops is a failed check.
            Err(LedgerError::Damaged { detail, .. }) => {
                Ok(Some(format!("PRAGMA quick_check stopped: {detail}")))
            }
            Err(other) => Err(other),
        }
    }

    fn salvage(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow, Option<&PartitionKey>) -> LedgerResult<()>,
    ) -> LedgerResult<Option<i64>> {
        self.open_for_read()?;
        let conn = self.conn()?;
        retry_busy(|| conn.execute_batch("BEGIN"))?;
        let result = salvage_rows(conn, after_seq, visit);
        let _ = conn.execute_batch("ROLLBACK");
        let unchanged = self.check_unchanged();
        let high = result?;
        unchanged?;
        Ok(high)
    }

    fn high_water(&mut self) -> LedgerResult<i64> {
        let conn = self.conn()?;
        sq(
            conn.query_row("SELECT coalesce(max(seq), 0) FROM deliveries", [], |r| {
                r.get(0)
            }),
        )
    }

    fn last_batch_id(&mut self) -> LedgerResult<i64> {
        let conn = self.conn()?;
        sq(
            conn.query_row("SELECT coalesce(max(batch_id), 0) FROM batches", [], |r| {
                r.get(0)
            }),
        )
    }

    fn record_batch(&mut self, b: &BatchRow) -> LedgerResult<()> {
        let conn = self.conn()?;
        sq(conn.execute(
            "INSERT INTO batches (batch_id, first_seq, last_seq, received, appended, duplicate, \
             conflicting, refused) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                b.batch_id,
                b.first_seq,
                b.last_seq,
                b.received,
                b.appended,
                b.duplicate,
                b.conflicting,
                b.refused
            ],
        ))
        .map(|_| ())
    }

    fn find_partition(&mut self, key: &PartitionKey) -> LedgerResult<Option<PartitionRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {PARTITION_COLUMNS} FROM partitions WHERE agent_id = ?1 AND project_id = ?2 \
             AND corpus_id = ?3 AND surface_id = ?4 AND retrieval_snapshot_ref = ?5 \
             AND policy_snapshot_ref = ?6"
        )))?;
        sq(stmt
            .query_row(
                params![
                    key.agent_id,
                    key.project_id,
                    key.corpus_id,
                    key.surface_id,
                    key.retrieval_snapshot_ref,
                    key.policy_snapshot_ref
                ],
                partition,
            )
            .optional())
    }

    fn partitions(&mut self) -> LedgerResult<Vec<PartitionRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {PARTITION_COLUMNS} FROM partitions ORDER BY partition_id"
        )))?;
        let rows = sq(stmt.query_map([], partition))?;
        rows.map(sq).collect()
    }

    fn insert_partition(&mut self, key: &PartitionKey) -> LedgerResult<i64> {
        let conn = self.conn()?;
        let id: i64 = sq(conn.query_row(
            "SELECT coalesce(max(partition_id), 0) + 1 FROM partitions",
            [],
            |r| r.get(0),
        ))?;
        sq(conn.execute(
            "INSERT INTO partitions (partition_id, agent_id, project_id, corpus_id, surface_id, \
             retrieval_snapshot_ref, policy_snapshot_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                id,
                key.agent_id,
                key.project_id,
                key.corpus_id,
                key.surface_id,
                key.retrieval_snapshot_ref,
                key.policy_snapshot_ref
            ],
        ))?;
        Ok(id)
    }

    fn add_counters(&mut self, deltas: &[(i64, Counters)]) -> LedgerResult<()> {
        let conn = self.conn()?;
        let sets: Vec<String> = COUNTER_COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c} = {c} + ?{}", i + 2))
            .collect();
        let mut stmt = sq(conn.prepare_cached(&format!(
            "UPDATE partitions SET {} WHERE partition_id = ?1",
            sets.join(", ")
        )))?;
        for (id, d) in deltas {
            let a = d.to_array();
            sq(stmt.execute(params![
                id, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]
            ]))?;
        }
        Ok(())
    }

    fn set_latest(&mut self, latest: &[(i64, String)]) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut stmt =
            sq(conn
                .prepare_cached("UPDATE partitions SET latest_key = ?2 WHERE partition_id = ?1"))?;
        for (id, key) in latest {
            sq(stmt.execute(params![id, key]))?;
        }
        Ok(())
    }

    fn load_observations(&mut self, keys: &[ObservationKey]) -> LedgerResult<Vec<ObservationRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {OBSERVATION_COLUMNS} FROM observations WHERE partition_id = ?1 \
             AND subject_id = ?2 AND observation_id = ?3"
        )))?;
        let mut versions = sq(conn.prepare_cached(
            "SELECT fingerprint FROM conflict_versions WHERE observation_id = ?1 \
             ORDER BY fingerprint",
        ))?;
        let mut out = Vec::new();
        for (pid, sid, id) in keys {
            let id_bytes = observation_blob(id)?;
            let row = sq(stmt
                .query_row(params![pid, subject_blob_of(sid)?, id_bytes], |r| {
                    observation(r, 0)
                })
                .optional())?;
            if let Some(mut row) = row {
                if row.version_count > 1 {
                    let fps = sq(versions.query_map(params![id_bytes], |r| {
                        blob_column(r, 0, |b| hex_of("muof_", b))
                    }))?;
                    row.fingerprints = fps.map(sq).collect::<LedgerResult<_>>()?;
                }
                out.push(row);
            }
        }
        Ok(out)
    }

    fn write_chunk(
        &mut self,
        deliveries: &[DeliveryRow],
        observations: &[ObservationRow],
        conflict_versions: &[(String, String)],
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        {
            let mut stmt = sq(conn.prepare_cached(&format!(
                "INSERT INTO deliveries ({DELIVERY_COLUMNS}) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
            )))?;
            for d in deliveries {
                sq(stmt.execute(params![
                    d.seq,
                    d.batch_id,
                    d.partition_id,
                    observation_blob(&d.observation_id)?,
                    d.application_receipt_id,
                    d.memory_ref_digests,
                    d.outcome_ref,
                    label_index(&d.utility_label)?,
                    level_index(&d.attribution_level)?,
                    basis_index(&d.evidence_basis)?,
                    d.confidence,
                    d.reason_codes,
                    d.evidence_refs,
                    d.evaluator_ref,
                    d.evaluation_version,
                    d.created_at
                ]))?;
            }
        }
        {
            let mut stmt = sq(conn.prepare_cached(&format!(
                "INSERT INTO observations ({OBSERVATION_COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
                 ON CONFLICT (partition_id, subject_id, observation_id) DO UPDATE SET \
                 version_count = excluded.version_count, \
                 delivery_count = excluded.delivery_count, rep_seq = excluded.rep_seq, \
                 rep_order = excluded.rep_order"
            )))?;
            for o in observations {
                sq(stmt.execute(params![
                    o.partition_id,
                    subject_blob_of(&o.subject_id)?,
                    observation_blob(&o.observation_id)?,
                    o.version_count,
                    o.delivery_count,
                    fingerprint_blob(&o.fingerprint)?,
                    o.rep_seq,
                    order_blob(&o.rep_order).ok_or_else(|| unstorable("an order key"))?,
                    o.utility_label.index() as i64,
                    o.evidence_basis.index() as i64,
                    o.confidence
                ]))?;
            }
        }
        let mut stmt = sq(conn.prepare_cached(
            "INSERT OR IGNORE INTO conflict_versions (observation_id, fingerprint) VALUES (?1, ?2)",
        ))?;
        for (id, fp) in conflict_versions {
            sq(stmt.execute(params![observation_blob(id)?, fingerprint_blob(fp)?]))?;
        }
        Ok(())
    }

    fn subject_members(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<ObservationRow>>> {
        let conn = self.conn()?;
        // Only the columns the reducer and the history read: members are decoded for
        // every touched subject, and their subject id and fingerprint are not needed.
        let mut stmt = sq(conn.prepare_cached(
            "SELECT observation_id, rep_seq, rep_order, utility_label, evidence_basis, \
             confidence FROM observations WHERE partition_id = ?1 \
             AND subject_id = ?2 AND version_count = 1 ORDER BY observation_id",
        ))?;
        let mut out = Vec::with_capacity(keys.len());
        for (pid, sid) in keys {
            let rows = sq(stmt.query_map(params![pid, subject_blob_of(sid)?], |r| {
                Ok(ObservationRow {
                    partition_id: *pid,
                    subject_id: String::new(),
                    observation_id: blob_column(r, 0, |b| hex_of("muo_", b))?,
                    version_count: 1,
                    delivery_count: 1,
                    fingerprint: String::new(),
                    rep_seq: r.get(1)?,
                    rep_order: blob_column(r, 2, order_text)?,
                    fingerprints: Vec::new(),
                    utility_label: from_index(UtilityLabel::ALL, r, 3)?,
                    evidence_basis: from_index(EvidenceBasis::ALL, r, 4)?,
                    confidence: r.get(5)?,
                })
            }))?;
            out.push(rows.map(sq).collect::<LedgerResult<Vec<_>>>()?);
        }
        Ok(out)
    }

    fn load_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Option<SubjectRow>>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {SUBJECT_COLUMNS} FROM subjects WHERE partition_id = ?1 AND subject_id = ?2"
        )))?;
        keys.iter()
            .map(|(pid, sid)| match subject_blob(sid) {
                // Not a subject id: no subject has it.
                None => Ok(None),
                Some(blob) => sq(stmt.query_row(params![pid, blob], subject).optional()),
            })
            .collect()
    }

    fn put_subjects(
        &mut self,
        rows: &[SubjectRow],
        digests: &[(i64, String, String)],
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        {
            let mut stmt = sq(conn.prepare_cached(&format!(
                "INSERT INTO subjects ({SUBJECT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT (partition_id, subject_id) DO UPDATE SET \
                 review_state = excluded.review_state, observation_count = excluded.observation_count, \
                 last_key = excluded.last_key, state = excluded.state, \
                 history_seqs = excluded.history_seqs"
            )))?;
            for s in rows {
                sq(stmt.execute(params![
                    s.partition_id,
                    subject_blob_of(&s.subject_id)?,
                    s.review_state,
                    s.observation_count,
                    key_blob(&s.last_key).ok_or_else(|| unstorable("an order key"))?,
                    s.state,
                    format_seqs(&s.history_seqs)
                ]))?;
            }
        }
        let mut stmt = sq(conn.prepare_cached(
            "INSERT OR IGNORE INTO subject_digests (partition_id, memory_ref_digest, subject_id) \
             VALUES (?1, ?2, ?3)",
        ))?;
        for (pid, digest, sid) in digests {
            sq(stmt.execute(params![pid, digest, subject_blob_of(sid)?]))?;
        }
        Ok(())
    }

    fn delete_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut del = sq(
            conn.prepare_cached("DELETE FROM subjects WHERE partition_id = ?1 AND subject_id = ?2")
        )?;
        let mut del_digests = sq(conn.prepare_cached(
            "DELETE FROM subject_digests WHERE partition_id = ?1 AND subject_id = ?2",
        ))?;
        for (pid, sid) in keys {
            let blob = subject_blob_of(sid)?;
            sq(del.execute(params![pid, blob]))?;
            sq(del_digests.execute(params![pid, blob]))?;
        }
        Ok(())
    }

    fn partition_deliveries(
        &mut self,
        partition_id: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE partition_id = ?1 ORDER BY seq"
        )))?;
        let rows = sq(stmt.query_map(params![partition_id], delivery))?;
        for row in rows {
            visit(sq(row)?)?;
        }
        Ok(())
    }

    fn all_deliveries(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE seq > ?1 ORDER BY seq"
        )))?;
        let rows = sq(stmt.query_map(params![after_seq], delivery))?;
        for row in rows {
            visit(sq(row)?)?;
        }
        Ok(())
    }

    fn deliveries_by_seq(&mut self, seqs: &[i64]) -> LedgerResult<Vec<DeliveryRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE seq = ?1"
        )))?;
        let mut out = Vec::with_capacity(seqs.len());
        let mut sorted = seqs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for seq in sorted {
            if let Some(row) = sq(stmt.query_row(params![seq], delivery).optional())? {
                out.push(row);
            }
        }
        Ok(out)
    }

    fn subjects_page(
        &mut self,
        partition_id: i64,
        after: Option<&str>,
        limit: usize,
    ) -> LedgerResult<Vec<SubjectRow>> {
        let conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let after = match after {
            None => Vec::new(),
            Some(text) => subject_blob_of(text)?.to_vec(),
        };
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {SUBJECT_COLUMNS} FROM subjects WHERE partition_id = ?1 AND subject_id > ?2 \
             ORDER BY subject_id LIMIT ?3"
        )))?;
        let rows = sq(stmt.query_map(params![partition_id, after, limit], subject))?;
        rows.map(sq).collect()
    }

    fn subjects_with_digest(
        &mut self,
        partition_id: i64,
        digest: &str,
    ) -> LedgerResult<Vec<SubjectRow>> {
        let conn = self.conn()?;
        // CROSS JOIN keeps the digest index as the outer loop: without statistics the
        // planner otherwise walks every subject of the partition for each look-up.
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {SUBJECT_COLUMNS_S} FROM subject_digests g CROSS JOIN subjects s \
             ON s.partition_id = g.partition_id AND s.subject_id = g.subject_id \
             WHERE g.partition_id = ?1 AND g.memory_ref_digest = ?2 ORDER BY s.subject_id"
        )))?;
        let rows = sq(stmt.query_map(params![partition_id, digest], subject))?;
        rows.map(sq).collect()
    }

    fn scan_latest(&mut self, partition_id: i64) -> LedgerResult<Option<String>> {
        let conn = self.conn()?;
        let blob: Option<Vec<u8>> = sq(conn.query_row(
            "SELECT max(last_key) FROM subjects WHERE partition_id = ?1",
            params![partition_id],
            |r| r.get(0),
        ))?;
        match blob {
            None => Ok(None),
            Some(b) => key_text(&b)
                .map(Some)
                .ok_or_else(|| LedgerError::Storage("a subject's order key is damaged".into())),
        }
    }

    fn conflicts(&mut self, partition_id: i64, limit: usize) -> LedgerResult<Vec<ConflictRow>> {
        let conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut stmt = sq(conn.prepare_cached(
            "SELECT observation_id, delivery_count, version_count FROM observations \
             WHERE partition_id = ?1 AND version_count > 1 ORDER BY observation_id LIMIT ?2",
        ))?;
        let heads: Vec<(Vec<u8>, i64, i64)> = sq(stmt
            .query_map(params![partition_id, limit], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>())?;
        let mut fps = sq(conn.prepare_cached(
            "SELECT fingerprint FROM conflict_versions WHERE observation_id = ?1 \
             ORDER BY fingerprint LIMIT 17",
        ))?;
        let mut out = Vec::with_capacity(heads.len());
        for (id, delivery_count, version_count) in heads {
            let fingerprints: Vec<String> = sq(fps
                .query_map(params![id], |r| blob_column(r, 0, |b| hex_of("muof_", b)))?
                .collect::<rusqlite::Result<_>>())?;
            out.push(ConflictRow {
                observation_id: hex_of("muo_", &id)
                    .ok_or_else(|| LedgerError::Storage("an observation id is damaged".into()))?,
                delivery_count,
                fingerprints,
                version_count,
            });
        }
        Ok(out)
    }

    fn verify_observations(
        &mut self,
        visit: &mut dyn FnMut(Vec<DeliveryRow>, Option<ObservationRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        // Conflicting ids are few; their fingerprints fit in memory.
        let mut versions: std::collections::BTreeMap<String, Vec<String>> =
            std::collections::BTreeMap::new();
        {
            let mut stmt = sq(conn.prepare(
                "SELECT observation_id, fingerprint FROM conflict_versions \
                 ORDER BY observation_id, fingerprint",
            ))?;
            let rows = sq(stmt.query_map([], |r| {
                Ok((
                    blob_column(r, 0, |b| hex_of("muo_", b))?,
                    blob_column(r, 1, |b| hex_of("muof_", b))?,
                ))
            }))?;
            for row in rows {
                let (id, fp) = sq(row)?;
                versions.entry(id).or_default().push(fp);
            }
        }
        let mut left_stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries ORDER BY observation_id, seq"
        )))?;
        let left = sq(left_stmt.query_map([], delivery))?.map(sq);
        let mut right_stmt = sq(conn.prepare(&format!(
            "SELECT {OBSERVATION_COLUMNS} FROM observations ORDER BY observation_id"
        )))?;
        let right = sq(right_stmt.query_map([], |r| observation(r, 0)))?
            .map(sq)
            .map(|row| {
                row.map(|mut row| {
                    row.fingerprints = versions.remove(&row.observation_id).unwrap_or_default();
                    row
                })
            });
        super::merge_sorted(
            left,
            right,
            |d: &DeliveryRow| d.observation_id.clone(),
            |o: &ObservationRow| o.observation_id.clone(),
            &mut |_, group, stored| visit(group, stored),
        )
    }

    fn verify_subjects(
        &mut self,
        visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut left_stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS_D}, o.subject_id FROM observations o JOIN deliveries d \
             ON d.seq = o.rep_seq WHERE o.version_count = 1 \
             ORDER BY o.partition_id, o.subject_id, o.observation_id"
        )))?;
        let left = sq(left_stmt.query_map([], |r| {
            let d = delivery(r)?;
            let sid = blob_column(r, 16, subject_text)?;
            Ok((sid, d))
        }))?
        .map(sq);
        let mut right_stmt = sq(conn.prepare(&format!(
            "SELECT {SUBJECT_COLUMNS} FROM subjects ORDER BY partition_id, subject_id"
        )))?;
        let right = sq(right_stmt.query_map([], subject))?.map(sq);
        super::merge_sorted(
            left,
            right,
            |(sid, d): &(String, DeliveryRow)| (d.partition_id, sid.clone()),
            |s: &SubjectRow| (s.partition_id, s.subject_id.clone()),
            &mut |key, group, stored| {
                visit(key, group.into_iter().map(|(_, d)| d).collect(), stored)
            },
        )
    }

    fn all_subject_digests(&mut self) -> LedgerResult<Vec<(i64, String, String)>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(
            "SELECT partition_id, subject_id, memory_ref_digest FROM subject_digests \
             ORDER BY partition_id, subject_id, memory_ref_digest",
        ))?;
        let rows = sq(stmt.query_map([], |r| {
            Ok((r.get(0)?, blob_column(r, 1, subject_text)?, r.get(2)?))
        }))?;
        rows.map(sq).collect()
    }

    fn batches(&mut self) -> LedgerResult<Vec<BatchRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(
            "SELECT batch_id, first_seq, last_seq, received, appended, duplicate, conflicting, \
             refused FROM batches ORDER BY batch_id",
        ))?;
        let rows = sq(stmt.query_map([], |r| {
            Ok(BatchRow {
                batch_id: r.get(0)?,
                first_seq: r.get(1)?,
                last_seq: r.get(2)?,
                received: r.get(3)?,
                appended: r.get(4)?,
                duplicate: r.get(5)?,
                conflicting: r.get(6)?,
                refused: r.get(7)?,
            })
        }))?;
        rows.map(sq).collect()
    }
}

/// Consecutive unreadable sequences probed past the last readable one when no record
/// of the ledger's last sequence can be read.
const BLIND_PROBES: i64 = 65_536;

/// True for a SQLite error about the file's pages or a stored value (what salvage skips),
/// as opposed to one about the connection or the statement.
fn is_damage(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    ) || matches!(
        err,
        rusqlite::Error::FromSqlConversionFailure(..) | rusqlite::Error::InvalidColumnType(..)
    )
}

/// Reads what can be read of a damaged ledger inside a read transaction: the schema (a
/// damaged `ledger_meta` is passed over, a readable one must be this layout), the last
/// sequence the ledger reached (the greater of the readable `max(seq)` and the batches'
/// `max(last_seq)`), then every delivery after `after_seq` in sequence order. A scan that
/// meets an unreadable page starts again after the last row it read; a sequence whose seek
/// fails is skipped, one at a time, so every row on a readable root-to-leaf path is found.
fn salvage_rows(
    conn: &Connection,
    after_seq: i64,
    visit: &mut dyn FnMut(DeliveryRow, Option<&PartitionKey>) -> LedgerResult<()>,
) -> LedgerResult<Option<i64>> {
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
             AND name IN ('deliveries', 'partitions', 'ledger_meta')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| match map_error(&e) {
            LedgerError::Damaged { detail, .. } => LedgerError::Corrupt(format!(
                "its schema page cannot be read, so nothing can be salvaged ({detail}); restore a backup"
            )),
            other => other,
        })?;
    if tables != 3 {
        return Err(LedgerError::NotALedger);
    }
    let version: rusqlite::Result<Option<String>> = conn
        .query_row(
            "SELECT value FROM ledger_meta WHERE key = 'ledger_schema_version'",
            [],
            |r| r.get(0),
        )
        .optional();
    match version {
        Ok(Some(v)) => check_version(Some(&v))?,
        // A damaged or incomplete `ledger_meta`: the tables above say what to read.
        Ok(None) => {}
        Err(e) if is_damage(&e) => {}
        Err(e) => return Err(map_error(&e)),
    }
    let hint = |sql: &str| -> Option<i64> { conn.query_row(sql, [], |r| r.get(0)).ok().flatten() };
    let high = [
        hint("SELECT max(seq) FROM deliveries"),
        hint("SELECT max(last_seq) FROM batches"),
    ]
    .into_iter()
    .flatten()
    .max();

    let mut partitions: BTreeMap<i64, Option<PartitionKey>> = BTreeMap::new();
    let mut partition_stmt = sq(conn.prepare(&format!(
        "SELECT {PARTITION_COLUMNS} FROM partitions WHERE partition_id = ?1"
    )))?;
    let mut stmt = sq(conn.prepare(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE seq >= ?1 ORDER BY seq"
    )))?;
    let mut next = after_seq.max(0) + 1;
    let mut last_read = next - 1;
    loop {
        let stop = match high {
            Some(h) => h,
            None => last_read.saturating_add(BLIND_PROBES),
        };
        if next > stop {
            break;
        }
        let mut progressed = false;
        let mut failed = false;
        match stmt.query(params![next]) {
            Err(e) if is_damage(&e) => failed = true,
            Err(e) => return Err(map_error(&e)),
            Ok(mut rows) => loop {
                let row = match rows.next() {
                    Ok(Some(row)) => row,
                    Ok(None) => break,
                    Err(e) if is_damage(&e) => {
                        failed = true;
                        break;
                    }
                    Err(e) => return Err(map_error(&e)),
                };
                let seq: i64 = match row.get(0) {
                    Ok(seq) => seq,
                    Err(_) => {
                        failed = true;
                        break;
                    }
                };
                if seq < next {
                    // Out of order: a damaged interior page. Probe on from `next`.
                    failed = true;
                    break;
                }
                next = seq + 1;
                last_read = seq;
                progressed = true;
                // A row whose values cannot be read is left out (the caller counts it).
                let Ok(d) = delivery(row) else {
                    continue;
                };
                let key = partitions.entry(d.partition_id).or_insert_with(|| {
                    partition_stmt
                        .query_row(params![d.partition_id], partition)
                        .ok()
                        .map(|p| p.key)
                });
                visit(d, key.as_ref())?;
            },
        }
        if !failed {
            break;
        }
        if !progressed {
            next += 1;
        }
    }
    Ok(high)
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

#[cfg(test)]
mod tests {
    use super::{hex_of, id_blob, subject_blob, subject_text};

    #[test]
    fn ids_convert_to_bytes_and_back_and_non_canonical_ids_are_refused() {
        let hex: String = (0u8..32)
            .map(|b| format!("{:02x}", b.wrapping_mul(37)))
            .collect();
        let id = format!("muo_{hex}");
        let blob = id_blob(&id, "muo_").expect("canonical");
        assert_eq!(blob.len(), 32);
        assert_eq!(hex_of("muo_", &blob).as_deref(), Some(id.as_str()));
        let subject = format!("mus_{hex}");
        let blob = subject_blob(&subject).expect("canonical");
        assert_eq!(blob[0], b's');
        assert_eq!(subject_text(&blob).as_deref(), Some(subject.as_str()));
        for bad in [
            format!("muo_{}", hex.to_uppercase()),
            format!("muo_{}g", &hex[..63]),
            format!("muo_{}", &hex[..62]),
            format!("muo_{hex}00"),
            format!("muo_{}\u{e9}", &hex[..62]),
            format!("mui_{hex}"),
        ] {
            assert_eq!(id_blob(&bad, "muo_"), None, "{bad}");
        }
    }
}
