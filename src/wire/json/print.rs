//! The printers: a [`Value`], or a [`Json`] view borrowed from typed fields, written as
//! Python's `json.dumps` writes it with the options the contracts use ([`DumpOptions`]),
//! into any [`Sink`] (a `String`, or a digest fed as the bytes are made), plus the plain
//! canonical writer for sorted, escape-free records. Strings are escaped by
//! [`super::escape`], floats printed by [`crate::wire::float`]. No I/O.

use super::escape::{plain_prefix, write_string};
use super::{Sink, Text, Value, str_list};
use crate::wire::decimal::Digits;
use crate::wire::float;

/// How to print a value, mirroring the `json.dumps` arguments the contracts use.
#[derive(Debug, Clone, Copy)]
pub struct DumpOptions {
    pub indent: Option<usize>,
    pub item_sep: &'static str,
    pub key_sep: &'static str,
    pub sort_keys: bool,
    pub ensure_ascii: bool,
}

impl DumpOptions {
    /// `json.dumps(v, indent=2, ensure_ascii=False)`: the packet printer.
    pub const PRETTY: DumpOptions = DumpOptions {
        indent: Some(2),
        item_sep: ",",
        key_sep: ": ",
        sort_keys: false,
        ensure_ascii: false,
    };
    /// `separators=(",", ":"), ensure_ascii=False`, keys in packet order: one packet on
    /// one line (`--format jsonl`, the MCP server's tool results).
    pub const COMPACT: DumpOptions = DumpOptions {
        indent: None,
        item_sep: ",",
        key_sep: ":",
        sort_keys: false,
        ensure_ascii: false,
    };
    /// `sort_keys=True, separators=(",", ":"), ensure_ascii=False`: canonical bytes.
    pub const CANONICAL: DumpOptions = DumpOptions {
        indent: None,
        item_sep: ",",
        key_sep: ":",
        sort_keys: true,
        ensure_ascii: false,
    };
    /// `sort_keys=True` with default separators and `ensure_ascii=False`.
    pub const LEGACY_RAW: DumpOptions = DumpOptions {
        indent: None,
        item_sep: ", ",
        key_sep: ": ",
        sort_keys: true,
        ensure_ascii: false,
    };
    /// `sort_keys=True` with default separators and `ensure_ascii=True`.
    pub const LEGACY_ASCII: DumpOptions = DumpOptions {
        indent: None,
        item_sep: ", ",
        key_sep: ": ",
        sort_keys: true,
        ensure_ascii: true,
    };
}

/// A JSON value borrowed from typed fields: it prints exactly as the [`Value`] it
/// stands for, without copying the fields into one. Digests of typed records (an
/// observation's identity, a subject key) hash one of these.
#[derive(Debug, Clone, Copy)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    /// A list of strings.
    Strs(&'a [String]),
    /// A list of string slices.
    StrRefs(&'a [&'a str]),
    /// An object: its `(key, value)` entries in insertion order.
    Object(&'a [(&'a str, Json<'a>)]),
    /// A list whose items are made one at a time while it is printed, so that a long
    /// list of records is printed from typed data without a value per record.
    Items(&'a dyn JsonItems),
    /// A parsed or built value.
    Value(&'a Value),
}

/// The items of a [`Json::Items`] list: how many there are, and each one as a borrowed
/// [`Json`] handed to `each` (which may build it on the stack).
pub trait JsonItems {
    /// The number of items.
    fn count(&self) -> usize;
    /// Calls `each` with the items in order.
    fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>));
}

impl std::fmt::Debug for dyn JsonItems + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JsonItems({})", self.count())
    }
}

impl Json<'_> {
    /// The owned [`Value`] this stands for.
    pub fn to_value(&self) -> Value {
        match *self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Int(i) => Value::Int(i),
            Json::Float(f) => Value::Float(f),
            Json::Str(s) => Value::from(s),
            Json::Strs(items) => str_list(items),
            Json::StrRefs(items) => str_list(items),
            Json::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (Text::new(k), v.to_value()))
                    .collect(),
            ),
            Json::Items(items) => {
                let mut out = Vec::with_capacity(items.count());
                items.for_each_item(&mut |item| out.push(item.to_value()));
                Value::Array(out.into())
            }
            Json::Value(v) => v.clone(),
        }
    }
}

