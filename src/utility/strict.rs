//! Strict field rules shared by the reducer context and the readback validator, plus
//! Python's `==` on JSON values.
//!
//! "Strict" means: a value must already be in its canonical form (a JSON string equal to
//! its own stripped text, a sorted unique list); nothing is coerced or normalized. Every
//! failure carries the reference's message. Pure: no I/O.

use std::fmt::Display;
#[cfg(test)]
use std::sync::LazyLock;

#[cfg(test)]
use regex::Regex;

use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt;
use crate::wire::text::{FieldError, FieldResult, is_prefixed_hex, is_ref};
use crate::wire::timestamp::{self, Instant, TimestampError};

#[cfg(test)]
fn re(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(r) => r,
        Err(err) => panic!("built-in pattern {pattern} must compile: {err}"),
    }
}

#[cfg(test)]
pub use crate::recall::MEMORY_DIGEST_RE;
/// `^muo_[0-9a-f]{64}$`: an observation id (the definition [`is_observation_id`] is
/// tested against).
#[cfg(test)]
pub static OBSERVATION_ID_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^muo_[0-9a-f]{64}$"));
/// `^muof_[0-9a-f]{64}$`: an observation fingerprint (the definition [`is_fingerprint`]
/// is tested against).
#[cfg(test)]
pub static FINGERPRINT_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^muof_[0-9a-f]{64}$"));

pub use crate::recall::is_memory_digest;

/// `^muo_[0-9a-f]{64}$`: an observation id, without the regex engine.
pub fn is_observation_id(s: &str) -> bool {
    is_prefixed_hex(s, "muo_", 64)
}

/// `^muof_[0-9a-f]{64}$`: an observation fingerprint, without the regex engine.
pub fn is_fingerprint(s: &str) -> bool {
    is_prefixed_hex(s, "muof_", 64)
}

/// The four scope ids in declaration order (observation packets, fallback context).
pub const SCOPE_KEYS: [&str; 4] = ["agent_id", "project_id", "corpus_id", "surface_id"];
/// The four scope ids in sorted order (projection packets, strict validation order).
pub const SCOPE_KEYS_SORTED: [&str; 4] = ["agent_id", "corpus_id", "project_id", "surface_id"];

/// `"{label} has invalid fields: missing=[...], unknown=[...]"` unless the key set of
/// `map` is exactly `expected`.
pub fn exact_fields(map: &Map, expected: &[&str], label: impl Display) -> FieldResult<()> {
    // Packets are usually printed in their contract's key order: one comparison per key.
    if map.len() == expected.len() && map.keys().zip(expected).all(|(k, e)| k == *e) {
        return Ok(());
    }
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|k| !map.contains_key(k))
        .collect();
    let unknown: Vec<&str> = map.keys().filter(|k| !expected.contains(k)).collect();
    if missing.is_empty() && unknown.is_empty() {
        return Ok(());
    }
    Err(FieldError(format!(
        "{label} has invalid fields: missing={}, unknown={}",
        keys::repr_list(missing),
        keys::repr_list(unknown)
    )))
}

/// `"{label} is missing: a, b"` (sorted, bounded by [`keys::list`]) when `map` lacks any of
/// the `required` keys; the companion of [`crate::wire::text::reject_unknown`].
pub fn reject_missing(map: &Map, label: &str, required: &[&str]) -> FieldResult<()> {
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|k| !map.contains_key(k))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(FieldError(format!(
        "{label} is missing: {}",
        keys::list(missing)
    )))
}

/// `"{label} must be an object"` unless the value is an object.
pub fn object(v: &Value, label: impl Display) -> FieldResult<&Map> {
    v.as_object()
        .ok_or_else(|| FieldError(format!("{label} must be an object")))
}

/// A strict opaque reference: a string, already stripped, matching `REF`.
pub fn strict_ref(v: &Value, label: impl Display) -> FieldResult<&str> {
    match v {
        // REF admits no whitespace at all, so "equal to its stripped form" is implied.
        Value::Str(s) if is_ref(s) => Ok(s),
        _ => Err(FieldError(format!(
            "{label} must be an opaque public-safe reference"
        ))),
    }
}

/// A strict observation id (`muo_` + 64 hex).
pub fn observation_ref(v: &Value, label: impl Display) -> FieldResult<&str> {
    let s = strict_ref(v, &label)?;
    if is_observation_id(s) {
        Ok(s)
    } else {
        Err(FieldError(format!(
            "{label} must be a canonical observation id"
        )))
    }
}

/// A strict digest list: 1–16 canonical memory digests, sorted and unique.
pub fn memory_digests(v: &Value, label: impl Display) -> FieldResult<Vec<String>> {
    check_memory_digests(v, label)?;
    Ok(strings(v))
}

