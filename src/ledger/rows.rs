//! The rows both backends store and read: partition keys and counters, deliveries,
//! observation aggregates, subjects, batches and conflicts, the order-key texts that
//! make text order equal the reducer's order, the column lists of the rows both
//! backends' tables share, and the storage schema version.
//!
//! Backend-neutral: each backend encodes these rows in its own columns ([`super::sqlite`],
//! [`super::postgres`]); what a row means, and how a delivery row turns back into the
//! observation it stores, is decided here once.

use crate::utility::observation::{
    AttributionLevel, EvidenceBasis, Observation, Scope, UtilityLabel,
};
use crate::utility::reducer::ReducerContext;
use crate::wire::decimal::Digits;
use crate::wire::json::Text;
use crate::wire::timestamp::{self, Instant};

/// The storage schema version this binary reads and writes. Version 1 (text ids, a
/// subject index beside the observations) is refused with
/// [`super::LedgerError::OlderSchema`].
pub const LEDGER_SCHEMA_VERSION: i64 = 2;

/// Most history entries kept per subject in ledger packets.
pub const HISTORY_PER_SUBJECT: usize = 16;

/// The partition of an observation: its scope and its two snapshot refs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey {
    pub agent_id: String,
    pub project_id: String,
    pub corpus_id: String,
    pub surface_id: String,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

impl PartitionKey {
    /// The partition an observation belongs to.
    pub fn of(observation: &Observation) -> PartitionKey {
        PartitionKey {
            agent_id: observation.scope.agent_id.to_string(),
            project_id: observation.scope.project_id.to_string(),
            corpus_id: observation.scope.corpus_id.to_string(),
            surface_id: observation.scope.surface_id.to_string(),
            retrieval_snapshot_ref: observation.retrieval_snapshot_ref.to_string(),
            policy_snapshot_ref: observation.policy_snapshot_ref.to_string(),
        }
    }

    /// The partition a validated reducer context names.
    pub fn of_context(context: &ReducerContext) -> PartitionKey {
        PartitionKey {
            agent_id: context.scope.agent_id.to_string(),
            project_id: context.scope.project_id.to_string(),
            corpus_id: context.scope.corpus_id.to_string(),
            surface_id: context.scope.surface_id.to_string(),
            retrieval_snapshot_ref: context.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: context.policy_snapshot_ref.clone(),
        }
    }

    /// True when `observation` belongs to this partition.
    pub fn holds(&self, observation: &Observation) -> bool {
        self.agent_id == observation.scope.agent_id
            && self.project_id == observation.scope.project_id
            && self.corpus_id == observation.scope.corpus_id
            && self.surface_id == observation.scope.surface_id
            && self.retrieval_snapshot_ref == observation.retrieval_snapshot_ref
            && self.policy_snapshot_ref == observation.policy_snapshot_ref
    }

    /// A hash of an observation's partition fields (the same for every observation of
    /// one partition), for look-ups that do not build the key.
    pub fn hash_of(observation: &Observation) -> u64 {
        Self::hash_fields([
            &observation.scope.agent_id,
            &observation.scope.project_id,
            &observation.scope.corpus_id,
            &observation.scope.surface_id,
            &observation.retrieval_snapshot_ref,
            &observation.policy_snapshot_ref,
        ])
    }

    /// [`PartitionKey::hash_of`] of the key's own observations.
    pub fn hash_of_key(&self) -> u64 {
        Self::hash_fields(self.fields())
    }

    /// The six fields in column order (`agent_id`, `project_id`, `corpus_id`,
    /// `surface_id`, `retrieval_snapshot_ref`, `policy_snapshot_ref`): the parameters of a
    /// look-up by key in either backend.
    pub fn fields(&self) -> [&str; 6] {
        [
            &self.agent_id,
            &self.project_id,
            &self.corpus_id,
            &self.surface_id,
            &self.retrieval_snapshot_ref,
            &self.policy_snapshot_ref,
        ]
    }

