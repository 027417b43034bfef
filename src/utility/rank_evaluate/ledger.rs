//! Where the evaluation keeps utility evidence: every delivery goes through
//! [`EvaluationLedger::deliver`], and arms 3 and 4 read reduced subject state of one
//! partition back through [`EvaluationLedger::subjects`].
//!
//! The store here is the in-memory reducer seam: deliveries are kept per partition and
//! per `observation_id` (an identical retry is a duplicate, a different payload under one
//! id is a conflict excluded from subject state, as the reducer rules), and subject state
//! is computed by the reducer's own [`reduce_subject`] over the accepted observations in
//! the reducer's order, without the v0 packet caps (1024 deliveries, 128 subjects), which
//! a month of simulated traffic exceeds. A partition within those caps reduces to exactly
//! the subjects `utility-project` prints (a test compares them). It never reads another
//! partition's deliveries for a partition's subjects.

use std::collections::BTreeMap;

use crate::utility::observation::{AttributionLevel, EvidenceBasis, Observation, Scope};
use crate::utility::rank_prior::{Partition, SubjectUtility};
use crate::utility::reducer::{SubjectState, reduce_subject, subject_id};

/// The identity of a partition as deliveries carry it (scope ids and snapshot pair).
pub type PartitionKey = (String, String, String, String, String, String);

/// The partition key of a scope and snapshot pair.
pub fn partition_key(scope: &Scope, retrieval: &str, policy: &str) -> PartitionKey {
    (
        scope.agent_id.clone(),
        scope.project_id.clone(),
        scope.corpus_id.clone(),
        scope.surface_id.clone(),
        retrieval.to_owned(),
        policy.to_owned(),
    )
}

/// The partition key of a ranking partition.
pub fn key_of(partition: &Partition) -> PartitionKey {
    partition_key(
        &partition.scope,
        &partition.retrieval_snapshot_ref,
        &partition.policy_snapshot_ref,
    )
}

/// Delivery counters of a ledger (the reducer's meanings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Every delivery received.
    pub deliveries: usize,
    /// Distinct observations accepted into subject state.
    pub accepted: usize,
    /// Extra deliveries of an already stored semantic statement.
    pub duplicate: usize,
    /// Observation ids delivered with more than one payload (excluded).
    pub conflicting: usize,
}

#[derive(Debug, Default)]
struct Deliveries {
    /// fingerprint → (representative with the smallest order key, count)
    versions: BTreeMap<String, (Observation, usize)>,
}

/// The evaluation's utility ledger.
#[derive(Debug, Default)]
pub struct EvaluationLedger {
    partitions: BTreeMap<PartitionKey, BTreeMap<String, Deliveries>>,
    deliveries: usize,
}

impl EvaluationLedger {
    /// An empty ledger.
    pub fn new() -> EvaluationLedger {
        EvaluationLedger::default()
    }

    /// The name of the storage behind this ledger, as the verdict reports it.
    pub fn backend(&self) -> &'static str {
        "reducer_in_memory"
    }

    /// Stores one delivery (idempotent for an identical retry).
    pub fn deliver(&mut self, observation: &Observation) {
        self.deliveries += 1;
        let key = partition_key(
            &observation.scope,
            &observation.retrieval_snapshot_ref,
            &observation.policy_snapshot_ref,
        );
        let fingerprint = observation.fingerprint();
        let by_id = self.partitions.entry(key).or_default();
        let entry = by_id.entry(observation.observation_id.clone()).or_default();
        match entry.versions.get_mut(&fingerprint) {
            Some((prior, count)) => {
                *count += 1;
                if observation.order_key() < prior.order_key() {
                    *prior = observation.clone();
                }
            }
            None => {
                entry.versions.insert(fingerprint, (observation.clone(), 1));
            }
        }
    }

    /// The counters over every partition.
    pub fn counters(&self) -> Counters {
        let mut c = Counters {
            deliveries: self.deliveries,
            ..Counters::default()
        };
        for by_id in self.partitions.values() {
            for d in by_id.values() {
                c.duplicate += d.versions.values().map(|(_, n)| n - 1).sum::<usize>();
                if d.versions.len() > 1 {
                    c.conflicting += 1;
                } else {
                    c.accepted += 1;
                }
            }
        }
        c
    }

    /// How many partitions hold deliveries.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// The reduced subjects of one partition, in the reducer's subject order.
    pub fn subjects(&self, partition: &Partition) -> Vec<SubjectState> {
        self.partitions
            .get(&key_of(partition))
            .map(reduce_partition)
            .unwrap_or_default()
    }

    /// The reduced subjects of every partition, with their partition keys.
    pub fn all_subjects(&self) -> Vec<(PartitionKey, SubjectState)> {
        self.partitions
            .iter()
            .flat_map(|(key, by_id)| {
                reduce_partition(by_id)
                    .into_iter()
                    .map(move |s| (key.clone(), s))
            })
            .collect()
    }
}

type Groups<'a> = BTreeMap<(&'static str, Vec<String>), (String, Vec<&'a Observation>)>;

/// Accepted observations (ordered by id, conflicts excluded), grouped by subject exactly
/// as the reducer groups them, each reduced by [`reduce_subject`].
fn reduce_partition(by_id: &BTreeMap<String, Deliveries>) -> Vec<SubjectState> {
    let mut groups: Groups<'_> = BTreeMap::new();
    for deliveries in by_id.values() {
        if deliveries.versions.len() != 1 {
            continue;
        }
        let Some((observation, _)) = deliveries.versions.values().next() else {
            continue;
        };
        let id = subject_id(observation);
        let level = observation.attribution_level;
        let tail = if level == AttributionLevel::None {
            vec![id.clone()]
        } else {
            observation.memory_ref_digests.clone()
        };
        groups
            .entry((level.as_str(), tail))
            .or_insert_with(|| (id, Vec::new()))
            .1
            .push(observation);
    }
    groups
        .values()
        .filter_map(|(id, members)| {
            let first = members.first()?;
            Some(reduce_subject(
                id,
                first.attribution_level,
                &first.memory_ref_digests,
                members,
            ))
        })
        .collect()
}

/// What the rank prior reads of a reduced subject (the projection's meaning of
/// `effective_support`: observations at the effective tier carrying the effective label).
pub fn subject_utility(state: &SubjectState) -> SubjectUtility {
    let support = state
        .summary
        .iter()
        .find(|p| p.basis == state.effective_basis && p.label == state.effective_label)
        .map_or(0, |p| p.count);
    SubjectUtility {
        level: state.level,
        memory_ref_digests: state.memory_ref_digests.clone(),
        utility_estimate: state.utility_estimate,
        effective_label: state.effective_label,
        effective_basis: state.effective_basis,
        effective_support: support,
    }
}

/// True for an observation that arm 4 leaves out of its ledger.
pub fn is_inference(observation: &Observation) -> bool {
    observation.evidence_basis == EvidenceBasis::EvaluatorInference
}
