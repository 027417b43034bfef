//! The only code that reads files, standard input and the environment, or writes to
//! stdout/stderr.
//!
//! Input documents are read as bytes, decoded as UTF-8 and parsed with the
//! Python-compatible parser, so that every failure carries the reference's wording
//! (`cannot read input JSON: [Errno 2] No such file or directory: 'x.json'`, Python's
//! codec and decoder messages). Every read is bounded by `--max-input-bytes`: a larger
//! file is refused before it is read and stdin is not read past the limit. Output goes
//! through [`write_stdout`], which ends quietly on a closed pipe.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use crate::wire::json::{self, Value};
use crate::wire::pyfmt;

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

/// Reads at most `limit` bytes from `source`; one byte more is a [`InputError::TooLarge`].
fn read_limited(
    source: impl std::io::Read,
    limit: u64,
    shown: &str,
    size_hint: usize,
) -> Result<Vec<u8>, InputError> {
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
        return read_limited(std::io::stdin().lock(), limit, "<stdin>", 0);
    }
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
    read_limited(file, limit, &shown, usize::try_from(size).unwrap_or(0))
}

/// Parses bytes as one JSON document (any top-level type).
pub fn parse_document(bytes: &[u8]) -> Result<Value, InputError> {
    let text = json::decode_utf8(bytes).map_err(|e| InputError::Parse(e.message))?;
    json::parse(text).map_err(|e| InputError::Parse(e.message))
}

/// Reads `--input` (at most `limit` bytes) and requires one JSON object.
pub fn read_input_object(env: &Env, spec: &str, limit: u64) -> Result<Value, InputError> {
    let value = parse_document(&read_bytes(env, spec, limit)?)?;
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

/// Writes `bytes` as `<fresh temporary directory>/<file_name>` and returns the directory
/// handle (removed when dropped) with the file path. Used to hand exact bytes to a
/// provider's sync, which takes local source files.
pub fn write_temp_resource(
    prefix: &str,
    file_name: &str,
    bytes: &[u8],
) -> Result<(tempfile::TempDir, PathBuf), std::io::Error> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
    let path = dir.path().join(file_name);
    std::fs::write(&path, bytes)?;
    Ok((dir, path))
}

/// Reads a file the registry route points at; `None` when it does not exist.
pub fn read_optional_file(path: &Path) -> Result<Option<Vec<u8>>, std::io::Error> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// True when a regular file exists at `path`.
pub fn is_file(path: &Path) -> bool {
    path.is_file()
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

/// Writes the rendered packet. A closed pipe is not an error.
pub fn write_stdout(text: &str) -> Result<(), std::io::Error> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let result = lock.write_all(text.as_bytes()).and_then(|()| lock.flush());
    match result {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes one diagnostic line to stderr.
#[allow(clippy::print_stderr)]
pub fn write_stderr_line(text: &str) {
    eprintln!("{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_error_reads_like_python() {
        let env = Env::default();
        let err = read_bytes(&env, "definitely-absent.json", 10).expect_err("absent");
        assert_eq!(
            err.to_string(),
            "cannot read input JSON: [Errno 2] No such file or directory: 'definitely-absent.json'"
        );
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
}
