//! The shell's file, stream and environment primitives: input documents, standard
//! output, the clock, private files under the runtime root and the trust rule. The
//! storage adapters (providers, the ledger's backends) and [`crate::runtime`] open their
//! own files through these; the contracts never read a file.
//!
//! Input documents are read as bytes, decoded as UTF-8 and parsed with the
//! Python-compatible parser, so that every failure carries the reference's wording
//! (`cannot read input JSON: [Errno 2] No such file or directory: 'x.json'`, Python's
//! codec and decoder messages). Every read is bounded by `--max-input-bytes`: a larger
//! file is refused before it is read and stdin is not read past the limit. Output goes
//! through [`write_stdout`], which ends quietly on a closed pipe. A command that prints a
//! large packet from a large input can read it into an [`InputBuffer`] (huge pages where
//! the system allows) and print into the same memory through [`OutputBuffer`].
//!
//! Staging: a provider whose client only reads files (the `ov` CLI) gets the exact bytes
//! through [`stage_bytes`], in a private directory (0700, file 0600) under the runtime
//! root's staging directory, never under `$TMPDIR`; [`clear_stale_staging`] removes what
//! killed runs left there. The embedded store takes bytes directly and stages nothing.
//!
//! Our own files: [`trust`] decides which files under the runtime root are ours to
//! trust, [`stat_record`] records a SQLite file's stat as our last writer left it.
//! [`progress`] draws progress for long work on a terminal's stderr.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use crate::wire::json::{self, Value};
use crate::wire::pyfmt;

pub mod evaluator;
pub mod progress;
pub mod stat_record;
mod sweep;
pub mod trust;

pub use sweep::{Sweepable, sweep_private_files, sweep_private_files_paced};

/// Failure to read or parse an input document; the text is the reference's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("cannot read input JSON: {0}")]
    Read(String),
    #[error("{0}")]
    Parse(String),
    #[error("input JSON must contain one object")]
    NotObject,
    /// The input is larger than `--max-input-bytes`; nothing past the limit was read.
    #[error(
        "input JSON is larger than the {limit}-byte limit; send a smaller input or raise --max-input-bytes"
    )]
    TooLarge { limit: u64 },
}

/// What the process knows about its surroundings, captured once at start-up.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `LOOPX_REGISTRY`, when set and non-empty.
    pub loopx_registry: Option<String>,
    /// `HOME`, when set.
    pub home: Option<PathBuf>,
    /// The working directory.
    pub cwd: PathBuf,
    /// `REWARD_MEMORY_LEDGER`, when set and non-empty: the utility ledger location.
    pub ledger: Option<String>,
    /// The standard `PG*` variables, defaults for a PostgreSQL ledger URL.
    pub pg: PgEnv,
    /// This binary's own path, when the system tells it (`init` prints commands that
    /// run it).
    pub exe: Option<PathBuf>,
    /// What `-` reads instead of the process's standard input: the document a front end
    /// that owns stdin (the MCP server) hands a command; `None` reads standard input.
    pub stdin: Option<std::sync::Arc<[u8]>>,
}

/// The standard libpq variables, captured at start-up: the defaults of a PostgreSQL
/// ledger URL (the ledger's PostgreSQL backend reads them when it builds its config).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PgEnv {
    pub host: Option<String>,
    pub port: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub dbname: Option<String>,
    /// The login name, the last default for the user (as libpq does).
    pub login: Option<String>,
}

impl Env {
    /// Reads the environment variables and working directory the CLI depends on.
    pub fn capture() -> Env {
        Env {
            loopx_registry: std::env::var("LOOPX_REGISTRY")
                .ok()
                .filter(|v| !v.is_empty()),
            home: std::env::var_os("HOME").map(PathBuf::from),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            ledger: std::env::var("REWARD_MEMORY_LEDGER")
                .ok()
                .filter(|v| !v.is_empty()),
            pg: PgEnv {
                host: var("PGHOST"),
                port: var("PGPORT"),
                user: var("PGUSER"),
                password: var("PGPASSWORD"),
                dbname: var("PGDATABASE"),
                login: var("USER"),
            },
            exe: std::env::current_exe().ok(),
            stdin: None,
        }
    }

