//! The stricter public-safe rule of this port's own packets: text that looks like it holds
//! a credential.
//!
//! The reference's detectors ([`super::text::has_secret`], [`super::text::has_local_path`])
//! stay the rule of LoopX's own commands, byte for byte. The packets this port adds
//! (recall, apply, utility-observe, utility-ledger, rank-prior, rank-evaluate) also refuse
//! what [`find`] reports: a credential name assigned a value (`password: hunter2`,
//! `api_key=…`), a URL with a password (`postgres://u:pw@host/db`), and the well-known key
//! prefixes (`sk-…`, `AKIA…`, `ghp_…`, `xoxb-…`, `glpat-…`, a PEM private key). The
//! design and its examples are in docs/compatibility.md. Pure: no I/O.

use std::fmt;

use super::json::Value;
use super::keys;
use super::text::{self, FieldError, FieldResult};

/// What kind of credential a text seems to hold; its `Display` names the shape only,
/// never the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// A credential name assigned a value (`password=…`, `api_key: …`).
    Assignment(&'static str),
    /// A URL whose user information holds a password (`scheme://user:pass@host`).
    UrlPassword,
    /// A value with a well-known key prefix (`sk-…`, `AKIA…`).
    KeyPrefix(&'static str),
    /// A PEM private key block.
    PrivateKeyBlock,
    /// What the reference's own secret pattern finds (a bearer token, a JWT, an `ak`/`sk`
    /// key): free text has passed it already, refs and tokens never did.
    ReferenceSecret,
}

impl fmt::Display for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::Assignment(name) => write!(f, "{name}=..."),
            Credential::UrlPassword => f.write_str("scheme://user:password@host"),
            Credential::KeyPrefix(prefix) => write!(f, "{prefix}..."),
            Credential::PrivateKeyBlock => f.write_str("-----BEGIN ... PRIVATE KEY-----"),
            Credential::ReferenceSecret => f.write_str("an access key or token"),
        }
    }
}

/// Credential names, as their parts: between two parts the text may have `_`, `-`, a
/// space or nothing (`api_key`, `api-key`, `apikey`). A compound that ends in a listed
/// name (`client_secret`, `access_token`, `db_password`) is found through that name.
const NAMES: &[(&str, &[&str])] = &[
    ("api_key", &["api", "key"]),
    ("access_key", &["access", "key"]),
    ("secret_key", &["secret", "key"]),
    ("private_key", &["private", "key"]),
    ("password", &["password"]),
    ("passwd", &["passwd"]),
    ("passphrase", &["passphrase"]),
    ("pwd", &["pwd"]),
    ("secret", &["secret"]),
    ("token", &["token"]),
    ("auth", &["auth"]),
    ("authorization", &["authorization"]),
    ("credential", &["credential"]),
    ("credentials", &["credentials"]),
];

/// Fewest value characters after `=`/`:` that make an assignment a credential.
const MIN_VALUE: usize = 3;

fn is_alnum(b: Option<&u8>) -> bool {
    b.is_some_and(u8::is_ascii_alphanumeric)
}

/// `[^\s`'"<>]`: a character of an assigned value (the reference's value class).
fn is_value_byte(b: u8) -> bool {
    !b.is_ascii_whitespace() && !matches!(b, b'`' | b'\'' | b'"' | b'<' | b'>')
}

/// The start of `part` when the text ends with it at `end` (ASCII case-insensitive).
fn ends_with_part(t: &[u8], end: usize, part: &str) -> Option<usize> {
    let start = end.checked_sub(part.len())?;
    t[start..end]
        .eq_ignore_ascii_case(part.as_bytes())
        .then_some(start)
}

/// The name of [`NAMES`] that ends at `end`, starting at a word boundary.
fn name_before(t: &[u8], end: usize) -> Option<&'static str> {
    // Every name ends in one of these letters: most text is answered here.
    let last = end.checked_sub(1).map(|i| t[i].to_ascii_lowercase());
    if !matches!(
        last,
        Some(b'y' | b'd' | b'e' | b't' | b'n' | b'h' | b'l' | b's')
    ) {
        return None;
    }
    'names: for (name, parts) in NAMES {
        let mut at = end;
        for (i, part) in parts.iter().rev().enumerate() {
            if i > 0 && at > 0 && matches!(t[at - 1], b'_' | b'-' | b' ') {
                at -= 1;
            }
            match ends_with_part(t, at, part) {
                Some(start) => at = start,
                None => continue 'names,
            }
        }
        if at == 0 || !is_alnum(t.get(at - 1)) {
            return Some(*name);
        }
    }
    None
}

