//! The private recall session (`reward_memory_recall_session_v0`): what `apply` needs from
//! an earlier `recall` process without the public packet ever showing a raw provider ref.
//!
//! Owns the session document (the public recall packet plus, per result, the raw
//! resource ref behind its opaque `memory_ref`), the opaque `recall_session_ref`
//! (`rms_` + 32 random hex digits), where a session lives under the runtime root, its
//! expiry, which file names in the session directory are ours to sweep
//! ([`is_session_file_name`], [`temporary_pid`]) and the document's integrity tag. Pure:
//! the caller supplies the random bytes, the clock reading and the key, and stores the
//! bytes (mode 0600) through [`crate::runtime::sessions`]. It must not widen what `apply`
//! accepts: only refs this recall returned map back, from a document nobody changed
//! since.
//!
//! **Integrity.** The document's last member, `integrity`, is `hmac-sha256:` + the
//! HMAC-SHA256 of the J3 text (sorted keys, compact) of the rest of the document under
//! the runtime root's session key (`reward-memory/recall-session.key`: 32 random bytes
//! as 64 hex digits, mode 0600, created by the first recall). A plain digest would be
//! recomputed by whoever edits the file; the keyed tag cannot be without reading the
//! key, which the same trust rule protects (ours, not readable or writable by anybody
//! else). So a session copied from another runtime root, restored from elsewhere or
//! edited by a tool that only sees the sessions directory is refused, and every field is
//! covered: `provider_resource_ref`, `content_digest`, `relevance_score`, the expiry.
//! What the key cannot stop is a process of this same user (or root) that reads it: it
//! could equally run `recall` itself.

use std::path::{Path, PathBuf};

use crate::obj;
use crate::wire::digest;
use crate::wire::json::{self, Map, Value};
use crate::wire::timestamp::{Instant, parse_aware};

use super::execute::{RecallItem, RecallSession};

/// Schema version of a stored session document.
pub const SESSION_SCHEMA_VERSION: &str = "reward_memory_recall_session_v0";
/// Prefix of every `recall_session_ref`.
pub const SESSION_REF_PREFIX: &str = "rms_";
/// Random bytes in a session ref (32 hex digits).
pub const SESSION_REF_BYTES: usize = 16;
/// How long a session stays usable when the caller names no `--session-ttl`.
pub const DEFAULT_TTL_SECONDS: u64 = 3600;
/// The longest accepted `--session-ttl` (seven days).
pub const MAX_TTL_SECONDS: u64 = 604_800;
/// The document member holding the integrity tag (always the last one).
pub const INTEGRITY_FIELD: &str = "integrity";
/// Prefix of the integrity tag's value.
pub const INTEGRITY_PREFIX: &str = "hmac-sha256:";
/// The session key's file name, in `<runtime_root>/reward-memory/`.
pub const KEY_FILE_NAME: &str = "recall-session.key";
/// Random bytes of a session key.
pub const KEY_BYTES: usize = 32;

/// Why a recall session cannot be used; each message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error(
        "recall_session_ref must be the value recall printed (rms_ followed by 32 lowercase hex digits)"
    )]
    InvalidRef,
    #[error(
        "recall session {0} was not found under the runtime root: run recall again with the same --runtime-root (expired sessions are removed)"
    )]
    NotFound(String),
    #[error("recall session {session} expired at {expires_at}: run recall again")]
    Expired { session: String, expires_at: String },
    #[error("recall session {0} cannot be read: run recall again")]
    Unreadable(String),
    #[error(
        "recall session {0} was modified after recall wrote it (its integrity tag does not match): run recall again"
    )]
    Modified(String),
    #[error("recall session {session} cannot be verified: {why}: run recall again")]
    Unverified { session: String, why: String },
    #[error(
        "recall session key {0} is not 64 lowercase hex digits: remove it and run recall again (it makes a new key)"
    )]
    BadKey(String),
    /// A file or directory of the session store fails the trust rule
    /// ([`crate::io::trust`]); the message names the path and the fix.
    #[error("{0}")]
    Untrusted(String),
    #[error("cannot store the recall session under the runtime root: {0}")]
    Store(String),
    #[error("memory ref {memory_ref} was not returned by recall session {session}")]
    ForeignRef { memory_ref: String, session: String },
    #[error(
        "memory refs must be the opaque memory_ref values recall printed (provider- followed by 20 hex digits)"
    )]
    NotOpaque,
    #[error("--session-ttl must be between 1 and {MAX_TTL_SECONDS} seconds")]
    Ttl,
}