    fn hash_fields(fields: [&str; 6]) -> u64 {
        use std::hash::{Hash as _, Hasher as _};
        let mut h = std::hash::DefaultHasher::new();
        for f in fields {
            f.hash(&mut h);
        }
        h.finish()
    }

    /// The scope part.
    pub fn scope(&self) -> Scope {
        Scope {
            agent_id: self.agent_id.as_str().into(),
            project_id: self.project_id.as_str().into(),
            corpus_id: self.corpus_id.as_str().into(),
            surface_id: self.surface_id.as_str().into(),
        }
    }
}

/// What one append changes of a partition: deltas to its counters, and its latest
/// order key when that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionUpdate {
    pub partition_id: i64,
    pub deltas: Counters,
    pub latest: Option<String>,
}

/// Exact counters of one partition (also used as signed deltas).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub deliveries: i64,
    pub accepted: i64,
    pub duplicate: i64,
    pub conflicting: i64,
    pub rejected: i64,
    pub subjects: i64,
    pub item_subjects: i64,
    pub set_subjects: i64,
    pub none_subjects: i64,
    pub conflict_subjects: i64,
}

impl Counters {
    /// Adds `delta` field by field.
    pub fn add(&mut self, delta: &Counters) {
        self.deliveries += delta.deliveries;
        self.accepted += delta.accepted;
        self.duplicate += delta.duplicate;
        self.conflicting += delta.conflicting;
        self.rejected += delta.rejected;
        self.subjects += delta.subjects;
        self.item_subjects += delta.item_subjects;
        self.set_subjects += delta.set_subjects;
        self.none_subjects += delta.none_subjects;
        self.conflict_subjects += delta.conflict_subjects;
    }

    /// The counters as an array, in column order.
    pub fn to_array(&self) -> [i64; 10] {
        [
            self.deliveries,
            self.accepted,
            self.duplicate,
            self.conflicting,
            self.rejected,
            self.subjects,
            self.item_subjects,
            self.set_subjects,
            self.none_subjects,
            self.conflict_subjects,
        ]
    }

    /// Counters from an array in column order.
    pub fn from_array(a: [i64; 10]) -> Counters {
        Counters {
            deliveries: a[0],
            accepted: a[1],
            duplicate: a[2],
            conflicting: a[3],
            rejected: a[4],
            subjects: a[5],
            item_subjects: a[6],
            set_subjects: a[7],
            none_subjects: a[8],
            conflict_subjects: a[9],
        }
    }

    /// True when every counter is zero.
    pub fn is_zero(&self) -> bool {
        self.to_array().iter().all(|v| *v == 0)
    }
}

/// The columns of a [`DeliveryRow`] in field order, as both backends' delivery tables
/// name them.
pub const DELIVERY_COLUMNS: &str = "seq, batch_id, partition_id, observation_id, \
    application_receipt_id, memory_ref_digests, outcome_ref, utility_label, \
    attribution_level, evidence_basis, confidence, reason_codes, evidence_refs, \
    evaluator_ref, evaluation_version, created_at";

/// [`DELIVERY_COLUMNS`] of the table alias `d`.
pub const DELIVERY_COLUMNS_D: &str = "d.seq, d.batch_id, d.partition_id, d.observation_id, \
    d.application_receipt_id, d.memory_ref_digests, d.outcome_ref, d.utility_label, \
    d.attribution_level, d.evidence_basis, d.confidence, d.reason_codes, d.evidence_refs, \
    d.evaluator_ref, d.evaluation_version, d.created_at";

/// The columns of a partition in [`PartitionRow::from_columns`] order: id, key, the
/// [`COUNTER_COLUMNS`], latest key.
pub const PARTITION_COLUMNS: &str = "partition_id, agent_id, project_id, corpus_id, surface_id, \
    retrieval_snapshot_ref, policy_snapshot_ref, delivery_count, accepted_count, \
    duplicate_count, conflicting_count, rejected_count, subject_count, item_subject_count, \
    set_subject_count, none_subject_count, conflict_subject_count, latest_key";

