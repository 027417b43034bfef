//! `export --salvage` on SQLite: what can still be read of a damaged ledger file, row by
//! row, past unreadable pages.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension as _, params};

use super::super::backend::check_version;
use super::super::error::{LedgerError, LedgerResult};
use super::super::rows::{DELIVERY_COLUMNS, DeliveryRow, PARTITION_COLUMNS, PartitionKey};
use super::codec::{delivery, partition};
use super::{map_error, sq};

/// Consecutive unreadable sequences probed past the last readable one when no record
/// of the ledger's last sequence can be read.
pub(super) const BLIND_PROBES: i64 = 65_536;

/// True for a SQLite error about the file's pages or a stored value (what salvage skips),
/// as opposed to one about the connection or the statement.
pub(super) fn is_damage(err: &rusqlite::Error) -> bool {
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
pub(super) fn salvage_rows(
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
