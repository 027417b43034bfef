//! The append: one batch, one write transaction. Records are read on the calling
//! thread and validated on another ([`super::intake`]) while the writer stores and
//! aggregates the previous chunks ([`super::aggregate`]); the head of the input is
//! validated before the write lock is taken, and the batch commits as a whole or not at
//! all, with its [`Provenance`].

use super::super::backend::LedgerBackend;
use super::super::error::{LedgerError, LedgerResult};
use super::super::packets::AppendReport;
use super::super::provenance::Provenance;
use super::aggregate::{AppendState, CHUNK, Garbage};
use super::intake::{Intake, Record};

/// Chunks of records handed to the validating thread ahead of the writer.
const PIPELINE_DEPTH: usize = 2;

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

/// Appends every record as one batch of [`Provenance::Import`] (what
/// `utility-ledger append` stores): [`append_with`] of an import.
pub fn append(
    backend: &mut dyn LedgerBackend,
    records: &mut dyn Iterator<Item = LedgerResult<Record>>,
) -> LedgerResult<AppendReport> {
    append_with(backend, records, &Provenance::Import)
}

/// Appends every record as one batch that arrived as `provenance`: validated deliveries
/// are stored, refused ones are reported and never stored, and a provenance other than
/// an import is recorded for the batch in the same transaction. The batch commits as a
/// whole or not at all.
pub fn append_with(
    backend: &mut dyn LedgerBackend,
    records: &mut dyn Iterator<Item = LedgerResult<Record>>,
    provenance: &Provenance,
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
        let result = append_pipelined(backend, &mut pipeline, provenance);
        // Dropping the pipeline closes both channels: the worker ends.
        drop(pipeline);
        result
    })
}

fn append_pipelined(
    backend: &mut dyn LedgerBackend,
    pipeline: &mut Pipeline<'_>,
    provenance: &Provenance,
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
    let result = backend.begin_write().and_then(|()| {
        match append_in_transaction(backend, head, pipeline, provenance) {
            Ok(report) => {
                backend.commit()?;
                Ok(report)
            }
            Err(err) => {
                backend.rollback();
                Err(err)
            }
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

fn append_in_transaction(
    backend: &mut dyn LedgerBackend,
    head: Vec<Intake>,
    pipeline: &mut Pipeline<'_>,
    provenance: &Provenance,
) -> LedgerResult<AppendReport> {
    let mut state = AppendState::begin(backend, pipeline.garbage.take())?;
    let mut head = head.into_iter();
    loop {
        let intake = match head.next() {
            Some(intake) => intake,
            None => match pipeline.next()? {
                Some(intake) => intake,
                None => break,
            },
        };
        state.take_chunk(backend, intake)?;
    }
    let report = state.finish(backend)?;
    if provenance.is_attested() {
        backend.record_provenance(report.batch.batch_id, provenance)?;
    }
    Ok(report)
}
