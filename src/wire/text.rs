//! Field-level validators shared by every contract: tokens, compact public-safe text,
//! strict objects and strict scalars.
//!
//! Owns the regexes of the spec (TOKEN, SURFACE, CORPUS_ID, AGENT_ID, the opaque REF), the
//! scanner that stands for its local-path / secret patterns, and the helpers built on them. Every helper takes a
//! JSON value and a label and returns the normalized value or a [`FieldError`] whose text
//! is the reference's error string. Pure: no I/O.

use std::sync::LazyLock;

use regex::Regex;

use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::pyfmt::{self, pystr_strip};

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

pub static TOKEN_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,199}$"));
pub static SURFACE_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+$"));
pub static CORPUS_ID_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^[a-z][a-z0-9_-]{0,63}$"));
pub static AGENT_ID_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^[a-z][a-z0-9_.:@-]{0,79}$"));
pub static REF_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$"));

// Every pattern above is also matched by a byte test below (no regex engine: building
// the four a recall checks cost a fifth of its instructions); the patterns stay the
// definition, and property tests hold the byte tests to them.

/// One ASCII byte class, as a 256-entry membership table: the digits, the lowercase
/// letters, the uppercase ones when `upper`, and `extra`.
const fn byte_class(upper: bool, extra: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_digit() || c.is_ascii_lowercase() || (upper && c.is_ascii_uppercase());
        b += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        table[extra[i] as usize] = true;
        i += 1;
    }
    table
}

/// `[A-Za-z0-9]` and `extra`.
const fn class(extra: &[u8]) -> [bool; 256] {
    byte_class(true, extra)
}

const ALNUM: [bool; 256] = class(b"");
const REF_REST: [bool; 256] = class(b"_.:-");
const TOKEN_REST: [bool; 256] = class(b"._:/#-");

/// `[a-z0-9]` and `extra`.
const fn lower_class(extra: &[u8]) -> [bool; 256] {
    byte_class(false, extra)
}

const ID_REST: [bool; 256] = lower_class(b"_-");
const AGENT_REST: [bool; 256] = lower_class(b"_.:@-");

/// `^[a-z][rest]{0,max_rest}$`.
fn lower_lead_and_rest(s: &str, rest: &[bool; 256], max_rest: usize) -> bool {
    match s.as_bytes() {
        [first, tail @ ..] if tail.len() <= max_rest => {
            first.is_ascii_lowercase() && tail.iter().all(|b| rest[usize::from(*b)])
        }
        _ => false,
    }
}

/// [`CORPUS_ID_RE`] without the regex engine.
pub fn is_corpus_id(s: &str) -> bool {
    lower_lead_and_rest(s, &ID_REST, 63)
}

/// [`AGENT_ID_RE`] without the regex engine.
pub fn is_agent_id(s: &str) -> bool {
    lower_lead_and_rest(s, &AGENT_REST, 79)
}

