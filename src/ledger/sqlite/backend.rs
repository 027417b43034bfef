//! [`LedgerBackend`] on SQLite: every statement of the trait's operations, on the
//! connection [`SqliteLedger`] opened (prepared statements are cached per connection).

use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::types::ToSql;
use rusqlite::{OptionalExtension as _, params, params_from_iter};

use super::super::backend::{
    LEDGER_FORMAT, LedgerBackend, fresh_ledger_id, merge_observations, merge_subjects,
};
use super::super::error::{LedgerError, LedgerResult};
use super::super::provenance::Provenance;
use super::super::rows::VerdictRow;
use super::super::rows::{
    BATCH_COLUMNS, BatchRow, COUNTER_COLUMNS, ConflictRow, DELIVERY_COLUMNS, DELIVERY_COLUMNS_D,
    DeliveryRow, LEDGER_SCHEMA_VERSION, ObservationKey, ObservationRow, PARTITION_COLUMNS,
    PartitionKey, PartitionRow, PartitionUpdate, SubjectKey, SubjectRow, format_seqs,
};
use super::super::rows::{TrafficAppend, TrafficRow};
use super::codec::{
    basis_index, blob_column, delivery, fingerprint_blob, from_index, hex_of, key_blob, key_text,
    label_index, level_index, observation, observation_blob, order_blob, order_micros, order_text,
    partition, subject, subject_blob, subject_blob_of, subject_text, unstorable,
};
use super::salvage::salvage_rows;
use super::schema::{
    DELIVERY_INDEX, OBSERVATION_COLUMNS, PROVENANCE_SCHEMA, SCHEMA, SUBJECT_COLUMNS,
    SUBJECT_COLUMNS_S,
};
use super::traffic;
use super::verdicts;
use super::{
    BUSY_TIMEOUT, LEDGER_PAGE_SIZE, SqliteLedger, map_error, quick_check, retry_busy,
    retry_busy_within, sq,
};
use crate::utility::observation::{EvidenceBasis, UtilityLabel};
use crate::utility::reducer::V1Input;

