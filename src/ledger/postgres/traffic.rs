//! The PostgreSQL ledger's traffic log ([`crate::ledger::traffic`]): its two tables
//! (`utility_ledger_traffic_partitions`, `utility_ledger_traffic_events`), created inside
//! the first traffic write, and every statement that reads or writes them.
//!
//! A traffic write takes its own transaction-scoped advisory lock ([`TRAFFIC_LOCK`]), not
//! the delivery append's, so a recall never waits behind a long append; sequences are
//! assigned under that lock (`max + 1`), so they follow commit order. `lock_timeout`
//! bounds every wait. Only on a ledger whose schema does not exist yet does it also take
//! the append lock, to create the schema exactly once.

use std::time::Duration;

use super::super::backend::{LEDGER_FORMAT, LedgerBackend as _};
use super::super::error::{LedgerError, LedgerResult};
use super::super::rows::{LEDGER_SCHEMA_VERSION, PartitionKey};
use super::super::rows::{TrafficAppend, TrafficKind, TrafficRow};
use super::rows::{rows_to, sql_params};
use super::schema::SCHEMA;
use super::{APPEND_LOCK, PgLedger, map_error};

/// The advisory lock every traffic write holds.
const TRAFFIC_LOCK: i64 = 0x7265_776d_7472_6166;

