//! The ledger's operations over any [`LedgerBackend`]: append (classify deliveries,
//! maintain aggregates, recompute touched subjects with the reducer), project, subject
//! look-up, export and verify.
//!
//! Owns the incremental maintenance rules, never the utility rules: a touched subject is
//! always recomputed from all of its accepted observations, taken in `observation_id`
//! order, by [`reducer::reduce_subject`]; within the v0 caps a projection is literally
//! [`reducer::reduce`] over the partition's deliveries. Memory stays bounded: deliveries
//! are processed in chunks and touched subjects are flushed in groups.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::utility::observation::{AttributionLevel, Observation, validate_observation};
use crate::utility::reducer::{
    self, MAX_CONFLICT_FINGERPRINTS, MAX_OBSERVATIONS, MAX_REJECTIONS, MAX_SUBJECTS,
    ProjectionRequest, ReducerContext,
};
use crate::wire::digest;
use crate::wire::json::{self, DumpOptions, Value};

use super::packets::{self, Refusal};
use super::{
    BatchRow, ConflictRow, Counters, DeliveryRow, HISTORY_PER_SUBJECT, LedgerBackend, LedgerError,
    LedgerResult, ObservationKey, ObservationRow, PartitionKey, PartitionRow, SubjectKey,
    SubjectRow, order_key_text, order_prefix, split_order_key,
};
use crate::utility::observation::{EvidenceBasis, UtilityLabel};
use crate::utility::reducer::{Review, SubjectState, SummaryPair};
use crate::wire::pyfmt::{FloatBuf, float_repr_in};

/// Valid deliveries handled per storage round (and per hand-over from the validating
/// thread).
const CHUNK: usize = 1024;
/// Deliveries classified and aggregated together (see [`aggregate_run`]); their
/// touched subjects are recomputed together, right after.
const RUN: usize = 65536;
/// Chunks of records handed to the validating thread ahead of the writer.
const PIPELINE_DEPTH: usize = 2;

/// Compact JSON in insertion order (stored subject state, export lines).
pub const COMPACT: DumpOptions = DumpOptions {
    indent: None,
    item_sep: ",",
    key_sep: ":",
    sort_keys: false,
    ensure_ascii: false,
};

/// A small multiply-rotate hasher (FxHash's scheme) for the append's internal maps,
/// whose keys are ids and numbers: SipHash's DoS resistance buys nothing there, and no
/// output ever depends on a map's iteration order (changed rows are sorted by key).
#[derive(Default, Clone, Copy)]
struct FastHasher(u64);

const FAST_HASH_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FAST_HASH_SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 59));
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map of the append's working state, hashed with [`FastHasher`].
type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// One record of an append input.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// The bytes of one delivery and the line it starts on.
    Item { line: u64, bytes: Vec<u8> },
    /// A record refused before parsing (too large).
    Refused {
        line: u64,
        reason_code: &'static str,
        error: String,
    },
}

/// What an append did.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendReport {
    pub batch: BatchRow,
    /// The first [`packets::MAX_REFUSALS`] refusals.
    pub refusals: Vec<Refusal>,
    pub high_water: i64,
    pub backend: &'static str,
}

/// A validated delivery, made ready on the validating thread: its storage row and its
/// staged form need only their sequence, batch and partition from the writer.
struct Prepared {
    /// What the row leaves of the observation: its partition fields.
    observation: Observation,
    /// [`PartitionKey::hash_of`] the observation.
    partition_hash: u64,
    row: DeliveryRow,
    staged: Staged,
}

/// Parses and validates one delivery with the observation validator.
pub fn prepare_delivery(bytes: &[u8]) -> Result<Observation, (&'static str, String)> {
    let malformed = "observation_malformed";
    let text = json::decode_utf8(bytes).map_err(|e| (malformed, e.message))?;
    let value = json::parse(text).map_err(|e| (malformed, e.message))?;
    if value.as_object().is_none() {
        return Err((malformed, "observation must be an object".into()));
    }
    let observation = validate_observation(&value).map_err(|e| (e.reason.code(), e.message))?;
    // This port's stricter public-safe rule: the ledger is ours, not the reference's.
    observation
        .credential_free("observation")
        .map_err(|e| (NOT_PUBLIC_SAFE, e.0))?;
    Ok(observation)
}

/// The refusal reason of a delivery whose text looks like it holds a credential.
pub const NOT_PUBLIC_SAFE: &str = "observation_not_public_safe";

struct Aggregate {
    /// Its `fingerprints` list every version once the id conflicts.
    row: ObservationRow,
    dirty: bool,
}

impl Aggregate {
    /// True when a delivery with this fingerprint was stored under the id.
    fn knows(&self, fingerprint: &str) -> bool {
        self.row.fingerprint == fingerprint
            || self.row.fingerprints.iter().any(|f| f == fingerprint)
    }
}

struct AppendState {
    high_water: i64,
    batch: BatchRow,
    /// Resolved partitions by [`PartitionKey::hash_of`] (colliding keys share a list).
    partitions: FastMap<u64, Vec<(PartitionKey, i64)>>,
    deltas: BTreeMap<i64, Counters>,
    /// Subjects to recompute, with their sorted digests joined by `,`.
    touched: BTreeMap<SubjectKey, String>,
    refusals: Vec<Refusal>,
    /// Each resolved partition's latest order key, as this batch changes it.
    latest: FastMap<i64, String>,
    latest_changed: BTreeSet<i64>,
    /// Partitions whose latest subject lost its latest observation: read them again.
    latest_rescan: BTreeSet<i64>,
    /// Stored deliveries waiting for their aggregate run, in ledger order.
    staged: Vec<Staged>,
    /// Where written chunks go to be freed, off the writing thread.
    garbage: Option<std::sync::mpsc::Sender<Garbage>>,
}

/// What a written chunk leaves behind, freed by the dropping thread (the writer is the
/// append's bottleneck; freeing a chunk's many small strings is not its job).
type Garbage = (Vec<Observation>, Vec<DeliveryRow>, Vec<ObservationRow>);

impl AppendState {
    fn refuse(&mut self, line: u64, reason_code: &'static str, error: String) {
        self.batch.refused += 1;
        if self.refusals.len() < packets::MAX_REFUSALS {
            self.refusals.push(Refusal {
                line,
                reason_code,
                error,
            });
        }
    }

    fn cached_partition(&self, hash: u64, observation: &Observation) -> Option<i64> {
        self.partitions
            .get(&hash)
            .and_then(|list| list.iter().find(|(k, _)| k.holds(observation)))
            .map(|found| found.1)
    }

    /// The partition ids of a chunk's deliveries: cached ones, then the others read in
    /// one round, then the missing ones created.
    fn partition_ids(
        &mut self,
        backend: &mut dyn LedgerBackend,
        pending: &[Prepared],
    ) -> LedgerResult<Vec<i64>> {
        let mut unknown: Vec<PartitionKey> = Vec::new();
        for p in pending {
            if self
                .cached_partition(p.partition_hash, &p.observation)
                .is_none()
                && !unknown.iter().any(|k| k.holds(&p.observation))
            {
                unknown.push(PartitionKey::of(&p.observation));
            }
        }
        if !unknown.is_empty() {
            let found = backend.find_partitions(&unknown)?;
            for (key, row) in unknown.into_iter().zip(found) {
                let (id, latest) = match row {
                    Some(row) => (row.partition_id, row.latest_key),
                    None => (backend.insert_partition(&key)?, String::new()),
                };
                self.latest.insert(id, latest);
                let hash = PartitionKey::hash_of_key(&key);
                self.partitions.entry(hash).or_default().push((key, id));
            }
        }
        pending
            .iter()
            .map(|p| {
                self.cached_partition(p.partition_hash, &p.observation)
                    .ok_or_else(|| LedgerError::Storage("a partition was not resolved".into()))
            })
            .collect()
    }
}