/// The columns of a [`BatchRow`] in field order.
pub const BATCH_COLUMNS: &str =
    "batch_id, first_seq, last_seq, received, appended, duplicate, conflicting, refused";

/// Column names of [`Counters`], in order.
pub const COUNTER_COLUMNS: [&str; 10] = [
    "delivery_count",
    "accepted_count",
    "duplicate_count",
    "conflicting_count",
    "rejected_count",
    "subject_count",
    "item_subject_count",
    "set_subject_count",
    "none_subject_count",
    "conflict_subject_count",
];

/// One stored partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRow {
    pub partition_id: i64,
    pub key: PartitionKey,
    pub counters: Counters,
    /// [`order_key_text`] of the partition's latest accepted observation (empty when none).
    pub latest_key: String,
}

impl PartitionRow {
    /// A partition from its columns in [`PARTITION_COLUMNS`] order, read by `int` and
    /// `text` (column index from 0), as both backends store it.
    pub fn from_columns<E>(
        int: impl Fn(usize) -> Result<i64, E>,
        text: impl Fn(usize) -> Result<String, E>,
    ) -> Result<PartitionRow, E> {
        let mut counters = [0i64; 10];
        for (i, c) in counters.iter_mut().enumerate() {
            *c = int(7 + i)?;
        }
        Ok(PartitionRow {
            partition_id: int(0)?,
            key: PartitionKey {
                agent_id: text(1)?,
                project_id: text(2)?,
                corpus_id: text(3)?,
                surface_id: text(4)?,
                retrieval_snapshot_ref: text(5)?,
                policy_snapshot_ref: text(6)?,
            },
            counters: Counters::from_array(counters),
            latest_key: text(17)?,
        })
    }
}

/// One stored delivery: a normalized observation without its partition fields.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRow {
    pub seq: i64,
    pub batch_id: i64,
    pub partition_id: i64,
    pub observation_id: String,
    pub application_receipt_id: String,
    /// Sorted digests joined by `,` (no digest contains one).
    pub memory_ref_digests: String,
    pub outcome_ref: String,
    pub utility_label: String,
    pub attribution_level: String,
    pub evidence_basis: String,
    pub confidence: f64,
    /// Sorted codes joined by `,` (opaque refs never contain one).
    pub reason_codes: String,
    /// Sorted refs joined by `,`.
    pub evidence_refs: String,
    pub evaluator_ref: String,
    pub evaluation_version: String,
    pub created_at: String,
}

fn join(items: &[String]) -> String {
    items.join(",")
}

fn split(text: &str) -> Vec<String> {
    if text.is_empty() {
        Vec::new()
    } else {
        text.split(',').map(str::to_owned).collect()
    }
}

impl DeliveryRow {
    /// The row of a validated observation, taking its strings (what is left of the
    /// observation is for the caller to drop, possibly on another thread).
    pub fn take_from(
        observation: &mut Observation,
        seq: i64,
        batch_id: i64,
        partition_id: i64,
    ) -> DeliveryRow {
        let take = |text: &mut Text| std::mem::take(text).into_string();
        DeliveryRow {
            seq,
            batch_id,
            partition_id,
            observation_id: take(&mut observation.observation_id),
            application_receipt_id: take(&mut observation.application_receipt_id),
            memory_ref_digests: join(&observation.memory_ref_digests),
            outcome_ref: take(&mut observation.outcome_ref),
            utility_label: observation.utility_label.as_str().to_owned(),
            attribution_level: observation.attribution_level.as_str().to_owned(),
            evidence_basis: observation.evidence_basis.as_str().to_owned(),
            confidence: observation.confidence,
            reason_codes: join(&observation.reason_codes),
            evidence_refs: join(&observation.evidence_refs),
            evaluator_ref: take(&mut observation.evaluator_ref),
            evaluation_version: take(&mut observation.evaluation_version),
            created_at: take(&mut observation.created_at),
        }
    }

