//! One evaluation run: tunes the learned comparison arms on the validation split
//! ([`super::tuning`]), replays the training traffic into the arms' state, ranks every
//! held-out episode with every arm, checks every ranking against the same arm prepared
//! from its own partition's data alone (the scope-leak check), and collects per-episode
//! metrics (task cost with each arm's evidence cost) and the evidence summaries
//! (evaluator disagreement against a stronger tier, or against the verified outcomes
//! where inference is a subject's only evidence). Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};

use super::arms::{Arm, ArmContext, Pool, Ranker, TrainingState};
use super::dataset::{Dataset, EvidenceWork};
use super::error::RankEvaluateError;
use super::ledger::{Counters, LedgerOpener, PartitionKey, SubjectFacts, partition_key};
use super::metrics::{EpisodeValues, TaskCosts, episode_values};
use super::profile::EvaluationProfile;
use super::tuning::{self, Tuned};

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
    /// The arm's evidence cost per task (part of its task cost).
    pub evidence_cost_per_task: f64,
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
    /// One flag per item subject whose only evidence is inference and whose inference
    /// labels meet verified outcomes: true when they contradict the outcomes.
    pub outcome_disagreement: Vec<bool>,
    /// How the learned comparison arms were set up.
    pub tuned: Tuned,
    /// The evidence runs behind the training deliveries.
    pub evidence_work: EvidenceWork,
    /// The reducer version the evaluated partitions name.
    pub reducer_version: String,
    /// The key of the arm the gate qualifies (that reducer's bounded-utility arm).
    pub gated_arm: &'static str,
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

/// Whether the inference labels of a subject whose only evidence is inference contradict
/// the verified outcomes of the episodes they judged: `None` without a directional label
/// that meets a known outcome; otherwise true when the labels that contradict their
/// outcome (helpful on a failure, harmful on a success) are at least as many as those that
/// agree (a tie counts as disagreement, as against a stronger tier). Neutral labels
/// neither agree nor contradict.
pub fn contradicts_outcomes(agree: usize, contradict: usize) -> Option<bool> {
    (agree + contradict > 0).then_some(contradict >= agree)
}

