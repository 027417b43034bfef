//! The evaluation's input, whatever produced it (the simulator or an `EPISODES.jsonl`
//! file): the partitions, the training episodes (what every arm learns from), the
//! utility deliveries (what the ledger receives), the verified outcomes they refer to and
//! the held-out episodes with their ground truth. Training and held-out episodes are
//! separate lists; nothing here ranks.
//!
//! Only the simulator can also give an [`Environment`] per training episode: the task's
//! answer to any set of applied memories (under the episode's own random draw) and the
//! causal truth of its recalled candidates. The tuning of the comparison arms reads it on
//! the validation split, and the on-policy MemRL arm acts in it; evidence and the
//! off-policy arms never see it.

use std::collections::BTreeMap;

use crate::ranking::prior::Partition;
use crate::utility::observation::Observation;
use crate::utility::reducer::{DEFAULT_REDUCER_VERSION, Rules};

use super::error::RankEvaluateError;
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

/// The success probability of a task: its base success plus the summed causal effects
/// of the applied memories, clamped to `[0.02, 0.98]` (no task is certain either way).
pub fn success_probability(base: f64, effects: impl IntoIterator<Item = f64>) -> f64 {
    (base + effects.into_iter().sum::<f64>()).clamp(0.02, 0.98)
}

/// One training episode's task as the simulated world answers it: hidden from evidence
/// and from the off-policy arms.
#[derive(Debug, Clone, PartialEq)]
pub struct Environment {
    /// The recalled candidates in recall order (the training episode's `recalled`), with
    /// relevance and causal truth on this task: the validation split's ground truth.
    pub candidates: Vec<HeldOutCandidate>,
    /// How many memories the agent applies in this episode.
    pub count: usize,
    /// `Some(positions)` when the agent explores: it applies these recalled candidates,
    /// whatever its ranking.
    pub explored: Option<Vec<usize>>,
    /// Causal effect of each candidate on this task's success probability.
    effects: Vec<f64>,
    /// The task's base success probability (difficulty included).
    base: f64,
    /// The episode's uniform outcome draw: success when below the success probability.
    draw: f64,
}

impl Environment {
    /// A task: candidates with their truth, effects, base success and outcome draw.
    pub fn new(
        candidates: Vec<HeldOutCandidate>,
        count: usize,
        explored: Option<Vec<usize>>,
        effects: Vec<f64>,
        base: f64,
        draw: f64,
    ) -> Environment {
        Environment {
            candidates,
            count,
            explored,
            effects,
            base,
            draw,
        }
    }

    /// The outcome of the task when the candidates at `applied` (positions in
    /// `candidates`) are applied, under the episode's own random draw (common random
    /// numbers: the logged episode and any re-run share it).
    pub fn succeeds(&self, applied: &[usize]) -> bool {
        let effects = applied
            .iter()
            .map(|&i| self.effects.get(i).copied().unwrap_or(0.0));
        self.draw < success_probability(self.base, effects)
    }
}

/// How often each kind of evidence was produced in training (runs, not observations: one
/// evaluator call can judge several memories), for the evidence part of task cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvidenceWork {
    pub evaluator_inference: usize,
    pub deterministic_effect: usize,
    pub controlled_replay: usize,
    pub owner_correction: usize,
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
    /// Empty, or one [`Environment`] per training episode (same order): the simulator's.
    pub environment: Vec<Environment>,
    /// The evidence runs behind the deliveries, when the producer counted them (the
    /// simulator does); otherwise they are counted from the deliveries.
    pub evidence_work: Option<EvidenceWork>,
    /// Verified outcome per `outcome_ref` (true: succeeded), where known: what evaluator
    /// disagreement is measured against when inference is a subject's only evidence.
    pub outcomes: BTreeMap<String, bool>,
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

    /// The reducer version the evaluation is about: the one every partition names
    /// (`memory_utility_reducer_v0` without a partition). Its bounded-utility arm is the
    /// one the gate qualifies, and the verdict names the partitions by their `mur_`
    /// identities under it; partitions that name different versions are refused (evaluate
    /// each reducer's partitions on their own).
    pub fn reducer_version(&self) -> Result<&str, RankEvaluateError> {
        let Some(first) = self.partitions.first() else {
            return Ok(DEFAULT_REDUCER_VERSION);
        };
        match self
            .partitions
            .iter()
            .find(|p| p.reducer_version != first.reducer_version)
        {
            None => Ok(&first.reducer_version),
            Some(other) => Err(RankEvaluateError::Episodes(format!(
                "the partitions name two reducer versions, {} and {}: evaluate the partitions of each reducer on their own",
                first.reducer_version, other.reducer_version
            ))),
        }
    }

    /// The subject rules of [`Dataset::reducer_version`].
    pub fn reducer_rules(&self) -> Result<Rules, RankEvaluateError> {
        let version = self.reducer_version()?;
        Rules::of(version).map_err(|e| RankEvaluateError::Episodes(format!("partition.{e}")))
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
        let own = |i: &usize| self.training[*i].partition == partition;
        Dataset {
            partitions: self.partitions.clone(),
            training: (0..self.training.len())
                .filter(own)
                .map(|i| self.training[i].clone())
                .collect(),
            environment: (0..self.environment.len())
                .filter(|i| *i < self.training.len() && own(i))
                .map(|i| self.environment[i].clone())
                .collect(),
            evidence_work: self.evidence_work,
            outcomes: self.outcomes.clone(),
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
