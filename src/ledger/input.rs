//! Streaming reader of `utility-ledger append` input: either one object whose
//! `observations` member is a list, or JSON Lines (one observation per line).
//!
//! Owns format detection and record splitting, with memory bounded by the largest
//! record ([`MAX_RECORD_BYTES`]) whatever the input size; it never parses observations
//! (the engine does, with the crate's Python-compatible parser). The object form is
//! detected when the first top-level object has an `observations` member; its other
//! members may be the remaining keys of a `utility-project` input and are ignored. A
//! structural error in the object form refuses the whole input (nothing is appended);
//! in JSON Lines each bad line is refused on its own. A first object without
//! `observations` that spans several lines (a pretty-printed observation, what
//! `utility-observe` prints) is one record, and the rest is read as JSON Lines.

use std::io::{BufRead, Cursor, Read};

use super::engine::Record;
use super::error::{LedgerError, LedgerResult};

/// Largest accepted delivery, in bytes of JSON text.
pub const MAX_RECORD_BYTES: usize = 1 << 20;
/// Deepest nesting of one record.
const MAX_DEPTH: usize = 256;

/// Keys of the object form besides `observations` (those of a `utility-project` input).
pub const IGNORED_KEYS: [&str; 5] = [
    "scope",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
    "reducer_version",
    "previous_projection",
];

const MALFORMED: &str = "observation_malformed";

fn too_large() -> String {
    format!("observation is larger than {MAX_RECORD_BYTES} bytes")
}

fn read_error(err: &std::io::Error) -> LedgerError {
    LedgerError::Request(format!("cannot read append input: {}", err.kind()))
}

/// Why a raw value could not be scanned.
enum ScanError {
    Io(std::io::Error),
    Syntax(String),
}

/// A byte scanner over a buffered reader that counts lines and can record what it
/// consumes (up to a cap) so the probe can be replayed.
struct Scanner<R> {
    inner: R,
    line: u64,
    recording: Option<Vec<u8>>,
    overflow: bool,
}

impl<R: BufRead> Scanner<R> {
    fn peek(&mut self) -> Result<Option<u8>, ScanError> {
        let buf = self.inner.fill_buf().map_err(ScanError::Io)?;
        Ok(buf.first().copied())
    }

    fn note(&mut self, bytes: &[u8]) {
        self.line += bytes.iter().filter(|b| **b == b'\n').count() as u64;
        if let Some(rec) = &mut self.recording {
            if rec.len() + bytes.len() > MAX_RECORD_BYTES {
                self.overflow = true;
                self.recording = None;
            } else {
                rec.extend_from_slice(bytes);
            }
        }
    }

    fn bump(&mut self) -> Result<Option<u8>, ScanError> {
        let b = self.peek()?;
        if let Some(b) = b {
            self.note(&[b]);
            self.inner.consume(1);
        }
        Ok(b)
    }

    fn skip_ws(&mut self) -> Result<(), ScanError> {
        loop {
            let buf = self.inner.fill_buf().map_err(ScanError::Io)?;
            if buf.is_empty() {
                return Ok(());
            }
            let n = buf
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            let chunk = buf[..n].to_vec();
            let done = n < buf.len();
            self.note(&chunk);
            self.inner.consume(n);
            if done {
                return Ok(());
            }
        }
    }

    fn expect(&mut self, want: u8, what: &str) -> Result<(), ScanError> {
        match self.bump()? {
            Some(b) if b == want => Ok(()),
            Some(b) => Err(ScanError::Syntax(format!(
                "expected {what} but found '{}'",
                char::from(b).escape_default()
            ))),
            None => Err(ScanError::Syntax(format!(
                "expected {what} but the input ended"
            ))),
        }
    }