    /// Python's `os.path.expanduser` for `~` and `~/...`.
    pub fn expand_user(&self, path: &str) -> PathBuf {
        match (path, &self.home) {
            ("~", Some(home)) => home.clone(),
            (p, Some(home)) if p.starts_with("~/") => home.join(&p[2..]),
            (p, _) => PathBuf::from(p),
        }
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Opens `--input` (`-` = stdin) as a buffered stream, for inputs read record by record.
pub fn open_input_stream(
    env: &Env,
    spec: &str,
) -> Result<Box<dyn std::io::BufRead + Send>, InputError> {
    if spec == "-" {
        if let Some(bytes) = &env.stdin {
            return Ok(Box::new(std::io::Cursor::new(bytes.clone())));
        }
        return Ok(Box::new(std::io::BufReader::with_capacity(
            1 << 16,
            std::io::stdin(),
        )));
    }
    let path = env.expand_user(spec);
    let shown = path.to_string_lossy().into_owned();
    let file = std::fs::File::open(&path).map_err(|e| InputError::Read(py_os_error(&e, &shown)))?;
    match file.metadata() {
        Ok(meta) if meta.is_dir() => {
            let err = std::io::Error::from_raw_os_error(21);
            Err(InputError::Read(py_os_error(&err, &shown)))
        }
        _ => Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, file))),
    }
}

/// Standard output written piece by piece (JSON Lines). A closed pipe ends the stream
/// quietly: later writes are dropped.
pub struct StdoutStream {
    out: std::io::BufWriter<std::io::Stdout>,
    closed: bool,
}

impl Default for StdoutStream {
    fn default() -> Self {
        StdoutStream::new()
    }
}

impl StdoutStream {
    /// A buffered stream on stdout.
    pub fn new() -> StdoutStream {
        StdoutStream {
            out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
            closed: false,
        }
    }

