//! Ordered JSON values with Python-compatible parsing and printing.
//!
//! Owns the one value type every packet is built from ([`Value`], [`Map`]), a parser that
//! accepts exactly what Python's `json.loads` accepts (including `NaN`, `Infinity`,
//! arbitrary-precision integers and duplicate keys, where the last value wins at the first
//! key's position) and reports errors with Python's wording and positions, and the printers
//! that reproduce `json.dumps` byte for byte for every separator, `sort_keys` and
//! `ensure_ascii` combination the contracts use. It does no I/O.
//!
//! Values are compact (24 bytes; text of up to 24 bytes inline; arrays and small objects
//! in exact-size slices; objects of [`Map::INDEXED_AT`] keys or more with a hash index), so
//! parsing is linear in the input and a parsed document takes at most
//! [`MEMORY_PER_INPUT_BYTE`] bytes per input byte: the parser counts what it allocates and
//! refuses a document that would take more, and refuses nesting past 512 levels.

use compact_str::CompactString;
use indexmap::IndexMap;

use crate::wire::float;

/// Text held by a [`Value`]: strings of up to 24 bytes live inline, longer ones in one
/// exact heap allocation.
pub type Text = CompactString;

/// An ordered JSON object: keys keep their insertion order; a repeated key keeps its
/// first position and takes the last value, like a Python dict.
///
/// Small objects are one exact-size slice searched linearly; past [`Map::INDEXED_AT`]
/// entries the map carries a hash index, so building or reading a large object stays
/// linear.
#[derive(Debug, Clone, Default)]
pub struct Map {
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    Small(Box<[(Text, Value)]>),
    Indexed(Box<IndexMap<Text, Value>>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Small(Box::default())
    }
}

