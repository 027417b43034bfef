//! The evaluation's input, whatever produced it (the simulator or an `EPISODES.jsonl`
//! file): the partitions, the training episodes (what every arm learns from), the
//! utility deliveries (what the ledger receives) and the held-out episodes with their
//! ground truth. Training and held-out episodes are separate lists; nothing here ranks.

use crate::ranking::prior::Partition;
use crate::utility::observation::Observation;

use super::ledger::{PartitionKey, key_of};

/// The hidden truth of one held-out candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Truth {
    /// It truly helped this episode; the gain (> 0) weights nDCG.
    Helpful(f64),
    /// It truly harms (counted by harmful@k).
    Harmful,
    /// Neither.
    Neutral,
}

impl Truth {
    /// The nDCG gain: the strength of a helpful memory, else 0.
    pub fn gain(self) -> f64 {
        match self {
            Truth::Helpful(g) => g,
            _ => 0.0,
        }
    }

    /// True for a truly helpful memory.
    pub fn is_helpful(self) -> bool {
        matches!(self, Truth::Helpful(_))
    }
}

/// One candidate of a held-out episode.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOutCandidate {
    pub digest: String,
    pub relevance: f64,
    pub truth: Truth,
}

/// One held-out episode: its partition, when it happens (microseconds, for recency) and
/// the candidates every arm ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOutEpisode {
    pub partition: usize,
    pub at: i128,
    pub candidates: Vec<HeldOutCandidate>,
}

/// One training episode as the non-ledger arms see it: what was recalled (accessed, for
/// hotness), what was applied, and the terminal reward (for the MemRL arm).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingEpisode {
    pub partition: usize,
    pub at: i128,
    pub recalled: Vec<String>,
    pub used: Vec<String>,
    pub reward: f64,
}

/// Everything one evaluation run consumes.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// Every partition that appears, in first-appearance order.
    pub partitions: Vec<Partition>,
    /// Training episodes in time order.
    pub training: Vec<TrainingEpisode>,
    /// Every utility delivery, in delivery order (retries included).
    pub deliveries: Vec<Observation>,
    /// Held-out episodes.
    pub held_out: Vec<HeldOutEpisode>,
}

impl Dataset {
    /// The index of `partition`, adding it when new.
    pub fn intern(&mut self, partition: &Partition) -> usize {
        let key = key_of(partition);
        if let Some(i) = self.partitions.iter().position(|p| key_of(p) == key) {
            return i;
        }
        self.partitions.push(partition.clone());
        self.partitions.len() - 1
    }

    /// The partition key of index `i`.
    pub fn key(&self, i: usize) -> Option<PartitionKey> {
        self.partitions.get(i).map(key_of)
    }

    /// The dataset restricted to one partition's training traffic and deliveries (its
    /// held-out episodes are irrelevant to the leak check and left out): what an arm
    /// would know if no other scope or snapshot pair existed.
    pub fn isolated(&self, partition: usize) -> Dataset {
        let key = self.key(partition);
        Dataset {
            partitions: self.partitions.clone(),
            training: self
                .training
                .iter()
                .filter(|e| e.partition == partition)
                .cloned()
                .collect(),
            deliveries: self
                .deliveries
                .iter()
                .filter(|o| {
                    Some(super::ledger::partition_key(
                        &o.scope,
                        &o.retrieval_snapshot_ref,
                        &o.policy_snapshot_ref,
                    )) == key
                })
                .cloned()
                .collect(),
            held_out: Vec::new(),
        }
    }
}