/// Reads records on the calling thread and hands them, [`CHUNK`] at a time, to a
/// validating thread; validated chunks come back in input order. Parsing, validation
/// and hashing thus run beside the storage writes (and, before the write lock is
/// taken, beside another appender's transaction).
struct Pipeline<'r> {
    records: &'r mut dyn Iterator<Item = LedgerResult<Record>>,
    to_worker: Option<std::sync::mpsc::SyncSender<Vec<Record>>>,
    from_worker: std::sync::mpsc::Receiver<Intake>,
    garbage: Option<std::sync::mpsc::Sender<Garbage>>,
    in_flight: usize,
    ended: bool,
    /// A failure of the input itself (the whole append is refused).
    failed: Option<LedgerError>,
}

impl Pipeline<'_> {
    /// Reads and sends chunks until [`PIPELINE_DEPTH`] are in flight or the input ends.
    fn feed(&mut self) {
        while self.in_flight < PIPELINE_DEPTH && !self.ended {
            let mut chunk = Vec::with_capacity(CHUNK);
            while chunk.len() < CHUNK {
                match self.records.next() {
                    None => {
                        self.ended = true;
                        break;
                    }
                    Some(Ok(record)) => chunk.push(record),
                    Some(Err(err)) => {
                        self.ended = true;
                        self.failed = Some(err);
                        break;
                    }
                }
            }
            if self.failed.is_some() {
                return;
            }
            if chunk.is_empty() {
                break;
            }
            let sent = self
                .to_worker
                .as_ref()
                .is_some_and(|tx| tx.send(chunk).is_ok());
            if !sent {
                self.ended = true;
                self.failed = Some(LedgerError::Storage("the validating thread stopped".into()));
                return;
            }
            self.in_flight += 1;
        }
        if self.ended {
            // No more input: let the worker finish once its queue is empty.
            self.to_worker = None;
        }
    }

    /// The next validated chunk in input order; `None` when the input is exhausted.
    fn next(&mut self) -> LedgerResult<Option<Intake>> {
        self.feed();
        if let Some(err) = self.failed.take() {
            return Err(err);
        }
        if self.in_flight == 0 {
            return Ok(None);
        }
        let intake = self
            .from_worker
            .recv()
            .map_err(|_| LedgerError::Storage("the validating thread stopped".into()))?;
        self.in_flight -= 1;
        // Keep the worker busy while the caller writes this chunk.
        self.feed();
        Ok(Some(intake))
    }
}

/// Appends every record as one batch: validated deliveries are stored, refused ones
/// are reported and never stored. The batch commits as a whole or not at all.
pub fn append(
    backend: &mut dyn LedgerBackend,
    records: &mut dyn Iterator<Item = LedgerResult<Record>>,
) -> LedgerResult<AppendReport> {
    std::thread::scope(|scope| {
        let (to_worker, worker_rx) = std::sync::mpsc::sync_channel::<Vec<Record>>(PIPELINE_DEPTH);
        let (worker_tx, from_worker) = std::sync::mpsc::sync_channel::<Intake>(PIPELINE_DEPTH);
        let (garbage, dropper_rx) = std::sync::mpsc::channel::<Garbage>();
        // Without these threads (the system refused them) the channels close at once
        // and the append fails with a storage error; nothing is written.
        let _ = std::thread::Builder::new()
            .name("ledger-drop".into())
            .spawn_scoped(scope, move || {
                for garbage in dropper_rx {
                    drop(garbage);
                }
            });
        let _ = std::thread::Builder::new()
            .name("ledger-validate".into())
            .spawn_scoped(scope, move || {
                for chunk in worker_rx {
                    let mut intake = Intake::default();
                    for record in chunk {
                        intake.take(record);
                    }
                    if worker_tx.send(intake).is_err() {
                        break;
                    }
                }
            });
        let mut pipeline = Pipeline {
            records,
            to_worker: Some(to_worker),
            from_worker,
            garbage: Some(garbage),
            in_flight: 0,
            ended: false,
            failed: None,
        };
        let result = append_pipelined(backend, &mut pipeline);
        // Dropping the pipeline closes both channels: the worker ends.
        drop(pipeline);
        result
    })
}

fn append_pipelined(
    backend: &mut dyn LedgerBackend,
    pipeline: &mut Pipeline<'_>,
) -> LedgerResult<AppendReport> {
    // Validate the head of the input before taking the write lock, so that concurrent
    // appenders validate in parallel and hold the lock only to write.
    let mut head = Vec::new();
    let mut prepared = 0;
    while prepared < PREVALIDATED {
        match pipeline.next()? {
            None => break,
            Some(intake) => {
                prepared += intake.prepared.len();
                head.push(intake);
            }
        }
    }
    let result =
        backend
            .begin_write()
            .and_then(|()| match append_in_transaction(backend, head, pipeline) {
                Ok(report) => {
                    backend.commit()?;
                    Ok(report)
                }
                Err(err) => {
                    backend.rollback();
                    Err(err)
                }
            });
    result.map_err(|err| match err {
        LedgerError::Damaged { detail, .. } => LedgerError::Damaged {
            detail,
            nothing_appended: true,
        },
        other => other,
    })
}

/// Deliveries validated at most before the write lock is taken.
const PREVALIDATED: usize = 4096;

