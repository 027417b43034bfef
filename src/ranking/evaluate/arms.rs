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
//!    the pool and `Q ← Q + α(r − Q)` from the terminal reward of every applied memory.
//!
//! All arm state is kept per partition (scope and snapshot pair). [`Arm`] is a trait so
//! that tests can add a deliberately leaking double. Pure: no I/O.

use std::collections::BTreeMap;

use crate::ranking::prior::{Candidate, Partition, Profile, UtilityView, rank};
use crate::wire::json::Value;

use super::dataset::{Dataset, HeldOutEpisode};
use super::error::RankEvaluateError;
use super::ledger::{
    Counters, LedgerOpener, PartitionKey, SubjectFacts, is_inference, key_of, subject_facts,
};
use super::profile::{EvaluationProfile, HotnessSettings, MemrlSettings};

const MICROS_PER_DAY: f64 = 86_400_000_000.0;

/// What the arms learn from: the subjects read back from two ledgers and the access and
/// reward traffic, per partition.
#[derive(Debug)]
pub struct TrainingState {
    /// Every partition's subjects from the ledger that received every delivery.
    pub subjects: BTreeMap<PartitionKey, Vec<SubjectFacts>>,
    /// The same from the ledger that received every delivery except
    /// `evaluator_inference` ones (arm 4).
    pub subjects_without_inference: BTreeMap<PartitionKey, Vec<SubjectFacts>>,
    /// Counters of the full ledger.
    pub counters: Counters,
    /// The ledger's storage name.
    pub backend: &'static str,
    /// `(partition, digest)` → (access count, last access in microseconds).
    pub access: BTreeMap<(usize, String), (u64, i128)>,
    /// `(partition, digest)` → MemRL Q-value.
    pub q: BTreeMap<(usize, String), f64>,
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
    /// (through [`super::ledger::EvaluationLedger::deliver`]), reads their subjects back, and replays
    /// accesses and Q-updates in training order.
    pub fn build(
        dataset: &Dataset,
        memrl: &MemrlSettings,
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
        let (subjects, counters) = ledger.read_back()?;
        let (subjects_without, _) = without.read_back()?;
        let mut state = TrainingState {
            subjects: facts(subjects)?,
            subjects_without_inference: facts(subjects_without)?,
            counters,
            backend: ledger.backend(),
            access: BTreeMap::new(),
            q: BTreeMap::new(),
            inference_deliveries,
        };
        for episode in &dataset.training {
            for digest in &episode.recalled {
                let entry = state
                    .access
                    .entry((episode.partition, digest.clone()))
                    .or_insert((0, episode.at));
                entry.0 += 1;
                entry.1 = entry.1.max(episode.at);
            }
            for digest in &episode.used {
                let q = state
                    .q
                    .entry((episode.partition, digest.clone()))
                    .or_insert(memrl.q_init);
                *q += memrl.alpha * (episode.reward - *q);
            }
        }
        Ok(state)
    }
}

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
    pub partition: &'a Partition,
    pub partition_index: usize,
}

/// An arm prepared for one partition.
pub trait Ranker {
    /// The pool's candidate indices in this arm's final order (a permutation of
    /// `pool.members`).
    fn order(&self, episode: &HeldOutEpisode, pool: &Pool)
    -> Result<Vec<usize>, RankEvaluateError>;
}

/// One compared arm.
pub trait Arm {
    /// The arm's key in the verdict packet.
    fn key(&self) -> &'static str;
    /// A short human description.
    fn title(&self) -> &'static str;
    /// Prepares the arm for one partition from the training state.
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError>;
}

/// Sorts pool members by a score: score descending, then relevance descending, then
/// digest ascending (the rank prior's tie rule).
fn by_score(pool: &Pool, scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<(usize, f64)> = pool
        .members
        .iter()
        .copied()
        .zip(scores.iter().copied())
        .collect();
    order.sort_by(|(a, sa), (b, sb)| {
        let (ca, cb) = (&pool.candidates[*a], &pool.candidates[*b]);
        sb.total_cmp(sa)
            .then_with(|| cb.relevance.total_cmp(&ca.relevance))
            .then_with(|| ca.memory_ref_digest.cmp(&cb.memory_ref_digest))
    });
    order.into_iter().map(|(i, _)| i).collect()
}

// ---------------------------------------------------------------------------------------
// Arm 1
// ---------------------------------------------------------------------------------------

/// Arm 1: semantic relevance alone.
pub struct Semantic;

struct SemanticRanker;

