//! The compared arms and the training state they learn from.
//!
//! Every arm re-orders the same semantic pool of a held-out episode (the rank prior's
//! semantic stage: relevance floor and pool size of the profile under evaluation):
//!
//! 1. `semantic`: relevance alone (the real [`rank()`] with an empty utility view);
//! 2. `semantic_hotness`: `(1 − α)·relevance + α·hotness`, hotness blending access count
//!    and recency as OpenViking does (`sigmoid(ln(1 + count)) · 2^(−age / half-life)`);
//! 3. `bounded_utility`: the real [`rank()`] with the partition's subjects from the ledger;
//! 4. `bounded_utility_without_inference`: the same from a ledger that never received an
//!    `evaluator_inference` delivery;
//! 5. `memrl`: MemRL's second phase, `(1 − λ)·z(relevance) + λ·z(Q)` with z-scores inside
//!    the pool and `Q ← Q + α(r − Q)` from the terminal reward of every applied memory of
//!    the logged training episodes (off-policy);
//! 6. `bounded_utility_v1`: arm 3 with the same ledger's subjects reduced by
//!    `memory_utility_reducer_v1` (with the evaluated reducer's half-life when it names
//!    one): the same deliveries, v0 against v1 on the same episodes;
//! 7. `memrl_on_policy` (simulation only): the same ranking as arm 5, with Q learned
//!    on-policy: in every training episode it applies its own top choices in the
//!    simulated environment and learns from their outcomes.
//!
//! The gate qualifies arm 3 or arm 6: the one of the reducer the evaluated partitions
//! name ([`gated_arm`]). Each arm also says, per pool member, whether it attenuated it:
//! arms 3, 4 and 6 when the modifier fell below 1; arms without a modifier when their score fell below the score
//! their own semantic baseline gives (hotness: `hotness < relevance` at α > 0; MemRL:
//! `z(Q) < z(relevance)` at λ > 0). The learned arms' settings ([`ArmSettings`]) are the
//! profile's or the tuned ones ([`super::tuning`]). All arm state is kept per partition
//! (scope and snapshot pair). [`Arm`] is a trait so that tests can add a deliberately
//! leaking double. Pure: no I/O.

use std::collections::BTreeMap;

use crate::ranking::prior::{Candidate, Partition, Profile, UtilityView, rank};
use crate::utility::observation::EvidenceBasis;
use crate::utility::reducer::{Rules, V1Params};
use crate::wire::json::Value;

use super::dataset::{Dataset, Environment, HeldOutEpisode, TrainingEpisode};
use super::error::RankEvaluateError;
use super::ledger::{
    Counters, LedgerOpener, PartitionKey, SubjectFacts, is_inference, key_of, subject_facts,
};
use super::profile::{EvaluationProfile, HotnessSettings, MemrlSettings};

const MICROS_PER_DAY: f64 = 86_400_000_000.0;

/// The settings of the learned comparison arms for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmSettings {
    pub hotness: HotnessSettings,
    pub memrl: MemrlSettings,
    pub memrl_on_policy: MemrlSettings,
}

impl ArmSettings {
    /// The profile's values, untuned.
    pub fn of_profile(profile: &EvaluationProfile) -> ArmSettings {
        ArmSettings {
            hotness: profile.hotness.clone(),
            memrl: profile.memrl.clone(),
            memrl_on_policy: profile.memrl.clone(),
        }
    }
}

/// `(partition, digest)` → (access count, last access in microseconds).
pub type Access = BTreeMap<(usize, String), (u64, i128)>;
/// `(partition, digest)` → Q-value.
pub type QValues = BTreeMap<(usize, String), f64>;

/// Every recall of `training` counts as an access of each recalled memory.
pub fn access_counts(training: &[TrainingEpisode]) -> Access {
    let mut access = Access::new();
    for episode in training {
        for digest in &episode.recalled {
            let entry = access
                .entry((episode.partition, digest.clone()))
                .or_insert((0, episode.at));
            entry.0 += 1;
            entry.1 = entry.1.max(episode.at);
        }
    }
    access
}

/// MemRL's Monte-Carlo update over the logged episodes: every applied memory learns the
/// episode's terminal reward (off-policy: the behaviour policy chose what was applied).
pub fn q_values(training: &[TrainingEpisode], memrl: &MemrlSettings) -> QValues {
    let mut q = QValues::new();
    for episode in training {
        for digest in &episode.used {
            let value = q
                .entry((episode.partition, digest.clone()))
                .or_insert(memrl.q_init);
            *value += memrl.alpha * (episode.reward - *value);
        }
    }
    q
}

