//! The PostgreSQL backend of the utility ledger: one ledger shared by appenders on many
//! machines, through the synchronous `postgres` client.
//!
//! Owns the connection (URL plus the standard `PG*` defaults, no TLS), the schema (tables
//! prefixed `utility_ledger_`, text columns in the `C` collation so that order equals the
//! reducer's byte order) and every SQL statement of this backend; values always travel as
//! parameters. An append is one transaction that first takes a transaction-scoped advisory
//! lock, so concurrent appenders commit one after another and each sees the previous
//! batch; a failed or retried batch leaves nothing behind. Credentials never appear in an
//! error.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use postgres::{Client, NoTls, Row};

use super::{
    BatchRow, COUNTER_COLUMNS, ConflictRow, Counters, DeliveryRow, LEDGER_SCHEMA_VERSION,
    LedgerBackend, LedgerError, LedgerResult, ObservationKey, ObservationRow, PartitionKey,
    PartitionRow, SubjectKey, SubjectRow,
};
use crate::utility::observation::{EvidenceBasis, UtilityLabel};

/// The advisory lock every append holds (`hashtext('reward_memory_utility_ledger')` would
/// do as well; a constant keeps it independent of the server version).
const APPEND_LOCK: i64 = 0x7265_776d_6c65_6467;

/// The standard libpq variables, captured at start-up by [`crate::io`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PgEnv {
    pub host: Option<String>,
    pub port: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub dbname: Option<String>,
    /// The login name, the last default for the user (as libpq does).
    pub login: Option<String>,
}

const SCHEMA: &str = r#"
CREATE TABLE utility_ledger_meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE utility_ledger_partitions (
    partition_id BIGINT PRIMARY KEY,
    agent_id TEXT COLLATE "C" NOT NULL,
    project_id TEXT COLLATE "C" NOT NULL,
    corpus_id TEXT COLLATE "C" NOT NULL,
    surface_id TEXT COLLATE "C" NOT NULL,
    retrieval_snapshot_ref TEXT COLLATE "C" NOT NULL,
    policy_snapshot_ref TEXT COLLATE "C" NOT NULL,
    delivery_count BIGINT NOT NULL DEFAULT 0,
    accepted_count BIGINT NOT NULL DEFAULT 0,
    duplicate_count BIGINT NOT NULL DEFAULT 0,
    conflicting_count BIGINT NOT NULL DEFAULT 0,
    rejected_count BIGINT NOT NULL DEFAULT 0,
    subject_count BIGINT NOT NULL DEFAULT 0,
    item_subject_count BIGINT NOT NULL DEFAULT 0,
    set_subject_count BIGINT NOT NULL DEFAULT 0,
    none_subject_count BIGINT NOT NULL DEFAULT 0,
    conflict_subject_count BIGINT NOT NULL DEFAULT 0,
    latest_key TEXT COLLATE "C" NOT NULL DEFAULT '',
    UNIQUE (agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, policy_snapshot_ref)
);
CREATE TABLE utility_ledger_batches (
    batch_id BIGINT PRIMARY KEY,
    first_seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    received BIGINT NOT NULL,
    appended BIGINT NOT NULL,
    duplicate BIGINT NOT NULL,
    conflicting BIGINT NOT NULL,
    refused BIGINT NOT NULL
);
CREATE TABLE utility_ledger_deliveries (
    seq BIGINT PRIMARY KEY,
    batch_id BIGINT NOT NULL,
    partition_id BIGINT NOT NULL,
    observation_id TEXT COLLATE "C" NOT NULL,
    application_receipt_id TEXT COLLATE "C" NOT NULL,
    memory_ref_digests TEXT COLLATE "C" NOT NULL,
    outcome_ref TEXT COLLATE "C" NOT NULL,
    utility_label TEXT COLLATE "C" NOT NULL,
    attribution_level TEXT COLLATE "C" NOT NULL,
    evidence_basis TEXT COLLATE "C" NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    reason_codes TEXT COLLATE "C" NOT NULL,
    evidence_refs TEXT COLLATE "C" NOT NULL,
    evaluator_ref TEXT COLLATE "C" NOT NULL,
    evaluation_version TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX utility_ledger_deliveries_by_partition ON utility_ledger_deliveries (partition_id, seq);
CREATE TABLE utility_ledger_observations (
    observation_id TEXT COLLATE "C" PRIMARY KEY,
    partition_id BIGINT NOT NULL,
    subject_id TEXT COLLATE "C" NOT NULL,
    version_count BIGINT NOT NULL,
    delivery_count BIGINT NOT NULL,
    fingerprint TEXT COLLATE "C" NOT NULL,
    rep_seq BIGINT NOT NULL,
    rep_order TEXT COLLATE "C" NOT NULL,
    utility_label SMALLINT NOT NULL,
    evidence_basis SMALLINT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL
);
CREATE INDEX utility_ledger_observations_by_subject
    ON utility_ledger_observations (partition_id, subject_id, observation_id);
CREATE INDEX utility_ledger_observations_conflicting
    ON utility_ledger_observations (partition_id, observation_id) WHERE version_count > 1;
CREATE TABLE utility_ledger_conflict_versions (
    observation_id TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (observation_id, fingerprint)
);
CREATE TABLE utility_ledger_subjects (
    partition_id BIGINT NOT NULL,
    subject_id TEXT COLLATE "C" NOT NULL,
    attribution_level TEXT COLLATE "C" NOT NULL,
    review_state TEXT COLLATE "C" NOT NULL,
    observation_count BIGINT NOT NULL,
    last_key TEXT COLLATE "C" NOT NULL,
    state TEXT NOT NULL,
    history_seqs TEXT NOT NULL,
    PRIMARY KEY (partition_id, subject_id)
);
CREATE TABLE utility_ledger_subject_digests (
    partition_id BIGINT NOT NULL,
    memory_ref_digest TEXT COLLATE "C" NOT NULL,
    subject_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (partition_id, memory_ref_digest, subject_id)
);
"#;

const DELIVERY_COLUMNS: &str = "d.seq, d.batch_id, d.partition_id, d.observation_id, \
    d.application_receipt_id, d.memory_ref_digests, d.outcome_ref, d.utility_label, \
    d.attribution_level, d.evidence_basis, d.confidence, d.reason_codes, d.evidence_refs, \
    d.evaluator_ref, d.evaluation_version, d.created_at";

const SUBJECT_COLUMNS: &str = "s.partition_id, s.subject_id, s.attribution_level, \
    s.review_state, s.observation_count, s.last_key, s.state, s.history_seqs";

const PARTITION_COLUMNS: &str = "partition_id, agent_id, project_id, corpus_id, surface_id, \
    retrieval_snapshot_ref, policy_snapshot_ref, delivery_count, accepted_count, \
    duplicate_count, conflicting_count, rejected_count, subject_count, item_subject_count, \
    set_subject_count, none_subject_count, conflict_subject_count, latest_key";

const OBSERVATION_COLUMNS: &str = "o.observation_id, o.partition_id, o.subject_id, \
    o.version_count, o.delivery_count, o.fingerprint, o.rep_seq, o.rep_order, \
    CASE WHEN o.version_count > 1 THEN (SELECT array_agg(v.fingerprint ORDER BY v.fingerprint) \
     FROM utility_ledger_conflict_versions v WHERE v.observation_id = o.observation_id) END, \
    o.utility_label, o.evidence_basis, o.confidence";

/// The PostgreSQL ledger behind one connection.
pub struct PgLedger {
    client: Client,
    /// Removed from every error message (defence in depth).
    secret: Option<String>,
}

fn scrub(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "***"),
        _ => text.to_owned(),
    }
}

