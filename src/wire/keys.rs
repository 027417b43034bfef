//! Key lists and error text as messages show them: bounded, and never echoing a key that
//! is not a plain identifier.
//!
//! Every message that names the unknown or missing keys of an input goes through
//! [`list`] (`a, b`) or [`repr_list`] (Python's `['a', 'b']`), and every error text a
//! packet carries goes through [`bound`]. An input's key may be anything (a connection
//! string, a local path, a megabyte of text), so only plain identifiers are named, at
//! most [`MAX_SHOWN_KEYS`] of them; the rest are counted. A list of at most that many
//! plain keys prints exactly as the reference prints it. Pure: no I/O.

use std::borrow::Cow;

/// Most keys a message names; the others are counted.
pub const MAX_SHOWN_KEYS: usize = 8;
/// Longest key a message names (`[A-Za-z_][A-Za-z0-9_]{0,63}`).
pub const MAX_KEY_LEN: usize = 64;
/// Longest error text a packet or a stderr line carries, in bytes.
pub const MAX_ERROR_BYTES: usize = 1024;

/// `[A-Za-z_][A-Za-z0-9_]{0,63}`: a key a message may name.
pub fn is_plain_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    bytes.len() <= MAX_KEY_LEN
        && bytes
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// What a message shows of a key set: the first plain keys in sorted order, how many
/// other plain keys there are, and how many keys are not plain identifiers.
struct Shown<'a> {
    named: Vec<&'a str>,
    more: usize,
    hidden: usize,
}

impl<'a> Shown<'a> {
    /// Sorted by code point (Python's `sorted` of `str`) and without repeats.
    fn of(keys: impl IntoIterator<Item = &'a str>) -> Shown<'a> {
        let mut plain: Vec<&str> = Vec::new();
        let mut other: Vec<&str> = Vec::new();
        for key in keys {
            if is_plain_key(key) {
                plain.push(key);
            } else {
                other.push(key);
            }
        }
        plain.sort_unstable();
        plain.dedup();
        other.sort_unstable();
        other.dedup();
        let more = plain.len().saturating_sub(MAX_SHOWN_KEYS);
        plain.truncate(MAX_SHOWN_KEYS);
        Shown {
            named: plain,
            more,
            hidden: other.len(),
        }
    }

    /// The named keys (each as `show` writes it), then the counts, joined as a list:
    /// `a, b` when nothing is counted, else `a, b and 3 more`.
    fn join(&self, show: impl Fn(&str) -> String) -> String {
        let mut items: Vec<String> = self.named.iter().map(|k| show(k)).collect();
        let counted = self.more > 0 || self.hidden > 0;
        if self.more > 0 {
            items.push(format!("{} more", self.more));
        }
        match self.hidden {
            0 => {}
            1 => items.push("1 key that is not a plain identifier".to_owned()),
            n => items.push(format!("{n} keys that are not plain identifiers")),
        }
        match items.split_last() {
            Some((last, head)) if counted && !head.is_empty() => {
                format!("{} and {last}", head.join(", "))
            }
            _ => items.join(", "),
        }
    }
}

/// The keys as `a, b` (sorted, unique), naming at most [`MAX_SHOWN_KEYS`] plain
/// identifiers: `a, b, c, d, e, f, g, h and 12 more`, `ok and 2 keys that are not plain
/// identifiers`.
pub fn list<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    Shown::of(keys).join(str::to_owned)
}

/// The keys as Python's `repr` of a sorted list of `str`, `['a', 'b']`, with the bounds
/// of [`list`]: `['a', 'b' and 3 more]`, `[2 keys that are not plain identifiers]`. A plain
/// identifier needs no escaping, so `'key'` is its exact `repr`.
pub fn repr_list<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    format!("[{}]", Shown::of(keys).join(|k| format!("'{k}'")))
}

