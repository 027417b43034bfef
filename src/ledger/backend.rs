//! The [`LedgerBackend`] trait both storage backends implement, and what they share
//! beyond it: the checks of the `ledger_meta` rows every ledger carries, one read
//! snapshot around a read, and the merges of the key-ordered row streams `verify` reads.

use std::time::Duration;

use super::error::{LedgerError, LedgerResult};
use super::provenance::Provenance;
use super::rows::{
    BatchRow, ConflictRow, DeliveryRow, LEDGER_SCHEMA_VERSION, ObservationKey, ObservationRow,
    PartitionKey, PartitionRow, PartitionUpdate, SubjectKey, SubjectRow,
};
use super::rows::{LEDGER_ID_PREFIX, VerdictRow};
use super::rows::{TrafficAppend, TrafficRow};
use crate::utility::reducer::V1Input;

/// What every backend stores and reads. Write methods run inside the transaction opened
/// by [`LedgerBackend::begin_write`] (which holds the ledger's one write lock until
/// [`LedgerBackend::commit`] or [`LedgerBackend::rollback`]); read methods inside
/// [`LedgerBackend::begin_read`] (one consistent snapshot).
pub trait LedgerBackend {
    /// `sqlite` or `postgres`.
    fn backend_name(&self) -> &'static str;
    /// How many subjects an append aggregates and recomputes per storage round: small
    /// where a round trip is cheap (pages stay cached between the writes and the reads),
    /// large where it is not.
    fn subject_window(&self) -> usize;