/// `name ["'] \s* [=:] \s* ["'] value{3,}` with the sign at `sign`; `::` is a path
/// separator (`auth::session`), not an assignment.
fn assignment_at(t: &[u8], sign: usize) -> Option<Credential> {
    if t[sign] == b':' && (t.get(sign + 1) == Some(&b':') || (sign > 0 && t[sign - 1] == b':')) {
        return None;
    }
    let mut end = sign;
    while end > 0 && t[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if end > 0 && matches!(t[end - 1], b'"' | b'\'') {
        end -= 1;
    }
    let name = name_before(t, end)?;
    let mut v = sign + 1;
    while v < t.len() && t[v].is_ascii_whitespace() {
        v += 1;
    }
    if v < t.len() && matches!(t[v], b'"' | b'\'') {
        v += 1;
    }
    let value = t[v..].iter().take_while(|b| is_value_byte(**b)).count();
    (value >= MIN_VALUE).then_some(Credential::Assignment(name))
}

/// `scheme://user:password@host` with `://` at `i`.
fn url_password_at(t: &[u8], i: usize) -> bool {
    if !(i > 0 && t[i - 1].is_ascii_alphanumeric()) {
        return false;
    }
    let rest = &t[i + 3..];
    let userinfo_end = rest
        .iter()
        .position(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'?' | b'#' | b'@'));
    match userinfo_end {
        Some(at) if rest[at] == b'@' => {
            let userinfo = &rest[..at];
            let host = rest.get(at + 1).is_some_and(|b| !b.is_ascii_whitespace());
            host && userinfo
                .iter()
                .position(|b| *b == b':')
                .is_some_and(|colon| colon + 1 < userinfo.len())
        }
        _ => false,
    }
}

/// A key prefix: its text, the bytes its body may hold, the fewest and (for a fixed
/// length) most body bytes, and whether the body must hold a digit.
struct Prefix {
    text: &'static str,
    body: fn(u8) -> bool,
    min: usize,
    exact: bool,
    digit: bool,
}

fn key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn upper_or_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

const PREFIXES: &[Prefix] = &[
    // OpenAI-style keys; `sk-learn` is no key, so the body must hold a digit.
    Prefix {
        text: "sk-",
        body: key_byte,
        min: 8,
        exact: false,
        digit: true,
    },
    Prefix {
        text: "sk_live_",
        body: key_byte,
        min: 8,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "sk_test_",
        body: key_byte,
        min: 8,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "rk_live_",
        body: key_byte,
        min: 8,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "AKIA",
        body: upper_or_digit,
        min: 16,
        exact: true,
        digit: false,
    },
    Prefix {
        text: "ASIA",
        body: upper_or_digit,
        min: 16,
        exact: true,
        digit: false,
    },
    Prefix {
        text: "AIza",
        body: key_byte,
        min: 35,
        exact: true,
        digit: false,
    },
    Prefix {
        text: "ghp_",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "gho_",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "ghu_",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "ghs_",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "ghr_",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "github_pat_",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "glpat-",
        body: key_byte,
        min: 16,
        exact: false,
        digit: false,
    },
    Prefix {
        text: "xoxb-",
        body: key_byte,
        min: 8,
        exact: false,
        digit: true,
    },
    Prefix {
        text: "xoxa-",
        body: key_byte,
        min: 8,
        exact: false,
        digit: true,
    },
    Prefix {
        text: "xoxp-",
        body: key_byte,
        min: 8,
        exact: false,
        digit: true,
    },
    Prefix {
        text: "xoxr-",
        body: key_byte,
        min: 8,
        exact: false,
        digit: true,
    },
    Prefix {
        text: "xoxs-",
        body: key_byte,
        min: 8,
        exact: false,
        digit: true,
    },
];

/// The prefix of [`PREFIXES`] that starts a key at `i` (case-sensitive, after a word
/// boundary).
fn prefix_at(t: &[u8], i: usize) -> Option<&'static str> {
    if i > 0 && t[i - 1].is_ascii_alphanumeric() {
        return None;
    }
    PREFIXES.iter().find_map(|p| {
        if p.text.as_bytes()[0] != t[i] {
            return None;
        }
        let body = t[i..].strip_prefix(p.text.as_bytes())?;
        let run = body.iter().take_while(|b| (p.body)(**b)).count();
        let fits = if p.exact {
            run == p.min && !is_alnum(body.get(run))
        } else {
            run >= p.min
        };
        let digit = !p.digit || body[..run].iter().any(u8::is_ascii_digit);
        (fits && digit).then_some(p.text)
    })
}