/// `(agree, contradict)` counts of item-level inference labels against their episode's
/// verified outcome, per partition and memory digest (each observation id once).
fn inference_against_outcomes(
    dataset: &Dataset,
) -> BTreeMap<(PartitionKey, String), (usize, usize)> {
    let mut counts = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for o in &dataset.deliveries {
        if o.evidence_basis != EvidenceBasis::EvaluatorInference
            || o.attribution_level != AttributionLevel::Item
            || !seen.insert(o.observation_id.as_str())
        {
            continue;
        }
        let Some(&succeeded) = dataset.outcomes.get(o.outcome_ref.as_str()) else {
            continue;
        };
        let agrees = match o.utility_label {
            UtilityLabel::Helpful => succeeded,
            UtilityLabel::Harmful => !succeeded,
            _ => continue,
        };
        for digest in &o.memory_ref_digests {
            let key = (
                partition_key(&o.scope, &o.retrieval_snapshot_ref, &o.policy_snapshot_ref),
                digest.clone(),
            );
            let entry: &mut (usize, usize) = counts.entry(key).or_default();
            if agrees {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }
    counts
}

/// The evidence runs of a dataset: the producer's count, or one run per distinct
/// (receipt, evaluator) pair of the deliveries of each tier (runs that produced only
/// `insufficient` observations are not seen then).
fn evidence_work(dataset: &Dataset) -> EvidenceWork {
    if let Some(work) = dataset.evidence_work {
        return work;
    }
    let mut runs: BTreeSet<(usize, &str, &str)> = BTreeSet::new();
    for o in &dataset.deliveries {
        runs.insert((
            o.evidence_basis.index(),
            o.application_receipt_id.as_str(),
            o.evaluator_ref.as_str(),
        ));
    }
    let count = |b: EvidenceBasis| runs.iter().filter(|r| r.0 == b.index()).count();
    EvidenceWork {
        evaluator_inference: count(EvidenceBasis::EvaluatorInference),
        deterministic_effect: count(EvidenceBasis::DeterministicEffect),
        controlled_replay: count(EvidenceBasis::ControlledReplay),
        owner_correction: count(EvidenceBasis::OwnerCorrection),
    }
}

/// An arm's evidence cost per task: the runs of every tier it needs, at the profile's
/// unit costs, over the training episodes.
fn evidence_cost(
    arm: &dyn Arm,
    profile: &EvaluationProfile,
    work: &EvidenceWork,
    training: usize,
) -> f64 {
    if training == 0 {
        return 0.0;
    }
    let c = &profile.cost;
    let total: f64 = arm
        .evidence(&profile.rank_prior)
        .iter()
        .map(|b| match b {
            EvidenceBasis::EvaluatorInference => {
                c.evaluator_inference * work.evaluator_inference as f64
            }
            EvidenceBasis::DeterministicEffect => {
                c.deterministic_effect * work.deterministic_effect as f64
            }
            EvidenceBasis::ControlledReplay => c.controlled_replay * work.controlled_replay as f64,
            EvidenceBasis::OwnerCorrection => c.owner_correction * work.owner_correction as f64,
            EvidenceBasis::Insufficient => 0.0,
        })
        .fold(0.0, |sum, x| sum + x);
    total / training as f64
}

fn summarize_ledger(
    state: &TrainingState,
    dataset: &Dataset,
) -> (LedgerSummary, Vec<bool>, Vec<bool>) {
    let mut summary = LedgerSummary {
        backend: state.backend,
        counters: state.counters,
        partitions: state.subjects.len(),
        inference_deliveries_removed: state.inference_deliveries,
        ..LedgerSummary::default()
    };
    let mut flags = Vec::new();
    let mut outcome_flags = Vec::new();
    let against = inference_against_outcomes(dataset);
    for (key, subjects) in &state.subjects {
        for s in subjects {
            match s.utility.level {
                AttributionLevel::Item => summary.item_subjects += 1,
                AttributionLevel::Set => summary.set_subjects += 1,
                AttributionLevel::None => summary.none_subjects += 1,
            }
            if let Some(flag) = inference_disagrees(s) {
                flags.push(flag);
            }
            let only_inference = s.utility.level == AttributionLevel::Item
                && s.utility.effective_basis == EvidenceBasis::EvaluatorInference;
            if let (true, Some(digest)) = (only_inference, s.utility.memory_ref_digests.first()) {
                let (agree, contradict) = against
                    .get(&(key.clone(), digest.clone()))
                    .copied()
                    .unwrap_or_default();
                if let Some(flag) = contradicts_outcomes(agree, contradict) {
                    outcome_flags.push(flag);
                }
            }
        }
    }
    for o in &dataset.deliveries {
        summary.deliveries_by_basis[o.evidence_basis.index()] += 1;
    }
    (summary, flags, outcome_flags)
}

/// Runs every arm on every held-out episode of `dataset`.
pub fn run(
    dataset: &Dataset,
    profile: &EvaluationProfile,
    arms: &[Box<dyn Arm>],
    opener: &dyn LedgerOpener,
) -> Result<RunResult, RankEvaluateError> {
    let rules = dataset.reducer_rules()?;
    let tuned = tuning::tune(dataset, profile)?;
    let settings = &tuned.settings;
    let state = TrainingState::build(dataset, settings, profile, opener)?;
    let mut held_partitions: Vec<usize> = dataset.held_out.iter().map(|e| e.partition).collect();
    held_partitions.sort_unstable();
    held_partitions.dedup();
    let isolated: BTreeMap<usize, TrainingState> = held_partitions
        .iter()
        .map(|&p| {
            Ok((
                p,
                TrainingState::build(&dataset.isolated(p), settings, profile, opener)?,
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
                settings,
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
    let work = evidence_work(dataset);
    let mut outcomes: Vec<ArmOutcome> = arms
        .iter()
        .map(|arm| ArmOutcome {
            key: arm.key(),
            title: arm.title(),
            values: Vec::with_capacity(dataset.held_out.len()),
            orders: Vec::with_capacity(dataset.held_out.len()),
            leaks: 0,
            leak_episodes: 0,
            evidence_cost_per_task: evidence_cost(
                arm.as_ref(),
                profile,
                &work,
                dataset.training.len(),
            ),
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
            let ranking = full.rank(episode, &pool)?;
            let alone = own.rank(episode, &pool)?;
            let moved = ranking
                .order
                .iter()
                .zip(&alone.order)
                .filter(|(x, y)| x != y)
                .count()
                + ranking.order.len().abs_diff(alone.order.len());
            outcome.leaks += moved;
            if moved > 0 {
                outcome.leak_episodes += 1;
            }
            let costs = TaskCosts {
                memory_read: profile.cost.memory_read,
                evidence_per_task: outcome.evidence_cost_per_task,
            };
            outcome
                .values
                .push(episode_values(episode, &pool.members, &ranking, k, costs));
            outcome.orders.push(ranking.order);
        }
        pools.push(pool.members);
    }
    let (ledger, disagreement, outcome_disagreement) = summarize_ledger(&state, dataset);
    Ok(RunResult {
        arms: outcomes,
        pools,
        held_out: held,
        ledger,
        training_episodes: dataset.training.len(),
        disagreement,
        outcome_disagreement,
        tuned: tuned.clone(),
        evidence_work: work,
        reducer_version: dataset.reducer_version()?.to_owned(),
        gated_arm: super::arms::gated_arm(rules),
    })
}