/// MemRL learning on-policy in the simulated environment: in every training episode (in
/// time order) it ranks the semantic pool of the recall with its current Q-values,
/// applies its own top `count` (the logged exploration, when the agent explored, is kept:
/// same draws), observes the outcome under the episode's own random draw and updates the
/// Q-value of what it applied. `environment[i]` belongs to `training[i]`.
pub fn q_on_policy(
    training: &[TrainingEpisode],
    environment: &[Environment],
    memrl: &MemrlSettings,
    profile: &Profile,
) -> QValues {
    let mut q = QValues::new();
    for (episode, env) in training.iter().zip(environment) {
        let applied: Vec<usize> = match &env.explored {
            Some(sample) => sample.clone(),
            None => {
                let pool: Vec<usize> = (0..env.candidates.len())
                    .filter(|&i| env.candidates[i].relevance >= profile.semantic_floor)
                    .take(profile.candidate_pool)
                    .collect();
                let relevance: Vec<f64> =
                    pool.iter().map(|&i| env.candidates[i].relevance).collect();
                let values: Vec<f64> = pool
                    .iter()
                    .map(|&i| {
                        q.get(&(episode.partition, env.candidates[i].digest.clone()))
                            .copied()
                            .unwrap_or(memrl.q_init)
                    })
                    .collect();
                let scores = memrl_scores(&relevance, &values, memrl.mix_weight);
                let mut ranked: Vec<usize> = (0..pool.len()).collect();
                ranked.sort_by(|&a, &b| {
                    let (ca, cb) = (&env.candidates[pool[a]], &env.candidates[pool[b]]);
                    scores[b]
                        .total_cmp(&scores[a])
                        .then_with(|| cb.relevance.total_cmp(&ca.relevance))
                        .then_with(|| ca.digest.cmp(&cb.digest))
                });
                let mut order: Vec<usize> = ranked.into_iter().map(|r| pool[r]).collect();
                order.extend((0..env.candidates.len()).filter(|i| !pool.contains(i)));
                order.truncate(env.count);
                order
            }
        };
        let reward = if env.succeeds(&applied) {
            memrl.success_reward
        } else {
            memrl.failure_reward
        };
        for &i in &applied {
            if let Some(c) = env.candidates.get(i) {
                let value = q
                    .entry((episode.partition, c.digest.clone()))
                    .or_insert(memrl.q_init);
                *value += memrl.alpha * (reward - *value);
            }
        }
    }
    q
}

/// What the arms learn from: the subjects read back from two ledgers and the access and
/// reward traffic, per partition.
#[derive(Debug)]
pub struct TrainingState {
    /// Every partition's subjects from the ledger that received every delivery.
    pub subjects: BTreeMap<PartitionKey, Vec<SubjectFacts>>,
    /// The same ledger's subjects under `memory_utility_reducer_v1` (arm 6).
    pub subjects_v1: BTreeMap<PartitionKey, Vec<SubjectFacts>>,
    /// The v1 parameters arm 6 reduced them with.
    pub v1: V1Params,
    /// The same from the ledger that received every delivery except
    /// `evaluator_inference` ones (arm 4).
    pub subjects_without_inference: BTreeMap<PartitionKey, Vec<SubjectFacts>>,
    /// Counters of the full ledger.
    pub counters: Counters,
    /// The ledger's storage name.
    pub backend: &'static str,
    /// Access counts and last accesses (arm 2).
    pub access: Access,
    /// Off-policy Q-values (arm 5).
    pub q: QValues,
    /// On-policy Q-values (arm 7; empty without an environment).
    pub q_on_policy: QValues,
    /// Deliveries left out of arm 4's ledger.
    pub inference_deliveries: usize,
}

fn facts(
    subjects: BTreeMap<PartitionKey, Vec<Value>>,
) -> Result<BTreeMap<PartitionKey, Vec<SubjectFacts>>, RankEvaluateError> {
    subjects
        .into_iter()
        .map(|(k, v)| {
            Ok((
                k,
                v.iter().map(subject_facts).collect::<Result<Vec<_>, _>>()?,
            ))
        })
        .collect()
}