/// [`text::has_secret`], for text that may hold one of the alternatives [`find`] does
/// not cover (`ak`/`sk` keys, JWTs, bearer tokens): the gate spares the scan for most
/// refs.
fn reference_secret(text: &str) -> bool {
    let gate = text.as_bytes().windows(2).any(|w| {
        matches!(
            [w[0].to_ascii_lowercase(), w[1].to_ascii_lowercase()],
            [b'a' | b's', b'k'] | [b'e', b'y'] | [b'b', b'e']
        )
    });
    gate && text::has_secret(text)
}

/// The first credential-shaped part of `text`, if any.
pub fn find(text: &str) -> Option<Credential> {
    let t = text.as_bytes();
    for i in 0..t.len() {
        match t[i] {
            b'-' if t[i..].starts_with(b"-----BEGIN") && text[i..].contains("PRIVATE KEY") => {
                return Some(Credential::PrivateKeyBlock);
            }
            b'=' | b':' => {
                if let Some(found) = assignment_at(t, i) {
                    return Some(found);
                }
                if t[i..].starts_with(b"://") && url_password_at(t, i) {
                    return Some(Credential::UrlPassword);
                }
            }
            b's' | b'r' | b'A' | b'g' | b'x' => {
                if let Some(prefix) = prefix_at(t, i) {
                    return Some(Credential::KeyPrefix(prefix));
                }
            }
            _ => {}
        }
    }
    reference_secret(text).then_some(Credential::ReferenceSecret)
}

/// Refuses text [`find`] reports, with a message that says what to fix and names the
/// shape found, never the text.
pub fn check(text: &str, label: &str) -> FieldResult<()> {
    check_labelled(text, || label.to_owned())
}

/// [`check`] with the label built only for a refusal (hot paths check many fields).
pub fn check_labelled(text: &str, label: impl FnOnce() -> String) -> FieldResult<()> {
    match find(text) {
        None => Ok(()),
        Some(found) => Err(FieldError(format!(
            "{} looks like it holds a credential ({found}): remove the secret; packets must be public-safe",
            label()
        ))),
    }
}