/// Maps a client or server failure to the ledger's error, without credentials.
pub fn map_error(err: &postgres::Error, secret: Option<&str>) -> LedgerError {
    if let Some(db) = err.as_db_error() {
        return map_server_error(db.code().code(), &scrub(db.message(), secret));
    }
    let text = scrub(&err.to_string(), secret);
    if err.is_closed() || text.contains("connect") || text.contains("os error") {
        LedgerError::Unreachable(text)
    } else {
        LedgerError::Storage(text)
    }
}

/// The ledger's error for a server error with this SQLSTATE. A server that is starting
/// up or shutting down (`57P03` cannot_connect_now, `57P01` admin_shutdown, `57P02`
/// crash_shutdown), that closed an idle session (`57P05`) or has no connection slot left
/// (`53300`), and a broken connection (class `08` but a protocol violation) are
/// unreachable-and-retryable like a refused connection: nothing was committed.
pub fn map_server_error(code: &str, message: &str) -> LedgerError {
    match code {
        "28P01" | "28000" => LedgerError::Auth(message.to_owned()),
        "3D000" => LedgerError::Unreachable(format!("the database does not exist ({message})")),
        "57P01" | "57P02" | "57P03" | "57P05" | "53300" => LedgerError::Unreachable(format!(
            "the server cannot take the connection now, retry later ({code}: {message})"
        )),
        _ if code.starts_with("08") && code != "08P01" => LedgerError::Unreachable(format!(
            "the connection to the server failed, retry later ({code}: {message})"
        )),
        "53100" => LedgerError::DiskFull,
        "25006" | "42501" => LedgerError::ReadOnly(message.to_owned()),
        "40001" | "40P01" | "55P03" => LedgerError::Busy,
        _ => LedgerError::Storage(format!("{code}: {message}")),
    }
}

fn delivery(row: &Row, base: usize) -> Result<DeliveryRow, postgres::Error> {
    Ok(DeliveryRow {
        seq: row.try_get(base)?,
        batch_id: row.try_get(base + 1)?,
        partition_id: row.try_get(base + 2)?,
        observation_id: row.try_get(base + 3)?,
        application_receipt_id: row.try_get(base + 4)?,
        memory_ref_digests: row.try_get(base + 5)?,
        outcome_ref: row.try_get(base + 6)?,
        utility_label: row.try_get(base + 7)?,
        attribution_level: row.try_get(base + 8)?,
        evidence_basis: row.try_get(base + 9)?,
        confidence: row.try_get(base + 10)?,
        reason_codes: row.try_get(base + 11)?,
        evidence_refs: row.try_get(base + 12)?,
        evaluator_ref: row.try_get(base + 13)?,
        evaluation_version: row.try_get(base + 14)?,
        created_at: row.try_get(base + 15)?,
    })
}

fn subject(row: &Row, base: usize) -> Result<SubjectRow, postgres::Error> {
    let seqs: String = row.try_get(base + 7)?;
    Ok(SubjectRow {
        partition_id: row.try_get(base)?,
        subject_id: row.try_get(base + 1)?,
        attribution_level: row.try_get(base + 2)?,
        review_state: row.try_get(base + 3)?,
        observation_count: row.try_get(base + 4)?,
        last_key: row.try_get(base + 5)?,
        state: row.try_get(base + 6)?,
        history_seqs: super::parse_seqs(&seqs),
    })
}

fn observation(row: &Row) -> Result<ObservationRow, postgres::Error> {
    observation_at(row, 0)
}