/// Prints `value` as `json.dumps` would with `opts`.
pub fn dumps(value: &Value, opts: DumpOptions) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, opts, 0);
    out
}

/// The packet bytes: pretty JSON followed by one newline, as `print(json.dumps(...))`.
pub fn to_pretty_line(value: &Value) -> String {
    // Room for a typical packet at once; a large one (a projection: half a megabyte) then
    // grows a few times instead of a dozen.
    let mut out = String::with_capacity(64 << 10);
    write_value(&mut out, value, DumpOptions::PRETTY, 0);
    out.push('\n');
    out
}

/// The packet as one line: compact JSON in packet order followed by one newline. JSON
/// escapes every control character inside strings, so the line holds no other newline.
pub fn to_compact_line(value: &Value) -> String {
    let mut out = String::with_capacity(16 << 10);
    write_value(&mut out, value, DumpOptions::COMPACT, 0);
    out.push('\n');
    out
}

/// Canonical JSON (sorted keys, `,`/`:`, raw UTF-8).
pub fn canonical(value: &Value) -> String {
    dumps(value, DumpOptions::CANONICAL)
}

/// Writes `value` as `json.dumps` would with `opts` (`level` is the nesting depth at
/// which it starts, for the indentation).
pub fn write_value<S: Sink + ?Sized>(out: &mut S, value: &Value, opts: DumpOptions, level: usize) {
    value.print(out, opts, level);
}

/// Writes a borrowed value exactly as [`write_value`] writes the [`Value`] it stands for.
pub fn write_json<S: Sink + ?Sized>(out: &mut S, value: &Json<'_>, opts: DumpOptions) {
    value.print(out, opts, 0);
}

/// Something the printers can write: a [`Value`], a [`Json`] view or a string.
trait Print {
    fn print<S: Sink + ?Sized>(&self, out: &mut S, opts: DumpOptions, level: usize);
}

impl Print for Value {
    fn print<S: Sink + ?Sized>(&self, out: &mut S, opts: DumpOptions, level: usize) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Int(i) => write_int(out, *i),
            Value::BigInt(s) => out.push_str(s),
            Value::Float(f) => write_float(out, *f),
            Value::Str(s) => write_string(out, s, opts.ensure_ascii),
            Value::Array(items) => write_array(out, items.iter(), opts, level),
            Value::Object(map) => write_object(out, map.iter(), map.len(), opts, level),
        }
    }
}

impl Print for Json<'_> {
    fn print<S: Sink + ?Sized>(&self, out: &mut S, opts: DumpOptions, level: usize) {
        match *self {
            Json::Null => out.push_str("null"),
            Json::Bool(true) => out.push_str("true"),
            Json::Bool(false) => out.push_str("false"),
            Json::Int(i) => write_int(out, i),
            Json::Float(f) => write_float(out, f),
            Json::Str(s) => write_string(out, s, opts.ensure_ascii),
            Json::Strs(items) => write_array(out, items.iter(), opts, level),
            Json::StrRefs(items) => write_array(out, items.iter(), opts, level),
            Json::Object(entries) => write_object(
                out,
                entries.iter().map(|(k, v)| (*k, v)),
                entries.len(),
                opts,
                level,
            ),
            Json::Items(items) => {
                let count = items.count();
                if count == 0 {
                    out.push_str("[]");
                    return;
                }
                out.push_str("[");
                let mut index = 0;
                items.for_each_item(&mut |item| {
                    item_start(out, opts, index == 0, level + 1);
                    item.print(out, opts, level + 1);
                    index += 1;
                });
                debug_assert_eq!(index, count, "JsonItems::count disagrees with its items");
                newline_indent(out, opts, level);
                out.push_str("]");
            }
            Json::Value(v) => v.print(out, opts, level),
        }
    }
}

