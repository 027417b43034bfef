//! Fair baselines: the learned comparison arms (hotness, off-policy MemRL, on-policy
//! MemRL) are tuned before they are compared, on a validation split of the training
//! episodes only, never on the held-out ones.
//!
//! The split is the latest `evaluation.validation_share` of the training episodes (time
//! order). Every point of a small fixed grid ([`HOTNESS_ALPHA`] × [`HOTNESS_HALF_LIFE_DAYS`],
//! [`MEMRL_ALPHA`] × [`MEMRL_MIX_WEIGHT`]) trains the arm on the episodes before the split
//! and ranks the semantic pool of every validation episode; the point with the highest
//! nDCG@k there wins (ties: the first in grid order), and the arm is then trained on every
//! training episode with it. Validation ground truth is the causal truth of the recalled
//! candidates, which only the simulator's [`super::dataset::Environment`] has; without it
//! (an episodes file), or with `evaluation.tune_baselines` 0, the profile's values are
//! used and the packet says so. The arm under evaluation (the rank-prior profile) is not tuned: the
//! verdict is about that profile. Pure: no I/O.

use super::arms::{
    Access, ArmRanking, ArmSettings, HotnessRanker, MemrlRanker, Pool, QValues, Ranker,
    access_counts, q_on_policy, q_values,
};
use super::dataset::{Dataset, HeldOutEpisode};
use super::error::RankEvaluateError;
use super::metrics::{Metric, TaskCosts, episode_values};
use super::profile::{EvaluationProfile, HotnessSettings, MemrlSettings};

/// The hotness weights tried.
pub const HOTNESS_ALPHA: [f64; 4] = [0.0, 0.1, 0.2, 0.4];
/// The hotness half-lives tried, in days.
pub const HOTNESS_HALF_LIFE_DAYS: [f64; 3] = [1.0, 7.0, 30.0];
/// The MemRL learning rates tried (both MemRL arms).
pub const MEMRL_ALPHA: [f64; 4] = [0.01, 0.03, 0.1, 0.3];
/// The MemRL mix weights (λ) tried (both MemRL arms).
pub const MEMRL_MIX_WEIGHT: [f64; 4] = [0.25, 0.5, 0.75, 0.9];

/// How an arm's values were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The best point of the grid on the validation split.
    ValidationGrid,
    /// The profile's values: tuning is off, or there is no validation ground truth.
    ProfileValues,
}

/// One grid point and its validation nDCG@k.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPoint {
    pub parameters: Vec<(&'static str, f64)>,
    pub validation_ndcg: Option<f64>,
}

/// How one learned arm was set up.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmTuning {
    pub arm: &'static str,
    pub method: Method,
    /// Why the profile's values were used (`tuning_disabled`,
    /// `no_validation_ground_truth`).
    pub reason: Option<&'static str>,
    /// The values the arm ranks the held-out episodes with.
    pub parameters: Vec<(&'static str, f64)>,
    pub validation_episodes: usize,
    /// The chosen point's validation nDCG@k.
    pub validation_ndcg: Option<f64>,
    pub grid: Vec<GridPoint>,
}

/// The settings of the learned arms for the run, and how each was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    pub settings: ArmSettings,
    pub arms: Vec<ArmTuning>,
}

impl Tuned {
    /// How arm `key` was set up, when it is a learned comparison arm.
    pub fn of(&self, key: &str) -> Option<&ArmTuning> {
        self.arms.iter().find(|a| a.arm == key)
    }
}

fn hotness_parameters(h: &HotnessSettings) -> Vec<(&'static str, f64)> {
    vec![("alpha", h.alpha), ("half_life_days", h.half_life_days)]
}

fn memrl_parameters(m: &MemrlSettings) -> Vec<(&'static str, f64)> {
    vec![("alpha", m.alpha), ("mix_weight", m.mix_weight)]
}

/// The validation episodes and their pools.
struct Validation {
    episodes: Vec<HeldOutEpisode>,
    pools: Vec<Pool>,
    k: usize,
}

