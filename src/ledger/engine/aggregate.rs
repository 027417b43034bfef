//! The append's classification and maintenance, inside its write transaction: each
//! chunk of deliveries is stored and staged; staged deliveries are classified a window of
//! subjects at a time (accepted, duplicate, conflicting), their observation aggregates
//! written and every touched subject recomputed from all of its accepted observations.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash as _, Hasher};

use crate::utility::observation::Observation;
use crate::wire::fast_hash::{FastHasher, FastMap, FastSet};

use super::super::backend::LedgerBackend;
use super::super::error::{LedgerError, LedgerResult};
use super::super::packets::{self, AppendReport, Refusal};
use super::super::rows::{
    BatchRow, Counters, DeliveryRow, ObservationKey, ObservationRow, PartitionKey, PartitionUpdate,
    SubjectKey,
};
use super::intake::{Intake, PackedId, Prepared, Staged};
use super::run::Run;
use super::state::{reduce_members, subject_counters};

/// Valid deliveries handled per storage round (and per hand-over from the validating
/// thread). Tests take tiny chunks and runs, so that their small batches span several
/// runs and a subject meets more than one.
pub(super) const CHUNK: usize = if cfg!(test) { 4 } else { 1024 };
/// Deliveries classified and aggregated together (a [`Run`], stepped by
/// [`AppendState::aggregate_step`]); their touched subjects are recomputed window by
/// window. Each run visits the pages of the keys it touches once, so fewer, larger runs
/// visit fewer pages: a 1M-delivery append took 25 s of CPU with runs of 65,536 and 20 s
/// with runs of 262,144 (peak resident memory 50 MB and 120 MB). The next run is staged
/// while one is aggregated: at most two runs are held (peak 220 MB; runs of 131,072 held
/// 150 MB and took 5-10% longer).
const RUN: usize = if cfg!(test) { 8 } else { 262_144 };

/// A subject's 64-bit [`FastHasher`] hash, for [`AppendState::met`]: two subjects may
/// share one, which only costs a look-up.
fn subject_hash(pid: i64, subject_id: &PackedId) -> u64 {
    let mut hasher = FastHasher::default();
    hasher.write_i64(pid);
    subject_id.hash(&mut hasher);
    hasher.finish()
}

struct Aggregate {
    /// Its `fingerprints` list every version once the id conflicts.
    row: ObservationRow,
    dirty: bool,
    /// The row was read from storage (else this window creates it).
    stored: bool,
}

impl Aggregate {
    /// True when a delivery with this fingerprint was stored under the id.
    fn knows(&self, fingerprint: &str) -> bool {
        self.row.fingerprint == fingerprint
            || self.row.fingerprints.iter().any(|f| f == fingerprint)
    }
}

pub(super) struct AppendState {
    high_water: i64,
    batch: BatchRow,
    /// Resolved partitions by [`PartitionKey::hash_of`] (colliding keys share a list).
    partitions: FastMap<u64, Vec<(PartitionKey, i64)>>,
    deltas: BTreeMap<i64, Counters>,
    /// Subjects to recompute, with their sorted digests joined by `,` and whether they
    /// are new (see [`AppendState::is_new`]).
    touched: BTreeMap<SubjectKey, (String, bool)>,
    /// The partitions this batch created: nothing but this batch's deliveries is stored
    /// under them.
    created: FastSet<i64>,
    /// The [`subject_hash`]es of the subjects of created partitions that an earlier
    /// window of this batch classified (and may have stored).
    met: FastSet<u64>,
    refusals: Vec<Refusal>,
    /// Each resolved partition's latest order key, as this batch changes it.
    latest: FastMap<i64, String>,
    latest_changed: BTreeSet<i64>,
    /// Partitions whose latest subject lost its latest observation: read them again.
    latest_rescan: BTreeSet<i64>,
    /// Stored deliveries waiting for their aggregate run, in ledger order.
    staged: Vec<Staged>,
    /// The run being aggregated, a window per [`AppendState::aggregate_step`].
    run: Option<Run>,
    /// The last finished run's buffer, for the next staging.
    spare: Vec<Staged>,
    /// Where written chunks go to be freed, off the writing thread.
    garbage: Option<std::sync::mpsc::Sender<Garbage>>,
}

/// What a written chunk leaves behind, freed by the dropping thread (the writer is the
/// append's bottleneck; freeing a chunk's many small strings is not its job).
pub(super) type Garbage = (Vec<Observation>, Vec<DeliveryRow>, Vec<ObservationRow>);