/// Records read and validated, not yet written.
#[derive(Default)]
struct Intake {
    prepared: Vec<Prepared>,
    received: i64,
    refused: Vec<(u64, &'static str, String)>,
}

impl Intake {
    fn take(&mut self, record: Record) {
        self.received += 1;
        match record {
            Record::Refused {
                line,
                reason_code,
                error,
            } => self.refused.push((line, reason_code, error)),
            Record::Item { line, bytes } => match prepare_delivery(&bytes) {
                Ok(mut observation) => {
                    let fingerprint = observation.fingerprint();
                    let subject_id = reducer::subject_id(&observation);
                    let order = order_prefix(observation.created_instant, &observation.created_at);
                    let partition_hash = PartitionKey::hash_of(&observation);
                    let digests = observation.memory_ref_digests.join(",");
                    let row = DeliveryRow::take_from(&mut observation, 0, 0, 0);
                    let staged = Staged {
                        pid: 0,
                        seq: 0,
                        observation_id: PackedId::of(&row.observation_id),
                        subject_id: PackedId::of(&subject_id),
                        fingerprint: PackedId::of(&fingerprint),
                        order,
                        utility_label: observation.utility_label,
                        evidence_basis: observation.evidence_basis,
                        confidence: observation.confidence,
                        digests,
                    };
                    self.prepared.push(Prepared {
                        observation,
                        partition_hash,
                        row,
                        staged,
                    });
                }
                Err((code, message)) => self.refused.push((line, code, message)),
            },
        }
    }
}

fn append_in_transaction(
    backend: &mut dyn LedgerBackend,
    head: Vec<Intake>,
    pipeline: &mut Pipeline<'_>,
) -> LedgerResult<AppendReport> {
    let mut state = AppendState {
        high_water: backend.high_water()?,
        batch: BatchRow {
            batch_id: backend.last_batch_id()? + 1,
            ..BatchRow::default()
        },
        partitions: FastMap::default(),
        deltas: BTreeMap::new(),
        touched: BTreeMap::new(),
        refusals: Vec::new(),
        latest: FastMap::default(),
        latest_changed: BTreeSet::new(),
        latest_rescan: BTreeSet::new(),
        garbage: pipeline.garbage.take(),
        staged: Vec::with_capacity(RUN + CHUNK),
    };
    let mut head = head.into_iter();
    loop {
        let intake = match head.next() {
            Some(intake) => intake,
            None => match pipeline.next()? {
                Some(intake) => intake,
                None => break,
            },
        };
        let Intake {
            mut prepared,
            received,
            refused,
        } = intake;
        state.batch.received += received;
        for (line, code, error) in refused {
            state.refuse(line, code, error);
        }
        process_chunk(backend, &mut state, &mut prepared)?;
    }
    aggregate_run(backend, &mut state)?;
    let deltas: Vec<(i64, Counters)> = state
        .deltas
        .iter()
        .filter(|(_, d)| !d.is_zero())
        .map(|(id, d)| (*id, *d))
        .collect();
    backend.add_counters(&deltas)?;
    for pid in std::mem::take(&mut state.latest_rescan) {
        let key = backend.scan_latest(pid)?.unwrap_or_default();
        state.latest.insert(pid, key);
        state.latest_changed.insert(pid);
    }
    let latest: Vec<(i64, String)> = state
        .latest_changed
        .iter()
        .map(|pid| (*pid, state.latest.get(pid).cloned().unwrap_or_default()))
        .collect();
    backend.set_latest(&latest)?;
    if state.batch.first_seq > 0 {
        state.batch.last_seq = state.high_water;
    }
    backend.record_batch(&state.batch)?;
    Ok(AppendReport {
        batch: state.batch,
        refusals: state.refusals,
        high_water: state.high_water,
        backend: backend.backend_name(),
    })
}

/// The id prefixes held packed while staged, in text order (so that packed ids of one
/// kind order as their text does).
const PACKED_PREFIXES: [&str; 5] = ["mui_", "mul_", "muo_", "muof_", "mus_"];

/// An identifier held compactly while staged (a run holds tens of thousands): a known
/// prefix and 64 lowercase hex digits as 32 bytes, anything else as its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum PackedId {
    Hex(u8, [u8; 32]),
    Text(Box<str>),
}

impl PackedId {
    fn of(text: &str) -> PackedId {
        let bytes = text.as_bytes();
        // The tags index PACKED_PREFIXES.
        let (tag, digits) = match bytes.get(..4) {
            Some(b"mui_") => (0u8, &bytes[4..]),
            Some(b"mul_") => (1, &bytes[4..]),
            Some(b"muo_") => (2, &bytes[4..]),
            Some(b"muof") if bytes.get(4) == Some(&b'_') => (3, &bytes[5..]),
            Some(b"mus_") => (4, &bytes[4..]),
            _ => return PackedId::Text(text.into()),
        };
        let Some(packed) = digest::decode_hex32(digits) else {
            return PackedId::Text(text.into());
        };
        PackedId::Hex(tag, packed)
    }

    fn text(&self) -> String {
        match self {
            PackedId::Text(text) => text.to_string(),
            PackedId::Hex(tag, bytes) => {
                let prefix = PACKED_PREFIXES
                    .get(usize::from(*tag))
                    .copied()
                    .unwrap_or("");
                let mut out = String::with_capacity(prefix.len() + 64);
                out.push_str(prefix);
                digest::push_hex(&mut out, bytes);
                out
            }
        }
    }
}

/// A stored delivery waiting for its aggregate run: what classification and the
/// aggregate row need, without the rest of the observation.
struct Staged {
    pid: i64,
    seq: i64,
    observation_id: PackedId,
    subject_id: PackedId,
    fingerprint: PackedId,
    order: String,
    utility_label: UtilityLabel,
    evidence_basis: EvidenceBasis,
    confidence: f64,
    /// Sorted digests joined by `,`.
    digests: String,
}

/// Stores a chunk's deliveries (in ledger order, at the end of the `deliveries` table)
/// and stages them for the next aggregate run.
fn process_chunk(
    backend: &mut dyn LedgerBackend,
    state: &mut AppendState,
    pending: &mut Vec<Prepared>,
) -> LedgerResult<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let partition_ids = state.partition_ids(backend, pending)?;
    let mut deliveries = Vec::with_capacity(pending.len());
    let mut spent = Vec::with_capacity(pending.len());
    for (p, pid) in pending.drain(..).zip(partition_ids) {
        state.high_water += 1;
        let seq = state.high_water;
        if state.batch.first_seq == 0 {
            state.batch.first_seq = seq;
        }
        let Prepared {
            observation,
            mut row,
            mut staged,
            ..
        } = p;
        staged.pid = pid;
        staged.seq = seq;
        state.staged.push(staged);
        row.seq = seq;
        row.batch_id = state.batch.batch_id;
        row.partition_id = pid;
        deliveries.push(row);
        spent.push(observation);
    }
    backend.write_chunk(&deliveries, &[], &[])?;
    if let Some(garbage) = &state.garbage {
        // A stopped dropping thread only means the chunk is freed here.
        let _ = garbage.send((spent, deliveries, Vec::new()));
    }
    if state.staged.len() >= RUN {
        aggregate_run(backend, state)?;
    }
    Ok(())
}

/// Aggregates the staged deliveries, a window of subjects at a time in key order
/// (partition, subject, observation): a window's aggregates are read, its deliveries
/// classified (each id's in ledger order: a delivery's class depends only on the earlier
/// deliveries of its id), its changed aggregates written and its touched subjects
/// recomputed while their pages are still cached. A large run thus visits each storage
/// page about once instead of once per delivery.
fn aggregate_run(backend: &mut dyn LedgerBackend, state: &mut AppendState) -> LedgerResult<()> {
    let mut staged_run = std::mem::take(&mut state.staged);
    // References are sorted, not the (large) staged deliveries. Stable: each id's
    // deliveries stay in ledger order.
    let mut staged: Vec<&Staged> = staged_run.iter().collect();
    staged.sort_by(|a, b| {
        (a.pid, &a.subject_id, &a.observation_id).cmp(&(b.pid, &b.subject_id, &b.observation_id))
    });
    let window = backend.subject_window().max(1);
    let mut start = 0;
    while start < staged.len() {
        let mut end = start;
        let mut subjects = 0;
        while end < staged.len() {
            if end == start
                || staged[end].pid != staged[end - 1].pid
                || staged[end].subject_id != staged[end - 1].subject_id
            {
                if subjects == window {
                    break;
                }
                subjects += 1;
            }
            end += 1;
        }
        aggregate_window(backend, state, &staged[start..end])?;
        flush_subjects(backend, state)?;
        start = end;
    }
    // The run's buffer is kept for the next run: a second one would double its resident
    // memory.
    drop(staged);
    staged_run.clear();
    state.staged = staged_run;
    Ok(())
}

