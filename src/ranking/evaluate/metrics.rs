//! Per-episode ranking metrics against the hidden ground truth, and the seeded paired
//! bootstrap that turns them into estimates with percentile intervals.
//!
//! Every metric is a ratio estimator `Σ numerator / Σ denominator` over held-out episodes
//! (an episode that cannot inform a metric contributes 0/0), so a bootstrap resample of
//! episodes recomputes each ratio exactly. Resamples are shared by all arms, which makes
//! the differences against arm 1 (and against the arm under evaluation) paired. Pure: no
//! I/O.

use super::arms::ArmRanking;
use super::dataset::HeldOutEpisode;
use super::rng::Rng;

/// The metrics, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    /// nDCG@k over episodes whose pool holds a truly helpful memory.
    Ndcg,
    /// Top-ranked memory truly helpful, same episodes.
    SuccessAt1,
    /// Truly harmful memories in the top k, every episode with a pool.
    HarmfulAtK,
    /// Cost of a task, answerable episodes: the memories read down to the first truly
    /// helpful one, plus the arm's evidence cost per task.
    TaskCost,
    /// Truly helpful pool members the arm attenuated (modifier below 1, or score below its
    /// semantic baseline), per truly helpful pool member.
    FalseAttenuation,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Metric; 5] = [
        Metric::Ndcg,
        Metric::SuccessAt1,
        Metric::HarmfulAtK,
        Metric::TaskCost,
        Metric::FalseAttenuation,
    ];

    /// The key in the verdict packet.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Ndcg => "ndcg_at_k",
            Metric::SuccessAt1 => "success_at_1",
            Metric::HarmfulAtK => "harmful_at_k",
            Metric::TaskCost => "task_cost",
            Metric::FalseAttenuation => "false_attenuation",
        }
    }
}

/// `(numerator, denominator)` of every metric for one episode and arm.
pub type EpisodeValues = [(f64, f64); 5];

/// The unit costs task cost uses for one arm.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TaskCosts {
    /// Cost of reading one memory.
    pub memory_read: f64,
    /// The arm's evidence cost per task (the evidence it needs, averaged over training).
    pub evidence_per_task: f64,
}

/// The metrics of one arm's ranking of one episode's pool.
///
/// `semantic` is the pool in semantic order and `ranking` the arm's final order with its
/// attenuation flags (candidate indices of `episode`).
pub fn episode_values(
    episode: &HeldOutEpisode,
    semantic: &[usize],
    ranking: &ArmRanking,
    k: usize,
    costs: TaskCosts,
) -> EpisodeValues {
    let order = &ranking.order;
    let mut out = [(0.0, 0.0); 5];
    if order.is_empty() {
        return out;
    }
    let truth = |i: usize| episode.candidates[i].truth;
    let cut = k.min(order.len());
    let discount = |r: usize| 1.0 / ((r + 2) as f64).log2();
    let dcg: f64 = (0..cut).map(|r| truth(order[r]).gain() * discount(r)).sum();
    let mut ideal: Vec<f64> = order.iter().map(|&i| truth(i).gain()).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = (0..cut).map(|r| ideal[r] * discount(r)).sum();
    let harmful = order[..cut]
        .iter()
        .filter(|&&i| matches!(truth(i), super::dataset::Truth::Harmful))
        .count();
    out[Metric::HarmfulAtK as usize] = (harmful as f64, 1.0);
    if idcg > 0.0 {
        out[Metric::Ndcg as usize] = (dcg / idcg, 1.0);
        let top = if truth(order[0]).is_helpful() {
            1.0
        } else {
            0.0
        };
        out[Metric::SuccessAt1 as usize] = (top, 1.0);
        let read = order
            .iter()
            .position(|&i| truth(i).is_helpful())
            .map_or(order.len(), |p| p + 1);
        out[Metric::TaskCost as usize] = (
            costs.memory_read * read as f64 + costs.evidence_per_task,
            1.0,
        );
    }
    let helpful = semantic.iter().filter(|&&i| truth(i).is_helpful()).count();
    let attenuated = order
        .iter()
        .zip(&ranking.attenuated)
        .filter(|(i, a)| **a && truth(**i).is_helpful())
        .count();
    out[Metric::FalseAttenuation as usize] = (attenuated as f64, helpful as f64);
    out
}

/// A point estimate with its percentile interval and the denominator it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// `None` when no episode informs the metric.
    pub estimate: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// The full-sample denominator (episodes, or helpful pool members).
    pub n: f64,
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

/// Linear-interpolation percentile of sorted values (`q` in `[0, 1]`).
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

fn interval(mut samples: Vec<f64>, level: f64) -> (Option<f64>, Option<f64>) {
    samples.retain(|v| v.is_finite());
    samples.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    (percentile(&samples, tail), percentile(&samples, 1.0 - tail))
}