/// What the receipt of an `apply` on this session records beyond the §10.5 fields
/// (issue 21): the scope of the route that produced the recall and the recall's
/// snapshot refs. Each is `None` when the recall had none: the explicit form
/// (`recall --input`) has no route, so no agent or project; a session written before
/// these existed has none of them, and its receipt is the plain §10.5 one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionContext {
    /// The route's agent (`--agent-id`).
    pub agent_id: Option<String>,
    /// The project of the corpus that answered (its scope's `project_ref`).
    pub project_id: Option<String>,
    /// `retrieval:<provider>:<hex>` ([`super::snapshot::retrieval_snapshot_ref`]).
    pub retrieval_snapshot_ref: Option<String>,
    /// `policy:<hex>` ([`super::snapshot::policy_snapshot_ref`]).
    pub policy_snapshot_ref: Option<String>,
}

impl SessionContext {
    /// The fields in document order, with their keys.
    pub fn fields(&self) -> [(&'static str, Option<&str>); 4] {
        [
            ("agent_id", self.agent_id.as_deref()),
            ("project_id", self.project_id.as_deref()),
            (
                "retrieval_snapshot_ref",
                self.retrieval_snapshot_ref.as_deref(),
            ),
            ("policy_snapshot_ref", self.policy_snapshot_ref.as_deref()),
        ]
    }

    fn to_value(&self) -> Value {
        let mut map = Map::new();
        for (key, value) in self.fields() {
            map.insert(key, value);
        }
        Value::Object(map)
    }

    /// The context member of a document: absent is the empty context (an older
    /// session); `None` when it is present but not an object of strings and nulls.
    fn from_member(member: Option<&Value>) -> Option<SessionContext> {
        let Some(member) = member else {
            return Some(SessionContext::default());
        };
        let map = member.as_object()?;
        let field = |key: &str| -> Option<Option<String>> {
            match map.get(key) {
                None | Some(Value::Null) => Some(None),
                Some(Value::Str(s)) => Some(Some(s.to_string())),
                Some(_) => None,
            }
        };
        Some(SessionContext {
            agent_id: field("agent_id")?,
            project_id: field("project_id")?,
            retrieval_snapshot_ref: field("retrieval_snapshot_ref")?,
            policy_snapshot_ref: field("policy_snapshot_ref")?,
        })
    }
}

/// A session read back from its document.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSession {
    pub session_ref: String,
    pub created_at: String,
    pub expires_at: String,
    /// The scope and snapshot refs the receipt records ([`SessionContext`]).
    pub context: SessionContext,
    /// The public packet and the items with their raw refs (content summaries are not
    /// stored and read back empty).
    pub session: RecallSession,
    /// The opaque `memory_ref` printed for each item, in item order.
    pub opaque_refs: Vec<String>,
}

/// `rms_` + the given random hex.
pub fn session_ref(random_hex: &str) -> String {
    format!("{SESSION_REF_PREFIX}{random_hex}")
}