impl LedgerBackend for SqliteLedger {
    fn backend_name(&self) -> &'static str {
        "sqlite"
    }

    fn subject_window(&self) -> usize {
        256
    }

    fn begin_write(&mut self) -> LedgerResult<()> {
        self.begin_write_within(BUSY_TIMEOUT, false)
    }

    fn commit(&mut self) -> LedgerResult<()> {
        let traffic = std::mem::take(&mut self.traffic_write);
        let first_write = std::mem::take(&mut self.first_write);
        let index_pending = std::mem::take(&mut self.index_pending);
        let path = self.path.clone();
        let conn = self.conn()?;
        let built = if index_pending {
            conn.execute_batch(DELIVERY_INDEX)
        } else {
            Ok(())
        };
        if let Err(e) = built.and_then(|()| conn.execute_batch("COMMIT")) {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(map_error(&e));
        }
        if traffic {
            traffic::fold_long_wal(conn, &path);
        }
        if first_write {
            // Best effort: a reader holding the file keeps the rollback journal until the
            // next write, which asks for the log again.
            let _ = conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0));
        }
        self.committed = true;
        Ok(())
    }

    fn rollback(&mut self) {
        self.index_pending = false;
        if let Some(conn) = self.conn.as_mut()
            && !conn.is_autocommit()
        {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }

    fn begin_read(&mut self) -> LedgerResult<()> {
        self.open_for_read()?;
        let conn = self.conn()?;
        retry_busy(|| conn.execute_batch("BEGIN"))?;
        match Self::check_schema(conn) {
            Ok(true) => Ok(()),
            Ok(false) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(LedgerError::Missing)
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn end_read(&mut self) -> LedgerResult<()> {
        self.rollback();
        self.check_unchanged()
    }

    fn integrity_problem(&mut self) -> LedgerResult<Option<String>> {
        let conn = self.conn()?;
        match retry_busy(|| quick_check(conn)) {
            Ok(None) => Ok(None),
            Ok(Some(problem)) => Ok(Some(format!("PRAGMA quick_check: {problem}"))),
            // A page so damaged that the check itself stops is a failed check.
            Err(LedgerError::Damaged { detail, .. }) => {
                Ok(Some(format!("PRAGMA quick_check stopped: {detail}")))
            }
            Err(other) => Err(other),
        }
    }

    fn salvage(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow, Option<&PartitionKey>) -> LedgerResult<()>,
    ) -> LedgerResult<Option<i64>> {
        self.open_for_read()?;
        let conn = self.conn()?;
        retry_busy(|| conn.execute_batch("BEGIN"))?;
        let result = salvage_rows(conn, after_seq, visit);
        let _ = conn.execute_batch("ROLLBACK");
        let unchanged = self.check_unchanged();
        let high = result?;
        unchanged?;
        Ok(high)
    }

    fn high_water(&mut self) -> LedgerResult<i64> {
        let conn = self.conn()?;
        sq(
            conn.query_row("SELECT coalesce(max(seq), 0) FROM deliveries", [], |r| {
                r.get(0)
            }),
        )
    }

    fn last_batch_id(&mut self) -> LedgerResult<i64> {
        let conn = self.conn()?;
        sq(
            conn.query_row("SELECT coalesce(max(batch_id), 0) FROM batches", [], |r| {
                r.get(0)
            }),
        )
    }

    fn record_batch(&mut self, b: &BatchRow) -> LedgerResult<()> {
        let conn = self.conn()?;
        sq(conn.execute(
            &format!(
                "INSERT INTO batches ({BATCH_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ),
            params_from_iter(b.to_columns()),
        ))
        .map(|_| ())
    }

    fn record_provenance(&mut self, batch_id: i64, provenance: &Provenance) -> LedgerResult<()> {
        let conn = self.conn()?;
        sq(conn.execute_batch(PROVENANCE_SCHEMA))?;
        sq(conn.execute(
            "INSERT INTO batch_provenance (batch_id, kind, reference) VALUES (?1, ?2, ?3)",
            params![batch_id, provenance.kind(), provenance.reference()],
        ))
        .map(|_| ())
    }

    fn batch_provenance(&mut self, batch_ids: &[i64]) -> LedgerResult<Vec<(i64, Provenance)>> {
        let conn = self.conn()?;
        let exists: i64 = sq(conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'batch_provenance'",
            [],
            |r| r.get(0),
        ))?;
        let mut out = Vec::new();
        if exists == 0 {
            return Ok(out);
        }
        let mut stmt = sq(
            conn.prepare_cached("SELECT kind, reference FROM batch_provenance WHERE batch_id = ?1")
        )?;
        let mut sorted = batch_ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for id in sorted {
            let row: Option<(String, String)> = sq(stmt
                .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional())?;
            if let Some((kind, reference)) = row {
                let provenance = Provenance::from_stored(&kind, &reference).ok_or_else(|| {
                    LedgerError::Storage(format!("batch {id} has an unknown provenance"))
                })?;
                out.push((id, provenance));
            }
        }
        Ok(out)
    }

    fn find_partition(&mut self, key: &PartitionKey) -> LedgerResult<Option<PartitionRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {PARTITION_COLUMNS} FROM partitions WHERE agent_id = ?1 AND project_id = ?2 \
             AND corpus_id = ?3 AND surface_id = ?4 AND retrieval_snapshot_ref = ?5 \
             AND policy_snapshot_ref = ?6"
        )))?;
        sq(stmt
            .query_row(params_from_iter(key.fields()), partition)
            .optional())
    }

    fn partitions(&mut self) -> LedgerResult<Vec<PartitionRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {PARTITION_COLUMNS} FROM partitions ORDER BY partition_id"
        )))?;
        let rows = sq(stmt.query_map([], partition))?;
        rows.map(sq).collect()
    }

    fn insert_partition(&mut self, key: &PartitionKey) -> LedgerResult<i64> {
        let conn = self.conn()?;
        let id: i64 = sq(conn.query_row(
            "SELECT coalesce(max(partition_id), 0) + 1 FROM partitions",
            [],
            |r| r.get(0),
        ))?;
        sq(conn.execute(
            "INSERT INTO partitions (partition_id, agent_id, project_id, corpus_id, surface_id, \
             retrieval_snapshot_ref, policy_snapshot_ref) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params_from_iter(
                std::iter::once(&id as &dyn ToSql)
                    .chain(key.fields().iter().map(|f| f as &dyn ToSql)),
            ),
        ))?;
        Ok(id)
    }

    fn update_partitions(&mut self, updates: &[PartitionUpdate]) -> LedgerResult<()> {
        let conn = self.conn()?;
        let sets: Vec<String> = COUNTER_COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c} = {c} + ?{}", i + 2))
            .collect();
        let mut stmt = sq(conn.prepare_cached(&format!(
            "UPDATE partitions SET {}, latest_key = coalesce(?12, latest_key) \
             WHERE partition_id = ?1",
            sets.join(", ")
        )))?;
        for u in updates {
            let a = u.deltas.to_array();
            sq(stmt.execute(params![
                u.partition_id,
                a[0],
                a[1],
                a[2],
                a[3],
                a[4],
                a[5],
                a[6],
                a[7],
                a[8],
                a[9],
                u.latest
            ]))?;
        }
        Ok(())
    }

    fn load_observations(&mut self, keys: &[ObservationKey]) -> LedgerResult<Vec<ObservationRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {OBSERVATION_COLUMNS} FROM observations WHERE partition_id = ?1 \
             AND subject_id = ?2 AND observation_id = ?3"
        )))?;
        let mut versions = sq(conn.prepare_cached(
            "SELECT fingerprint FROM conflict_versions WHERE observation_id = ?1 \
             ORDER BY fingerprint",
        ))?;
        let mut out = Vec::new();
        for (pid, sid, id) in keys {
            let id_bytes = observation_blob(id)?;
            let row = sq(stmt
                .query_row(params![pid, subject_blob_of(sid)?, id_bytes], |r| {
                    observation(r, 0)
                })
                .optional())?;
            if let Some(mut row) = row {
                if row.version_count > 1 {
                    let fps = sq(versions.query_map(params![id_bytes], |r| {
                        blob_column(r, 0, |b| hex_of("muof_", b))
                    }))?;
                    row.fingerprints = fps.map(sq).collect::<LedgerResult<_>>()?;
                }
                out.push(row);
            }
        }
        Ok(out)
    }

    fn write_chunk(
        &mut self,
        deliveries: &[DeliveryRow],
        new_observations: &[ObservationRow],
        changed_observations: &[ObservationRow],
        conflict_versions: &[(String, String)],
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        {
            let mut stmt = sq(conn.prepare_cached(&format!(
                "INSERT INTO deliveries ({DELIVERY_COLUMNS}) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
            )))?;
            for d in deliveries {
                sq(stmt.execute(params![
                    d.seq,
                    d.batch_id,
                    d.partition_id,
                    observation_blob(&d.observation_id)?,
                    d.application_receipt_id,
                    d.memory_ref_digests,
                    d.outcome_ref,
                    label_index(&d.utility_label)?,
                    level_index(&d.attribution_level)?,
                    basis_index(&d.evidence_basis)?,
                    d.confidence,
                    d.reason_codes,
                    d.evidence_refs,
                    d.evaluator_ref,
                    d.evaluation_version,
                    d.created_at
                ]))?;
            }
        }
        {
            let mut stmt = sq(conn.prepare_cached(&format!(
                "INSERT INTO observations ({OBSERVATION_COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
                 ON CONFLICT (partition_id, subject_id, observation_id) DO UPDATE SET \
                 version_count = excluded.version_count, \
                 delivery_count = excluded.delivery_count, rep_seq = excluded.rep_seq, \
                 rep_order = excluded.rep_order"
            )))?;
            for o in new_observations.iter().chain(changed_observations) {
                sq(stmt.execute(params![
                    o.partition_id,
                    subject_blob_of(&o.subject_id)?,
                    observation_blob(&o.observation_id)?,
                    o.version_count,
                    o.delivery_count,
                    fingerprint_blob(&o.fingerprint)?,
                    o.rep_seq,
                    order_blob(&o.rep_order).ok_or_else(|| unstorable("an order key"))?,
                    o.utility_label.index() as i64,
                    o.evidence_basis.index() as i64,
                    o.confidence
                ]))?;
            }
        }
        let mut stmt = sq(conn.prepare_cached(
            "INSERT OR IGNORE INTO conflict_versions (observation_id, fingerprint) VALUES (?1, ?2)",
        ))?;
        for (id, fp) in conflict_versions {
            sq(stmt.execute(params![observation_blob(id)?, fingerprint_blob(fp)?]))?;
        }
        Ok(())
    }

    fn subject_members(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<ObservationRow>>> {
        let conn = self.conn()?;
        // Only the columns the reducer and the history read: members are decoded for
        // every touched subject, and their subject id and fingerprint are not needed.
        let mut stmt = sq(conn.prepare_cached(
            "SELECT observation_id, rep_seq, rep_order, utility_label, evidence_basis, \
             confidence FROM observations WHERE partition_id = ?1 \
             AND subject_id = ?2 AND version_count = 1 ORDER BY observation_id",
        ))?;
        let mut out = Vec::with_capacity(keys.len());
        for (pid, sid) in keys {
            let rows = sq(stmt.query_map(params![pid, subject_blob_of(sid)?], |r| {
                Ok(ObservationRow {
                    partition_id: *pid,
                    subject_id: String::new(),
                    observation_id: blob_column(r, 0, |b| hex_of("muo_", b))?,
                    version_count: 1,
                    delivery_count: 1,
                    fingerprint: String::new(),
                    rep_seq: r.get(1)?,
                    rep_order: blob_column(r, 2, order_text)?,
                    fingerprints: Vec::new(),
                    utility_label: from_index(UtilityLabel::ALL, r, 3)?,
                    evidence_basis: from_index(EvidenceBasis::ALL, r, 4)?,
                    confidence: r.get(5)?,
                })
            }))?;
            out.push(rows.map(sq).collect::<LedgerResult<Vec<_>>>()?);
        }
        Ok(out)
    }

    fn subject_v1_inputs(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Vec<V1Input>>> {
        let conn = self.conn()?;
        // Four columns, no text: the label, the tier, the confidence and the first eight
        // bytes of `rep_order` (the creation instant, big-endian). The blob ids sort as
        // their hex does.
        let mut stmt = sq(conn.prepare_cached(
            "SELECT utility_label, evidence_basis, confidence, rep_order FROM observations \
             WHERE partition_id = ?1 AND subject_id = ?2 AND version_count = 1 \
             ORDER BY observation_id",
        ))?;
        let mut out = Vec::with_capacity(keys.len());
        for (pid, sid) in keys {
            let rows = sq(stmt.query_map(params![pid, subject_blob_of(sid)?], |r| {
                Ok(V1Input {
                    utility_label: from_index(UtilityLabel::ALL, r, 0)?,
                    evidence_basis: from_index(EvidenceBasis::ALL, r, 1)?,
                    confidence: r.get(2)?,
                    created_micros: blob_column(r, 3, order_micros)?,
                })
            }))?;
            out.push(rows.map(sq).collect::<LedgerResult<Vec<_>>>()?);
        }
        Ok(out)
    }

    fn load_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<Vec<Option<SubjectRow>>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {SUBJECT_COLUMNS} FROM subjects WHERE partition_id = ?1 AND subject_id = ?2"
        )))?;
        keys.iter()
            .map(|(pid, sid)| match subject_blob(sid) {
                // Not a subject id: no subject has it.
                None => Ok(None),
                Some(blob) => sq(stmt.query_row(params![pid, blob], subject).optional()),
            })
            .collect()
    }

    fn put_subjects(
        &mut self,
        new_rows: &[SubjectRow],
        changed_rows: &[SubjectRow],
        digests: &[(i64, String, String)],
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        {
            let mut stmt = sq(conn.prepare_cached(&format!(
                "INSERT INTO subjects ({SUBJECT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                 ON CONFLICT (partition_id, subject_id) DO UPDATE SET \
                 review_state = excluded.review_state, observation_count = excluded.observation_count, \
                 last_key = excluded.last_key, state = excluded.state, \
                 history_seqs = excluded.history_seqs"
            )))?;
            for s in new_rows.iter().chain(changed_rows) {
                sq(stmt.execute(params![
                    s.partition_id,
                    subject_blob_of(&s.subject_id)?,
                    s.review_state,
                    s.observation_count,
                    key_blob(&s.last_key).ok_or_else(|| unstorable("an order key"))?,
                    s.state,
                    format_seqs(&s.history_seqs)
                ]))?;
            }
        }
        let mut stmt = sq(conn.prepare_cached(
            "INSERT OR IGNORE INTO subject_digests (partition_id, memory_ref_digest, subject_id) \
             VALUES (?1, ?2, ?3)",
        ))?;
        for (pid, digest, sid) in digests {
            sq(stmt.execute(params![pid, digest, subject_blob_of(sid)?]))?;
        }
        Ok(())
    }

    fn delete_subjects(&mut self, keys: &[SubjectKey]) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut del = sq(
            conn.prepare_cached("DELETE FROM subjects WHERE partition_id = ?1 AND subject_id = ?2")
        )?;
        let mut del_digests = sq(conn.prepare_cached(
            "DELETE FROM subject_digests WHERE partition_id = ?1 AND subject_id = ?2",
        ))?;
        for (pid, sid) in keys {
            let blob = subject_blob_of(sid)?;
            sq(del.execute(params![pid, blob]))?;
            sq(del_digests.execute(params![pid, blob]))?;
        }
        Ok(())
    }

    fn partition_deliveries(
        &mut self,
        partition_id: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE partition_id = ?1 ORDER BY seq"
        )))?;
        let rows = sq(stmt.query_map(params![partition_id], delivery))?;
        for row in rows {
            visit(sq(row)?)?;
        }
        Ok(())
    }

    fn all_deliveries(
        &mut self,
        after_seq: i64,
        visit: &mut dyn FnMut(DeliveryRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE seq > ?1 ORDER BY seq"
        )))?;
        let rows = sq(stmt.query_map(params![after_seq], delivery))?;
        for row in rows {
            visit(sq(row)?)?;
        }
        Ok(())
    }

    fn deliveries_by_seq(&mut self, seqs: &[i64]) -> LedgerResult<Vec<DeliveryRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE seq = ?1"
        )))?;
        let mut out = Vec::with_capacity(seqs.len());
        let mut sorted = seqs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for seq in sorted {
            if let Some(row) = sq(stmt.query_row(params![seq], delivery).optional())? {
                out.push(row);
            }
        }
        Ok(out)
    }

    fn subjects_page(
        &mut self,
        partition_id: i64,
        after: Option<&str>,
        limit: usize,
    ) -> LedgerResult<Vec<SubjectRow>> {
        let conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let after = match after {
            None => Vec::new(),
            Some(text) => subject_blob_of(text)?.to_vec(),
        };
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {SUBJECT_COLUMNS} FROM subjects WHERE partition_id = ?1 AND subject_id > ?2 \
             ORDER BY subject_id LIMIT ?3"
        )))?;
        let rows = sq(stmt.query_map(params![partition_id, after, limit], subject))?;
        rows.map(sq).collect()
    }

    fn subjects_with_digest(
        &mut self,
        partition_id: i64,
        digest: &str,
    ) -> LedgerResult<Vec<SubjectRow>> {
        let conn = self.conn()?;
        // CROSS JOIN keeps the digest index as the outer loop: without statistics the
        // planner otherwise walks every subject of the partition for each look-up.
        let mut stmt = sq(conn.prepare_cached(&format!(
            "SELECT {SUBJECT_COLUMNS_S} FROM subject_digests g CROSS JOIN subjects s \
             ON s.partition_id = g.partition_id AND s.subject_id = g.subject_id \
             WHERE g.partition_id = ?1 AND g.memory_ref_digest = ?2 ORDER BY s.subject_id"
        )))?;
        let rows = sq(stmt.query_map(params![partition_id, digest], subject))?;
        rows.map(sq).collect()
    }

    fn scan_latest(&mut self, partition_id: i64) -> LedgerResult<Option<String>> {
        let conn = self.conn()?;
        let blob: Option<Vec<u8>> = sq(conn.query_row(
            "SELECT max(last_key) FROM subjects WHERE partition_id = ?1",
            params![partition_id],
            |r| r.get(0),
        ))?;
        match blob {
            None => Ok(None),
            Some(b) => key_text(&b)
                .map(Some)
                .ok_or_else(|| LedgerError::Storage("a subject's order key is damaged".into())),
        }
    }

    fn conflicts(&mut self, partition_id: i64, limit: usize) -> LedgerResult<Vec<ConflictRow>> {
        let conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut stmt = sq(conn.prepare_cached(
            "SELECT observation_id, delivery_count, version_count FROM observations \
             WHERE partition_id = ?1 AND version_count > 1 ORDER BY observation_id LIMIT ?2",
        ))?;
        let heads: Vec<(Vec<u8>, i64, i64)> = sq(stmt
            .query_map(params![partition_id, limit], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>())?;
        let mut fps = sq(conn.prepare_cached(
            "SELECT fingerprint FROM conflict_versions WHERE observation_id = ?1 \
             ORDER BY fingerprint LIMIT 17",
        ))?;
        let mut out = Vec::with_capacity(heads.len());
        for (id, delivery_count, version_count) in heads {
            let fingerprints: Vec<String> = sq(fps
                .query_map(params![id], |r| blob_column(r, 0, |b| hex_of("muof_", b)))?
                .collect::<rusqlite::Result<_>>())?;
            out.push(ConflictRow {
                observation_id: hex_of("muo_", &id)
                    .ok_or_else(|| LedgerError::Storage("an observation id is damaged".into()))?,
                delivery_count,
                fingerprints,
                version_count,
            });
        }
        Ok(out)
    }

    fn verify_observations(
        &mut self,
        visit: &mut dyn FnMut(Vec<DeliveryRow>, Option<ObservationRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        // Conflicting ids are few; their fingerprints fit in memory.
        let mut versions: std::collections::BTreeMap<String, Vec<String>> =
            std::collections::BTreeMap::new();
        {
            let mut stmt = sq(conn.prepare(
                "SELECT observation_id, fingerprint FROM conflict_versions \
                 ORDER BY observation_id, fingerprint",
            ))?;
            let rows = sq(stmt.query_map([], |r| {
                Ok((
                    blob_column(r, 0, |b| hex_of("muo_", b))?,
                    blob_column(r, 1, |b| hex_of("muof_", b))?,
                ))
            }))?;
            for row in rows {
                let (id, fp) = sq(row)?;
                versions.entry(id).or_default().push(fp);
            }
        }
        let mut left_stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries ORDER BY observation_id, seq"
        )))?;
        let left = sq(left_stmt.query_map([], delivery))?.map(sq);
        let mut right_stmt = sq(conn.prepare(&format!(
            "SELECT {OBSERVATION_COLUMNS} FROM observations ORDER BY observation_id"
        )))?;
        let right = sq(right_stmt.query_map([], |r| observation(r, 0)))?
            .map(sq)
            .map(|row| {
                row.map(|mut row| {
                    row.fingerprints = versions.remove(&row.observation_id).unwrap_or_default();
                    row
                })
            });
        merge_observations(left, right, visit)
    }

    fn verify_subjects(
        &mut self,
        visit: &mut dyn FnMut(SubjectKey, Vec<DeliveryRow>, Option<SubjectRow>) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        let conn = self.conn()?;
        let mut left_stmt = sq(conn.prepare(&format!(
            "SELECT {DELIVERY_COLUMNS_D}, o.subject_id FROM observations o JOIN deliveries d \
             ON d.seq = o.rep_seq WHERE o.version_count = 1 \
             ORDER BY o.partition_id, o.subject_id, o.observation_id"
        )))?;
        let left = sq(left_stmt.query_map([], |r| {
            let d = delivery(r)?;
            let sid = blob_column(r, 16, subject_text)?;
            Ok((sid, d))
        }))?
        .map(sq);
        let mut right_stmt = sq(conn.prepare(&format!(
            "SELECT {SUBJECT_COLUMNS} FROM subjects ORDER BY partition_id, subject_id"
        )))?;
        let right = sq(right_stmt.query_map([], subject))?.map(sq);
        merge_subjects(left, right, visit)
    }

    fn all_subject_digests(&mut self) -> LedgerResult<Vec<(i64, String, String)>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(
            "SELECT partition_id, subject_id, memory_ref_digest FROM subject_digests \
             ORDER BY partition_id, subject_id, memory_ref_digest",
        ))?;
        let rows = sq(stmt.query_map([], |r| {
            Ok((r.get(0)?, blob_column(r, 1, subject_text)?, r.get(2)?))
        }))?;
        rows.map(sq).collect()
    }

    fn batches(&mut self) -> LedgerResult<Vec<BatchRow>> {
        let conn = self.conn()?;
        let mut stmt = sq(conn.prepare(&format!(
            "SELECT {BATCH_COLUMNS} FROM batches ORDER BY batch_id"
        )))?;
        let rows = sq(stmt.query_map([], |r| BatchRow::from_columns(|i| r.get(i))))?;
        rows.map(sq).collect()
    }

    fn ledger_id(&mut self) -> LedgerResult<Option<String>> {
        verdicts::ledger_id(self.conn()?)
    }

    fn record_verdict(&mut self, row: &VerdictRow) -> LedgerResult<(i64, bool)> {
        verdicts::record_verdict(self.conn()?, row)
    }

    fn newest_verdict(
        &mut self,
        profile_digest: &str,
        partition: &str,
    ) -> LedgerResult<Option<String>> {
        verdicts::newest_verdict(self.conn()?, profile_digest, partition)
    }

    // The traffic log: `traffic.rs`.

    fn begin_traffic_write(&mut self, wait: Duration) -> LedgerResult<()> {
        self.begin_write_within(wait, true)
    }

    fn record_traffic(&mut self, events: &[TrafficAppend]) -> LedgerResult<Vec<i64>> {
        traffic::record(self.conn()?, events)
    }

    fn traffic_high_water(&mut self) -> LedgerResult<i64> {
        traffic::high_water(self.conn()?)
    }

    fn traffic_partitions(&mut self) -> LedgerResult<Vec<PartitionKey>> {
        traffic::partitions(self.conn()?)
    }

    fn traffic_events(
        &mut self,
        partitions: &[PartitionKey],
        visit: &mut dyn FnMut(TrafficRow) -> LedgerResult<()>,
    ) -> LedgerResult<()> {
        traffic::events(self.conn()?, partitions, visit)
    }
}