impl Print for String {
    fn print<S: Sink + ?Sized>(&self, out: &mut S, opts: DumpOptions, _level: usize) {
        write_string(out, self, opts.ensure_ascii);
    }
}

impl Print for &str {
    fn print<S: Sink + ?Sized>(&self, out: &mut S, opts: DumpOptions, _level: usize) {
        write_string(out, self, opts.ensure_ascii);
    }
}

/// Objects with at most this many keys are sorted for printing without allocating.
const SORT_ON_STACK: usize = 32;

/// Spaces for indentation, sliced instead of pushed one by one.
const SPACES: &str = "                                                                ";
/// A comma, a newline and [`SPACES`]: an item separator and the next item's indentation
/// in one copy.
const COMMA_NEWLINE_SPACES: &str =
    ",\n                                                                ";

fn newline_indent<S: Sink + ?Sized>(out: &mut S, opts: DumpOptions, level: usize) {
    if let Some(width) = opts.indent {
        let n = width * level;
        if let Some(run) = COMMA_NEWLINE_SPACES.get(1..2 + n) {
            out.push_str(run);
            return;
        }
        out.push_str("\n");
        let mut n = n;
        while n > 0 {
            let step = n.min(SPACES.len());
            out.push_str(&SPACES[..step]);
            n -= step;
        }
    }
}

/// What comes before an item of an array or object: the item separator unless it is the
/// first item, then the item's indentation.
fn item_start<S: Sink + ?Sized>(out: &mut S, opts: DumpOptions, first: bool, level: usize) {
    if !first {
        if let Some(width) = opts.indent
            && opts.item_sep == ","
            && let Some(run) = COMMA_NEWLINE_SPACES.get(..2 + width * level)
        {
            out.push_str(run);
            return;
        }
        out.push_str(opts.item_sep);
    }
    newline_indent(out, opts, level);
}

fn write_array<'v, S, V, I>(out: &mut S, items: I, opts: DumpOptions, level: usize)
where
    S: Sink + ?Sized,
    V: Print + 'v,
    I: ExactSizeIterator<Item = &'v V>,
{
    if items.len() == 0 {
        out.push_str("[]");
        return;
    }
    out.push_str("[");
    for (i, item) in items.enumerate() {
        item_start(out, opts, i == 0, level + 1);
        item.print(out, opts, level + 1);
    }
    newline_indent(out, opts, level);
    out.push_str("]");
}

fn write_object<'v, S, V, I>(out: &mut S, entries: I, len: usize, opts: DumpOptions, level: usize)
where
    S: Sink + ?Sized,
    V: Print + 'v,
    I: Iterator<Item = (&'v str, &'v V)>,
{
    if len == 0 {
        out.push_str("{}");
        return;
    }
    out.push_str("{");
    let mut write_entry = |i: usize, k: &str, v: &V| {
        item_start(out, opts, i == 0, level + 1);
        write_string(out, k, opts.ensure_ascii);
        out.push_str(opts.key_sep);
        v.print(out, opts, level + 1);
    };
    if !opts.sort_keys {
        for (i, (k, v)) in entries.enumerate() {
            write_entry(i, k, v);
        }
    } else if len <= SORT_ON_STACK {
        // Small objects are sorted on the stack: no allocation per object, and no sort
        // at all when the keys already come in order.
        let mut sorted: [Option<(&str, &V)>; SORT_ON_STACK] = [None; SORT_ON_STACK];
        let mut n = 0;
        let mut in_order = true;
        for (slot, entry) in sorted.iter_mut().zip(entries) {
            *slot = Some(entry);
            n += 1;
        }
        let sorted = &mut sorted[..n];
        for pair in sorted.windows(2) {
            if let [Some(a), Some(b)] = pair
                && a.0 > b.0
            {
                in_order = false;
                break;
            }
        }
        if !in_order {
            sorted.sort_unstable_by(|a, b| a.map(|e| e.0).cmp(&b.map(|e| e.0)));
        }
        for (i, (k, v)) in sorted.iter().flatten().enumerate() {
            write_entry(i, k, v);
        }
    } else {
        let mut sorted: Vec<(&str, &V)> = entries.collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (i, (k, v)) in sorted.into_iter().enumerate() {
            write_entry(i, k, v);
        }
    }
    newline_indent(out, opts, level);
    out.push_str("}");
}