/// True for `rms_` followed by exactly 32 lowercase hex digits (so a ref can never name
/// a path outside the session directory).
pub fn is_session_ref(text: &str) -> bool {
    text.strip_prefix(SESSION_REF_PREFIX).is_some_and(|hex| {
        hex.len() == 2 * SESSION_REF_BYTES
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// True for the file name of a session this crate writes: `rms_<32 hex>.json`.
pub fn is_session_file_name(name: &str) -> bool {
    name.strip_suffix(".json").is_some_and(is_session_ref)
}

/// The writer's pid when `name` is a temporary of a session being written
/// (`.rms_<32 hex>.json.<pid>.tmp`, see [`crate::io::replace_private_file`]).
pub fn temporary_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (file, pid) = rest.rsplit_once('.')?;
    if !is_session_file_name(file) || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// `<runtime_root>/reward-memory/recall-session.key`.
pub fn key_path(runtime_root: &Path) -> PathBuf {
    runtime_root.join("reward-memory").join(KEY_FILE_NAME)
}

/// The runtime root's session key.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKey([u8; KEY_BYTES]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// The key of a key file's text: 64 lowercase hex digits and at most one newline.
    pub fn parse(bytes: &[u8]) -> Option<SessionKey> {
        let hex = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        digest::decode_hex32(hex).map(SessionKey)
    }

    /// The text of a new key file for `random_hex` (64 hex digits from the OS).
    pub fn file_text(random_hex: &str) -> String {
        format!("{random_hex}\n")
    }

    fn tag(&self, document: &Value) -> String {
        let mac = digest::hmac_sha256(&self.0, digest::j3(document).as_bytes());
        let mut out = String::with_capacity(INTEGRITY_PREFIX.len() + 64);
        out.push_str(INTEGRITY_PREFIX);
        digest::push_hex(&mut out, &mac);
        out
    }
}

/// `<runtime_root>/reward-memory/recall-sessions`.
pub fn session_dir(runtime_root: &Path) -> PathBuf {
    runtime_root.join("reward-memory").join("recall-sessions")
}

/// The file of one session.
pub fn session_path(dir: &Path, session_ref: &str) -> PathBuf {
    dir.join(format!("{session_ref}.json"))
}

/// `created_at` plus `ttl_seconds`, in the same ISO form (`None` when `created_at` is not
/// an RFC 3339 timestamp).
pub fn expiry(created_at: &str, ttl_seconds: u64) -> Option<String> {
    let created = chrono::DateTime::parse_from_rfc3339(created_at).ok()?;
    let ttl = chrono::Duration::seconds(i64::try_from(ttl_seconds).ok()?);
    let expires = created.checked_add_signed(ttl)?;
    Some(expires.to_rfc3339_opts(chrono::SecondsFormat::Micros, false))
}

/// Compact JSON that keeps key order (the packet's own order survives the round trip).
const DOCUMENT: json::DumpOptions = json::DumpOptions {
    indent: None,
    item_sep: ",",
    key_sep: ":",
    sort_keys: false,
    ensure_ascii: false,
};

/// The session document: compact JSON of the public packet and the private items, its
/// integrity tag under `key` last.
pub fn encode(
    session: &RecallSession,
    opaque_refs: &[String],
    session_ref: &str,
    created_at: &str,
    expires_at: &str,
    context: &SessionContext,
    key: &SessionKey,
) -> String {
    let items: Vec<Value> = session
        .items
        .iter()
        .zip(opaque_refs)
        .map(|(item, opaque)| {
            Value::Object(obj! {
                "memory_ref" => opaque.as_str(),
                "provider_resource_ref" => item.memory_ref.as_str(),
                "candidate_ref" => item.candidate_ref.as_str(),
                "target_class" => item.target_class.as_str(),
                "content_digest" => item.content_digest.as_str(),
                "relevance_score" => item.relevance,
            })
        })
        .collect();
    let document = Value::Object(obj! {
        "schema_version" => SESSION_SCHEMA_VERSION,
        "recall_session_ref" => session_ref,
        "created_at" => created_at,
        "expires_at" => expires_at,
        "recall" => session.packet.clone(),
        "context" => context.to_value(),
        "items" => Value::Array(items.into()),
    });
    seal(document, key)
}

/// A document's text with its integrity tag under `key` appended as the last member
/// (an `integrity` member already there is replaced). What [`encode`] writes; tests and
/// operators with the key can re-seal a document they changed on purpose.
pub fn seal(mut document: Value, key: &SessionKey) -> String {
    if let Value::Object(map) = &mut document {
        map.remove(INTEGRITY_FIELD);
    }
    let tag = key.tag(&document);
    if let Value::Object(map) = &mut document {
        map.insert(INTEGRITY_FIELD, tag);
    }
    json::dumps(&document, DOCUMENT)
}

fn text(map: &Map, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Reads a session document back. Its integrity tag is checked under `key` before any
/// field is read: no tag is [`SessionError::Unverified`], a wrong one
/// [`SessionError::Modified`]; anything else unexpected is [`SessionError::Unreadable`].
pub fn decode(
    bytes: &[u8],
    session_ref: &str,
    key: &SessionKey,
) -> Result<StoredSession, SessionError> {
    let unreadable = || SessionError::Unreadable(session_ref.to_owned());
    let mut value = std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| json::parse(t).ok())
        .ok_or_else(unreadable)?;
    let Value::Object(document) = &mut value else {
        return Err(unreadable());
    };
    let tag = match document.remove(INTEGRITY_FIELD) {
        Some(Value::Str(tag)) => tag,
        _ => {
            return Err(SessionError::Unverified {
                session: session_ref.to_owned(),
                why: "it carries no integrity tag (written by an older reward-memory, or edited)"
                    .to_owned(),
            });
        }
    };
    if !digest::constant_time_eq(key.tag(&value).as_bytes(), tag.as_bytes()) {
        return Err(SessionError::Modified(session_ref.to_owned()));
    }
    let map = value.as_object().ok_or_else(unreadable)?;
    if text(map, "schema_version").as_deref() != Some(SESSION_SCHEMA_VERSION)
        || text(map, "recall_session_ref").as_deref() != Some(session_ref)
    {
        return Err(unreadable());
    }
    let created_at = text(map, "created_at").ok_or_else(unreadable)?;
    let expires_at = text(map, "expires_at").ok_or_else(unreadable)?;
    parse_aware(&expires_at).map_err(|_| unreadable())?;
    let packet = map
        .get("recall")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(unreadable)?;
    let context = SessionContext::from_member(map.get("context")).ok_or_else(unreadable)?;
    let rows = map
        .get("items")
        .and_then(Value::as_array)
        .ok_or_else(unreadable)?;
    let mut items = Vec::with_capacity(rows.len());
    let mut opaque_refs = Vec::with_capacity(rows.len());
    for row in rows {
        let row = row.as_object().ok_or_else(unreadable)?;
        let field = |k: &str| text(row, k).ok_or_else(unreadable);
        opaque_refs.push(field("memory_ref")?);
        items.push(RecallItem {
            memory_ref: field("provider_resource_ref")?,
            candidate_ref: field("candidate_ref")?,
            target_class: field("target_class")?,
            content_summary: String::new(),
            content_digest: field("content_digest")?,
            relevance: match row.get("relevance_score") {
                Some(Value::Float(f)) => Some(*f),
                Some(Value::Int(i)) => Some(*i as f64),
                _ => None,
            },
        });
    }
    Ok(StoredSession {
        session_ref: session_ref.to_owned(),
        created_at,
        expires_at,
        session: RecallSession {
            packet,
            items,
            retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone(),
            lifecycle_skipped: 0,
        },
        context,
        opaque_refs,
    })
}

/// True when the session can no longer be used at `now`.
pub fn is_expired(expires_at: &str, now: Instant) -> bool {
    parse_aware(expires_at).map_or(true, |expires| now >= expires)
}

impl StoredSession {
    /// Fails with [`SessionError::Expired`] once `now` reaches the expiry.
    pub fn check_live(&self, now: Instant) -> Result<(), SessionError> {
        if is_expired(&self.expires_at, now) {
            Err(SessionError::Expired {
                session: self.session_ref.clone(),
                expires_at: self.expires_at.clone(),
            })
        } else {
            Ok(())
        }
    }

    /// The raw refs behind opaque `memory_ref`s, in the given order; a ref this recall
    /// did not return is refused.
    pub fn raw_refs(&self, opaque: &[String]) -> Result<Vec<String>, SessionError> {
        opaque
            .iter()
            .map(|o| {
                let hex = o.strip_prefix("provider-").unwrap_or_default();
                if hex.len() != 20 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(SessionError::NotOpaque);
                }
                self.opaque_refs
                    .iter()
                    .position(|known| known == o)
                    .map(|i| self.session.items[i].memory_ref.clone())
                    .ok_or_else(|| SessionError::ForeignRef {
                        memory_ref: o.clone(),
                        session: self.session_ref.clone(),
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> RecallSession {
        RecallSession {
            packet: obj! {"ok" => true, "status" => "completed"},
            items: vec![RecallItem {
                memory_ref: "embedded://c/a.json".into(),
                candidate_ref: "candidate:1".into(),
                target_class: "hard_policy".into(),
                content_summary: "not stored".into(),
                content_digest: "ab".repeat(32),
                relevance: Some(0.25),
            }],
            retrieval_snapshot_ref: None,
            lifecycle_skipped: 0,
        }
    }

    #[test]
    fn a_session_round_trips_without_its_summaries() {
        let r = session_ref(&"0f".repeat(16));
        assert!(is_session_ref(&r));
        let created = "2026-08-15T00:00:00.000000+00:00";
        let expires = expiry(created, 60).expect("expiry");
        assert_eq!(expires, "2026-08-15T00:01:00.000000+00:00");
        let opaque = "provider-0123456789abcdef0123".to_owned();
        let bytes = encode(
            &session(),
            std::slice::from_ref(&opaque),
            &r,
            created,
            &expires,
            &SessionContext::default(),
            &key(),
        );
        assert!(!bytes.contains("not stored"));
        let stored = decode(bytes.as_bytes(), &r, &key()).expect("decodes");
        assert_eq!(stored.session.items[0].memory_ref, "embedded://c/a.json");
        assert_eq!(stored.session.items[0].relevance, Some(0.25));
        assert_eq!(
            stored.raw_refs(&[opaque]),
            Ok(vec!["embedded://c/a.json".to_owned()])
        );
        assert!(matches!(
            stored.raw_refs(&["provider-0123456789abcdef0124".to_owned()]),
            Err(SessionError::ForeignRef { .. })
        ));
        assert_eq!(
            stored.raw_refs(&["embedded://c/a.json".to_owned()]),
            Err(SessionError::NotOpaque)
        );
        let before = parse_aware("2026-08-15T00:00:59Z").expect("time");
        let after = parse_aware("2026-08-15T00:01:00Z").expect("time");
        assert!(stored.check_live(before).is_ok());
        assert!(matches!(
            stored.check_live(after),
            Err(SessionError::Expired { .. })
        ));
        assert!(decode(bytes.as_bytes(), &session_ref(&"1f".repeat(16)), &key()).is_err());
    }

    fn key() -> SessionKey {
        SessionKey::parse(SessionKey::file_text(&"5a".repeat(32)).as_bytes()).expect("key")
    }

    fn document() -> (String, String) {
        let r = session_ref(&"0f".repeat(16));
        let created = "2026-08-15T00:00:00.000000+00:00";
        let expires = expiry(created, 60).expect("expiry");
        let opaque = "provider-0123456789abcdef0123".to_owned();
        let bytes = encode(
            &session(),
            &[opaque],
            &r,
            created,
            &expires,
            &SessionContext::default(),
            &key(),
        );
        (r, bytes)
    }

    #[test]
    fn the_integrity_tag_is_last_and_covers_every_field() {
        let (r, bytes) = document();
        assert!(
            regex::Regex::new(r#","integrity":"hmac-sha256:[0-9a-f]{64}"\}$"#)
                .expect("pattern")
                .is_match(&bytes),
            "{bytes}"
        );
        for (from, to) in [
            ("embedded://c/a.json", "embedded://c/b.json"),
            (&"ab".repeat(32)[..], &"cd".repeat(32)[..]),
            ("0.25", "0.99"),
            ("2026-08-15T00:01:00", "2099-08-15T00:01:00"),
            ("hard_policy", "soft_policy"),
        ] {
            assert!(bytes.contains(from), "{from}");
            let edited = bytes.replace(from, to);
            assert_eq!(
                decode(edited.as_bytes(), &r, &key()),
                Err(SessionError::Modified(r.clone())),
                "{from}"
            );
        }
        // Layout does not matter, content does: the same document pretty-printed is fine.
        let value = json::parse(&bytes).expect("json");
        let pretty = json::to_pretty_line(&value);
        assert!(decode(pretty.as_bytes(), &r, &key()).is_ok());
        let other = SessionKey::parse(&[b'1'; 64]).expect("key");
        assert_eq!(
            decode(bytes.as_bytes(), &r, &other),
            Err(SessionError::Modified(r.clone()))
        );
        let Value::Object(mut map) = value else {
            panic!("object");
        };
        map.remove(INTEGRITY_FIELD);
        let untagged = json::dumps(&Value::Object(map), DOCUMENT);
        assert!(matches!(
            decode(untagged.as_bytes(), &r, &key()),
            Err(SessionError::Unverified { .. })
        ));
    }

    #[test]
    fn keys_and_sweepable_names_are_exact() {
        assert!(SessionKey::parse(&[b'a'; 64]).is_some());
        assert!(SessionKey::parse(&[b'A'; 64]).is_none());
        assert!(SessionKey::parse(&[b'a'; 63]).is_none());
        assert!(SessionKey::parse(b"").is_none());
        let name = format!("rms_{}.json", "0f".repeat(16));
        assert!(is_session_file_name(&name));
        assert_eq!(temporary_pid(&format!(".{name}.123.tmp")), Some(123));
        for other in [
            "notes.json",
            "package.json",
            "rms_0f.json",
            &format!("rms_{}.json.bak", "0f".repeat(16)),
            &format!("{name}.123.tmp"),
            &format!(".{name}.x.tmp"),
            &format!(".{name}..tmp"),
            ".rms_0f.json.1.tmp",
            "recall-session.key",
        ] {
            assert!(!is_session_file_name(other), "{other}");
            assert_eq!(temporary_pid(other), None, "{other}");
        }
    }

    #[test]
    fn session_refs_cannot_name_other_paths() {
        for bad in [
            "rms_../../etc/passwd",
            "rms_0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F",
            "rms_0f",
            "provider-123",
            "",
        ] {
            assert!(!is_session_ref(bad), "{bad}");
        }
    }
}