/// [`SURFACE_RE`] without the regex engine: two or more dot-separated `[a-z][a-z0-9_-]*`.
pub fn is_surface_id(s: &str) -> bool {
    let mut parts = 0;
    for part in s.split('.') {
        if !lower_lead_and_rest(part, &ID_REST, usize::MAX) {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

/// `^[A-Za-z0-9][rest]{0,199}$`.
fn lead_and_rest(s: &str, rest: &[bool; 256]) -> bool {
    match s.as_bytes() {
        [first, tail @ ..] if tail.len() < 200 => {
            ALNUM[usize::from(*first)] && tail.iter().all(|b| rest[usize::from(*b)])
        }
        _ => false,
    }
}

/// [`REF_RE`] without the regex engine: an opaque public-safe reference.
pub fn is_ref(s: &str) -> bool {
    lead_and_rest(s, &REF_REST)
}

/// [`TOKEN_RE`] without the regex engine: a compact public-safe token.
pub fn is_token(s: &str) -> bool {
    lead_and_rest(s, &TOKEN_REST)
}

/// `prefix` followed by exactly `n` lowercase hex digits.
pub fn is_prefixed_hex(s: &str, prefix: &str, n: usize) -> bool {
    s.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == n && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

// The local-path and secret detectors of the spec are case-insensitive patterns with a
// negative look-behind. A backtracking regex engine costs milliseconds to build at
// startup, so they are matched by the small scanner below instead; the spec patterns
// themselves are kept in the tests as the oracle it is compared with.
//
// Under the patterns' Unicode case-insensitivity an ASCII letter also matches the two
// non-ASCII characters whose simple case folding is that letter (LATIN SMALL LETTER LONG
// S and KELVIN SIGN), so the scanner works on text folded by `fold`. Folding keeps
// whether a character is whitespace (`\s`) or a word character (`\b`).

/// Simple case folding onto ASCII lowercase, as `(?i)` sees ASCII-only patterns.
fn fold(c: char) -> char {
    match c {
        '\u{017F}' => 's',
        '\u{212A}' => 'k',
        _ => c.to_ascii_lowercase(),
    }
}

/// `[^\s`'"<>]`: a character of a path or of a credential value.
fn is_value_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '`' | '\'' | '"' | '<' | '>')
}

/// Folded text with the pattern primitives, indexed by character.
struct Folded(Vec<char>);

impl Folded {
    fn new(s: &str) -> Self {
        if s.is_ascii() {
            // `fold` of an ASCII character, without decoding UTF-8.
            return Folded(
                s.bytes()
                    .map(|b| char::from(b.to_ascii_lowercase()))
                    .collect(),
            );
        }
        Folded(s.chars().map(fold).collect())
    }

    fn at(&self, i: usize) -> Option<char> {
        self.0.get(i).copied()
    }

    fn is(&self, i: usize, test: impl Fn(char) -> bool) -> bool {
        self.at(i).is_some_and(test)
    }

    /// `\b` before index `i` (Unicode word characters).
    fn boundary(&self, i: usize) -> bool {
        let word = |c: Option<char>| c.is_some_and(regex_syntax::is_word_character);
        let before = i.checked_sub(1).and_then(|j| self.at(j));
        word(before) != word(self.at(i))
    }

    /// The index after `word` when the text at `i` spells it.
    fn literal(&self, i: usize, word: &str) -> Option<usize> {
        let mut j = i;
        for w in word.chars() {
            if self.at(j) != Some(w) {
                return None;
            }
            j += 1;
        }
        Some(j)
    }

    /// The index after the first of `words` spelled at `i`.
    fn any_literal(&self, i: usize, words: &[&str]) -> Option<usize> {
        words.iter().find_map(|w| self.literal(i, w))
    }

    /// The index after the longest run of `test` characters from `i`.
    fn skip(&self, i: usize, test: impl Fn(char) -> bool) -> usize {
        let mut j = i;
        while self.is(j, &test) {
            j += 1;
        }
        j
    }

    /// `X{count}`: the `count` characters from `i` all pass `test`.
    fn repeat(&self, i: usize, count: usize, test: impl Fn(char) -> bool) -> bool {
        (i..i + count).all(|j| self.is(j, &test))
    }

    /// `\s*[=:]\s*` from `i`, then `[^\s`'"<>]{count}`. The greedy `\s*` lose nothing:
    /// neither `[=:]` nor a value character is whitespace.
    fn assignment(&self, i: usize, count: usize) -> bool {
        let sign = self.skip(i, char::is_whitespace);
        self.is(sign, |c| c == '=' || c == ':')
            && self.repeat(
                self.skip(sign + 1, char::is_whitespace),
                count,
                is_value_char,
            )
    }
}

const LOCAL_ROOTS: &[&str] = &[
    "users",
    "home",
    "volumes",
    "private",
    "tmp",
    "var",
    "etc",
    "opt",
    "srv",
    "mnt",
    "root",
    "workspace",
    "workspaces",
];

/// `(?i)(?<![:/A-Za-z0-9])(?:/(?:Users|home|…|workspaces)/[^\s`'"<>]+|[A-Za-z]:[\\/]
/// (?:Users|Documents and Settings)[\\/][^\s`'"<>]+)` matched at index `i`.
fn local_path_at(t: &Folded, i: usize) -> bool {
    if i > 0 && t.is(i - 1, |c| c == ':' || c == '/' || c.is_ascii_alphanumeric()) {
        return false;
    }
    let slash = |c: char| c == '/' || c == '\\';
    let unix = t.is(i, |c| c == '/')
        && LOCAL_ROOTS.iter().any(|root| {
            t.literal(i + 1, root)
                .is_some_and(|j| t.is(j, |c| c == '/') && t.is(j + 1, is_value_char))
        });
    let windows = || {
        t.is(i, |c| c.is_ascii_alphabetic())
            && t.is(i + 1, |c| c == ':')
            && t.is(i + 2, slash)
            && t.any_literal(i + 3, &["users", "documents and settings"])
                .is_some_and(|j| t.is(j, slash) && t.is(j + 1, is_value_char))
    };
    unix || windows()
}

/// `[a-z0-9_-]` (folded).
fn is_jwt_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// One alternative of the secret pattern matched at index `i` (see [`has_secret`]).
fn secret_at(t: &Folded, i: usize) -> bool {
    // Every alternative starts with one of these (folded) letters: other characters are
    // answered before the word-boundary test.
    if !t.is(i, |c| matches!(c, 'a' | 'b' | 'e' | 'g' | 's' | 't')) {
        return false;
    }
    // ... and one of these pairs (`be`arer, `ac`cess, `se`cret, `ak`, `sk`, `gh`, `ey`j,
    // `to`ken), before the costlier boundary test.
    let starts = matches!(
        (t.at(i), t.at(i + 1)),
        (Some('b'), Some('e'))
            | (Some('a'), Some('c' | 'k'))
            | (Some('s'), Some('e' | 'k'))
            | (Some('g'), Some('h'))
            | (Some('e'), Some('y'))
            | (Some('t'), Some('o'))
    );
    if !starts {
        return false;
    }
    let b = t.boundary(i);
    // \bbearer\s+[a-z0-9._~+/=-]{16,}
    let bearer = || {
        t.literal(i, "bearer").is_some_and(|j| {
            let k = t.skip(j, char::is_whitespace);
            k > j
                && t.repeat(k, 16, |c| {
                    c.is_ascii_alphanumeric() || "._~+/=-".contains(c)
                })
        })
    };
    // \b(?:access|secret)[_-]?key\s*[=:]\s*[^\s`'"<>]+
    let named_key = || {
        t.any_literal(i, &["access", "secret"]).is_some_and(|j| {
            let j = if t.is(j, |c| c == '_' || c == '-') {
                j + 1
            } else {
                j
            };
            t.literal(j, "key").is_some_and(|k| t.assignment(k, 1))
        })
    };
    // \b(?:ak|sk)\s*[=:]\s*[^\s`'"<>]+
    let short_key = || {
        t.any_literal(i, &["ak", "sk"])
            .is_some_and(|j| t.assignment(j, 1))
    };
    // (?<![a-z0-9_])(?:ak|sk)[-_=:][a-z0-9_=-]{10,}
    let prefixed_key = || {
        !(i > 0 && t.is(i - 1, |c| c.is_ascii_alphanumeric() || c == '_'))
            && t.any_literal(i, &["ak", "sk"]).is_some_and(|j| {
                t.is(j, |c| "-_=:".contains(c))
                    && t.repeat(j + 1, 10, |c| {
                        c.is_ascii_alphanumeric() || c == '_' || c == '=' || c == '-'
                    })
            })
    };
    // \bgh[pousr]_[a-z0-9]{20,}\b: the run of word characters must end the word.
    let github = || {
        t.literal(i, "gh").is_some_and(|j| {
            t.is(j, |c| "pousr".contains(c)) && t.is(j + 1, |c| c == '_') && {
                let end = t.skip(j + 2, |c| c.is_ascii_alphanumeric());
                end - (j + 2) >= 20 && t.boundary(end)
            }
        })
    };
    // \beyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\b: `.` ends the first two
    // runs; the third may stop at any boundary after ten characters (`-` is no word
    // character).
    let jwt = || {
        t.literal(i, "eyj").is_some_and(|mut j| {
            for _ in 0..2 {
                let end = t.skip(j, is_jwt_char);
                if end - j < 10 || !t.is(end, |c| c == '.') {
                    return false;
                }
                j = end + 1;
            }
            let end = t.skip(j, is_jwt_char);
            (j + 10..=end).any(|k| t.boundary(k))
        })
    };
    // \btoken\s*[=:]\s*[^\s`'"<>]{12,}
    let token = || t.literal(i, "token").is_some_and(|j| t.assignment(j, 12));
    (b && (bearer() || named_key() || short_key() || github() || jwt() || token()))
        || prefixed_key()
}

/// True when the text contains something that looks like a local path.
///
/// Every alternative of the pattern contains a `/` or `\`, so text without either is
/// answered without building or running the pattern.
pub fn has_local_path(s: &str) -> bool {
    if !s.contains(['/', '\\']) {
        return false;
    }
    let t = Folded::new(s);
    (0..t.0.len()).any(|i| local_path_at(&t, i))
}

/// True when the text may hold a secret: every alternative needs one of
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
    if !may_hold_secret(s) {
        return false;
    }
    let t = Folded::new(s);
    (0..t.0.len()).any(|i| secret_at(&t, i))
}

/// Collapses whitespace and truncates to `limit` code points with a trailing `…`. Only
/// as much of `s` is collapsed as the result needs.
pub fn compact_text(s: &str, limit: usize) -> String {
    let (collapsed, whole) = pyfmt::collapse_ws_within(s, limit);
    if whole.is_some() {
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
    public_safe(compact_text(&pyfmt::pystr(v), limit))
}

/// [`public_safe_text`] of `v` for a caller that already has `compacted`, what
/// [`compact_text`] returns for `pystr(v)` and the limit: the checks without compacting
/// again.
pub fn public_safe_compacted(v: Option<&Value>, compacted: String) -> Option<String> {
    if is_python_artefact(v) {
        return None;
    }
    public_safe(compacted)
}

fn public_safe(text: String) -> Option<String> {
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
    if !is_python_artefact(v) && is_token(&s) {
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

/// Fails with `"{label} contains unsupported fields: a, b"` (sorted, bounded by
/// [`keys::list`]) for unknown keys.
pub fn reject_unknown(map: &Map, label: &str, allowed: &[&str]) -> FieldResult<()> {
    let unknown: Vec<&str> = map.keys().filter(|k| !allowed.contains(k)).collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(FieldError(format!(
        "{label} contains unsupported fields: {}",
        keys::list(unknown)
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
    is_item: fn(&str) -> bool,
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
        if !is_item(&s) {
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

    fn fancy(pattern: &str) -> fancy_regex::Regex {
        fancy_regex::Regex::new(pattern).expect("oracle pattern compiles")
    }

    /// The spec's local-path pattern, verbatim: the oracle for [`has_local_path`].
    static LOCAL_PATH_ORACLE: LazyLock<fancy_regex::Regex> = LazyLock::new(|| {
        fancy(
            r#"(?i)(?<![:/A-Za-z0-9])(?:/(?:Users|home|Volumes|private|tmp|var|etc|opt|srv|mnt|root|workspace|workspaces)/[^\s`'"<>]+|[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/][^\s`'"<>]+)"#,
        )
    });

    /// The spec's secret pattern, verbatim: the oracle for [`has_secret`].
    static SECRET_LIKE_ORACLE: LazyLock<fancy_regex::Regex> = LazyLock::new(|| {
        fancy(
            r#"(?i)(?:\bbearer\s+[a-z0-9._~+/=-]{16,}|\b(?:access|secret)[_-]?key\s*[=:]\s*[^\s`'"<>]+|\b(?:ak|sk)\s*[=:]\s*[^\s`'"<>]+|(?<![a-z0-9_])(?:ak|sk)[-_=:][a-z0-9_=-]{10,}|\bgh[pousr]_[a-z0-9]{20,}\b|\beyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\b|\btoken\s*[=:]\s*[^\s`'"<>]{12,})"#,
        )
    });

    fn assert_agrees_with_oracle(text: &str) {
        let path = LOCAL_PATH_ORACLE.is_match(text).expect("oracle runs");
        let secret = SECRET_LIKE_ORACLE.is_match(text).expect("oracle runs");
        assert_eq!(has_local_path(text), path, "local path in {text:?}");
        assert_eq!(has_secret(text), secret, "secret in {text:?}");
    }

    #[test]
    fn folding_whitespace_and_word_characters_match_the_regex_classes() {
        let folds_to = |c: char| re(&format!("(?i)^{}$", regex::escape(&c.to_string())));
        let ascii: Vec<(char, Regex)> = ('a'..='z').map(|c| (c, folds_to(c))).collect();
        let any_letter = re(r"(?i)^[a-z]$");
        let space = re(r"^\s$");
        let word = re(r"^\w$");
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let text = c.encode_utf8(&mut [0; 4]).to_owned();
            let expected = if any_letter.is_match(&text) {
                ascii
                    .iter()
                    .find(|(_, r)| r.is_match(&text))
                    .map_or(c, |(letter, _)| *letter)
            } else {
                c
            };
            assert_eq!(fold(c), expected, "{c:?}");
            assert_eq!(c.is_whitespace(), space.is_match(&text), "{c:?}");
            assert_eq!(
                regex_syntax::is_word_character(c),
                word.is_match(&text),
                "{c:?}"
            );
            assert_eq!(
                regex_syntax::is_word_character(fold(c)),
                regex_syntax::is_word_character(c),
                "{c:?}"
            );
        }
    }

    /// Pieces that start, end, break or disguise a match of either pattern.
    const PIECES: &[&str] = &[
        "/home/",
        "/Users/",
        "/tmp/x",
        "/workspaces/",
        "/HOME/",
        "/ſrv/",
        "/etc",
        "a:/home/x",
        ":",
        "/",
        "\\",
        "C:\\Users\\bob",
        "c:/documents and settings/x",
        "d:\\users/",
        "x",
        "a",
        "_",
        "-",
        "=",
        ".",
        "'",
        "`",
        "<",
        " ",
        "\t",
        "\n",
        "\u{a0}",
        "\u{2003}",
        "\u{3000}",
        "sk-",
        "sk_",
        "ak=",
        "SK:",
        "ſk-",
        "sK",
        "aK",
        "token=",
        "TOKEN : ",
        "tokenization=",
        "access_key=",
        "secret-key :",
        "accesskey",
        "Bearer ",
        "bearer\t",
        "BEARER  ",
        "ghp_",
        "gho_",
        "GHS_",
        "ghx_",
        "eyJ",
        "EYJ",
        "abcdefghij",
        "0123456789abcdef",
        "KELVIN",
        "é",
        "Å",
        "ß",
        "İ",
        "日本",
        "ǅ",
        "x.y",
        "abcdefghij.",
        "~+/=",
        "1234567890123456789012",
    ];

    #[test]
    fn matchers_agree_with_the_spec_patterns_on_all_examples() {
        let examples = [
            "/home/u/x",
            "see /tmp/x",
            "C:\\Users\\bob",
            "token=abcdefghijkl",
            "sk-abcdefghijk",
            "AK: x",
            "https://x.com/home/u",
            "a:/home/u",
            "~/x",
            "token=abc",
            "task-abcdefghijk",
            "x/home/u /home/v",
            "a:/home/x b/tmp/y",
            "ask-abcdefghijkl sk-abcdefghijkl",
            "_sk-abcdefghijkl",
            "ſk-abcdefghijkl",
            "éſk-abcdefghijkl",
            "é/home/u",
            "K/tmp/x",
            "Bearer abcdefghijklmnop",
            "bearer  abcdefghijklmno",
            "xbearer abcdefghijklmnopq",
            "ghp_abcdefghijklmnopqrst",
            "ghp_abcdefghijklmnopqrsté",
            "ghp_abcdefghijklmnopqrst.",
            "eyJabcdefghij.abcdefghij.abcdefghij",
            "eyJabcdefghij.abcdefghij.abcdefghi-",
            "eyJabcdefghij.abcdefghij.abcdefghi-x",
            "eyJabcdefghij.abcdefghij.abcdefghij-",
            "eyJabcdefghi-.abcdefghij.abcdefghij",
            "eyJabcdefghij..abcdefghij.abcdefghij",
            "eyJ-abcdefghi.abcdefghi_.ab-cd-ef-gh-",
            "eyJabcdefghij.abcdefghij.abcdefghijé",
            "token\u{a0}=\u{3000}abcdefghijkl",
            "token = abcdefghijk'",
            "secret_key: v",
            "accesskey=\u{2003}v",
            "ak\u{2003}=x",
            "éak=x",
            "_ak=x",
            "1sk=x",
            "日本sk=x",
            "C:/Users/",
            "C:/Users/ ",
            "C:/Users/x",
            "::/home/x",
            "e:\\documents and settings\\x",
            "ä:/users/x",
            "/home/`x",
            "/home/<",
            "plain text",
            "",
            "/",
            "\\",
        ];
        for text in examples {
            assert_agrees_with_oracle(text);
        }
        // Every pair and triple of pieces: starts, look-behind contexts and endings.
        for a in PIECES {
            for b in PIECES {
                assert_agrees_with_oracle(&format!("{a}{b}"));
                for c in [
                    "abcdefghijklmnopqrstu",
                    "x",
                    " ",
                    "é",
                    "/tmp/y",
                    "eyJabcdefghij.",
                ] {
                    assert_agrees_with_oracle(&format!("{a}{b}{c}"));
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// The byte tests accept exactly what REF and TOKEN accept, lengths included.
        #[test]
        fn ref_and_token_tests_agree_with_their_patterns(
            s in r"[A-Za-z0-9_.:/#\- \n\té\u{130}\u{212a}]{0,8}|[a-z0-9:._/#\-]{190,210}\n?"
        ) {
            proptest::prop_assert_eq!(is_ref(&s), REF_RE.is_match(&s), "{:?}", s);
            proptest::prop_assert_eq!(is_token(&s), TOKEN_RE.is_match(&s), "{:?}", s);
        }

        /// The byte tests accept exactly what the id patterns accept, lengths included.
        #[test]
        fn id_tests_agree_with_their_patterns(
            s in r"[a-z0-9_.:@\-A-Z é]{0,10}|[a-z][a-z0-9_.\-]{58,84}\n?|(?:[a-z0-9_\-]{0,3}\.){0,4}[a-z0-9_\-]{0,3}"
        ) {
            proptest::prop_assert_eq!(is_corpus_id(&s), CORPUS_ID_RE.is_match(&s), "{:?}", s);
            proptest::prop_assert_eq!(is_agent_id(&s), AGENT_ID_RE.is_match(&s), "{:?}", s);
            proptest::prop_assert_eq!(is_surface_id(&s), SURFACE_RE.is_match(&s), "{:?}", s);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        #[test]
        fn matchers_agree_with_the_spec_patterns(
            s in r"[ a-zA-Z0-9./:\\=_\-~+KſİéÅ\t\u{a0}\u{3000}`'<>]{0,40}|(?:[Bb]earer |ey[Jj]|/Users/|[Cc]:\\Users\\|token=|ghp_|sk-)[a-zA-Z0-9./_-]{0,30}"
        ) {
            assert_agrees_with_oracle(&s);
        }

        #[test]
        fn matchers_agree_with_the_spec_patterns_on_piece_sequences(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..8)
        ) {
            assert_agrees_with_oracle(&pieces.concat());
        }
    }

    fn s(text: &str) -> Value {
        Value::from(text)
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
    fn compact_text_agrees_with_collapsing_everything_first() {
        // The definition, for every limit around the lengths of these texts.
        let oracle = |s: &str, limit: usize| -> String {
            let collapsed = crate::wire::pyfmt::collapse_ws(s);
            if collapsed.chars().count() <= limit {
                return collapsed;
            }
            let head: String = collapsed.chars().take(limit.saturating_sub(1)).collect();
            format!("{}…", crate::wire::pyfmt::py_strip(&head))
        };
        for s in [
            "",
            "  ",
            "a",
            " ab  cd\tef\u{3000}gh ",
            "é  é é\u{a0}x",
            "abc def ghi jkl",
        ] {
            for limit in 0..20 {
                assert_eq!(compact_text(s, limit), oracle(s, limit), "{s:?} at {limit}");
            }
        }
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
        let list = crate::wire::json::parse(r#"["a"]"#).expect("valid");
        assert_eq!(public_safe_text(Some(&list), 50), None);
    }

    #[test]
    fn strict_object_sorts_unknown_fields() {
        let v = crate::wire::json::parse(r#"{"b": 1, "a": 2, "ok": 3}"#).expect("valid");
        assert_eq!(
            strict_object(Some(&v), "event", &["ok"])
                .expect_err("unknown")
                .0,
            "event contains unsupported fields: a, b"
        );
    }
}
