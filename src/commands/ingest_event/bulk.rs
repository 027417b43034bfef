//! `ingest-event --input FILE.jsonl` (or `--jsonl`): JSON Lines, one ingest input per
//! line, in one process. Each line runs the same contract as a single `ingest-event`
//! ([`crate::contract::ingest`]: form, route, adapter, guards, exact readback); the route
//! is resolved once. Executed writes to an embedded store go through one
//! [`BulkStore`] per store file, one transaction per batch of `--batch-size` lines; a
//! batch's lines are printed only after its transaction committed, so every printed
//! receipt's record is stored and a killed run leaves the rest of its batch absent.
//! Other providers (OpenViking) are written one event at a time, as a single ingest does.
//!
//! Output is always JSON Lines: per non-blank input line, in order, its receipt
//! (`reward_memory_ingest_receipt_v0`, as a single ingest prints it) or, for a line that
//! was refused, a `reward_memory_ingest_line_refused_v0` line naming its 1-based line
//! number; then one `reward_memory_ingest_bulk_summary_v0` line. Exit 0 when every line
//! was `activated` (with `--execute`) or `planned` (dry run), else 2.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use crate::cli::IngestEventArgs;
use crate::contract::experiment::Resolution;
use crate::contract::ingest::adapters::Mode;
use crate::contract::ingest::core::{self, Prepared};
use crate::contract::ingest::{self, IngestError, Staged};
use crate::error::{Error, Exit};
use crate::io;
use crate::obj;
use crate::provider::embedded::bulk::BulkStore;
use crate::provider::embedded::{self, EmbeddedStore};
use crate::provider::{DefaultFactory, ProviderConfig, ProviderFactory};
use crate::wire::json::{self, Map, Value};

use super::super::context::{Context, Outcome};
use super::super::resolve::{self, InputFile};

/// Schema of the summary line.
pub const SUMMARY_SCHEMA_VERSION: &str = "reward_memory_ingest_bulk_summary_v0";
/// Schema of the line printed for a refused input line.
pub const LINE_REFUSED_SCHEMA_VERSION: &str = "reward_memory_ingest_line_refused_v0";
/// How many line numbers the summary lists of the lines that were not activated.
const LISTED_LINES: usize = 20;

/// A JSON Lines ingest: the input file, the route of the configured form, and the size
/// of a store transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkRequest {
    pub input: InputFile,
    pub goal_id: Option<String>,
    pub agent_id: Option<String>,
    pub execute: bool,
    /// Lines per batch (each batch is one transaction per store).
    pub batch_size: usize,
}

impl From<&IngestEventArgs> for BulkRequest {
    fn from(args: &IngestEventArgs) -> BulkRequest {
        BulkRequest {
            input: InputFile {
                path: args.input.clone(),
                max_bytes: args.input_limit.max_input_bytes,
            },
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            execute: args.execute,
            batch_size: usize::try_from(args.batch_size).unwrap_or(500).max(1),
        }
    }
}

/// True when `--input` is JSON Lines: `--jsonl`, or a file name ending in `.jsonl`.
pub fn is_bulk(args: &IngestEventArgs) -> bool {
    args.jsonl || args.input.ends_with(".jsonl")
}

/// One line's output, kept until its batch committed.
struct Line {
    number: usize,
    /// The receipt, or the refusal packet.
    packet: Map,
    /// The receipt came from a write into a batch store (replaced if the batch fails).
    batched: bool,
}

fn refused(number: usize, status: &str, error: &str) -> Map {
    obj! {
        "ok" => false,
        "schema_version" => LINE_REFUSED_SCHEMA_VERSION,
        "line" => number,
        "status" => status,
        "error" => crate::wire::keys::bound(error).as_ref(),
    }
}

fn status_of(packet: &Map) -> String {
    match packet.get("schema_version").and_then(Value::as_str) {
        Some(LINE_REFUSED_SCHEMA_VERSION) => "refused".to_owned(),
        _ => crate::wire::pyfmt::pystr(packet.get("status")),
    }
}

/// What the summary counts.
#[derive(Default)]
struct Tally {
    lines: usize,
    statuses: BTreeMap<String, usize>,
    written: usize,
    already_stored: usize,
    not_ok: Vec<usize>,
    not_ok_count: usize,
    batches_committed: usize,
    batches_failed: usize,
}

impl Tally {
    fn count(&mut self, line: &Line, ok_status: &str) {
        let status = status_of(&line.packet);
        self.lines += 1;
        if line.packet.get("external_writes_performed") == Some(&Value::Bool(true)) {
            self.written += 1;
        }
        if line.packet.get("deduplicated") == Some(&Value::Bool(true)) {
            self.already_stored += 1;
        }
        if status != ok_status {
            self.not_ok_count += 1;
            if self.not_ok.len() < LISTED_LINES {
                self.not_ok.push(line.number);
            }
        }
        *self.statuses.entry(status).or_default() += 1;
    }

