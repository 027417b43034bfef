//! Field-level validators shared by every contract: tokens, compact public-safe text,
//! strict objects and strict scalars.
//!
//! Owns the regexes of the spec (TOKEN, SURFACE, CORPUS_ID, AGENT_ID, the opaque REF and
//! the local-path / secret detectors) and the helpers built on them. Every helper takes a
//! JSON value and a label and returns the normalized value or a [`FieldError`] whose text
//! is the reference's error string. Pure: no I/O.

use std::sync::LazyLock;

use regex::Regex;

use crate::json::{Map, Value};
use crate::pyfmt::{self, pystr_strip};

/// A validation failure carrying the exact reference error string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FieldError(pub String);

impl FieldError {
    pub fn new(message: impl Into<String>) -> Self {
        FieldError(message.into())
    }
}

pub type FieldResult<T> = Result<T, FieldError>;

fn re(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(r) => r,
        Err(err) => panic!("built-in pattern {pattern} must compile: {err}"),
    }
}

fn fancy(pattern: &str) -> fancy_regex::Regex {
    match fancy_regex::Regex::new(pattern) {
        Ok(r) => r,
        Err(err) => panic!("built-in pattern {pattern} must compile: {err}"),
    }
}

pub static TOKEN_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,199}$"));
pub static SURFACE_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+$"));
pub static CORPUS_ID_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^[a-z][a-z0-9_-]{0,63}$"));
pub static AGENT_ID_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^[a-z][a-z0-9_.:@-]{0,79}$"));
pub static REF_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$"));

static LOCAL_PATH_RE: LazyLock<fancy_regex::Regex> = LazyLock::new(|| {
    fancy(
        r#"(?i)(?<![:/A-Za-z0-9])(?:/(?:Users|home|Volumes|private|tmp|var|etc|opt|srv|mnt|root|workspace|workspaces)/[^\s`'"<>]+|[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/][^\s`'"<>]+)"#,
    )
});

static SECRET_LIKE_RE: LazyLock<fancy_regex::Regex> = LazyLock::new(|| {
    fancy(
        r#"(?i)(?:\bbearer\s+[a-z0-9._~+/=-]{16,}|\b(?:access|secret)[_-]?key\s*[=:]\s*[^\s`'"<>]+|\b(?:ak|sk)\s*[=:]\s*[^\s`'"<>]+|(?<![a-z0-9_])(?:ak|sk)[-_=:][a-z0-9_=-]{10,}|\bgh[pousr]_[a-z0-9]{20,}\b|\beyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\b|\btoken\s*[=:]\s*[^\s`'"<>]{12,})"#,
    )
});

/// Python `re.fullmatch` semantics on an already-anchored pattern. Python's `$` also
/// matches before a single trailing newline, which `strip()` has always removed here.
pub fn full_match(re: &Regex, s: &str) -> bool {
    re.is_match(s)
}

/// True when the text contains something that looks like a local path.
///
/// Every alternative of the pattern contains a `/` or `\`, so text without either is
/// answered without compiling or running the (slow, backtracking) pattern.
pub fn has_local_path(s: &str) -> bool {
    if !s.contains(['/', '\\']) {
        return false;
    }
    LOCAL_PATH_RE.is_match(s).unwrap_or(true)
}