/// A JSON value with Python's distinctions: integers of any size apart from floats.
///
/// 24 bytes: containers are exact-size slices and short text is stored inline, so a
/// parsed document stays a small multiple of its text.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// An integer outside `i64`, kept as its canonical decimal text (optional `-`, no
    /// leading zeros).
    BigInt(Box<str>),
    Float(f64),
    Str(Text),
    Array(Box<[Value]>),
    Object(Map),
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl Map {
    /// Entry count from which a map keeps a hash index beside its ordered entries.
    pub const INDEXED_AT: usize = 24;

    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map; the capacity hint is accepted for symmetry with `Vec`.
    pub fn with_capacity(_n: usize) -> Self {
        Self::default()
    }

    /// Builds a map from ordered pairs with dict semantics for repeated keys, in time
    /// linear in the number of pairs.
    pub fn from_pairs(pairs: Vec<(Text, Value)>) -> Self {
        if pairs.len() >= Self::INDEXED_AT {
            let mut index = IndexMap::with_capacity(pairs.len());
            for (k, v) in pairs {
                index.insert(k, v);
            }
            return Self::from_index(index);
        }
        // Keys built by `obj!` are distinct: then the pairs are the entries as they are.
        let distinct = pairs.iter().enumerate().all(|(i, (key, _))| {
            pairs[..i]
                .iter()
                .all(|(earlier, _)| earlier.len() != key.len() || earlier != key)
        });
        if distinct {
            return Map {
                repr: Repr::Small(pairs.into_boxed_slice()),
            };
        }
        let mut out: Vec<(Text, Value)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            // Lengths first: most keys differ in length, and that needs no memcmp.
            match out
                .iter_mut()
                .find(|(key, _)| key.len() == k.len() && *key == k)
            {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        Map {
            repr: Repr::Small(out.into_boxed_slice()),
        }
    }

    fn from_index(mut index: IndexMap<Text, Value>) -> Self {
        if index.len() < Self::INDEXED_AT {
            return Map {
                repr: Repr::Small(index.into_iter().collect()),
            };
        }
        index.shrink_to_fit();
        Map {
            repr: Repr::Indexed(Box::new(index)),
        }
    }

    /// True when the map carries a hash index (at least [`Map::INDEXED_AT`] entries).
    pub fn is_indexed(&self) -> bool {
        matches!(self.repr, Repr::Indexed(_))
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Small(entries) => entries.len(),
            Repr::Indexed(index) => index.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.repr {
            Repr::Small(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            Repr::Indexed(index) => index.get(key),
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match &mut self.repr {
            Repr::Small(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            Repr::Indexed(index) => index.get_mut(key),
        }
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Inserts like a Python dict: an existing key keeps its position and takes the value.
    pub fn insert(&mut self, key: impl Into<Text>, value: impl Into<Value>) {
        let key = key.into();
        let value = value.into();
        if let Some(slot) = self.get_mut(&key) {
            *slot = value;
            return;
        }
        match &mut self.repr {
            Repr::Small(entries) => {
                let mut grown = std::mem::take(entries).into_vec();
                if grown.len() + 1 >= Self::INDEXED_AT {
                    let mut index: IndexMap<Text, Value> = grown.into_iter().collect();
                    index.insert(key, value);
                    self.repr = Repr::Indexed(Box::new(index));
                } else {
                    grown.reserve_exact(1);
                    grown.push((key, value));
                    *entries = grown.into_boxed_slice();
                }
            }
            Repr::Indexed(index) => {
                index.insert(key, value);
            }
        }
    }

    /// Builder form of [`Map::insert`].
    pub fn with(mut self, key: impl Into<Text>, value: impl Into<Value>) -> Self {
        self.insert(key, value);
        self
    }

    /// Removes a key, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        match &mut self.repr {
            Repr::Small(entries) => {
                let idx = entries.iter().position(|(k, _)| k == key)?;
                let mut rest = std::mem::take(entries).into_vec();
                let (_, value) = rest.remove(idx);
                *entries = rest.into_boxed_slice();
                Some(value)
            }
            Repr::Indexed(index) => index.shift_remove(key),
        }
    }

    /// The shallow merge Python writes as `self | other`.
    pub fn merged(mut self, other: &Map) -> Map {
        for (k, v) in other.iter() {
            self.insert(k, v.clone());
        }
        self
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _)| k)
    }

    pub fn iter(&self) -> MapIter<'_> {
        match &self.repr {
            Repr::Small(entries) => MapIter::Small(entries.iter()),
            Repr::Indexed(index) => MapIter::Indexed(index.iter()),
        }
    }

    /// The ordered entries, consuming the map.
    pub fn into_entries(self) -> Vec<(Text, Value)> {
        match self.repr {
            Repr::Small(entries) => entries.into_vec(),
            Repr::Indexed(index) => index.into_iter().collect(),
        }
    }
}

/// Iterator over a [`Map`]'s entries in order.
pub enum MapIter<'a> {
    Small(std::slice::Iter<'a, (Text, Value)>),
    Indexed(indexmap::map::Iter<'a, Text, Value>),
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a str, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            MapIter::Small(it) => it.next().map(|(k, v)| (k.as_str(), v)),
            MapIter::Indexed(it) => it.next().map(|(k, v)| (k.as_str(), v)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            MapIter::Small(it) => it.size_hint(),
            MapIter::Indexed(it) => it.size_hint(),
        }
    }
}