/// Classifies one window of staged deliveries (sorted by key, each id's in ledger order)
/// and writes the changed aggregates; touched subjects are left in `state.touched`.
fn aggregate_window(
    backend: &mut dyn LedgerBackend,
    state: &mut AppendState,
    staged: &[&Staged],
) -> LedgerResult<()> {
    // Sorted by key: an id's repeated deliveries are adjacent, and each key is spelled
    // out once.
    let keys: Vec<ObservationKey> = staged
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            i.checked_sub(1)
                .and_then(|prev| staged.get(prev))
                .is_none_or(|q| {
                    (q.pid, &q.subject_id, &q.observation_id)
                        != (p.pid, &p.subject_id, &p.observation_id)
                })
        })
        .map(|(_, p)| (p.pid, p.subject_id.text(), p.observation_id.text()))
        .collect();
    let mut aggregates: FastMap<String, Aggregate> = backend
        .load_observations(&keys)?
        .into_iter()
        .map(|row| (row.observation_id.clone(), Aggregate { row, dirty: false }))
        .collect();
    drop(keys);
    let mut new_versions: Vec<(String, String)> = Vec::new();
    for p in staged {
        let pid = p.pid;
        let seq = p.seq;
        let delta = state.deltas.entry(pid).or_default();
        delta.deliveries += 1;
        let id = p.observation_id.text();
        let fingerprint = p.fingerprint.text();
        let mut touch = false;
        match aggregates.get_mut(&id) {
            None => {
                state.batch.appended += 1;
                delta.accepted += 1;
                touch = true;
                aggregates.insert(
                    id.clone(),
                    Aggregate {
                        row: ObservationRow {
                            observation_id: id,
                            partition_id: pid,
                            subject_id: p.subject_id.text(),
                            version_count: 1,
                            delivery_count: 1,
                            fingerprint,
                            rep_seq: seq,
                            rep_order: p.order.clone(),
                            fingerprints: Vec::new(),
                            utility_label: p.utility_label,
                            evidence_basis: p.evidence_basis,
                            confidence: p.confidence,
                        },
                        dirty: true,
                    },
                );
            }
            Some(agg) if agg.knows(&fingerprint) => {
                state.batch.duplicate += 1;
                delta.duplicate += 1;
                agg.dirty = true;
                agg.row.delivery_count += 1;
                if fingerprint == agg.row.fingerprint && p.order < agg.row.rep_order {
                    agg.row.rep_seq = seq;
                    agg.row.rep_order = p.order.clone();
                    touch = agg.row.version_count == 1;
                }
                if agg.row.version_count > 1 {
                    delta.rejected += 1;
                }
            }
            Some(agg) => {
                state.batch.conflicting += 1;
                agg.dirty = true;
                if agg.row.version_count == 1 {
                    delta.accepted -= 1;
                    delta.conflicting += 1;
                    delta.rejected += agg.row.delivery_count + 1;
                    new_versions.push((id.clone(), agg.row.fingerprint.clone()));
                    agg.row.fingerprints.push(agg.row.fingerprint.clone());
                    touch = true;
                } else {
                    delta.rejected += 1;
                }
                new_versions.push((id.clone(), fingerprint.clone()));
                agg.row.fingerprints.push(fingerprint);
                agg.row.fingerprints.sort();
                agg.row.version_count += 1;
                agg.row.delivery_count += 1;
            }
        }
        if touch {
            // An id belongs to one subject: the subject of this delivery.
            let key = (pid, p.subject_id.text());
            state
                .touched
                .entry(key)
                .or_insert_with(|| p.digests.clone());
        }
    }
    let mut changed: Vec<ObservationRow> = aggregates
        .into_values()
        .filter(|a| a.dirty)
        .map(|a| a.row)
        .collect();
    changed.sort_by(|a, b| {
        (a.partition_id, &a.subject_id, &a.observation_id).cmp(&(
            b.partition_id,
            &b.subject_id,
            &b.observation_id,
        ))
    });
    new_versions.sort();
    backend.write_chunk(&[], &changed, &new_versions)?;
    if let Some(garbage) = &state.garbage {
        let _ = garbage.send((Vec::new(), Vec::new(), changed));
    }
    Ok(())
}

/// The attribution level a subject id names (`mui_`, `mus_`, `mul_`).
pub fn subject_level(subject_id: &str) -> Option<AttributionLevel> {
    match subject_id.get(..4)? {
        "mui_" => Some(AttributionLevel::Item),
        "mus_" => Some(AttributionLevel::Set),
        "mul_" => Some(AttributionLevel::None),
        _ => None,
    }
}

/// The aggregate row a representative delivery stands for, as far as the reducer and
/// the history read it (verify rebuilds subjects from deliveries this way).
pub fn member_of_delivery(row: &DeliveryRow, partition: &PartitionKey) -> Option<ObservationRow> {
    let observation = row.observation(partition)?;
    Some(ObservationRow {
        observation_id: row.observation_id.clone(),
        partition_id: row.partition_id,
        subject_id: String::new(),
        version_count: 1,
        delivery_count: 1,
        fingerprint: String::new(),
        rep_seq: row.seq,
        rep_order: order_prefix(observation.created_instant, &observation.created_at),
        fingerprints: Vec::new(),
        utility_label: observation.utility_label,
        evidence_basis: observation.evidence_basis,
        confidence: observation.confidence,
    })
}

/// The reduced state of one subject from its representative deliveries (in
/// `observation_id` order), or `None` when it has no accepted observation.
pub fn reduce_stored_subject(
    key: &SubjectKey,
    partition: &PartitionKey,
    rows: &[DeliveryRow],
) -> LedgerResult<Option<SubjectRow>> {
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let mut members = Vec::with_capacity(rows.len());
    for row in rows {
        members.push(member_of_delivery(row, partition).ok_or_else(|| {
            LedgerError::Storage(format!("delivery {} is not a valid observation", row.seq))
        })?);
    }
    reduce_members(key, &first.memory_ref_digests, &members)
}

/// The reduced state of one subject from the aggregates of its accepted observations
/// (in `observation_id` order; `digests` its sorted digests joined by `,`), or `None`
/// when it has none. The rules are [`reducer::reduce_subject`]'s, on the inputs it reads.
pub fn reduce_members(
    key: &SubjectKey,
    digests: &str,
    members: &[ObservationRow],
) -> LedgerResult<Option<SubjectRow>> {
    if members.is_empty() {
        return Ok(None);
    }
    let level = subject_level(&key.1)
        .ok_or_else(|| LedgerError::Storage(format!("subject id {} is damaged", key.1)))?;
    let mut observations = Vec::with_capacity(members.len());
    for m in members {
        observations.push(m.reducer_input(level).ok_or_else(|| {
            LedgerError::Storage(format!("observation {} is damaged", m.observation_id))
        })?);
    }
    let digests: Vec<String> = digests.split(',').map(str::to_owned).collect();
    let refs: Vec<&Observation> = observations.iter().collect();
    let state = reducer::reduce_subject(&key.1, level, &digests, &refs);
    let mut order: Vec<usize> = (0..observations.len()).collect();
    order.sort_by(|&a, &b| {
        observations[a]
            .order_key()
            .cmp(&observations[b].order_key())
            .then(members[a].rep_seq.cmp(&members[b].rep_seq))
    });
    let start = order.len().saturating_sub(HISTORY_PER_SUBJECT);
    let history_seqs: Vec<i64> = order[start..].iter().map(|&i| members[i].rep_seq).collect();
    let last = order
        .last()
        .map(|&i| order_key_text(&observations[i]))
        .unwrap_or_default();
    Ok(Some(SubjectRow {
        partition_id: key.0,
        subject_id: key.1.clone(),
        attribution_level: level.as_str().to_owned(),
        review_state: state.review.state.to_owned(),
        observation_count: i64::try_from(state.observation_count).unwrap_or(i64::MAX),
        last_key: last,
        state: encode_state(&state),
        history_seqs,
    }))
}

const REVIEW_WORDS: [&str; 12] = [
    "none",
    "attenuation_proposed",
    "conflict",
    "unresolved_attribution",
    "attenuate_or_review",
    "manual_review",
    "collect_attribution",
    "negative_utility_requires_review",
    "same_evidence_tier_conflict",
    "strongest_evidence_unknown",
    "attribution_not_established",
    "",
];