    /// Writes `text` unless the reader went away.
    pub fn write(&mut self, text: &str) -> Result<(), std::io::Error> {
        if self.closed {
            return Ok(());
        }
        match self.out.write_all(text.as_bytes()) {
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> Result<(), std::io::Error> {
        self.flush()
    }

    /// Writes out what is buffered now (a stream whose lines are acknowledgements).
    pub fn flush(&mut self) -> Result<(), std::io::Error> {
        if self.closed {
            return Ok(());
        }
        match self.out.flush() {
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// Python's `strerror` text for the errors a read can hit.
fn py_os_error(err: &std::io::Error, shown: &str) -> String {
    let quoted = pyfmt::str_repr(shown);
    match err.raw_os_error() {
        Some(code) => {
            let text = match code {
                2 => "No such file or directory".to_owned(),
                13 => "Permission denied".to_owned(),
                20 => "Not a directory".to_owned(),
                21 => "Is a directory".to_owned(),
                36 => "File name too long".to_owned(),
                40 => "Too many levels of symbolic links".to_owned(),
                _ => {
                    let full = err.to_string();
                    full.split(" (os error").next().unwrap_or(&full).to_owned()
                }
            };
            format!("[Errno {code}] {text}: {quoted}")
        }
        None => format!("{err}: {quoted}"),
    }
}

/// Inputs of at least this many bytes are read into the heap proper ([`prefer_heap`]).
const LARGE_INPUT: usize = 256 << 10;

/// glibc's largest dynamic mmap threshold (32 MiB on 64-bit targets).
const MAX_HEAP_PREFERENCE: usize = 32 << 20;

/// Asks the allocator to serve buffers of up to `size` bytes from its heap rather than
/// from fresh mappings. glibc maps every request above its mmap threshold (128 KiB at
/// start) on its own and unmaps it when it is freed, so the pages of every large buffer
/// are faulted in anew, at a microsecond or more each; it also raises the threshold to
/// the size of a mapped chunk that is freed. Reserving and releasing one untouched
/// buffer of `size` bytes (no page of it is faulted in) moves the threshold there: the
/// input and the large buffers built after it then come from the heap, where the pages
/// of a freed buffer are reused. Another allocator just allocates and frees once.
fn prefer_heap(size: usize) {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(size)));
}

/// Reads at most `limit` bytes from `source`; one byte more is a [`InputError::TooLarge`].
fn read_limited(
    source: impl std::io::Read,
    limit: u64,
    shown: &str,
    size_hint: usize,
) -> Result<Vec<u8>, InputError> {
    if size_hint >= LARGE_INPUT {
        prefer_heap(size_hint.saturating_mul(2).min(MAX_HEAP_PREFERENCE));
    }
    let mut buf = Vec::with_capacity(size_hint);
    source
        .take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| InputError::Read(py_os_error(&e, shown)))?;
    if u64::try_from(buf.len()).unwrap_or(u64::MAX) > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok(buf)
}

/// Reads raw bytes from a path (`-` = stdin), at most `limit` of them, with
/// Python-style error text. A regular file larger than `limit` is refused before any
/// read; standard input is not read past `limit + 1` bytes.
pub fn read_bytes(env: &Env, spec: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    if spec == "-" {
        if let Some(bytes) = &env.stdin {
            return read_limited(&bytes[..], limit, "<stdin>", 0);
        }
        return read_limited(std::io::stdin().lock(), limit, "<stdin>", 0);
    }
    let (file, shown, size) = open_input(env, spec, limit)?;
    read_limited(file, limit, &shown, size)
}

/// A JSON Lines input read one line at a time ([`open_lines`]).
pub struct Lines {
    source: Box<dyn std::io::BufRead + Send>,
    shown: String,
    /// The input's size in bytes, when it is a regular file.
    pub size: Option<u64>,
}

/// One line of a [`Lines`] input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The line's bytes, without its newline.
    Text(Vec<u8>),
    /// The line was longer than the limit; it was skipped to its end. `bytes`: its length.
    TooLong { bytes: u64 },
}

impl Lines {
    /// The next line (`None` at the end), at most `limit` bytes of it kept.
    pub fn next_line(&mut self, limit: u64) -> Result<Option<Line>, InputError> {
        let mut kept: Vec<u8> = Vec::new();
        let mut total: u64 = 0;
        let mut ended = false;
        loop {
            let chunk = self
                .source
                .fill_buf()
                .map_err(|e| InputError::Read(py_os_error(&e, &self.shown)))?;
            if chunk.is_empty() {
                break;
            }
            ended = true;
            let (part, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => (&chunk[..at], Some(at + 1)),
                None => (chunk, None),
            };
            total = total.saturating_add(part.len() as u64);
            if total <= limit {
                kept.extend_from_slice(part);
            }
            let consumed = done.unwrap_or(chunk.len());
            self.source.consume(consumed);
            if done.is_some() {
                break;
            }
        }
        Ok(match (ended, total > limit) {
            (false, _) => None,
            (true, true) => Some(Line::TooLong { bytes: total }),
            (true, false) => Some(Line::Text(kept)),
        })
    }
}

/// Opens a JSON Lines `--input` (`-` = stdin) to be read a line at a time, so its size is
/// bounded only by each line's limit, not the whole input's.
pub fn open_lines(env: &Env, spec: &str) -> Result<Lines, InputError> {
    if spec == "-" {
        let source: Box<dyn std::io::BufRead + Send> = match &env.stdin {
            Some(bytes) => Box::new(std::io::Cursor::new(bytes.clone())),
            None => Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin())),
        };
        return Ok(Lines {
            source,
            shown: "<stdin>".to_owned(),
            size: None,
        });
    }
    let (file, shown, size) = open_input(env, spec, u64::MAX)?;
    Ok(Lines {
        source: Box::new(std::io::BufReader::with_capacity(1 << 16, file)),
        shown,
        size: (size > 0).then_some(size as u64),
    })
}

/// Opens the `--input` file `spec`: the file, its name as errors show it, and its size
/// (0 when it is not a regular file). A regular file larger than `limit` is refused.
fn open_input(
    env: &Env,
    spec: &str,
    limit: u64,
) -> Result<(std::fs::File, String, usize), InputError> {
    let path = env.expand_user(spec);
    let shown = path.to_string_lossy().into_owned();
    let file = std::fs::File::open(&path).map_err(|e| InputError::Read(py_os_error(&e, &shown)))?;
    // A directory opens fine on Linux but fails to read with EISDIR, as in Python.
    let size = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |m| m.len());
    if size > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok((file, shown, usize::try_from(size).unwrap_or(0)))
}