/// An aggregate in [`OBSERVATION_COLUMNS`] order from column `b`.
fn observation_at(row: &Row, b: usize) -> Result<ObservationRow, postgres::Error> {
    let fps: Option<Vec<String>> = row.try_get(b + 8)?;
    let label: i16 = row.try_get(b + 9)?;
    let basis: i16 = row.try_get(b + 10)?;
    Ok(ObservationRow {
        observation_id: row.try_get(b)?,
        partition_id: row.try_get(b + 1)?,
        subject_id: row.try_get(b + 2)?,
        version_count: row.try_get(b + 3)?,
        delivery_count: row.try_get(b + 4)?,
        fingerprint: row.try_get(b + 5)?,
        rep_seq: row.try_get(b + 6)?,
        rep_order: row.try_get(b + 7)?,
        fingerprints: fps.unwrap_or_default(),
        // A value out of range is a damaged row: it reads as a label or basis that
        // `verify` then reports as different from the deliveries.
        utility_label: usize::try_from(label)
            .ok()
            .and_then(|i| UtilityLabel::ALL.get(i).copied())
            .unwrap_or(UtilityLabel::Unknown),
        evidence_basis: usize::try_from(basis)
            .ok()
            .and_then(|i| EvidenceBasis::ALL.get(i).copied())
            .unwrap_or(EvidenceBasis::Insufficient),
        confidence: row.try_get(b + 11)?,
    })
}

fn partition(row: &Row) -> Result<PartitionRow, postgres::Error> {
    partition_at(row, 0)
}

/// A partition in [`PARTITION_COLUMNS`] order from column `b`.
fn partition_at(row: &Row, b: usize) -> Result<PartitionRow, postgres::Error> {
    let mut counters = [0i64; 10];
    for (i, c) in counters.iter_mut().enumerate() {
        *c = row.try_get(b + 7 + i)?;
    }
    Ok(PartitionRow {
        partition_id: row.try_get(b)?,
        key: PartitionKey {
            agent_id: row.try_get(b + 1)?,
            project_id: row.try_get(b + 2)?,
            corpus_id: row.try_get(b + 3)?,
            surface_id: row.try_get(b + 4)?,
            retrieval_snapshot_ref: row.try_get(b + 5)?,
            policy_snapshot_ref: row.try_get(b + 6)?,
        },
        counters: Counters::from_array(counters),
        latest_key: row.try_get(b + 17)?,
    })
}

/// Builds the connection settings: the URL, then the `PG*` defaults for what it omits.
pub fn config(url: &str, env: &PgEnv) -> LedgerResult<postgres::Config> {
    let mut config: postgres::Config = url.parse().map_err(|_| {
        LedgerError::Location(
            "--ledger is not a valid postgres:// URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)"
                .into(),
        )
    })?;
    if config.get_hosts().is_empty() {
        config.host(env.host.as_deref().unwrap_or("localhost"));
    }
    if config.get_ports().is_empty()
        && let Some(port) = env.port.as_deref().and_then(|p| p.parse::<u16>().ok())
    {
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = env
            .user
            .as_deref()
            .or(env.login.as_deref())
            .unwrap_or("postgres");
        config.user(user);
    }
    if config.get_password().is_none()
        && let Some(password) = &env.password
    {
        config.password(password);
    }
    if config.get_dbname().is_none()
        && let Some(db) = &env.dbname
    {
        config.dbname(db);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config.application_name("reward-memory utility-ledger");
    Ok(config)
}

impl PgLedger {
    /// Connects to the ledger's server.
    pub fn connect(url: &str, env: &PgEnv) -> LedgerResult<PgLedger> {
        let config = config(url, env)?;
        let secret = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let client = config
            .connect(NoTls)
            .map_err(|e| map_error(&e, secret.as_deref()))?;
        Ok(PgLedger { client, secret })
    }

    fn err(&self, e: &postgres::Error) -> LedgerError {
        map_error(e, self.secret.as_deref())
    }

    fn exec(&mut self, sql: &str) -> LedgerResult<()> {
        let r = self.client.batch_execute(sql);
        r.map_err(|e| self.err(&e))
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> LedgerResult<Vec<Row>> {
        let r = self.client.query(sql, params);
        r.map_err(|e| self.err(&e))
    }

    /// `None` when the ledger's tables were never created; else checks its
    /// `ledger_schema_version` and `ledger_format` rows as the SQLite backend does.
    fn check_meta(&mut self) -> LedgerResult<Option<()>> {
        let rows = self.query("SELECT to_regclass('utility_ledger_meta')::text", &[])?;
        let exists: Option<String> = rows.first().and_then(|r| r.get(0));
        if exists.is_none() {
            return Ok(None);
        }
        let rows = self.query(
            "SELECT key, value FROM utility_ledger_meta \
             WHERE key IN ('ledger_schema_version', 'ledger_format')",
            &[],
        )?;
        let value = |key: &str| -> Option<String> {
            rows.iter()
                .find(|r| r.get::<_, &str>(0) == key)
                .map(|r| r.get(1))
        };
        super::check_version(value("ledger_schema_version").as_deref())?;
        super::check_format(value("ledger_format").as_deref())?;
        Ok(Some(()))
    }
}

/// Rows of a server-side cursor, `FETCH`ed in blocks, so that two streams can be read
/// side by side in one transaction.
struct Cursor<'c> {
    client: &'c RefCell<&'c mut Client>,
    name: &'static str,
    buffer: VecDeque<Row>,
    done: bool,
    secret: Option<&'c str>,
}

const FETCH_BLOCK: usize = 1000;

impl Iterator for Cursor<'_> {
    type Item = LedgerResult<Row>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buffer.is_empty() && !self.done {
            let fetched = self
                .client
                .borrow_mut()
                .query(&format!("FETCH {FETCH_BLOCK} FROM {}", self.name), &[]);
            match fetched {
                Ok(rows) => {
                    self.done = rows.len() < FETCH_BLOCK;
                    self.buffer.extend(rows);
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(map_error(&e, self.secret)));
                }
            }
        }
        self.buffer.pop_front().map(Ok)
    }
}