impl TrainingState {
    /// Replays the dataset's training traffic: every delivery into two fresh ledgers
    /// (through [`super::ledger::EvaluationLedger::deliver`]), reads their subjects back
    /// (the full ledger's under v0 and under v1, [`v1_params`]), and replays accesses and
    /// Q-updates in training order with `settings`.
    pub fn build(
        dataset: &Dataset,
        settings: &ArmSettings,
        profile: &EvaluationProfile,
        opener: &dyn LedgerOpener,
    ) -> Result<TrainingState, RankEvaluateError> {
        let mut ledger = opener.open()?;
        let mut without = opener.open()?;
        let mut inference_deliveries = 0;
        for observation in &dataset.deliveries {
            ledger.deliver(observation)?;
            if is_inference(observation) {
                inference_deliveries += 1;
            } else {
                without.deliver(observation)?;
            }
        }
        let v1 = v1_params(dataset)?;
        let (subjects, counters) = ledger.read_back()?;
        let (subjects_v1, _) = ledger.read_back_under(Rules::V1(v1))?;
        let (subjects_without, _) = without.read_back()?;
        Ok(TrainingState {
            subjects: facts(subjects)?,
            subjects_v1: facts(subjects_v1)?,
            v1,
            subjects_without_inference: facts(subjects_without)?,
            counters,
            backend: ledger.backend(),
            access: access_counts(&dataset.training),
            q: q_values(&dataset.training, &settings.memrl),
            q_on_policy: q_on_policy(
                &dataset.training,
                &dataset.environment,
                &settings.memrl_on_policy,
                &profile.rank_prior,
            ),
            inference_deliveries,
        })
    }
}

/// The parameters of arm 6: the evaluated reducer's when it is a
/// `memory_utility_reducer_v1` one, else v1 without decay.
pub fn v1_params(dataset: &Dataset) -> Result<V1Params, RankEvaluateError> {
    Ok(dataset.reducer_rules()?.v1().unwrap_or_default())
}

/// The key of the arm the gate qualifies: `bounded_utility_v1` when the evaluated
/// partitions name a `memory_utility_reducer_v1` version, else `bounded_utility`.
pub fn gated_arm(rules: Rules) -> &'static str {
    match rules {
        Rules::V0 => BOUNDED_UTILITY,
        Rules::V1(_) => BOUNDED_UTILITY_V1,
    }
}

/// Arm 3's key.
pub const BOUNDED_UTILITY: &str = "bounded_utility";
/// Arm 6's key.
pub const BOUNDED_UTILITY_V1: &str = "bounded_utility_v1";

/// The semantic pool of one held-out episode: candidate indices in semantic order.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    pub candidates: Vec<Candidate>,
    pub members: Vec<usize>,
}

impl Pool {
    /// Runs the rank prior's semantic stage (no utility) on the episode's candidates.
    pub fn of(
        episode: &HeldOutEpisode,
        partition: &Partition,
        profile: &Profile,
    ) -> Result<Pool, RankEvaluateError> {
        let candidates = episode
            .candidates
            .iter()
            .map(|c| Candidate::new(&c.digest, c.relevance))
            .collect::<Result<Vec<_>, _>>()?;
        let ranking = rank(
            &candidates,
            &UtilityView::empty(partition.clone()),
            partition,
            profile,
        )?;
        let members = indices(&candidates, &ranking.order())?;
        Ok(Pool {
            candidates,
            members,
        })
    }
}

fn indices(candidates: &[Candidate], order: &[&str]) -> Result<Vec<usize>, RankEvaluateError> {
    order
        .iter()
        .map(|d| {
            candidates
                .iter()
                .position(|c| c.memory_ref_digest == *d)
                .ok_or(RankEvaluateError::Internal(
                    "ranking returned an unknown digest",
                ))
        })
        .collect()
}

/// What an arm needs to prepare itself for one partition.
#[derive(Clone, Copy)]
pub struct ArmContext<'a> {
    pub state: &'a TrainingState,
    pub profile: &'a EvaluationProfile,
    pub settings: &'a ArmSettings,
    pub partition: &'a Partition,
    pub partition_index: usize,
}

/// One arm's ranking of one pool.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmRanking {
    /// The pool's candidate indices in the arm's final order (a permutation of
    /// `pool.members`).
    pub order: Vec<usize>,
    /// Aligned with `order`: whether the arm attenuated that candidate (modifier below 1,
    /// or score below the arm's semantic baseline score).
    pub attenuated: Vec<bool>,
}

