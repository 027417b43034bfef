//! The SQLite ledger's traffic log ([`crate::ledger::traffic`]): its two tables, created
//! inside the first traffic write, and every statement that reads or writes them.
//!
//! `traffic_events.seq` is the table's rowid, assigned in commit order (one writer at a
//! time); `delivery_seq` is the deliveries' high water inside the same transaction. The
//! partition of an event is a row of `traffic_partitions` (its six key fields once), so
//! that a million events do not repeat them.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension as _, params, params_from_iter};

use super::super::error::{LedgerError, LedgerResult};
use super::super::rows::PartitionKey;
use super::super::rows::{TrafficAppend, TrafficKind, TrafficRow};
use super::sq;

/// The traffic tables (idempotent: run inside every traffic write).
const TRAFFIC_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS traffic_partitions (
    traffic_partition_id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    corpus_id TEXT NOT NULL,
    surface_id TEXT NOT NULL,
    retrieval_snapshot_ref TEXT NOT NULL,
    policy_snapshot_ref TEXT NOT NULL,
    UNIQUE (agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, policy_snapshot_ref)
);
CREATE TABLE IF NOT EXISTS traffic_events (
    seq INTEGER PRIMARY KEY,
    traffic_partition_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    recall_id TEXT NOT NULL,
    application_receipt_id TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    delivery_seq INTEGER NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS traffic_events_by_partition
    ON traffic_events (traffic_partition_id, seq);
";

/// The `-wal` length (bytes) from which a traffic write folds the log into the file: about
/// 100 pages, 20 events.
const FOLD_WAL_BYTES: u64 = 100 * 4120;

/// After a traffic commit: when the `-wal` beside the ledger has grown past
/// [`FOLD_WAL_BYTES`], checkpoint it into the file and truncate it
/// (`wal_checkpoint(TRUNCATE)`, which syncs), so that the next process, which reads every
/// frame to rebuild the log's index, finds it short. A checkpoint that cannot run now
/// (another connection reads) is left for a later write: nothing is lost, the log is
/// only longer.
pub(super) fn fold_long_wal(conn: &Connection, path: &Path) {
    let wal = super::file::beside(path, "-wal");
    if std::fs::metadata(wal).is_ok_and(|m| m.len() > FOLD_WAL_BYTES) {
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        });
    }
}

fn table_exists(conn: &Connection) -> LedgerResult<bool> {
    let n: i64 = sq(conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'traffic_events'",
        [],
        |r| r.get(0),
    ))?;
    Ok(n > 0)
}

