//! The PostgreSQL ledger's schema (tables prefixed `utility_ledger_`, text in the `C`
//! collation), the column lists its statements share and the decoders of its rows.

use postgres::Row;

use super::super::rows::{DeliveryRow, ObservationRow, PartitionRow, SubjectRow, parse_seqs};
use crate::utility::observation::{EvidenceBasis, UtilityLabel};

/// The batch-provenance table, created by the first batch that did not arrive by import
/// (inside its write transaction): a ledger of imports only keeps its earlier layout.
pub(super) const PROVENANCE_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS utility_ledger_batch_provenance (
    batch_id BIGINT PRIMARY KEY,
    kind TEXT COLLATE "C" NOT NULL,
    reference TEXT COLLATE "C" NOT NULL
);
"#;

/// The ledger's tables and indexes, created by its first write transaction. Every append
/// rewrites the row of each partition it touched, while the appenders that wait for the
/// lock still see the older versions: the partitions' pages are filled to 10% (about two
/// rows to a page), so that the new versions fit beside the old ones and the indexes take
/// no new entries (8 appenders x 25,000 deliveries over 400 partitions:
/// 80 ms of updates instead of 380 ms, a 1 MB table instead of 5 MB).
pub(super) const SCHEMA: &str = r#"
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
) WITH (fillfactor = 10);
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

pub(super) const SUBJECT_COLUMNS: &str = "s.partition_id, s.subject_id, s.attribution_level, \
    s.review_state, s.observation_count, s.last_key, s.state, s.history_seqs";

pub(super) const OBSERVATION_COLUMNS: &str = "o.observation_id, o.partition_id, o.subject_id, \
    o.version_count, o.delivery_count, o.fingerprint, o.rep_seq, o.rep_order, \
    CASE WHEN o.version_count > 1 THEN (SELECT array_agg(v.fingerprint ORDER BY v.fingerprint) \
     FROM utility_ledger_conflict_versions v WHERE v.observation_id = o.observation_id) END, \
    o.utility_label, o.evidence_basis, o.confidence";

pub(super) fn delivery(row: &Row, base: usize) -> Result<DeliveryRow, postgres::Error> {
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

pub(super) fn subject(row: &Row, base: usize) -> Result<SubjectRow, postgres::Error> {
    let seqs: String = row.try_get(base + 7)?;
    Ok(SubjectRow {
        partition_id: row.try_get(base)?,
        subject_id: row.try_get(base + 1)?,
        attribution_level: row.try_get(base + 2)?,
        review_state: row.try_get(base + 3)?,
        observation_count: row.try_get(base + 4)?,
        last_key: row.try_get(base + 5)?,
        state: row.try_get(base + 6)?,
        history_seqs: parse_seqs(&seqs),
    })
}

pub(super) fn observation(row: &Row) -> Result<ObservationRow, postgres::Error> {
    observation_at(row, 0)
}

/// An aggregate in [`OBSERVATION_COLUMNS`] order from column `b`.
pub(super) fn observation_at(row: &Row, b: usize) -> Result<ObservationRow, postgres::Error> {
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

pub(super) fn partition(row: &Row) -> Result<PartitionRow, postgres::Error> {
    partition_at(row, 0)
}

/// A partition in [`super::super::PARTITION_COLUMNS`] order from column `b`.
pub(super) fn partition_at(row: &Row, b: usize) -> Result<PartitionRow, postgres::Error> {
    PartitionRow::from_columns(|i| row.try_get(b + i), |i| row.try_get(b + i))
}