/// Every arm's estimates and every arm's differences against arm 0 and against a second
/// reference arm.
#[derive(Debug, Clone, PartialEq)]
pub struct Bootstrapped {
    /// `[arm][metric]`.
    pub arms: Vec<[Estimate; 5]>,
    /// `[arm][metric]`: arm − arm 0 (arm 0's own row is all zero).
    pub differences: Vec<[Estimate; 5]>,
    /// `[arm][metric]`: arm − the second reference arm, on the same resamples.
    pub versus: Vec<[Estimate; 5]>,
}

/// The paired percentile bootstrap over episodes.
///
/// `values[arm][episode]`; `resamples` draws of `n` episodes with replacement from
/// `rng`; differences against arm 0 and against arm `reference`. Deterministic for a given
/// `rng` state (the reference does not change the draws).
pub fn bootstrap(
    values: &[Vec<EpisodeValues>],
    reference: usize,
    resamples: usize,
    level: f64,
    rng: &mut Rng,
) -> Bootstrapped {
    let arms = values.len();
    let n = values.first().map_or(0, Vec::len);
    let totals = |arm: usize, m: usize, weights: Option<&[u32]>| -> (f64, f64) {
        let mut num = 0.0;
        let mut den = 0.0;
        for (e, v) in values[arm].iter().enumerate() {
            let w = weights.map_or(1.0, |w| f64::from(w[e]));
            if w != 0.0 {
                num += w * v[m].0;
                den += w * v[m].1;
            }
        }
        (num, den)
    };
    let empty = || -> Vec<Vec<Vec<f64>>> {
        (0..arms)
            .map(|_| (0..5).map(|_| Vec::with_capacity(resamples)).collect())
            .collect()
    };
    let mut samples = empty();
    let mut diff_samples = empty();
    let mut versus_samples = empty();
    let mut weights = vec![0u32; n];
    let mut ratios: Vec<[Option<f64>; 5]> = vec![[None; 5]; arms];
    for _ in 0..resamples {
        weights.iter_mut().for_each(|w| *w = 0);
        for _ in 0..n {
            weights[rng.below(n)] += 1;
        }
        for (arm, row) in ratios.iter_mut().enumerate() {
            for (m, slot) in row.iter_mut().enumerate() {
                let (num, den) = totals(arm, m, Some(&weights));
                *slot = ratio(num, den);
            }
        }
        for arm in 0..arms {
            for m in 0..5 {
                let r = ratios[arm][m];
                if let Some(r) = r {
                    samples[arm][m].push(r);
                }
                if let (Some(r), Some(b)) = (r, ratios[0][m]) {
                    diff_samples[arm][m].push(r - b);
                }
                if let (Some(r), Some(b)) = (r, ratios.get(reference).and_then(|x| x[m])) {
                    versus_samples[arm][m].push(r - b);
                }
            }
        }
    }
    let mut arm_out = Vec::with_capacity(arms);
    let mut diff_out = Vec::with_capacity(arms);
    let mut versus_out = Vec::with_capacity(arms);
    for arm in 0..arms {
        let mut row = [Estimate {
            estimate: None,
            lower: None,
            upper: None,
            n: 0.0,
        }; 5];
        let mut drow = row;
        let mut vrow = row;
        for m in 0..5 {
            let (num, den) = totals(arm, m, None);
            let (bnum, bden) = totals(0, m, None);
            let (rnum, rden) = if reference < arms {
                totals(reference, m, None)
            } else {
                (0.0, 0.0)
            };
            let (lower, upper) = interval(std::mem::take(&mut samples[arm][m]), level);
            row[m] = Estimate {
                estimate: ratio(num, den),
                lower,
                upper,
                n: den,
            };
            let (dl, du) = interval(std::mem::take(&mut diff_samples[arm][m]), level);
            drow[m] = Estimate {
                estimate: match (ratio(num, den), ratio(bnum, bden)) {
                    (Some(a), Some(b)) => Some(a - b),
                    _ => None,
                },
                lower: dl,
                upper: du,
                n: den,
            };
            let (vl, vu) = interval(std::mem::take(&mut versus_samples[arm][m]), level);
            vrow[m] = Estimate {
                estimate: match (ratio(num, den), ratio(rnum, rden)) {
                    (Some(a), Some(b)) => Some(a - b),
                    _ => None,
                },
                lower: vl,
                upper: vu,
                n: den,
            };
        }
        arm_out.push(row);
        diff_out.push(drow);
        versus_out.push(vrow);
    }
    Bootstrapped {
        arms: arm_out,
        differences: diff_out,
        versus: versus_out,
    }
}

