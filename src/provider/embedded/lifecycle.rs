//! The lifecycle of stored records: retirement, revocation and supersession as appended
//! rows beside the resources, and the recall filter that honours them.
//!
//! Owns the `resource_lifecycle` table (created with `CREATE TABLE IF NOT EXISTS` inside
//! the write transaction, so the store's schema version is unchanged): one row per
//! operator control, `(namespace, resource_ref, state, action, control_ref,
//! successor_ref, operator_ref, authority_ref, observed_at, row_sha256)`. A record's state
//! is the `state` of its latest row, `active` without one. Rows are only appended: the
//! record's bytes in `resources` are never rewritten or deleted, so the old bytes stay
//! readable by ref. A supersession writes the successor record and its index row in the
//! same `BEGIN IMMEDIATE` transaction as its lifecycle row, and every change advances the
//! store's generation, so a recall's snapshot names the lifecycle it saw. Every change is
//! read back on a fresh read-only connection and compared field for field.
//!
//! Recall (`visible`, called by the store's search) drops a retired, revoked or superseded record and one whose
//! envelope's `lifecycle.expires_at` is not after the recall's `observed_at`, counts them,
//! and puts the active successor of a superseded record in its place (unless the
//! successor is already among the hits).

use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension as _, Transaction, TransactionBehavior, params};

use super::file::{self, StoreCause};
use super::{EmbeddedStore, GENERATION_KEY, Item, generation, in_scope, next_generation, pass};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS resource_lifecycle (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    resource_ref TEXT NOT NULL,
    state TEXT NOT NULL,
    action TEXT NOT NULL,
    control_ref TEXT NOT NULL,
    successor_ref TEXT,
    operator_ref TEXT NOT NULL,
    authority_ref TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    row_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS resource_lifecycle_ref ON resource_lifecycle (namespace, resource_ref, id);
";

/// The most supersession hops recall follows to an active successor.
const MAX_SUCCESSOR_HOPS: usize = 8;

crate::choice! {
    /// A lifecycle change an operator control performs.
    pub enum LifecycleAction {
        Retire => "retire",
        Revoke => "revoke",
        Supersede => "supersede",
    }
}

impl LifecycleAction {
    /// The record's state after the change.
    pub fn result_state(self) -> &'static str {
        match self {
            LifecycleAction::Retire => "retired",
            LifecycleAction::Revoke => "revoked",
            LifecycleAction::Supersede => "superseded",
        }
    }
}

/// One change to perform: the target record, the control and, for a supersession, the
/// successor's ref and exact bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleChange {
    pub namespace: String,
    pub target_ref: String,
    pub action: LifecycleAction,
    pub control_ref: String,
    pub operator_ref: String,
    pub authority_ref: String,
    pub successor: Option<(String, Vec<u8>)>,
    pub observed_at: String,
}

/// What one change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleOutcome {
    /// `applied`, `readback_unverified`, `provider_unavailable` or `refused`.
    pub status: &'static str,
    pub reason_code: Option<&'static str>,
    /// The target's state before the change (`None` when it could not be read).
    pub prior_state: Option<String>,
    /// The target's state now (the change's state once applied).
    pub result_state: Option<String>,
    /// The lifecycle row holding the change.
    pub sequence: Option<i64>,
    /// True when this call appended the row (and wrote the successor).
    pub write_performed: bool,
    /// True when the same control was already recorded (a retry).
    pub deduplicated: bool,
    pub exact_readback_verified: bool,
    /// The store's public-safe cause code when the store could not be used.
    pub cause_code: Option<&'static str>,
}

impl LifecycleOutcome {
    fn not_applied(status: &'static str, reason: &'static str) -> LifecycleOutcome {
        LifecycleOutcome {
            status,
            reason_code: Some(reason),
            prior_state: None,
            result_state: None,
            sequence: None,
            write_performed: false,
            deduplicated: false,
            exact_readback_verified: false,
            cause_code: None,
        }
    }

    fn unavailable(cause: StoreCause) -> LifecycleOutcome {
        LifecycleOutcome {
            cause_code: Some(cause.code()),
            ..LifecycleOutcome::not_applied("provider_unavailable", cause.reason_code())
        }
    }
}