fn rows_to<T>(
    rows: Vec<Row>,
    convert: impl Fn(&Row) -> Result<T, postgres::Error>,
    secret: Option<&str>,
) -> LedgerResult<Vec<T>> {
    rows.iter()
        .map(|r| convert(r).map_err(|e| map_error(&e, secret)))
        .collect()
}

/// Splits `(index, T)` rows ordered by index into one vector per key.
fn group_by_index<T>(count: usize, items: Vec<(i64, T)>) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = (0..count).map(|_| Vec::new()).collect();
    for (i, item) in items {
        if let Some(slot) = usize::try_from(i - 1).ok().and_then(|i| out.get_mut(i)) {
            slot.push(item);
        }
    }
    out
}

fn key_arrays(keys: &[SubjectKey]) -> (Vec<i64>, Vec<String>) {
    (
        keys.iter().map(|k| k.0).collect(),
        keys.iter().map(|k| k.1.clone()).collect(),
    )
}

impl PgLedger {
    fn stream(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let secret = self.secret.clone();
        let rows = self
            .client
            .query_raw(sql, params.iter().copied())
            .map_err(|e| map_error(&e, secret.as_deref()))?;
        use postgres::fallible_iterator::FallibleIterator as _;
        let mut rows = rows;
        while let Some(row) = rows.next().map_err(|e| map_error(&e, secret.as_deref()))? {
            visit(delivery(&row, 0).map_err(|e| map_error(&e, secret.as_deref()))?)?;
        }
        Ok(())
    }
}

