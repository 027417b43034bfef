//! Differential laws of [`crate::utility::scan`]: reading an input straight from its text agrees
//! with parsing it and taking the general path, whenever the direct reading answers.
//!
//! The law, for any text: when [`project_text`] answers, the general path (the command's
//! parse of the bytes, then [`project_input`]) parses the text as one object and prints
//! the same packet or the same error. Valid inputs in every layout must take the direct
//! reading; inputs the general path treats specially (stripped strings, escapes, lists
//! out of order, odd numbers, repeated or missing keys, mismatched context, refusals of
//! any kind) may be left to the general path but must never be answered differently.

use crate::wire::json::Text;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::wire::json::{self, DumpOptions, Value};

use super::{project_text, scan_request};
use crate::utility::observation::Observation;
use crate::utility::props::spec_with;
use crate::utility::testkit::{self, Spec};
use crate::utility::{UtilityError, project_input};

// ---------------------------------------------------------------------------------------
// The law
// ---------------------------------------------------------------------------------------

/// What a path shows the user: the packet bytes, or the error (variant and text).
fn shown(result: &Result<Value, UtilityError>) -> Result<String, String> {
    match result {
        Ok(value) => Ok(json::to_pretty_line(value)),
        Err(err) => Err(format!("{err:?} / {err}")),
    }
}

/// The general path on `text`, as `utility-project` runs it; `None` where the input is
/// refused before projecting (not JSON, not an object). The command's parse
/// (`io::parse_input_object`) is the wire layer's UTF-8 decode and parse and an object
/// check, done here the same way.
fn general(text: &str) -> Option<Result<Value, UtilityError>> {
    let decoded = json::decode_utf8(text.as_bytes()).ok()?;
    let input = json::parse(decoded).ok()?;
    input.as_object()?;
    Some(project_input(&input))
}

/// The direct reading, with its error turned into the command's error.
fn fast(text: &str) -> Option<Result<Value, UtilityError>> {
    project_text(text).map(|r| r.map_err(UtilityError::Projection))
}

/// Checks the law on `text`; `Ok(true)` when the direct reading answered.
fn agrees(text: &str) -> Result<bool, TestCaseError> {
    let Some(fast) = fast(text) else {
        return Ok(false);
    };
    let Some(general) = general(text) else {
        return Err(TestCaseError::fail(format!(
            "the direct reading answered {:?} for a text the general path does not parse \
             as an object: {text:?}",
            shown(&fast)
        )));
    };
    if let (Ok(a), Ok(b)) = (&fast, &general) {
        prop_assert!(a == b, "projections differ for {:?}", text);
    }
    prop_assert_eq!(shown(&fast), shown(&general), "text: {:?}", text);
    // The packet printed from typed data (the command's `--format json` output) is the
    // same bytes.
    prop_assert_eq!(
        typed(text),
        shown(&fast).map_err(|_| ()),
        "text: {:?}",
        text
    );
    Ok(true)
}

/// The direct reading printed from the typed projection; `Err(())` for an error.
fn typed(text: &str) -> Result<String, ()> {
    let request = scan_request(text).ok_or(())?;
    let projection = request.project_typed().map_err(|_| ())?;
    let mut out = String::new();
    projection.write_pretty_line(&mut out);
    Ok(out)
}