/// An arm prepared for one partition.
pub trait Ranker {
    /// This arm's ranking of the pool.
    fn rank(&self, episode: &HeldOutEpisode, pool: &Pool) -> Result<ArmRanking, RankEvaluateError>;
}

/// One compared arm.
pub trait Arm {
    /// The arm's key in the verdict packet.
    fn key(&self) -> &'static str;
    /// A short human description.
    fn title(&self) -> &'static str;
    /// Prepares the arm for one partition from the training state.
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError>;
    /// The evidence tiers the arm needs collected (their cost is part of its task cost).
    fn evidence(&self, _profile: &Profile) -> Vec<EvidenceBasis> {
        Vec::new()
    }
}

/// Sorts pool members by a score: score descending, then relevance descending, then
/// digest ascending (the rank prior's tie rule). `scores` and `flags` are aligned with
/// `pool.members`.
fn by_score(pool: &Pool, scores: &[f64], flags: &[bool]) -> ArmRanking {
    let mut order: Vec<(usize, f64, bool)> = pool
        .members
        .iter()
        .copied()
        .zip(scores.iter().copied())
        .zip(flags.iter().copied())
        .map(|((i, s), f)| (i, s, f))
        .collect();
    order.sort_by(|(a, sa, _), (b, sb, _)| {
        let (ca, cb) = (&pool.candidates[*a], &pool.candidates[*b]);
        sb.total_cmp(sa)
            .then_with(|| cb.relevance.total_cmp(&ca.relevance))
            .then_with(|| ca.memory_ref_digest.cmp(&cb.memory_ref_digest))
    });
    ArmRanking {
        order: order.iter().map(|(i, _, _)| *i).collect(),
        attenuated: order.iter().map(|(_, _, f)| *f).collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Arm 1
// ---------------------------------------------------------------------------------------

/// Arm 1: semantic relevance alone.
pub struct Semantic;

struct SemanticRanker;

impl Ranker for SemanticRanker {
    fn rank(&self, _: &HeldOutEpisode, pool: &Pool) -> Result<ArmRanking, RankEvaluateError> {
        Ok(ArmRanking {
            order: pool.members.clone(),
            attenuated: vec![false; pool.members.len()],
        })
    }
}

impl Arm for Semantic {
    fn key(&self) -> &'static str {
        "semantic"
    }
    fn title(&self) -> &'static str {
        "semantic relevance alone"
    }
    fn prepare<'a>(&self, _: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        Ok(Box::new(SemanticRanker))
    }
}

// ---------------------------------------------------------------------------------------
// Arm 2
// ---------------------------------------------------------------------------------------

/// OpenViking's hotness of a memory: `sigmoid(ln(1 + count)) · 2^(−age_days / half-life)`,
/// 0 when it was never accessed.
pub fn hotness(access: Option<(u64, i128)>, now: i128, settings: &HotnessSettings) -> f64 {
    let Some((count, last)) = access else {
        return 0.0;
    };
    let frequency = 1.0 / (1.0 + (-(count as f64).ln_1p()).exp());
    let age_days = ((now - last) as f64 / MICROS_PER_DAY).max(0.0);
    frequency * (-std::f64::consts::LN_2 * age_days / settings.half_life_days).exp()
}

/// Arm 2: semantic relevance blended with access hotness.
pub struct SemanticHotness;

/// Arm 2 prepared for one partition (also what tuning scores a grid point with).
pub struct HotnessRanker<'a> {
    pub access: &'a Access,
    pub settings: &'a HotnessSettings,
    pub partition_index: usize,
}

impl Ranker for HotnessRanker<'_> {
    fn rank(&self, episode: &HeldOutEpisode, pool: &Pool) -> Result<ArmRanking, RankEvaluateError> {
        let h = self.settings;
        let (scores, flags): (Vec<f64>, Vec<bool>) = pool
            .members
            .iter()
            .map(|&i| {
                let c = &pool.candidates[i];
                let access = self
                    .access
                    .get(&(self.partition_index, c.memory_ref_digest.clone()))
                    .copied();
                let hot = hotness(access, episode.at, h);
                (
                    (1.0 - h.alpha) * c.relevance + h.alpha * hot,
                    h.alpha > 0.0 && hot < c.relevance,
                )
            })
            .unzip();
        Ok(by_score(pool, &scores, &flags))
    }
}