/// True when the text may match [`SECRET_LIKE_RE`]: every alternative needs one of
/// `=:_-`, or `bearer`, or `eyj` followed by dots (those letters have no non-ASCII case
/// variants, so an ASCII case-insensitive search is exact).
fn may_hold_secret(s: &str) -> bool {
    if s.contains(['=', ':', '_', '-']) {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    lower.contains("bearer") || (lower.contains("eyj") && lower.contains('.'))
}

/// True when the text contains something that looks like a credential.
pub fn has_secret(s: &str) -> bool {
    may_hold_secret(s) && SECRET_LIKE_RE.is_match(s).unwrap_or(true)
}

/// Collapses whitespace and truncates to `limit` code points with a trailing `…`.
pub fn compact_text(s: &str, limit: usize) -> String {
    let collapsed = pyfmt::collapse_ws(s);
    if collapsed.chars().count() <= limit {
        return collapsed;
    }
    let head: String = collapsed.chars().take(limit.saturating_sub(1)).collect();
    let mut out = pyfmt::py_strip(&head).to_owned();
    // `rstrip` only: a leading space cannot exist after collapsing.
    out.push('…');
    out
}

/// True for the values whose Python `str()` is an artefact rather than text: `true`
/// (`"True"`) and non-empty lists or objects (their `repr`). The reference accepts them
/// as tokens or summaries; this port refuses them (see docs/compatibility.md).
fn is_python_artefact(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(true)) => true,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(Value::Object(map)) => !map.is_empty(),
        _ => false,
    }
}

/// `public_safe_compact_text`: compacted text, or `None` when empty, unsafe, or not
/// text at all (`true`, a list, an object).
pub fn public_safe_text(v: Option<&Value>, limit: usize) -> Option<String> {
    if is_python_artefact(v) {
        return None;
    }
    let text = compact_text(&pyfmt::pystr(v), limit);
    if text.is_empty() || has_local_path(&text) || has_secret(&text) {
        None
    } else {
        Some(text)
    }
}

/// A required compact public-safe text field.
pub fn compact(v: Option<&Value>, label: &str, limit: usize) -> FieldResult<String> {
    public_safe_text(v, limit)
        .ok_or_else(|| FieldError(format!("{label} must be compact and public-safe")))
}

/// A required compact public-safe token.
pub fn token(v: Option<&Value>, label: &str) -> FieldResult<String> {
    let s = pystr_strip(v);
    if !is_python_artefact(v) && TOKEN_RE.is_match(&s) {
        Ok(s)
    } else {
        Err(FieldError(format!(
            "{label} must be a compact public-safe token"
        )))
    }
}

/// An optional token: only a missing value, `null` or `""` is absent.
pub fn optional_token(v: Option<&Value>, label: &str) -> FieldResult<Option<String>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(s)) if s.is_empty() => Ok(None),
        Some(_) => token(v, label).map(Some),
    }
}

/// A strict JSON boolean.
pub fn strict_bool(v: Option<&Value>, label: &str) -> FieldResult<bool> {
    match v {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(FieldError(format!("{label} must be a boolean"))),
    }
}

/// A value that must be an object.
pub fn object<'a>(v: Option<&'a Value>, label: &str) -> FieldResult<&'a Map> {
    match v {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(FieldError(format!("{label} must be an object"))),
    }
}

/// A strict object: an object whose keys all belong to `allowed`.
pub fn strict_object<'a>(
    v: Option<&'a Value>,
    label: &str,
    allowed: &[&str],
) -> FieldResult<&'a Map> {
    let map = object(v, label)?;
    reject_unknown(map, label, allowed)?;
    Ok(map)
}

/// Fails with `"{label} contains unsupported fields: a, b"` (sorted) for unknown keys.
pub fn reject_unknown(map: &Map, label: &str, allowed: &[&str]) -> FieldResult<()> {
    let mut unknown: Vec<&str> = map.keys().filter(|k| !allowed.contains(k)).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort_unstable();
    Err(FieldError(format!(
        "{label} contains unsupported fields: {}",
        unknown.join(", ")
    )))
}

/// Membership of a stripped pystr value in a fixed set.
pub fn one_of(v: Option<&Value>, allowed: &[&str], message: &str) -> FieldResult<String> {
    let s = pystr_strip(v);
    if allowed.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(FieldError(message.to_owned()))
    }
}