/// The id of `key` in `traffic_partitions`, inserted when new.
fn partition_id(conn: &Connection, key: &PartitionKey) -> LedgerResult<i64> {
    let mut find = sq(conn.prepare_cached(
        "SELECT traffic_partition_id FROM traffic_partitions WHERE agent_id = ?1 \
         AND project_id = ?2 AND corpus_id = ?3 AND surface_id = ?4 \
         AND retrieval_snapshot_ref = ?5 AND policy_snapshot_ref = ?6",
    ))?;
    if let Some(id) = sq(find
        .query_row(params_from_iter(key.fields()), |r| r.get::<_, i64>(0))
        .optional())?
    {
        return Ok(id);
    }
    let mut insert = sq(conn.prepare_cached(
        "INSERT INTO traffic_partitions (agent_id, project_id, corpus_id, surface_id, \
         retrieval_snapshot_ref, policy_snapshot_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    ))?;
    sq(insert.execute(params_from_iter(key.fields())))?;
    Ok(conn.last_insert_rowid())
}

/// Appends `events` (inside the write transaction).
pub(super) fn record(conn: &Connection, events: &[TrafficAppend]) -> LedgerResult<Vec<i64>> {
    sq(conn.execute_batch(TRAFFIC_SCHEMA))?;
    let high: i64 = sq(
        conn.query_row("SELECT coalesce(max(seq), 0) FROM deliveries", [], |r| {
            r.get(0)
        }),
    )?;
    let mut seqs = Vec::with_capacity(events.len());
    for e in events {
        let pid = partition_id(conn, &e.partition)?;
        let mut insert = sq(conn.prepare_cached(
            "INSERT INTO traffic_events (traffic_partition_id, kind, recall_id, \
             application_receipt_id, observed_at, delivery_seq, event) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        ))?;
        sq(insert.execute(params![
            pid,
            e.kind.as_str(),
            e.recall_id,
            e.application_receipt_id,
            e.observed_at,
            high,
            e.event
        ]))?;
        seqs.push(conn.last_insert_rowid());
    }
    Ok(seqs)
}

/// The greatest traffic sequence (0 without the table).
pub(super) fn high_water(conn: &Connection) -> LedgerResult<i64> {
    if !table_exists(conn)? {
        return Ok(0);
    }
    sq(conn.query_row(
        "SELECT coalesce(max(seq), 0) FROM traffic_events",
        [],
        |r| r.get(0),
    ))
}

fn key_of(r: &rusqlite::Row<'_>, base: usize) -> rusqlite::Result<PartitionKey> {
    Ok(PartitionKey {
        agent_id: r.get(base)?,
        project_id: r.get(base + 1)?,
        corpus_id: r.get(base + 2)?,
        surface_id: r.get(base + 3)?,
        retrieval_snapshot_ref: r.get(base + 4)?,
        policy_snapshot_ref: r.get(base + 5)?,
    })
}

/// Every partition with traffic, by id.
fn partitions_by_id(conn: &Connection) -> LedgerResult<Vec<(i64, PartitionKey)>> {
    if !table_exists(conn)? {
        return Ok(Vec::new());
    }
    let mut stmt = sq(conn.prepare(
        "SELECT traffic_partition_id, agent_id, project_id, corpus_id, surface_id, \
         retrieval_snapshot_ref, policy_snapshot_ref FROM traffic_partitions \
         ORDER BY traffic_partition_id",
    ))?;
    let rows = sq(stmt.query_map([], |r| Ok((r.get(0)?, key_of(r, 1)?))))?;
    rows.map(sq).collect()
}

/// Every partition with traffic, in key order.
pub(super) fn partitions(conn: &Connection) -> LedgerResult<Vec<PartitionKey>> {
    let mut keys: Vec<PartitionKey> = partitions_by_id(conn)?
        .into_iter()
        .map(|(_, k)| k)
        .collect();
    keys.sort();
    Ok(keys)
}

/// Visits the events of `selected` in sequence order.
pub(super) fn events(
    conn: &Connection,
    selected: &[PartitionKey],
    visit: &mut dyn FnMut(TrafficRow) -> LedgerResult<()>,
) -> LedgerResult<()> {
    let chosen: Vec<(i64, PartitionKey)> = partitions_by_id(conn)?
        .into_iter()
        .filter(|(_, k)| selected.contains(k))
        .collect();
    if chosen.is_empty() {
        return Ok(());
    }
    let marks = vec!["?"; chosen.len()].join(", ");
    let mut stmt = sq(conn.prepare(&format!(
        "SELECT seq, traffic_partition_id, kind, recall_id, application_receipt_id, \
         observed_at, delivery_seq, event FROM traffic_events \
         WHERE traffic_partition_id IN ({marks}) ORDER BY seq"
    )))?;
    let ids: Vec<i64> = chosen.iter().map(|(id, _)| *id).collect();
    let mut rows = sq(stmt.query(params_from_iter(ids.iter())))?;
    while let Some(r) = sq(rows.next())? {
        let pid: i64 = sq(r.get(1))?;
        let kind_text: String = sq(r.get(2))?;
        let seq: i64 = sq(r.get(0))?;
        let kind = TrafficKind::parse(&kind_text).ok_or_else(|| {
            LedgerError::Storage(format!("traffic event {seq} has an unknown kind"))
        })?;
        let partition = chosen
            .iter()
            .find(|(id, _)| *id == pid)
            .map(|(_, k)| k.clone())
            .ok_or_else(|| LedgerError::Storage(format!("traffic event {seq} has no partition")))?;
        visit(TrafficRow {
            seq,
            delivery_seq: sq(r.get(6))?,
            kind,
            partition,
            recall_id: sq(r.get(3))?,
            application_receipt_id: sq(r.get(4))?,
            observed_at: sq(r.get(5))?,
            event: sq(r.get(7))?,
        })?;
    }
    Ok(())
}
