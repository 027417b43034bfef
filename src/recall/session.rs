//! The private recall session (`reward_memory_recall_session_v0`): what `apply` needs from
//! an earlier `recall` process without the public packet ever showing a raw provider ref.
//!
//! Owns the session document (the public recall packet plus, per result, the raw
//! resource ref behind its opaque `memory_ref`), the opaque `recall_session_ref`
//! (`rms_` + 32 random hex digits), where a session lives under the runtime root, and
//! its expiry. Pure: the caller supplies the random bytes and the clock reading and stores
//! the bytes (mode 0600) through [`crate::io`]. It must not widen what `apply` accepts:
//! only refs this recall returned map back.

use std::path::{Path, PathBuf};

use crate::obj;
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

/// A session read back from its document.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSession {
    pub session_ref: String,
    pub created_at: String,
    pub expires_at: String,
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

/// The session document: compact JSON of the public packet and the private items.
pub fn encode(
    session: &RecallSession,
    opaque_refs: &[String],
    session_ref: &str,
    created_at: &str,
    expires_at: &str,
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
    json::dumps(
        &Value::Object(obj! {
        "schema_version" => SESSION_SCHEMA_VERSION,
        "recall_session_ref" => session_ref,
        "created_at" => created_at,
        "expires_at" => expires_at,
        "recall" => session.packet.clone(),
        "items" => Value::Array(items.into()),
        }),
        DOCUMENT,
    )
}

fn text(map: &Map, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Reads a session document back; anything unexpected is [`SessionError::Unreadable`].
pub fn decode(bytes: &[u8], session_ref: &str) -> Result<StoredSession, SessionError> {
    let unreadable = || SessionError::Unreadable(session_ref.to_owned());
    let value = std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| json::parse(t).ok())
        .ok_or_else(unreadable)?;
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
        session: RecallSession { packet, items },
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
        );
        assert!(!bytes.contains("not stored"));
        let stored = decode(bytes.as_bytes(), &r).expect("decodes");
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
        assert!(decode(bytes.as_bytes(), &session_ref(&"1f".repeat(16))).is_err());
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
