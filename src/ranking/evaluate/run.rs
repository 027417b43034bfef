//! One evaluation run: replays the training traffic into the arms' state, ranks every
//! held-out episode with every arm, checks every ranking against the same arm prepared
//! from its own partition's data alone (the scope-leak check), and collects per-episode
//! metrics and the evidence summaries. Pure: no I/O.

use std::collections::BTreeMap;

use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};

use super::arms::{Arm, ArmContext, Pool, Ranker, TrainingState};
use super::dataset::Dataset;
use super::error::RankEvaluateError;
use super::ledger::{Counters, LedgerOpener, SubjectFacts};
use super::metrics::{EpisodeValues, episode_values};
use super::profile::EvaluationProfile;

/// What one arm did on the held-out episodes.
#[derive(Debug, Clone)]
pub struct ArmOutcome {
    pub key: &'static str,
    pub title: &'static str,
    /// Per held-out episode.
    pub values: Vec<EpisodeValues>,
    /// Per held-out episode: the arm's order (candidate indices).
    pub orders: Vec<Vec<usize>>,
    /// Candidates whose final rank differs from the same arm prepared from its own
    /// partition's data alone.
    pub leaks: usize,
    /// Held-out episodes with at least one such candidate.
    pub leak_episodes: usize,
}

/// Counts describing the ledger the run built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LedgerSummary {
    /// The ledger's storage (`sqlite`, or `reducer_in_memory` in tests).
    pub backend: &'static str,
    pub counters: Counters,
    pub partitions: usize,
    pub item_subjects: usize,
    pub set_subjects: usize,
    pub none_subjects: usize,
    /// Deliveries arm 4's ledger never received.
    pub inference_deliveries_removed: usize,
    /// Deliveries per evidence tier (in `EvidenceBasis::ALL` order).
    pub deliveries_by_basis: [usize; 5],
}

/// Counts describing the held-out set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeldOutSummary {
    pub episodes: usize,
    /// Episodes whose pool holds a truly helpful memory.
    pub answerable: usize,
    pub pool_candidates: usize,
    pub helpful_in_pool: usize,
    pub harmful_in_pool: usize,
}

/// The result of one run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub arms: Vec<ArmOutcome>,
    /// Per held-out episode: the semantic pool (candidate indices in semantic order).
    pub pools: Vec<Vec<usize>>,
    pub held_out: HeldOutSummary,
    pub ledger: LedgerSummary,
    pub training_episodes: usize,
    /// One flag per item subject that has directional inference and a directional
    /// effective label from a stronger tier: true when inference disagrees.
    pub disagreement: Vec<bool>,
}

/// Whether the inference of one subject disagrees with its stronger effective tier:
/// `None` unless it is an item subject with directional inference and a directional
/// effective label from a stronger tier; otherwise true unless the most frequent
/// inference label (a tie counts as disagreement) equals the effective label.
pub fn inference_disagrees(subject: &SubjectFacts) -> Option<bool> {
    let u = &subject.utility;
    if u.level != AttributionLevel::Item
        || u.effective_basis <= EvidenceBasis::EvaluatorInference
        || u.effective_label == UtilityLabel::Unknown
    {
        return None;
    }
    let counts: Vec<(UtilityLabel, usize)> = UtilityLabel::ALL
        .iter()
        .filter(|l| **l != UtilityLabel::Unknown)
        .map(|l| (*l, subject.inference_labels[l.index()]))
        .filter(|(_, c)| *c > 0)
        .collect();
    let top = counts.iter().map(|(_, c)| *c).max()?;
    let leaders: Vec<UtilityLabel> = counts
        .iter()
        .filter(|(_, c)| *c == top)
        .map(|(l, _)| *l)
        .collect();
    Some(leaders != [u.effective_label])
}

fn summarize_ledger(state: &TrainingState, dataset: &Dataset) -> (LedgerSummary, Vec<bool>) {
    let mut summary = LedgerSummary {
        backend: state.backend,
        counters: state.counters,
        partitions: state.subjects.len(),
        inference_deliveries_removed: state.inference_deliveries,
        ..LedgerSummary::default()
    };
    let mut flags = Vec::new();
    for s in state.subjects.values().flatten() {
        match s.utility.level {
            AttributionLevel::Item => summary.item_subjects += 1,
            AttributionLevel::Set => summary.set_subjects += 1,
            AttributionLevel::None => summary.none_subjects += 1,
        }
        if let Some(flag) = inference_disagrees(s) {
            flags.push(flag);
        }
    }
    for o in &dataset.deliveries {
        summary.deliveries_by_basis[o.evidence_basis.index()] += 1;
    }
    (summary, flags)
}

