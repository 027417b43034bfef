//! Python's text conventions that leak into the wire format.
//!
//! Owns `str(value or "")` (the "pystr" coercion of lenient validators), `repr()` of
//! strings, lists, dicts and any JSON value, and Python's whitespace set for
//! `strip()`/`split()`. Floats come from [`crate::wire::float`] (re-exported here, so
//! `pyfmt::float_repr` and `pyfmt::round6` keep working). Everything here is pure and
//! deterministic.

use std::borrow::Cow;
use std::fmt::Write as _;

pub use crate::wire::float::{FloatBuf, float_repr, float_repr_in, round6};
use crate::wire::json::Value;

/// Python's `str.isspace()` for one character.
pub fn is_py_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `s.strip()`.
pub fn py_strip(s: &str) -> &str {
    // Text that starts and ends with a visible ASCII character has nothing to strip.
    match s.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => s,
        [only] if only.is_ascii_graphic() => s,
        _ => s.trim_matches(is_py_space),
    }
}

/// Python's `s.split()` (no argument).
pub fn py_split(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_py_space).filter(|part| !part.is_empty())
}

/// Python's `" ".join(s.split())`.
pub fn collapse_ws(s: &str) -> String {
    collapse_ws_within(s, usize::MAX).0
}

/// Whether the character at byte `i` of `s` (a character boundary) is whitespace, and
/// its length in bytes: an ASCII byte by Python's ASCII set, any other character decoded
/// and checked against the whole set.
#[inline(always)]
fn space_at(s: &str, i: usize) -> (bool, usize) {
    let b = s.as_bytes()[i];
    if b < 0x80 {
        return (matches!(b, b'\t'..=b'\r' | 0x1c..=0x1f | b' '), 1);
    }
    match s[i..].chars().next() {
        Some(c) => (is_py_space(c), c.len_utf8()),
        None => (false, 1),
    }
}

/// [`collapse_ws`], stopping once the result is longer than `limit` characters: the
/// result (whole when it holds at most `limit` characters, else at least its first
/// `limit + 1`) and its length in characters when whole. Words are found a byte at a
/// time (an ASCII byte by its value, any other character decoded).
pub fn collapse_ws_within(s: &str, limit: usize) -> (String, Option<usize>) {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len().min(limit.saturating_add(1).saturating_mul(4)));
    let mut chars = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let (space, width) = space_at(s, i);
        if space {
            i += width;
            continue;
        }
        let start = i;
        while i < bytes.len() {
            let (space, width) = space_at(s, i);
            if space {
                break;
            }
            i += width;
        }
        let word = &s[start..i];
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        out.push_str(word);
        chars += if word.is_ascii() {
            word.len()
        } else {
            word.chars().count()
        };
        if chars > limit {
            return (out, None);
        }
    }
    (out, Some(chars))
}

/// Python's `str(value or "")` for a JSON value.
pub fn pystr(v: Option<&Value>) -> String {
    match v {
        None => String::new(),
        Some(v) if !v.is_truthy() => String::new(),
        Some(Value::Str(s)) => s.to_string(),
        Some(v) => py_str_value(v),
    }
}

/// Python's `str(pystr(value)).strip()`, the usual first step of a lenient validator.
pub fn pystr_strip(v: Option<&Value>) -> String {
    let s = pystr(v);
    py_strip(&s).to_owned()
}

/// [`pystr_strip`] borrowing the text of a string value instead of copying it.
pub fn pystr_strip_cow(v: Option<&Value>) -> Cow<'_, str> {
    match v {
        Some(Value::Str(s)) => Cow::Borrowed(py_strip(s)),
        other => Cow::Owned(pystr_strip(other)),
    }
}

/// Python's `str(v)` (not `repr`) for any JSON value.
pub fn py_str_value(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => py_repr(other),
    }
}

/// Python's `repr(v)` for a JSON value (`True`, `None`, `'text'`, `[1, 'a']`, `{'k': 1}`).
pub fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(s) => out.push_str(s),
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => out.push_str(&str_repr(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&str_repr(k));
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
    }
}

/// An approximation of `str.isprintable()` for one character: false for controls,
/// separators other than the ASCII space, format characters, surrogates and private use.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    !(u < 0x20
        || (0x7f..=0xa0).contains(&u)
        || u == 0xad
        || (0x2000..=0x200f).contains(&u)
        || (0x2028..=0x202f).contains(&u)
        || (0x205f..=0x206f).contains(&u)
        || u == 0x1680
        || u == 0x3000
        || u == 0xfeff
        || (0xfff9..=0xfffb).contains(&u)
        || (0xe000..=0xf8ff).contains(&u)
        || (0xf0000..).contains(&u)
        || u == 0x061c
        || u == 0x180e)
}

/// Python's `repr(str)`.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let u = c as u32;
                if u < 0x100 {
                    let _ = write!(out, "\\x{u:02x}");
                } else if u < 0x10000 {
                    let _ = write!(out, "\\u{u:04x}");
                } else {
                    let _ = write!(out, "\\U{u:08x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pystr_follows_python_truthiness() {
        let v = crate::wire::json::parse(
            r#"[null, false, 0, 0.0, "", [], {}, true, 5, 1e16, ["a", 1], {"a": true}]"#,
        )
        .expect("valid");
        let got: Vec<String> = v
            .as_array()
            .expect("array")
            .iter()
            .map(|x| pystr(Some(x)))
            .collect();
        assert_eq!(
            got,
            [
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "True",
                "5",
                "1e+16",
                "['a', 1]",
                "{'a': True}"
            ]
        );
    }

    #[test]
    fn str_repr_picks_quotes_like_python() {
        assert_eq!(str_repr("a"), "'a'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("'\""), "'\\'\"'");
        assert_eq!(str_repr("a\nb\u{1}é"), "'a\\nb\\x01é'");
    }

    #[test]
    fn strip_uses_python_whitespace() {
        assert_eq!(py_strip("\u{1c} a \u{3000}"), "a");
        assert_eq!(collapse_ws("  a \t b\n c  "), "a b c");
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The fast path for text without edge whitespace strips like the full rule.
        #[test]
        fn collapse_ws_agrees_with_pythons_split_and_join(
            s in "[ \t\n\u{b}\u{c}\r\u{1c}-\u{1f}\u{85}\u{a0}\u{2000}\u{3000}a-z~é\u{1F600}]{0,40}",
            limit in 0usize..50,
        ) {
            let joined = super::py_split(&s).collect::<Vec<_>>().join(" ");
            let count = joined.chars().count();
            let (whole, chars) = super::collapse_ws_within(&s, usize::MAX);
            prop_assert_eq!(&whole, &joined);
            prop_assert_eq!(chars, Some(count));
            let (part, chars) = super::collapse_ws_within(&s, limit);
            if count <= limit {
                prop_assert_eq!(&part, &joined);
                prop_assert_eq!(chars, Some(count));
            } else {
                // Cut short: a prefix of the whole, longer than the limit.
                prop_assert!(joined.starts_with(&part));
                prop_assert!(part.chars().count() > limit);
                prop_assert_eq!(chars, None);
            }
        }

        #[test]
        fn py_strip_fast_path_agrees_with_the_full_rule(
            s in "[ \t\n\u{b}\u{c}\r\u{1c}-\u{1f}\u{85}\u{a0}\u{3000}a-z~!é]{0,12}"
        ) {
            prop_assert_eq!(super::py_strip(&s), s.trim_matches(super::is_py_space));
        }
    }
}