    /// Consumes one complete JSON value (not validated beyond its structure) and returns
    /// its bytes, or `None` when it is larger than [`MAX_RECORD_BYTES`].
    fn value(&mut self) -> Result<Option<Vec<u8>>, ScanError> {
        let mut out: Option<Vec<u8>> = Some(Vec::new());
        let mut closers: Vec<u8> = Vec::new();
        let mut in_string = false;
        let mut escape = false;
        let mut scalar = false;
        loop {
            let buf = self.inner.fill_buf().map_err(ScanError::Io)?;
            if buf.is_empty() {
                if scalar && closers.is_empty() && !in_string {
                    return Ok(out);
                }
                return Err(ScanError::Syntax("the input ended inside a value".into()));
            }
            let mut end: Option<usize> = None;
            let mut error: Option<String> = None;
            for (i, &b) in buf.iter().enumerate() {
                if in_string {
                    if escape {
                        escape = false;
                    } else if b == b'\\' {
                        escape = true;
                    } else if b == b'"' {
                        in_string = false;
                        if closers.is_empty() {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    continue;
                }
                match b {
                    b'"' if !scalar => in_string = true,
                    b'{' | b'[' if !scalar => {
                        if closers.len() >= MAX_DEPTH {
                            error = Some("a value is nested too deeply".into());
                            break;
                        }
                        closers.push(if b == b'{' { b'}' } else { b']' });
                    }
                    b'}' | b']' => {
                        if closers.is_empty() {
                            if scalar {
                                end = Some(i);
                            } else {
                                error = Some(format!("unexpected '{}'", char::from(b)));
                            }
                            break;
                        }
                        if closers.pop() != Some(b) {
                            error = Some(format!("mismatched '{}'", char::from(b)));
                            break;
                        }
                        if closers.is_empty() {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    b',' | b' ' | b'\t' | b'\n' | b'\r' if closers.is_empty() => {
                        if scalar {
                            end = Some(i);
                            break;
                        }
                        error = Some("expected a value".into());
                        break;
                    }
                    _ => {
                        if closers.is_empty() {
                            scalar = true;
                        }
                    }
                }
            }
            if let Some(message) = error {
                return Err(ScanError::Syntax(message));
            }
            let take = end.unwrap_or(buf.len());
            let chunk = buf[..take].to_vec();
            if let Some(o) = &mut out {
                if o.len() + chunk.len() > MAX_RECORD_BYTES {
                    out = None;
                } else {
                    o.extend_from_slice(&chunk);
                }
            }
            self.note(&chunk);
            self.inner.consume(take);
            if end.is_some() {
                return Ok(out);
            }
        }
    }

    /// Reads an object key (a JSON string) and decodes it.
    fn key(&mut self) -> Result<String, ScanError> {
        if self.peek()? != Some(b'"') {
            return Err(ScanError::Syntax("expected a quoted member name".into()));
        }
        let raw = self
            .value()?
            .ok_or_else(|| ScanError::Syntax("a member name is too long".into()))?;
        let text = String::from_utf8(raw)
            .map_err(|_| ScanError::Syntax("a member name is not UTF-8".into()))?;
        match crate::wire::json::parse(&text) {
            Ok(crate::wire::json::Value::Str(s)) => Ok(s.into()),
            _ => Err(ScanError::Syntax(
                "a member name is not a JSON string".into(),
            )),
        }
    }
}

enum Mode<R> {
    Probe(Scanner<R>),
    Lines {
        reader: std::io::Chain<Cursor<Vec<u8>>, R>,
        line: u64,
    },
    Array {
        scanner: Scanner<R>,
        first: bool,
    },
    Rest(Scanner<R>),
    Done,
}

/// An iterator of the records of one append input.
pub struct Records<R> {
    mode: Mode<R>,
    pending: Vec<Record>,
}

/// Starts reading `reader`.
pub fn records<R: BufRead>(reader: R) -> Records<R> {
    Records {
        mode: Mode::Probe(Scanner {
            inner: reader,
            line: 1,
            recording: Some(Vec::new()),
            overflow: false,
        }),
        pending: Vec::new(),
    }
}

fn syntax(line: u64, message: &str) -> LedgerError {
    LedgerError::Request(format!(
        "append input is not a valid observations object (line {line}): {message}"
    ))
}

fn scan_error(line: u64, err: ScanError) -> LedgerError {
    match err {
        ScanError::Io(e) => read_error(&e),
        ScanError::Syntax(m) => syntax(line, &m),
    }
}

/// What the probe of the first object found.
enum Probe {
    /// The object form: the scanner stands just after `"observations":`.
    Object(Vec<String>),
    /// A complete object without `observations` over lines `first` to `last` (a
    /// pretty-printed observation): the scanner stands just after its `}`.
    Spread { first: u64, last: u64 },
    /// Anything else: replay as JSON Lines.
    Lines,
}

impl<R: BufRead> Records<R> {
    fn probe(scanner: &mut Scanner<R>) -> Result<Probe, ScanError> {
        scanner.skip_ws()?;
        if scanner.peek()? != Some(b'{') {
            return Ok(Probe::Lines);
        }
        let first = scanner.line;
        scanner.bump()?;
        let closed = |scanner: &Scanner<R>| {
            if scanner.line > first {
                Probe::Spread {
                    first,
                    last: scanner.line,
                }
            } else {
                Probe::Lines
            }
        };
        let mut keys = Vec::new();
        loop {
            scanner.skip_ws()?;
            if scanner.peek()? == Some(b'}') {
                scanner.bump()?;
                return Ok(closed(scanner));
            }
            let key = scanner.key()?;
            scanner.skip_ws()?;
            scanner.expect(b':', "':'")?;
            scanner.skip_ws()?;
            if key == "observations" {
                return Ok(Probe::Object(keys));
            }
            keys.push(key);
            scanner.value()?;
            scanner.skip_ws()?;
            match scanner.bump()? {
                Some(b',') => {}
                Some(b'}') => return Ok(closed(scanner)),
                _ => return Ok(Probe::Lines),
            }
        }
    }

    fn check_keys(keys: &[String]) -> LedgerResult<()> {
        let unknown: Vec<&str> = keys
            .iter()
            .map(String::as_str)
            .filter(|k| !IGNORED_KEYS.contains(k))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        Err(LedgerError::Request(format!(
            "append input contains unsupported fields: {}",
            crate::wire::keys::list(unknown)
        )))
    }

    fn step(&mut self) -> LedgerResult<Option<Record>> {
        loop {
            if let Some(r) = self.pending.pop() {
                return Ok(Some(r));
            }
            match std::mem::replace(&mut self.mode, Mode::Done) {
                Mode::Done => return Ok(None),
                Mode::Probe(mut scanner) => match Self::probe(&mut scanner) {
                    Ok(Probe::Object(keys)) => {
                        Self::check_keys(&keys)?;
                        scanner.recording = None;
                        let line = scanner.line;
                        scanner
                            .expect(b'[', "a list of observations")
                            .map_err(|e| match e {
                                ScanError::Syntax(_) => {
                                    LedgerError::Request("observations must be a list".into())
                                }
                                other => scan_error(line, other),
                            })?;
                        self.mode = Mode::Array {
                            scanner,
                            first: true,
                        };
                    }
                    Ok(Probe::Spread { first, last }) => {
                        // One record (the bytes up to its `}`, within the record limit);
                        // what follows its `}` is read as lines.
                        self.pending.push(match scanner.recording.take() {
                            Some(bytes) if !scanner.overflow => Record::Item { line: first, bytes },
                            _ => Record::Refused {
                                line: first,
                                reason_code: MALFORMED,
                                error: too_large(),
                            },
                        });
                        self.mode = Mode::Lines {
                            reader: Cursor::new(Vec::new()).chain(scanner.inner),
                            line: last - 1,
                        };
                    }
                    Ok(Probe::Lines) | Err(ScanError::Syntax(_)) => {
                        if let Some(recorded) = scanner.recording.take() {
                            self.mode = Mode::Lines {
                                reader: Cursor::new(recorded).chain(scanner.inner),
                                line: 0,
                            };
                        } else {
                            // The first record alone exceeded the limit: refuse the lines
                            // it spans and go on after them.
                            let mut reader = scanner.inner;
                            let mut sink = Vec::new();
                            let _ = skip_line(&mut reader, &mut sink);
                            self.pending.push(Record::Refused {
                                line: 1,
                                reason_code: MALFORMED,
                                error: too_large(),
                            });
                            self.mode = Mode::Lines {
                                reader: Cursor::new(Vec::new()).chain(reader),
                                line: scanner.line,
                            };
                        }
                    }
                    Err(ScanError::Io(e)) => return Err(read_error(&e)),
                },
                Mode::Lines { mut reader, line } => {
                    let mut line = line;
                    loop {
                        line += 1;
                        match read_line(&mut reader).map_err(|e| read_error(&e))? {
                            LineRead::Eof => return Ok(None),
                            LineRead::Blank => continue,
                            LineRead::TooLong => {
                                self.mode = Mode::Lines { reader, line };
                                return Ok(Some(Record::Refused {
                                    line,
                                    reason_code: MALFORMED,
                                    error: too_large(),
                                }));
                            }
                            LineRead::Line(bytes) => {
                                self.mode = Mode::Lines { reader, line };
                                return Ok(Some(Record::Item { line, bytes }));
                            }
                        }
                    }
                }
                Mode::Array { mut scanner, first } => {
                    scanner.skip_ws().map_err(|e| scan_error(scanner.line, e))?;
                    let next = scanner.peek().map_err(|e| scan_error(scanner.line, e))?;
                    if next == Some(b']') {
                        scanner.bump().map_err(|e| scan_error(scanner.line, e))?;
                        self.mode = Mode::Rest(scanner);
                        continue;
                    }
                    if !first {
                        let line = scanner.line;
                        scanner
                            .expect(b',', "',' or ']'")
                            .map_err(|e| scan_error(line, e))?;
                        scanner.skip_ws().map_err(|e| scan_error(scanner.line, e))?;
                    }
                    let line = scanner.line;
                    let value = scanner.value().map_err(|e| scan_error(line, e))?;
                    self.mode = Mode::Array {
                        scanner,
                        first: false,
                    };
                    return Ok(Some(match value {
                        Some(bytes) => Record::Item { line, bytes },
                        None => Record::Refused {
                            line,
                            reason_code: MALFORMED,
                            error: too_large(),
                        },
                    }));
                }
                Mode::Rest(mut scanner) => {
                    let mut keys = Vec::new();
                    loop {
                        let line = scanner.line;
                        scanner.skip_ws().map_err(|e| scan_error(line, e))?;
                        match scanner.bump().map_err(|e| scan_error(line, e))? {
                            Some(b'}') => break,
                            Some(b',') => {}
                            _ => return Err(syntax(scanner.line, "expected ',' or '}'")),
                        }
                        scanner.skip_ws().map_err(|e| scan_error(line, e))?;
                        let key = scanner.key().map_err(|e| scan_error(line, e))?;
                        if key == "observations" {
                            return Err(LedgerError::Request(
                                "append input names observations twice".into(),
                            ));
                        }
                        keys.push(key);
                        scanner.skip_ws().map_err(|e| scan_error(line, e))?;
                        scanner
                            .expect(b':', "':'")
                            .map_err(|e| scan_error(line, e))?;
                        scanner.skip_ws().map_err(|e| scan_error(line, e))?;
                        scanner.value().map_err(|e| scan_error(line, e))?;
                    }
                    Self::check_keys(&keys)?;
                    scanner.skip_ws().map_err(|e| scan_error(scanner.line, e))?;
                    if scanner
                        .peek()
                        .map_err(|e| scan_error(scanner.line, e))?
                        .is_some()
                    {
                        return Err(syntax(scanner.line, "extra data after the object"));
                    }
                    return Ok(None);
                }
            }
        }
    }
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = LedgerResult<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.mode = Mode::Done;
                Some(Err(e))
            }
        }
    }
}

enum LineRead {
    Eof,
    Blank,
    TooLong,
    Line(Vec<u8>),
}

/// Reads one line (without its newline), bounded by [`MAX_RECORD_BYTES`].
fn read_line(reader: &mut impl BufRead) -> std::io::Result<LineRead> {
    let mut out = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, found) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i)),
            None => (buf, None),
        };
        if !too_long {
            if out.len() + chunk.len() > MAX_RECORD_BYTES {
                too_long = true;
                out = Vec::new();
            } else {
                out.extend_from_slice(chunk);
            }
        }
        let used = found.map_or(buf.len(), |i| i + 1);
        reader.consume(used);
        if found.is_some() {
            break;
        }
    }
    if !any {
        return Ok(LineRead::Eof);
    }
    if too_long {
        return Ok(LineRead::TooLong);
    }
    if out.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return Ok(LineRead::Blank);
    }
    Ok(LineRead::Line(out))
}

