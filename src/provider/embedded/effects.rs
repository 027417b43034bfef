//! Versioned effects kept in the embedded store beside its resources: today the bounded
//! rank-prior modifier table (attribution RFC §6, §8.1).
//!
//! Owns the `rank_prior_effects` table: append-only rows keyed by the projection's reducer
//! identity and the profile digest, numbered `effect_version` 1, 2, ... per key, each holding
//! the exact payload bytes and their SHA-256. Writing the same table as the latest version
//! of its key is a no-op (idempotent retry); a different table becomes the next version.
//! Every write is read back on a fresh read-only connection and compared byte for byte.
//! The store file is opened, verified and recorded exactly as a sync does
//! ([`super::file`]); failures are the store's reason codes. It never touches the
//! `resources` rows, their text or any counter: utility is not written into memory.

use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension as _, Transaction, TransactionBehavior, params};

use super::EmbeddedStore;
use super::file::{self, StoreCause};

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
    /// The store's public-safe cause code when the store could not be used.
    pub cause_code: Option<&'static str>,
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
            cause_code: None,
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn unavailable(cause: StoreCause) -> EffectOutcome {
    EffectOutcome {
        cause_code: Some(cause.code()),
        ..EffectOutcome::unavailable(cause.reason_code())
    }
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
    let deadline = Instant::now() + timeout;
    let opened = match file::open_for_write(store.path(), store.root(), timeout, store.tokenizer())
    {
        Ok(opened) => opened,
        Err(cause) => return unavailable(cause),
    };
    let digest = sha256_hex(payload);
    let written = (|| {
        let conn = &opened.conn;
        conn.execute_batch(SCHEMA)?;
        let tx = file::retry_busy(deadline, || {
            Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        })?;
        let latest: Option<(i64, String)> = tx
            .query_row(
                "SELECT effect_version, payload_sha256 FROM rank_prior_effects
                 WHERE reducer_identity = ?1 AND profile_digest = ?2
                 ORDER BY effect_version DESC LIMIT 1",
                params![key.reducer_identity, key.profile_digest],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let result = match latest {
            Some((version, existing)) if existing == digest => (version, false),
            other => {
                let version = other.map_or(1, |(v, _)| v + 1);
                // On an error `tx` is dropped, which rolls the insert back.
                tx.execute(
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
                )?;
                (version, true)
            }
        };
        tx.commit()?;
        Ok(result)
    })();
    let cause = written
        .as_ref()
        .err()
        .map(|err: &rusqlite::Error| opened.cause_of(err));
    // Closing checkpoints the WAL into the file; only then is its stat final.
    drop(opened);
    let (version, wrote) = match (written, cause) {
        (Ok(done), _) => {
            file::record_checked(store.path());
            done
        }
        (Err(_), Some(cause)) => return unavailable(cause),
        (Err(_), None) => return EffectOutcome::unavailable("provider_effect_write_failed"),
    };
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
        write_performed: wrote,
        deduplicated: !wrote,
        exact_readback_verified: exact,
        cause_code: None,
    }
}

/// True when the store has an effects table (an older store, or one never given an
/// effect, has none).
fn effects_present(conn: &rusqlite::Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'rank_prior_effects'",
        [],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n == 1)
}

/// Reads one version of an effect on a fresh read-only connection: the payload bytes
/// and the stored SHA-256 (`None` when absent).
pub fn read_rank_prior_effect(
    store: &EmbeddedStore,
    key: &EffectKey,
    version: i64,
    timeout: Duration,
) -> Result<Option<(Vec<u8>, String)>, StoreCause> {
    let Some(opened) = file::open_for_read(store.path(), store.root(), timeout)? else {
        return Ok(None);
    };
    let conn = &opened.conn;
    let read = || -> rusqlite::Result<Option<(Vec<u8>, String)>> {
        if !effects_present(conn)? {
            return Ok(None);
        }
        conn.query_row(
            "SELECT payload, payload_sha256 FROM rank_prior_effects
             WHERE reducer_identity = ?1 AND profile_digest = ?2 AND effect_version = ?3",
            params![key.reducer_identity, key.profile_digest, version],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
    };
    read().map_err(|err| opened.cause_of(&err))
}

/// The latest version of an effect key and its payload (`None` when the key has none).
pub fn latest_rank_prior_effect(
    store: &EmbeddedStore,
    key: &EffectKey,
    timeout: Duration,
) -> Result<Option<(i64, Vec<u8>)>, StoreCause> {
    let Some(opened) = file::open_for_read(store.path(), store.root(), timeout)? else {
        return Ok(None);
    };
    let conn = &opened.conn;
    let read = || -> rusqlite::Result<Option<(i64, Vec<u8>)>> {
        if !effects_present(conn)? {
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
    };
    read().map_err(|err| opened.cause_of(&err))
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