impl<K: Into<Text>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        Map::from_pairs(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Self {
        i64::try_from(v).map_or_else(|_| Value::BigInt(v.to_string().into()), Value::Int)
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Self {
        i64::try_from(v).map_or_else(|_| Value::BigInt(v.to_string().into()), Value::Int)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(Text::new(v))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(Text::from(v))
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Str(Text::new(v))
    }
}
impl From<Text> for Value {
    fn from(v: Text) -> Self {
        Value::Str(v)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Self {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl From<Map> for Value {
    fn from(v: Map) -> Self {
        Value::Object(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl Value {
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// Python truthiness of the value.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::BigInt(_) => true,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(m) => !m.is_empty(),
        }
    }
    /// Looks a key up when the value is an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }
    /// The Python type name of the value, as used in some error strings.
    pub fn py_type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }
}

/// Builds an ordered [`Map`] from `key => value` pairs.
#[macro_export]
macro_rules! obj {
    () => { $crate::wire::json::Map::new() };
    ($($k:expr => $v:expr),+ $(,)?) => {
        $crate::wire::json::Map::from_pairs(vec![
            $( ($crate::wire::json::Text::from($k), $crate::wire::json::Value::from($v)) ),+
        ])
    };
}

/// Builds a [`Value::Array`] of strings.
pub fn str_list<S: AsRef<str>>(items: &[S]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|s| Value::Str(Text::new(s.as_ref())))
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------

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

/// Where the printers put their bytes: a `String`, or a digest state fed as the bytes
/// are produced (see [`crate::wire::digest`]), so that hashing a value never builds its
/// text first.
pub trait Sink {
    /// Appends `s`.
    fn push_str(&mut self, s: &str);
}

impl Sink for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
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
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut n = i.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push_str("-");
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[pos..]).unwrap_or_default());
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

/// Bytes `json.dumps` escapes with `ensure_ascii=False`: `"`, `\\` and controls.
const ESCAPE_RAW: [bool; 256] = escape_table(false);
/// Bytes `json.dumps` escapes with `ensure_ascii=True`: also everything past `~`.
const ESCAPE_ASCII: [bool; 256] = escape_table(true);

const fn escape_table(ensure_ascii: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] =
            b < 0x20 || b == b'"' as usize || b == b'\\' as usize || (ensure_ascii && b > 0x7e);
        b += 1;
    }
    table
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `word` that equals `byte`, and perhaps of bytes above
/// an equal one (a borrow only runs upwards): the lowest bit set is always exact.
const fn eq_bytes(word: u64, byte: u8) -> u64 {
    let x = word ^ (LOW_BITS * byte as u64);
    x.wrapping_sub(LOW_BITS) & !x & HIGH_BITS
}

/// The length of the prefix of `bytes` that needs no escape: no `"`, `\\` or control
/// byte, and with `ensure_ascii` nothing past `~`. The same set ends a plain run of
/// string text for the parser. Eight bytes are tested at a time; the lowest flagged byte
/// of a word is the first special one.
fn plain_prefix(bytes: &[u8], ensure_ascii: bool) -> usize {
    let special = |chunk: &[u8]| -> Option<usize> {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // A byte below 0x20: `(b - 0x20)` borrows into bit 7 while `b` itself has it clear.
        let mut hits = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS
            | eq_bytes(word, b'"')
            | eq_bytes(word, b'\\');
        if ensure_ascii {
            hits |= word & HIGH_BITS | eq_bytes(word, 0x7f);
        }
        (hits != 0).then(|| (hits.trailing_zeros() / 8) as usize)
    };
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        if let Some(at) = special(chunk) {
            return i + at;
        }
        i += 8;
    }
    if i == bytes.len() {
        return i;
    }
    // Fewer than eight bytes left: the last eight, overlapping bytes already known to be
    // plain, settle them at once.
    if let Some(from) = bytes.len().checked_sub(8) {
        return match special(&bytes[from..]) {
            Some(at) => from + at,
            None => bytes.len(),
        };
    }
    let table = if ensure_ascii {
        &ESCAPE_ASCII
    } else {
        &ESCAPE_RAW
    };
    while let Some(&b) = bytes.get(i) {
        if table[usize::from(b)] {
            break;
        }
        i += 1;
    }
    i
}

