//! Off-policy estimates of each arm's value on the held-out logged episodes: inverse
//! propensity scoring (IPS), self-normalized IPS (SNIPS), a doubly robust estimate (DR)
//! with a reward model from training, the effective sample size, and a seeded paired
//! bootstrap of every arm against `semantic`.
//!
//! The estimand is the value of the **top slot**: the expected reward of an episode when
//! the arm chooses which memory is shown first (the rest of the order as logged). The
//! logged action is the shown top `s` with its logged propensity `p` (the logging
//! policy's probability of showing `s` first); a deterministic arm picks `a`, the first
//! of its order of the episode's semantic pool. Per held-out episode with reward `r`
//! (succeeded 1, partial 0.5, failed 0) and weight `w = min(C, [a = s] / p)`:
//!
//! * IPS `= Σ w·r / N`; SNIPS `= Σ w·r / Σ w`;
//! * DR `= Σ (q(a) + w·(r − q(s))) / N`, `q(m)` the memory's mean training reward as the
//!   shown top, shrunk to its partition's mean with weight 1 (`(Σ r + μ) / (n + 1)`);
//!   no DR without a training reward;
//! * effective sample size `(Σ w)² / Σ w²`; an episode is unsupported when the logging
//!   policy could never have shown `a` first (`(1 − ε)·[policy_rank(a) = 1] +
//!   ε·[a in pool]/pool_size = 0`): no unbiased estimate exists there;
//! * the failure rate: SNIPS of `[outcome failed]`.
//!
//! Every partition is read under the reducer the episodes name
//! ([`LoggedData::reducer_version`]); the gated arm is its bounded-utility arm, and v1
//! against v0 (arm 6 minus arm 3) is reported on the same resamples.
//!
//! Unbiased (IPS, and DR for any reward model) when every episode is supported and no
//! weight reaches the clip `C` ([`WEIGHT_CLIP`]); SNIPS is consistent. Pure apart from the
//! training ledgers the arms read, which the [`LedgerOpener`] makes.

use std::collections::BTreeMap;

use crate::ranking::prior::Partition;
use crate::utility::observation::Scope;
use crate::utility::reducer::Rules;
use crate::wire::timestamp::parse_aware;

use super::super::arms::{
    ArmContext, ArmSettings, BOUNDED_UTILITY, BOUNDED_UTILITY_V1, Pool, Ranker, TrainingState,
    gated_arm, standard_arms,
};
use super::super::dataset::{Dataset, HeldOutCandidate, HeldOutEpisode, TrainingEpisode, Truth};
use super::super::error::RankEvaluateError;
use super::super::ledger::{Counters, LedgerOpener};
use super::super::profile::EvaluationProfile;
use super::super::rng::Rng;
use super::episodes::{LoggedData, LoggedEpisode, LoggedOutcome, LoggedSplit};

/// The importance weights' clip `C`.
pub const WEIGHT_CLIP: f64 = 100.0;

/// A point estimate with its percentile bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Interval {
    pub estimate: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// Held-out episodes it rests on.
    pub n: usize,
}

/// One arm's estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmEstimate {
    pub key: &'static str,
    pub title: &'static str,
    pub ips: Interval,
    pub snips: Interval,
    pub doubly_robust: Option<Interval>,
    pub failure_rate: Interval,
    pub effective_sample_size: f64,
    /// Held-out episodes whose shown top is the arm's top (`w > 0`).
    pub matched: usize,
    /// Held-out episodes where the logging policy could never show the arm's top first.
    pub unsupported: usize,
    /// Weights that reached the clip.
    pub clipped: usize,
    /// Candidates whose rank differs from the same arm prepared from its own partition's
    /// data alone.
    pub leaks: usize,
    pub leak_episodes: usize,
}

/// One arm's paired differences against `semantic` (arm 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ArmDifference {
    pub key: &'static str,
    pub ips: Interval,
    pub snips: Interval,
    pub doubly_robust: Option<Interval>,
    pub failure_rate: Interval,
}