/// The text cut to at most [`MAX_ERROR_BYTES`] bytes on a character boundary, ending in
/// a marker that says how many bytes were cut; shorter text is returned as is.
pub fn bound(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_ERROR_BYTES {
        return Cow::Borrowed(text);
    }
    // The marker is longest when the cut is the whole text: budget for that.
    let marker = |cut: usize| format!("… ({cut} more bytes not shown)");
    let mut end = MAX_ERROR_BYTES - marker(text.len()).len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}{}", &text[..end], marker(text.len() - end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_identifiers_are_ascii_words_up_to_64_bytes() {
        for key in [
            "a",
            "_",
            "corpus",
            "raw_comment",
            "unmodelled_field",
            "K9_x",
        ] {
            assert!(is_plain_key(key), "{key}");
        }
        assert!(is_plain_key(&"k".repeat(64)));
        for key in [
            "",
            "9lives",
            "a-b",
            "a.b",
            "a b",
            "é",
            "postgres://ledger:hunter2@db.internal/utility_ledger",
            "/home/victim/.ssh/id_rsa",
            "key\n",
        ] {
            assert!(!is_plain_key(key), "{key:?}");
        }
        assert!(!is_plain_key(&"k".repeat(65)));
    }

    #[test]
    fn short_plain_lists_print_as_the_reference_prints_them() {
        assert_eq!(list(["b", "a"]), "a, b");
        assert_eq!(list(["note"]), "note");
        assert_eq!(list([]), "");
        assert_eq!(repr_list(["c"]), "['c']");
        assert_eq!(repr_list(["b", "a"]), "['a', 'b']");
        assert_eq!(repr_list([]), "[]");
        let eight: Vec<String> = (0..8).map(|i| format!("k{i}")).collect();
        let eight: Vec<&str> = eight.iter().map(String::as_str).collect();
        assert_eq!(list(eight.iter().copied()), eight.join(", "));
    }

    #[test]
    fn long_lists_name_eight_keys_and_count_the_rest() {
        let keys: Vec<String> = (0..20).map(|i| format!("k{i:02}")).collect();
        let keys = keys.iter().map(String::as_str);
        assert_eq!(
            list(keys.clone()),
            "k00, k01, k02, k03, k04, k05, k06, k07 and 12 more"
        );
        assert_eq!(
            repr_list(keys),
            "['k00', 'k01', 'k02', 'k03', 'k04', 'k05', 'k06', 'k07' and 12 more]"
        );
    }

    #[test]
    fn keys_that_are_not_plain_identifiers_are_only_counted() {
        let secret = "postgres://ledger:hunter2@db.internal/utility_ledger";
        let path = "/home/victim/.ssh/id_rsa";
        assert_eq!(
            list([secret, "ok_key", path]),
            "ok_key and 2 keys that are not plain identifiers"
        );
        assert_eq!(list([path]), "1 key that is not a plain identifier");
        assert_eq!(
            repr_list([secret, path, path]),
            "[2 keys that are not plain identifiers]"
        );
        let many: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        let with_path = many.iter().map(String::as_str).chain([path]);
        assert_eq!(
            list(with_path),
            "k0, k1, k2, k3, k4, k5, k6, k7, 2 more and 1 key that is not a plain identifier"
        );
    }

    #[test]
    fn repeated_keys_count_once() {
        assert_eq!(list(["b", "a", "b"]), "a, b");
    }

    #[test]
    fn bound_keeps_short_text_and_cuts_long_text_on_a_char_boundary() {
        assert!(matches!(bound("short"), Cow::Borrowed("short")));
        let exact = "x".repeat(MAX_ERROR_BYTES);
        assert_eq!(bound(&exact), exact);
        for text in ["é".repeat(5000), "x".repeat(10_000_000), "ab€".repeat(700)] {
            let cut = bound(&text);
            assert!(cut.len() <= MAX_ERROR_BYTES, "{}", cut.len());
            let (head, marker) = cut.split_once('…').expect("marker");
            assert!(text.starts_with(head));
            let n = text.len() - head.len();
            assert_eq!(marker, format!(" ({n} more bytes not shown)"));
        }
    }
}