impl SqliteLedger {
    /// [`LedgerBackend::begin_write`], waiting at most `wait` for the write lock. A
    /// `traffic` write (one small event per recall) is not synced (`synchronous=NORMAL`)
    /// and leaves the write-ahead log beside the ledger when its connection closes
    /// (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`): the next delivery append (synced, and
    /// checkpointed on close) folds it into the file, or the traffic write that finds it
    /// long ([`traffic::fold_long_wal`]). Each recall is spared the syncs (of the `-wal`, its directory and,
    /// at the checkpoint, the file) and the creation and removal of the `-wal` and `-shm`
    /// files: on a busy disk those cost milliseconds, the event's own work a fraction of
    /// one. The price: an operating-system crash or power loss can lose the log's events
    /// since the last sync (a suffix: the log stays a prefix of what was appended), never
    /// a delivery and never the ledger's consistency; a crash of the process loses
    /// nothing committed.
    pub(super) fn begin_write_within(&mut self, wait: Duration, traffic: bool) -> LedgerResult<()> {
        let created = self.prepare_file()?;
        self.open_for_write()?;
        // Check what the file holds before anything is written to it: a damaged file,
        // a foreign database or a newer ledger stays byte for byte as it was.
        if created {
            self.verified = true;
        }
        self.check_before_write()?;
        self.traffic_write = traffic;
        let conn = self.conn()?;
        // SQLite's own busy handler waits at most `wait` per attempt; the retries below
        // stop at `wait` too.
        sq(conn.busy_timeout(wait))?;
        Self::check_schema(conn)?;
        // A file created by this write holds nothing yet: its first transaction runs under
        // a rollback journal, which journals only the pages the file had (none), where the
        // write-ahead log would take every page twice (into the log, then into the file at
        // the checkpoint). Atomic all the same: a crash leaves the journal, and the next
        // connection rolls the file back to empty. The commit switches it to the log.
        // Takes effect only on a file that holds no page yet (a new one, or one a killed
        // first write left empty); any other keeps the page size it has.
        if !traffic {
            sq(conn.pragma_update(None, "page_size", LEDGER_PAGE_SIZE))?;
        }
        let wanted = if created { "delete" } else { "wal" };
        let mode: String = retry_busy_within(wait, || {
            conn.pragma_update_and_check(None, "journal_mode", wanted, |r| r.get(0))
        })?;
        if !mode.eq_ignore_ascii_case(wanted) {
            return Err(LedgerError::Storage(format!(
                "the ledger file cannot use write-ahead logging (journal mode {mode})"
            )));
        }
        self.first_write = created;
        let conn = self.conn()?;
        let synchronous = if traffic { "NORMAL" } else { "FULL" };
        sq(conn.pragma_update(None, "synchronous", synchronous))?;
        // A traffic write folds the log in itself ([`traffic::fold_long_wal`]): SQLite's
        // automatic checkpoint would leave the log's frames in place, and every later
        // process, which rebuilds the log's index as unfolded, would copy them again.
        sq(conn.pragma_update(None, "wal_autocheckpoint", if traffic { 0 } else { 1000 }))?;
        sq(conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, traffic))?;
        retry_busy_within(wait, || conn.execute_batch("BEGIN IMMEDIATE"))?;
        let ready = match Self::check_schema(conn) {
            Ok(ready) => ready,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        };
        if !ready {
            let init = conn.execute_batch(SCHEMA).and_then(|()| {
                conn.execute(
                    "INSERT INTO ledger_meta (key, value) VALUES ('ledger_schema_version', ?1), \
                     ('ledger_format', ?2)",
                    params![LEDGER_SCHEMA_VERSION.to_string(), LEDGER_FORMAT],
                )
            });
            if let Err(e) = init {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(map_error(&e));
            }
        }
        // Every write transaction gives a ledger without an identity its identity.
        let identity = fresh_ledger_id().and_then(|id| verdicts::ensure_ledger_id(conn, &id));
        if let Err(e) = identity {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
        self.index_pending = !ready;
        Ok(())
    }
}
