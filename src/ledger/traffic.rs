//! The traffic log of the ledger (issue 22): the public-safe `memory_utility_traffic_event_v0`
//! events that `recall`, `apply` and `utility-attribute` append beside the deliveries, in
//! tables of their own, and the reads `rank-evaluate --ledger` builds its episodes from.
//!
//! Owns the stored row ([`TrafficAppend`] in, [`TrafficRow`] out) and the two operations
//! over any [`LedgerBackend`]: [`append`] (its own short write transaction, which waits at
//! most [`TRAFFIC_WAIT`] for the ledger and never behind a long delivery append on
//! PostgreSQL) and [`read`] (one read snapshot: the delivery and traffic high waters and
//! the events of the selected partitions). What an event says is built and parsed in
//! [`crate::recall::traffic`]; here it is canonical JSON text plus the columns a read
//! filters on. On SQLite a traffic append is not synced (see
//! `SqliteLedger::begin_write_within`): an operating-system crash can lose the log's last
//! events, never a delivery. The traffic tables are created by the first traffic write, so a ledger
//! without traffic keeps its layout; `verify` and `export` never read them. Rows are never
//! updated or deleted.

use std::time::Duration;

use super::backend::{LedgerBackend, with_read};
use super::error::LedgerResult;
use super::rows::PartitionKey;
pub use super::rows::{TrafficAppend, TrafficKind, TrafficRow};

/// How long a traffic append waits for the ledger's write lock before it gives up (the
/// caller fails open): a recall must not hang behind another process's long append.
pub const TRAFFIC_WAIT: Duration = Duration::from_secs(2);

/// Appends `events` in one transaction (creating the ledger, or its traffic tables, when
/// absent) and returns their sequences. Fails with [`super::LedgerError::Busy`] when the
/// ledger stays locked for [`TRAFFIC_WAIT`].
pub fn append(backend: &mut dyn LedgerBackend, events: &[TrafficAppend]) -> LedgerResult<Vec<i64>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    backend.begin_traffic_write(TRAFFIC_WAIT)?;
    match backend.record_traffic(events) {
        Ok(seqs) => {
            backend.commit()?;
            Ok(seqs)
        }
        Err(e) => {
            backend.rollback();
            Err(e)
        }
    }
}

/// True when the ledger holds a traffic log (at least one event); a ledger that does not
/// exist yet holds none.
pub fn has_traffic(backend: &mut dyn LedgerBackend) -> LedgerResult<bool> {
    match with_read(backend, |b| Ok(b.traffic_high_water()? > 0)) {
        Err(super::LedgerError::Missing) => Ok(false),
        other => other,
    }
}

/// What [`read`] returns besides the events it visits: one consistent snapshot of the
/// log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrafficSnapshot {
    pub backend: &'static str,
    /// The greatest delivery sequence.
    pub delivery_high_water: i64,
    /// The greatest traffic sequence (0 without a traffic log).
    pub traffic_high_water: i64,
    /// Every partition with traffic, in key order.
    pub partitions: Vec<PartitionKey>,
}

/// Which partitions [`read`] returns the events of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every partition with traffic.
    All,
    /// These partitions only.
    Only(Vec<PartitionKey>),
}

/// Reads the log in one read snapshot: the high waters and the partitions with traffic,
/// and visits the events of `selection` in sequence order. A ledger without a traffic log
/// reads as empty.
pub fn read(
    backend: &mut dyn LedgerBackend,
    selection: &Selection,
    visit: &mut dyn FnMut(TrafficRow) -> LedgerResult<()>,
) -> LedgerResult<TrafficSnapshot> {
    with_read(backend, |b| {
        let mut snapshot = TrafficSnapshot {
            backend: b.backend_name(),
            delivery_high_water: b.high_water()?,
            traffic_high_water: b.traffic_high_water()?,
            ..TrafficSnapshot::default()
        };
        if snapshot.traffic_high_water == 0 {
            return Ok(snapshot);
        }
        snapshot.partitions = b.traffic_partitions()?;
        let chosen: Vec<PartitionKey> = match selection {
            Selection::All => snapshot.partitions.clone(),
            Selection::Only(keys) => keys
                .iter()
                .filter(|k| snapshot.partitions.binary_search(k).is_ok())
                .cloned()
                .collect(),
        };
        if !chosen.is_empty() {
            b.traffic_events(&chosen, visit)?;
        }
        Ok(snapshot)
    })
}