impl Arm for SemanticHotness {
    fn key(&self) -> &'static str {
        "semantic_hotness"
    }
    fn title(&self) -> &'static str {
        "semantic relevance plus access hotness (OpenViking blend)"
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        Ok(Box::new(HotnessRanker {
            access: &ctx.state.access,
            settings: &ctx.settings.hotness,
            partition_index: ctx.partition_index,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// Arms 3, 4 and 6
// ---------------------------------------------------------------------------------------

/// Which subjects a bounded-utility arm ranks with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilitySubjects {
    /// Arm 3: every delivery, the v0 reducer.
    All,
    /// Arm 4: without `evaluator_inference` deliveries, the v0 reducer.
    WithoutInference,
    /// Arm 6: every delivery, `memory_utility_reducer_v1`.
    V1,
}

/// Arms 3, 4 and 6: relevance × the bounded modifier of the real rank prior, with utility
/// read from the ledger.
pub struct BoundedUtility {
    pub subjects: UtilitySubjects,
}

/// A ranker over a prepared utility view (also used by tests' doubles).
pub struct ViewRanker<'a> {
    pub view: UtilityView,
    pub partition: &'a Partition,
    pub profile: &'a Profile,
}

impl Ranker for ViewRanker<'_> {
    fn rank(&self, _: &HeldOutEpisode, pool: &Pool) -> Result<ArmRanking, RankEvaluateError> {
        let ranking = rank(&pool.candidates, &self.view, self.partition, self.profile)?;
        let order = indices(&pool.candidates, &ranking.order())?;
        let attenuated = ranking
            .ranked
            .iter()
            .map(|r| r.modifier.value < 1.0)
            .collect();
        let mut a = order.clone();
        let mut b = pool.members.clone();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return Err(RankEvaluateError::Internal(
                "the rank prior ranked another pool than the semantic stage",
            ));
        }
        Ok(ArmRanking { order, attenuated })
    }
}

impl Arm for BoundedUtility {
    fn key(&self) -> &'static str {
        match self.subjects {
            UtilitySubjects::All => BOUNDED_UTILITY,
            UtilitySubjects::WithoutInference => "bounded_utility_without_inference",
            UtilitySubjects::V1 => BOUNDED_UTILITY_V1,
        }
    }
    fn title(&self) -> &'static str {
        match self.subjects {
            UtilitySubjects::All => {
                "semantic relevance times the bounded utility modifier (rank prior, reducer v0)"
            }
            UtilitySubjects::WithoutInference => {
                "the same with every evaluator_inference observation removed from the ledger"
            }
            UtilitySubjects::V1 => {
                "the same ledger reduced by memory_utility_reducer_v1 (per-tier Beta posterior, credible-bound utility)"
            }
        }
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        let all = match self.subjects {
            UtilitySubjects::All => &ctx.state.subjects,
            UtilitySubjects::WithoutInference => &ctx.state.subjects_without_inference,
            UtilitySubjects::V1 => &ctx.state.subjects_v1,
        };
        let subjects = all
            .get(&key_of(ctx.partition))
            .map_or(&[][..], Vec::as_slice);
        let view = UtilityView::new(
            ctx.partition.clone(),
            subjects.iter().map(|s| s.utility.clone()),
        )?;
        Ok(Box::new(ViewRanker {
            view,
            partition: ctx.partition,
            profile: &ctx.profile.rank_prior,
        }))
    }
    fn evidence(&self, profile: &Profile) -> Vec<EvidenceBasis> {
        EvidenceBasis::ALL
            .iter()
            .copied()
            .filter(|&b| b != EvidenceBasis::Insufficient && profile.admits(b))
            .filter(|&b| {
                !(self.subjects == UtilitySubjects::WithoutInference
                    && b == EvidenceBasis::EvaluatorInference)
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Arms 5 and 7
// ---------------------------------------------------------------------------------------

/// z-scores of `values` (population standard deviation); all 0 when they do not vary.
pub fn z_scores(values: &[f64]) -> Vec<f64> {
    let n = values.len() as f64;
    if values.is_empty() {
        return Vec::new();
    }
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let sd = var.sqrt();
    if sd <= 1e-12 {
        return vec![0.0; values.len()];
    }
    values.iter().map(|v| (v - mean) / sd).collect()
}

/// MemRL's mixed scores `(1 − λ)·z(relevance) + λ·z(Q)`.
pub fn memrl_scores(relevance: &[f64], q: &[f64], mix_weight: f64) -> Vec<f64> {
    let (zr, zq) = (z_scores(relevance), z_scores(q));
    zr.iter()
        .zip(&zq)
        .map(|(r, q)| (1.0 - mix_weight) * r + mix_weight * q)
        .collect()
}

/// Arm 5: MemRL-style Q-values from the terminal rewards of the logged episodes.
pub struct Memrl;

/// Arm 7: the same ranking with Q-values learned on-policy in the simulated environment.
pub struct MemrlOnPolicy;

/// Arms 5 and 7 prepared for one partition (also what tuning scores a grid point with).
pub struct MemrlRanker<'a> {
    pub q: &'a QValues,
    pub settings: &'a MemrlSettings,
    pub partition_index: usize,
}

impl Ranker for MemrlRanker<'_> {
    fn rank(&self, _: &HeldOutEpisode, pool: &Pool) -> Result<ArmRanking, RankEvaluateError> {
        let m = self.settings;
        let relevance: Vec<f64> = pool
            .members
            .iter()
            .map(|&i| pool.candidates[i].relevance)
            .collect();
        let q: Vec<f64> = pool
            .members
            .iter()
            .map(|&i| {
                self.q
                    .get(&(
                        self.partition_index,
                        pool.candidates[i].memory_ref_digest.clone(),
                    ))
                    .copied()
                    .unwrap_or(m.q_init)
            })
            .collect();
        let scores = memrl_scores(&relevance, &q, m.mix_weight);
        let (zr, zq) = (z_scores(&relevance), z_scores(&q));
        let flags: Vec<bool> = zr
            .iter()
            .zip(&zq)
            .map(|(r, q)| m.mix_weight > 0.0 && q < r)
            .collect();
        Ok(by_score(pool, &scores, &flags))
    }
}

impl Arm for Memrl {
    fn key(&self) -> &'static str {
        "memrl"
    }
    fn title(&self) -> &'static str {
        "MemRL-style: z-scored similarity mixed with a Q-value from the logged terminal rewards (off-policy)"
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        Ok(Box::new(MemrlRanker {
            q: &ctx.state.q,
            settings: &ctx.settings.memrl,
            partition_index: ctx.partition_index,
        }))
    }
}

