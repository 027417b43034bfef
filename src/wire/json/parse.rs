//! The parser: a document read exactly as Python's `json.loads` reads it (or refused
//! with its wording and positions), within a memory budget per input byte and a nesting
//! limit, and [`Cursor`], a forward reader for a caller that knows the shape it reads.
//! Input that is not UTF-8 is refused by [`decode_utf8`] with Python's codec wording.
//! No I/O.

use indexmap::IndexMap;

use super::escape::plain_prefix;
use super::{Map, Repr, Text, Value};

/// A parse failure, worded like Python's `json.JSONDecodeError` (or a refusal this port
/// makes on purpose, such as a lone surrogate escape).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    pub message: String,
}

/// Decodes bytes as UTF-8 with Python's codec error wording.
pub fn decode_utf8(bytes: &[u8]) -> Result<&str, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(err) => {
            let start = err.valid_up_to();
            let message = match err.error_len() {
                None => {
                    let end = bytes.len() - 1;
                    if end > start {
                        format!(
                            "'utf-8' codec can't decode bytes in position {start}-{end}: unexpected end of data"
                        )
                    } else {
                        format!(
                            "'utf-8' codec can't decode byte 0x{:02x} in position {start}: unexpected end of data",
                            bytes[start]
                        )
                    }
                }
                Some(len) => {
                    let lead = bytes[start];
                    let reason = if (0xc2..=0xf4).contains(&lead) {
                        "invalid continuation byte"
                    } else {
                        "invalid start byte"
                    };
                    if len > 1 {
                        format!(
                            "'utf-8' codec can't decode bytes in position {start}-{}: {reason}",
                            start + len - 1
                        )
                    } else {
                        format!(
                            "'utf-8' codec can't decode byte 0x{lead:02x} in position {start}: {reason}"
                        )
                    }
                }
            };
            Err(ParseError { message })
        }
    }
}

/// Parses a document as Python's `json.loads` does.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut parser = Parser::new(text);
    if text.starts_with('\u{feff}') {
        return Err(parser.error_at("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    parser.skip_ws();
    let value = parser.parse_value()?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error_at("Extra data", parser.pos));
    }
    Ok(value)
}

/// Python's `json.JSONDecoder().raw_decode(text)`: decodes the one value that starts at
/// the first byte of `text` and ignores whatever follows it.
pub fn parse_prefix(text: &str) -> Result<Value, ParseError> {
    let mut parser = Parser::new(text);
    parser.parse_value()
}

/// CPython's default `sys.get_int_max_str_digits()`.
const MAX_INT_DIGITS: usize = 4300;

/// Deepest nesting accepted; Python would raise `RecursionError` far past any real packet.
const MAX_DEPTH: usize = 512;

/// Memory a parsed document may take, per byte of its text (plus [`MEMORY_SLACK`]).
///
/// Ordinary documents take 2 to 6 bytes per byte; a flat list of one-digit numbers
/// takes 12. Only shapes made almost entirely of tiny containers (`[[[[]]]]` chains,
/// `[[0],[0],...]`) go past it, and they are refused instead of growing the process to
/// 16 or more times the input.
pub const MEMORY_PER_INPUT_BYTE: usize = 12;

/// Memory any document may take on top of [`MEMORY_PER_INPUT_BYTE`], so that small
/// documents are never refused for rounding.
pub const MEMORY_SLACK: usize = 1 << 20;

/// Bytes of one [`Value`] slot and of one object entry.
const SLOT: usize = std::mem::size_of::<Value>();
const ENTRY: usize = std::mem::size_of::<(Text, Value)>();
/// Extra bytes per entry of an indexed map: the stored hash and about two index slots.
const INDEX_EXTRA: usize = 8 + 2 * 9;
/// Text of at most this many bytes is stored inline in its [`Value`].
const INLINE_TEXT: usize = std::mem::size_of::<Text>();

/// Bytes the allocator sets aside for a request of `n` bytes (glibc: 8 bytes of header,
/// 16-byte granularity, 32 bytes at least); nothing for an empty request.
fn heap_cost(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        n.saturating_add(8 + 15).max(32) & !15
    }
}

