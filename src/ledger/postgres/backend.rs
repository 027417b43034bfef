//! [`LedgerBackend`] on PostgreSQL: every statement of the trait's operations; many keys
//! travel as `UNNEST` arrays, so that a round trip serves a whole window.

use std::cell::RefCell;
use std::time::Duration;

use super::super::backend::fresh_ledger_id;
use super::super::backend::{LEDGER_FORMAT, LedgerBackend, merge_observations, merge_subjects};
use super::super::error::{LedgerError, LedgerResult};
use super::super::provenance::Provenance;
use super::super::rows::VerdictRow;
use super::super::rows::{
    BATCH_COLUMNS, BatchRow, COUNTER_COLUMNS, ConflictRow, DELIVERY_COLUMNS_D, DeliveryRow,
    LEDGER_SCHEMA_VERSION, ObservationKey, ObservationRow, PARTITION_COLUMNS, PartitionKey,
    PartitionRow, PartitionUpdate, SubjectKey, SubjectRow, format_seqs,
};
use super::super::rows::{TrafficAppend, TrafficRow};
use super::rows::{Cursor, by_key_index, key_arrays, rows_to, sql_params};
use super::schema::{
    OBSERVATION_COLUMNS, PROVENANCE_SCHEMA, SCHEMA, SUBJECT_COLUMNS, delivery, observation,
    observation_at, partition, partition_at, subject,
};
use super::{APPEND_LOCK, PgLedger, map_error};

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
            // Those index walks look expensive enough to the planner to compile them
            // (JIT): about 30 ms per look-up of 4,096 aggregates, for a 12 ms walk.
            self.exec(
                "SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off; \
                 SET LOCAL enable_mergejoin = off; SET LOCAL jit = off",
            )?;
            match self.check_meta()? {
                None => {
                    self.exec(SCHEMA)?;
                    self.query(
                        "INSERT INTO utility_ledger_meta (key, value) VALUES \
                         ('ledger_schema_version', $1), ('ledger_format', $2)",
                        &[&LEDGER_SCHEMA_VERSION.to_string(), &LEDGER_FORMAT],
                    )?;
                    Ok::<(), LedgerError>(())
                }
                Some(()) => Ok(()),
            }?;
            // Every write transaction gives a ledger without an identity its identity.
            self.ensure_ledger_id(&fresh_ledger_id()?)
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
        let columns = b.to_columns();
        self.query(
            &format!(
                "INSERT INTO utility_ledger_batches ({BATCH_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            ),
            &sql_params(&columns),
        )
        .map(|_| ())
    }

    fn record_provenance(&mut self, batch_id: i64, provenance: &Provenance) -> LedgerResult<()> {
        self.exec(PROVENANCE_SCHEMA)?;
        self.query(
            "INSERT INTO utility_ledger_batch_provenance (batch_id, kind, reference) \
             VALUES ($1, $2, $3)",
            &[&batch_id, &provenance.kind(), &provenance.reference()],
        )
        .map(|_| ())
    }

    fn batch_provenance(&mut self, batch_ids: &[i64]) -> LedgerResult<Vec<(i64, Provenance)>> {
        let exists = self.query(
            "SELECT to_regclass('utility_ledger_batch_provenance')::text",
            &[],
        )?;
        let present = exists
            .first()
            .and_then(|r| r.try_get::<_, Option<String>>(0).ok().flatten())
            .is_some();
        if !present {
            return Ok(Vec::new());
        }
        let rows = self.query(
            "SELECT batch_id, kind, reference FROM utility_ledger_batch_provenance \
             WHERE batch_id = ANY($1) ORDER BY batch_id",
            &[&batch_ids],
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let read = (|| -> Result<(i64, String, String), postgres::Error> {
                Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))
            })();
            let (id, kind, reference) = read.map_err(|e| self.err(&e))?;
            let provenance = Provenance::from_stored(&kind, &reference).ok_or_else(|| {
                LedgerError::Storage(format!("batch {id} has an unknown provenance"))
            })?;
            out.push((id, provenance));
        }
        Ok(out)
    }

    fn find_partition(&mut self, key: &PartitionKey) -> LedgerResult<Option<PartitionRow>> {
        let rows = self.query(
            &format!(
                "SELECT {PARTITION_COLUMNS} FROM utility_ledger_partitions WHERE agent_id = $1 \
                 AND project_id = $2 AND corpus_id = $3 AND surface_id = $4 \
                 AND retrieval_snapshot_ref = $5 AND policy_snapshot_ref = $6"
            ),
            &sql_params(&key.fields()),
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
            &sql_params(&key.fields()),
        )?;
        rows.first()
            .map(|r| r.get(0))
            .ok_or_else(|| LedgerError::Storage("partition insert returned nothing".into()))
    }

    fn update_partitions(&mut self, updates: &[PartitionUpdate]) -> LedgerResult<()> {
        if updates.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = updates.iter().map(|u| u.partition_id).collect();
        let columns: Vec<Vec<i64>> = (0..COUNTER_COLUMNS.len())
            .map(|i| updates.iter().map(|u| u.deltas.to_array()[i]).collect())
            .collect();
        let latest: Vec<Option<&str>> = updates.iter().map(|u| u.latest.as_deref()).collect();
        let sets: Vec<String> = COUNTER_COLUMNS
            .iter()
            .map(|c| format!("{c} = p.{c} + k.{c}"))
            .collect();
        let arrays: Vec<String> = (0..COUNTER_COLUMNS.len())
            .map(|i| format!("${}::bigint[]", i + 2))
            .collect();
        let latest_param = COUNTER_COLUMNS.len() + 2;
        // Counters and latest key in one statement: one new version of each partition row
        // per append (see the partitions table's fill factor in `schema.rs`).
        let sql = format!(
            "UPDATE utility_ledger_partitions p SET {}, \
             latest_key = coalesce(k.latest_key, p.latest_key) \
             FROM UNNEST($1::bigint[], {}, ${latest_param}::text[]) \
             AS k(id, {}, latest_key) WHERE p.partition_id = k.id",
            sets.join(", "),
            arrays.join(", "),
            COUNTER_COLUMNS.join(", ")
        );
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&ids];
        for c in &columns {
            params.push(c);
        }
        params.push(&latest);
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
        let found = by_key_index(rows, keys.len(), partition_at, self.secret.as_deref())?;
        Ok(found.into_iter().map(|mut v| v.pop()).collect())
    }

    fn load_observations(&mut self, keys: &[ObservationKey]) -> LedgerResult<Vec<ObservationRow>> {
        let ids: Vec<&str> = keys.iter().map(|k| k.2.as_str()).collect();
        let rows = self.query(
            &format!(
                "SELECT {OBSERVATION_COLUMNS} FROM UNNEST($1::text[]) AS k(id) \
                 JOIN utility_ledger_observations o ON o.observation_id = k.id"
            ),
            &[&ids],
        )?;
        rows_to(rows, observation, self.secret.as_deref())
    }

    fn write_chunk(
        &mut self,
        deliveries: &[DeliveryRow],
        new_observations: &[ObservationRow],
        changed_observations: &[ObservationRow],
        conflict_versions: &[(String, String)],
    ) -> LedgerResult<()> {
        if !deliveries.is_empty() {
            self.copy_deliveries(deliveries)?;
        }
        if !new_observations.is_empty() {
            self.copy_observations(new_observations)?;
        }
        if !changed_observations.is_empty() {
            let rows = changed_observations;
            let ids: Vec<&str> = rows.iter().map(|o| o.observation_id.as_str()).collect();
            let versions: Vec<i64> = rows.iter().map(|o| o.version_count).collect();
            let counts: Vec<i64> = rows.iter().map(|o| o.delivery_count).collect();
            let reps: Vec<i64> = rows.iter().map(|o| o.rep_seq).collect();
            let orders: Vec<&str> = rows.iter().map(|o| o.rep_order.as_str()).collect();
            self.query(
                "UPDATE utility_ledger_observations o SET version_count = k.version_count, \
                 delivery_count = k.delivery_count, rep_seq = k.rep_seq, rep_order = k.rep_order \
                 FROM UNNEST($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[]) \
                 AS k(id, version_count, delivery_count, rep_seq, rep_order) \
                 WHERE o.observation_id = k.id",
                &[&ids, &versions, &counts, &reps, &orders],
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
        by_key_index(rows, keys.len(), observation_at, self.secret.as_deref())
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
        let found = by_key_index(rows, keys.len(), subject, self.secret.as_deref())?;
        Ok(found.into_iter().map(|mut v| v.pop()).collect())
    }

    fn put_subjects(
        &mut self,
        new_rows: &[SubjectRow],
        changed_rows: &[SubjectRow],
        digests: &[(i64, String, String)],
    ) -> LedgerResult<()> {
        if !new_rows.is_empty() {
            self.copy_subjects(new_rows)?;
        }
        if !changed_rows.is_empty() {
            let rows = changed_rows;
            let pids: Vec<i64> = rows.iter().map(|s| s.partition_id).collect();
            let sids: Vec<&str> = rows.iter().map(|s| s.subject_id.as_str()).collect();
            let reviews: Vec<&str> = rows.iter().map(|s| s.review_state.as_str()).collect();
            let counts: Vec<i64> = rows.iter().map(|s| s.observation_count).collect();
            let lasts: Vec<&str> = rows.iter().map(|s| s.last_key.as_str()).collect();
            let states: Vec<&str> = rows.iter().map(|s| s.state.as_str()).collect();
            let seqs: Vec<String> = rows.iter().map(|s| format_seqs(&s.history_seqs)).collect();
            self.query(
                "UPDATE utility_ledger_subjects s SET review_state = k.review_state, \
                 observation_count = k.observation_count, last_key = k.last_key, \
                 state = k.state, history_seqs = k.history_seqs \
                 FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], \
                 $6::text[], $7::text[]) AS k(pid, sid, review_state, observation_count, \
                 last_key, state, history_seqs) \
                 WHERE s.partition_id = k.pid AND s.subject_id = k.sid",
                &[&pids, &sids, &reviews, &counts, &lasts, &states, &seqs],
            )?;
        }
        if !digests.is_empty() {
            self.copy_digests(digests)?;
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
                "SELECT {DELIVERY_COLUMNS_D} FROM utility_ledger_deliveries d \
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
                "SELECT {DELIVERY_COLUMNS_D} FROM utility_ledger_deliveries d WHERE d.seq > $1 \
                 ORDER BY d.seq"
            ),
            &[&after_seq],
            visit,
        )
    }

    fn deliveries_by_seq(&mut self, seqs: &[i64]) -> LedgerResult<Vec<DeliveryRow>> {
        let rows = self.query(
            &format!(
                "SELECT {DELIVERY_COLUMNS_D} FROM utility_ledger_deliveries d \
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
            "DECLARE verify_deliveries NO SCROLL CURSOR FOR SELECT {DELIVERY_COLUMNS_D} \
             FROM utility_ledger_deliveries d ORDER BY d.observation_id, d.seq"
        ))?;
        self.exec(&format!(
            "DECLARE verify_observations NO SCROLL CURSOR FOR SELECT {OBSERVATION_COLUMNS} \
             FROM utility_ledger_observations o ORDER BY o.observation_id"
        ))?;
        let secret = self.secret.clone();
        let client = RefCell::new(&mut self.client);
        let s = secret.as_deref();
        let left = Cursor::new(&client, "verify_deliveries", s)
            .map(|r| r.and_then(|row| delivery(&row, 0).map_err(|e| map_error(&e, s))));
        let right = Cursor::new(&client, "verify_observations", s)
            .map(|r| r.and_then(|row| observation(&row).map_err(|e| map_error(&e, s))));
        merge_observations(left, right, visit)
    }

    fn verify_subjects(
        &mut self,
        visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        self.exec(&format!(
            "DECLARE verify_members NO SCROLL CURSOR FOR SELECT {DELIVERY_COLUMNS_D}, o.subject_id \
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
        let left = Cursor::new(&client, "verify_members", s).map(|r| {
            r.and_then(|row| {
                let d = delivery(&row, 0).map_err(|e| map_error(&e, s))?;
                let sid: String = row.try_get(16).map_err(|e| map_error(&e, s))?;
                Ok((sid, d))
            })
        });
        let right = Cursor::new(&client, "verify_subjects", s)
            .map(|r| r.and_then(|row| subject(&row, 0).map_err(|e| map_error(&e, s))));
        merge_subjects(left, right, visit)
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
            &format!("SELECT {BATCH_COLUMNS} FROM utility_ledger_batches ORDER BY batch_id"),
            &[],
        )?;
        rows_to(
            rows,
            |r| BatchRow::from_columns(|i| r.try_get(i)),
            self.secret.as_deref(),
        )
    }

    fn ledger_id(&mut self) -> LedgerResult<Option<String>> {
        self.read_ledger_id()
    }

    fn record_verdict(&mut self, row: &VerdictRow) -> LedgerResult<(i64, bool)> {
        self.insert_verdict(row)
    }

    fn newest_verdict(
        &mut self,
        profile_digest: &str,
        partition: &str,
    ) -> LedgerResult<Option<String>> {
        self.select_newest_verdict(profile_digest, partition)
    }

    // The traffic log: `traffic.rs`.

    fn begin_traffic_write(&mut self, wait: Duration) -> LedgerResult<()> {
        self.begin_traffic(wait)
    }

    fn record_traffic(&mut self, events: &[TrafficAppend]) -> LedgerResult<Vec<i64>> {
        self.record_traffic_rows(events)
    }

    fn traffic_high_water(&mut self) -> LedgerResult<i64> {
        self.traffic_high()
    }

    fn traffic_partitions(&mut self) -> LedgerResult<Vec<PartitionKey>> {
        Ok(self
            .traffic_partitions_by_id()?
            .into_iter()
            .map(|(_, k)| k)
            .collect())
    }

    fn traffic_events(
        &mut self,
        partitions: &[PartitionKey],
        visit: &mut dyn FnMut(TrafficRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        self.traffic_rows(partitions, visit)
    }
}