/// The rules of [`memory_digests`] without copying the digests out.
pub fn check_memory_digests(v: &Value, label: impl Display) -> FieldResult<()> {
    let items = match v {
        Value::Array(items) if !items.is_empty() && items.len() <= 16 => items,
        _ => {
            return Err(FieldError(format!(
                "{label} must contain between 1 and 16 memory digests"
            )));
        }
    };
    for item in items {
        let digest = strict_ref(item, &label)?;
        if !is_memory_digest(digest) {
            return Err(FieldError(format!(
                "{label} must contain canonical memory digests"
            )));
        }
    }
    if !strictly_sorted_values(items) {
        return Err(FieldError(format!(
            "{label} must be sorted, unique, and canonical"
        )));
    }
    Ok(())
}

/// A strict list of `min..=max` opaque references, sorted and unique.
pub fn opaque_refs(
    v: &Value,
    label: impl Display,
    min: usize,
    max: usize,
) -> FieldResult<Vec<String>> {
    check_opaque_refs(v, label, min, max)?;
    Ok(strings(v))
}

/// The rules of [`opaque_refs`] without copying the references out.
pub fn check_opaque_refs(
    v: &Value,
    label: impl Display,
    min: usize,
    max: usize,
) -> FieldResult<()> {
    let items = match v {
        Value::Array(items) if (min..=max).contains(&items.len()) => items,
        _ => {
            return Err(FieldError(format!(
                "{label} must contain between {min} and {max} opaque references"
            )));
        }
    };
    for item in items {
        strict_ref(item, format_args!("{label}[]"))?;
    }
    if !strictly_sorted_values(items) {
        return Err(FieldError(format!(
            "{label} must be sorted, unique, and canonical"
        )));
    }
    Ok(())
}

/// The texts of a list whose items were all checked to be strings.
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Sorted ascending with no repeats, i.e. equal to `sorted(set(items))` (every item
/// already checked to be a string).
fn strictly_sorted_values(items: &[Value]) -> bool {
    items
        .windows(2)
        .all(|w| w[0].as_str().unwrap_or_default() < w[1].as_str().unwrap_or_default())
}

/// A strict scope: exactly the four ids, each a strict ref; returned in sorted key order.
pub fn strict_scope(v: &Value, label: impl Display) -> FieldResult<Map> {
    let map = object(v, &label)?;
    exact_fields(map, &SCOPE_KEYS, &label)?;
    let mut out = Map::with_capacity(4);
    for key in SCOPE_KEYS_SORTED {
        let value = map.get(key).unwrap_or(&Value::Null);
        out.insert(key, strict_ref(value, format_args!("{label}.{key}"))?);
    }
    Ok(out)
}

/// A strict timestamp: a string equal to its stripped form that parses as an aware
/// ISO timestamp.
pub fn strict_timestamp(v: &Value, label: impl Display) -> FieldResult<Instant> {
    let invalid = || FieldError(format!("{label} must be an ISO timestamp"));
    let Value::Str(s) = v else {
        return Err(invalid());
    };
    if pyfmt::py_strip(s) != s {
        return Err(invalid());
    }
    match timestamp::parse_aware(s) {
        Ok(instant) => Ok(instant),
        Err(TimestampError::Invalid) => Err(invalid()),
        Err(TimestampError::Naive) => Err(FieldError(format!("{label} must include a timezone"))),
    }
}

/// `"{label} is invalid"` unless the value is one of the allowed strings.
pub fn enum_str<'a>(v: &'a Value, allowed: &[&str], label: impl Display) -> FieldResult<&'a str> {
    match v {
        Value::Str(s) if allowed.contains(&s.as_str()) => Ok(s),
        _ => Err(FieldError(format!("{label} is invalid"))),
    }
}

/// Python `float(value)` for a non-bool number that must be finite.
pub fn finite_float(v: &Value, label: impl Display) -> FieldResult<f64> {
    let f = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        // Anything outside i64 is far outside every range checked here; Python either
        // overflows or yields a finite float that fails the caller's bounds. Only the
        // overflow case reaches this message, the others fail the bounds check below.
        Value::BigInt(s) => bigint_to_f64(s),
        _ => return Err(FieldError(format!("{label} must be a finite number"))),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(FieldError(format!("{label} must be a finite number")))
    }
}

/// Python's `float(int)`: correctly rounded, or infinity where Python raises OverflowError.
pub fn bigint_to_f64(s: &str) -> f64 {
    // Rust's float parser rounds correctly and saturates to infinity on overflow.
    s.parse::<f64>().unwrap_or(f64::INFINITY)
}

/// A non-negative integer (bool rejected) as `i128`, saturating very large values.
pub fn non_negative_int(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) if *i >= 0 => Some(i128::from(*i)),
        Value::BigInt(s) if !s.starts_with('-') => Some(s.parse::<i128>().unwrap_or(i128::MAX)),
        _ => None,
    }
}