/// A bit position (0..64) from a key's length and its first and last bytes.
fn key_bit(key: &str) -> u32 {
    let bytes = key.as_bytes();
    let first = u64::from(bytes.first().copied().unwrap_or(0));
    let last = u64::from(bytes.last().copied().unwrap_or(0));
    let mixed =
        (bytes.len() as u64 ^ (first << 8) ^ (last << 16)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 58) as u32
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// Bytes the values built so far take, as [`heap_cost`] counts them.
    used: usize,
    budget: usize,
    /// Elements of the arrays being parsed, innermost last: each finished array moves
    /// its tail into one exact allocation, so that no growth leaves holes behind.
    items: Vec<Value>,
    /// Entries of the small objects being parsed, innermost last.
    entries: Vec<(Text, Value)>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            used: 0,
            items: Vec::new(),
            entries: Vec::new(),
            budget: text
                .len()
                .saturating_mul(MEMORY_PER_INPUT_BYTE)
                .saturating_add(MEMORY_SLACK),
        }
    }

    /// Accounts `n` more bytes and refuses the document once it passes its budget.
    fn charge(&mut self, n: usize) -> Result<(), ParseError> {
        self.used = self.used.saturating_add(n);
        if self.used > self.budget {
            return Err(ParseError {
                message: format!(
                    "JSON document too dense to hold in memory: it would take more than {MEMORY_PER_INPUT_BYTE} bytes per input byte; send fewer tiny nested arrays or objects"
                ),
            });
        }
        Ok(())
    }

    /// Replaces the per-element charge of a finished container by its exact allocation.
    fn settle(&mut self, pending: usize, allocated: usize) -> Result<(), ParseError> {
        self.used = self.used.saturating_sub(pending);
        self.charge(heap_cost(allocated))
    }

    fn error_at(&self, msg: &str, byte_pos: usize) -> ParseError {
        let before = &self.text[..byte_pos.min(self.text.len())];
        let char_pos = before.chars().count();
        let line = before.matches('\n').count() + 1;
        let col = match before.rfind('\n') {
            Some(nl) => before[nl + 1..].chars().count() + 1,
            None => char_pos + 1,
        };
        ParseError {
            message: format!("{msg}: line {line} column {col} (char {char_pos})"),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn starts_with(&self, lit: &str) -> bool {
        self.bytes[self.pos..].starts_with(lit.as_bytes())
    }

    fn parse_value(&mut self) -> Result<Value, ParseError> {
        match self.peek() {
            Some(b'"') => {
                let start = self.pos;
                self.pos += 1;
                Ok(Value::Str(self.parse_string_body(start)?))
            }
            Some(b'{') => self.parse_object(),
            Some(b'[') => self.parse_array(),
            Some(b'n') if self.starts_with("null") => {
                self.pos += 4;
                Ok(Value::Null)
            }
            Some(b't') if self.starts_with("true") => {
                self.pos += 4;
                Ok(Value::Bool(true))
            }
            Some(b'f') if self.starts_with("false") => {
                self.pos += 5;
                Ok(Value::Bool(false))
            }
            Some(b'N') if self.starts_with("NaN") => {
                self.pos += 3;
                Ok(Value::Float(f64::NAN))
            }
            Some(b'I') if self.starts_with("Infinity") => {
                self.pos += 8;
                Ok(Value::Float(f64::INFINITY))
            }
            Some(b'-') if self.starts_with("-Infinity") => {
                self.pos += 9;
                Ok(Value::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.parse_number(),
            _ => Err(self.error_at("Expecting value", self.pos)),
        }
    }

    fn parse_number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while matches!(b.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => return Err(self.error_at("Expecting value", start)),
        }
        let int_end = i;
        let mut is_float = false;
        if b.get(i) == Some(&b'.') && matches!(b.get(i + 1), Some(b'0'..=b'9')) {
            i += 2;
            while matches!(b.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            is_float = true;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if matches!(b.get(j), Some(b'0'..=b'9')) {
                while matches!(b.get(j), Some(b'0'..=b'9')) {
                    j += 1;
                }
                i = j;
                is_float = true;
            }
        }
        self.pos = i;
        let text = &self.text[start..i];
        if is_float {
            // Rust's parser is correctly rounded like Python's; overflow gives infinity.
            let f: f64 = text
                .parse()
                .map_err(|_| self.error_at("Expecting value", start))?;
            Ok(Value::Float(f))
        } else {
            let digits = &self.text[start..int_end];
            let count = digits.trim_start_matches('-').len();
            if count > MAX_INT_DIGITS {
                // CPython's `int()` refuses this many digits (a plain ValueError).
                return Err(ParseError {
                    message: format!(
                        "Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion: value has {count} digits; use sys.set_int_max_str_digits() to increase the limit"
                    ),
                });
            }
            match digits.parse::<i64>() {
                Ok(v) => Ok(Value::Int(v)),
                Err(_) => {
                    self.charge(heap_cost(digits.len()))?;
                    Ok(Value::BigInt(digits.into()))
                }
            }
        }
    }

    /// Parses a string whose opening quote sits at `start`; `self.pos` is just past it.
    fn parse_string_body(&mut self, start: usize) -> Result<Text, ParseError> {
        let first = self.pos;
        self.skip_plain_text();
        if self.peek() == Some(b'"') {
            // No escape: the common case, copied once (inline when short).
            let text = &self.text[first..self.pos];
            self.pos += 1;
            if text.len() > INLINE_TEXT {
                self.charge(heap_cost(text.len()))?;
            }
            return Ok(Text::new(text));
        }
        self.pos = first;
        let mut out = String::new();
        loop {
            let chunk_start = self.pos;
            self.skip_plain_text();
            out.push_str(&self.text[chunk_start..self.pos]);
            match self.peek() {
                None => return Err(self.error_at("Unterminated string starting at", start)),
                Some(b'"') => {
                    self.pos += 1;
                    if out.len() > INLINE_TEXT {
                        self.charge(heap_cost(out.len()))?;
                    }
                    return Ok(Text::from(out));
                }
                Some(b'\\') => {
                    let esc_pos = self.pos;
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error_at("Unterminated string starting at", start));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let first = self.hex4(esc_pos)?;
                            let code =
                                if (0xd800..0xdc00).contains(&first) && self.starts_with("\\u") {
                                    let save = self.pos;
                                    self.pos += 2;
                                    let second = self.hex4(save)?;
                                    if (0xdc00..0xe000).contains(&second) {
                                        0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
                                    } else {
                                        self.pos = save;
                                        first
                                    }
                                } else {
                                    first
                                };
                            match char::from_u32(code) {
                                Some(c) => out.push(c),
                                None => {
                                    return Err(ParseError {
                                        message: format!(
                                            "lone surrogate escape \\u{code:04x} is not supported: {}",
                                            self.error_at("position", esc_pos)
                                                .message
                                                .trim_start_matches("position: ")
                                        ),
                                    });
                                }
                            }
                        }
                        _ => return Err(self.error_at("Invalid \\escape", esc_pos)),
                    }
                }
                Some(_) => return Err(self.error_at("Invalid control character at", self.pos)),
            }
        }
    }

    /// Moves past string bytes that need no decoding.
    fn skip_plain_text(&mut self) {
        self.pos += plain_prefix(&self.bytes[self.pos..], false);
    }

    fn hex4(&mut self, esc_pos: usize) -> Result<u32, ParseError> {
        let digits = self.bytes.get(self.pos..self.pos + 4);
        let parsed = digits.and_then(|d| {
            if d.iter().all(u8::is_ascii_hexdigit) {
                std::str::from_utf8(d)
                    .ok()
                    .and_then(|s| u32::from_str_radix(s, 16).ok())
            } else {
                None
            }
        });
        match parsed {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error_at("Invalid \\uXXXX escape", esc_pos + 1)),
        }
    }

    /// What follows an item of an array or object: its `close` byte, consumed with the
    /// answer `true` (the container ends), or a `,` and the whitespace after it, consumed
    /// with the answer `false` (another item follows); anything else is refused with
    /// Python's wording.
    fn end_of_item(&mut self, close: u8) -> Result<bool, ParseError> {
        self.skip_ws();
        match self.peek() {
            Some(b) if b == close => {
                self.pos += 1;
                Ok(true)
            }
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                Ok(false)
            }
            _ => Err(self.error_at("Expecting ',' delimiter", self.pos)),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError {
                message: format!("JSON nesting deeper than {MAX_DEPTH} levels is not supported"),
            });
        }
        Ok(())
    }

    fn parse_object(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.pos += 1;
        let start_entries = self.entries.len();
        let mut index: Option<IndexMap<Text, Value>> = None;
        // One bit per key seen, chosen by a cheap key hash: a new key whose bit is clear
        // cannot repeat an earlier one, so only the others are searched for.
        let mut seen: u64 = 0;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Object(Map::new()));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error_at(
                    "Expecting property name enclosed in double quotes",
                    self.pos,
                ));
            }
            let start = self.pos;
            self.pos += 1;
            let key = self.parse_string_body(start)?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error_at("Expecting ':' delimiter", self.pos));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.parse_value()?;
            let bit = 1u64 << key_bit(&key);
            let maybe_repeated = seen & bit != 0;
            seen |= bit;
            self.insert_entry(start_entries, &mut index, key, value, maybe_repeated)?;
            if self.end_of_item(b'}')? {
                break;
            }
        }
        self.depth -= 1;
        let map = match index {
            Some(index) => Map::from_index(index),
            None => {
                let len = self.entries.len() - start_entries;
                self.settle(len * ENTRY, len * ENTRY)?;
                let entries: Box<[(Text, Value)]> = self.entries.drain(start_entries..).collect();
                Map {
                    repr: Repr::Small(entries),
                }
            }
        };
        Ok(Value::Object(map))
    }

    /// Adds one parsed entry with dict semantics: searched linearly among this object's
    /// entries on the shared stack while there are few, in `index` once there are many.
    fn insert_entry(
        &mut self,
        start: usize,
        index: &mut Option<IndexMap<Text, Value>>,
        key: Text,
        value: Value,
        maybe_repeated: bool,
    ) -> Result<(), ParseError> {
        if let Some(index) = index {
            if index.insert(key, value).is_none() {
                self.charge(ENTRY + INDEX_EXTRA)?;
            }
            return Ok(());
        }
        if maybe_repeated
            && let Some(slot) = self.entries[start..].iter_mut().find(|(k, _)| *k == key)
        {
            slot.1 = value;
            return Ok(());
        }
        self.charge(ENTRY)?;
        if self.entries.len() - start + 1 >= Map::INDEXED_AT {
            let mut map: IndexMap<Text, Value> = self.entries.drain(start..).collect();
            map.insert(key, value);
            self.charge(map.len() * INDEX_EXTRA)?;
            *index = Some(map);
        } else {
            self.entries.push((key, value));
        }
        Ok(())
    }

    fn parse_array(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.pos += 1;
        let start = self.items.len();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Array(Box::default()));
        }
        loop {
            let item = self.parse_value()?;
            self.items.push(item);
            self.charge(SLOT)?;
            if self.end_of_item(b']')? {
                break;
            }
        }
        self.depth -= 1;
        let len = self.items.len() - start;
        self.settle(len * SLOT, len * SLOT)?;
        let items: Box<[Value]> = if start == 0 {
            // The outermost pending array owns the whole stack: keep its allocation
            // (shrunk in place) instead of copying it.
            std::mem::take(&mut self.items).into_boxed_slice()
        } else {
            self.items.drain(start..).collect()
        };
        Ok(Value::Array(items))
    }
}