/// A bounded list of tokens: falsy → empty; not a list or too long → `bounded list`;
/// an invalid item → `contains an invalid token`; duplicates rejected; result sorted
/// when `sort` is set.
pub fn token_list(
    v: Option<&Value>,
    label: &str,
    max_items: usize,
    item_re: &Regex,
    sort: bool,
) -> FieldResult<Vec<String>> {
    let items = match v {
        None => return Ok(Vec::new()),
        Some(v) if !v.is_truthy() && !matches!(v, Value::Array(_)) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= max_items => items,
        Some(_) => return Err(FieldError(format!("{label} must be a bounded list"))),
    };
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let s = pystr_strip(Some(item));
        if !item_re.is_match(&s) {
            return Err(FieldError(format!("{label} contains an invalid token")));
        }
        out.push(s);
    }
    let mut seen = out.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != out.len() {
        return Err(FieldError(format!("{label} must not contain duplicates")));
    }
    if sort {
        out.sort_unstable();
    }
    Ok(out)
}

/// The `sha256hex(text)` helper, kept here for validators that compare digests.
pub fn is_hex_digest(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_letters_have_no_unicode_case_variants() {
        let folded = re(r"(?i)^[bearjy]$");
        let outside: Vec<char> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| !c.is_ascii() && folded.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert!(outside.is_empty(), "{outside:?}");
    }

    proptest::proptest! {
        #[test]
        fn prefilters_agree_with_the_full_patterns(
            s in r"[ a-zA-Z0-9./:\\=_\-~+KſİéÅ]{0,40}|(?:[Bb]earer |ey[Jj]|/Users/|[Cc]:\\Users\\|token=|ghp_|sk-)[a-zA-Z0-9./_-]{0,30}"
        ) {
            proptest::prop_assert_eq!(has_local_path(&s), LOCAL_PATH_RE.is_match(&s).unwrap_or(true));
            proptest::prop_assert_eq!(has_secret(&s), SECRET_LIKE_RE.is_match(&s).unwrap_or(true));
        }
    }

    fn s(text: &str) -> Value {
        Value::Str(text.to_owned())
    }

    #[test]
    fn public_safe_examples_from_the_spec() {
        let absent = [
            "/home/u/x",
            "see /tmp/x",
            "C:\\Users\\bob",
            "token=abcdefghijkl",
            "sk-abcdefghijk",
            "AK: x",
        ];
        for text in absent {
            assert_eq!(public_safe_text(Some(&s(text)), 500), None, "{text}");
        }
        let kept = [
            "https://x.com/home/u",
            "a:/home/u",
            "~/x",
            "token=abc",
            "task-abcdefghijk",
        ];
        for text in kept {
            assert_eq!(
                public_safe_text(Some(&s(text)), 500).as_deref(),
                Some(text),
                "{text}"
            );
        }
        assert_eq!(
            public_safe_text(Some(&s("  a \t b\n c  ")), 500).as_deref(),
            Some("a b c")
        );
    }

    #[test]
    fn compact_text_truncates_with_ellipsis() {
        assert_eq!(compact_text("abcdef", 4), "abc…");
        assert_eq!(compact_text("ab  cdef", 4), "ab…");
        assert_eq!(compact_text("abcd", 4), "abcd");
    }

    #[test]
    fn optional_token_treats_false_as_error() {
        assert_eq!(optional_token(Some(&Value::Null), "x"), Ok(None));
        assert_eq!(optional_token(Some(&s("")), "x"), Ok(None));
        assert!(optional_token(Some(&Value::Bool(false)), "x").is_err());
        assert!(token(Some(&Value::Bool(true)), "x").is_err());
        assert_eq!(token(Some(&Value::Int(7)), "x"), Ok("7".to_owned()));
        assert_eq!(public_safe_text(Some(&Value::Bool(true)), 50), None);
        let list = crate::json::parse(r#"["a"]"#).expect("valid");
        assert_eq!(public_safe_text(Some(&list), 50), None);
    }

    #[test]
    fn strict_object_sorts_unknown_fields() {
        let v = crate::json::parse(r#"{"b": 1, "a": 2, "ok": 3}"#).expect("valid");
        assert_eq!(
            strict_object(Some(&v), "event", &["ok"])
                .expect_err("unknown")
                .0,
            "event contains unsupported fields: a, b"
        );
    }
}
