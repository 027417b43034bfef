//! The PostgreSQL statements of the ledger's identity and of recorded verdicts: the
//! `ledger_id` row of `utility_ledger_meta`, and the `utility_ledger_evaluation_verdicts`
//! tables created by the first recorded verdict.

use super::super::error::LedgerResult;
use super::super::rows::VerdictRow;
use super::PgLedger;

/// The verdict tables, created inside the write transaction of the first verdict.
const VERDICT_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS utility_ledger_evaluation_verdicts (
    record_seq BIGINT PRIMARY KEY,
    verdict_digest TEXT COLLATE "C" NOT NULL UNIQUE,
    profile_digest TEXT COLLATE "C" NOT NULL,
    verdict TEXT COLLATE "C" NOT NULL,
    source_kind TEXT COLLATE "C" NOT NULL,
    packet TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS utility_ledger_evaluation_verdict_partitions (
    partition_identity TEXT COLLATE "C" NOT NULL,
    record_seq BIGINT NOT NULL,
    PRIMARY KEY (partition_identity, record_seq)
);
"#;

impl PgLedger {
    /// Gives the ledger `fresh` as its identity unless it has one (inside a write).
    pub(super) fn ensure_ledger_id(&mut self, fresh: &str) -> LedgerResult<()> {
        self.query(
            "INSERT INTO utility_ledger_meta (key, value) VALUES ('ledger_id', $1) \
             ON CONFLICT (key) DO NOTHING",
            &[&fresh],
        )
        .map(|_| ())
    }

    pub(super) fn read_ledger_id(&mut self) -> LedgerResult<Option<String>> {
        let rows = self.query(
            "SELECT value FROM utility_ledger_meta WHERE key = 'ledger_id'",
            &[],
        )?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn has_verdicts(&mut self) -> LedgerResult<bool> {
        let rows = self.query(
            "SELECT to_regclass('utility_ledger_evaluation_verdicts')::text",
            &[],
        )?;
        Ok(rows
            .first()
            .and_then(|r| r.get::<_, Option<String>>(0))
            .is_some())
    }

    pub(super) fn insert_verdict(&mut self, row: &VerdictRow) -> LedgerResult<(i64, bool)> {
        self.exec(VERDICT_SCHEMA)?;
        let existing = self.query(
            "SELECT record_seq FROM utility_ledger_evaluation_verdicts WHERE verdict_digest = $1",
            &[&row.verdict_digest],
        )?;
        if let Some(r) = existing.first() {
            return Ok((r.get(0), false));
        }
        let next = self.query(
            "SELECT coalesce(max(record_seq), 0) + 1 FROM utility_ledger_evaluation_verdicts",
            &[],
        )?;
        let seq: i64 = next.first().map_or(1, |r| r.get(0));
        self.query(
            "INSERT INTO utility_ledger_evaluation_verdicts \
             (record_seq, verdict_digest, profile_digest, verdict, source_kind, packet) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &seq,
                &row.verdict_digest,
                &row.profile_digest,
                &row.verdict,
                &row.source_kind,
                &row.packet,
            ],
        )?;
        self.query(
            "INSERT INTO utility_ledger_evaluation_verdict_partitions \
             (partition_identity, record_seq) SELECT p, $2 FROM unnest($1::text[]) AS p \
             ON CONFLICT DO NOTHING",
            &[&row.partitions, &seq],
        )?;
        Ok((seq, true))
    }

    pub(super) fn select_newest_verdict(
        &mut self,
        profile_digest: &str,
        partition: &str,
    ) -> LedgerResult<Option<String>> {
        if !self.has_verdicts()? {
            return Ok(None);
        }
        let rows = self.query(
            "SELECT v.packet FROM utility_ledger_evaluation_verdict_partitions p \
             JOIN utility_ledger_evaluation_verdicts v ON v.record_seq = p.record_seq \
             WHERE p.partition_identity = $1 AND v.profile_digest = $2 \
             ORDER BY p.record_seq DESC LIMIT 1",
            &[&partition, &profile_digest],
        )?;
        Ok(rows.first().map(|r| r.get(0)))
    }
}