fn review_word(text: &str) -> Option<&'static str> {
    REVIEW_WORDS
        .iter()
        .copied()
        .find(|w| *w == text && !w.is_empty())
}

/// The compact stored text of a reduced subject: the values `reduce_subject` computed,
/// `;`-separated (floats in Python repr, which parses back to the same double). The
/// subject id, level, observation count and latest observation live in their own columns.
pub fn encode_state(state: &SubjectState) -> String {
    use std::fmt::Write as _;
    fn push_joined<T: std::fmt::Display>(out: &mut String, items: &[T], sep: char) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(sep);
            }
            // Writing to a String cannot fail.
            let _ = write!(out, "{item}");
        }
    }
    let mut buf = FloatBuf::new();
    let mut out = String::with_capacity(256);
    out.push_str(float_repr_in(state.utility_estimate, &mut buf));
    let _ = write!(
        out,
        ";{};{};",
        state.effective_label.index(),
        state.effective_basis.index()
    );
    out.push_str(float_repr_in(state.confidence, &mut buf));
    out.push(';');
    out.push_str(float_repr_in(state.uncertainty, &mut buf));
    out.push(';');
    push_joined(&mut out, &state.support, ',');
    out.push(';');
    push_joined(&mut out, &state.evidence_strength, ',');
    out.push(';');
    for (i, p) in state.summary.iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        let _ = write!(out, "{}:{}:{}:", p.basis.index(), p.label.index(), p.count);
        out.push_str(float_repr_in(p.combined_confidence, &mut buf));
    }
    out.push(';');
    out.push_str(state.review.state);
    out.push(';');
    out.push_str(state.review.proposed_action);
    out.push(';');
    push_joined(&mut out, &state.review.reason_codes, ',');
    out.push(';');
    push_joined(&mut out, &state.memory_ref_digests, ',');
    out
}

/// The subject a stored row describes (`None` when the row is damaged).
pub fn decode_state(row: &SubjectRow) -> Option<SubjectState> {
    let parts: Vec<&str> = row.state.split(';').collect();
    if parts.len() != 12 {
        return None;
    }
    let float = |t: &str| t.parse::<f64>().ok().filter(|f| f.is_finite());
    let nums = |t: &str| -> Option<Vec<usize>> { t.split(',').map(|n| n.parse().ok()).collect() };
    let label = |t: &str| UtilityLabel::ALL.get(t.parse::<usize>().ok()?).copied();
    let basis = |t: &str| EvidenceBasis::ALL.get(t.parse::<usize>().ok()?).copied();
    let support: [usize; 4] = nums(parts[5])?.try_into().ok()?;
    let strength: [usize; 5] = nums(parts[6])?.try_into().ok()?;
    let mut summary = Vec::new();
    for item in parts[7].split('|').filter(|p| !p.is_empty()) {
        let f: Vec<&str> = item.split(':').collect();
        if f.len() != 4 {
            return None;
        }
        summary.push(SummaryPair {
            basis: basis(f[0])?,
            label: label(f[1])?,
            count: f[2].parse().ok()?,
            combined_confidence: float(f[3])?,
        });
    }
    let mut reason_codes = Vec::new();
    for code in parts[10].split(',').filter(|c| !c.is_empty()) {
        reason_codes.push(review_word(code)?);
    }
    let (last_at, last_id) = split_order_key(&row.last_key)?;
    Some(SubjectState {
        subject_id: row.subject_id.clone(),
        level: AttributionLevel::parse(&row.attribution_level)?,
        memory_ref_digests: parts[11].split(',').map(str::to_owned).collect(),
        utility_estimate: float(parts[0])?,
        effective_label: label(parts[1])?,
        effective_basis: basis(parts[2])?,
        confidence: float(parts[3])?,
        uncertainty: float(parts[4])?,
        support,
        evidence_strength: strength,
        summary,
        observation_count: usize::try_from(row.observation_count).ok()?,
        last_observed_at: last_at,
        last_observation_id: last_id,
        review: Review {
            state: review_word(parts[8])?,
            proposed_action: review_word(parts[9])?,
            reason_codes,
        },
    })
}

/// How a subject row contributes to its partition's subject counters.
fn subject_counters(row: &SubjectRow, sign: i64) -> Counters {
    let mut c = Counters {
        subjects: sign,
        ..Counters::default()
    };
    match row.attribution_level.as_str() {
        "item" => c.item_subjects = sign,
        "set" => c.set_subjects = sign,
        _ => c.none_subjects = sign,
    }
    if row.review_state == "conflict" {
        c.conflict_subjects = sign;
    }
    c
}