/// A forward reader over one JSON text, for a caller that reads a shape it knows field by
/// field instead of building a [`Value`] tree for the whole document.
///
/// It only ever answers "this is the expected token" or "it is not": every method returns
/// `None` or `false` where the text differs from what was asked, and never words an
/// error. A caller that gets a no parses the whole text with [`parse`] instead, which
/// accepts or refuses it, and words the refusal, exactly as it always does. Whitespace is
/// JSON's (space, tab, newline, carriage return) and is skipped before every token.
pub struct Cursor<'a> {
    parser: Parser<'a>,
}

impl<'a> Cursor<'a> {
    /// A cursor at the first byte of `text`.
    pub fn new(text: &'a str) -> Self {
        Cursor {
            parser: Parser::new(text),
        }
    }

    /// The next byte after whitespace, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.parser.skip_ws();
        self.parser.peek()
    }

    /// Consumes `byte` if it is the next byte after whitespace.
    pub fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.parser.pos += 1;
            true
        } else {
            false
        }
    }

    /// A string without escapes, borrowed from the text; `None` (nothing consumed that
    /// matters) for anything else, including a string with an escape.
    pub fn plain_str(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let first = self.parser.pos;
        self.parser.skip_plain_text();
        if self.parser.peek() != Some(b'"') {
            return None;
        }
        let text: &'a str = self.parser.text.get(first..self.parser.pos)?;
        self.parser.pos += 1;
        Some(text)
    }

    /// Consumes the string `"key"` when it comes next after whitespace, and answers
    /// whether it did. For a `key` without a byte to escape this is `plain_str() ==
    /// Some(key)` as one comparison, without scanning the string; a reader that expects a
    /// key (the same keys coming in the same order, record after record) tries it first.
    pub fn eat_key(&mut self, key: &str) -> bool {
        self.parser.skip_ws();
        let start = self.parser.pos;
        let end = start + key.len() + 2;
        let Some(quoted) = self.parser.bytes.get(start..end) else {
            return false;
        };
        if quoted[0] == b'"'
            && quoted[end - start - 1] == b'"'
            && &quoted[1..end - start - 1] == key.as_bytes()
        {
            self.parser.pos = end;
            true
        } else {
            false
        }
    }

    /// Consumes the literal `false`.
    pub fn eat_false(&mut self) -> bool {
        if self.peek() == Some(b'f') && self.parser.starts_with("false") {
            self.parser.pos += 5;
            true
        } else {
            false
        }
    }

    /// Any one value, read as [`parse`] reads it.
    pub fn value(&mut self) -> Option<Value> {
        self.parser.skip_ws();
        self.parser.parse_value().ok()
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }
}