/// One lifecycle row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleRow {
    pub sequence: i64,
    pub namespace: String,
    pub resource_ref: String,
    pub state: String,
    pub action: String,
    pub control_ref: String,
    pub successor_ref: Option<String>,
    pub operator_ref: String,
    pub authority_ref: String,
    pub observed_at: String,
    pub row_sha256: String,
}

/// SHA-256 hex over the row's fields, one per line (an absent successor is empty).
fn row_digest(change: &LifecycleChange) -> String {
    let successor = change.successor.as_ref().map_or("", |(r, _)| r.as_str());
    crate::wire::digest::sha256_hex(&format!(
        "reward_memory_lifecycle_row_v0\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
        change.namespace,
        change.target_ref,
        change.action.result_state(),
        change.action.as_str(),
        change.control_ref,
        successor,
        change.operator_ref,
        change.authority_ref,
        change.observed_at
    ))
}

fn table_present(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'resource_lifecycle'",
        [],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n == 1)
}

fn latest_row(
    conn: &Connection,
    namespace: &str,
    resource_ref: &str,
) -> rusqlite::Result<Option<LifecycleRow>> {
    conn.query_row(
        "SELECT id, namespace, resource_ref, state, action, control_ref, successor_ref,
                operator_ref, authority_ref, observed_at, row_sha256
         FROM resource_lifecycle WHERE namespace = ?1 AND resource_ref = ?2
         ORDER BY id DESC LIMIT 1",
        params![namespace, resource_ref],
        row_of,
    )
    .optional()
}

fn row_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<LifecycleRow> {
    Ok(LifecycleRow {
        sequence: row.get(0)?,
        namespace: row.get(1)?,
        resource_ref: row.get(2)?,
        state: row.get(3)?,
        action: row.get(4)?,
        control_ref: row.get(5)?,
        successor_ref: row.get(6)?,
        operator_ref: row.get(7)?,
        authority_ref: row.get(8)?,
        observed_at: row.get(9)?,
        row_sha256: row.get(10)?,
    })
}

fn stored_content(
    conn: &Connection,
    namespace: &str,
    resource_ref: &str,
) -> rusqlite::Result<Option<Vec<u8>>> {
    conn.query_row(
        "SELECT content FROM resources WHERE namespace = ?1 AND resource_ref = ?2",
        params![namespace, resource_ref],
        |row| row.get(0),
    )
    .optional()
}

/// How the transaction of a change ended.
enum Written {
    Done {
        sequence: i64,
        prior: String,
        wrote: bool,
    },
    Refused(&'static str, Option<String>),
}

fn write_change(tx: &Transaction<'_>, change: &LifecycleChange) -> rusqlite::Result<Written> {
    tx.execute_batch(SCHEMA)?;
    if stored_content(tx, &change.namespace, &change.target_ref)?.is_none() {
        return Ok(Written::Refused("lifecycle_target_not_found", None));
    }
    let latest = latest_row(tx, &change.namespace, &change.target_ref)?;
    if let Some(row) = &latest
        && row.control_ref == change.control_ref
        && row.action == change.action.as_str()
    {
        // A retry of the same control: nothing more is written.
        return Ok(Written::Done {
            sequence: row.sequence,
            prior: "active".to_owned(),
            wrote: false,
        });
    }
    let prior = latest.map_or_else(|| "active".to_owned(), |row| row.state);
    if prior != "active" {
        return Ok(Written::Refused("lifecycle_target_not_active", Some(prior)));
    }
    let previous = generation(tx)?;
    let last_id: i64 = tx.query_row("SELECT coalesce(max(id), 0) FROM resources", [], |r| {
        r.get(0)
    })?;
    let mut next = previous.clone();
    if let Some((successor_ref, bytes)) = &change.successor {
        let written = pass(
            tx,
            &change.namespace,
            &[Item {
                target_ref: successor_ref.as_str(),
                bytes: bytes.clone(),
                search_text: None,
            }],
            &change.observed_at,
            true,
        )?;
        if written.stop.is_some() {
            return Ok(Written::Refused(
                "provider_sync_revision_conflict",
                Some(prior),
            ));
        }
        next = super::fold_generation(tx, next, last_id)?;
    }
    let digest = row_digest(change);
    tx.execute(
        "INSERT INTO resource_lifecycle (namespace, resource_ref, state, action, control_ref,
             successor_ref, operator_ref, authority_ref, observed_at, row_sha256)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            change.namespace,
            change.target_ref,
            change.action.result_state(),
            change.action.as_str(),
            change.control_ref,
            change.successor.as_ref().map(|(r, _)| r.as_str()),
            change.operator_ref,
            change.authority_ref,
            change.observed_at,
            digest
        ],
    )?;
    let sequence = tx.last_insert_rowid();
    let next = next_generation(
        &next,
        &change.namespace,
        &format!("lifecycle:{}", change.target_ref),
        &digest,
    );
    super::search::update(tx, &previous, last_id, &next)?;
    tx.execute(
        "INSERT INTO store_meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![GENERATION_KEY, next],
    )?;
    Ok(Written::Done {
        sequence,
        prior,
        wrote: true,
    })
}