/// [`check`] on every string inside `value`, labelled by its path under `label`
/// (`queries[0].query_summary`); a key that is not a plain identifier is shown as `*`.
pub fn check_strings(value: &Value, label: &str) -> FieldResult<()> {
    match value {
        Value::Str(s) => check(s, label),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_strings(item, &format!("{label}[{i}]"))),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let key = if keys::is_plain_key(key) { key } else { "*" };
            let path = if label.is_empty() {
                key.to_owned()
            } else {
                format!("{label}.{key}")
            };
            check_strings(item, &path)
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_shaped_text_is_found() {
        let cases: &[(&str, Credential)] = &[
            ("api_key=sk-123456789", Credential::Assignment("api_key")),
            ("password: hunter2", Credential::Assignment("password")),
            ("postgres://u:pw@h/db", Credential::UrlPassword),
            (
                "postgres://ledger:hunter2@db.internal/utility_ledger",
                Credential::UrlPassword,
            ),
            ("https://bob:s3cret@example.com", Credential::UrlPassword),
            ("APIKEY: abcdef", Credential::Assignment("api_key")),
            ("api-key = abcdef", Credential::Assignment("api_key")),
            ("Passwd=abc", Credential::Assignment("passwd")),
            ("pwd=abc123", Credential::Assignment("pwd")),
            ("secret=abc", Credential::Assignment("secret")),
            ("client_secret: abcdef", Credential::Assignment("secret")),
            ("token=abc", Credential::Assignment("token")),
            ("GITHUB_TOKEN=abcdef", Credential::Assignment("token")),
            ("auth=xyz", Credential::Assignment("auth")),
            ("x-auth: xyz", Credential::Assignment("auth")),
            ("credentials=user1", Credential::Assignment("credentials")),
            ("credential: pass", Credential::Assignment("credential")),
            ("private_key: MIIEv", Credential::Assignment("private_key")),
            ("db_password:hunter2", Credential::Assignment("password")),
            (
                r#"{"password": "hunter2"}"#,
                Credential::Assignment("password"),
            ),
            ("see url?token=abc123&x=1", Credential::Assignment("token")),
            ("password:hunter2", Credential::Assignment("password")),
            ("sk-123456789", Credential::KeyPrefix("sk-")),
            ("key sk-proj-ab12cd34ef", Credential::KeyPrefix("sk-")),
            ("sk_live_abcdefgh", Credential::KeyPrefix("sk_live_")),
            ("AKIAIOSFODNN7EXAMPLE", Credential::KeyPrefix("AKIA")),
            ("id AKIAIOSFODNN7EXAMPLE.", Credential::KeyPrefix("AKIA")),
            ("xoxb-123456789012-abc", Credential::KeyPrefix("xoxb-")),
            ("ghp_abcdefghijklmnop", Credential::KeyPrefix("ghp_")),
            ("glpat-abcdefghijklmnop", Credential::KeyPrefix("glpat-")),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
                Credential::PrivateKeyBlock,
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                Credential::PrivateKeyBlock,
            ),
            ("sk-abcdefghijk", Credential::ReferenceSecret),
            ("ak_abcdefghijk", Credential::ReferenceSecret),
            ("sk:x", Credential::ReferenceSecret),
            (
                "eyJabcdefghij.abcdefghij.abcdefghij",
                Credential::ReferenceSecret,
            ),
            (
                "Bearer abcdefghijklmnopqrstuvwxyz",
                Credential::ReferenceSecret,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(find(text), Some(*expected), "{text}");
        }
    }

    #[test]
    fn ordinary_text_and_refs_pass() {
        let cases = [
            "review-habits",
            "test-commits",
            "tokenizer",
            "tokenizer: bert",
            "password policy review",
            "key: value semantics",
            "Fix the flaky retry test in the scheduler",
            "the auth flow was refactored; tokens are cached",
            "auth::session is rewritten",
            "max_token: 5",
            "token=",
            "password: ",
            "sk-learn tutorial",
            "task-abcdefghijk",
            "risk-123456789",
            "desk_live_abcdefgh",
            "AKIAIOSFODNN7EXAMPLEX",
            "https://example.com/home/u",
            "ssh://git@github.com/org/repo",
            "mailto:bob@example.com",
            "retrieval:stage2",
            "policy:stage2",
            "evaluator:stage2",
            "evaluation:helpful",
            "test:helpful",
            "effect:stage2",
            "agent:stage2",
            "loopx.issue_fix",
            "2026-08-15T00:00:00Z",
            "ghp_short",
            "-----BEGIN CERTIFICATE-----",
            "",
        ];
        for text in cases {
            assert_eq!(find(text), None, "{text}");
        }
    }

    #[test]
    fn the_message_names_the_shape_and_never_the_text() {
        let err = check("password: hunter2", "query_summary").expect_err("credential");
        assert_eq!(
            err.0,
            "query_summary looks like it holds a credential (password=...): remove the secret; packets must be public-safe"
        );
        let err = check("postgres://u:pw@h/db", "artifact_ref").expect_err("credential");
        assert!(!err.0.contains("pw@h"), "{}", err.0);
        assert_eq!(check("plain", "x"), Ok(()));
    }

    #[test]
    fn check_strings_labels_each_string_by_its_path() {
        let v = crate::wire::json::parse(
            r#"{"limit": 3, "queries": [{"query": "a", "query_summary": "password: hunter2"}]}"#,
        )
        .expect("valid");
        let err = check_strings(&v, "").expect_err("credential");
        assert!(
            err.0.starts_with("queries[0].query_summary looks like"),
            "{}",
            err.0
        );
        let odd = crate::wire::json::parse(r#"{"/home/x": "token=abcdef"}"#).expect("valid");
        let err = check_strings(&odd, "request").expect_err("credential");
        assert!(err.0.starts_with("request.* looks like"), "{}", err.0);
        let clean = crate::wire::json::parse(r#"{"a": ["review habits", 1]}"#).expect("valid");
        assert_eq!(check_strings(&clean, ""), Ok(()));
    }

    #[test]
    fn non_ascii_text_is_scanned_without_panicking() {
        for text in [
            "é:abc",
            "日本token=日本語",
            "ü://ä:ö@x",
            "€sk-12345678",
            "::",
        ] {
            let _ = find(text);
        }
        assert_eq!(
            find("日本token=abcdef"),
            Some(Credential::Assignment("token"))
        );
    }
}