    /// The observation this row stores, in its partition. `None` when a stored value is
    /// not one the validator could have produced (a damaged row).
    pub fn observation(&self, key: &PartitionKey) -> Option<Observation> {
        Some(Observation {
            observation_id: self.observation_id.as_str().into(),
            scope: key.scope(),
            application_receipt_id: self.application_receipt_id.as_str().into(),
            memory_ref_digests: split(&self.memory_ref_digests),
            retrieval_snapshot_ref: key.retrieval_snapshot_ref.as_str().into(),
            policy_snapshot_ref: key.policy_snapshot_ref.as_str().into(),
            outcome_ref: self.outcome_ref.as_str().into(),
            utility_label: UtilityLabel::parse(&self.utility_label)?,
            attribution_level: AttributionLevel::parse(&self.attribution_level)?,
            evidence_basis: EvidenceBasis::parse(&self.evidence_basis)?,
            confidence: self.confidence,
            reason_codes: split(&self.reason_codes),
            evidence_refs: split(&self.evidence_refs),
            evaluator_ref: self.evaluator_ref.as_str().into(),
            evaluation_version: self.evaluation_version.as_str().into(),
            created_at: self.created_at.as_str().into(),
            created_instant: timestamp::parse_aware(&self.created_at).ok()?,
        })
    }
}

/// The aggregate of one `observation_id`, with the reducer's inputs of its
/// representative delivery (so that a subject is recomputed from these rows alone).
#[derive(Debug, Clone, PartialEq)]
pub struct ObservationRow {
    pub observation_id: String,
    pub partition_id: i64,
    pub subject_id: String,
    /// Distinct fingerprints delivered (1 = accepted, ≥ 2 = conflicting).
    pub version_count: i64,
    pub delivery_count: i64,
    /// The fingerprint of the first delivery.
    pub fingerprint: String,
    /// The delivery with the smallest order key among the first fingerprint's.
    pub rep_seq: i64,
    /// [`order_prefix`] of the representative delivery.
    pub rep_order: String,
    /// Every fingerprint, sorted, when `version_count` ≥ 2 (else empty).
    pub fingerprints: Vec<String>,
    /// The first fingerprint's label (the same in every delivery of that fingerprint).
    pub utility_label: UtilityLabel,
    /// The first fingerprint's evidence basis.
    pub evidence_basis: EvidenceBasis,
    /// The first fingerprint's confidence.
    pub confidence: f64,
}

impl ObservationRow {
    /// What the v1 rules read of this observation; `None` when `rep_order` is damaged.
    pub fn v1_input(&self) -> Option<crate::utility::reducer::V1Input> {
        let (micros, _) = self.rep_order.split_once('\u{1}')?;
        Some(crate::utility::reducer::V1Input {
            utility_label: self.utility_label,
            evidence_basis: self.evidence_basis,
            confidence: self.confidence,
            created_micros: micros.parse().ok()?,
        })
    }

    /// What the reducer reads of this observation: its id, label, basis, confidence and
    /// the representative's `created_at` (from [`ObservationRow::rep_order`]); the other
    /// fields are left empty. `None` when `rep_order` is damaged.
    pub fn reducer_input(&self, level: AttributionLevel) -> Option<Observation> {
        let (micros, created_at) = self.rep_order.split_once('\u{1}')?;
        Some(Observation {
            observation_id: self.observation_id.as_str().into(),
            scope: Scope {
                agent_id: Text::default(),
                project_id: Text::default(),
                corpus_id: Text::default(),
                surface_id: Text::default(),
            },
            application_receipt_id: Text::default(),
            memory_ref_digests: Vec::new(),
            retrieval_snapshot_ref: Text::default(),
            policy_snapshot_ref: Text::default(),
            outcome_ref: Text::default(),
            utility_label: self.utility_label,
            attribution_level: level,
            evidence_basis: self.evidence_basis,
            confidence: self.confidence,
            reason_codes: Vec::new(),
            evidence_refs: Vec::new(),
            evaluator_ref: Text::default(),
            evaluation_version: Text::default(),
            created_at: Text::from(created_at),
            created_instant: Instant {
                micros: micros.parse().ok()?,
            },
        })
    }
}