    fn packet(&self, request: &BulkRequest) -> Map {
        let counts: Map = self
            .statuses
            .iter()
            .map(|(status, n)| (status.clone(), Value::from(*n)))
            .collect();
        obj! {
            "ok" => self.not_ok_count == 0 && self.batches_failed == 0,
            "schema_version" => SUMMARY_SCHEMA_VERSION,
            "mode" => if request.execute { "execute" } else { "dry_run" },
            "lines" => self.lines,
            "status_counts" => counts,
            "records_written" => self.written,
            "records_already_stored" => self.already_stored,
            "batch_size" => request.batch_size,
            "batches_committed" => self.batches_committed,
            "batches_failed" => self.batches_failed,
            "not_ok_line_count" => self.not_ok_count,
            "first_not_ok_lines" => Value::from(
                self.not_ok.iter().map(|n| Value::from(*n)).collect::<Vec<_>>(),
            ),
        }
    }
}

/// The batch stores of one run, one per embedded store file (opened on first use).
struct Stores {
    factory: DefaultFactory,
    open: RefCell<Vec<(PathBuf, Option<BulkStore>)>>,
}

impl Stores {
    /// The batch store at `path`, opened on first use (`None` when it cannot be opened:
    /// the event then goes through a single write, which reports why).
    fn with<T>(
        &self,
        store: &EmbeddedStore,
        timeout: Duration,
        f: impl FnOnce(&BulkStore) -> T,
    ) -> Option<T> {
        let mut open = self.open.borrow_mut();
        let index = match open.iter().position(|(p, _)| p == store.path()) {
            Some(index) => index,
            None => {
                open.push((
                    store.path().to_path_buf(),
                    BulkStore::open(store, timeout).ok(),
                ));
                open.len() - 1
            }
        };
        open[index].1.as_ref().map(f)
    }

    /// Commits every store's batch: `Err` with the first failure's code.
    fn commit(&self) -> Result<(), &'static str> {
        let mut first = Ok(());
        for (_, store) in self.open.borrow().iter() {
            if let Some(store) = store
                && let Err(failure) = store.commit()
                && first.is_ok()
            {
                first = Err(failure.code());
            }
        }
        first
    }

    fn close(self) {
        for (_, store) in self.open.into_inner() {
            if let Some(store) = store {
                store.close();
            }
        }
    }
}