impl AppendState {
    /// The state of a new batch after the ledger's last one; written chunks go to
    /// `garbage` to be freed off the writing thread.
    pub(super) fn begin(
        backend: &mut dyn LedgerBackend,
        garbage: Option<std::sync::mpsc::Sender<Garbage>>,
    ) -> LedgerResult<AppendState> {
        Ok(AppendState {
            high_water: backend.high_water()?,
            batch: BatchRow {
                batch_id: backend.last_batch_id()? + 1,
                ..BatchRow::default()
            },
            partitions: FastMap::default(),
            deltas: BTreeMap::new(),
            touched: BTreeMap::new(),
            created: FastSet::default(),
            met: FastSet::default(),
            refusals: Vec::new(),
            latest: FastMap::default(),
            latest_changed: BTreeSet::new(),
            latest_rescan: BTreeSet::new(),
            garbage,
            staged: Vec::with_capacity(RUN + CHUNK),
            run: None,
            spare: Vec::new(),
        })
    }

    /// One validated chunk of the input: its records counted, its refusals kept, its
    /// deliveries stored and staged (a full run starts; the one before it is finished
    /// first).
    pub(super) fn take_chunk(
        &mut self,
        backend: &mut dyn LedgerBackend,
        intake: Intake,
    ) -> LedgerResult<()> {
        let Intake {
            mut prepared,
            received,
            refused,
        } = intake;
        self.batch.received += received;
        for (line, code, error) in refused {
            self.refuse(line, code, error);
        }
        process_chunk(backend, self, &mut prepared)
    }

    /// Ends the batch: the last aggregate run, the partitions' counters and latest
    /// observations, the batch row; what the append did.
    pub(super) fn finish(mut self, backend: &mut dyn LedgerBackend) -> LedgerResult<AppendReport> {
        self.finish_run(backend)?;
        self.start_run();
        self.finish_run(backend)?;
        for pid in std::mem::take(&mut self.latest_rescan) {
            let key = backend.scan_latest(pid)?.unwrap_or_default();
            self.latest.insert(pid, key);
            self.latest_changed.insert(pid);
        }
        fn update(updates: &mut BTreeMap<i64, PartitionUpdate>, pid: i64) -> &mut PartitionUpdate {
            updates.entry(pid).or_insert_with(|| PartitionUpdate {
                partition_id: pid,
                deltas: Counters::default(),
                latest: None,
            })
        }
        let mut updates: BTreeMap<i64, PartitionUpdate> = BTreeMap::new();
        for (pid, d) in self.deltas.iter().filter(|(_, d)| !d.is_zero()) {
            update(&mut updates, *pid).deltas = *d;
        }
        for pid in &self.latest_changed {
            update(&mut updates, *pid).latest =
                Some(self.latest.get(pid).cloned().unwrap_or_default());
        }
        let updates: Vec<PartitionUpdate> = updates.into_values().collect();
        backend.update_partitions(&updates)?;
        if self.batch.first_seq > 0 {
            self.batch.last_seq = self.high_water;
        }
        backend.record_batch(&self.batch)?;
        Ok(AppendReport {
            batch: self.batch,
            refusals: self.refusals,
            high_water: self.high_water,
            backend: backend.backend_name(),
        })
    }

    /// True when nothing of the subject is stored: its partition was created by this
    /// batch and no earlier window met it. Its aggregates and row need no look-up.
    fn is_new(&self, pid: i64, subject_id: &PackedId) -> bool {
        self.created.contains(&pid) && !self.met.contains(&subject_hash(pid, subject_id))
    }

    /// True while a run is being aggregated.
    pub(super) fn aggregating(&self) -> bool {
        self.run.is_some()
    }

    /// Aggregates the next window of the run in progress (nothing when there is none).
    pub(super) fn aggregate_step(&mut self, backend: &mut dyn LedgerBackend) -> LedgerResult<()> {
        let Some(mut run) = self.run.take() else {
            return Ok(());
        };
        let window = run.next_window(backend.subject_window());
        if !window.is_empty() {
            let created = aggregate_window(backend, self, &window)?;
            flush_subjects(backend, self, &created)?;
            for p in &window {
                if self.created.contains(&p.pid) {
                    self.met.insert(subject_hash(p.pid, &p.subject_id));
                }
            }
            if let Some(garbage) = &self.garbage {
                let _ = garbage.send((Vec::new(), Vec::new(), created));
            }
        }
        drop(window);
        if run.is_done() {
            // Kept for the next staging: a new buffer would grow resident memory.
            self.spare = run.into_buffer();
        } else {
            self.run = Some(run);
        }
        Ok(())
    }

