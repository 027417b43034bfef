//! The readers the views share: a value at a dotted path of a packet, its text, its
//! fields as `(name, value)` lines, its lists and counters, and numbers, intervals and checks
//! as the tables print them.

use crate::output::notes::Notes;
use crate::output::report::show;
use crate::wire::json::{Map, Value};

/// A `- label: value` line added to the markdown summary.
pub type Line = (String, String);

/// The value at a dotted path of nested objects.
pub fn at<'a>(map: &'a Map, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = map.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// [`show`] of the value at `path`.
pub fn s(map: &Map, path: &str) -> String {
    show(at(map, path))
}

/// `- key: value` fields for each dotted path that is present, labelled by the path's
/// last key (the section title says where they come from).
pub fn fields_of(map: &Map, paths: &[&str]) -> Vec<(String, String)> {
    paths
        .iter()
        .filter(|p| at(map, p).is_some())
        .map(|p| {
            let key = p.rsplit('.').next().unwrap_or(p);
            (key.to_owned(), s(map, p))
        })
        .collect()
}

/// The items of the list at `path`; none when it is absent or not a list.
pub fn items<'a>(map: &'a Map, path: &str) -> &'a [Value] {
    at(map, path).and_then(Value::as_array).unwrap_or_default()
}

/// The objects among the items of the list at `path`.
pub fn objects<'a>(map: &'a Map, path: &str) -> impl Iterator<Item = &'a Map> {
    items(map, path).iter().filter_map(Value::as_object)
}

/// [`show`] of each item of the list at `path`.
pub fn strings(map: &Map, path: &str) -> Vec<String> {
    items(map, path).iter().map(|v| show(Some(v))).collect()
}

pub fn is_false(map: &Map, path: &str) -> bool {
    at(map, path) == Some(&Value::Bool(false))
}

/// The entries of the object at `path`, in order; none when it is absent or not an
/// object.
pub fn entries<'a>(map: &'a Map, path: &str) -> impl Iterator<Item = (&'a str, &'a Value)> {
    at(map, path)
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|object| object.iter())
}

/// One `[key, value]` row per entry of the object at `path`: a two-column table.
pub fn entry_rows(map: &Map, path: &str) -> Vec<Vec<String>> {
    entries(map, path)
        .map(|(key, value)| vec![key.to_owned(), show(Some(value))])
        .collect()
}

/// Counts keyed by name as one line, `name n, name n`, in the order given.
pub fn counts<'a>(entries: impl Iterator<Item = (&'a str, &'a Value)>) -> String {
    entries
        .map(|(name, n)| format!("{name} {}", show(Some(n))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ledger a command used (from the run's notes; never with credentials), then
/// [`fields_of`] `paths`.
pub fn ledger_and_fields(notes: &Notes, map: &Map, paths: &[&str]) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = notes
        .ledger
        .iter()
        .map(|l| ("ledger".to_owned(), l.clone()))
        .collect();
    fields.extend(fields_of(map, paths));
    fields
}

/// The number at `path`, integer or float.
pub(super) fn number(map: &Map, path: &str) -> Option<f64> {
    match at(map, path)? {
        Value::Float(x) => Some(*x),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// `x` with three decimals, signed for a difference; `-` when absent.
pub(super) fn fixed(x: Option<f64>, signed: bool) -> String {
    match x {
        None => "-".to_owned(),
        Some(x) if signed => format!("{x:+.3}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// An `{estimate, lower, upper}` object as `0.612 [0.601, 0.623]`; `-` when absent or
/// without an estimate (no episode to measure).
pub(super) fn interval(map: &Map, path: &str, signed: bool) -> String {
    let Some(e) = at(map, path).and_then(Value::as_object) else {
        return "-".to_owned();
    };
    match number(e, "estimate") {
        None => "-".to_owned(),
        est => format!(
            "{} [{}, {}]",
            fixed(est, signed),
            fixed(number(e, "lower"), signed),
            fixed(number(e, "upper"), signed)
        ),
    }
}

/// `[x]` for a passed gate check, `[ ]` otherwise.
pub(super) fn check(map: &Map, path: &str) -> &'static str {
    if at(map, path) == Some(&Value::Bool(true)) {
        "[x]"
    } else {
        "[ ]"
    }
}
