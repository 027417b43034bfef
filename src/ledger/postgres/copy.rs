//! The append's bulk writes on PostgreSQL: rows that have no stored row yet (deliveries,
//! new observation aggregates, new subjects and their digest rows) travel with one binary
//! `COPY` per table and round.

use super::super::error::LedgerResult;
use super::super::rows::{DELIVERY_COLUMNS, DeliveryRow, ObservationRow, SubjectRow, format_seqs};
use super::{PgLedger, map_error};

impl PgLedger {
    /// Rows of one table with one `COPY ... FROM STDIN (FORMAT binary)`: `columns` of
    /// `types`, each row's values from `row`. What an `INSERT` of the same values stores,
    /// without a statement to plan, the values travelling as arrays first, or a check
    /// for a conflicting row (the append looked the keys up and found none).
    fn copy_rows<T>(
        &mut self,
        table: &str,
        columns: &str,
        types: &[postgres::types::Type],
        rows: &[T],
        row: impl Fn(
            &T,
            &mut dyn FnMut(&[&(dyn postgres::types::ToSql + Sync)]) -> Result<(), postgres::Error>,
        ) -> Result<(), postgres::Error>,
    ) -> LedgerResult<()> {
        use postgres::binary_copy::BinaryCopyInWriter;
        let secret = self.secret.as_deref();
        let fail = |e: postgres::Error| map_error(&e, secret);
        let sink = self
            .client
            .copy_in(&format!(
                "COPY {table} ({columns}) FROM STDIN (FORMAT binary)"
            ))
            .map_err(fail)?;
        let mut writer = BinaryCopyInWriter::new(sink, types);
        for r in rows {
            row(r, &mut |values| writer.write(values)).map_err(fail)?;
        }
        writer.finish().map_err(fail)?;
        Ok(())
    }

    /// Stores observation aggregates that have no stored row ([`Self::copy_rows`]).
    pub(super) fn copy_observations(&mut self, rows: &[ObservationRow]) -> LedgerResult<()> {
        use postgres::types::Type;
        const TYPES: [Type; 11] = [
            Type::TEXT,
            Type::INT8,
            Type::TEXT,
            Type::INT8,
            Type::INT8,
            Type::TEXT,
            Type::INT8,
            Type::TEXT,
            Type::INT2,
            Type::INT2,
            Type::FLOAT8,
        ];
        self.copy_rows(
            "utility_ledger_observations",
            "observation_id, partition_id, subject_id, version_count, delivery_count, \
             fingerprint, rep_seq, rep_order, utility_label, evidence_basis, confidence",
            &TYPES,
            rows,
            |o, write| {
                let label = o.utility_label.index() as i16;
                let basis = o.evidence_basis.index() as i16;
                write(&[
                    &o.observation_id,
                    &o.partition_id,
                    &o.subject_id,
                    &o.version_count,
                    &o.delivery_count,
                    &o.fingerprint,
                    &o.rep_seq,
                    &o.rep_order,
                    &label,
                    &basis,
                    &o.confidence,
                ])
            },
        )
    }

    /// Stores subjects that have no stored row ([`Self::copy_rows`]).
    pub(super) fn copy_subjects(&mut self, rows: &[SubjectRow]) -> LedgerResult<()> {
        use postgres::types::Type;
        const TYPES: [Type; 8] = [
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
        ];
        self.copy_rows(
            "utility_ledger_subjects",
            "partition_id, subject_id, attribution_level, review_state, observation_count, \
             last_key, state, history_seqs",
            &TYPES,
            rows,
            |s, write| {
                let seqs = format_seqs(&s.history_seqs);
                write(&[
                    &s.partition_id,
                    &s.subject_id,
                    &s.attribution_level,
                    &s.review_state,
                    &s.observation_count,
                    &s.last_key,
                    &s.state,
                    &seqs,
                ])
            },
        )
    }

    /// Stores the digest index's rows of new subjects ([`Self::copy_rows`]).
    pub(super) fn copy_digests(&mut self, rows: &[(i64, String, String)]) -> LedgerResult<()> {
        use postgres::types::Type;
        self.copy_rows(
            "utility_ledger_subject_digests",
            "partition_id, memory_ref_digest, subject_id",
            &[Type::INT8, Type::TEXT, Type::TEXT],
            rows,
            |(pid, digest, subject), write| write(&[pid, digest, subject]),
        )
    }

    /// Appends deliveries with one `COPY ... FROM STDIN` in the binary format: the same
    /// rows an `INSERT` of the same values stores, without a statement to plan and
    /// without the values travelling as sixteen arrays first.
    pub(super) fn copy_deliveries(&mut self, deliveries: &[DeliveryRow]) -> LedgerResult<()> {
        use postgres::binary_copy::BinaryCopyInWriter;
        use postgres::types::Type;
        const TYPES: [Type; 16] = [
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::FLOAT8,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
        ];
        let secret = self.secret.as_deref();
        let fail = |e: postgres::Error| map_error(&e, secret);
        let sink = self
            .client
            .copy_in(&format!(
                "COPY utility_ledger_deliveries ({DELIVERY_COLUMNS}) FROM STDIN (FORMAT binary)"
            ))
            .map_err(fail)?;
        let mut writer = BinaryCopyInWriter::new(sink, &TYPES);
        for d in deliveries {
            writer
                .write(&[
                    &d.seq,
                    &d.batch_id,
                    &d.partition_id,
                    &d.observation_id,
                    &d.application_receipt_id,
                    &d.memory_ref_digests,
                    &d.outcome_ref,
                    &d.utility_label,
                    &d.attribution_level,
                    &d.evidence_basis,
                    &d.confidence,
                    &d.reason_codes,
                    &d.evidence_refs,
                    &d.evaluator_ref,
                    &d.evaluation_version,
                    &d.created_at,
                ])
                .map_err(fail)?;
        }
        writer.finish().map_err(fail)?;
        Ok(())
    }
}
