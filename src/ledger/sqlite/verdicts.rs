//! The SQLite statements of the ledger's identity and of recorded verdicts: the
//! `ledger_id` row of `ledger_meta`, and the `evaluation_verdicts` tables created by the
//! first recorded verdict.

use rusqlite::{Connection, OptionalExtension as _, params};

use super::super::error::LedgerResult;
use super::super::rows::VerdictRow;
use super::sq;

/// The verdict tables, created inside the write transaction of the first verdict.
const VERDICT_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS evaluation_verdicts (
    record_seq INTEGER PRIMARY KEY,
    verdict_digest TEXT NOT NULL UNIQUE,
    profile_digest TEXT NOT NULL,
    verdict TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    packet TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evaluation_verdict_partitions (
    partition_identity TEXT NOT NULL,
    record_seq INTEGER NOT NULL,
    PRIMARY KEY (partition_identity, record_seq)
) WITHOUT ROWID;
";

/// Gives the ledger `fresh` as its identity unless it has one (inside a write).
pub(super) fn ensure_ledger_id(conn: &Connection, fresh: &str) -> LedgerResult<()> {
    sq(conn.execute(
        "INSERT OR IGNORE INTO ledger_meta (key, value) VALUES ('ledger_id', ?1)",
        params![fresh],
    ))
    .map(|_| ())
}

pub(super) fn ledger_id(conn: &Connection) -> LedgerResult<Option<String>> {
    sq(conn
        .query_row(
            "SELECT value FROM ledger_meta WHERE key = 'ledger_id'",
            [],
            |r| r.get(0),
        )
        .optional())
}

fn has_verdicts(conn: &Connection) -> LedgerResult<bool> {
    let n: i64 = sq(conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'evaluation_verdicts'",
        [],
        |r| r.get(0),
    ))?;
    Ok(n > 0)
}

pub(super) fn record_verdict(conn: &Connection, row: &VerdictRow) -> LedgerResult<(i64, bool)> {
    sq(conn.execute_batch(VERDICT_SCHEMA))?;
    let existing: Option<i64> = sq(conn
        .query_row(
            "SELECT record_seq FROM evaluation_verdicts WHERE verdict_digest = ?1",
            params![row.verdict_digest],
            |r| r.get(0),
        )
        .optional())?;
    if let Some(seq) = existing {
        return Ok((seq, false));
    }
    sq(conn.execute(
        "INSERT INTO evaluation_verdicts \
         (verdict_digest, profile_digest, verdict, source_kind, packet) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            row.verdict_digest,
            row.profile_digest,
            row.verdict,
            row.source_kind,
            row.packet
        ],
    ))?;
    let seq = conn.last_insert_rowid();
    let mut insert = sq(conn.prepare_cached(
        "INSERT OR IGNORE INTO evaluation_verdict_partitions (partition_identity, record_seq) \
         VALUES (?1, ?2)",
    ))?;
    for partition in &row.partitions {
        sq(insert.execute(params![partition, seq]))?;
    }
    Ok((seq, true))
}

pub(super) fn newest_verdict(
    conn: &Connection,
    profile_digest: &str,
    partition: &str,
) -> LedgerResult<Option<String>> {
    if !has_verdicts(conn)? {
        return Ok(None);
    }
    sq(conn
        .query_row(
            "SELECT v.packet FROM evaluation_verdict_partitions p \
             JOIN evaluation_verdicts v ON v.record_seq = p.record_seq \
             WHERE p.partition_identity = ?1 AND v.profile_digest = ?2 \
             ORDER BY p.record_seq DESC LIMIT 1",
            params![partition, profile_digest],
            |r| r.get(0),
        )
        .optional())
}