/// (partition id, subject id, observation id): where an observation's aggregate lives.
pub type ObservationKey = (i64, String, String);

/// One reduced subject as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectRow {
    pub partition_id: i64,
    pub subject_id: String,
    pub attribution_level: String,
    pub review_state: String,
    pub observation_count: i64,
    /// [`order_key_text`] of the subject's latest observation.
    pub last_key: String,
    /// The reduced state in the compact text of [`super::engine::encode_state`].
    pub state: String,
    /// Sequences of the latest [`HISTORY_PER_SUBJECT`] accepted deliveries, oldest first.
    pub history_seqs: Vec<i64>,
}

/// One committed append.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchRow {
    pub batch_id: i64,
    pub first_seq: i64,
    pub last_seq: i64,
    pub received: i64,
    pub appended: i64,
    pub duplicate: i64,
    pub conflicting: i64,
    pub refused: i64,
}

impl BatchRow {
    /// The row's values in [`BATCH_COLUMNS`] order.
    pub fn to_columns(&self) -> [i64; 8] {
        [
            self.batch_id,
            self.first_seq,
            self.last_seq,
            self.received,
            self.appended,
            self.duplicate,
            self.conflicting,
            self.refused,
        ]
    }

    /// A batch from its columns in [`BATCH_COLUMNS`] order, read by `int` (column index
    /// from 0).
    pub fn from_columns<E>(int: impl Fn(usize) -> Result<i64, E>) -> Result<BatchRow, E> {
        Ok(BatchRow {
            batch_id: int(0)?,
            first_seq: int(1)?,
            last_seq: int(2)?,
            received: int(3)?,
            appended: int(4)?,
            duplicate: int(5)?,
            conflicting: int(6)?,
            refused: int(7)?,
        })
    }
}

/// A conflicting observation id of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictRow {
    pub observation_id: String,
    pub delivery_count: i64,
    /// Sorted; at most 17 (enough to tell whether more than 16 exist).
    pub fingerprints: Vec<String>,
    pub version_count: i64,
}

/// (partition id, subject id).
pub type SubjectKey = (i64, String);

/// A sortable text of the order key's first two parts: the UTC instant (fixed width)
/// then the raw `created_at`, separated by `\x01` (below every timestamp character), so
/// that text order equals the reducer's order.
pub fn order_prefix(instant: Instant, created_at: &str) -> String {
    let mut out = String::with_capacity(21 + created_at.len());
    push_order_prefix(&mut out, instant, created_at);
    out
}

/// Writes [`order_prefix`] into `out` (built by hand: one is made per delivery and per
/// recomputed subject, and `format!` cost more than the rest of it).
fn push_order_prefix(out: &mut String, instant: Instant, created_at: &str) {
    // At least twenty digits, zero-padded (`{:020}`).
    out.push_str(Digits::of(instant.micros.max(0).unsigned_abs()).padded(20));
    out.push('\u{1}');
    out.push_str(created_at);
}

/// [`order_prefix`] plus the observation id: the reducer's complete order key as text.
pub fn order_key_text(observation: &Observation) -> String {
    let id = &observation.observation_id;
    let mut out = String::with_capacity(22 + observation.created_at.len() + id.len());
    push_order_prefix(
        &mut out,
        observation.created_instant,
        &observation.created_at,
    );
    out.push('\u{1}');
    out.push_str(id);
    out
}

/// `(created_at, observation_id)` of an [`order_key_text`].
pub fn split_order_key(text: &str) -> Option<(String, String)> {
    let mut parts = text.splitn(3, '\u{1}');
    let _instant = parts.next()?;
    let created_at = parts.next()?;
    let id = parts.next()?;
    Some((created_at.to_owned(), id.to_owned()))
}

/// Parses the stored `history_seqs` text.
pub fn parse_seqs(text: &str) -> Vec<i64> {
    text.split(',').filter_map(|s| s.parse().ok()).collect()
}