fn assert_agrees(text: &str) -> bool {
    agrees(text).unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------------------------------
// Documents written any way JSON allows (and some ways it does not)
// ---------------------------------------------------------------------------------------

/// SplitMix64: the layout and mutation choices of one case, from one seed.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, in_eight: u64) -> bool {
        self.next() % 8 < in_eight
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// A JSON document as written: keys in any order and any number of times, tokens as text.
#[derive(Debug, Clone, PartialEq)]
enum Doc {
    /// A token written as is: a number, a literal, an escaped string, or garbage.
    Raw(String),
    /// A string, written with only the escapes JSON requires.
    Str(String),
    Arr(Vec<Doc>),
    Obj(Vec<(String, Doc)>),
}

impl Doc {
    fn from_value(v: &Value) -> Doc {
        match v {
            Value::Str(_) => Doc::Str(v.as_str().unwrap_or_default().to_owned()),
            Value::Array(items) => Doc::Arr(items.iter().map(Doc::from_value).collect()),
            Value::Object(map) => Doc::Obj(
                map.iter()
                    .map(|(k, v)| (k.to_owned(), Doc::from_value(v)))
                    .collect(),
            ),
            other => Doc::Raw(json::dumps(other, DumpOptions::CANONICAL)),
        }
    }

    fn str(s: &str) -> Doc {
        Doc::Str(s.to_owned())
    }

    fn raw(s: &str) -> Doc {
        Doc::Raw(s.to_owned())
    }

    fn entries_mut(&mut self) -> Option<&mut Vec<(String, Doc)>> {
        match self {
            Doc::Obj(entries) => Some(entries),
            _ => None,
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Doc> {
        self.entries_mut()?
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// How a document is laid out.
#[derive(Debug, Clone)]
struct Layout {
    /// Two-space indentation (the packet printer's layout) or one line.
    pretty: bool,
    /// `", "`/`": "` separators on one line.
    spaced: bool,
    /// Chance in eight of extra JSON whitespace at each gap between tokens.
    noise: u64,
    /// Non-ASCII characters written as `\uXXXX` escapes.
    ascii: bool,
}

fn gap(out: &mut String, layout: &Layout, rng: &mut Rng, newline_level: Option<usize>) {
    if let Some(level) = newline_level.filter(|_| layout.pretty) {
        out.push('\n');
        out.push_str(&"  ".repeat(level));
    }
    if layout.noise > 0 && rng.chance(layout.noise) {
        out.push_str(rng.pick(&[" ", "\t", "\n", "\r\n", "\r", "   ", "\n\t "]));
    }
}

/// A key; one starting with [`RAW_KEY`] is written as is (already escaped).
fn write_key(out: &mut String, key: &str, ascii: bool) {
    match key.strip_prefix(RAW_KEY) {
        Some(raw) => {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        None => json::write_string(out, key, ascii),
    }
}

/// Marks a key written as is.
const RAW_KEY: char = '\u{0}';

fn write_doc(out: &mut String, doc: &Doc, level: usize, layout: &Layout, rng: &mut Rng) {
    match doc {
        Doc::Raw(token) => out.push_str(token),
        Doc::Str(s) => json::write_string(out, s, layout.ascii),
        Doc::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    if layout.spaced && !layout.pretty {
                        out.push(' ');
                    }
                }
                gap(out, layout, rng, Some(level + 1));
                write_doc(out, item, level + 1, layout, rng);
                gap(out, layout, rng, None);
            }
            if !items.is_empty() {
                gap(out, layout, rng, Some(level));
            }
            out.push(']');
        }
        Doc::Obj(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    if layout.spaced && !layout.pretty {
                        out.push(' ');
                    }
                }
                gap(out, layout, rng, Some(level + 1));
                write_key(out, key, layout.ascii);
                gap(out, layout, rng, None);
                out.push(':');
                if layout.spaced || layout.pretty {
                    out.push(' ');
                }
                gap(out, layout, rng, None);
                write_doc(out, value, level + 1, layout, rng);
                gap(out, layout, rng, None);
            }
            if !entries.is_empty() {
                gap(out, layout, rng, Some(level));
            }
            out.push('}');
        }
    }
}

fn render(doc: &Doc, layout: &Layout, rng: &mut Rng) -> String {
    let mut out = String::new();
    gap(&mut out, layout, rng, None);
    write_doc(&mut out, doc, 0, layout, rng);
    gap(&mut out, layout, rng, None);
    out
}

/// Every object's keys in a random order (each object shuffled with even odds).
fn shuffle_keys(doc: &mut Doc, rng: &mut Rng) {
    match doc {
        Doc::Obj(entries) => {
            if rng.chance(4) {
                rng.shuffle(entries);
            }
            for (_, v) in entries.iter_mut() {
                shuffle_keys(v, rng);
            }
        }
        Doc::Arr(items) => items.iter_mut().for_each(|v| shuffle_keys(v, rng)),
        _ => {}
    }
}

/// The positions (paths of entry/item indices) of the nodes `keep` selects.
fn paths(doc: &Doc, keep: &dyn Fn(&[String], &Doc) -> bool) -> Vec<Vec<usize>> {
    fn walk(
        doc: &Doc,
        keys: &mut Vec<String>,
        path: &mut Vec<usize>,
        keep: &dyn Fn(&[String], &Doc) -> bool,
        out: &mut Vec<Vec<usize>>,
    ) {
        if keep(keys, doc) {
            out.push(path.clone());
        }
        match doc {
            Doc::Obj(entries) => {
                for (i, (k, v)) in entries.iter().enumerate() {
                    keys.push(k.clone());
                    path.push(i);
                    walk(v, keys, path, keep, out);
                    path.pop();
                    keys.pop();
                }
            }
            Doc::Arr(items) => {
                for (i, v) in items.iter().enumerate() {
                    keys.push("[]".to_owned());
                    path.push(i);
                    walk(v, keys, path, keep, out);
                    path.pop();
                    keys.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, &mut Vec::new(), &mut Vec::new(), keep, &mut out);
    out
}

fn at_mut<'a>(doc: &'a mut Doc, path: &[usize]) -> &'a mut Doc {
    let Some((first, rest)) = path.split_first() else {
        return doc;
    };
    match doc {
        Doc::Obj(entries) => at_mut(&mut entries[*first].1, rest),
        Doc::Arr(items) => at_mut(&mut items[*first], rest),
        _ => doc,
    }
}

/// A random node `keep` selects, if any.
fn pick_node<'a>(
    doc: &'a mut Doc,
    rng: &mut Rng,
    keep: &dyn Fn(&[String], &Doc) -> bool,
) -> Option<&'a mut Doc> {
    let found = paths(doc, keep);
    if found.is_empty() {
        return None;
    }
    let path = rng.pick(&found).clone();
    Some(at_mut(doc, &path))
}

/// The key path of a node as `a.b.[].c`.
fn dotted(keys: &[String]) -> String {
    keys.join(".")
}

fn in_observation(keys: &[String]) -> bool {
    keys.len() >= 3 && keys[0] == "observations"
}

// ---------------------------------------------------------------------------------------
// Valid inputs
// ---------------------------------------------------------------------------------------

/// A valid input before it is written out.
#[derive(Debug, Clone)]
struct Case {
    observations: Vec<Value>,
    reducer_version: Option<&'static str>,
    previous_null: bool,
    pretty: bool,
    spaced: bool,
    noise: u64,
    ascii: bool,
    seed: u64,
}