/// The size of a transparent huge page on x86_64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// A large input in memory, then reused for the command's output ([`InputBuffer::into_output`]).
///
/// A regular file of at least 256 KiB is read into an anonymous mapping advised to use
/// transparent huge pages (`MADV_HUGEPAGE`): where the system allows it, the whole
/// buffer costs one page fault and one 2 MiB clearing instead of a fault per 4 KiB page
/// (about 1.5 µs each on the machines this was measured on, 0.3 ms for a 1 MB input);
/// with THP `defrag=madvise` that first touch may wait for compaction when huge pages
/// are scarce. Where THP is off, the mapping behaves like any other buffer. Anything
/// else (standard input, a small file, a failed mapping) is read onto the heap.
pub struct InputBuffer {
    storage: Storage,
}

enum Storage {
    Heap(Vec<u8>),
    /// A mapping and how many of its bytes are used.
    Mapped(memmap2::MmapMut, usize),
}

impl Storage {
    fn as_bytes(&self) -> &[u8] {
        match self {
            Storage::Heap(bytes) => bytes,
            Storage::Mapped(map, len) => map.get(..*len).unwrap_or_default(),
        }
    }
}

impl InputBuffer {
    #[cfg(test)]
    fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(..))
    }

    /// The bytes read.
    pub fn as_bytes(&self) -> &[u8] {
        self.storage.as_bytes()
    }

    /// The buffer emptied for the command's output: its memory is in place already.
    pub fn into_output(self) -> OutputBuffer {
        OutputBuffer {
            storage: match self.storage {
                Storage::Heap(mut bytes) => {
                    bytes.clear();
                    Storage::Heap(bytes)
                }
                Storage::Mapped(map, _) => Storage::Mapped(map, 0),
            },
        }
    }
}

/// A command's output text, written through [`json::Sink`]; it moves to the heap when it
/// outgrows the mapping it was given.
pub struct OutputBuffer {
    storage: Storage,
}

impl OutputBuffer {
    /// The text written so far (always whole UTF-8 strings).
    pub fn as_bytes(&self) -> &[u8] {
        self.storage.as_bytes()
    }
}

impl std::fmt::Debug for OutputBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OutputBuffer({} bytes)", self.as_bytes().len())
    }
}

impl json::Sink for OutputBuffer {
    #[inline]
    fn push_str(&mut self, s: &str) {
        match &mut self.storage {
            Storage::Heap(bytes) => bytes.extend_from_slice(s.as_bytes()),
            Storage::Mapped(map, len) => {
                if let Some(slot) = map.get_mut(*len..*len + s.len()) {
                    slot.copy_from_slice(s.as_bytes());
                    *len += s.len();
                } else {
                    self.spill(s);
                }
            }
        }
    }
}

impl OutputBuffer {
    /// Moves the text to the heap, where it can grow, and appends `s`.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, s: &str) {
        let written = self.as_bytes();
        let mut bytes = Vec::with_capacity((written.len() + s.len()).saturating_mul(2));
        bytes.extend_from_slice(written);
        bytes.extend_from_slice(s.as_bytes());
        self.storage = Storage::Heap(bytes);
    }
}

/// Reads `--input` like [`read_bytes`] into an [`InputBuffer`].
pub fn read_buffer(env: &Env, spec: &str, limit: u64) -> Result<InputBuffer, InputError> {
    if spec != "-" {
        let (file, shown, size) = open_input(env, spec, limit)?;
        if size < LARGE_INPUT {
            return read_limited(file, limit, &shown, size).map(|bytes| InputBuffer {
                storage: Storage::Heap(bytes),
            });
        }
        return read_mapped(file, limit, &shown, size).map(|storage| InputBuffer { storage });
    }
    read_bytes(env, spec, limit).map(|bytes| InputBuffer {
        storage: Storage::Heap(bytes),
    })
}