/// Canonical JSON (sorted keys, `,`/`:` separators, raw UTF-8) of a borrowed value whose
/// every object already lists its keys in ascending order and whose every string and key
/// needs no escape: the common case of digested records, written with plain copies.
/// Returns `false` (with `out` partly written) for any other value; the caller then
/// prints it with [`write_json`] and [`DumpOptions::CANONICAL`], whose bytes this
/// reproduces exactly where it answers `true`.
pub fn write_canonical_plain(out: &mut Vec<u8>, value: &Json<'_>) -> bool {
    fn plain_string(out: &mut Vec<u8>, s: &str) -> bool {
        if plain_prefix(s.as_bytes(), false) != s.len() {
            return false;
        }
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        true
    }
    fn plain_list<'s>(out: &mut Vec<u8>, items: impl Iterator<Item = &'s str>) -> bool {
        out.push(b'[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if !plain_string(out, item) {
                return false;
            }
        }
        out.push(b']');
        true
    }
    match *value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Int(i) => {
            let mut text = String::new();
            write_int(&mut text, i);
            out.extend_from_slice(text.as_bytes());
        }
        Json::Float(f) => {
            if !f.is_finite() {
                return false;
            }
            let mut buf = float::FloatBuf::new();
            out.extend_from_slice(float::float_repr_in(f, &mut buf).as_bytes());
        }
        Json::Str(s) => return plain_string(out, s),
        Json::Strs(items) => return plain_list(out, items.iter().map(String::as_str)),
        Json::StrRefs(items) => return plain_list(out, items.iter().copied()),
        Json::Object(entries) => {
            out.push(b'{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    if entries[i - 1].0 >= *key {
                        return false;
                    }
                    out.push(b',');
                }
                if !plain_string(out, key) {
                    return false;
                }
                out.push(b':');
                if !write_canonical_plain(out, item) {
                    return false;
                }
            }
            out.push(b'}');
        }
        Json::Items(_) | Json::Value(_) => return false,
    }
    true
}

/// [`write_canonical_plain`] of `Json::Object(entries)` whose keys are static field names
/// already in ascending order and free of escapes (a record's field table, checked by
/// debug builds): only the values are checked, so the keys are neither compared nor
/// scanned on every record.
pub fn write_canonical_plain_fields(
    out: &mut Vec<u8>,
    entries: &[(&'static str, Json<'_>)],
) -> bool {
    debug_assert!(
        entries.windows(2).all(|w| w[0].0 < w[1].0)
            && entries
                .iter()
                .all(|(k, _)| plain_prefix(k.as_bytes(), false) == k.len()),
        "field table keys must be sorted, distinct and plain"
    );
    out.push(b'{');
    for (i, (key, item)) in entries.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\"" } else { b",\"" });
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        if !write_canonical_plain(out, item) {
            return false;
        }
    }
    out.push(b'}');
    true
}

/// An integer in decimal, formatted on the stack.
fn write_int<S: Sink + ?Sized>(out: &mut S, i: i64) {
    if i < 0 {
        out.push_str("-");
    }
    out.push_str(Digits::of(u128::from(i.unsigned_abs())).as_str());
}

fn write_float<S: Sink + ?Sized>(out: &mut S, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let mut buf = float::FloatBuf::new();
        out.push_str(float::float_repr_in(f, &mut buf));
    }
}

/// A float as `json.dumps` prints it (`allow_nan=True`).
pub fn json_float(f: f64) -> String {
    let mut out = String::new();
    write_float(&mut out, f);
    out
}
