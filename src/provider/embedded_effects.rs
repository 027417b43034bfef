//! Versioned effects kept in the embedded store beside its resources: today the bounded
//! rank-prior modifier table (attribution RFC §6, §8.1).
//!
//! Owns the `rank_prior_effects` table: append-only rows keyed by the projection's reducer
//! identity and the profile digest, numbered `effect_version` 1, 2, ... per key, each holding
//! the exact payload bytes and their SHA-256. Writing the same table as the latest version
//! of its key is a no-op (idempotent retry); a different table becomes the next version.
//! Every write is read back on a fresh connection and compared byte for byte. It never
//! touches the `resources` rows, their text or any counter: utility is not written into
//! memory. Failures are statuses with reason codes, never panics.

use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, TransactionBehavior, params};

use super::embedded::EmbeddedStore;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rank_prior_effects (
    id INTEGER PRIMARY KEY,
    reducer_identity TEXT NOT NULL,
    profile_digest TEXT NOT NULL,
    effect_version INTEGER NOT NULL,
    payload_sha256 TEXT NOT NULL,
    payload BLOB NOT NULL,
    observed_at TEXT NOT NULL,
    UNIQUE (reducer_identity, profile_digest, effect_version)
);
";

/// What the effect is keyed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectKey {
    /// The projection's `mur_` reducer identity.
    pub reducer_identity: String,
    /// The rank-prior profile's `murp_` digest.
    pub profile_digest: String,
}

/// The outcome of one effect write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectOutcome {
    /// `applied`, `readback_unverified` or `provider_unavailable`.
    pub status: &'static str,
    pub reason_code: Option<&'static str>,
    /// The version now holding the payload (`None` when nothing could be written).
    pub effect_version: Option<i64>,
    /// True when this call inserted a row.
    pub write_performed: bool,
    /// True when the latest version of the key already held these exact bytes.
    pub deduplicated: bool,
    pub exact_readback_verified: bool,
}