/// Performs `change` in one immediate transaction (or finds it already recorded) and
/// reads it back on a fresh read-only connection.
pub fn apply(
    store: &EmbeddedStore,
    change: &LifecycleChange,
    timeout: Duration,
) -> LifecycleOutcome {
    let deadline = Instant::now() + timeout;
    let opened = match file::open_for_write(store.path(), store.root(), timeout, store.tokenizer())
    {
        Ok(opened) => opened,
        Err(cause) => return LifecycleOutcome::unavailable(cause),
    };
    let written = (|| {
        let conn = &opened.conn;
        let tx = file::retry_busy(deadline, || {
            Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        })?;
        // On an error or a refusal `tx` is dropped, which rolls every statement back.
        let written = write_change(&tx, change)?;
        if matches!(written, Written::Done { wrote: true, .. }) {
            tx.commit()?;
        }
        Ok(written)
    })();
    let cause = written
        .as_ref()
        .err()
        .map(|err: &rusqlite::Error| opened.cause_of(err));
    // Closing checkpoints the WAL into the file; only then is its stat final.
    drop(opened);
    let (sequence, prior, wrote) = match (written, cause) {
        (
            Ok(Written::Done {
                sequence,
                prior,
                wrote,
            }),
            _,
        ) => {
            file::record_checked(store.path());
            (sequence, prior, wrote)
        }
        (Ok(Written::Refused(reason, prior)), _) => {
            return LifecycleOutcome {
                prior_state: prior.clone(),
                result_state: prior,
                ..LifecycleOutcome::not_applied("refused", reason)
            };
        }
        (Err(_), Some(cause)) => return LifecycleOutcome::unavailable(cause),
        (Err(_), None) => {
            return LifecycleOutcome::not_applied(
                "provider_unavailable",
                "provider_lifecycle_write_failed",
            );
        }
    };
    let exact = readback_matches(store, change, sequence, timeout);
    LifecycleOutcome {
        status: if exact {
            "applied"
        } else {
            "readback_unverified"
        },
        reason_code: (!exact).then_some("provider_lifecycle_readback_mismatch"),
        prior_state: Some(prior),
        result_state: Some(change.action.result_state().to_owned()),
        sequence: Some(sequence),
        write_performed: wrote,
        deduplicated: !wrote,
        exact_readback_verified: exact,
        cause_code: None,
    }
}

/// True when row `sequence` holds exactly `change`, is the target's latest row, and the
/// successor's bytes (a supersession) are stored exactly.
fn readback_matches(
    store: &EmbeddedStore,
    change: &LifecycleChange,
    sequence: i64,
    timeout: Duration,
) -> bool {
    let Ok(Some(row)) = latest(store, &change.namespace, &change.target_ref, timeout) else {
        return false;
    };
    let row_ok = row.sequence == sequence
        && row.state == change.action.result_state()
        && row.action == change.action.as_str()
        && row.control_ref == change.control_ref
        && row.successor_ref.as_deref() == change.successor.as_ref().map(|(r, _)| r.as_str())
        && row.operator_ref == change.operator_ref
        && row.authority_ref == change.authority_ref
        && row.row_sha256
            == row_digest(&LifecycleChange {
                observed_at: row.observed_at.clone(),
                ..change.clone()
            });
    let successor_ok = match &change.successor {
        None => true,
        Some((successor_ref, bytes)) => matches!(
            store.read(&change.namespace, successor_ref),
            Ok(Some(stored)) if stored.content == *bytes
        ),
    };
    row_ok && successor_ok
}