/// Runs a JSON Lines ingest; see the module documentation for its output.
pub fn run(request: &BulkRequest, ctx: &Context) -> Result<Outcome, Error> {
    let lines = io::open_lines(&ctx.env, &request.input.path)?;
    let goal_id = request.goal_id.as_deref();
    let agent_id = request.agent_id.as_deref();
    // The route options are checked once, before any line (as a single ingest does).
    let configured = matches!(
        ingest::form(&Map::new(), goal_id, agent_id, request.execute)?,
        ingest::Form::Configured { .. }
    );
    let resolution: Option<Resolution> = match (configured, goal_id, agent_id) {
        (true, Some(goal_id), Some(agent_id)) => {
            let resolution = resolve::experiment(ctx, goal_id, agent_id)?;
            if let Some(problem) = &resolution.problem {
                io::write_stderr_line(&format!("reward-memory: warning: {problem}"));
            }
            Some(resolution)
        }
        _ => None,
    };
    let factory = resolve::provider_factory(ctx);
    if request.execute {
        io::clear_stale_staging(&crate::provider::staging_root(&factory.runtime_root));
    }
    let stores = Stores {
        factory,
        open: RefCell::new(Vec::new()),
    };
    let batched = Cell::new(false);
    let run_write = |prepared: &Prepared| -> Result<Map, IngestError> {
        let config = ProviderConfig::from_binding(&prepared.binding);
        if config.provider == embedded::PROVIDER_ID {
            let store = stores.factory.embedded_store(&config);
            let timeout = Duration::from_secs_f64(
                crate::recall::timeout_seconds(&prepared.binding).clamp(1.0, 120.0),
            );
            if let Some(receipt) =
                stores.with(&store, timeout, |bulk| core::execute(prepared, Ok(bulk)))
            {
                batched.set(true);
                return Ok(receipt?);
            }
        }
        let built = stores.factory.build(&config);
        let provider = built.as_ref().map(|p| p.as_ref()).map_err(Clone::clone);
        Ok(core::execute(prepared, provider)?)
    };
    let mode = if request.execute {
        Mode::Execute(&run_write)
    } else {
        Mode::DryRun
    };
    let ok_status = if request.execute {
        "activated"
    } else {
        "planned"
    };
    let mut tally = Tally::default();
    let mut pending: Vec<Line> = Vec::with_capacity(request.batch_size);
    let progress = io::progress::Progress::counter(lines.size, "ingest-event: bytes");
    // Three threads: one reads and stages the lines (parse, route, adapter, guard,
    // record: all pure), at most STAGED_AHEAD lines ahead; this one writes them in input
    // order and commits each batch; the third prints each committed batch's lines.
    let mut out = std::thread::scope(|scope| -> Result<io::StdoutStream, Error> {
        let (sender, staged) = mpsc::sync_channel(STAGED_AHEAD);
        let stager = Stager {
            goal_id,
            agent_id,
            execute: request.execute,
            resolution: resolution.as_ref(),
            max_bytes: request.input.max_bytes,
            progress: &progress,
        };
        scope.spawn(move || stager.run(lines, &sender));
        let (print, printed) = mpsc::sync_channel::<Vec<Map>>(PRINTED_AHEAD);
        let printer = scope.spawn(move || print_batches(printed));
        // Commits the batch and hands its lines to the printer: false when the printer
        // stopped (its error is returned below).
        let flush = |pending: &mut Vec<Line>, tally: &mut Tally| -> bool {
            let committed = stores.commit();
            match committed {
                Ok(()) => tally.batches_committed += 1,
                Err(_) => tally.batches_failed += 1,
            }
            let mut packets = Vec::with_capacity(pending.len());
            for mut line in pending.drain(..) {
                if let (true, Err(code)) = (line.batched, committed) {
                    line.packet = refused(
                        line.number,
                        "uncommitted",
                        &format!(
                            "the store transaction of this line's batch failed ({code}); nothing of the batch was stored"
                        ),
                    );
                }
                tally.count(&line, ok_status);
                packets.push(line.packet);
            }
            print.send(packets).is_ok()
        };
        let mut printing = true;
        for item in staged {
            let (number, staged) = item?;
            batched.set(false);
            let packet = match staged.and_then(|s| s.finish(&mode).map_err(|e| e.to_string())) {
                Ok(receipt) => receipt,
                Err(message) => refused(number, "refused", &message),
            };
            pending.push(Line {
                number,
                packet,
                batched: batched.get(),
            });
            if pending.len() >= request.batch_size {
                printing = flush(&mut pending, &mut tally);
                if !printing {
                    break;
                }
            }
        }
        if printing && !pending.is_empty() {
            flush(&mut pending, &mut tally);
        }
        drop(print);
        match printer.join() {
            Ok(printed) => printed,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })?;
    stores.close();
    let summary = tally.packet(request);
    let ok = summary.get("ok") == Some(&Value::Bool(true));
    out.write(&json::to_compact_line(&Value::Object(summary)))
        .map_err(Error::Output)?;
    out.finish().map_err(Error::Output)?;
    Ok(Outcome::new(Value::Null, Exit::by_ok(ok)))
}

/// How many committed batches the printer may hold.
const PRINTED_AHEAD: usize = 2;

/// Prints each committed batch's lines as they come, flushed batch by batch (a printed
/// line's record is stored); returns the stream for the summary.
fn print_batches(batches: mpsc::Receiver<Vec<Map>>) -> Result<io::StdoutStream, Error> {
    let mut out = io::StdoutStream::new();
    for batch in batches {
        for packet in batch {
            out.write(&json::to_compact_line(&Value::Object(packet)))
                .map_err(Error::Output)?;
        }
        out.flush().map_err(Error::Output)?;
    }
    Ok(out)
}

/// How many staged lines the staging thread may hold ahead of the writer.
const STAGED_AHEAD: usize = 128;

/// One non-blank input line, staged: its 1-based number and its staged event, or why it
/// was refused. `Err` ends the input (it could not be read).
type StagedLine = Result<(usize, Result<Staged, String>), Error>;

/// The staging side of a JSON Lines ingest: reads the input and stages each line.
struct Stager<'a> {
    goal_id: Option<&'a str>,
    agent_id: Option<&'a str>,
    execute: bool,
    resolution: Option<&'a Resolution>,
    max_bytes: u64,
    progress: &'a io::progress::Progress,
}

impl Stager<'_> {
    /// Sends every non-blank line of `lines`, staged, in order; stops at the first read
    /// error (sent last) or when the writer has gone.
    fn run(&self, mut lines: io::Lines, sender: &mpsc::SyncSender<StagedLine>) {
        let mut number = 0;
        loop {
            let line = match lines.next_line(self.max_bytes) {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(e) => {
                    let _ = sender.send(Err(e.into()));
                    return;
                }
            };
            number += 1;
            let staged = match line {
                io::Line::TooLong { bytes } => {
                    self.progress.inc(bytes + 1);
                    Err(format!(
                        "line is larger than the {}-byte limit ({bytes} bytes); split the event or raise --max-input-bytes",
                        self.max_bytes
                    ))
                }
                io::Line::Text(raw) => {
                    self.progress.inc(raw.len() as u64 + 1);
                    if raw.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    self.stage(&raw)
                }
            };
            if sender.send(Ok((number, staged))).is_err() {
                return;
            }
        }
    }

    /// One line through the single-event contract up to its write: the staged event, or
    /// why it was refused.
    fn stage(&self, raw: &[u8]) -> Result<Staged, String> {
        let source = match io::parse_input_object(raw).map_err(|e| e.to_string())? {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        ingest::form(&source, self.goal_id, self.agent_id, self.execute)
            .map_err(|e| e.to_string())?;
        let plan = ingest::plan_with(&source, self.resolution).map_err(|e| e.to_string())?;
        let staged = ingest::stage(&plan).map_err(|e| e.to_string())?;
        Ok(if self.execute {
            staged.with_readback_request()
        } else {
            staged
        })
    }
}