/// 1..`max_distinct` observations over a few subjects, then redeliveries of them: exact
/// duplicates, retries at another time, and conflicting versions under the same id.
fn stream(max_distinct: usize, max_redeliveries: usize) -> impl Strategy<Value = Vec<Value>> {
    (
        prop::collection::vec(spec_with(&["item", "set", "none"]), 1..max_distinct),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                0u8..4,
                0.0f64..=1.0,
            ),
            0..max_redeliveries,
        ),
    )
        .prop_map(|(specs, redeliveries)| {
            let base: Vec<Observation> = specs.iter().map(Spec::build).collect();
            let mut out = base.clone();
            for (pick, at, kind, confidence) in redeliveries {
                let mut o = base[pick.index(base.len())].clone();
                match kind {
                    0 => {}
                    1 => o.created_at = Text::from("2026-08-16T00:00:00+00:00"),
                    2 => o.confidence = confidence,
                    _ => o.reason_codes = vec!["stage2_conflict".to_owned()],
                }
                out.insert(at.index(out.len() + 1), o);
            }
            out.iter().map(Observation::to_value).collect()
        })
}

fn case(max_distinct: usize, max_redeliveries: usize) -> impl Strategy<Value = Case> {
    (
        stream(max_distinct, max_redeliveries),
        prop_oneof![
            Just(None),
            Just(Some("memory_utility_reducer_v0")),
            Just(Some("reducer:custom-v1")),
        ],
        any::<bool>(),
        (any::<bool>(), any::<bool>(), 0u64..3, any::<bool>()),
        any::<u64>(),
    )
        .prop_map(
            |(
                observations,
                reducer_version,
                previous_null,
                (pretty, spaced, noise, ascii),
                seed,
            )| {
                Case {
                    observations,
                    reducer_version,
                    previous_null,
                    pretty,
                    spaced,
                    noise,
                    ascii,
                    seed,
                }
            },
        )
}

impl Case {
    fn layout(&self) -> Layout {
        Layout {
            pretty: self.pretty,
            spaced: self.spaced,
            noise: self.noise,
            ascii: self.ascii,
        }
    }

    /// The input document, keys shuffled by `rng`.
    fn doc(&self, rng: &mut Rng) -> Doc {
        let mut entries = vec![
            (
                "observations".to_owned(),
                Doc::Arr(self.observations.iter().map(Doc::from_value).collect()),
            ),
            ("scope".to_owned(), Doc::from_value(&testkit::scope())),
            (
                "retrieval_snapshot_ref".to_owned(),
                Doc::str("retrieval:stage2"),
            ),
            ("policy_snapshot_ref".to_owned(), Doc::str("policy:stage2")),
        ];
        if let Some(version) = self.reducer_version {
            entries.push(("reducer_version".to_owned(), Doc::str(version)));
        }
        if self.previous_null {
            entries.push(("previous_projection".to_owned(), Doc::raw("null")));
        }
        let mut doc = Doc::Obj(entries);
        shuffle_keys(&mut doc, rng);
        doc
    }
}

// ---------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------

/// Characters Python's `str.strip()` removes that may stand raw in a JSON string.
const STRIPPED: [&str; 12] = [
    " ",
    "\u{a0}",
    "\u{3000}",
    "\u{2003}",
    "\u{85}",
    "\u{1680}",
    "\u{2028}",
    "\u{2029}",
    "\u{202f}",
    "\u{205f}",
    "\u{200a}",
    "  \u{a0} ",
];

/// Characters it keeps (look-alikes of whitespace and the control characters JSON
/// refuses raw).
const KEPT: [&str; 6] = ["\u{feff}", "\u{200b}", "\u{180e}", "\u{1c}", "\t", "\u{7f}"];

/// Values of every other JSON type, and strings the lenient rules treat specially.
const ODD_VALUES: [&str; 22] = [
    "0",
    "1",
    "-1",
    "0.5",
    "true",
    "false",
    "null",
    "{}",
    "[]",
    "{\"a\": \"b\"}",
    "[\"x\"]",
    "[[]]",
    "\"True\"",
    "\"None\"",
    "\"\"",
    "\"   \"",
    "\"\\u00a0\"",
    "1e400",
    "NaN",
    "-Infinity",
    "18446744073709551616",
    "{\"agent_id\": {\"agent_id\": \"agent:stage2\"}}",
];

/// Confidence written every way: equal numbers in other forms, edges and out of range.
const CONFIDENCES: [&str; 36] = [
    "0",
    "1",
    "0.0",
    "1.0",
    "1e0",
    "1E0",
    "0.5e0",
    "5e-1",
    "5E-1",
    "0.50",
    "0.500000000000000000000001",
    "-0",
    "-0.0",
    "0e10",
    "1e400",
    "-1e400",
    "1e-400",
    "4.9e-324",
    "NaN",
    "Infinity",
    "-Infinity",
    "18446744073709551616",
    "9223372036854775808",
    "-9223372036854775809",
    "-1",
    "2",
    "1.0000000000000002",
    "0.99999999999999999999",
    "1.00000000000000000001",
    "\"0.5\"",
    "true",
    "null",
    "01",
    ".5",
    "+0.5",
    "0.",
];