/// A percentile bootstrap of a share over independent units (`flags[i]` true = counted).
pub fn bootstrap_share(flags: &[bool], resamples: usize, level: f64, rng: &mut Rng) -> Estimate {
    let n = flags.len();
    let hits = flags.iter().filter(|f| **f).count() as f64;
    let mut samples = Vec::with_capacity(resamples);
    if n > 0 {
        for _ in 0..resamples {
            let mut count = 0usize;
            for _ in 0..n {
                if flags[rng.below(n)] {
                    count += 1;
                }
            }
            samples.push(count as f64 / n as f64);
        }
    }
    let (lower, upper) = interval(samples, level);
    Estimate {
        estimate: ratio(hits, n as f64),
        lower,
        upper,
        n: n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::evaluate::dataset::{HeldOutCandidate, Truth};

    fn episode(truths: &[Truth]) -> HeldOutEpisode {
        HeldOutEpisode {
            partition: 0,
            at: 0,
            candidates: truths
                .iter()
                .enumerate()
                .map(|(i, t)| HeldOutCandidate {
                    digest: format!("{i:016x}"),
                    relevance: 1.0 - i as f64 / 10.0,
                    truth: *t,
                })
                .collect(),
        }
    }

    fn ranked(order: &[usize], attenuated: &[usize]) -> ArmRanking {
        ArmRanking {
            order: order.to_vec(),
            attenuated: order.iter().map(|i| attenuated.contains(i)).collect(),
        }
    }

    const COSTS: TaskCosts = TaskCosts {
        memory_read: 1.0,
        evidence_per_task: 0.0,
    };

    #[test]
    fn metrics_of_a_hand_worked_episode() {
        let e = episode(&[
            Truth::Neutral,
            Truth::Harmful,
            Truth::Helpful(1.0),
            Truth::Neutral,
        ]);
        let semantic = [0, 1, 2, 3];
        let v = episode_values(&e, &semantic, &ranked(&semantic, &[]), 3, COSTS);
        let ideal = 1.0;
        let dcg = 1.0 / 4f64.log2();
        assert!((v[Metric::Ndcg as usize].0 - dcg / ideal).abs() < 1e-12);
        assert_eq!(v[Metric::SuccessAt1 as usize], (0.0, 1.0));
        assert_eq!(v[Metric::HarmfulAtK as usize], (1.0, 1.0));
        assert_eq!(
            v[Metric::TaskCost as usize],
            (3.0, 1.0),
            "three memories read down to the helpful one"
        );
        assert_eq!(v[Metric::FalseAttenuation as usize], (0.0, 1.0));
        let moved = [2, 0, 1, 3];
        let costs = TaskCosts {
            memory_read: 2.0,
            evidence_per_task: 0.5,
        };
        let v = episode_values(&e, &semantic, &ranked(&moved, &[1]), 3, costs);
        assert_eq!(v[Metric::Ndcg as usize], (1.0, 1.0));
        assert_eq!(v[Metric::SuccessAt1 as usize], (1.0, 1.0));
        assert_eq!(
            v[Metric::TaskCost as usize],
            (2.5, 1.0),
            "one read plus evidence"
        );
        assert_eq!(
            v[Metric::FalseAttenuation as usize],
            (0.0, 1.0),
            "attenuating a harmful memory is not false"
        );
        // The helpful memory attenuated: false attenuation, even where its rank held.
        let v = episode_values(&e, &semantic, &ranked(&semantic, &[2]), 3, COSTS);
        assert_eq!(v[Metric::FalseAttenuation as usize], (1.0, 1.0));
        assert_eq!(v[Metric::HarmfulAtK as usize], (1.0, 1.0));
    }

    #[test]
    fn an_episode_without_helpful_memories_informs_only_harm() {
        let e = episode(&[Truth::Neutral, Truth::Harmful]);
        let v = episode_values(&e, &[0, 1], &ranked(&[1, 0], &[0]), 1, COSTS);
        assert_eq!(v[Metric::Ndcg as usize], (0.0, 0.0));
        assert_eq!(v[Metric::HarmfulAtK as usize], (1.0, 1.0));
        assert_eq!(v[Metric::FalseAttenuation as usize], (0.0, 0.0));
    }

    #[test]
    fn bootstrap_is_deterministic_and_brackets_the_estimate() {
        let values: Vec<Vec<EpisodeValues>> = (0..2)
            .map(|arm| {
                (0..200)
                    .map(|e| {
                        let mut v = [(0.0, 1.0); 5];
                        v[0] = (f64::from((e % 3 == 0) as u8 + arm as u8) / 2.0, 1.0);
                        v
                    })
                    .collect()
            })
            .collect();
        let a = bootstrap(&values, 1, 200, 0.95, &mut Rng::stream(1, "b", 0));
        let b = bootstrap(&values, 1, 200, 0.95, &mut Rng::stream(1, "b", 0));
        assert_eq!(a, b);
        let v = a.versus[0][0];
        assert!(
            (v.estimate.unwrap_or(0.0) + 0.5).abs() < 1e-12,
            "arm 0 − arm 1"
        );
        assert!((v.upper.unwrap_or(0.0) + 0.5).abs() < 1e-12, "paired");
        let est = a.arms[1][0];
        let (e, lo, hi) = (
            est.estimate.unwrap_or(-1.0),
            est.lower.unwrap_or(9.0),
            est.upper.unwrap_or(-9.0),
        );
        assert!(lo <= e && e <= hi);
        let d = a.differences[1][0];
        assert!((d.estimate.unwrap_or(0.0) - 0.5).abs() < 1e-12);
        assert!(
            (d.lower.unwrap_or(0.0) - 0.5).abs() < 1e-12,
            "paired: the difference never varies"
        );
    }
}