impl Validation {
    /// nDCG@k (a ratio over answerable validation episodes) of one ranker per partition.
    fn ndcg<'a>(
        &self,
        ranker: &dyn Fn(usize) -> Box<dyn Ranker + 'a>,
    ) -> Result<Option<f64>, RankEvaluateError> {
        let (mut num, mut den) = (0.0, 0.0);
        for (episode, pool) in self.episodes.iter().zip(&self.pools) {
            let ranking: ArmRanking = ranker(episode.partition).rank(episode, pool)?;
            let values = episode_values(
                episode,
                &pool.members,
                &ranking,
                self.k,
                TaskCosts::default(),
            );
            num += values[Metric::Ndcg as usize].0;
            den += values[Metric::Ndcg as usize].1;
        }
        Ok((den > 0.0).then(|| num / den))
    }
}

/// The best grid point: highest validation nDCG, ties to the first.
fn best(grid: &[GridPoint]) -> Option<&GridPoint> {
    let mut chosen: Option<&GridPoint> = None;
    for point in grid {
        let better = match (
            chosen.and_then(|c| c.validation_ndcg),
            point.validation_ndcg,
        ) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(c), Some(v)) => v > c,
        };
        if chosen.is_none() || better {
            chosen = Some(point);
        }
    }
    chosen
}

fn untuned(profile: &EvaluationProfile, on_policy: bool, reason: &'static str) -> Tuned {
    let settings = ArmSettings::of_profile(profile);
    let entry = |arm, parameters| ArmTuning {
        arm,
        method: Method::ProfileValues,
        reason: Some(reason),
        parameters,
        validation_episodes: 0,
        validation_ndcg: None,
        grid: Vec::new(),
    };
    let mut arms = vec![
        entry("semantic_hotness", hotness_parameters(&settings.hotness)),
        entry("memrl", memrl_parameters(&settings.memrl)),
    ];
    if on_policy {
        arms.push(entry(
            "memrl_on_policy",
            memrl_parameters(&settings.memrl_on_policy),
        ));
    }
    Tuned { settings, arms }
}