impl EffectOutcome {
    fn unavailable(reason: &'static str) -> EffectOutcome {
        EffectOutcome {
            status: "provider_unavailable",
            reason_code: Some(reason),
            effect_version: None,
            write_performed: false,
            deduplicated: false,
            exact_readback_verified: false,
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Writes `payload` as the latest rank-prior effect of `key` (or finds it already there)
/// and reads it back exactly.
pub fn write_rank_prior_effect(
    store: &EmbeddedStore,
    key: &EffectKey,
    payload: &[u8],
    observed_at: &str,
    timeout: Duration,
) -> EffectOutcome {
    let Ok(mut conn) = store.open_writer(timeout) else {
        return EffectOutcome::unavailable("provider_store_unavailable");
    };
    if conn.execute_batch(SCHEMA).is_err() {
        return EffectOutcome::unavailable("provider_store_unavailable");
    }
    let Ok(tx) = conn.transaction_with_behavior(TransactionBehavior::Immediate) else {
        return EffectOutcome::unavailable("provider_store_busy");
    };
    let digest = sha256_hex(payload);
    let latest: rusqlite::Result<Option<(i64, String)>> = tx
        .query_row(
            "SELECT effect_version, payload_sha256 FROM rank_prior_effects
             WHERE reducer_identity = ?1 AND profile_digest = ?2
             ORDER BY effect_version DESC LIMIT 1",
            params![key.reducer_identity, key.profile_digest],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional();
    let Ok(latest) = latest else {
        return EffectOutcome::unavailable("provider_effect_read_failed");
    };
    let (version, written) = match latest {
        Some((version, existing)) if existing == digest => (version, false),
        other => {
            let version = other.map_or(1, |(v, _)| v + 1);
            let inserted = tx.execute(
                "INSERT INTO rank_prior_effects
                 (reducer_identity, profile_digest, effect_version, payload_sha256, payload, observed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    key.reducer_identity,
                    key.profile_digest,
                    version,
                    digest,
                    payload,
                    observed_at
                ],
            );
            if inserted.is_err() {
                // Dropping the transaction rolls it back: nothing is half written.
                return EffectOutcome::unavailable("provider_effect_write_failed");
            }
            (version, true)
        }
    };
    if tx.commit().is_err() {
        return EffectOutcome::unavailable("provider_effect_write_failed");
    }
    let readback = read_rank_prior_effect(store, key, version, timeout);
    let exact = matches!(&readback, Ok(Some((bytes, sha))) if bytes == payload && *sha == digest);
    EffectOutcome {
        status: if exact {
            "applied"
        } else {
            "readback_unverified"
        },
        reason_code: (!exact).then_some("provider_effect_readback_mismatch"),
        effect_version: Some(version),
        write_performed: written,
        deduplicated: !written,
        exact_readback_verified: exact,
    }
}

/// Reads one version of an effect on a fresh read-only connection: the payload bytes
/// and the stored SHA-256 (`None` when absent).
pub fn read_rank_prior_effect(
    store: &EmbeddedStore,
    key: &EffectKey,
    version: i64,
    timeout: Duration,
) -> rusqlite::Result<Option<(Vec<u8>, String)>> {
    let conn = Connection::open_with_flags(
        store.path(),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(timeout)?;
    conn.query_row(
        "SELECT payload, payload_sha256 FROM rank_prior_effects
         WHERE reducer_identity = ?1 AND profile_digest = ?2 AND effect_version = ?3",
        params![key.reducer_identity, key.profile_digest, version],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .optional()
}

/// The latest version of an effect key (`None` when the key has none).
pub fn latest_rank_prior_effect(
    store: &EmbeddedStore,
    key: &EffectKey,
    timeout: Duration,
) -> rusqlite::Result<Option<(i64, Vec<u8>)>> {
    if !store.path().is_file() {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(
        store.path(),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(timeout)?;
    let exists: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'rank_prior_effects'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    if exists.is_none() {
        return Ok(None);
    }
    conn.query_row(
        "SELECT effect_version, payload FROM rank_prior_effects
         WHERE reducer_identity = ?1 AND profile_digest = ?2
         ORDER BY effect_version DESC LIMIT 1",
        params![key.reducer_identity, key.profile_digest],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .optional()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> EffectKey {
        EffectKey {
            reducer_identity: format!("mur_{}", "a".repeat(64)),
            profile_digest: format!("murp_{}", "b".repeat(64)),
        }
    }

    #[test]
    fn writes_versions_reads_back_exactly_and_retries_are_no_ops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::new(dir.path().join("s/embedded.sqlite3"));
        let t = Duration::from_secs(5);
        let first =
            write_rank_prior_effect(&store, &key(), b"{\"v\":1}", "2026-08-15T00:00:00Z", t);
        assert_eq!(first.status, "applied");
        assert_eq!(
            (first.effect_version, first.write_performed),
            (Some(1), true)
        );
        let retry =
            write_rank_prior_effect(&store, &key(), b"{\"v\":1}", "2026-08-15T00:01:00Z", t);
        assert_eq!((retry.status, retry.effect_version), ("applied", Some(1)));
        assert!(retry.deduplicated && !retry.write_performed);
        let next = write_rank_prior_effect(&store, &key(), b"{\"v\":2}", "2026-08-15T00:02:00Z", t);
        assert_eq!((next.effect_version, next.write_performed), (Some(2), true));
        let back = write_rank_prior_effect(&store, &key(), b"{\"v\":1}", "2026-08-15T00:03:00Z", t);
        assert_eq!(
            back.effect_version,
            Some(3),
            "an older table becomes the latest again"
        );
        assert_eq!(
            latest_rank_prior_effect(&store, &key(), t).expect("read"),
            Some((3, b"{\"v\":1}".to_vec()))
        );
        assert_eq!(store.count().expect("count"), 0, "no memory row is touched");
    }

    #[test]
    fn an_unopenable_store_is_a_status() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("dir.sqlite3")).expect("dir");
        let store = EmbeddedStore::new(dir.path().join("dir.sqlite3"));
        let out = write_rank_prior_effect(
            &store,
            &key(),
            b"x",
            "2026-08-15T00:00:00Z",
            Duration::from_secs(1),
        );
        assert_eq!(out.status, "provider_unavailable");
        assert_eq!(out.effect_version, None);
    }
}