const TIMESTAMPS: [&str; 18] = [
    "2026-08-15T00:00:00",
    "2026-08-15",
    "2026-08-15T00:00:00Z",
    "2026-08-15 00:00:00+00:00",
    "20260815T000000Z",
    "2026-08-15T00:00:00.000001+05:30",
    "2026-08-15T00:00:00z",
    "2026-08-15T00:00:00+24:00",
    "2026-08-15T00:00:00+23:59",
    "2026-02-30T00:00:00Z",
    "2026-08-15T24:00:00Z",
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:59:59-00:01",
    "not a time",
    "2026-08-15T00:00:00+00:00\u{3000}",
    "\u{a0}2026-08-15T12:00:00-07:00",
    "2026-08-15T00:00:60Z",
    "",
];

/// The kinds of document mutation, each exercising a rule the general path applies.
const DOC_MUTATIONS: u8 = 22;
/// The kinds of text mutation, applied after writing the document out.
const TEXT_MUTATIONS: u8 = 8;

/// A string value (not a key) chosen among all strings, or among an observation's.
fn any_string<'a>(doc: &'a mut Doc, rng: &mut Rng, only_observations: bool) -> Option<&'a mut Doc> {
    pick_node(doc, rng, &|keys, d| {
        matches!(d, Doc::Str(_)) && (!only_observations || in_observation(keys))
    })
}

fn any_object<'a>(doc: &'a mut Doc, rng: &mut Rng) -> Option<&'a mut Doc> {
    pick_node(doc, rng, &|_, d| matches!(d, Doc::Obj(_)))
}

fn observation_field<'a>(doc: &'a mut Doc, rng: &mut Rng, field: &str) -> Option<&'a mut Doc> {
    let field = field.to_owned();
    pick_node(doc, rng, &move |keys, _| {
        in_observation(keys) && keys.len() == 3 && keys[2] == field
    })
}

fn escape_one(s: &str, rng: &mut Rng) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return "\"\\u0061\"".to_owned();
    }
    let at = rng.below(chars.len());
    let mut out = String::from("\"");
    for (i, c) in chars.iter().enumerate() {
        if i == at {
            match (c, rng.below(3)) {
                ('/', _) => out.push_str("\\/"),
                (_, 0) if c.len_utf16() == 1 => out.push_str(&format!("\\u{:04x}", *c as u32)),
                (_, 1) if c.len_utf16() == 1 => out.push_str(&format!("\\u{:04X}", *c as u32)),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        } else {
            let mut one = String::new();
            json::write_string(&mut one, &c.to_string(), false);
            out.push_str(&one[1..one.len() - 1]);
        }
    }
    out.push('"');
    out
}