/// Reads a regular file of about `size` bytes into a huge-page mapping, with room for
/// one byte more (to see the end); a file that grew past that continues on the heap.
fn read_mapped(
    mut file: std::fs::File,
    limit: u64,
    shown: &str,
    size: usize,
) -> Result<Storage, InputError> {
    let room = size
        .saturating_add(1)
        .div_ceil(HUGE_PAGE)
        .saturating_mul(HUGE_PAGE);
    let Ok(mut map) = memmap2::MmapOptions::new().len(room).map_anon() else {
        return read_limited(file, limit, shown, size).map(Storage::Heap);
    };
    // Advice only: a kernel without transparent huge pages refuses it, and the mapping
    // then faults in 4 KiB pages like any buffer.
    let _ = map.advise(memmap2::Advice::HugePage);
    let mut len = 0;
    loop {
        let Some(free) = map.get_mut(len..).filter(|free| !free.is_empty()) else {
            // The file grew while it was read: the rest goes to the heap.
            let mut bytes = map.get(..len).unwrap_or_default().to_vec();
            (&mut file)
                .take(
                    limit
                        .saturating_add(1)
                        .saturating_sub(u64::try_from(len).unwrap_or(u64::MAX)),
                )
                .read_to_end(&mut bytes)
                .map_err(|e| InputError::Read(py_os_error(&e, shown)))?;
            if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
                return Err(InputError::TooLarge { limit });
            }
            return Ok(Storage::Heap(bytes));
        };
        match file.read(free) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(InputError::Read(py_os_error(&e, shown))),
        }
    }
    if u64::try_from(len).unwrap_or(u64::MAX) > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok(Storage::Mapped(map, len))
}

/// Parses bytes as one JSON document (any top-level type).
pub fn parse_document(bytes: &[u8]) -> Result<Value, InputError> {
    let text = json::decode_utf8(bytes).map_err(|e| InputError::Parse(e.message))?;
    json::parse(text).map_err(|e| InputError::Parse(e.message))
}

/// Reads `--input` (at most `limit` bytes) and requires one JSON object.
pub fn read_input_object(env: &Env, spec: &str, limit: u64) -> Result<Value, InputError> {
    parse_input_object(&read_bytes(env, spec, limit)?)
}

/// Parses bytes read by [`read_bytes`] as one JSON object, as [`read_input_object`] does.
pub fn parse_input_object(bytes: &[u8]) -> Result<Value, InputError> {
    let value = parse_document(bytes)?;
    if value.as_object().is_some() {
        Ok(value)
    } else {
        Err(InputError::NotObject)
    }
}

/// Reads a file at an already resolved path. The error is Python's `OSError` text,
/// e.g. `[Errno 2] No such file or directory: 'registry.json'`.
pub fn read_path(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.to_string_lossy().into_owned();
    std::fs::read(path).map_err(|e| py_os_error(&e, &shown))
}

/// Prefix of every staging directory (`stage-<pid>-<random>`) under a staging root.
pub const STAGING_DIR_PREFIX: &str = "stage-";

/// A staging directory older than this is stale even when its creator's pid is in use.
const STALE_STAGING_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Exact bytes staged in a private file for a provider whose client reads files. The
/// directory (mode 0700) and the file (mode 0600) are removed when this is dropped; a run
/// killed before that leaves them for [`clear_stale_staging`].
#[derive(Debug)]
pub struct StagedFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl StagedFile {
    /// The staged file (named as asked).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Creates `dir` and its missing parents, each with mode 0700 (existing ones are left as
/// they are).
pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Writes `bytes` to a new file at `path` with mode 0600 (fails if it exists).
fn write_private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Writes `bytes` as `<staging_root>/stage-<pid>-<random>/<file_name>` (directories 0700,
/// file 0600), after removing stale staging directories of earlier runs. Used to hand
/// exact bytes to a provider that only takes local source files (the `ov` CLI).
pub fn stage_bytes(
    staging_root: &Path,
    file_name: &str,
    bytes: &[u8],
) -> std::io::Result<StagedFile> {
    create_private_dir_all(staging_root)?;
    // A staging root that others may write (or a link to one) could hand the record's
    // bytes to them, and its sweep could remove what is not ours.
    trust::check(staging_root, trust::Kind::Directory, "staging directory")
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string()))?;
    clear_stale_staging(staging_root);
    let mut builder = tempfile::Builder::new();
    let prefix = format!("{STAGING_DIR_PREFIX}{}-", std::process::id());
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = builder.tempdir_in(staging_root)?;
    let path = dir.path().join(file_name);
    write_private_file(&path, bytes)?;
    Ok(StagedFile { _dir: dir, path })
}

/// True while the process that created staging directory `name` may still be running:
/// its pid (`stage-<pid>-...`) is ours or, where `/proc` exists, still listed there.
fn staging_owner_alive(name: &str) -> bool {
    name.strip_prefix(STAGING_DIR_PREFIX)
        .and_then(|rest| rest.split('-').next())
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(process_may_be_alive)
}