fn flush_subjects(backend: &mut dyn LedgerBackend, state: &mut AppendState) -> LedgerResult<()> {
    let touched: Vec<(SubjectKey, String)> =
        std::mem::take(&mut state.touched).into_iter().collect();
    for round in touched.chunks(backend.subject_window().max(1)) {
        let keys: Vec<SubjectKey> = round.iter().map(|(k, _)| k.clone()).collect();
        let olds = backend.load_subjects(&keys)?;
        let members = backend.subject_members(&keys)?;
        let mut puts = Vec::new();
        let mut digests = Vec::new();
        let mut deletes = Vec::new();
        for (((key, subject_digests), old), rows) in round.iter().zip(olds).zip(members) {
            let new = reduce_members(key, subject_digests, &rows)?;
            let (rescan, newer) = {
                let current = state.latest.get(&key.0).map_or("", String::as_str);
                let rescan = old.as_ref().is_some_and(|old| {
                    old.last_key == current
                        && new.as_ref().is_none_or(|n| n.last_key < old.last_key)
                });
                (
                    rescan,
                    new.as_ref().is_some_and(|n| n.last_key.as_str() > current),
                )
            };
            if rescan {
                state.latest_rescan.insert(key.0);
            }
            if let Some(n) = &new
                && newer
            {
                state.latest.insert(key.0, n.last_key.clone());
                state.latest_changed.insert(key.0);
            }
            let delta = state.deltas.entry(key.0).or_default();
            if let Some(old) = &old {
                delta.add(&subject_counters(old, -1));
            }
            match new {
                Some(row) => {
                    delta.add(&subject_counters(&row, 1));
                    if old.is_none() && row.attribution_level != "item" {
                        for d in subject_digests.split(',') {
                            digests.push((key.0, d.to_owned(), key.1.clone()));
                        }
                    }
                    puts.push(row);
                }
                None => {
                    if old.is_some() {
                        deletes.push(key.clone());
                    }
                }
            }
        }
        digests.sort();
        backend.put_subjects(&puts, &digests)?;
        backend.delete_subjects(&deletes)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------

/// A page request of the ledger projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paging {
    pub limit: usize,
    pub after: Option<String>,
}

/// The partition key of a validated reducer context.
pub fn partition_key(context: &ReducerContext) -> PartitionKey {
    PartitionKey {
        agent_id: context.scope.agent_id.to_string(),
        project_id: context.scope.project_id.to_string(),
        corpus_id: context.scope.corpus_id.to_string(),
        surface_id: context.scope.surface_id.to_string(),
        retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone(),
        policy_snapshot_ref: context.policy_snapshot_ref.clone(),
    }
}

fn with_read<T>(
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

/// True when `utility-project` would reduce this partition (not refuse it at a cap).
pub fn within_v0_caps(counters: &Counters) -> bool {
    counters.deliveries <= MAX_OBSERVATIONS as i64 && counters.subjects <= MAX_SUBJECTS as i64
}

/// Projects one partition: the exact `utility-project` packet within the v0 caps (and
/// without paging), else a `memory_utility_ledger_projection_v0` page.
pub fn project(
    backend: &mut dyn LedgerBackend,
    context: &ReducerContext,
    paging: Option<&Paging>,
) -> LedgerResult<Value> {
    with_read(backend, |backend| {
        let key = partition_key(context);
        let partition = backend.find_partition(&key)?;
        let counters = partition.as_ref().map(|p| p.counters).unwrap_or_default();
        if paging.is_none() && within_v0_caps(&counters) {
            let mut values = Vec::new();
            if let Some(p) = &partition {
                backend.partition_deliveries(p.partition_id, &mut |row| {
                    let observation = row.observation(&key).ok_or_else(|| {
                        LedgerError::Storage(format!("delivery {} is damaged", row.seq))
                    })?;
                    values.push(observation.to_value());
                    Ok(())
                })?;
            }
            return v0_projection(context, &values);
        }
        let paging = paging.cloned().unwrap_or(Paging {
            limit: packets::MAX_PAGE,
            after: None,
        });
        ledger_projection(backend, context, partition.as_ref(), &paging)
    })
}

/// `utility-project` over `observations` in this context.
pub fn v0_projection(context: &ReducerContext, observations: &[Value]) -> LedgerResult<Value> {
    let scope = Value::Object(context.scope.to_map());
    let retrieval = Value::from(context.retrieval_snapshot_ref.as_str());
    let policy = Value::from(context.policy_snapshot_ref.as_str());
    let version = Value::from(context.reducer_version.as_str());
    reducer::reduce(&ProjectionRequest {
        observations,
        scope: &scope,
        retrieval_snapshot_ref: &retrieval,
        policy_snapshot_ref: &policy,
        reducer_version: &version,
        previous_projection: None,
    })
    .map_err(|e| LedgerError::Storage(format!("projection failed its readback: {e}")))
}

/// A stored subject with its bounded history, as ledger packets print it.
fn subject_with_history(
    backend: &mut dyn LedgerBackend,
    partition: &PartitionKey,
    row: &SubjectRow,
) -> LedgerResult<Value> {
    let mut value = decode_state(row)
        .ok_or_else(|| {
            LedgerError::Storage(format!("subject {} state is damaged", row.subject_id))
        })?
        .to_value();
    let found = backend.deliveries_by_seq(&row.history_seqs)?;
    let by_seq: HashMap<i64, &DeliveryRow> = found.iter().map(|d| (d.seq, d)).collect();
    let mut history = Vec::with_capacity(row.history_seqs.len());
    for seq in &row.history_seqs {
        let observation = by_seq
            .get(seq)
            .and_then(|d| d.observation(partition))
            .ok_or_else(|| {
                LedgerError::Storage(format!(
                    "history delivery {seq} of {} is missing",
                    row.subject_id
                ))
            })?;
        history.push(reducer::history_entry(&observation, &row.subject_id));
    }
    let truncated = row.observation_count > history.len() as i64;
    if let Value::Object(map) = &mut value {
        map.insert("observation_history", Value::from(history));
        map.insert("observation_history_truncated", truncated);
    }
    Ok(value)
}

fn conflict_record(c: &ConflictRow) -> Value {
    let fingerprints: Vec<&String> = c
        .fingerprints
        .iter()
        .take(MAX_CONFLICT_FINGERPRINTS)
        .collect();
    Value::Object(crate::obj! {
        "observation_id" => c.observation_id.as_str(),
        "reason_codes" => json::str_list(&[reducer::reason::CONFLICTING_DELIVERY]),
        "delivery_count" => c.delivery_count,
        "delivery_fingerprints" => json::str_list(&fingerprints),
        "delivery_fingerprints_truncated" => c.version_count > MAX_CONFLICT_FINGERPRINTS as i64,
        "quarantine_proposed" => true,
        "automatic_deletion" => false,
        "action_authority_granted" => false,
    })
}

fn ledger_projection(
    backend: &mut dyn LedgerBackend,
    context: &ReducerContext,
    partition: Option<&PartitionRow>,
    paging: &Paging,
) -> LedgerResult<Value> {
    let key = partition_key(context);
    let counters = partition.map(|p| p.counters).unwrap_or_default();
    let mut subjects = Vec::new();
    let mut next_after = None;
    let mut conflicts = Vec::new();
    let mut last = None;
    if let Some(p) = partition {
        let after_key = match &paging.after {
            None => None,
            Some(after) => {
                let found = backend.load_subjects(&[(p.partition_id, after.clone())])?;
                match found.into_iter().next().flatten() {
                    Some(row) => Some(row.subject_id),
                    None => {
                        return Err(LedgerError::Request(
                            "--after must name a subject_id of this partition (the next_after of the previous page)"
                                .into(),
                        ));
                    }
                }
            }
        };
        let mut rows =
            backend.subjects_page(p.partition_id, after_key.as_deref(), paging.limit + 1)?;
        if rows.len() > paging.limit {
            rows.truncate(paging.limit);
            next_after = rows.last().map(|r| r.subject_id.clone());
        }
        for row in &rows {
            subjects.push(subject_with_history(backend, &key, row)?);
        }
        conflicts = backend
            .conflicts(p.partition_id, MAX_REJECTIONS)?
            .iter()
            .map(conflict_record)
            .collect();
        last = split_order_key(&p.latest_key);
    } else if paging.after.is_some() {
        return Err(LedgerError::Request(
            "--after must name a subject_id of this partition (the next_after of the previous page)"
                .into(),
        ));
    }
    Ok(packets::ledger_projection(
        context,
        &counters,
        packets::Page {
            limit: paging.limit,
            after: paging.after.clone(),
            next_after,
        },
        subjects,
        conflicts,
        last,
    ))
}

/// The subjects of a partition that contain any of `digests` (sorted, unique).
pub fn subjects(
    backend: &mut dyn LedgerBackend,
    context: &ReducerContext,
    digests: &[String],
) -> LedgerResult<Value> {
    with_read(backend, |backend| {
        let key = partition_key(context);
        let mut found: BTreeMap<String, SubjectRow> = BTreeMap::new();
        let mut matched: BTreeSet<String> = BTreeSet::new();
        if let Some(p) = backend.find_partition(&key)? {
            let item_keys: Vec<SubjectKey> = digests
                .iter()
                .map(|d| {
                    (
                        p.partition_id,
                        reducer::subject_id_for(
                            AttributionLevel::Item,
                            std::slice::from_ref(d),
                            "",
                        ),
                    )
                })
                .collect();
            for (d, row) in digests.iter().zip(backend.load_subjects(&item_keys)?) {
                if let Some(row) = row {
                    matched.insert(d.clone());
                    found.insert(row.subject_id.clone(), row);
                }
            }
            for d in digests {
                for row in backend.subjects_with_digest(p.partition_id, d)? {
                    matched.insert(d.clone());
                    found.insert(row.subject_id.clone(), row);
                }
            }
        }
        let mut values = Vec::with_capacity(found.len());
        for row in found.values() {
            values.push(subject_with_history(backend, &key, row)?);
        }
        let missing: Vec<&String> = digests.iter().filter(|d| !matched.contains(*d)).collect();
        Ok(packets::subject_packet(context, digests, &missing, values))
    })
}

/// Writes every delivery (of one partition, or all after `after_seq`) as a JSON line,
/// in ledger order. Returns the number of lines.
pub fn export(
    backend: &mut dyn LedgerBackend,
    partition: Option<&PartitionKey>,
    after_seq: i64,
    write: &mut dyn FnMut(&str) -> LedgerResult<()>,
) -> LedgerResult<u64> {
    with_read(backend, |backend| {
        let mut count = 0u64;
        let partitions: HashMap<i64, PartitionKey> = backend
            .partitions()?
            .into_iter()
            .map(|p| (p.partition_id, p.key))
            .collect();
        let mut emit = |row: DeliveryRow| -> LedgerResult<()> {
            if row.seq <= after_seq {
                return Ok(());
            }
            let key = partitions.get(&row.partition_id).ok_or_else(|| {
                LedgerError::Storage(format!("delivery {} has no partition", row.seq))
            })?;
            let observation = row
                .observation(key)
                .ok_or_else(|| LedgerError::Storage(format!("delivery {} is damaged", row.seq)))?;
            let mut line = json::dumps(&observation.to_value(), COMPACT);
            line.push('\n');
            count += 1;
            write(&line)
        };
        match partition {
            Some(key) => {
                let id = partitions
                    .iter()
                    .find(|(_, k)| *k == key)
                    .map(|(id, _)| *id);
                if let Some(id) = id {
                    backend.partition_deliveries(id, &mut emit)?;
                }
            }
            None => backend.all_deliveries(after_seq, &mut emit)?,
        }
        Ok(count)
    })
}

/// What `export --salvage` read of a damaged ledger.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SalvageReport {
    /// Deliveries after this sequence were asked for.
    pub after_seq: i64,
    /// Lines written.
    pub exported: u64,
    /// The greatest sequence the ledger records having reached (`None`: unreadable).
    pub high_water: Option<i64>,
    /// The greatest sequence read (`after_seq` when none).
    pub last_read: i64,
    /// Sequences not exported (unreadable, or read but not a valid observation of a
    /// readable partition), in order; at most [`SALVAGE_RANGES`] ranges are kept.
    pub lost: Vec<(i64, i64)>,
    /// Every sequence not exported (exact).
    pub lost_count: i64,
    /// Of those, rows that were read but are not a valid observation of a readable
    /// partition.
    pub damaged_rows: i64,
}

/// Ranges of lost sequences kept in a [`SalvageReport`].
pub const SALVAGE_RANGES: usize = 16;

impl SalvageReport {
    /// True when every sequence from `after_seq + 1` to a readable high water was
    /// exported.
    pub fn complete(&self) -> bool {
        self.high_water.is_some() && self.lost_count == 0
    }

    fn lose(&mut self, first: i64, last: i64) {
        if last < first {
            return;
        }
        self.lost_count += last - first + 1;
        let kept = self.lost.len();
        match self.lost.last_mut() {
            Some(range) if range.1 + 1 == first => range.1 = last,
            _ if kept < SALVAGE_RANGES => self.lost.push((first, last)),
            _ => {}
        }
    }
}

/// Writes every delivery after `after_seq` that can still be read from a damaged ledger,
/// in ledger order, as [`export`] writes lines, and accounts for every sequence it could
/// not export: ledger sequences are dense (1 to the high water), so each one missing
/// from what was read, or read but not a valid observation of a readable partition
/// (re-validated as `verify` does), is lost.
pub fn salvage(
    backend: &mut dyn LedgerBackend,
    after_seq: i64,
    write: &mut dyn FnMut(&str) -> LedgerResult<()>,
) -> LedgerResult<SalvageReport> {
    let after_seq = after_seq.max(0);
    let mut report = SalvageReport {
        after_seq,
        last_read: after_seq,
        ..SalvageReport::default()
    };
    let mut expected = after_seq + 1;
    let high = backend.salvage(after_seq, &mut |row, key| {
        if row.seq < expected {
            return Ok(());
        }
        report.lose(expected, row.seq - 1);
        expected = row.seq + 1;
        report.last_read = row.seq;
        let observation = key
            .and_then(|key| row.observation(key))
            .filter(|o| matches!(validate_observation(&o.to_value()), Ok(again) if again == *o));
        let Some(observation) = observation else {
            report.damaged_rows += 1;
            report.lose(row.seq, row.seq);
            return Ok(());
        };
        let mut line = json::dumps(&observation.to_value(), COMPACT);
        line.push('\n');
        report.exported += 1;
        write(&line)
    })?;
    report.high_water = high;
    if let Some(h) = high {
        report.lose(expected, h);
    }
    Ok(report)
}

/// What verify found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerifyReport {
    pub backend: &'static str,
    pub high_water: i64,
    pub batches: i64,
    pub partitions: i64,
    pub deliveries: i64,
    pub observations: i64,
    pub subjects: i64,
    /// The first difference between stored and recomputed state.
    pub first_difference: Option<String>,
    /// The storage's integrity check failed (then nothing was recomputed and every
    /// count is 0): its first problems.
    pub damage: Option<String>,
}

