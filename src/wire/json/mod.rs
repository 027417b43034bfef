//! Ordered JSON values with Python-compatible parsing and printing.
//!
//! Owns the one value type every packet is built from ([`Value`], [`Map`]) and its
//! bridges to serde; the parser ([`parse`]: exactly what Python's `json.loads` accepts,
//! including `NaN`, `Infinity`, arbitrary-precision integers and duplicate keys, where
//! the last value wins at the first key's position, with Python's error wording and
//! positions) and the printers (`print`: `json.dumps` byte for byte for every separator,
//! `sort_keys` and `ensure_ascii` combination the contracts use, of a [`Value`] or of a
//! borrowed [`Json`] view) are its submodules, re-exported here, and share the string
//! escaping rules of `escape`. Floats print through [`crate::wire::float`]. It does no
//! I/O.
//!
//! Values are compact (24 bytes; text of up to 24 bytes inline; arrays and small objects
//! in exact-size slices; objects of [`Map::INDEXED_AT`] keys or more with a hash index), so
//! parsing is linear in the input and a parsed document takes at most
//! [`MEMORY_PER_INPUT_BYTE`] bytes per input byte: the parser counts what it allocates and
//! refuses a document that would take more, and refuses nesting past 512 levels.

mod escape;
mod parse;
mod print;
mod ser;
#[cfg(test)]
mod tests;

use compact_str::CompactString;
use indexmap::IndexMap;

pub use escape::write_string;
pub use parse::{
    Cursor, MEMORY_PER_INPUT_BYTE, MEMORY_SLACK, ParseError, decode_utf8, parse, parse_prefix,
};
pub use print::{
    DumpOptions, Json, JsonItems, canonical, dumps, json_float, to_compact_line, to_pretty_line,
    write_canonical_plain, write_canonical_plain_fields, write_json, write_value,
};

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

    /// The value at a path of keys through nested objects (`["scope", "project_ref"]`);
    /// `None` when a key is missing or a value on the way is not an object.
    pub fn at(&self, path: &[&str]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        rest.iter().try_fold(self.get(first)?, |v, k| v.get(k))
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

/// The strings of a JSON list, in order (other items skipped); nothing when `v` is not a
/// list. The reverse of [`str_list`].
pub fn str_items(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
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

/// Serializes a typed wire struct into an ordered [`Value`] (field order = key order),
/// directly: the same value as `serde_json::to_value` then [`from_serde`].
pub fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, serde_json::Error> {
    ser::to_value(value)
}