/// Counts of the episodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub recalls: usize,
    pub training_recalls: usize,
    pub held_out_recalls: usize,
    /// Training episodes whose reward was known before the split.
    pub training_rewards: usize,
    /// Held-out recalls without an apply and a verified outcome.
    pub held_out_without_outcome: usize,
    /// Held-out recalls with an outcome that cannot be estimated on (a candidate without
    /// relevance, no shown top with a propensity, or an empty semantic pool under the
    /// evaluated profile).
    pub held_out_unusable: usize,
    pub explored_recalls: usize,
    pub shadow_recalls: usize,
    pub semantic_policy_recalls: usize,
    pub rank_prior_policy_recalls: usize,
}

/// The training ledger the arms read (rebuilt from the deliveries up to the split).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrainingLedger {
    pub backend: &'static str,
    pub counters: Counters,
    pub partitions: usize,
    pub inference_deliveries_removed: usize,
}

/// Everything the packet reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimates {
    pub counts: Counts,
    /// Held-out episodes estimated on.
    pub episodes: usize,
    /// The logging policy's own value (mean reward) and failure rate.
    pub logged_value: Interval,
    pub logged_failure_rate: Interval,
    pub arms: Vec<ArmEstimate>,
    /// Arms 2.. against arm 1.
    pub differences: Vec<ArmDifference>,
    pub ledger: TrainingLedger,
    /// A reward model existed (at least one training reward).
    pub reward_model: bool,
    /// The reducer version the partitions were read under.
    pub reducer_version: String,
    /// The key of the arm the gate qualifies (that reducer's bounded-utility arm).
    pub gated_arm: &'static str,
    /// Arm 6 (v1) minus arm 3 (v0), on the same resamples.
    pub v1_versus_v0: Option<ArmDifference>,
}

fn micros(text: &str) -> i128 {
    parse_aware(text).map_or(0, |i| i.micros)
}

fn ranking_partition(episode: &LoggedEpisode, reducer_version: &str) -> Partition {
    let s = &episode.partition.scope;
    Partition {
        scope: Scope {
            agent_id: s.agent_id.as_str().into(),
            project_id: s.project_id.as_str().into(),
            corpus_id: s.corpus_id.as_str().into(),
            surface_id: s.surface_id.as_str().into(),
        },
        retrieval_snapshot_ref: episode.partition.retrieval_snapshot_ref.clone(),
        policy_snapshot_ref: episode.partition.policy_snapshot_ref.clone(),
        reducer_version: reducer_version.to_owned(),
    }
}

/// Per held-out episode, what every estimator needs.
struct Row {
    reward: f64,
    failed: f64,
    /// Per arm: weight, DR term.
    arms: Vec<(f64, f64)>,
}

/// The training reward model: per (partition, memory shown first), the shrunk mean.
struct RewardModel {
    by_memory: BTreeMap<(usize, String), (f64, usize)>,
    by_partition: BTreeMap<usize, (f64, usize)>,
    global: (f64, usize),
}

impl RewardModel {
    fn mean((sum, n): (f64, usize)) -> Option<f64> {
        (n > 0).then(|| sum / n as f64)
    }

    fn q(&self, partition: usize, digest: &str) -> f64 {
        let prior = self
            .by_partition
            .get(&partition)
            .copied()
            .and_then(Self::mean)
            .or_else(|| Self::mean(self.global))
            .unwrap_or(0.0);
        match self.by_memory.get(&(partition, digest.to_owned())) {
            Some(&(sum, n)) => (sum + prior) / (n as f64 + 1.0),
            None => prior,
        }
    }
}