/// Runs the storage's integrity check, then recomputes every aggregate, subject and
/// counter from the raw deliveries and compares.
pub fn verify(backend: &mut dyn LedgerBackend) -> LedgerResult<VerifyReport> {
    with_read(backend, |backend| {
        if let Some(problem) = backend.integrity_problem()? {
            return Ok(VerifyReport {
                backend: backend.backend_name(),
                damage: Some(problem),
                ..VerifyReport::default()
            });
        }
        verify_in_snapshot(backend)
    })
}

fn verify_in_snapshot(backend: &mut dyn LedgerBackend) -> LedgerResult<VerifyReport> {
    let mut report = VerifyReport {
        backend: backend.backend_name(),
        high_water: backend.high_water()?,
        ..VerifyReport::default()
    };
    let partitions: BTreeMap<i64, PartitionRow> = backend
        .partitions()?
        .into_iter()
        .map(|p| (p.partition_id, p))
        .collect();
    report.partitions = partitions.len() as i64;
    let mut expected: BTreeMap<i64, Counters> = BTreeMap::new();
    let mut diff: Option<String> = None;

    // Phase 1: every observation aggregate from its deliveries.
    backend.verify_observations(&mut |group, stored| {
        if diff.is_some() {
            return Ok(());
        }
        report.deliveries += group.len() as i64;
        if stored.is_some() {
            report.observations += 1;
        }
        diff = check_observation(&partitions, &group, stored.as_ref(), &mut expected);
        Ok(())
    })?;
    // Phase 2: every subject from its accepted observations.
    let mut latest: BTreeMap<i64, String> = BTreeMap::new();
    let mut digest_rows: Vec<(i64, String, String)> = Vec::new();
    if diff.is_none() {
        backend.verify_subjects(&mut |key, rows, stored| {
            if diff.is_some() {
                return Ok(());
            }
            if stored.is_some() {
                report.subjects += 1;
            }
            let Some(partition) = partitions.get(&key.0) else {
                diff = Some(format!("subject {} has no partition", key.1));
                return Ok(());
            };
            let recomputed = match reduce_stored_subject(&key, &partition.key, &rows) {
                Ok(r) => r,
                Err(e) => {
                    diff = Some(e.to_string());
                    return Ok(());
                }
            };
            match (&recomputed, &stored) {
                (None, Some(_)) => {
                    diff = Some(format!("subject {} has no accepted observation", key.1));
                }
                (Some(_), None) => {
                    diff = Some(format!("subject {} is missing", key.1));
                }
                (Some(want), Some(have)) if want != have => {
                    diff = Some(format!(
                        "subject {} differs from its recomputed state{}",
                        key.1,
                        subject_field_difference(want, have)
                    ));
                }
                _ => {}
            }
            if let Some(row) = &recomputed {
                expected
                    .entry(key.0)
                    .or_default()
                    .add(&subject_counters(row, 1));
                let slot = latest.entry(key.0).or_default();
                if row.last_key > *slot {
                    *slot = row.last_key.clone();
                }
                if row.attribution_level != "item"
                    && let Some(first) = rows.first()
                {
                    for d in first.memory_ref_digests.split(',') {
                        digest_rows.push((key.0, key.1.clone(), d.to_owned()));
                    }
                }
            }
            Ok(())
        })?;
    }
    if diff.is_none() {
        digest_rows.sort();
        let stored_digests = backend.all_subject_digests()?;
        if stored_digests != digest_rows {
            diff = Some("the digest index differs from the subjects' digests".into());
        }
    }
    if diff.is_none() {
        for (id, p) in &partitions {
            let want = expected.get(id).copied().unwrap_or_default();
            if want != p.counters {
                diff = Some(format!(
                    "partition {id} counters differ: stored {:?}, recomputed {:?}",
                    p.counters.to_array(),
                    want.to_array()
                ));
                break;
            }
            if p.latest_key != latest.get(id).cloned().unwrap_or_default() {
                diff = Some(format!("partition {id} latest observation differs"));
                break;
            }
        }
    }
    if diff.is_none()
        && let Some(extra) = expected.keys().find(|id| !partitions.contains_key(id))
    {
        diff = Some(format!(
            "deliveries name partition {extra}, which does not exist"
        ));
    }
    let batches = backend.batches()?;
    report.batches = batches.len() as i64;
    if diff.is_none() {
        let stored: i64 = batches
            .iter()
            .map(|b| b.appended + b.duplicate + b.conflicting)
            .sum();
        let max_seq = batches.iter().map(|b| b.last_seq).max().unwrap_or(0);
        if stored != report.deliveries {
            diff = Some(format!(
                "batches account for {stored} deliveries, the ledger holds {}",
                report.deliveries
            ));
        } else if max_seq != report.high_water {
            diff = Some(format!(
                "the last batch ends at sequence {max_seq}, the ledger's high water is {}",
                report.high_water
            ));
        }
    }
    report.first_difference = diff;
    Ok(report)
}

