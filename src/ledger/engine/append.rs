//! The append: one batch, one write transaction. Records are read on a thread of their
//! own and validated on another ([`super::intake`]) while the writer stores the previous
//! chunks and, between them, aggregates the previous run a window at a time
//! ([`super::aggregate`]); the head of the input is
//! validated before the write lock is taken, and the batch commits as a whole or not at
//! all, with its [`Provenance`].

use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

use super::super::backend::LedgerBackend;
use super::super::error::{LedgerError, LedgerResult};
use super::super::packets::AppendReport;
use super::super::provenance::Provenance;
use super::aggregate::{AppendState, CHUNK, Garbage};
use super::intake::{Intake, Record};

/// The records of one append, read on their own thread: an owned source, so that an
/// append that fails early never waits for a read (a terminal or a silent pipe) to end.
pub type Records = Box<dyn Iterator<Item = LedgerResult<Record>> + Send>;

/// Chunks of records read ahead of the validating thread.
const READ_AHEAD: usize = 2;

/// Chunks validated ahead of the writer: deep enough that the writer's bursts (an
/// aggregate run) do not leave the validator idle, shallow enough to bound memory.
const VALIDATE_AHEAD: usize = 8;

/// What the validating thread hands the writer, in input order.
enum Step {
    Chunk(Intake),
    /// The input itself failed (the whole append is refused).
    Failed(LedgerError),
    /// Every record was read and validated.
    End,
}

/// Reads `records` into chunks of [`CHUNK`] on a reading thread; the chunks go to the
/// validating thread. A failure of the input ends the reading.
fn read_chunks(mut records: Records, to_validator: SyncSender<LedgerResult<Vec<Record>>>) {
    loop {
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut failed = None;
        let mut ended = false;
        while chunk.len() < CHUNK {
            match records.next() {
                None => {
                    ended = true;
                    break;
                }
                Some(Ok(record)) => chunk.push(record),
                Some(Err(err)) => {
                    failed = Some(err);
                    break;
                }
            }
        }
        if !chunk.is_empty() && to_validator.send(Ok(chunk)).is_err() {
            return;
        }
        if let Some(err) = failed {
            let _ = to_validator.send(Err(err));
            return;
        }
        if ended {
            return;
        }
    }
}

/// Validates the chunks in the order they were read; ends with [`Step::End`] once the
/// reader has read everything, or [`Step::Failed`] when the input failed.
fn validate_chunks(from_reader: Receiver<LedgerResult<Vec<Record>>>, to_writer: SyncSender<Step>) {
    for chunk in from_reader {
        let step = match chunk {
            Ok(chunk) => {
                let mut intake = Intake::default();
                for record in chunk {
                    intake.take(record);
                }
                Step::Chunk(intake)
            }
            Err(err) => {
                let _ = to_writer.send(Step::Failed(err));
                return;
            }
        };
        if to_writer.send(step).is_err() {
            return;
        }
    }
    let _ = to_writer.send(Step::End);
}

/// What the pipeline has for the writer right now.
enum Poll {
    Chunk(Intake),
    /// Nothing yet: the validating thread is still at work.
    Pending,
    /// Every chunk was taken.
    Ended,
}

/// The writer's end of the pipeline: validated chunks in input order.
struct Pipeline {
    from_validator: Receiver<Step>,
    garbage: Option<std::sync::mpsc::Sender<Garbage>>,
    ended: bool,
}

impl Pipeline {
    /// The next validated chunk in input order; `None` when the input is exhausted.
    fn next(&mut self) -> LedgerResult<Option<Intake>> {
        if self.ended {
            return Ok(None);
        }
        match self.from_validator.recv() {
            Ok(Step::Chunk(intake)) => Ok(Some(intake)),
            Ok(Step::End) => {
                self.ended = true;
                Ok(None)
            }
            Ok(Step::Failed(err)) => {
                self.ended = true;
                Err(err)
            }
            // The threads stopped before the end (or could not be started).
            Err(_) => Err(threads_stopped()),
        }
    }

    /// The next validated chunk if one is ready, without waiting.
    fn poll(&mut self) -> LedgerResult<Poll> {
        if self.ended {
            return Ok(Poll::Ended);
        }
        match self.from_validator.try_recv() {
            Ok(Step::Chunk(intake)) => Ok(Poll::Chunk(intake)),
            Ok(Step::End) => {
                self.ended = true;
                Ok(Poll::Ended)
            }
            Ok(Step::Failed(err)) => {
                self.ended = true;
                Err(err)
            }
            Err(TryRecvError::Empty) => Ok(Poll::Pending),
            Err(TryRecvError::Disconnected) => Err(threads_stopped()),
        }
    }
}

fn threads_stopped() -> LedgerError {
    LedgerError::Storage("the reading or validating thread stopped".into())
}

/// Appends every record as one batch of [`Provenance::Import`] (what
/// `utility-ledger append` stores): [`append_with`] of an import.
pub fn append(backend: &mut dyn LedgerBackend, records: Records) -> LedgerResult<AppendReport> {
    append_with(backend, records, &Provenance::Import)
}

/// Appends every record as one batch that arrived as `provenance`: validated deliveries
/// are stored, refused ones are reported and never stored, and a provenance other than
/// an import is recorded for the batch in the same transaction. The batch commits as a
/// whole or not at all.
pub fn append_with(
    backend: &mut dyn LedgerBackend,
    records: Records,
    provenance: &Provenance,
) -> LedgerResult<AppendReport> {
    let (to_validator, from_reader) = sync_channel(READ_AHEAD);
    let (to_writer, from_validator) = sync_channel(VALIDATE_AHEAD);
    let (garbage, dropper_rx) = std::sync::mpsc::channel::<Garbage>();
    // Threads of their own, not scoped: when the write fails early, the append returns
    // at once; the reader stops at its next chunk (or with the process). Without these
    // threads (the system refused them) the channels close at once and the append fails
    // with a storage error; nothing is written.
    let _ = std::thread::Builder::new()
        .name("ledger-read".into())
        .spawn(move || read_chunks(records, to_validator));
    let _ = std::thread::Builder::new()
        .name("ledger-validate".into())
        .spawn(move || validate_chunks(from_reader, to_writer));
    let _ = std::thread::Builder::new()
        .name("ledger-drop".into())
        .spawn(move || {
            for garbage in dropper_rx {
                drop(garbage);
            }
        });
    let mut pipeline = Pipeline {
        from_validator,
        garbage: Some(garbage),
        ended: false,
    };
    append_pipelined(backend, &mut pipeline, provenance)
}

fn append_pipelined(
    backend: &mut dyn LedgerBackend,
    pipeline: &mut Pipeline,
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
    pipeline: &mut Pipeline,
    provenance: &Provenance,
) -> LedgerResult<AppendReport> {
    let mut state = AppendState::begin(backend, pipeline.garbage.take())?;
    let mut head = head.into_iter();
    loop {
        // While a run is aggregated, a window at a time, the chunks the validating thread
        // hands over are stored in between: it never waits for a whole run.
        let intake = match head.next() {
            Some(intake) => Some(intake),
            None if state.aggregating() => match pipeline.poll()? {
                Poll::Chunk(intake) => Some(intake),
                Poll::Pending => {
                    state.aggregate_step(backend)?;
                    continue;
                }
                Poll::Ended => None,
            },
            None => pipeline.next()?,
        };
        let Some(intake) = intake else { break };
        state.take_chunk(backend, intake)?;
    }
    let report = state.finish(backend)?;
    if provenance.is_attested() {
        backend.record_provenance(report.batch.batch_id, provenance)?;
    }
    Ok(report)
}