/// Estimates every arm's value on `data`'s held-out episodes with `profile` (the rank
/// prior's profile, hotness and MemRL settings, the bootstrap), `seed`'s streams and the
/// training ledgers of `opener`.
pub fn estimate(
    data: &LoggedData,
    profile: &EvaluationProfile,
    seed: u64,
    opener: &dyn LedgerOpener,
) -> Result<Estimates, RankEvaluateError> {
    let reducer_version = data.reducer_version()?;
    let rules = Rules::of(reducer_version)
        .map_err(|e| RankEvaluateError::Episodes(format!("partition.{e}")))?;
    let mut counts = Counts {
        recalls: data.episodes.len(),
        ..Counts::default()
    };
    let mut dataset = Dataset {
        deliveries: data.deliveries.clone(),
        ..Dataset::default()
    };
    for o in &data.deliveries {
        dataset.intern(&Partition {
            scope: o.scope.clone(),
            retrieval_snapshot_ref: o.retrieval_snapshot_ref.to_string(),
            policy_snapshot_ref: o.policy_snapshot_ref.to_string(),
            reducer_version: reducer_version.to_owned(),
        });
    }
    let mut model = RewardModel {
        by_memory: BTreeMap::new(),
        by_partition: BTreeMap::new(),
        global: (0.0, 0),
    };
    // (logged episode index, held-out episode)
    let mut held: Vec<(usize, HeldOutEpisode)> = Vec::new();
    for (i, e) in data.episodes.iter().enumerate() {
        let partition = dataset.intern(&ranking_partition(e, reducer_version));
        if e.logging_policy.explored {
            counts.explored_recalls += 1;
        }
        if e.shadow.is_some() {
            counts.shadow_recalls += 1;
        }
        match e.logging_policy.kind {
            crate::recall::traffic::LoggingPolicyKind::Semantic => {
                counts.semantic_policy_recalls += 1;
            }
            crate::recall::traffic::LoggingPolicyKind::RankPrior => {
                counts.rank_prior_policy_recalls += 1;
            }
        }
        let at = micros(&e.observed_at);
        match e.split {
            LoggedSplit::Training => {
                counts.training_recalls += 1;
                let reward = e.reward();
                if let Some(r) = reward {
                    counts.training_rewards += 1;
                    if let Some((top, _)) = e.shown_top() {
                        let key = (partition, e.candidates[top].memory_ref_digest.clone());
                        let m = model.by_memory.entry(key).or_insert((0.0, 0));
                        m.0 += r;
                        m.1 += 1;
                    }
                    let p = model.by_partition.entry(partition).or_insert((0.0, 0));
                    p.0 += r;
                    p.1 += 1;
                    model.global.0 += r;
                    model.global.1 += 1;
                }
                let mut used = match (reward, &e.applied) {
                    (Some(_), Some(applied)) => applied.clone(),
                    _ => Vec::new(),
                };
                used.sort();
                dataset.training.push(TrainingEpisode {
                    partition,
                    at,
                    recalled: e
                        .candidates
                        .iter()
                        .filter(|c| c.shown_rank.is_some())
                        .map(|c| c.memory_ref_digest.clone())
                        .collect(),
                    used,
                    // MemRL's terminal reward on the profile's scale (success and failure
                    // rewards; a partial outcome halfway).
                    reward: reward.map_or(0.0, |r| {
                        let m = &profile.memrl;
                        m.failure_reward + (m.success_reward - m.failure_reward) * r
                    }),
                });
            }
            LoggedSplit::HeldOut => {
                counts.held_out_recalls += 1;
                if e.outcome_status.is_none() {
                    counts.held_out_without_outcome += 1;
                    continue;
                }
                if !e.usable() {
                    counts.held_out_unusable += 1;
                    continue;
                }
                held.push((
                    i,
                    HeldOutEpisode {
                        partition,
                        at,
                        candidates: e
                            .candidates
                            .iter()
                            .map(|c| HeldOutCandidate {
                                digest: c.memory_ref_digest.clone(),
                                relevance: c.relevance.unwrap_or(0.0),
                                truth: Truth::Neutral,
                            })
                            .collect(),
                    },
                ));
            }
        }
    }
    // Training in time order (ties in log order), as the Q-updates need.
    let mut order: Vec<usize> = (0..dataset.training.len()).collect();
    order.sort_by_key(|&i| dataset.training[i].at);
    dataset.training = order
        .into_iter()
        .map(|i| dataset.training[i].clone())
        .collect();

    let arms = standard_arms();
    // Logged traffic has no ground truth to tune on: the comparison arms run with the
    // profile's settings.
    let settings = ArmSettings::of_profile(profile);
    let state = TrainingState::build(&dataset, &settings, profile, opener)?;
    let mut held_partitions: Vec<usize> = held.iter().map(|(_, h)| h.partition).collect();
    held_partitions.sort_unstable();
    held_partitions.dedup();
    // The scope-leak check needs a second state only when other partitions could leak in.
    let isolated: BTreeMap<usize, TrainingState> = if dataset.partitions.len() > 1 {
        held_partitions
            .iter()
            .map(|&p| {
                Ok((
                    p,
                    TrainingState::build(&dataset.isolated(p), &settings, profile, opener)?,
                ))
            })
            .collect::<Result<_, RankEvaluateError>>()?
    } else {
        BTreeMap::new()
    };
    type Prepared<'a> = (Box<dyn Ranker + 'a>, Option<Box<dyn Ranker + 'a>>);
    let mut rankers: BTreeMap<(usize, usize), Prepared<'_>> = BTreeMap::new();
    for (a, arm) in arms.iter().enumerate() {
        for &p in &held_partitions {
            let partition = dataset
                .partitions
                .get(p)
                .ok_or(RankEvaluateError::Internal(
                    "an episode of an unknown partition",
                ))?;
            let ctx = |state| ArmContext {
                state,
                profile,
                settings: &settings,
                partition,
                partition_index: p,
            };
            let own = match isolated.get(&p) {
                Some(s) => Some(arm.prepare(ctx(s))?),
                None => None,
            };
            rankers.insert((a, p), (arm.prepare(ctx(&state))?, own));
        }
    }

    let mut results: Vec<ArmEstimate> = arms
        .iter()
        .map(|arm| ArmEstimate {
            key: arm.key(),
            title: arm.title(),
            ips: Interval::default(),
            snips: Interval::default(),
            doubly_robust: None,
            failure_rate: Interval::default(),
            effective_sample_size: 0.0,
            matched: 0,
            unsupported: 0,
            clipped: 0,
            leaks: 0,
            leak_episodes: 0,
        })
        .collect();
    let mut rows: Vec<Row> = Vec::with_capacity(held.len());
    for (i, h) in &held {
        let e = &data.episodes[*i];
        let partition = dataset
            .partitions
            .get(h.partition)
            .ok_or(RankEvaluateError::Internal(
                "an episode of an unknown partition",
            ))?;
        let pool = Pool::of(h, partition, &profile.rank_prior)?;
        let Some((shown, propensity)) = e.shown_top() else {
            counts.held_out_unusable += 1;
            continue;
        };
        if pool.members.is_empty() {
            counts.held_out_unusable += 1;
            continue;
        }
        let reward = e.reward().unwrap_or(0.0);
        let failed = if e.outcome_status == Some(LoggedOutcome::Failed) {
            1.0
        } else {
            0.0
        };
        let epsilon = e.logging_policy.epsilon;
        let pool_size = e.logging_policy.pool_size.max(1) as f64;
        let q_shown = model.q(h.partition, &e.candidates[shown].memory_ref_digest);
        let mut per_arm = Vec::with_capacity(arms.len());
        for (a, outcome) in results.iter_mut().enumerate() {
            let (full, own) = rankers
                .get(&(a, h.partition))
                .ok_or(RankEvaluateError::Internal("missing ranker"))?;
            let order = full.rank(h, &pool)?.order;
            if let Some(own) = own {
                let alone = own.rank(h, &pool)?.order;
                let moved = order.iter().zip(&alone).filter(|(x, y)| x != y).count()
                    + order.len().abs_diff(alone.len());
                outcome.leaks += moved;
                if moved > 0 {
                    outcome.leak_episodes += 1;
                }
            }
            let top = order
                .first()
                .copied()
                .ok_or(RankEvaluateError::Internal("an arm ranked an empty pool"))?;
            let c = &e.candidates[top];
            let could_show = (1.0 - epsilon) * if c.policy_rank == Some(1) { 1.0 } else { 0.0 }
                + if c.in_pool { epsilon / pool_size } else { 0.0 };
            if could_show <= 0.0 {
                outcome.unsupported += 1;
            }
            let mut w = 0.0;
            if top == shown {
                w = 1.0 / propensity;
                outcome.matched += 1;
                if w >= WEIGHT_CLIP {
                    w = WEIGHT_CLIP;
                    outcome.clipped += 1;
                }
            }
            let dr = model.q(h.partition, &c.memory_ref_digest) + w * (reward - q_shown);
            per_arm.push((w, dr));
        }
        rows.push(Row {
            reward,
            failed,
            arms: per_arm,
        });
    }
    let reward_model = model.global.1 > 0;
    let find = |key: &str| arms.iter().position(|a| a.key() == key);
    let v0 = find(BOUNDED_UTILITY);
    let boot = bootstrap(&rows, arms.len(), v0, profile, seed, reward_model);
    for (a, r) in results.iter_mut().enumerate() {
        let (sw, sw2) = rows.iter().fold((0.0, 0.0), |(s, s2), row| {
            let w = row.arms[a].0;
            (s + w, s2 + w * w)
        });
        r.effective_sample_size = if sw2 > 0.0 { sw * sw / sw2 } else { 0.0 };
        r.ips = boot.arms[a].ips;
        r.snips = boot.arms[a].snips;
        r.doubly_robust = boot.arms[a].dr;
        r.failure_rate = boot.arms[a].failure;
    }
    let differences = results
        .iter()
        .enumerate()
        .skip(1)
        .map(|(a, r)| ArmDifference {
            key: r.key,
            ips: boot.differences[a].ips,
            snips: boot.differences[a].snips,
            doubly_robust: boot.differences[a].dr,
            failure_rate: boot.differences[a].failure,
        })
        .collect();
    let v1_versus_v0 = match (v0, find(BOUNDED_UTILITY_V1)) {
        (Some(_), Some(v1)) => boot.versus.get(v1).map(|b| ArmDifference {
            key: BOUNDED_UTILITY_V1,
            ips: b.ips,
            snips: b.snips,
            doubly_robust: b.dr,
            failure_rate: b.failure,
        }),
        _ => None,
    };
    Ok(Estimates {
        counts,
        episodes: rows.len(),
        logged_value: boot.logged,
        logged_failure_rate: boot.logged_failure,
        arms: results,
        differences,
        ledger: TrainingLedger {
            backend: state.backend,
            counters: state.counters,
            partitions: state.subjects.len(),
            inference_deliveries_removed: state.inference_deliveries,
        },
        reward_model,
        reducer_version: reducer_version.to_owned(),
        gated_arm: gated_arm(rules),
        v1_versus_v0,
    })
}