/// The stored `history_seqs` text.
pub fn format_seqs(seqs: &[i64]) -> String {
    seqs.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::{COUNTER_COLUMNS, DELIVERY_COLUMNS, DELIVERY_COLUMNS_D, PARTITION_COLUMNS};
    use super::{Instant, order_prefix};

    #[test]
    fn the_order_prefix_is_the_zero_padded_instant_then_the_raw_time() {
        for micros in [
            i128::MIN,
            -1,
            0,
            7,
            1_767_225_600_000_000,
            99_999_999_999_999_999_999,
            100_000_000_000_000_000_000,
            i128::MAX,
        ] {
            let at = "2026-01-01T00:00:00Z";
            assert_eq!(
                order_prefix(Instant { micros }, at),
                format!("{:020}\u{1}{at}", micros.max(0))
            );
        }
        assert_eq!(
            order_prefix(Instant { micros: 12 }, ""),
            "00000000000000000012\u{1}"
        );
    }

    #[test]
    fn the_column_lists_agree_with_each_other() {
        let qualified: Vec<String> = DELIVERY_COLUMNS
            .split(", ")
            .map(|c| format!("d.{c}"))
            .collect();
        assert_eq!(qualified.join(", "), DELIVERY_COLUMNS_D);
        let partition: Vec<&str> = PARTITION_COLUMNS.split(", ").collect();
        assert_eq!(partition[7..17], COUNTER_COLUMNS);
        assert_eq!(partition.len(), 18);
    }
}

// ---------------------------------------------------------------------------------------
// The traffic log's rows (`traffic.rs`) and recorded verdicts (`verdicts.rs`)
// ---------------------------------------------------------------------------------------

/// What an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TrafficKind {
    /// A recall: its candidates, the logging policy's propensities, the shadow ranking.
    Recall,
    /// An `apply` decision on a recall: the receipt id and the applied digests.
    Apply,
    /// The verified outcome `utility-attribute` attributed for a receipt.
    Outcome,
}

impl TrafficKind {
    /// The stored and printed spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TrafficKind::Recall => "recall",
            TrafficKind::Apply => "apply",
            TrafficKind::Outcome => "outcome",
        }
    }

    /// The kind of a stored spelling.
    pub fn parse(text: &str) -> Option<TrafficKind> {
        match text {
            "recall" => Some(TrafficKind::Recall),
            "apply" => Some(TrafficKind::Apply),
            "outcome" => Some(TrafficKind::Outcome),
            _ => None,
        }
    }
}

/// One event to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficAppend {
    pub kind: TrafficKind,
    /// The partition of the recall (the receipt's partition for apply and outcome).
    pub partition: PartitionKey,
    /// The recall's session ref (empty for an outcome event).
    pub recall_id: String,
    /// The `rma_` receipt id (empty for a recall event).
    pub application_receipt_id: String,
    pub observed_at: String,
    /// The event's canonical JSON text.
    pub event: String,
}

/// One stored event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficRow {
    /// The traffic log's own sequence: append (commit) order.
    pub seq: i64,
    /// The delivery high water when the event was appended: every delivery with a
    /// greater sequence arrived after it.
    pub delivery_seq: i64,
    pub kind: TrafficKind,
    pub partition: PartitionKey,
    pub recall_id: String,
    pub application_receipt_id: String,
    pub observed_at: String,
    pub event: String,
}

/// The prefix of a ledger identity: `mul_` + 32 hex.
pub const LEDGER_ID_PREFIX: &str = "mul_";

/// A verdict as stored: its seal, what it is about, and its canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictRow {
    /// `murv_` + 64 hex: the packet's `verdict_digest` (unique in the ledger).
    pub verdict_digest: String,
    /// `murp_` + 64 hex: the rank-prior profile the verdict is about.
    pub profile_digest: String,
    /// `qualified` or `hold`.
    pub verdict: String,
    /// `simulation`, `episodes_file` or `ledger`.
    pub source_kind: String,
    /// The `mur_` identities of the partitions it evaluated.
    pub partitions: Vec<String>,
    /// The packet's canonical JSON.
    pub packet: String,
}