/// True while process `pid` may still be running: it is this process or, where `/proc`
/// exists, still listed there (without `/proc` nothing can be known, so it may be).
fn process_may_be_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc");
    !proc_root.join("self").exists() || proc_root.join(pid.to_string()).exists()
}

/// Removes the staging directories under `staging_root` that runs killed before their
/// cleanup left behind: those whose creator process is gone, and any older than an hour.
/// Only real directories (never a link) named `stage-...` and owned by this user are
/// removed, and only from a staging root this user trusts. Returns how many were removed;
/// failures are ignored (the next run tries again).
pub fn clear_stale_staging(staging_root: &Path) -> usize {
    if trust::check(staging_root, trust::Kind::Directory, "staging directory") != Ok(true) {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(staging_root) else {
        return 0;
    };
    let me = trust::effective_uid();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(STAGING_DIR_PREFIX) {
            continue;
        }
        // `DirEntry::metadata` does not follow a link.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let facts = trust::Facts::of(&meta);
        if facts.is_symlink || !facts.is_dir || facts.uid != me {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_STAGING_AGE);
        if (old || !staging_owner_alive(&name)) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A fresh private temporary directory (tempfile creates it with mode 0700 on Unix),
/// removed when the handle is dropped.
pub fn private_temp_dir(prefix: &str) -> Result<tempfile::TempDir, std::io::Error> {
    tempfile::Builder::new().prefix(prefix).tempdir()
}

/// True when a regular file exists at `path`.
pub fn is_file(path: &Path) -> bool {
    path.is_file()
}

/// Whether anything (a file, a directory, a link, even a dangling one) is at `path`.
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Nanoseconds on the process's monotonic clock since its first reading. The only
/// clock of the crate: timed code receives this function instead of reading time itself.
pub fn monotonic_nanos() -> u128 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    ORIGIN
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos()
}

/// The current UTC time as an aware ISO timestamp with microseconds
/// (`2026-08-15T00:00:00.123456+00:00`, Python's `datetime.now(timezone.utc).isoformat()`).
pub fn utc_now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

/// `n` random bytes from the operating system (`/dev/urandom`) as lowercase hex.
pub fn random_hex(n: usize) -> Result<String, std::io::Error> {
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(hex::encode(buf))
}

/// 16 random bytes from the operating system (`/dev/urandom`): `recall --explore`'s coin
/// and permutation seed.
pub fn random_bytes16() -> Result<[u8; 16], std::io::Error> {
    let mut buf = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf)
}