/// Writes a JSON string literal with Python's escaping rules.
///
/// Runs of bytes that need no escape are copied at once; only `"`, `\\`, control
/// characters and (with `ensure_ascii`) everything outside `' '..='~'` are escaped.
pub fn write_string<S: Sink + ?Sized>(out: &mut S, s: &str, ensure_ascii: bool) {
    out.push_str("\"");
    let bytes = s.as_bytes();
    let mut i = 0;
    loop {
        let run = i + plain_prefix(&bytes[i..], ensure_ascii);
        out.push_str(&s[i..run]);
        i = run;
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            0..0x20 | 0x7f => push_unicode_escape(out, u16::from(b)),
            _ => {
                // ensure_ascii and a non-ASCII character: its UTF-16 units.
                let c = s[i..].chars().next().unwrap_or('\u{fffd}');
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    push_unicode_escape(out, *unit);
                }
                i += c.len_utf8();
                continue;
            }
        }
        i += 1;
    }
    out.push_str("\"");
}

/// `\uXXXX` with lowercase hex digits.
fn push_unicode_escape<S: Sink + ?Sized>(out: &mut S, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = *b"\\u0000";
    for (k, slot) in buf[2..].iter_mut().enumerate() {
        *slot = HEX[usize::from((unit >> (12 - 4 * k)) & 0xf)];
    }
    // Only ASCII was written.
    out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
}

// ---------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------

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
            self.skip_ws();
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
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
            self.skip_ws();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                _ => return Err(self.error_at("Expecting ',' delimiter", self.pos)),
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

// ---------------------------------------------------------------------------------------
// serde bridges (typed wire structs and schemas)
// ---------------------------------------------------------------------------------------

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => serializer.serialize_i64(*i),
            Value::BigInt(s) => serializer.serialize_str(s),
            Value::Float(f) => serializer.serialize_f64(*f),
            Value::Str(s) => serializer.serialize_str(s),
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut m = serializer.serialize_map(Some(map.len()))?;
                for (k, v) in map.iter() {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

/// Converts a `serde_json` value (built with `preserve_order`) into an ordered [`Value`].
pub fn from_serde(value: serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::Str(s.into()),
        serde_json::Value::Array(items) => {
            Value::Array(items.into_iter().map(from_serde).collect())
        }
        serde_json::Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, from_serde(v))).collect())
        }
    }
}