/// Python's `round(min(upper, max(lower, value)), 6)`, keeping Python's argument order
/// for `min`/`max` (the first argument wins ties, so `-0.0` survives where Python keeps it).
pub fn bounded(value: f64, lower: f64, upper: f64) -> f64 {
    let low = if value > lower { value } else { lower };
    let high = if low < upper { low } else { upper };
    pyfmt::round6(high)
}

enum Num<'a> {
    Int(i128),
    Big(&'a str),
    Float(f64),
}

fn as_num(v: &Value) -> Option<Num<'_>> {
    match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Int(i) => Some(Num::Int(i128::from(*i))),
        Value::BigInt(s) => Some(Num::Big(s)),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

fn int_eq_float(i: i128, f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() < 1e38 && f as i128 == i
}

fn num_eq(a: &Num<'_>, b: &Num<'_>) -> bool {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x == y,
        (Num::Big(x), Num::Big(y)) => x == y,
        (Num::Int(_), Num::Big(_)) | (Num::Big(_), Num::Int(_)) => false,
        (Num::Float(x), Num::Float(y)) => x == y,
        (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => int_eq_float(*i, *f),
        (Num::Big(s), Num::Float(f)) | (Num::Float(f), Num::Big(s)) => {
            f.is_finite() && f.fract() == 0.0 && format!("{f:.0}") == *s
        }
    }
}

/// Python's `a == b` for JSON values: numbers compare by value across int/float/bool,
/// objects ignore key order.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (as_num(a), as_num(b)) {
        return num_eq(&x, &y);
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_eq_compares_numbers_like_python() {
        assert!(py_eq(&Value::Int(1), &Value::Float(1.0)));
        assert!(py_eq(&Value::Bool(true), &Value::Float(1.0)));
        assert!(py_eq(&Value::Float(-0.0), &Value::Float(0.0)));
        assert!(!py_eq(&Value::Str("1".into()), &Value::Int(1)));
        assert!(py_eq(
            &Value::BigInt("100000000000000000000".into()),
            &Value::Float(1e20)
        ));
        let a = crate::wire::json::parse(r#"{"a": 1, "b": [1.0]}"#).expect("valid");
        let b = crate::wire::json::parse(r#"{"b": [1], "a": 1.0}"#).expect("valid");
        assert!(py_eq(&a, &b));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The byte tests accept exactly what their patterns accept.
        #[test]
        fn digest_and_id_tests_agree_with_their_patterns(
            s in r"(|sha256:|muo_|muof_|sha256|muo|x)[0-9a-fA-Fg]{0,2}([0-9a-f]{14,16}|[0-9a-f]{62,66})[0-9a-f\n]?"
        ) {
            proptest::prop_assert_eq!(is_memory_digest(&s), MEMORY_DIGEST_RE.is_match(&s), "{:?}", s);
            proptest::prop_assert_eq!(is_observation_id(&s), OBSERVATION_ID_RE.is_match(&s), "{:?}", s);
            proptest::prop_assert_eq!(is_fingerprint(&s), FINGERPRINT_RE.is_match(&s), "{:?}", s);
        }
    }

    #[test]
    fn exact_fields_accepts_any_key_order_and_names_the_differences() {
        let v = crate::wire::json::parse(r#"{"b": 1, "a": 2}"#).expect("valid");
        let map = v.as_object().expect("object");
        assert_eq!(exact_fields(map, &["a", "b"], "x"), Ok(()));
        assert_eq!(exact_fields(map, &["b", "a"], "x"), Ok(()));
        assert_eq!(
            exact_fields(map, &["a", "c"], "x").expect_err("differs").0,
            "x has invalid fields: missing=['c'], unknown=['b']"
        );
    }

    #[test]
    fn bounded_keeps_negative_zero() {
        assert_eq!(pyfmt::float_repr(bounded(-0.0, -1.0, 1.0)), "-0.0");
        assert_eq!(pyfmt::float_repr(bounded(-0.0, 0.0, 1.0)), "0.0");
        assert_eq!(bounded(1.5, 0.0, 1.0), 1.0);
    }

    #[test]
    fn strict_lists_require_canonical_order() {
        let v = crate::wire::json::parse(r#"["b", "a"]"#).expect("valid");
        assert_eq!(
            opaque_refs(&v, "x", 0, 12).expect_err("unsorted").0,
            "x must be sorted, unique, and canonical"
        );
        let v = crate::wire::json::parse(r#"[" a"]"#).expect("valid");
        assert_eq!(
            opaque_refs(&v, "x", 0, 12).expect_err("padded").0,
            "x[] must be an opaque public-safe reference"
        );
    }
}