/// Runs every arm on every held-out episode of `dataset`.
pub fn run(
    dataset: &Dataset,
    profile: &EvaluationProfile,
    arms: &[Box<dyn Arm>],
    opener: &dyn LedgerOpener,
) -> Result<RunResult, RankEvaluateError> {
    let state = TrainingState::build(dataset, &profile.memrl, opener)?;
    let mut held_partitions: Vec<usize> = dataset.held_out.iter().map(|e| e.partition).collect();
    held_partitions.sort_unstable();
    held_partitions.dedup();
    let isolated: BTreeMap<usize, TrainingState> = held_partitions
        .iter()
        .map(|&p| {
            Ok((
                p,
                TrainingState::build(&dataset.isolated(p), &profile.memrl, opener)?,
            ))
        })
        .collect::<Result<_, RankEvaluateError>>()?;

    type Prepared<'a> = (Box<dyn Ranker + 'a>, Box<dyn Ranker + 'a>);
    let mut rankers: BTreeMap<(usize, usize), Prepared<'_>> = BTreeMap::new();
    for (a, arm) in arms.iter().enumerate() {
        for &p in &held_partitions {
            let partition = dataset
                .partitions
                .get(p)
                .ok_or(RankEvaluateError::Internal(
                    "held-out episode of an unknown partition",
                ))?;
            let ctx = |state| ArmContext {
                state,
                profile,
                partition,
                partition_index: p,
            };
            let own = isolated
                .get(&p)
                .ok_or(RankEvaluateError::Internal("missing isolated state"))?;
            rankers.insert((a, p), (arm.prepare(ctx(&state))?, arm.prepare(ctx(own))?));
        }
    }

    let k = profile.evaluation.k as usize;
    let mut outcomes: Vec<ArmOutcome> = arms
        .iter()
        .map(|arm| ArmOutcome {
            key: arm.key(),
            title: arm.title(),
            values: Vec::with_capacity(dataset.held_out.len()),
            orders: Vec::with_capacity(dataset.held_out.len()),
            leaks: 0,
            leak_episodes: 0,
        })
        .collect();
    let mut pools = Vec::with_capacity(dataset.held_out.len());
    let mut held = HeldOutSummary {
        episodes: dataset.held_out.len(),
        ..HeldOutSummary::default()
    };
    for episode in &dataset.held_out {
        let partition =
            dataset
                .partitions
                .get(episode.partition)
                .ok_or(RankEvaluateError::Internal(
                    "held-out episode of an unknown partition",
                ))?;
        let pool = Pool::of(episode, partition, &profile.rank_prior)?;
        let truths = pool.members.iter().map(|&i| episode.candidates[i].truth);
        held.pool_candidates += pool.members.len();
        let helpful = truths.clone().filter(|t| t.is_helpful()).count();
        held.helpful_in_pool += helpful;
        held.harmful_in_pool += truths
            .filter(|t| matches!(t, super::dataset::Truth::Harmful))
            .count();
        if helpful > 0 {
            held.answerable += 1;
        }
        for (a, outcome) in outcomes.iter_mut().enumerate() {
            let (full, own) = rankers
                .get(&(a, episode.partition))
                .ok_or(RankEvaluateError::Internal("missing ranker"))?;
            let order = full.order(episode, &pool)?;
            let alone = own.order(episode, &pool)?;
            let moved = order.iter().zip(&alone).filter(|(x, y)| x != y).count()
                + order.len().abs_diff(alone.len());
            outcome.leaks += moved;
            if moved > 0 {
                outcome.leak_episodes += 1;
            }
            outcome
                .values
                .push(episode_values(episode, &pool.members, &order, k));
            outcome.orders.push(order);
        }
        pools.push(pool.members);
    }
    let (ledger, disagreement) = summarize_ledger(&state, dataset);
    Ok(RunResult {
        arms: outcomes,
        pools,
        held_out: held,
        ledger,
        training_episodes: dataset.training.len(),
        disagreement,
    })
}