/// Serializes a typed wire struct into an ordered [`Value`] (field order = key order).
pub fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, serde_json::Error> {
    serde_json::to_value(value).map(from_serde)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list made item by item while printing.
    struct Numbers(Vec<i64>);

    impl JsonItems for Numbers {
        fn count(&self) -> usize {
            self.0.len()
        }

        fn for_each_item(&self, each: &mut dyn FnMut(&Json<'_>)) {
            for n in &self.0 {
                let inner = Numbers((0..*n).collect());
                each(&Json::Object(&[
                    ("n", Json::Int(*n)),
                    ("below", Json::Items(&inner)),
                ]));
            }
        }
    }

    #[test]
    fn items_print_as_the_list_they_stand_for() {
        for numbers in [vec![], vec![0], vec![2, 0, 3]] {
            let items = Numbers(numbers);
            let json = Json::Object(&[("items", Json::Items(&items)), ("after", Json::Null)]);
            let value = json.to_value();
            for opts in [
                DumpOptions::PRETTY,
                DumpOptions::CANONICAL,
                DumpOptions::LEGACY_RAW,
            ] {
                let mut printed = String::new();
                write_json(&mut printed, &json, opts);
                assert_eq!(printed, dumps(&value, opts), "{opts:?}");
            }
        }
        let mut plain = Vec::new();
        assert!(!write_canonical_plain(
            &mut plain,
            &Json::Items(&Numbers(vec![1]))
        ));
    }

    fn roundtrip(text: &str) -> String {
        dumps(&parse(text).expect("valid"), DumpOptions::PRETTY)
    }

    #[test]
    fn pretty_matches_python_layout() {
        let v = parse(r#"{"a": [1, 2.5, {"b": []}], "c": {}, "d": "é\n"}"#).expect("valid");
        assert_eq!(
            dumps(&v, DumpOptions::PRETTY),
            "{\n  \"a\": [\n    1,\n    2.5,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": \"é\\n\"\n}"
        );
    }

    #[test]
    fn duplicate_key_keeps_first_position_and_last_value() {
        let v = parse(r#"{"a": 1, "b": 2, "a": 3}"#).expect("valid");
        assert_eq!(dumps(&v, DumpOptions::CANONICAL), r#"{"a":3,"b":2}"#);
        let keys: Vec<&str> = v.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["a", "b"]);
    }

    #[test]
    fn built_maps_keep_dict_semantics_for_repeated_keys() {
        let map = Map::from_pairs(vec![
            (Text::from("a"), Value::Int(1)),
            (Text::from("bb"), Value::Int(2)),
            (Text::from("a"), Value::Int(3)),
        ]);
        let keys: Vec<&str> = map.keys().collect();
        assert_eq!(keys, ["a", "bb"]);
        assert_eq!(map.get("a"), Some(&Value::Int(3)));
        let distinct = Map::from_pairs(vec![
            (Text::from("b"), Value::Int(1)),
            (Text::from("a"), Value::Int(2)),
        ]);
        assert_eq!(distinct.keys().collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn large_objects_keep_dict_semantics_past_the_index_threshold() {
        let n = Map::INDEXED_AT * 3;
        let mut text = String::from("{");
        for i in 0..n {
            text.push_str(&format!("\"k{i}\": {i}, "));
        }
        // Repeat every third key with a new value, then close.
        for i in (0..n).step_by(3) {
            text.push_str(&format!("\"k{i}\": \"again{i}\", "));
        }
        text.push_str("\"last\": true}");
        let v = parse(&text).expect("valid");
        let map = v.as_object().expect("object");
        assert!(map.is_indexed());
        assert_eq!(map.len(), n + 1);
        let keys: Vec<&str> = map.keys().collect();
        assert_eq!(keys[0], "k0");
        assert_eq!(keys[n - 1], format!("k{}", n - 1));
        assert_eq!(keys[n], "last");
        assert_eq!(map.get("k3"), Some(&Value::from("again3")));
        assert_eq!(map.get("k4"), Some(&Value::Int(4)));
        let mut small: Map = map.iter().map(|(k, v)| (k, v.clone())).take(3).collect();
        assert!(!small.is_indexed());
        assert_eq!(small.remove("k1"), Some(Value::Int(1)));
        assert_eq!(small.keys().collect::<Vec<_>>(), ["k0", "k2"]);
    }

    #[test]
    fn map_insert_switches_to_the_index_and_keeps_order() {
        let mut map = Map::new();
        for i in 0..Map::INDEXED_AT * 2 {
            map.insert(format!("k{i}"), i);
        }
        map.insert("k0", "first");
        assert!(map.is_indexed());
        assert_eq!(map.keys().next(), Some("k0"));
        assert_eq!(map.get("k0"), Some(&Value::from("first")));
        assert_eq!(map.remove("k1"), Some(Value::Int(1)));
        assert_eq!(map.keys().nth(1), Some("k2"));
    }

    #[test]
    fn refuses_documents_too_dense_to_hold() {
        // Chains of one-element arrays take about 16 bytes per input byte.
        let chain = format!("{}{}", "[".repeat(500), "]".repeat(500));
        let doc = format!("[{}]", vec![chain.as_str(); 2000].join(","));
        let err = parse(&doc).expect_err("too dense");
        assert!(
            err.message.starts_with("JSON document too dense"),
            "{}",
            err.message
        );
        // A flat list of one-digit numbers (12 bytes per byte) and ordinary shapes pass.
        let digits = format!("[{}]", vec!["0"; 200_000].join(","));
        assert!(parse(&digits).is_ok());
        let objects = format!("[{}]", vec![r#"{"a":"b"}"#; 100_000].join(","));
        assert!(parse(&objects).is_ok());
    }

    #[test]
    fn refuses_nesting_deeper_than_the_limit_without_recursing_further() {
        let deep = "[".repeat(100_000);
        assert_eq!(
            parse(&deep).expect_err("deep").message,
            "JSON nesting deeper than 512 levels is not supported"
        );
        let ok = format!("{}{}", "[".repeat(512), "]".repeat(512));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn values_stay_compact() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Map>(), 16);
    }

    #[test]
    fn keeps_ints_apart_from_floats() {
        assert_eq!(
            roundtrip("[1, 1.0, -0.0, 1e16, 1E-6, 100000000000000000000]"),
            "[\n  1,\n  1.0,\n  -0.0,\n  1e+16,\n  1e-06,\n  100000000000000000000\n]"
        );
    }

    #[test]
    fn refuses_integers_longer_than_python_allows() {
        assert!(parse(&"9".repeat(4300)).is_ok());
        let err = parse(&format!("[-{}]", "1".repeat(4301))).expect_err("too long");
        assert_eq!(
            err.message,
            "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"
        );
    }

    #[test]
    fn accepts_python_literals() {
        assert_eq!(
            dumps(
                &parse("[NaN, Infinity, -Infinity, 1e999]").expect("valid"),
                DumpOptions::CANONICAL
            ),
            "[NaN,Infinity,-Infinity,Infinity]"
        );
    }

    #[test]
    fn escapes_like_python() {
        let v = Value::Str(("\"\\\u{1}\u{7f}é😀/\u{2028}".to_owned()).into());
        assert_eq!(
            dumps(&v, DumpOptions::PRETTY),
            "\"\\\"\\\\\\u0001\u{7f}é😀/\u{2028}\""
        );
        assert_eq!(
            dumps(&v, DumpOptions::LEGACY_ASCII),
            "\"\\\"\\\\\\u0001\\u007f\\u00e9\\ud83d\\ude00/\\u2028\""
        );
    }

    #[test]
    fn error_messages_match_python() {
        let cases = [
            ("", "Expecting value: line 1 column 1 (char 0)"),
            (
                "{'a': 1}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            (
                "{\"a\" 1}",
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
            ("{} x", "Extra data: line 1 column 4 (char 3)"),
            (
                "\"abc",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            ("\"a\\x\"", "Invalid \\escape: line 1 column 3 (char 2)"),
            ("\n\n  [", "Expecting value: line 3 column 4 (char 5)"),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (
                "\u{feff}{}",
                "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
            ),
            (
                "\"é\u{1}\"",
                "Invalid control character at: line 1 column 3 (char 2)",
            ),
            (
                "\"\\u12\"",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                "{\"a\":1,}",
                "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
            ),
            ("1.", "Extra data: line 1 column 2 (char 1)"),
            ("[-]", "Expecting value: line 1 column 2 (char 1)"),
            ("01", "Extra data: line 1 column 2 (char 1)"),
        ];
        for (text, message) in cases {
            assert_eq!(
                parse(text).expect_err(text).message,
                message,
                "input {text:?}"
            );
        }
    }

    #[test]
    fn utf8_errors_match_python_codec() {
        assert_eq!(
            decode_utf8(b"\xff{}").expect_err("invalid").message,
            "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"
        );
    }

    #[test]
    fn merge_keeps_left_positions() {
        let a = crate::obj! {"x" => 1, "y" => 2};
        let b = crate::obj! {"z" => 3, "x" => 4};
        let keys: Vec<String> = a
            .merged(&b)
            .iter()
            .map(|(k, v)| format!("{k}={}", dumps(v, DumpOptions::CANONICAL)))
            .collect();
        assert_eq!(keys, ["x=4", "y=2", "z=3"]);
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::{DumpOptions, Json, Map, Value, dumps, parse, write_canonical_plain, write_json};

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::Float),
            "\\PC{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::vec(("[a-z\\u{e9}\\u{1f600}]{0,6}", inner), 0..6)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map>())),
            ]
        })
    }

    /// Python's escaping, one character at a time: the definition the fast printer keeps.
    fn escape_per_char(s: &str, ensure_ascii: bool) -> String {
        let mut out = String::from('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || (ensure_ascii && (c as u32) > 0x7e) => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// A leaf of the borrowed shapes digested records are made of.
    #[derive(Debug, Clone)]
    enum Leaf {
        Null,
        Bool(bool),
        Int(i64),
        Float(f64),
        Str(String),
        Strs(Vec<String>),
    }

    impl Leaf {
        fn json(&self) -> Json<'_> {
            match self {
                Leaf::Null => Json::Null,
                Leaf::Bool(b) => Json::Bool(*b),
                Leaf::Int(i) => Json::Int(*i),
                Leaf::Float(f) => Json::Float(*f),
                Leaf::Str(s) => Json::Str(s),
                Leaf::Strs(items) => Json::Strs(items),
            }
        }
    }

    fn leaf() -> impl Strategy<Value = Leaf> {
        // Mostly plain text, sometimes a character that must be escaped.
        let text = "[a-z0-9_.:\\-]{0,8}|[a-z\"\\\\\u{1}\u{e9}\u{7f}]{0,4}";
        prop_oneof![
            Just(Leaf::Null),
            any::<bool>().prop_map(Leaf::Bool),
            any::<i64>().prop_map(Leaf::Int),
            prop_oneof![any::<f64>(), 0.0..1.0f64].prop_map(Leaf::Float),
            text.prop_map(Leaf::Str),
            prop::collection::vec(text, 0..4).prop_map(Leaf::Strs),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Where the plain canonical writer answers, its bytes are the canonical
        /// printer's; sorted plain records always get an answer.
        #[test]
        fn plain_canonical_writer_matches_the_printer(
            outer in prop::collection::vec(("[a-z_\"]{0,6}", leaf()), 0..8),
            inner in prop::collection::vec(("[a-z_]{0,6}", leaf()), 0..5),
            sort in any::<bool>(),
        ) {
            let mut inner: Vec<(String, Leaf)> = inner;
            let mut outer: Vec<(String, Leaf)> = outer;
            if sort {
                inner.sort_by(|a, b| a.0.cmp(&b.0));
                inner.dedup_by(|a, b| a.0 == b.0);
                outer.sort_by(|a, b| a.0.cmp(&b.0));
                outer.dedup_by(|a, b| a.0 == b.0);
            }
            let inner_entries: Vec<(&str, Json<'_>)> =
                inner.iter().map(|(k, v)| (k.as_str(), v.json())).collect();
            let mut entries: Vec<(&str, Json<'_>)> =
                outer.iter().map(|(k, v)| (k.as_str(), v.json())).collect();
            entries.push(("~nested", Json::Object(&inner_entries)));
            let value = Json::Object(&entries);
            let mut printed = String::new();
            write_json(&mut printed, &value, DumpOptions::CANONICAL);
            let mut fast = Vec::new();
            let answered = write_canonical_plain(&mut fast, &value);
            if answered {
                prop_assert_eq!(std::str::from_utf8(&fast).ok(), Some(printed.as_str()));
            }
            let plain = |s: &str| !s.contains(['"', '\\']) && !s.chars().any(|c| c < ' ');
            let leaf_plain = |l: &Leaf| match l {
                Leaf::Str(s) => plain(s),
                Leaf::Strs(items) => items.iter().all(|s| plain(s)),
                Leaf::Float(f) => f.is_finite(),
                _ => true,
            };
            let all_plain = outer.iter().chain(&inner).all(|(k, v)| plain(k) && leaf_plain(v));
            let sorted_strictly = |list: &[(String, Leaf)]| list.windows(2).all(|w| w[0].0 < w[1].0);
            if sort && all_plain && sorted_strictly(&outer) && sorted_strictly(&inner)
                && outer.last().is_none_or(|(k, _)| k.as_str() < "~nested")
            {
                prop_assert!(answered);
            }
        }

        /// A static field table is written as the general plain writer writes the same
        /// object, and answers exactly when it does.
        #[test]
        fn field_table_writer_matches_the_plain_writer(
            leaves in prop::collection::vec(leaf(), 0..6),
        ) {
            const KEYS: [&str; 6] = ["a", "application_id", "b_c", "scope", "zeta", "~"];
            let entries: Vec<(&'static str, Json<'_>)> =
                KEYS.iter().zip(&leaves).map(|(k, v)| (*k, v.json())).collect();
            let mut general = Vec::new();
            let general_answer = write_canonical_plain(&mut general, &Json::Object(&entries));
            let mut fields = Vec::new();
            let fields_answer = super::write_canonical_plain_fields(&mut fields, &entries);
            prop_assert_eq!(fields_answer, general_answer);
            if general_answer {
                prop_assert_eq!(fields, general);
            }
        }

        /// The byte-run printer escapes exactly like the per-character definition.
        #[test]
        fn string_escaping_matches_the_per_character_rules(s in "(\\PC|[\\x00-\\x1f\\x7f\"\\\\])*") {
            for ensure_ascii in [false, true] {
                let mut out = String::new();
                super::write_string(&mut out, &s, ensure_ascii);
                prop_assert_eq!(out, escape_per_char(&s, ensure_ascii));
            }
        }

        /// Repeated keys keep Python's dict semantics (first position, last value) at
        /// any object size, whether or not the parser's seen-key mask flags them.
        #[test]
        fn repeated_keys_keep_first_position_and_last_value(
            keys in prop::collection::vec("[a-c]{0,3}|[a-z_]{20,30}", 0..60)
        ) {
            let mut text = String::from("{");
            let mut expected: Vec<(String, usize)> = Vec::new();
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(&format!("\"{key}\": {i}"));
                match expected.iter_mut().find(|(k, _)| k == key) {
                    Some(slot) => slot.1 = i,
                    None => expected.push((key.clone(), i)),
                }
            }
            text.push('}');
            let parsed = parse(&text).expect("valid");
            let map = parsed.as_object().expect("object");
            let got: Vec<(String, usize)> = map
                .iter()
                .map(|(k, v)| match v {
                    Value::Int(i) => (k.to_owned(), usize::try_from(*i).unwrap_or(usize::MAX)),
                    _ => (k.to_owned(), usize::MAX),
                })
                .collect();
            prop_assert_eq!(got, expected);
        }

        /// The word-at-a-time scan stops exactly where the byte-by-byte rule does.
        #[test]
        fn plain_prefix_stops_at_the_first_byte_to_escape(
            s in "[a-z ~\u{7f}\u{e9}\u{1f600}\"\\\\\u{0}-\u{1f}]{0,40}"
        ) {
            for ensure_ascii in [false, true] {
                let table = if ensure_ascii { &super::ESCAPE_ASCII } else { &super::ESCAPE_RAW };
                let want = s.bytes().position(|b| table[usize::from(b)]).unwrap_or(s.len());
                prop_assert_eq!(super::plain_prefix(s.as_bytes(), ensure_ascii), want);
            }
        }

        /// Every printer's output parses back to the same value (key order included for
        /// the insertion-order printers).
        #[test]
        fn printed_values_parse_back(v in value()) {
            for opts in [DumpOptions::PRETTY, DumpOptions::LEGACY_RAW, DumpOptions::LEGACY_ASCII] {
                let text = dumps(&v, opts);
                let back = parse(&text).expect("printed JSON parses");
                if !opts.sort_keys {
                    prop_assert_eq!(&back, &v);
                }
                prop_assert_eq!(dumps(&back, opts), text);
            }
        }
    }
}