/// Writes `bytes` to `path` readable by its owner only (0600): written to a sibling
/// temporary file created with mode 0600, then renamed over `path` (readers never see a
/// partial file; not synced: a lost file is only a lost convenience). When `expires` is
/// given it becomes the file's modification time, so [`sweep_private_files`] needs no
/// reads.
pub fn replace_private_file(
    path: &Path,
    bytes: &[u8],
    expires: Option<std::time::SystemTime>,
) -> Result<(), std::io::Error> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        if let Some(expires) = expires {
            file.set_modified(expires)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path` (created or replaced), e.g. a chart the user asked for, so
/// that `path` holds either its old content or all of the new: the bytes go to a
/// temporary sibling first (synced), which is renamed over `path` only when complete. A
/// failure (a full disk, say) removes the temporary and leaves `path` as it was. A new
/// file gets mode 0644, a replaced one keeps its mode.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), std::io::Error> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".reward-memory-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    let permissions = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta.permissions(),
        _ => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::Permissions::from_mode(0o644)
            }
            #[cfg(not(unix))]
            {
                tmp.as_file().metadata()?.permissions()
            }
        }
    };
    tmp.as_file().set_permissions(permissions)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `path` holding `bytes` (mode 0600) unless something is already there: the
/// bytes go to a private temporary first, which is then hard-linked at `path` (atomic,
/// and refused when `path` exists, even as a link), so a concurrent reader sees the
/// whole file or none. `Ok(false)` when `path` already existed (the caller reads it).
pub fn create_private_file_once(path: &Path, bytes: &[u8]) -> Result<bool, std::io::Error> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    write_private_file(&tmp, bytes)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(err),
    }
}

/// Writes the rendered packet. A closed pipe is not an error.
pub fn write_stdout(text: &str) -> Result<(), std::io::Error> {
    write_stdout_bytes(text.as_bytes())
}

/// [`write_stdout`] of text already encoded (an [`OutputBuffer`]).
pub fn write_stdout_bytes(bytes: &[u8]) -> Result<(), std::io::Error> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let result = lock.write_all(bytes).and_then(|()| lock.flush());
    match result {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Hands a value that is no longer needed to the end of the process instead of freeing
/// it: the binary exits right after printing, and the OS takes back the memory of a parsed
/// `--input` or a printed packet at once, where freeing it node by node costs a large
/// share of a short run (a 1 MB input is tens of thousands of allocations). Call it only
/// on the path of a one-shot command, never in a loop.
pub fn leave_to_exit<T>(value: T) {
    std::mem::forget(value);
}

/// Writes one diagnostic line to stderr.
#[allow(clippy::print_stderr)]
pub fn write_stderr_line(text: &str) {
    eprintln!("{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn buffers_hold_the_file_and_become_output_that_can_outgrow_them() {
        let dir = tempfile::tempdir().expect("dir");
        let env = Env::default();
        let small = file_with(&dir, "small.json", b"{\"a\": 1}");
        // Over one huge page; a prefix just over the mapping threshold; a prefix that
        // fills a huge page but for the byte that shows the end.
        let large_bytes: Vec<u8> = (0..HUGE_PAGE + 4097)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let large = file_with(&dir, "large.json", &large_bytes);
        let exact = file_with(&dir, "exact.json", &large_bytes[..HUGE_PAGE - 1]);
        let threshold = file_with(&dir, "threshold.json", &large_bytes[..LARGE_INPUT]);
        for (path, want) in [
            (&small, &b"{\"a\": 1}"[..]),
            (&large, &large_bytes[..]),
            (&exact, &large_bytes[..HUGE_PAGE - 1]),
            (&threshold, &large_bytes[..LARGE_INPUT]),
        ] {
            let buffer = read_buffer(&env, path, u64::MAX).expect("read");
            assert_eq!(buffer.as_bytes(), want, "{path}");
            assert_eq!(buffer.is_mapped(), want.len() >= LARGE_INPUT, "{path}");
            assert_eq!(
                buffer.as_bytes(),
                read_bytes(&env, path, u64::MAX).expect("read")
            );
            let mut out = buffer.into_output();
            assert!(out.as_bytes().is_empty());
            // More text than the mapping holds moves the output to the heap, intact.
            let piece = "0123456789abcdef\u{e9}";
            let mut expected = String::new();
            for _ in 0..(3 * HUGE_PAGE / piece.len()) {
                json::Sink::push_str(&mut out, piece);
                expected.push_str(piece);
            }
            assert_eq!(out.as_bytes(), expected.as_bytes(), "{path}");
            assert!(matches!(out.storage, Storage::Heap(_)), "{path}");
        }
    }

    #[test]
    fn buffers_refuse_what_read_bytes_refuses() {
        let dir = tempfile::tempdir().expect("dir");
        let env = Env::default();
        let large = file_with(&dir, "large.json", &vec![b' '; LARGE_INPUT + 1]);
        let limit = u64::try_from(LARGE_INPUT).expect("size");
        assert_eq!(
            read_buffer(&env, &large, limit).err(),
            read_bytes(&env, &large, limit).err()
        );
        assert!(matches!(
            read_buffer(&env, &large, limit),
            Err(InputError::TooLarge { .. })
        ));
        let absent = dir
            .path()
            .join("absent.json")
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            read_buffer(&env, &absent, u64::MAX).err(),
            read_bytes(&env, &absent, u64::MAX).err()
        );
        let folder = dir.path().to_string_lossy().into_owned();
        assert_eq!(
            read_buffer(&env, &folder, u64::MAX).err(),
            read_bytes(&env, &folder, u64::MAX).err()
        );
    }

    #[test]
    fn missing_file_error_reads_like_python() {
        let env = Env::default();
        let err = read_bytes(&env, "definitely-absent.json", 10).expect_err("absent");
        assert_eq!(
            err.to_string(),
            "cannot read input JSON: [Errno 2] No such file or directory: 'definitely-absent.json'"
        );
    }

    #[cfg(unix)]
    #[test]
    fn staged_bytes_are_private_and_removed_on_drop() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().expect("tempdir");
        let staging = root.path().join("a/staging");
        let staged = stage_bytes(&staging, "r.json", b"{}\n").expect("staged");
        let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(std::fs::read(staged.path()).expect("file"), b"{}\n");
        assert_eq!(mode(staged.path()), 0o600);
        let dir = staged.path().parent().expect("dir").to_path_buf();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&staging), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        drop(staged);
        assert!(!dir.exists());
    }

    #[cfg(unix)]
    #[test]
    fn stale_staging_directories_are_cleared_and_live_ones_kept() {
        let root = tempfile::tempdir().expect("tempdir");
        let make = |name: &str| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).expect("dir");
            std::fs::write(dir.join("r.json"), "x").expect("file");
            dir
        };
        let dead = make("stage-4294967295-a");
        let unparsable = make("stage-x-b");
        let own = make(&format!("stage-{}-c", std::process::id()));
        let old_own = make(&format!("stage-{}-d", std::process::id()));
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::open(&old_own)
            .and_then(|d| d.set_modified(two_hours_ago))
            .expect("age the directory");
        let other = make("not-staging");
        assert_eq!(clear_stale_staging(root.path()), 3);
        assert!(!dead.exists() && !unparsable.exists() && !old_own.exists());
        assert!(own.exists() && other.exists());
        assert_eq!(clear_stale_staging(&root.path().join("absent")), 0);
    }

    /// The staging sweep never follows a link out of the staging root, never removes a
    /// directory of another user, and does not sweep a root that others may write.
    #[cfg(unix)]
    #[test]
    fn stale_staging_sweep_spares_links_foreign_directories_and_loose_roots() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().expect("tempdir");
        let precious = root.path().join("precious");
        std::fs::create_dir(&precious).expect("dir");
        std::fs::write(precious.join("keep.txt"), "x").expect("file");
        let staging = root.path().join("staging");
        std::fs::create_dir(&staging).expect("dir");
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::os::unix::fs::symlink(&precious, staging.join("stage-4294967295-link"))
            .expect("symlink");
        let dead = staging.join("stage-4294967295-a");
        std::fs::create_dir(&dead).expect("dir");
        if trust::effective_uid() == 0 {
            let foreign = staging.join("stage-4294967295-foreign");
            std::fs::create_dir(&foreign).expect("dir");
            rustix::fs::chown(
                &foreign,
                Some(rustix::fs::Uid::from_raw(65534)),
                Some(rustix::fs::Gid::from_raw(65534)),
            )
            .expect("chown");
            assert_eq!(clear_stale_staging(&staging), 1);
            assert!(foreign.exists(), "another user's directory stays");
        } else {
            assert_eq!(clear_stale_staging(&staging), 1);
        }
        assert!(!dead.exists());
        assert!(
            precious.join("keep.txt").exists(),
            "nothing behind the link is touched"
        );
        assert!(
            staging
                .join("stage-4294967295-link")
                .symlink_metadata()
                .is_ok()
        );
        let again = staging.join("stage-4294967295-b");
        std::fs::create_dir(&again).expect("dir");
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert_eq!(
            clear_stale_staging(&staging),
            0,
            "a loose root is not swept"
        );
        assert!(again.exists());
        assert!(stage_bytes(&staging, "r.json", b"{}").is_err());
    }

    #[test]
    fn reads_up_to_the_limit_and_refuses_one_byte_more() {
        let bytes = b"{\"a\": 1}";
        assert_eq!(
            read_limited(&bytes[..], 8, "<stdin>", 0).map(|b| b.len()),
            Ok(8)
        );
        assert_eq!(
            read_limited(&bytes[..], 7, "<stdin>", 0),
            Err(InputError::TooLarge { limit: 7 })
        );
    }

    #[test]
    fn top_level_array_is_rejected() {
        assert_eq!(
            parse_document(b"[]").map(|v| v.as_object().is_some()),
            Ok(false)
        );
    }
    #[test]
    fn a_file_created_once_is_never_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("key");
        assert!(create_private_file_once(&path, b"first").expect("create"));
        assert!(!create_private_file_once(&path, b"second").expect("exists"));
        assert_eq!(std::fs::read(&path).expect("read"), b"first");
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
    }
}