const TRAFFIC_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS utility_ledger_traffic_partitions (
    traffic_partition_id BIGINT PRIMARY KEY,
    agent_id TEXT COLLATE "C" NOT NULL,
    project_id TEXT COLLATE "C" NOT NULL,
    corpus_id TEXT COLLATE "C" NOT NULL,
    surface_id TEXT COLLATE "C" NOT NULL,
    retrieval_snapshot_ref TEXT COLLATE "C" NOT NULL,
    policy_snapshot_ref TEXT COLLATE "C" NOT NULL,
    UNIQUE (agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, policy_snapshot_ref)
);
CREATE TABLE IF NOT EXISTS utility_ledger_traffic_events (
    seq BIGINT PRIMARY KEY,
    traffic_partition_id BIGINT NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,
    recall_id TEXT COLLATE "C" NOT NULL,
    application_receipt_id TEXT COLLATE "C" NOT NULL,
    observed_at TEXT COLLATE "C" NOT NULL,
    delivery_seq BIGINT NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS utility_ledger_traffic_events_by_partition
    ON utility_ledger_traffic_events (traffic_partition_id, seq);
"#;

impl PgLedger {
    fn traffic_table_exists(&mut self) -> LedgerResult<bool> {
        let rows = self.query(
            "SELECT to_regclass('utility_ledger_traffic_events')::text",
            &[],
        )?;
        Ok(rows
            .first()
            .and_then(|r| r.try_get::<_, Option<String>>(0).ok().flatten())
            .is_some())
    }

    /// [`super::super::LedgerBackend::begin_traffic_write`].
    pub(super) fn begin_traffic(&mut self, wait: Duration) -> LedgerResult<()> {
        self.exec("BEGIN")?;
        let result = (|| {
            let ms = wait.as_millis().max(1);
            self.exec(&format!("SET LOCAL lock_timeout = '{ms}ms'"))?;
            if self.check_meta()?.is_none() {
                self.query("SELECT pg_advisory_xact_lock($1)", &[&APPEND_LOCK])?;
                if self.check_meta()?.is_none() {
                    self.exec(SCHEMA)?;
                    self.query(
                        "INSERT INTO utility_ledger_meta (key, value) VALUES \
                         ('ledger_schema_version', $1), ('ledger_format', $2)",
                        &[&LEDGER_SCHEMA_VERSION.to_string(), &LEDGER_FORMAT],
                    )?;
                }
            }
            self.query("SELECT pg_advisory_xact_lock($1)", &[&TRAFFIC_LOCK])?;
            // A ledger first written by traffic gets its identity here.
            if self.read_ledger_id()?.is_none() {
                self.ensure_ledger_id(&super::super::backend::fresh_ledger_id()?)?;
            }
            Ok(())
        })();
        if result.is_err() {
            self.rollback();
        }
        result
    }

    /// [`super::super::LedgerBackend::record_traffic`].
    pub(super) fn record_traffic_rows(
        &mut self,
        events: &[TrafficAppend],
    ) -> LedgerResult<Vec<i64>> {
        self.exec(TRAFFIC_SCHEMA)?;
        let high: i64 = self
            .query(
                "SELECT coalesce(max(seq), 0) FROM utility_ledger_deliveries",
                &[],
            )?
            .first()
            .map_or(0, |r| r.get(0));
        let mut seqs = Vec::with_capacity(events.len());
        for e in events {
            let fields = e.partition.fields();
            let found = self.query(
                "SELECT traffic_partition_id FROM utility_ledger_traffic_partitions \
                 WHERE agent_id = $1 AND project_id = $2 AND corpus_id = $3 AND surface_id = $4 \
                 AND retrieval_snapshot_ref = $5 AND policy_snapshot_ref = $6",
                &sql_params(&fields),
            )?;
            let pid: i64 = match found.first() {
                Some(r) => r.get(0),
                None => self
                    .query(
                        "INSERT INTO utility_ledger_traffic_partitions (traffic_partition_id, \
                         agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, \
                         policy_snapshot_ref) SELECT coalesce(max(traffic_partition_id), 0) + 1, \
                         $1, $2, $3, $4, $5, $6 FROM utility_ledger_traffic_partitions \
                         RETURNING traffic_partition_id",
                        &sql_params(&fields),
                    )?
                    .first()
                    .map(|r| r.get(0))
                    .ok_or_else(|| {
                        LedgerError::Storage("traffic partition insert returned nothing".into())
                    })?,
            };
            let seq: i64 = self
                .query(
                    "INSERT INTO utility_ledger_traffic_events (seq, traffic_partition_id, kind, \
                     recall_id, application_receipt_id, observed_at, delivery_seq, event) \
                     SELECT coalesce(max(seq), 0) + 1, $1, $2, $3, $4, $5, $6, $7 \
                     FROM utility_ledger_traffic_events RETURNING seq",
                    &[
                        &pid,
                        &e.kind.as_str(),
                        &e.recall_id,
                        &e.application_receipt_id,
                        &e.observed_at,
                        &high,
                        &e.event,
                    ],
                )?
                .first()
                .map(|r| r.get(0))
                .ok_or_else(|| LedgerError::Storage("traffic insert returned nothing".into()))?;
            seqs.push(seq);
        }
        Ok(seqs)
    }

    /// [`super::super::LedgerBackend::traffic_high_water`].
    pub(super) fn traffic_high(&mut self) -> LedgerResult<i64> {
        if !self.traffic_table_exists()? {
            return Ok(0);
        }
        let rows = self.query(
            "SELECT coalesce(max(seq), 0) FROM utility_ledger_traffic_events",
            &[],
        )?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    /// Every partition with traffic (id, key), in key order.
    pub(super) fn traffic_partitions_by_id(&mut self) -> LedgerResult<Vec<(i64, PartitionKey)>> {
        if !self.traffic_table_exists()? {
            return Ok(Vec::new());
        }
        let rows = self.query(
            "SELECT traffic_partition_id, agent_id, project_id, corpus_id, surface_id, \
             retrieval_snapshot_ref, policy_snapshot_ref FROM utility_ledger_traffic_partitions \
             ORDER BY agent_id, project_id, corpus_id, surface_id, retrieval_snapshot_ref, \
             policy_snapshot_ref",
            &[],
        )?;
        rows_to(
            rows,
            |r| {
                Ok((
                    r.try_get(0)?,
                    PartitionKey {
                        agent_id: r.try_get(1)?,
                        project_id: r.try_get(2)?,
                        corpus_id: r.try_get(3)?,
                        surface_id: r.try_get(4)?,
                        retrieval_snapshot_ref: r.try_get(5)?,
                        policy_snapshot_ref: r.try_get(6)?,
                    },
                ))
            },
            self.secret.as_deref(),
        )
    }

    /// [`super::super::LedgerBackend::traffic_events`].
    pub(super) fn traffic_rows(
        &mut self,
        selected: &[PartitionKey],
        visit: &mut dyn FnMut(TrafficRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let chosen: Vec<(i64, PartitionKey)> = self
            .traffic_partitions_by_id()?
            .into_iter()
            .filter(|(_, k)| selected.contains(k))
            .collect();
        if chosen.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = chosen.iter().map(|(id, _)| *id).collect();
        let secret = self.secret.clone();
        let err = |e: &postgres::Error| map_error(e, secret.as_deref());
        let rows = self
            .client
            .query_raw(
                "SELECT seq, traffic_partition_id, kind, recall_id, application_receipt_id, \
                 observed_at, delivery_seq, event FROM utility_ledger_traffic_events \
                 WHERE traffic_partition_id = ANY($1) ORDER BY seq",
                [&ids as &(dyn postgres::types::ToSql + Sync)],
            )
            .map_err(|e| err(&e))?;
        use postgres::fallible_iterator::FallibleIterator as _;
        let mut rows = rows;
        while let Some(r) = rows.next().map_err(|e| err(&e))? {
            let read = (|| -> Result<_, postgres::Error> {
                Ok((
                    r.try_get::<_, i64>(0)?,
                    r.try_get::<_, i64>(1)?,
                    r.try_get::<_, String>(2)?,
                    r.try_get::<_, String>(3)?,
                    r.try_get::<_, String>(4)?,
                    r.try_get::<_, String>(5)?,
                    r.try_get::<_, i64>(6)?,
                    r.try_get::<_, String>(7)?,
                ))
            })();
            let (seq, pid, kind, recall_id, receipt_id, observed_at, delivery_seq, event) =
                read.map_err(|e| err(&e))?;
            let kind = TrafficKind::parse(&kind).ok_or_else(|| {
                LedgerError::Storage(format!("traffic event {seq} has an unknown kind"))
            })?;
            let partition = chosen
                .iter()
                .find(|(id, _)| *id == pid)
                .map(|(_, k)| k.clone())
                .ok_or_else(|| {
                    LedgerError::Storage(format!("traffic event {seq} has no partition"))
                })?;
            visit(TrafficRow {
                seq,
                delivery_seq,
                kind,
                partition,
                recall_id,
                application_receipt_id: receipt_id,
                observed_at,
                event,
            })?;
        }
        Ok(())
    }
}