/// The latest lifecycle row of one record on a read-only connection (`None`: active).
pub fn latest(
    store: &EmbeddedStore,
    namespace: &str,
    resource_ref: &str,
    timeout: Duration,
) -> Result<Option<LifecycleRow>, StoreCause> {
    let Some(opened) = file::open_for_read(store.path(), store.root(), timeout)? else {
        return Ok(None);
    };
    let read = || -> rusqlite::Result<Option<LifecycleRow>> {
        if !table_present(&opened.conn)? {
            return Ok(None);
        }
        latest_row(&opened.conn, namespace, resource_ref)
    };
    read().map_err(|err| opened.cause_of(&err))
}

/// The stored record of `candidate_ref` under `scope_ref`: its resource ref and exact
/// bytes (`None` when no record there names that candidate).
pub fn find_candidate(
    store: &EmbeddedStore,
    namespace: &str,
    scope_ref: &str,
    candidate_ref: &str,
    timeout: Duration,
) -> Result<Option<(String, Vec<u8>)>, StoreCause> {
    let Some(opened) = file::open_for_read(store.path(), store.root(), timeout)? else {
        return Ok(None);
    };
    let hash = candidate_ref
        .split_once(':')
        .map_or(candidate_ref, |(_, h)| h);
    let read = || -> rusqlite::Result<Option<(String, Vec<u8>)>> {
        let mut stmt = opened.conn.prepare(
            "SELECT resource_ref, content FROM resources
             WHERE namespace = ?1 AND instr(resource_ref, ?2) > 0 ORDER BY id",
        )?;
        let rows = stmt
            .query_map(params![namespace, hash], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows.into_iter().find(|(resource_ref, content)| {
            in_scope(resource_ref, scope_ref) && envelope_candidate(content) == Some(candidate_ref)
        }))
    };
    read().map_err(|err| opened.cause_of(&err))
}

fn envelope_candidate(content: &[u8]) -> Option<&str> {
    // A light look at the stored JSON: the `candidate_ref` member of the envelope.
    let text = std::str::from_utf8(content).ok()?;
    let key = "\"candidate_ref\":\"";
    let start = text.find(key)? + key.len();
    let end = start + text[start..].find('"')?;
    Some(&text[start..end])
}