fn mutate_doc(doc: &mut Doc, kind: u8, rng: &mut Rng) {
    match kind {
        // Surrounding whitespace Python strips, anywhere.
        0 => {
            let only_observations = rng.chance(6);
            if let Some(Doc::Str(s)) = any_string(doc, rng, only_observations) {
                let pad = rng.pick(&STRIPPED).to_string();
                match rng.below(3) {
                    0 => *s = format!("{pad}{s}"),
                    1 => *s = format!("{s}{pad}"),
                    _ => *s = format!("{pad}{s}{pad}"),
                }
            }
        }
        // Characters Python keeps, around or inside a string.
        1 => {
            let only_observations = rng.chance(6);
            if let Some(Doc::Str(s)) = any_string(doc, rng, only_observations) {
                let odd = rng.pick(&KEPT);
                match rng.below(3) {
                    0 => *s = format!("{odd}{s}"),
                    1 => *s = format!("{s}{odd}"),
                    _ => {
                        let mid = s
                            .char_indices()
                            .nth(s.chars().count() / 2)
                            .map_or(0, |p| p.0);
                        s.insert_str(mid, odd);
                    }
                }
            }
        }
        // One character of a string (or of a key) escaped.
        2 => {
            if rng.chance(6) {
                if let Some(node) = any_string(doc, rng, false)
                    && let Doc::Str(s) = node
                {
                    *node = Doc::Raw(escape_one(s, rng));
                }
            } else if let Some(Doc::Obj(entries)) = any_object(doc, rng)
                && !entries.is_empty()
            {
                let i = rng.below(entries.len());
                let escaped = escape_one(&entries[i].0, rng);
                entries[i].0 = format!("{RAW_KEY}{}", &escaped[1..escaped.len() - 1]);
            }
        }
        // List items out of order, repeated, or too many.
        3 => {
            if let Some(Doc::Arr(items)) = pick_node(doc, rng, &|keys, d| {
                in_observation(keys) && keys.len() == 3 && matches!(d, Doc::Arr(_))
            }) {
                match rng.below(4) {
                    0 => items.reverse(),
                    1 => rng.shuffle(items),
                    2 => {
                        if let Some(first) = items.first().cloned() {
                            let at = rng.below(items.len() + 1);
                            items.insert(at, first);
                        }
                    }
                    _ => {
                        let mut n = 0;
                        while items.len() < 17 {
                            items.push(Doc::Str(format!("{:016x}", 0xabc0 + n)));
                            n += 1;
                        }
                    }
                }
            }
        }
        // Any value replaced by a value of another type.
        4 => {
            let observations_only = rng.chance(6);
            if let Some(node) = pick_node(doc, rng, &|keys, _| {
                !keys.is_empty() && (!observations_only || in_observation(keys))
            }) {
                *node = Doc::raw(rng.pick(&ODD_VALUES));
            }
        }
        // Confidence written another way.
        5 => {
            if let Some(node) = observation_field(doc, rng, "confidence") {
                *node = Doc::raw(rng.pick(&CONFIDENCES));
            }
        }
        // A key twice, with the same or another value, before or after.
        6 => {
            if let Some(Doc::Obj(entries)) = any_object(doc, rng)
                && !entries.is_empty()
            {
                let i = rng.below(entries.len());
                let mut twin = entries[i].clone();
                if rng.chance(4) {
                    twin.1 = Doc::raw(rng.pick(&ODD_VALUES));
                }
                let at = rng.below(entries.len() + 1);
                entries.insert(at, twin);
            }
        }
        // A key missing.
        7 => {
            if let Some(Doc::Obj(entries)) = any_object(doc, rng)
                && !entries.is_empty()
            {
                let i = rng.below(entries.len());
                entries.remove(i);
            }
        }
        // An extra key: unknown, or known at another level.
        8 => {
            if let Some(Doc::Obj(entries)) = any_object(doc, rng) {
                let key = rng.pick(&[
                    "extra",
                    "scope",
                    "agent_id",
                    "observations",
                    "previous_projection",
                    "reducer_version",
                    "observation_fingerprint",
                    "Scope",
                    "",
                ]);
                let at = rng.below(entries.len() + 1);
                entries.insert(at, ((*key).to_owned(), Doc::str("agent:stage2")));
            }
        }
        // Another schema version.
        9 => {
            if let Some(node) = observation_field(doc, rng, "schema_version") {
                *node = Doc::raw(rng.pick(&[
                    "\" memory_utility_observation_v0\"",
                    "\"memory_utility_observation_v0 \"",
                    "\"memory_utility_observation_v1\"",
                    "\"memory_utility_observation_v\\u0030\"",
                    "\"\"",
                    "0",
                    "null",
                ]));
            }
        }
        // A boundary flag set, coerced or absent.
        10 => {
            let flag = rng.pick(&[
                "grants_new_action_authority",
                "provider_write_performed",
                "external_writes_performed",
                "raw_content_captured",
            ]);
            if let Some(node) = observation_field(doc, rng, flag) {
                *node = Doc::raw(rng.pick(&["true", "0", "null", "\"false\"", "[]", "false"]));
            }
        }
        // The context no longer matching the observations.
        11 => {
            let (key, value) = rng.pick(&[
                ("retrieval_snapshot_ref", "retrieval:other"),
                ("policy_snapshot_ref", "policy:other"),
                ("agent_id", "agent:other"),
                ("surface_id", "loopx.other"),
                ("corpus_id", "other-corpus"),
            ]);
            let top = key.ends_with("_ref");
            if let Some(node) = pick_node(doc, rng, &|keys, _| {
                keys.last().map(String::as_str) == Some(key)
                    && if top {
                        keys.len() == 1
                    } else {
                        keys.len() == 2
                    }
            }) {
                *node = Doc::str(value);
            }
        }
        // created_at in other forms, valid or not.
        12 => {
            if let Some(node) = observation_field(doc, rng, "created_at") {
                *node = Doc::str(rng.pick(&TIMESTAMPS));
            }
        }
        // observation_id altered.
        13 => {
            if let Some(Doc::Str(id)) = observation_field(doc, rng, "observation_id") {
                match rng.below(4) {
                    0 => *id = id.to_uppercase(),
                    1 => {
                        let last = id.pop();
                        id.push(if last == Some('0') { '1' } else { '0' });
                    }
                    2 => *id = format!("{id}0"),
                    _ => *id = id.replacen("muo_", "muof_", 1),
                }
            }
        }
        // previous_projection that is not null, or twice.
        14 => {
            if let Doc::Obj(entries) = doc {
                entries.retain(|(k, _)| k != "previous_projection");
                let value = rng.pick(&[
                    "{}",
                    "{\"ok\": true}",
                    "true",
                    "\"null\"",
                    "0",
                    "[]",
                    "null",
                ]);
                let at = rng.below(entries.len() + 1);
                entries.insert(at, ("previous_projection".to_owned(), Doc::raw(value)));
                if rng.chance(2) {
                    entries.push(("previous_projection".to_owned(), Doc::raw("null")));
                }
            }
        }
        // reducer_version blank, padded, escaped or not a string.
        15 => {
            if let Doc::Obj(entries) = doc {
                entries.retain(|(k, _)| k != "reducer_version");
                let value = rng.pick(&[
                    "\"\"",
                    "\"   \"",
                    "\"\u{3000}\"",
                    "\"\\u3000\"",
                    "\" memory_utility_reducer_v0 \"",
                    "\"memory_utility_reducer_v\\u0030\"",
                    "\"memory_utility_reducer_v1\"",
                    "5",
                    "null",
                    "true",
                    "[\"memory_utility_reducer_v0\"]",
                    "\"has space\"",
                ]);
                let at = rng.below(entries.len() + 1);
                entries.insert(at, ("reducer_version".to_owned(), Doc::raw(value)));
            }
        }
        // The top-level context in another shape.
        16 => {
            if let Some(node) = pick_node(doc, rng, &|keys, _| {
                keys.len() == 1 || (keys.len() == 2 && keys[0] == "scope")
            }) {
                *node = Doc::raw(rng.pick(&ODD_VALUES));
            }
        }
        // The scope padded at the top level (strict there, lenient in observations).
        17 => {
            if let Some(Doc::Str(s)) = pick_node(doc, rng, &|keys, d| {
                matches!(d, Doc::Str(_)) && !keys.is_empty() && !in_observation(keys)
            }) {
                *s = format!("{}{s}", rng.pick(&STRIPPED));
            }
        }
        // observations not a list of objects.
        18 => {
            if let Some(Doc::Arr(items)) = doc.get_mut("observations") {
                let odd = Doc::raw(rng.pick(&["1", "\"x\"", "[]", "null", "{}", "true"]));
                let at = rng.below(items.len() + 1);
                items.insert(at, odd);
            } else if let Some(node) = doc.get_mut("observations") {
                *node = Doc::raw("{}");
            }
        }
        // A whole observation's scope from another world (its id no longer matches).
        19 => {
            if let Some(Doc::Str(s)) = pick_node(doc, rng, &|keys, d| {
                in_observation(keys)
                    && keys.len() == 4
                    && keys[2] == "scope"
                    && matches!(d, Doc::Str(_))
            }) {
                s.push('x');
            }
        }
        // Deep nesting where a context value stands (past the parser's depth limit when
        // counted from the document, one short of it when counted from the value).
        20 => {
            let key = rng.pick(&[
                "scope",
                "reducer_version",
                "previous_projection",
                "retrieval_snapshot_ref",
            ]);
            if let Some(node) = doc.get_mut(key) {
                let depth = 510 + rng.below(4);
                *node = Doc::Raw(format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            }
        }
        // Observations removed, or the list emptied.
        _ => {
            if let Some(Doc::Arr(items)) = doc.get_mut("observations") {
                if rng.chance(2) {
                    items.clear();
                } else if !items.is_empty() {
                    let i = rng.below(items.len());
                    items.remove(i);
                }
            }
        }
    }
}

fn char_boundary(text: &str, rng: &mut Rng) -> usize {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    rng.pick(&bounds)
}

fn mutate_text(text: &mut String, kind: u8, rng: &mut Rng) {
    match kind {
        // Trailing data.
        0 => text.push_str(rng.pick(&[
            "x", "}", " {}", ",", "\u{0}", "\u{a0}", "]", "null", "\n\n", "\t", "\u{feff}", "/",
        ])),
        // A BOM or other leading bytes.
        1 => text.insert_str(
            0,
            rng.pick(&["\u{feff}", "\u{a0}", "\u{c}", " \n", "x", "["]),
        ),
        // Not an object at the top.
        2 => {
            *text = match rng.below(6) {
                0 => format!("[{text}]"),
                1 => "{}".to_owned(),
                2 => " { } ".to_owned(),
                3 => String::new(),
                4 => "[]".to_owned(),
                _ => "\"{}\"".to_owned(),
            }
        }
        // Truncated.
        3 => {
            let at = char_boundary(text, rng);
            text.truncate(at);
        }
        // One character deleted.
        4 => {
            let at = char_boundary(text, rng);
            if at < text.len() {
                text.remove(at);
            }
        }
        // One JSON-ish character inserted.
        5 => {
            let at = char_boundary(text, rng);
            let c = rng.pick(&[
                '"', ',', ':', '{', '}', '[', ']', ' ', '\\', '0', '-', 'e', '\u{a0}', '\u{c}', 'f',
            ]);
            text.insert(at, c);
        }
        // Whitespace JSON does not allow between tokens.
        6 => {
            if let Some((i, _)) = text
                .char_indices()
                .filter(|(_, c)| matches!(c, ',' | ':'))
                .nth(rng.below(64))
            {
                text.insert_str(
                    i + 1,
                    rng.pick(&["\u{a0}", "\u{c}", "\u{b}", "\u{3000}", "\u{85}"]),
                );
            }
        }
        // `false` spelled otherwise.
        _ => {
            let spelled = rng.pick(&["fals", "False", "false0", "falsee", "false "]);
            *text = text.replacen("false", spelled, 1);
        }
    }
}

/// `case` written out after `mutations` (kind, seed) were applied.
fn mutated_text(case: &Case, mutations: &[(u8, u64)]) -> String {
    let mut rng = Rng(case.seed);
    let mut doc = case.doc(&mut rng);
    for &(kind, seed) in mutations {
        if kind < DOC_MUTATIONS {
            mutate_doc(&mut doc, kind, &mut Rng(seed));
        }
    }
    let mut text = render(&doc, &case.layout(), &mut rng);
    for &(kind, seed) in mutations {
        if kind >= DOC_MUTATIONS {
            mutate_text(&mut text, kind - DOC_MUTATIONS, &mut Rng(seed));
        }
    }
    text
}

/// Mutations that keep the input valid and in the common shape: surrounding whitespace
/// on observation values, list order, equal numbers in other forms, other valid
/// timestamps.
fn keep_valid(doc: &mut Doc, kind: u8, rng: &mut Rng) {
    match kind {
        0 => {
            if let Some(Doc::Str(s)) = pick_node(doc, rng, &|keys, d| {
                matches!(d, Doc::Str(_))
                    && in_observation(keys)
                    && dotted(&keys[2..]) != "schema_version"
            }) {
                let pad = rng.pick(&STRIPPED);
                *s = format!("{pad}{s}{}", rng.pick(&STRIPPED));
            }
        }
        1 => {
            if let Some(Doc::Arr(items)) = pick_node(doc, rng, &|keys, d| {
                in_observation(keys) && keys.len() == 3 && matches!(d, Doc::Arr(_))
            }) {
                rng.shuffle(items);
                items.reverse();
            }
        }
        2 => {
            if let Some(Doc::Raw(token)) = observation_field(doc, rng, "confidence")
                && let Ok(f) = token.parse::<f64>()
            {
                let plain = format!("{f:?}");
                let mut forms = vec![format!("{f:e}"), format!("{f:E}"), plain.clone()];
                if plain.contains('.') && !plain.contains('e') {
                    forms.push(format!("{plain}000"));
                }
                if f.fract() == 0.0 {
                    forms.push(format!("{}", f as i64));
                }
                let form = rng.pick(&forms);
                // Only JSON numbers of the same value.
                if form.parse::<f64>().ok() == Some(f) {
                    *token = form;
                }
            }
        }
        _ => {
            if let Some(node) = observation_field(doc, rng, "created_at") {
                *node = Doc::str(rng.pick(&[
                    "2026-08-15T00:00:00Z",
                    "2026-08-15 00:00:00+00:00",
                    "20260815T000000Z",
                    "2026-08-15T00:00:00.000001+05:30",
                    "2026-08-14T23:00:00-01:00",
                    "2026-08-15T00:00Z",
                ]));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Laws
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Valid inputs in any layout take the direct reading, and it agrees.
    #[test]
    fn valid_inputs_are_read_directly_and_agree(case in case(12, 28)) {
        let mut rng = Rng(case.seed);
        let doc = case.doc(&mut rng);
        let text = render(&doc, &case.layout(), &mut rng);
        prop_assert!(agrees(&text)?, "the direct reading declined a valid input: {}", text);
    }

    /// Inputs kept valid under the lenient rules (stripped values, lists out of order,
    /// equal numbers, other timestamp forms) still take the direct reading, and agree.
    #[test]
    fn leniently_valid_inputs_are_read_directly_and_agree(
        case in case(6, 6),
        edits in prop::collection::vec((0u8..4, any::<u64>()), 1..6),
    ) {
        let mut rng = Rng(case.seed);
        let mut doc = case.doc(&mut rng);
        for (kind, seed) in edits {
            keep_valid(&mut doc, kind, &mut Rng(seed));
        }
        // Non-ASCII padding must stay raw to be read directly.
        let layout = Layout { ascii: false, ..case.layout() };
        let text = render(&doc, &layout, &mut rng);
        prop_assert!(agrees(&text)?, "the direct reading declined a valid input: {}", text);
    }
}

/// An observation valid on its own (its id recomputed) but outside the input's context.
fn foreign(observation: &Value, kind: u8) -> Value {
    let Ok(mut o) = crate::utility::observation::validate_observation(observation) else {
        return observation.clone();
    };
    match kind {
        0 => o.scope.agent_id = Text::from("agent:other"),
        1 => o.scope.surface_id = Text::from("loopx.other"),
        2 => o.retrieval_snapshot_ref = Text::from("retrieval:other"),
        _ => o.policy_snapshot_ref = Text::from("policy:other"),
    }
    o.observation_id = Text::from(o.computed_id());
    o.to_value()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// One observation outside the context: the general path rejects the batch, the
    /// direct reading leaves it to it.
    #[test]
    fn an_observation_outside_the_context_is_left_to_the_general_path(
        mut case in case(6, 6),
        pick in any::<prop::sample::Index>(),
        kind in 0u8..4,
    ) {
        let i = pick.index(case.observations.len());
        case.observations[i] = foreign(&case.observations[i], kind);
        let mut rng = Rng(case.seed);
        let text = render(&case.doc(&mut rng), &case.layout(), &mut rng);
        prop_assert!(!agrees(&text)?, "answered a batch with a foreign observation");
        let status = general(&text)
            .and_then(Result::ok)
            .and_then(|p| p.get("status").and_then(Value::as_str).map(str::to_owned));
        prop_assert_eq!(status.as_deref(), Some("rejected"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Whatever is done to an input, the direct reading never answers differently.
    #[test]
    fn mutated_inputs_never_diverge(
        case in case(5, 5),
        mutations in prop::collection::vec((0u8..DOC_MUTATIONS + TEXT_MUTATIONS, any::<u64>()), 1..4),
    ) {
        let text = mutated_text(&case, &mutations);
        agrees(&text)?;
    }
}

// ---------------------------------------------------------------------------------------
// Sharp edges, by hand
// ---------------------------------------------------------------------------------------

fn one_observation() -> Value {
    Spec::item("helpful", "deterministic_effect", 0.9, "evaluation:helpful")
        .build()
        .to_value()
}

fn compact(observations: &[Value]) -> String {
    let case = Case {
        observations: observations.to_vec(),
        reducer_version: None,
        previous_null: false,
        pretty: false,
        spaced: false,
        noise: 0,
        ascii: false,
        seed: 0,
    };
    let doc = Doc::Obj(match case.doc(&mut Rng(0)) {
        Doc::Obj(mut entries) => {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
        }
        other => vec![("x".to_owned(), other)],
    });
    render(&doc, &case.layout(), &mut Rng(0))
}

fn general_ok(text: &str) -> Value {
    match general(text) {
        Some(Ok(value)) => value,
        other => panic!(
            "the general path must project {text:?}: {:?}",
            other.map(|r| shown(&r))
        ),
    }
}

#[test]
fn a_valid_input_is_read_directly() {
    let text = compact(&[one_observation()]);
    assert!(assert_agrees(&text));
    assert_eq!(general_ok(&text).get("ok"), Some(&Value::Bool(true)));
}

#[test]
fn whitespace_padded_ids_still_hash_right_and_agree() {
    let observation = one_observation();
    let id = observation
        .get("observation_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for pad in ["  ", "\u{a0}", "\u{3000}", "\u{2028} \u{85}"] {
        let text =
            compact(std::slice::from_ref(&observation)).replace(&id, &format!("{pad}{id}{pad}"));
        assert!(assert_agrees(&text), "padded with {pad:?}: {text}");
        let projection = general_ok(&text);
        assert_eq!(projection.get("ok"), Some(&Value::Bool(true)));
        assert_eq!(
            projection
                .get("last_observation_id")
                .and_then(Value::as_str),
            Some(id.as_str())
        );
        // The padded scope of the observation is stripped too; the top-level one is not.
        let scoped = text.replacen("\"agent:stage2\"", "\"\u{3000}agent:stage2 \"", 1);
        assert_agrees(&scoped);
    }
}

#[test]
fn escaped_strings_are_left_to_the_general_path() {
    let text = compact(&[one_observation()]);
    for (from, to) in [
        ("\"evaluator:stage2\"", "\"ev\\u0061luator:stage2\""),
        ("\"helpful\"", "\"help\\u0066ul\""),
        ("\"2026-08-15T00:00:00Z\"", "\"2026-08-15T00:00:00\\u005a\""),
        ("\"observations\"", "\"observ\\u0061tions\""),
        ("\"agent:stage2\"", "\"agent:stage2\\u3000\""),
    ] {
        let escaped = text.replacen(from, to, 1);
        assert_ne!(escaped, text, "{from} must occur");
        assert!(fast(&escaped).is_none(), "{to}");
        assert_eq!(
            general_ok(&escaped).get("ok"),
            Some(&Value::Bool(true)),
            "{to}"
        );
    }
    // `\/` in a value that holds no slash otherwise: the general path refuses the ref.
    let slashed = text.replacen("\"evaluator:stage2\"", "\"evaluator:\\/stage2\"", 1);
    assert!(fast(&slashed).is_none());
    assert_agrees(&slashed);
}

#[test]
fn repeated_keys_are_left_to_the_general_path() {
    let observation = one_observation();
    let text = compact(std::slice::from_ref(&observation));
    // Top level: observations twice, the last (valid) one winning in the general path.
    let twice = text.replacen(
        "{\"observations\":",
        "{\"observations\":[],\"observations\":",
        1,
    );
    assert!(fast(&twice).is_none());
    assert_eq!(
        general_ok(&twice).get("accepted_observation_count"),
        Some(&Value::Int(1))
    );
    // In an observation: the same value twice.
    let field = text.replacen(
        "\"outcome_ref\":",
        "\"outcome_ref\":\"effect:stage2\",\"outcome_ref\":",
        1,
    );
    assert!(fast(&field).is_none());
    assert_eq!(general_ok(&field).get("ok"), Some(&Value::Bool(true)));
    // In a scope.
    let scope = text.replacen(
        "\"agent_id\":",
        "\"agent_id\":\"agent:stage2\",\"agent_id\":",
        1,
    );
    assert!(fast(&scope).is_none());
    assert_agrees(&scope);
    // previous_projection twice, both null.
    let previous = text.replacen(
        '{',
        "{\"previous_projection\":null,\"previous_projection\":null,",
        1,
    );
    assert!(fast(&previous).is_none());
    assert_eq!(general_ok(&previous).get("ok"), Some(&Value::Bool(true)));
}

#[test]
fn more_than_1024_observations_are_left_to_the_general_path() {
    let observation = one_observation();
    let at_limit = compact(&vec![
        observation.clone();
        crate::utility::reducer::MAX_OBSERVATIONS
    ]);
    assert!(assert_agrees(&at_limit));
    let over = compact(&vec![
        observation;
        crate::utility::reducer::MAX_OBSERVATIONS + 1
    ]);
    assert!(fast(&over).is_none());
    let rejected = general_ok(&over);
    assert_eq!(
        rejected.get("status").and_then(Value::as_str),
        Some("rejected")
    );
}

#[test]
fn refused_documents_are_left_to_the_general_path() {
    let text = compact(&[one_observation()]);
    for bad in [
        format!("\u{feff}{text}"),
        format!("{text}x"),
        format!("{text}{{}}"),
        format!("[{text}]"),
        text[..text.len() - 1].to_owned(),
        "{}".to_owned(),
        String::new(),
        text.replacen("false", "False", 1),
        text.replacen(",", ",\u{a0}", 1),
    ] {
        assert!(fast(&bad).is_none(), "{bad:?}");
        assert_agrees(&bad);
    }
    // A context value nested to the parser's limit counted from itself, past it counted
    // from the document.
    let deep = format!("{}{}", "[".repeat(511), "]".repeat(511));
    let nested = text.replacen("\"retrieval:stage2\"", &deep, 1);
    assert!(general(&nested).is_none());
    assert!(fast(&nested).is_none());
}

#[test]
fn a_truncated_history_agrees() {
    let stream = testkit::history_overflow(Spec::item(
        "helpful",
        "deterministic_effect",
        0.9,
        "evaluation:first",
    ));
    let text = compact(&stream);
    assert!(assert_agrees(&text));
    assert_eq!(
        general_ok(&text).get("observation_history_truncated"),
        Some(&Value::Bool(true))
    );
}