// ---------------------------------------------------------------------------------------
// The paired bootstrap
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    w: f64,
    wr: f64,
    wf: f64,
    dr: f64,
}

#[derive(Debug, Clone, Copy)]
struct Values {
    ips: Option<f64>,
    snips: Option<f64>,
    dr: Option<f64>,
    failure: Option<f64>,
}

fn values(s: Sums, n: usize, reward_model: bool) -> Values {
    let n = n as f64;
    Values {
        ips: (n > 0.0).then(|| s.wr / n),
        snips: (s.w > 0.0).then(|| s.wr / s.w),
        dr: (n > 0.0 && reward_model).then(|| s.dr / n),
        failure: (s.w > 0.0).then(|| s.wf / s.w),
    }
}

fn sums(rows: &[Row], picks: impl Iterator<Item = usize> + Clone, arms: usize) -> Vec<Sums> {
    let mut out = vec![Sums::default(); arms];
    for i in picks {
        let row = &rows[i];
        for (a, (w, dr)) in row.arms.iter().enumerate() {
            let s = &mut out[a];
            s.w += w;
            s.wr += w * row.reward;
            s.wf += w * row.failed;
            s.dr += dr;
        }
    }
    out
}

#[derive(Debug, Clone, Copy, Default)]
struct Boot {
    ips: Interval,
    snips: Interval,
    dr: Option<Interval>,
    failure: Interval,
}