    /// Aggregates what is left of the run in progress.
    fn finish_run(&mut self, backend: &mut dyn LedgerBackend) -> LedgerResult<()> {
        while self.aggregating() {
            self.aggregate_step(backend)?;
        }
        Ok(())
    }

    /// Starts a run over the staged deliveries (none is in progress).
    fn start_run(&mut self) {
        if self.staged.is_empty() {
            return;
        }
        let next = if self.spare.capacity() == 0 {
            Vec::with_capacity(RUN + CHUNK)
        } else {
            std::mem::take(&mut self.spare)
        };
        let staged = std::mem::replace(&mut self.staged, next);
        self.run = Some(Run::new(staged));
    }

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
                    None => {
                        let id = backend.insert_partition(&key)?;
                        self.created.insert(id);
                        (id, String::new())
                    }
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
    backend.write_chunk(&deliveries, &[], &[], &[])?;
    if let Some(garbage) = &state.garbage {
        // A stopped dropping thread only means the chunk is freed here.
        let _ = garbage.send((spent, deliveries, Vec::new()));
    }
    if state.staged.len() >= RUN {
        state.finish_run(backend)?;
        state.start_run();
    }
    Ok(())
}

/// Classifies one window of staged deliveries (sorted by key, each id's in ledger order)
/// and writes the changed aggregates; touched subjects are left in `state.touched`.
/// Returns the aggregates the window created, in key order.
fn aggregate_window(
    backend: &mut dyn LedgerBackend,
    state: &mut AppendState,
    staged: &[&Staged],
) -> LedgerResult<Vec<ObservationRow>> {
    let new: Vec<bool> = staged
        .iter()
        .map(|p| state.is_new(p.pid, &p.subject_id))
        .collect();
    // Sorted by key: an id's repeated deliveries are adjacent, and each key is spelled
    // out once. A new subject's are not stored: they are not looked up.
    let keys: Vec<ObservationKey> = staged
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            !new[*i]
                && i.checked_sub(1)
                    .and_then(|prev| staged.get(prev))
                    .is_none_or(|q| {
                        (q.pid, &q.subject_id, &q.observation_id)
                            != (p.pid, &p.subject_id, &p.observation_id)
                    })
        })
        .map(|(_, p)| (p.pid, p.subject_id.text(), p.observation_id.text()))
        .collect();
    // Stored aggregates in key order, as the window's keys are: one walk pairs them.
    let mut loaded = backend.load_observations(&keys)?;
    drop(keys);
    loaded.sort_by(|a, b| {
        (a.partition_id, &a.subject_id, &a.observation_id).cmp(&(
            b.partition_id,
            &b.subject_id,
            &b.observation_id,
        ))
    });
    let mut loaded = loaded.into_iter().peekable();
    let mut created: Vec<ObservationRow> = Vec::new();
    let mut changed: Vec<ObservationRow> = Vec::new();
    let mut new_versions: Vec<(String, String)> = Vec::new();
    let mut start = 0;
    while let Some(&first) = staged.get(start) {
        // One id's deliveries, in ledger order: a delivery's class depends only on the
        // earlier deliveries of its id.
        let end = start
            + staged[start..]
                .iter()
                .take_while(|q| {
                    (q.pid, &q.subject_id, &q.observation_id)
                        == (first.pid, &first.subject_id, &first.observation_id)
                })
                .count();
        let pid = first.pid;
        let id = first.observation_id.text();
        let subject_id = first.subject_id.text();
        let key = (pid, subject_id.as_str(), id.as_str());
        while loaded.peek().is_some_and(|r| {
            (
                r.partition_id,
                r.subject_id.as_str(),
                r.observation_id.as_str(),
            ) < key
        }) {
            loaded.next();
        }
        let mut current = loaded
            .next_if(|r| {
                (
                    r.partition_id,
                    r.subject_id.as_str(),
                    r.observation_id.as_str(),
                ) == key
            })
            .map(|row| Aggregate {
                row,
                dirty: false,
                stored: true,
            });
        let delta = state.deltas.entry(pid).or_default();
        let mut touch = false;
        for p in &staged[start..end] {
            let seq = p.seq;
            delta.deliveries += 1;
            let fingerprint = p.fingerprint.text();
            match &mut current {
                None => {
                    state.batch.appended += 1;
                    delta.accepted += 1;
                    touch = true;
                    current = Some(Aggregate {
                        row: ObservationRow {
                            observation_id: id.clone(),
                            partition_id: pid,
                            subject_id: subject_id.clone(),
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
                        stored: false,
                    });
                }
                Some(agg) if agg.knows(&fingerprint) => {
                    state.batch.duplicate += 1;
                    delta.duplicate += 1;
                    agg.dirty = true;
                    agg.row.delivery_count += 1;
                    if fingerprint == agg.row.fingerprint && p.order < agg.row.rep_order {
                        agg.row.rep_seq = seq;
                        agg.row.rep_order = p.order.clone();
                        touch |= agg.row.version_count == 1;
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
        }
        if touch {
            // An id belongs to one subject: the subject of its deliveries.
            let digests = &first.digests;
            state
                .touched
                .entry((pid, subject_id))
                .or_insert_with(|| (digests.clone(), new[start]));
        }
        match current {
            Some(agg) if !agg.stored => created.push(agg.row),
            Some(agg) if agg.dirty => changed.push(agg.row),
            _ => {}
        }
        start = end;
    }
    new_versions.sort();
    backend.write_chunk(&[], &created, &changed, &new_versions)?;
    if let Some(garbage) = &state.garbage {
        let _ = garbage.send((Vec::new(), Vec::new(), changed));
    }
    Ok(created)
}

/// The accepted aggregates of a new subject among the window's `created` ones (in key
/// order): all of its aggregates are there.
fn new_members<'a>(created: &'a [ObservationRow], key: &SubjectKey) -> Cow<'a, [ObservationRow]> {
    fn of(o: &ObservationRow) -> (i64, &str) {
        (o.partition_id, o.subject_id.as_str())
    }
    let wanted = (key.0, key.1.as_str());
    let start = created.partition_point(|o| of(o) < wanted);
    let end = start + created[start..].partition_point(|o| of(o) == wanted);
    let rows = &created[start..end];
    if rows.iter().all(|o| o.version_count == 1) {
        Cow::Borrowed(rows)
    } else {
        Cow::Owned(
            rows.iter()
                .filter(|o| o.version_count == 1)
                .cloned()
                .collect(),
        )
    }
}

/// Recomputes the touched subjects of a window whose new aggregates are `created` (in
/// key order): a new subject from those, any other from its stored row and members.
fn flush_subjects(
    backend: &mut dyn LedgerBackend,
    state: &mut AppendState,
    created: &[ObservationRow],
) -> LedgerResult<()> {
    let touched: Vec<(SubjectKey, (String, bool))> =
        std::mem::take(&mut state.touched).into_iter().collect();
    for round in touched.chunks(backend.subject_window().max(1)) {
        let keys: Vec<SubjectKey> = round
            .iter()
            .filter(|(_, (_, new))| !new)
            .map(|(k, _)| k.clone())
            .collect();
        let olds = backend.load_subjects(&keys)?;
        // A subject has a row exactly when it has an accepted aggregate: the members of
        // one without a row are among the window's new aggregates, as a new subject's.
        let stored: Vec<SubjectKey> = keys
            .iter()
            .zip(&olds)
            .filter(|(_, old)| old.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        let mut members = backend.subject_members(&stored)?.into_iter();
        let mut olds = olds.into_iter();
        let mut puts = Vec::new();
        let mut replaced = Vec::new();
        let mut digests = Vec::new();
        let mut deletes = Vec::new();
        for (key, (subject_digests, is_new)) in round {
            let (old, rows) = if *is_new {
                (None, new_members(created, key))
            } else {
                let lost = || LedgerError::Storage("a subject was not read back".into());
                match olds.next().ok_or_else(lost)? {
                    None => (None, new_members(created, key)),
                    Some(old) => (Some(old), Cow::Owned(members.next().ok_or_else(lost)?)),
                }
            };
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
                    if old.is_some() {
                        replaced.push(row);
                    } else {
                        puts.push(row);
                    }
                }
                None => {
                    if old.is_some() {
                        deletes.push(key.clone());
                    }
                }
            }
        }
        digests.sort();
        digests.dedup();
        backend.put_subjects(&puts, &replaced, &digests)?;
        backend.delete_subjects(&deletes)?;
    }
    Ok(())
}