/// The number of records with a lifecycle row in `namespace`: how many more hits a
/// search asks for so that the ones recall drops do not shorten its answer.
pub(super) fn inactive_count(conn: &Connection, namespace: &str) -> rusqlite::Result<usize> {
    if !table_present(conn)? {
        return Ok(0);
    }
    let n: i64 = conn.query_row(
        "SELECT count(DISTINCT resource_ref) FROM resource_lifecycle WHERE namespace = ?1",
        params![namespace],
        |row| row.get(0),
    )?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// True when the envelope's `lifecycle.expires_at` is set and not after `observed_at`
/// (an unreadable time counts as expired, as recall treats it).
fn expired(content: &[u8], observed_at: &str) -> bool {
    let Ok(Ok(envelope)) = std::str::from_utf8(content).map(crate::wire::json::parse) else {
        return false;
    };
    let Some(expires) = envelope
        .get("lifecycle")
        .and_then(|l| l.get("expires_at"))
        .filter(|v| v.is_truthy())
    else {
        return false;
    };
    let expires = crate::wire::pyfmt::pystr(Some(expires));
    use crate::wire::timestamp::parse_aware;
    !matches!(
        (parse_aware(&expires), parse_aware(observed_at)),
        (Ok(expires), Ok(observed)) if observed < expires
    )
}

/// The active successor of a superseded record, following at most
/// [`MAX_SUCCESSOR_HOPS`] supersessions.
fn active_successor(
    conn: &Connection,
    namespace: &str,
    first: &str,
) -> rusqlite::Result<Option<(String, Vec<u8>)>> {
    let mut current = first.to_owned();
    for _ in 0..MAX_SUCCESSOR_HOPS {
        match latest_row(conn, namespace, &current)? {
            None => {
                return Ok(stored_content(conn, namespace, &current)?.map(|c| (current, c)));
            }
            Some(row) if row.state == "superseded" => match row.successor_ref {
                Some(next) => current = next,
                None => return Ok(None),
            },
            Some(_) => return Ok(None),
        }
    }
    Ok(None)
}

/// One search hit: the resource ref, its exact bytes and its FTS rank.
pub(super) type Hit = (String, Vec<u8>, f64);

/// A search's hits as recall may see them, at most `limit`: without retired, revoked,
/// superseded or expired records, a superseded record's active successor in its place
/// (once, and only when the search did not hit it itself), and how many hits were
/// dropped for their lifecycle or expiry.
pub(super) fn visible(
    conn: &Connection,
    namespace: &str,
    rows: Vec<Hit>,
    limit: usize,
    observed_at: &str,
) -> rusqlite::Result<(Vec<Hit>, usize)> {
    let tracked = table_present(conn)?;
    let hit_refs: Vec<String> = rows.iter().map(|(r, _, _)| r.clone()).collect();
    let mut kept: Vec<Hit> = Vec::new();
    let mut skipped = 0usize;
    for (resource_ref, content, rank) in rows {
        let row = if tracked {
            latest_row(conn, namespace, &resource_ref)?
        } else {
            None
        };
        let shown = match row {
            None if expired(&content, observed_at) => None,
            None => Some((resource_ref, content)),
            Some(row) => match (row.state.as_str(), row.successor_ref) {
                ("superseded", Some(next)) => active_successor(conn, namespace, &next)?
                    .filter(|(r, c)| !hit_refs.contains(r) && !expired(c, observed_at)),
                _ => None,
            },
        };
        let Some((shown_ref, shown_content)) = shown else {
            skipped += 1;
            continue;
        };
        if !hit_refs.contains(&shown_ref) {
            // A successor stands in for the superseded hit, which is still skipped.
            skipped += 1;
        }
        if kept.len() < limit && kept.iter().all(|(k, _, _)| *k != shown_ref) {
            kept.push((shown_ref, shown_content, rank));
        }
    }
    Ok((kept, skipped))
}

/// What a corpus's scope holds, for a live health probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// Every record stored under the scope (any state).
    pub records: usize,
    /// The records recall may return (active, not expired), in write order: ref and bytes.
    pub active: Vec<(String, Vec<u8>)>,
}

/// The records under `scope_ref` and which of them are active at `observed_at`
/// (`None` when the store does not exist yet), on a read-only connection.
pub fn inventory(
    store: &EmbeddedStore,
    namespace: &str,
    scope_ref: &str,
    observed_at: &str,
    timeout: Duration,
) -> Result<Option<Inventory>, StoreCause> {
    let Some(opened) = file::open_for_read(store.path(), store.root(), timeout)? else {
        return Ok(None);
    };
    let conn = &opened.conn;
    let read = || -> rusqlite::Result<Inventory> {
        let tracked = table_present(conn)?;
        let mut stmt = conn.prepare(
            "SELECT resource_ref, content FROM resources WHERE namespace = ?1 ORDER BY id",
        )?;
        let rows = stmt
            .query_map(params![namespace], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut out = Inventory {
            records: 0,
            active: Vec::new(),
        };
        for (resource_ref, content) in rows {
            if !in_scope(&resource_ref, scope_ref) {
                continue;
            }
            out.records += 1;
            let inactive = tracked && latest_row(conn, namespace, &resource_ref)?.is_some();
            if !inactive && !expired(&content, observed_at) {
                out.active.push((resource_ref, content));
            }
        }
        Ok(out)
    };
    read().map(Some).map_err(|err| opened.cause_of(&err))
}