impl LedgerBackend for PgLedger {
    fn backend_name(&self) -> &'static str {
        "postgres"
    }

    fn subject_window(&self) -> usize {
        4096
    }

    fn begin_write(&mut self) -> LedgerResult<()> {
        self.exec("BEGIN")?;
        let result = (|| {
            self.query("SELECT pg_advisory_xact_lock($1)", &[&APPEND_LOCK])?;
            // Every statement of an append looks rows up by key. Given thousands of keys
            // at once the planner would rather scan whole tables (and hash-join them),
            // which costs the size of the ledger on every round: keep it on the indexes.
            self.exec(
                "SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off; \
                 SET LOCAL enable_mergejoin = off",
            )?;
            match self.check_meta()? {
                None => {
                    self.exec(SCHEMA)?;
                    self.query(
                        "INSERT INTO utility_ledger_meta (key, value) VALUES \
                         ('ledger_schema_version', $1), ('ledger_format', $2)",
                        &[&LEDGER_SCHEMA_VERSION.to_string(), &super::LEDGER_FORMAT],
                    )?;
                    Ok(())
                }
                Some(()) => Ok(()),
            }
        })();
        if result.is_err() {
            self.rollback();
        }
        result
    }

    fn commit(&mut self) -> LedgerResult<()> {
        let r = self.exec("COMMIT");
        if r.is_err() {
            self.rollback();
        }
        r
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }

    fn begin_read(&mut self) -> LedgerResult<()> {
        self.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        let result = match self.check_meta() {
            Ok(None) => Err(LedgerError::Missing),
            Ok(Some(())) => Ok(()),
            Err(e) => Err(e),
        };
        if result.is_err() {
            self.rollback();
        }
        result
    }

    fn end_read(&mut self) -> LedgerResult<()> {
        self.rollback();
        Ok(())
    }

    fn high_water(&mut self) -> LedgerResult<i64> {
        let rows = self.query(
            "SELECT coalesce(max(seq), 0) FROM utility_ledger_deliveries",
            &[],
        )?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    fn last_batch_id(&mut self) -> LedgerResult<i64> {
        let rows = self.query(
            "SELECT coalesce(max(batch_id), 0) FROM utility_ledger_batches",
            &[],
        )?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    fn record_batch(&mut self, b: &BatchRow) -> LedgerResult<()> {
        self.query(
            "INSERT INTO utility_ledger_batches (batch_id, first_seq, last_seq, received, \
             appended, duplicate, conflicting, refused) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &b.batch_id,
                &b.first_seq,
                &b.last_seq,
                &b.received,
                &b.appended,
                &b.duplicate,
                &b.conflicting,
                &b.refused,
            ],
        )
        .map(|_| ())
    }

    fn find_partition(&mut self, key: &PartitionKey) -> LedgerResult<Option<PartitionRow>> {
        let rows = self.query(
            &format!(
                "SELECT {PARTITION_COLUMNS} FROM utility_ledger_partitions WHERE agent_id = $1 \
                 AND project_id = $2 AND corpus_id = $3 AND surface_id = $4 \
                 AND retrieval_snapshot_ref = $5 AND policy_snapshot_ref = $6"
            ),
            &[
                &key.agent_id,
                &key.project_id,
                &key.corpus_id,
                &key.surface_id,
                &key.retrieval_snapshot_ref,
                &key.policy_snapshot_ref,
            ],
        )?;
        Ok(rows_to(rows, partition, self.secret.as_deref())?
            .into_iter()
            .next())
    }

    fn partitions(&mut self) -> LedgerResult<Vec<PartitionRow>> {
        let rows = self.query(
            &format!(
                "SELECT {PARTITION_COLUMNS} FROM utility_ledger_partitions ORDER BY partition_id"
            ),
            &[],
        )?;
        rows_to(rows, partition, self.secret.as_deref())
    }

    fn insert_partition(&mut self, key: &PartitionKey) -> LedgerResult<i64> {
        let rows = self.query(
            "INSERT INTO utility_ledger_partitions (partition_id, agent_id, project_id, corpus_id, \
             surface_id, retrieval_snapshot_ref, policy_snapshot_ref) \
             SELECT coalesce(max(partition_id), 0) + 1, $1, $2, $3, $4, $5, $6 \
             FROM utility_ledger_partitions RETURNING partition_id",
            &[
                &key.agent_id,
                &key.project_id,
                &key.corpus_id,
                &key.surface_id,
                &key.retrieval_snapshot_ref,
                &key.policy_snapshot_ref,
            ],
        )?;
        rows.first()
            .map(|r| r.get(0))
            .ok_or_else(|| LedgerError::Storage("partition insert returned nothing".into()))
    }

    fn add_counters(&mut self, deltas: &[(i64, Counters)]) -> LedgerResult<()> {
        if deltas.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = deltas.iter().map(|d| d.0).collect();
        let columns: Vec<Vec<i64>> = (0..COUNTER_COLUMNS.len())
            .map(|i| deltas.iter().map(|d| d.1.to_array()[i]).collect())
            .collect();
        let sets: Vec<String> = COUNTER_COLUMNS
            .iter()
            .map(|c| format!("{c} = p.{c} + k.{c}"))
            .collect();
        let arrays: Vec<String> = (0..COUNTER_COLUMNS.len())
            .map(|i| format!("${}::bigint[]", i + 2))
            .collect();
        let sql = format!(
            "UPDATE utility_ledger_partitions p SET {} FROM UNNEST($1::bigint[], {}) \
             AS k(id, {}) WHERE p.partition_id = k.id",
            sets.join(", "),
            arrays.join(", "),
            COUNTER_COLUMNS.join(", ")
        );
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&ids];
        for c in &columns {
            params.push(c);
        }
        self.query(&sql, &params)?;
        Ok(())
    }

    fn find_partitions(
        &mut self,
        keys: &[PartitionKey],
    ) -> LedgerResult<Vec<Option<PartitionRow>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let field = |f: fn(&PartitionKey) -> &str| -> Vec<&str> { keys.iter().map(f).collect() };
        let agents = field(|k| &k.agent_id);
        let projects = field(|k| &k.project_id);
        let corpora = field(|k| &k.corpus_id);
        let surfaces = field(|k| &k.surface_id);
        let retrievals = field(|k| &k.retrieval_snapshot_ref);
        let policies = field(|k| &k.policy_snapshot_ref);
        let columns: Vec<String> = PARTITION_COLUMNS
            .split(", ")
            .map(|c| format!("p.{}", c.trim()))
            .collect();
        let rows = self.query(
            &format!(
                "SELECT k.i, {} FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], \
                 $5::text[], $6::text[]) WITH ORDINALITY AS k(a, pr, c, s, r, po, i) \
                 JOIN utility_ledger_partitions p ON p.agent_id = k.a AND p.project_id = k.pr \
                 AND p.corpus_id = k.c AND p.surface_id = k.s \
                 AND p.retrieval_snapshot_ref = k.r AND p.policy_snapshot_ref = k.po ORDER BY k.i",
                columns.join(", ")
            ),
            &[
                &agents,
                &projects,
                &corpora,
                &surfaces,
                &retrievals,
                &policies,
            ],
        )?;
        let items = rows_to(
            rows,
            |r| Ok((r.try_get::<_, i64>(0)?, partition_at(r, 1)?)),
            self.secret.as_deref(),
        )?;
        Ok(group_by_index(keys.len(), items)
            .into_iter()
            .map(|mut v| v.pop())
            .collect())
    }

    fn set_latest(&mut self, latest: &[(i64, String)]) -> LedgerResult<()> {
        if latest.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = latest.iter().map(|l| l.0).collect();
        let keys: Vec<&str> = latest.iter().map(|l| l.1.as_str()).collect();
        self.query(
            "UPDATE utility_ledger_partitions p SET latest_key = k.key \
             FROM UNNEST($1::bigint[], $2::text[]) AS k(id, key) WHERE p.partition_id = k.id",
            &[&ids, &keys],
        )?;
        Ok(())
    }

    fn load_observations(&mut self, keys: &[ObservationKey]) -> LedgerResult<Vec<ObservationRow>> {
        let ids: Vec<&str> = keys.iter().map(|k| k.2.as_str()).collect();
        let rows = self.query(
            &format!(
                "SELECT {OBSERVATION_COLUMNS} FROM utility_ledger_observations o \
                 WHERE o.observation_id = ANY($1)"
            ),
            &[&ids],
        )?;
        rows_to(rows, observation, self.secret.as_deref())
    }

    fn write_chunk(
        &mut self,
        deliveries: &[DeliveryRow],
        observations: &[ObservationRow],
        conflict_versions: &[(String, String)],
    ) -> LedgerResult<()> {
        if !deliveries.is_empty() {
            let col = |f: fn(&DeliveryRow) -> String| -> Vec<String> {
                deliveries.iter().map(f).collect()
            };
            let seqs: Vec<i64> = deliveries.iter().map(|d| d.seq).collect();
            let batches: Vec<i64> = deliveries.iter().map(|d| d.batch_id).collect();
            let pids: Vec<i64> = deliveries.iter().map(|d| d.partition_id).collect();
            let confidences: Vec<f64> = deliveries.iter().map(|d| d.confidence).collect();
            let ids = col(|d| d.observation_id.clone());
            let receipts = col(|d| d.application_receipt_id.clone());
            let digests = col(|d| d.memory_ref_digests.clone());
            let outcomes = col(|d| d.outcome_ref.clone());
            let labels = col(|d| d.utility_label.clone());
            let levels = col(|d| d.attribution_level.clone());
            let bases = col(|d| d.evidence_basis.clone());
            let reasons = col(|d| d.reason_codes.clone());
            let evidence = col(|d| d.evidence_refs.clone());
            let evaluators = col(|d| d.evaluator_ref.clone());
            let versions = col(|d| d.evaluation_version.clone());
            let created = col(|d| d.created_at.clone());
            self.query(
                "INSERT INTO utility_ledger_deliveries (seq, batch_id, partition_id, \
                 observation_id, application_receipt_id, memory_ref_digests, outcome_ref, \
                 utility_label, attribution_level, evidence_basis, confidence, reason_codes, \
                 evidence_refs, evaluator_ref, evaluation_version, created_at) \
                 SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], \
                 $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], \
                 $11::float8[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])",
                &[
                    &seqs,
                    &batches,
                    &pids,
                    &ids,
                    &receipts,
                    &digests,
                    &outcomes,
                    &labels,
                    &levels,
                    &bases,
                    &confidences,
                    &reasons,
                    &evidence,
                    &evaluators,
                    &versions,
                    &created,
                ],
            )?;
        }
        if !observations.is_empty() {
            let ids: Vec<&str> = observations
                .iter()
                .map(|o| o.observation_id.as_str())
                .collect();
            let pids: Vec<i64> = observations.iter().map(|o| o.partition_id).collect();
            let subjects: Vec<&str> = observations.iter().map(|o| o.subject_id.as_str()).collect();
            let versions: Vec<i64> = observations.iter().map(|o| o.version_count).collect();
            let counts: Vec<i64> = observations.iter().map(|o| o.delivery_count).collect();
            let fps: Vec<&str> = observations
                .iter()
                .map(|o| o.fingerprint.as_str())
                .collect();
            let reps: Vec<i64> = observations.iter().map(|o| o.rep_seq).collect();
            let orders: Vec<&str> = observations.iter().map(|o| o.rep_order.as_str()).collect();
            let labels: Vec<i16> = observations
                .iter()
                .map(|o| o.utility_label.index() as i16)
                .collect();
            let bases: Vec<i16> = observations
                .iter()
                .map(|o| o.evidence_basis.index() as i16)
                .collect();
            let confidences: Vec<f64> = observations.iter().map(|o| o.confidence).collect();
            self.query(
                "INSERT INTO utility_ledger_observations (observation_id, partition_id, \
                 subject_id, version_count, delivery_count, fingerprint, rep_seq, rep_order, \
                 utility_label, evidence_basis, confidence) \
                 SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::bigint[], \
                 $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::int2[], $10::int2[], \
                 $11::float8[]) \
                 ON CONFLICT (observation_id) DO UPDATE SET \
                 version_count = excluded.version_count, delivery_count = excluded.delivery_count, \
                 rep_seq = excluded.rep_seq, rep_order = excluded.rep_order",
                &[
                    &ids,
                    &pids,
                    &subjects,
                    &versions,
                    &counts,
                    &fps,
                    &reps,
                    &orders,
                    &labels,
                    &bases,
                    &confidences,
                ],
            )?;
        }
        if !conflict_versions.is_empty() {
            let ids: Vec<&str> = conflict_versions.iter().map(|v| v.0.as_str()).collect();
            let fps: Vec<&str> = conflict_versions.iter().map(|v| v.1.as_str()).collect();
            self.query(
                "INSERT INTO utility_ledger_conflict_versions (observation_id, fingerprint) \
                 SELECT * FROM UNNEST($1::text[], $2::text[]) ON CONFLICT DO NOTHING",
                &[&ids, &fps],
            )?;
        }
        Ok(())
    }

    fn subject_members(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<ObservationRow>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (pids, sids) = key_arrays(keys);
        let rows = self.query(
            "SELECT k.i, o.observation_id, o.partition_id, o.subject_id, o.version_count, \
             o.delivery_count, o.fingerprint, o.rep_seq, o.rep_order, NULL::text[], \
             o.utility_label, o.evidence_basis, o.confidence \
             FROM UNNEST($1::bigint[], $2::text[]) WITH ORDINALITY AS k(pid, sid, i) \
             JOIN utility_ledger_observations o ON o.partition_id = k.pid \
             AND o.subject_id = k.sid AND o.version_count = 1 \
             ORDER BY k.i, o.observation_id",
            &[&pids, &sids],
        )?;
        let items = rows_to(
            rows,
            |r| Ok((r.try_get::<_, i64>(0)?, observation_at(r, 1)?)),
            self.secret.as_deref(),
        )?;
        Ok(group_by_index(keys.len(), items))
    }

    fn load_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Option<SubjectRow>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (pids, sids) = key_arrays(keys);
        let rows = self.query(
            &format!(
                "SELECT k.i, {SUBJECT_COLUMNS} FROM UNNEST($1::bigint[], $2::text[]) \
                 WITH ORDINALITY AS k(pid, sid, i) \
                 JOIN utility_ledger_subjects s ON s.partition_id = k.pid AND s.subject_id = k.sid \
                 ORDER BY k.i"
            ),
            &[&pids, &sids],
        )?;
        let items = rows_to(
            rows,
            |r| Ok((r.try_get::<_, i64>(0)?, subject(r, 1)?)),
            self.secret.as_deref(),
        )?;
        Ok(group_by_index(keys.len(), items)
            .into_iter()
            .map(|mut v| v.pop())
            .collect())
    }

    fn put_subjects(
        &mut self,
        rows: &[SubjectRow],
        digests: &[(i64, String, String)],
    ) -> LedgerResult<()> {
        if !rows.is_empty() {
            let pids: Vec<i64> = rows.iter().map(|s| s.partition_id).collect();
            let sids: Vec<&str> = rows.iter().map(|s| s.subject_id.as_str()).collect();
            let levels: Vec<&str> = rows.iter().map(|s| s.attribution_level.as_str()).collect();
            let reviews: Vec<&str> = rows.iter().map(|s| s.review_state.as_str()).collect();
            let counts: Vec<i64> = rows.iter().map(|s| s.observation_count).collect();
            let lasts: Vec<&str> = rows.iter().map(|s| s.last_key.as_str()).collect();
            let states: Vec<&str> = rows.iter().map(|s| s.state.as_str()).collect();
            let seqs: Vec<String> = rows
                .iter()
                .map(|s| super::format_seqs(&s.history_seqs))
                .collect();
            self.query(
                "INSERT INTO utility_ledger_subjects (partition_id, subject_id, \
                 attribution_level, review_state, observation_count, last_key, state, history_seqs) \
                 SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], \
                 $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[]) \
                 ON CONFLICT (partition_id, subject_id) DO UPDATE SET \
                 review_state = excluded.review_state, observation_count = excluded.observation_count, \
                 last_key = excluded.last_key, state = excluded.state, \
                 history_seqs = excluded.history_seqs",
                &[&pids, &sids, &levels, &reviews, &counts, &lasts, &states, &seqs],
            )?;
        }
        if !digests.is_empty() {
            let pids: Vec<i64> = digests.iter().map(|d| d.0).collect();
            let ds: Vec<&str> = digests.iter().map(|d| d.1.as_str()).collect();
            let sids: Vec<&str> = digests.iter().map(|d| d.2.as_str()).collect();
            self.query(
                "INSERT INTO utility_ledger_subject_digests (partition_id, memory_ref_digest, \
                 subject_id) SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[]) \
                 ON CONFLICT DO NOTHING",
                &[&pids, &ds, &sids],
            )?;
        }
        Ok(())
    }

    fn delete_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let (pids, sids) = key_arrays(keys);
        self.query(
            "DELETE FROM utility_ledger_subjects s USING UNNEST($1::bigint[], $2::text[]) \
             AS k(pid, sid) WHERE s.partition_id = k.pid AND s.subject_id = k.sid",
            &[&pids, &sids],
        )?;
        self.query(
            "DELETE FROM utility_ledger_subject_digests s USING UNNEST($1::bigint[], $2::text[]) \
             AS k(pid, sid) WHERE s.partition_id = k.pid AND s.subject_id = k.sid",
            &[&pids, &sids],
        )?;
        Ok(())
    }

    fn partition_deliveries(
        &mut self,
        partition_id: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        self.stream(
            &format!(
                "SELECT {DELIVERY_COLUMNS} FROM utility_ledger_deliveries d \
                 WHERE d.partition_id = $1 ORDER BY d.seq"
            ),
            &[&partition_id],
            visit,
        )
    }

    fn all_deliveries(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        self.stream(
            &format!(
                "SELECT {DELIVERY_COLUMNS} FROM utility_ledger_deliveries d WHERE d.seq > $1 \
                 ORDER BY d.seq"
            ),
            &[&after_seq],
            visit,
        )
    }

    fn deliveries_by_seq(&mut self, seqs: &[i64]) -> LedgerResult<Vec<DeliveryRow>> {
        let rows = self.query(
            &format!(
                "SELECT {DELIVERY_COLUMNS} FROM utility_ledger_deliveries d \
                 WHERE d.seq = ANY($1) ORDER BY d.seq"
            ),
            &[&seqs],
        )?;
        rows_to(rows, |r| delivery(r, 0), self.secret.as_deref())
    }

    fn subjects_page(
        &mut self,
        partition_id: i64,
        after: Option<&str>,
        limit: usize,
    ) -> LedgerResult<Vec<SubjectRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.query(
            &format!(
                "SELECT {SUBJECT_COLUMNS} FROM utility_ledger_subjects s WHERE s.partition_id = $1 \
                 AND s.subject_id > $2 ORDER BY s.subject_id LIMIT $3"
            ),
            &[&partition_id, &after.unwrap_or(""), &limit],
        )?;
        rows_to(rows, |r| subject(r, 0), self.secret.as_deref())
    }

    fn subjects_with_digest(
        &mut self,
        partition_id: i64,
        digest: &str,
    ) -> LedgerResult<Vec<SubjectRow>> {
        let rows = self.query(
            &format!(
                "SELECT {SUBJECT_COLUMNS} FROM utility_ledger_subject_digests g \
                 JOIN utility_ledger_subjects s ON s.partition_id = g.partition_id \
                 AND s.subject_id = g.subject_id \
                 WHERE g.partition_id = $1 AND g.memory_ref_digest = $2 ORDER BY s.subject_id"
            ),
            &[&partition_id, &digest],
        )?;
        rows_to(rows, |r| subject(r, 0), self.secret.as_deref())
    }

    fn scan_latest(&mut self, partition_id: i64) -> LedgerResult<Option<String>> {
        let rows = self.query(
            "SELECT max(last_key) FROM utility_ledger_subjects WHERE partition_id = $1",
            &[&partition_id],
        )?;
        Ok(rows.first().and_then(|r| r.get(0)))
    }

    fn conflicts(&mut self, partition_id: i64, limit: usize) -> LedgerResult<Vec<ConflictRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.query(
            "SELECT o.observation_id, o.delivery_count, o.version_count, \
             ARRAY(SELECT v.fingerprint FROM utility_ledger_conflict_versions v \
             WHERE v.observation_id = o.observation_id ORDER BY v.fingerprint LIMIT 17) \
             FROM utility_ledger_observations o WHERE o.partition_id = $1 \
             AND o.version_count > 1 ORDER BY o.observation_id LIMIT $2",
            &[&partition_id, &limit],
        )?;
        rows_to(
            rows,
            |r| {
                Ok(ConflictRow {
                    observation_id: r.try_get(0)?,
                    delivery_count: r.try_get(1)?,
                    version_count: r.try_get(2)?,
                    fingerprints: r.try_get(3)?,
                })
            },
            self.secret.as_deref(),
        )
    }

    fn verify_observations(
        &mut self,
        visit: &mut dyn FnMut(Vec<DeliveryRow>, Option<ObservationRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        self.exec(&format!(
            "DECLARE verify_deliveries NO SCROLL CURSOR FOR SELECT {DELIVERY_COLUMNS} \
             FROM utility_ledger_deliveries d ORDER BY d.observation_id, d.seq"
        ))?;
        self.exec(&format!(
            "DECLARE verify_observations NO SCROLL CURSOR FOR SELECT {OBSERVATION_COLUMNS} \
             FROM utility_ledger_observations o ORDER BY o.observation_id"
        ))?;
        let secret = self.secret.clone();
        let client = RefCell::new(&mut self.client);
        let s = secret.as_deref();
        let left = Cursor {
            client: &client,
            name: "verify_deliveries",
            buffer: VecDeque::new(),
            done: false,
            secret: s,
        }
        .map(|r| r.and_then(|row| delivery(&row, 0).map_err(|e| map_error(&e, s))));
        let right = Cursor {
            client: &client,
            name: "verify_observations",
            buffer: VecDeque::new(),
            done: false,
            secret: s,
        }
        .map(|r| r.and_then(|row| observation(&row).map_err(|e| map_error(&e, s))));
        super::merge_sorted(
            left,
            right,
            |d: &DeliveryRow| d.observation_id.clone(),
            |o: &ObservationRow| o.observation_id.clone(),
            &mut |_, group, stored| visit(group, stored),
        )
    }

    fn verify_subjects(
        &mut self,
        visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        self.exec(&format!(
            "DECLARE verify_members NO SCROLL CURSOR FOR SELECT {DELIVERY_COLUMNS}, o.subject_id \
             FROM utility_ledger_observations o JOIN utility_ledger_deliveries d \
             ON d.seq = o.rep_seq WHERE o.version_count = 1 \
             ORDER BY o.partition_id, o.subject_id, o.observation_id"
        ))?;
        self.exec(&format!(
            "DECLARE verify_subjects NO SCROLL CURSOR FOR SELECT {SUBJECT_COLUMNS} \
             FROM utility_ledger_subjects s ORDER BY s.partition_id, s.subject_id"
        ))?;
        let secret = self.secret.clone();
        let client = RefCell::new(&mut self.client);
        let s = secret.as_deref();
        let left = Cursor {
            client: &client,
            name: "verify_members",
            buffer: VecDeque::new(),
            done: false,
            secret: s,
        }
        .map(|r| {
            r.and_then(|row| {
                let d = delivery(&row, 0).map_err(|e| map_error(&e, s))?;
                let sid: String = row.try_get(16).map_err(|e| map_error(&e, s))?;
                Ok((sid, d))
            })
        });
        let right = Cursor {
            client: &client,
            name: "verify_subjects",
            buffer: VecDeque::new(),
            done: false,
            secret: s,
        }
        .map(|r| r.and_then(|row| subject(&row, 0).map_err(|e| map_error(&e, s))));
        super::merge_sorted(
            left,
            right,
            |(sid, d): &(String, DeliveryRow)| (d.partition_id, sid.clone()),
            |s: &SubjectRow| (s.partition_id, s.subject_id.clone()),
            &mut |key, group, stored| {
                visit(key, group.into_iter().map(|(_, d)| d).collect(), stored)
            },
        )
    }

    fn all_subject_digests(&mut self) -> LedgerResult<Vec<(i64, String, String)>> {
        let rows = self.query(
            "SELECT partition_id, subject_id, memory_ref_digest FROM utility_ledger_subject_digests \
             ORDER BY partition_id, subject_id, memory_ref_digest",
            &[],
        )?;
        rows_to(
            rows,
            |r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)),
            self.secret.as_deref(),
        )
    }

    fn batches(&mut self) -> LedgerResult<Vec<BatchRow>> {
        let rows = self.query(
            "SELECT batch_id, first_seq, last_seq, received, appended, duplicate, conflicting, \
             refused FROM utility_ledger_batches ORDER BY batch_id",
            &[],
        )?;
        rows_to(
            rows,
            |r| {
                Ok(BatchRow {
                    batch_id: r.try_get(0)?,
                    first_seq: r.try_get(1)?,
                    last_seq: r.try_get(2)?,
                    received: r.try_get(3)?,
                    appended: r.try_get(4)?,
                    duplicate: r.try_get(5)?,
                    conflicting: r.try_get(6)?,
                    refused: r.try_get(7)?,
                })
            },
            self.secret.as_deref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{LedgerError, map_server_error};

    #[test]
    fn a_server_that_cannot_take_the_connection_now_is_unreachable_not_a_storage_failure() {
        for code in [
            "57P03", "57P01", "57P02", "57P05", "53300", "08006", "08001",
        ] {
            let err = map_server_error(code, "the database system is starting up");
            assert!(matches!(err, LedgerError::Unreachable(_)), "{code}: {err}");
            assert!(err.to_string().contains("retry later"), "{code}: {err}");
        }
        for code in ["08P01", "42P01", "XX000"] {
            let err = map_server_error(code, "m");
            assert!(matches!(err, LedgerError::Storage(_)), "{code}: {err}");
        }
        assert!(matches!(
            map_server_error("28P01", "m"),
            LedgerError::Auth(_)
        ));
    }
}