/// Tunes the learned comparison arms of `dataset` on its validation split.
pub fn tune(dataset: &Dataset, profile: &EvaluationProfile) -> Result<Tuned, RankEvaluateError> {
    let n = dataset.training.len();
    let on_policy = !dataset.environment.is_empty();
    if profile.evaluation.tune_baselines < 0.5 {
        return Ok(untuned(profile, on_policy, "tuning_disabled"));
    }
    if dataset.environment.len() != n || n < 2 {
        return Ok(untuned(profile, on_policy, "no_validation_ground_truth"));
    }
    let held = ((n as f64 * profile.evaluation.validation_share).round() as usize).clamp(1, n - 1);
    let split = n - held;
    let fit = &dataset.training[..split];
    let mut validation = Validation {
        episodes: Vec::with_capacity(held),
        pools: Vec::with_capacity(held),
        k: profile.evaluation.k as usize,
    };
    for (episode, env) in dataset.training[split..]
        .iter()
        .zip(&dataset.environment[split..])
    {
        let partition =
            dataset
                .partitions
                .get(episode.partition)
                .ok_or(RankEvaluateError::Internal(
                    "training episode of an unknown partition",
                ))?;
        let held_out = HeldOutEpisode {
            partition: episode.partition,
            at: episode.at,
            candidates: env.candidates.clone(),
        };
        validation
            .pools
            .push(Pool::of(&held_out, partition, &profile.rank_prior)?);
        validation.episodes.push(held_out);
    }
    let episodes = validation.episodes.len();
    let mut settings = ArmSettings::of_profile(profile);
    let mut arms = Vec::new();

    let access: Access = access_counts(fit);
    let mut grid = Vec::new();
    for &alpha in &HOTNESS_ALPHA {
        for &half_life_days in &HOTNESS_HALF_LIFE_DAYS {
            let h = HotnessSettings {
                alpha,
                half_life_days,
            };
            let ndcg = validation.ndcg(&|partition_index| {
                Box::new(HotnessRanker {
                    access: &access,
                    settings: &h,
                    partition_index,
                })
            })?;
            grid.push(GridPoint {
                parameters: hotness_parameters(&h),
                validation_ndcg: ndcg,
            });
        }
    }
    arms.push(choose("semantic_hotness", grid, episodes));

    let memrl_grid =
        |learn: &dyn Fn(&MemrlSettings) -> QValues| -> Result<Vec<GridPoint>, RankEvaluateError> {
            let mut grid = Vec::new();
            for &alpha in &MEMRL_ALPHA {
                for &mix_weight in &MEMRL_MIX_WEIGHT {
                    let m = MemrlSettings {
                        alpha,
                        mix_weight,
                        ..profile.memrl.clone()
                    };
                    let q = learn(&m);
                    let ndcg = validation.ndcg(&|partition_index| {
                        Box::new(MemrlRanker {
                            q: &q,
                            settings: &m,
                            partition_index,
                        })
                    })?;
                    grid.push(GridPoint {
                        parameters: memrl_parameters(&m),
                        validation_ndcg: ndcg,
                    });
                }
            }
            Ok(grid)
        };
    // Off-policy Q-values depend on alpha only: learn once per alpha.
    let off_policy: Vec<(f64, QValues)> = MEMRL_ALPHA
        .iter()
        .map(|&alpha| {
            let m = MemrlSettings {
                alpha,
                ..profile.memrl.clone()
            };
            (alpha, q_values(fit, &m))
        })
        .collect();
    let grid = memrl_grid(&|m| {
        off_policy
            .iter()
            .find(|(a, _)| *a == m.alpha)
            .map(|(_, q)| q.clone())
            .unwrap_or_default()
    })?;
    arms.push(choose("memrl", grid, episodes));
    let grid =
        memrl_grid(&|m| q_on_policy(fit, &dataset.environment[..split], m, &profile.rank_prior))?;
    arms.push(choose("memrl_on_policy", grid, episodes));

    for arm in &arms {
        let value = |name: &str| {
            arm.parameters
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
        };
        match arm.arm {
            "semantic_hotness" => {
                settings.hotness.alpha = value("alpha").unwrap_or(settings.hotness.alpha);
                settings.hotness.half_life_days =
                    value("half_life_days").unwrap_or(settings.hotness.half_life_days);
            }
            "memrl" => {
                settings.memrl.alpha = value("alpha").unwrap_or(settings.memrl.alpha);
                settings.memrl.mix_weight =
                    value("mix_weight").unwrap_or(settings.memrl.mix_weight);
            }
            _ => {
                settings.memrl_on_policy.alpha =
                    value("alpha").unwrap_or(settings.memrl_on_policy.alpha);
                settings.memrl_on_policy.mix_weight =
                    value("mix_weight").unwrap_or(settings.memrl_on_policy.mix_weight);
            }
        }
    }
    Ok(Tuned { settings, arms })
}

fn choose(arm: &'static str, grid: Vec<GridPoint>, episodes: usize) -> ArmTuning {
    let chosen = best(&grid).cloned();
    ArmTuning {
        arm,
        method: Method::ValidationGrid,
        reason: None,
        parameters: chosen
            .as_ref()
            .map(|c| c.parameters.clone())
            .unwrap_or_default(),
        validation_episodes: episodes,
        validation_ndcg: chosen.and_then(|c| c.validation_ndcg),
        grid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(v: Option<f64>) -> GridPoint {
        GridPoint {
            parameters: vec![("alpha", v.unwrap_or(-1.0))],
            validation_ndcg: v,
        }
    }

    #[test]
    fn the_best_point_is_the_highest_and_ties_go_to_the_first() {
        let grid = [
            point(None),
            point(Some(0.5)),
            point(Some(0.7)),
            point(Some(0.7)),
        ];
        assert_eq!(best(&grid), Some(&grid[2]));
        assert_eq!(best(&[point(None)]), Some(&point(None)));
    }
}