    /// Starts the append transaction: creates the schema on a fresh ledger, checks the
    /// schema version, takes the write lock.
    fn begin_write(&mut self) -> LedgerResult<()>;
    /// Makes the transaction durable.
    fn commit(&mut self) -> LedgerResult<()>;
    /// Abandons the transaction.
    fn rollback(&mut self);
    /// Starts a read snapshot (fails with [`LedgerError::Missing`] on a ledger that was
    /// never created).
    fn begin_read(&mut self) -> LedgerResult<()>;
    /// Ends the read snapshot; fails when what was read cannot be trusted (a SQLite
    /// ledger read without locks changed meanwhile).
    fn end_read(&mut self) -> LedgerResult<()>;
    /// The storage's own integrity check, inside the read snapshot (SQLite:
    /// `PRAGMA quick_check`): `Some` of the first problems when it fails. `None` where
    /// the backend has none to run (PostgreSQL keeps its own page checksums).
    fn integrity_problem(&mut self) -> LedgerResult<Option<String>> {
        Ok(None)
    }
    /// Reads what can still be read of a damaged ledger, in its own read snapshot: every
    /// delivery after `after_seq` that the storage can read, in sequence order, with its
    /// partition key when that is readable, skipping what it cannot read. Returns the
    /// greatest sequence the ledger records having reached (`None` when no record of it
    /// is readable).
    fn salvage(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow, Option<&PartitionKey>) -> LedgerResult<()>,
    ) -> LedgerResult<Option<i64>> {
        let _ = (after_seq, visit);
        Err(LedgerError::Request(format!(
            "--salvage reads damaged SQLite ledger files; a {} ledger is repaired by its server: use export without --salvage, or restore a backup",
            self.backend_name()
        )))
    }

    /// The greatest delivery sequence (0 when empty).
    fn high_water(&mut self) -> LedgerResult<i64>;
    /// The greatest batch id (0 when none).
    fn last_batch_id(&mut self) -> LedgerResult<i64>;
    /// Records a committed batch.
    fn record_batch(&mut self, batch: &BatchRow) -> LedgerResult<()>;
    /// Records how a batch arrived when it did not arrive by import (inside the write
    /// transaction; the first such batch creates the batch-provenance table).
    fn record_provenance(&mut self, batch_id: i64, provenance: &Provenance) -> LedgerResult<()>;
    /// The recorded provenance of those of `batch_ids` that have one, by batch id; every
    /// other batch arrived by import. A ledger without the batch-provenance table (never
    /// written to by the runtime, or written before provenance existed) has none.
    fn batch_provenance(&mut self, batch_ids: &[i64]) -> LedgerResult<Vec<(i64, Provenance)>>;

    /// The partition with this key.
    fn find_partition(&mut self, key: &PartitionKey) -> LedgerResult<Option<PartitionRow>>;
    /// [`LedgerBackend::find_partition`] of several keys (one storage round where the
    /// backend can).
    fn find_partitions(
        &mut self,
        keys: &[PartitionKey],
    ) -> LedgerResult<Vec<Option<PartitionRow>>> {
        keys.iter().map(|k| self.find_partition(k)).collect()
    }
    /// Every partition, by id.
    fn partitions(&mut self) -> LedgerResult<Vec<PartitionRow>>;
    /// Creates a partition with zero counters and returns its id.
    fn insert_partition(&mut self, key: &PartitionKey) -> LedgerResult<i64>;
    /// Adds each update's deltas to its partition's counters and, when it has one, sets
    /// the partition's latest order key: one write per partition.
    fn update_partitions(&mut self, updates: &[PartitionUpdate]) -> LedgerResult<()>;
    /// The greatest subject `last_key` of a partition, read from its subjects.
    fn scan_latest(&mut self, partition_id: i64) -> LedgerResult<Option<String>>;

    /// The aggregates of these observations (those that exist), with fingerprints of
    /// conflicting ones. Keys come sorted.
    fn load_observations(&mut self, keys: &[ObservationKey]) -> LedgerResult<Vec<ObservationRow>>;
    /// Appends deliveries, stores observation aggregates and adds conflict fingerprints:
    /// `new_observations` have no stored row yet (the append read their keys and found
    /// none), `changed_observations` replace their stored rows' counters and
    /// representative.
    fn write_chunk(
        &mut self,
        deliveries: &[DeliveryRow],
        new_observations: &[ObservationRow],
        changed_observations: &[ObservationRow],
        conflict_versions: &[(String, String)],
    ) -> LedgerResult<()>;

    /// For each key, the aggregates of its accepted observations (`version_count` 1) in
    /// `observation_id` order. A backend may leave `subject_id` and `fingerprint` empty
    /// and `delivery_count` at 1: only the reducer's inputs and `rep_seq` are read.
    fn subject_members(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<ObservationRow>>>;
    /// For each key, what the `memory_utility_reducer_v1` rules read of its accepted
    /// observations ([`V1Input`]: label, tier, confidence, the representative's creation
    /// instant), in `observation_id` order: [`LedgerBackend::subject_members`] without
    /// what only the v0 reduction and the history read. A backend may read them more
    /// cheaply than whole aggregates.
    fn subject_v1_inputs(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<V1Input>>> {
        let mut out = Vec::with_capacity(keys.len());
        for mut members in self.subject_members(keys)? {
            members.sort_by(|a, b| a.observation_id.cmp(&b.observation_id));
            let inputs = members
                .iter()
                .map(|m| {
                    m.v1_input().ok_or_else(|| {
                        LedgerError::Storage(format!("observation {} is damaged", m.observation_id))
                    })
                })
                .collect::<LedgerResult<Vec<_>>>()?;
            out.push(inputs);
        }
        Ok(out)
    }
    /// For each key, the stored subject when it exists.
    fn load_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Option<SubjectRow>>>;
    /// Stores subjects: `new_rows` have no stored row yet (the append read their keys and
    /// found none), `changed_rows` replace their stored rows; `digests` are the digest
    /// index's rows of `new_rows` (set and none subjects only, sorted, each once): a
    /// subject without a row has none stored.
    fn put_subjects(
        &mut self,
        new_rows: &[SubjectRow],
        changed_rows: &[SubjectRow],
        digests: &[(i64, String, String)],
    ) -> LedgerResult<()>;
    /// Removes subjects (every observation of theirs became conflicting) and their
    /// digest rows.
    fn delete_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<()>;

    /// Visits a partition's deliveries in ledger order.
    fn partition_deliveries(
        &mut self,
        partition_id: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Visits every delivery after `after_seq` in ledger order.
    fn all_deliveries(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Deliveries by sequence (those that exist), in sequence order.
    fn deliveries_by_seq(&mut self, seqs: &[i64]) -> LedgerResult<Vec<DeliveryRow>>;
    /// A page of a partition's subjects in `subject_id` order after `after`.
    fn subjects_page(
        &mut self,
        partition_id: i64,
        after: Option<&str>,
        limit: usize,
    ) -> LedgerResult<Vec<SubjectRow>>;
    /// Set and none subjects of a partition that contain `digest`.
    fn subjects_with_digest(
        &mut self,
        partition_id: i64,
        digest: &str,
    ) -> LedgerResult<Vec<SubjectRow>>;
    /// The first `limit` conflicting ids of a partition, by id.
    fn conflicts(&mut self, partition_id: i64, limit: usize) -> LedgerResult<Vec<ConflictRow>>;

    /// Visits every `observation_id` in id order: its deliveries in sequence order (empty
    /// when only an aggregate row exists) and its stored aggregate (with fingerprints).
    fn verify_observations(
        &mut self,
        visit: &mut dyn FnMut(Vec<DeliveryRow>, Option<ObservationRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Visits every subject key in (partition id, subject id) order: the representative
    /// deliveries of its accepted observations in id order, and its stored row.
    fn verify_subjects(
        &mut self,
        visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
    /// Every digest-index row ordered by (partition id, subject id, digest).
    fn all_subject_digests(&mut self) -> LedgerResult<Vec<(i64, String, String)>>;
    /// Every batch, by id.
    fn batches(&mut self) -> LedgerResult<Vec<BatchRow>>;

    // --- The ledger's identity and recorded verdicts ([`super::verdicts`]) ---

    /// The ledger's `mul_` identity (`ledger_meta`), given by the first write transaction
    /// of a ledger that has none; `None` before that.
    fn ledger_id(&mut self) -> LedgerResult<Option<String>>;
    /// Appends a verdict (inside a write transaction; the verdict tables are created by
    /// the first one): its record number, and false when that verdict digest was
    /// already recorded (nothing written).
    fn record_verdict(&mut self, row: &VerdictRow) -> LedgerResult<(i64, bool)>;
    /// The packet of the newest verdict recorded for the profile digest and the `mur_`
    /// partition identity (inside a read snapshot).
    fn newest_verdict(
        &mut self,
        profile_digest: &str,
        partition: &str,
    ) -> LedgerResult<Option<String>>;

    // -----------------------------------------------------------------------------------
    // The traffic log (issue 22; [`super::traffic`]): recall, apply and outcome events in
    // tables of their own, created by the first traffic write, so that a ledger without
    // traffic keeps its layout. Append-only; `verify` and `export` never read them.
    // -----------------------------------------------------------------------------------

    /// Starts a traffic append: as [`LedgerBackend::begin_write`] (a fresh ledger gets its
    /// schema), but waits at most `wait` for the write lock and, where the backend has
    /// one, takes the traffic log's own lock instead of the delivery append's, so that a
    /// recall never waits behind a long append.
    fn begin_traffic_write(&mut self, wait: Duration) -> LedgerResult<()>;
    /// Appends events inside [`LedgerBackend::begin_traffic_write`] (creating the traffic
    /// tables when absent); each row records the delivery high water at its append.
    /// Returns the events' traffic sequences, in order.
    fn record_traffic(&mut self, events: &[TrafficAppend]) -> LedgerResult<Vec<i64>>;
    /// The greatest traffic sequence; 0 when the ledger has no traffic log.
    fn traffic_high_water(&mut self) -> LedgerResult<i64>;
    /// Every partition with traffic, in key order (empty without a traffic log).
    fn traffic_partitions(&mut self) -> LedgerResult<Vec<PartitionKey>>;
    /// Visits the events of these partitions (every kind), in traffic sequence order.
    fn traffic_events(
        &mut self,
        partitions: &[PartitionKey],
        visit: &mut dyn FnMut(TrafficRow) -> LedgerResult<()>,
    ) -> LedgerResult<()>;
}

/// A fresh ledger identity: `mul_` + 32 random hex digits from the operating system.
pub(super) fn fresh_ledger_id() -> LedgerResult<String> {
    crate::io::random_hex(16)
        .map(|hex| format!("{LEDGER_ID_PREFIX}{hex}"))
        .map_err(|e| LedgerError::Storage(format!("cannot draw a ledger identity: {e}")))
}

/// Runs `op` inside one read snapshot of the ledger; a snapshot that cannot be trusted
/// when it ends ([`LedgerBackend::end_read`]) fails the read.
pub(super) fn with_read<T>(
    backend: &mut dyn LedgerBackend,
    op: impl FnOnce(&mut dyn LedgerBackend) -> LedgerResult<T>,
) -> LedgerResult<T> {
    backend.begin_read()?;
    let result = op(backend);
    let ended = backend.end_read();
    let value = result?;
    ended?;
    Ok(value)
}

/// The groups of `verify_observations`: deliveries ordered by (observation id,
/// sequence) merged with the aggregates ordered by observation id; each id with its
/// deliveries and its stored aggregate.
pub fn merge_observations(
    deliveries: impl Iterator<Item = LedgerResult<DeliveryRow>>,
    aggregates: impl Iterator<Item = LedgerResult<ObservationRow>>,
    visit: &mut dyn FnMut(Vec<DeliveryRow>, Option<ObservationRow>) -> LedgerResult<()>,
) -> LedgerResult<()> {
    merge_sorted(
        deliveries,
        aggregates,
        |d: &DeliveryRow| d.observation_id.clone(),
        |o: &ObservationRow| o.observation_id.clone(),
        &mut |_, group, stored| visit(group, stored),
    )
}

/// The groups of `verify_subjects`: (subject id, representative delivery) pairs ordered
/// by (partition, subject, observation) merged with the subjects ordered by (partition,
/// subject); each subject key with its members' deliveries and its stored row.
pub fn merge_subjects(
    members: impl Iterator<Item = LedgerResult<(String, DeliveryRow)>>,
    subjects: impl Iterator<Item = LedgerResult<SubjectRow>>,
    visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
) -> LedgerResult<()> {
    merge_sorted(
        members,
        subjects,
        |(sid, d): &(String, DeliveryRow)| (d.partition_id, sid.clone()),
        |s: &SubjectRow| (s.partition_id, s.subject_id.clone()),
        &mut |key, group, stored| visit(key, group.into_iter().map(|(_, d)| d).collect(), stored),
    )
}

/// Merges two streams sorted by the same key into groups: every key of either stream,
/// with the left items of that key (in stream order) and the right item when present.
/// A key out of order in either stream is a storage error.
fn merge_sorted<K: Ord + Clone, L, R>(
    left: impl Iterator<Item = LedgerResult<L>>,
    right: impl Iterator<Item = LedgerResult<R>>,
    left_key: impl Fn(&L) -> K,
    right_key: impl Fn(&R) -> K,
    visit: &mut dyn FnMut(K, Vec<L>, Option<R>) -> LedgerResult<()>,
) -> LedgerResult<()> {
    let mut left = left.peekable();
    let mut right = right.peekable();
    loop {
        let lk = match left.peek() {
            Some(Ok(l)) => Some(left_key(l)),
            Some(Err(_)) => {
                return Err(left
                    .next()
                    .and_then(Result::err)
                    .unwrap_or(LedgerError::Storage("read failed".into())));
            }
            None => None,
        };
        let rk = match right.peek() {
            Some(Ok(r)) => Some(right_key(r)),
            Some(Err(_)) => {
                return Err(right
                    .next()
                    .and_then(Result::err)
                    .unwrap_or(LedgerError::Storage("read failed".into())));
            }
            None => None,
        };
        let key = match (&lk, &rk) {
            (None, None) => return Ok(()),
            (Some(a), None) => a.clone(),
            (None, Some(b)) => b.clone(),
            (Some(a), Some(b)) => a.min(b).clone(),
        };
        let mut group = Vec::new();
        while let Some(Ok(l)) = left.peek() {
            let k = left_key(l);
            if k != key {
                if k < key {
                    return Err(LedgerError::Storage("rows are not in key order".into()));
                }
                break;
            }
            if let Some(Ok(l)) = left.next() {
                group.push(l);
            }
        }
        let stored = if rk.as_ref() == Some(&key) {
            right.next().transpose()?
        } else {
            None
        };
        visit(key, group, stored)?;
    }
}

/// What `ledger_format` holds in every ledger.
pub const LEDGER_FORMAT: &str = "reward_memory_utility_ledger";

/// Accepts exactly [`LEDGER_SCHEMA_VERSION`]; a newer one is refused, never migrated down,
/// and an older one (a different layout) is refused with what to do. A ledger without
/// the row is refused as incomplete.
pub fn check_version(version: Option<&str>) -> LedgerResult<()> {
    let Some(text) = version else {
        return Err(LedgerError::Incomplete("ledger_schema_version"));
    };
    match text.trim().parse::<i64>() {
        Ok(v) if v == LEDGER_SCHEMA_VERSION => Ok(()),
        Ok(v) if v > LEDGER_SCHEMA_VERSION => Err(LedgerError::NewerSchema(v)),
        Ok(v) if v >= 1 => Err(LedgerError::OlderSchema(v)),
        _ => Err(LedgerError::UnknownSchema(
            text.chars().take(40).collect::<String>(),
        )),
    }
}

/// Accepts exactly [`LEDGER_FORMAT`]: a missing row is an incomplete ledger, another
/// value another kind of database.
pub fn check_format(format: Option<&str>) -> LedgerResult<()> {
    match format {
        None => Err(LedgerError::Incomplete("ledger_format")),
        Some(LEDGER_FORMAT) => Ok(()),
        Some(_) => Err(LedgerError::NotALedger),
    }
}