impl Ranker for SemanticRanker {
    fn order(&self, _: &HeldOutEpisode, pool: &Pool) -> Result<Vec<usize>, RankEvaluateError> {
        Ok(pool.members.clone())
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

struct HotnessRanker<'a> {
    ctx: ArmContext<'a>,
}

impl Ranker for HotnessRanker<'_> {
    fn order(
        &self,
        episode: &HeldOutEpisode,
        pool: &Pool,
    ) -> Result<Vec<usize>, RankEvaluateError> {
        let h = &self.ctx.profile.hotness;
        let scores: Vec<f64> = pool
            .members
            .iter()
            .map(|&i| {
                let c = &pool.candidates[i];
                let access = self
                    .ctx
                    .state
                    .access
                    .get(&(self.ctx.partition_index, c.memory_ref_digest.clone()))
                    .copied();
                (1.0 - h.alpha) * c.relevance + h.alpha * hotness(access, episode.at, h)
            })
            .collect();
        Ok(by_score(pool, &scores))
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
        Ok(Box::new(HotnessRanker { ctx }))
    }
}

// ---------------------------------------------------------------------------------------
// Arms 3 and 4
// ---------------------------------------------------------------------------------------

/// Arm 3 (`without_inference: false`) or arm 4 (`true`): relevance × the bounded
/// modifier of the real rank prior, with utility read from the ledger.
pub struct BoundedUtility {
    pub without_inference: bool,
}

/// A ranker over a prepared utility view (also used by tests' doubles).
pub struct ViewRanker<'a> {
    pub view: UtilityView,
    pub partition: &'a Partition,
    pub profile: &'a Profile,
}

impl Ranker for ViewRanker<'_> {
    fn order(&self, _: &HeldOutEpisode, pool: &Pool) -> Result<Vec<usize>, RankEvaluateError> {
        let ranking = rank(&pool.candidates, &self.view, self.partition, self.profile)?;
        let order = indices(&pool.candidates, &ranking.order())?;
        let mut a = order.clone();
        let mut b = pool.members.clone();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return Err(RankEvaluateError::Internal(
                "the rank prior ranked another pool than the semantic stage",
            ));
        }
        Ok(order)
    }
}

impl Arm for BoundedUtility {
    fn key(&self) -> &'static str {
        if self.without_inference {
            "bounded_utility_without_inference"
        } else {
            "bounded_utility"
        }
    }
    fn title(&self) -> &'static str {
        if self.without_inference {
            "the same with every evaluator_inference observation removed from the ledger"
        } else {
            "semantic relevance times the bounded utility modifier (rank prior)"
        }
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        let all = if self.without_inference {
            &ctx.state.subjects_without_inference
        } else {
            &ctx.state.subjects
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
}

// ---------------------------------------------------------------------------------------
// Arm 5
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

/// Arm 5: MemRL-style Q-values from terminal rewards.
pub struct Memrl;

struct MemrlRanker<'a> {
    ctx: ArmContext<'a>,
}

impl Ranker for MemrlRanker<'_> {
    fn order(&self, _: &HeldOutEpisode, pool: &Pool) -> Result<Vec<usize>, RankEvaluateError> {
        let m = &self.ctx.profile.memrl;
        let relevance: Vec<f64> = pool
            .members
            .iter()
            .map(|&i| pool.candidates[i].relevance)
            .collect();
        let q: Vec<f64> = pool
            .members
            .iter()
            .map(|&i| {
                self.ctx
                    .state
                    .q
                    .get(&(
                        self.ctx.partition_index,
                        pool.candidates[i].memory_ref_digest.clone(),
                    ))
                    .copied()
                    .unwrap_or(m.q_init)
            })
            .collect();
        let (zr, zq) = (z_scores(&relevance), z_scores(&q));
        let scores: Vec<f64> = zr
            .iter()
            .zip(&zq)
            .map(|(r, q)| (1.0 - m.mix_weight) * r + m.mix_weight * q)
            .collect();
        Ok(by_score(pool, &scores))
    }
}

impl Arm for Memrl {
    fn key(&self) -> &'static str {
        "memrl"
    }
    fn title(&self) -> &'static str {
        "MemRL-style: z-scored similarity mixed with a Q-value from terminal rewards"
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        Ok(Box::new(MemrlRanker { ctx }))
    }
}

/// The five arms, in their numbered order.
pub fn standard_arms() -> Vec<Box<dyn Arm>> {
    vec![
        Box::new(Semantic),
        Box::new(SemanticHotness),
        Box::new(BoundedUtility {
            without_inference: false,
        }),
        Box::new(BoundedUtility {
            without_inference: true,
        }),
        Box::new(Memrl),
    ]
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