fn skip_line(reader: &mut impl BufRead, sink: &mut Vec<u8>) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                sink.clear();
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str) -> Vec<Result<Record, LedgerError>> {
        records(std::io::BufReader::with_capacity(7, text.as_bytes())).collect()
    }

    fn item(line: u64, text: &str) -> Result<Record, LedgerError> {
        Ok(Record::Item {
            line,
            bytes: text.as_bytes().to_vec(),
        })
    }

    #[test]
    fn json_lines_yield_one_record_per_non_blank_line() {
        assert_eq!(
            collect("{\"a\": 1}\n\n  \n[2]\nnot json\n"),
            vec![item(1, "{\"a\": 1}"), item(4, "[2]"), item(5, "not json")]
        );
    }

    #[test]
    fn object_form_streams_observation_elements_with_their_lines() {
        let text = "{\"scope\": {\"x\": \"}\"},\n \"observations\": [\n  {\"a\": \"]\"},\n  {\"b\": [1, {}]}\n ],\n \"reducer_version\": \"v\"}\n";
        assert_eq!(
            collect(text),
            vec![item(3, "{\"a\": \"]\"}"), item(4, "{\"b\": [1, {}]}")]
        );
    }

    #[test]
    fn object_form_scalars_are_records_too() {
        assert_eq!(
            collect("{\"observations\":[1,null, \"x\"]}"),
            vec![item(1, "1"), item(1, "null"), item(1, "\"x\"")]
        );
    }

    #[test]
    fn an_object_without_observations_is_the_first_json_line() {
        assert_eq!(
            collect("{\"schema_version\": \"x\"}\n{\"b\": 2}\n"),
            vec![
                item(1, "{\"schema_version\": \"x\"}"),
                item(2, "{\"b\": 2}")
            ]
        );
    }

    #[test]
    fn a_pretty_printed_object_is_one_record_and_the_rest_json_lines() {
        let pretty = "\n{\n  \"schema_version\": \"x\",\n  \"scope\": {\"a\": \"}\"}\n}";
        let out = collect(&format!("{pretty}\n{{\"b\": 2}}\n"));
        assert_eq!(out, vec![item(2, pretty), item(6, "{\"b\": 2}")]);
        // What follows the closing brace on its line is read as that line.
        assert_eq!(
            collect("{\n\"a\": 1} x\n"),
            vec![item(1, "{\n\"a\": 1}"), item(2, " x")]
        );
        // One object per line stays JSON Lines.
        assert_eq!(
            collect("{\"a\": 1}\n{}\n"),
            vec![item(1, "{\"a\": 1}"), item(2, "{}")]
        );
    }

    #[test]
    fn a_pretty_printed_object_over_the_record_limit_is_refused() {
        let big = format!("{{\n\"a\": \"{}\"\n}}\n", "x".repeat(MAX_RECORD_BYTES));
        let out = collect(&big);
        assert_eq!(
            out.first(),
            Some(&Ok(Record::Refused {
                line: 1,
                reason_code: MALFORMED,
                error: too_large()
            })),
            "{out:?}"
        );
    }

    #[test]
    fn a_truncated_object_form_refuses_the_whole_input() {
        let out = collect("{\"observations\": [{\"a\": 1}, {\"b\"");
        assert!(
            matches!(out.last(), Some(Err(LedgerError::Request(_)))),
            "{out:?}"
        );
    }

    #[test]
    fn unknown_members_of_the_object_form_are_refused() {
        let out = collect("{\"observations\": [], \"extra\": 1}");
        assert_eq!(
            out,
            vec![Err(LedgerError::Request(
                "append input contains unsupported fields: extra".into()
            ))]
        );
    }

    #[test]
    fn oversized_line_is_refused_and_reading_goes_on() {
        let big = "x".repeat(MAX_RECORD_BYTES + 1);
        let out = collect(&format!("{big}\n{{}}\n"));
        assert_eq!(
            out,
            vec![
                Ok(Record::Refused {
                    line: 1,
                    reason_code: MALFORMED,
                    error: too_large()
                }),
                item(2, "{}")
            ]
        );
    }
}