fn subject_field_difference(want: &SubjectRow, have: &SubjectRow) -> String {
    let fields = [
        (
            "attribution_level",
            want.attribution_level != have.attribution_level,
        ),
        ("review_state", want.review_state != have.review_state),
        (
            "observation_count",
            want.observation_count != have.observation_count,
        ),
        ("last_key", want.last_key != have.last_key),
        ("state", want.state != have.state),
        ("history", want.history_seqs != have.history_seqs),
    ];
    fields
        .iter()
        .find(|(_, differs)| *differs)
        .map(|(name, _)| format!(" ({name})"))
        .unwrap_or_default()
}

/// Recomputes one id's aggregate from its deliveries (sequence order) and compares.
fn check_observation(
    partitions: &BTreeMap<i64, PartitionRow>,
    group: &[DeliveryRow],
    stored: Option<&ObservationRow>,
    expected: &mut BTreeMap<i64, Counters>,
) -> Option<String> {
    let Some(first) = group.first() else {
        return stored.map(|s| format!("observation {} has no delivery", s.observation_id));
    };
    let id = &first.observation_id;
    let Some(stored) = stored else {
        return Some(format!("observation {id} has deliveries but no aggregate"));
    };
    let mut fingerprints: Vec<String> = Vec::new();
    let mut rep: Option<(String, i64)> = None;
    let mut subject = String::new();
    let mut inputs: Option<(UtilityLabel, EvidenceBasis, f64)> = None;
    for row in group {
        let Some(partition) = partitions.get(&row.partition_id) else {
            return Some(format!("delivery {} names an unknown partition", row.seq));
        };
        let Some(observation) = row.observation(&partition.key) else {
            return Some(format!("delivery {} is not a valid observation", row.seq));
        };
        match validate_observation(&observation.to_value()) {
            Ok(again) if again == observation => {}
            _ => return Some(format!("delivery {} is not a valid observation", row.seq)),
        }
        if row.partition_id != first.partition_id {
            return Some(format!("observation {id} spans two partitions"));
        }
        let fp = observation.fingerprint();
        if fingerprints.is_empty() || !fingerprints.contains(&fp) {
            fingerprints.push(fp.clone());
        }
        if fp == fingerprints[0] {
            inputs.get_or_insert((
                observation.utility_label,
                observation.evidence_basis,
                observation.confidence,
            ));
            let order = order_prefix(observation.created_instant, &observation.created_at);
            if rep.as_ref().is_none_or(|(o, _)| order < *o) {
                rep = Some((order, row.seq));
            }
        }
        subject = reducer::subject_id(&observation);
    }
    let deliveries = group.len() as i64;
    let versions = fingerprints.len() as i64;
    let delta = expected.entry(first.partition_id).or_default();
    delta.deliveries += deliveries;
    delta.duplicate += deliveries - versions;
    if versions > 1 {
        delta.conflicting += 1;
        delta.rejected += deliveries;
    } else {
        delta.accepted += 1;
    }
    let (rep_order, rep_seq) = rep.unwrap_or_default();
    let (utility_label, evidence_basis, confidence) =
        inputs.unwrap_or((UtilityLabel::Unknown, EvidenceBasis::Insufficient, 0.0));
    let mut sorted = fingerprints.clone();
    sorted.sort();
    let want_fingerprints = if versions > 1 { sorted } else { Vec::new() };
    let want = ObservationRow {
        observation_id: id.clone(),
        partition_id: first.partition_id,
        subject_id: subject,
        version_count: versions,
        delivery_count: deliveries,
        fingerprint: fingerprints[0].clone(),
        rep_seq,
        rep_order,
        fingerprints: want_fingerprints,
        utility_label,
        evidence_basis,
        confidence,
    };
    (want != *stored).then(|| format!("observation {id} aggregate differs from its deliveries"))
}

#[cfg(test)]
mod tests {
    use super::{FastHasher, PackedId};
    use std::hash::Hasher as _;

    #[test]
    fn packed_ids_spell_their_text_back_and_order_as_it_does() {
        let hex: String = (0u8..32)
            .map(|b| format!("{:02x}", b.wrapping_mul(53)))
            .collect();
        let mut ids = Vec::new();
        for prefix in ["mui_", "mul_", "muo_", "muof_", "mus_"] {
            let id = format!("{prefix}{hex}");
            assert!(matches!(PackedId::of(&id), PackedId::Hex(..)), "{id}");
            ids.push(id);
        }
        for odd in [
            format!("muo_{}", hex.to_uppercase()),
            format!("muo_{}g", &hex[..63]),
            format!("muo_{}", &hex[..62]),
            format!("muo_{hex}00"),
            format!("muof{hex}"),
            format!("mux_{hex}"),
            String::new(),
        ] {
            assert!(matches!(PackedId::of(&odd), PackedId::Text(_)), "{odd}");
            ids.push(odd);
        }
        for id in &ids {
            assert_eq!(&PackedId::of(id).text(), id);
        }
        let hexes: Vec<&String> = ids[..5].iter().collect();
        for pair in hexes.windows(2) {
            assert!(PackedId::of(pair[0]) < PackedId::of(pair[1]));
        }
    }

    #[test]
    fn the_fast_hasher_separates_lengths_and_contents() {
        let hash = |bytes: &[u8]| {
            let mut h = FastHasher::default();
            h.write(bytes);
            h.finish()
        };
        assert_ne!(hash(b"muo_a"), hash(b"muo_b"));
        assert_ne!(hash(b"abc"), hash(b"abc\0"));
        assert_ne!(hash(b"01234567"), hash(b"012345670"));
        assert_eq!(hash(b"same"), hash(b"same"));
    }
}
