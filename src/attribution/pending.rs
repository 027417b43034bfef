//! A pending attribution (§7): the entry `apply` leaves for a receipt when a ledger is
//! configured, settled by `utility-attribute --pending` once the outcome is known, or
//! expired (moved aside) after its window. Pure: the times come in as arguments.

use crate::wire::json::{self, Value};
use crate::wire::timestamp::parse_aware;

/// Schema of a pending entry file.
pub const PENDING_SCHEMA_VERSION: &str = "memory_utility_attribution_pending_v0";

/// How long a pending entry waits for its outcome unless the profile says otherwise:
/// seven days.
pub const DEFAULT_PENDING_WINDOW_SECONDS: u64 = 7 * 24 * 3600;

/// One pending attribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEntry {
    pub application_receipt_id: String,
    /// When `apply` recorded it (aware ISO timestamp).
    pub created_at: String,
    /// When it expires (aware ISO timestamp).
    pub expires_at: String,
}

impl PendingEntry {
    /// The entry of a receipt recorded at `created_at`, waiting `window_seconds`; `None`
    /// when `created_at` is not an aware timestamp.
    pub fn new(receipt_id: &str, created_at: &str, window_seconds: u64) -> Option<PendingEntry> {
        let created = chrono::DateTime::parse_from_rfc3339(created_at).ok()?;
        let expires = created
            .checked_add_signed(chrono::TimeDelta::seconds(
                i64::try_from(window_seconds).ok()?,
            ))?
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        Some(PendingEntry {
            application_receipt_id: receipt_id.to_owned(),
            created_at: created_at.to_owned(),
            expires_at: expires,
        })
    }

    /// The file's JSON text.
    pub fn to_text(&self) -> String {
        json::to_pretty_line(&Value::Object(crate::obj! {
            "schema_version" => PENDING_SCHEMA_VERSION,
            "application_receipt_id" => self.application_receipt_id.as_str(),
            "created_at" => self.created_at.as_str(),
            "expires_at" => self.expires_at.as_str(),
        }))
    }

    /// Reads a file's bytes back; `None` when they are not an entry.
    pub fn parse(bytes: &[u8]) -> Option<PendingEntry> {
        let value = json::parse(json::decode_utf8(bytes).ok()?).ok()?;
        let map = value.as_object()?;
        if map.get("schema_version").and_then(Value::as_str) != Some(PENDING_SCHEMA_VERSION) {
            return None;
        }
        let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_owned);
        let entry = PendingEntry {
            application_receipt_id: text("application_receipt_id")?,
            created_at: text("created_at")?,
            expires_at: text("expires_at")?,
        };
        (super::is_receipt_id(&entry.application_receipt_id)
            && parse_aware(&entry.expires_at).is_ok())
        .then_some(entry)
    }

    /// True when the entry's window has passed at `now` (an aware ISO timestamp); an
    /// unreadable `now` expires nothing.
    pub fn expired_at(&self, now: &str) -> bool {
        match (
            chrono::DateTime::parse_from_rfc3339(&self.expires_at),
            chrono::DateTime::parse_from_rfc3339(now),
        ) {
            (Ok(expires), Ok(now)) => expires <= now,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_round_trips_and_expires_after_its_window() {
        let id = format!("rma_{}", "ab".repeat(32));
        let entry = PendingEntry::new(&id, "2026-07-16T02:00:00.000000+00:00", 60).expect("entry");
        assert_eq!(entry.expires_at, "2026-07-16T02:01:00.000000+00:00");
        assert_eq!(
            PendingEntry::parse(entry.to_text().as_bytes()),
            Some(entry.clone())
        );
        assert!(!entry.expired_at("2026-07-16T02:00:59+00:00"));
        assert!(entry.expired_at("2026-07-16T02:01:00+00:00"));
        assert_eq!(PendingEntry::parse(b"{}"), None);
    }
}