struct Booted {
    arms: Vec<Boot>,
    differences: Vec<Boot>,
    /// Against the reference arm (empty without one).
    versus: Vec<Boot>,
    logged: Interval,
    logged_failure: Interval,
}

fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

fn interval(estimate: Option<f64>, mut samples: Vec<f64>, level: f64, n: usize) -> Interval {
    samples.retain(|v| v.is_finite());
    samples.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let ok = estimate.is_some();
    Interval {
        estimate,
        lower: percentile(&samples, tail).filter(|_| ok),
        upper: percentile(&samples, 1.0 - tail).filter(|_| ok),
        n,
    }
}

/// Point estimates on every episode; intervals from `evaluation.bootstrap_resamples`
/// resamples of the held-out episodes with replacement (one stream of `seed`), shared by
/// every arm, so the differences (against arm 1, and against `reference`) are paired.
fn bootstrap(
    rows: &[Row],
    arms: usize,
    reference: Option<usize>,
    profile: &EvaluationProfile,
    seed: u64,
    reward_model: bool,
) -> Booted {
    let n = rows.len();
    let level = profile.evaluation.confidence_level;
    let resamples = if n == 0 {
        0
    } else {
        profile.evaluation.bootstrap_resamples as usize
    };
    let full = sums(rows, 0..n, arms);
    let point: Vec<Values> = full.iter().map(|s| values(*s, n, reward_model)).collect();
    let logged_point = (n > 0).then(|| rows.iter().map(|r| r.reward).sum::<f64>() / n as f64);
    let failed_point = (n > 0).then(|| rows.iter().map(|r| r.failed).sum::<f64>() / n as f64);
    // samples[arm][estimator], diffs[arm][estimator]
    let mut samples = vec![[Vec::new(), Vec::new(), Vec::new(), Vec::new()]; arms];
    let mut diffs = vec![[Vec::new(), Vec::new(), Vec::new(), Vec::new()]; arms];
    let mut versus = vec![[Vec::new(), Vec::new(), Vec::new(), Vec::new()]; arms];
    let (mut logged, mut logged_failed) = (Vec::new(), Vec::new());
    let mut rng = Rng::stream(seed, "logged-bootstrap", 0);
    let mut picks = vec![0usize; n];
    for _ in 0..resamples {
        for p in picks.iter_mut() {
            *p = rng.below(n);
        }
        let s = sums(rows, picks.iter().copied(), arms);
        let v: Vec<Values> = s.iter().map(|s| values(*s, n, reward_model)).collect();
        logged.push(picks.iter().map(|&i| rows[i].reward).sum::<f64>() / n as f64);
        logged_failed.push(picks.iter().map(|&i| rows[i].failed).sum::<f64>() / n as f64);
        for a in 0..arms {
            let of = |x: &Values| [x.ips, x.snips, x.dr, x.failure];
            let (mine, base) = (of(&v[a]), of(&v[0]));
            let against = reference.and_then(|r| v.get(r)).map(of);
            for k in 0..4 {
                if let Some(x) = mine[k] {
                    samples[a][k].push(x);
                    if let Some(b) = base[k] {
                        diffs[a][k].push(x - b);
                    }
                    if let Some(r) = against.and_then(|r| r[k]) {
                        versus[a][k].push(x - r);
                    }
                }
            }
        }
    }
    let boot = |a: usize, est: [Option<f64>; 4], from: &mut Vec<[Vec<f64>; 4]>| {
        let [ips, snips, dr, failure] = std::mem::take(&mut from[a]);
        Boot {
            ips: interval(est[0], ips, level, n),
            snips: interval(est[1], snips, level, n),
            dr: reward_model.then(|| interval(est[2], dr, level, n)),
            failure: interval(est[3], failure, level, n),
        }
    };
    let arms_out: Vec<Boot> = (0..arms)
        .map(|a| {
            let p = point[a];
            boot(a, [p.ips, p.snips, p.dr, p.failure], &mut samples)
        })
        .collect();
    let d = |x: Option<f64>, y: Option<f64>| Some(x? - y?);
    let diff_out: Vec<Boot> = (0..arms)
        .map(|a| {
            let (p, b) = (point[a], point[0]);
            boot(
                a,
                [
                    d(p.ips, b.ips),
                    d(p.snips, b.snips),
                    d(p.dr, b.dr),
                    d(p.failure, b.failure),
                ],
                &mut diffs,
            )
        })
        .collect();
    let versus_out: Vec<Boot> = match reference.and_then(|r| point.get(r)) {
        None => Vec::new(),
        Some(&r) => (0..arms)
            .map(|a| {
                let p = point[a];
                boot(
                    a,
                    [
                        d(p.ips, r.ips),
                        d(p.snips, r.snips),
                        d(p.dr, r.dr),
                        d(p.failure, r.failure),
                    ],
                    &mut versus,
                )
            })
            .collect(),
    };
    Booted {
        arms: arms_out,
        differences: diff_out,
        versus: versus_out,
        logged: interval(logged_point, logged, level, n),
        logged_failure: interval(failed_point, logged_failed, level, n),
    }
}