impl Arm for MemrlOnPolicy {
    fn key(&self) -> &'static str {
        "memrl_on_policy"
    }
    fn title(&self) -> &'static str {
        "MemRL-style, Q learned on-policy: it applies its own top choices in the simulated training episodes"
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        Ok(Box::new(MemrlRanker {
            q: &ctx.state.q_on_policy,
            settings: &ctx.settings.memrl_on_policy,
            partition_index: ctx.partition_index,
        }))
    }
}

/// The six arms every dataset supports, in their numbered order.
pub fn standard_arms() -> Vec<Box<dyn Arm>> {
    vec![
        Box::new(Semantic),
        Box::new(SemanticHotness),
        Box::new(BoundedUtility {
            subjects: UtilitySubjects::All,
        }),
        Box::new(BoundedUtility {
            subjects: UtilitySubjects::WithoutInference,
        }),
        Box::new(Memrl),
        Box::new(BoundedUtility {
            subjects: UtilitySubjects::V1,
        }),
    ]
}

/// The arms of `dataset`: the six standard ones, and the on-policy MemRL arm when the
/// dataset has an environment to act in (a simulation).
pub fn arms_for(dataset: &Dataset) -> Vec<Box<dyn Arm>> {
    let mut arms = standard_arms();
    if !dataset.environment.is_empty() {
        arms.push(Box::new(MemrlOnPolicy));
    }
    arms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotness_blends_frequency_and_recency() {
        let s = HotnessSettings::default();
        assert_eq!(hotness(None, 0, &s), 0.0);
        let fresh = hotness(Some((3, 0)), 0, &s);
        assert!(
            (fresh - 0.8).abs() < 1e-12,
            "sigmoid(ln 4) = 4/5, got {fresh}"
        );
        let week = hotness(Some((3, 0)), (7.0 * MICROS_PER_DAY) as i128, &s);
        assert!(
            (week - 0.4).abs() < 1e-12,
            "one half-life halves it, got {week}"
        );
    }

    #[test]
    fn z_scores_are_zero_for_constant_values() {
        assert_eq!(z_scores(&[2.0, 2.0]), vec![0.0, 0.0]);
        let z = z_scores(&[1.0, 3.0]);
        assert!((z[0] + 1.0).abs() < 1e-12 && (z[1] - 1.0).abs() < 1e-12);
    }
}
