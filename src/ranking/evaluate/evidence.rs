//! The attribution evidence of one simulated episode, produced the way a deployment can
//! produce it, from what each evaluator can see:
//!
//! * the model judge ([`inference`]) sees which memories were applied and the verified
//!   outcome, nothing else: success reads as helpful, failure as harmful, with noise, so
//!   easy tasks fool it;
//! * a deterministic check and a controlled replay ([`checks`]) re-run the episode
//!   through [`Rerun`]: the check compares the noise-free success probability with and
//!   without one memory (with stated false-positive and false-negative rates), the replay
//!   compares the outcome with and without it under the same random draw;
//! * the owner ([`checks`], rarely) knows the memory's effect on the task.
//!
//! No function here can read a memory's hidden effect except through a re-run's outcome
//! or probability, or the owner's knowledge passed in explicitly; [`inference`] takes no
//! world at all. Pure: seeded draws only.

use crate::utility::observation::UtilityLabel;

use super::dataset::EvidenceWork;
use super::profile::SimulatorParams;
use super::rng::Rng;

/// One evaluator proposal for the observation builder.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// `item` or `set`.
    pub level: &'static str,
    pub digests: Vec<String>,
    pub label: UtilityLabel,
    pub basis: &'static str,
    pub confidence: f64,
    pub reason: &'static str,
    pub evaluator: &'static str,
    /// The evidence kind in the opaque evidence ref (`evidence:sim-N-<kind>`).
    pub evidence: &'static str,
}

/// What an episode shows an evaluator: the applied memories (sorted digests) and the
/// verified outcome.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub applied: &'a [String],
    pub succeeded: bool,
}

/// A re-run of one episode: the same task and the same random state, with every applied
/// memory, or with every applied memory but the one at position `without` of
/// [`Seen::applied`].
pub trait Rerun {
    /// The noise-free success probability of the re-run.
    fn probability(&self, without: Option<usize>) -> f64;
    /// The outcome of the re-run under the episode's own random draw.
    fn outcome(&self, without: Option<usize>) -> bool;
}

/// The label an outcome suggests to someone who sees only the outcome.
fn outcome_label(succeeded: bool) -> UtilityLabel {
    if succeeded {
        UtilityLabel::Helpful
    } else {
        UtilityLabel::Harmful
    }
}

/// `label` with probability `fidelity`, otherwise one of the two other directional labels,
/// uniformly. Always two draws.
fn noisy(label: UtilityLabel, fidelity: f64, rng: &mut Rng) -> UtilityLabel {
    let keep = rng.unit() < fidelity;
    let others = match label {
        UtilityLabel::Helpful => [UtilityLabel::Harmful, UtilityLabel::Neutral],
        UtilityLabel::Harmful => [UtilityLabel::Helpful, UtilityLabel::Neutral],
        _ => [UtilityLabel::Helpful, UtilityLabel::Harmful],
    };
    let other = others[usize::from(rng.unit() >= 0.5)];
    if keep { label } else { other }
}

/// The model judge of one episode (with probability `evaluator_rate`): item-level labels
/// for every applied memory in a single-memory episode, and with probability
/// `evaluator_item_rate` in a multi-memory one, each the outcome's label kept with
/// probability `evaluator_accuracy`; otherwise one set-level label of the outcome. Returns
/// the proposals and whether the judge ran.
pub fn inference(p: &SimulatorParams, seen: Seen<'_>, rng: &mut Rng) -> (Vec<Judgement>, bool) {
    let reported = crate::wire::pyfmt::round6(
        (p.evaluator_accuracy + p.evaluator_overconfidence).clamp(0.01, 1.0),
    );
    if !rng.chance(p.evaluator_rate) || seen.applied.is_empty() {
        return (Vec::new(), false);
    }
    let judgement = |level, digests, label| Judgement {
        level,
        digests,
        label,
        basis: "evaluator_inference",
        confidence: reported,
        reason: if level == "item" {
            "evaluator_item_judgment"
        } else {
            "multiple_memories_not_disambiguated"
        },
        evaluator: "evaluator:sim-model",
        evidence: "inference",
    };
    let item_level = seen.applied.len() == 1 || rng.chance(p.evaluator_item_rate);
    let out = if item_level {
        seen.applied
            .iter()
            .map(|d| {
                let label = noisy(outcome_label(seen.succeeded), p.evaluator_accuracy, rng);
                judgement("item", vec![d.clone()], label)
            })
            .collect()
    } else {
        vec![judgement(
            "set",
            seen.applied.to_vec(),
            outcome_label(seen.succeeded),
        )]
    };
    (out, true)
}

/// The stronger evidence of one episode: a deterministic check (probability
/// `deterministic_effect_rate`), a controlled replay (multi-memory episodes, probability
/// `controlled_replay_rate`) and an owner correction (probability `owner_correction_rate`),
/// each about one applied memory drawn uniformly. `owner` is what the owner knows about
/// the memory at a position of [`Seen::applied`]: the sign of its effect on this task.
/// Every draw is made whether or not the evidence happens, so that one parameter's value
/// does not shift another's random numbers.
pub fn checks(
    p: &SimulatorParams,
    seen: Seen<'_>,
    rerun: &dyn Rerun,
    owner: &dyn Fn(usize) -> UtilityLabel,
    rng: &mut Rng,
) -> (Vec<Judgement>, EvidenceWork) {
    let mut out = Vec::new();
    let mut work = EvidenceWork::default();
    let n = seen.applied.len();
    if n == 0 {
        return (out, work);
    }
    let item = |i: usize| vec![seen.applied[i].clone()];

    let det = rng.chance(p.deterministic_effect_rate);
    let det_at = rng.below(n);
    let det_error = rng.unit();
    let det_direction = rng.unit();
    if det {
        work.deterministic_effect += 1;
        let contribution = rerun.probability(None) - rerun.probability(Some(det_at));
        let label = if contribution.abs() > 1e-12 {
            if det_error < p.deterministic_effect_false_negative {
                UtilityLabel::Neutral
            } else if contribution > 0.0 {
                UtilityLabel::Helpful
            } else {
                UtilityLabel::Harmful
            }
        } else if det_error < p.deterministic_effect_false_positive {
            if det_direction < 0.5 {
                UtilityLabel::Helpful
            } else {
                UtilityLabel::Harmful
            }
        } else {
            UtilityLabel::Neutral
        };
        out.push(Judgement {
            level: "item",
            digests: item(det_at),
            label,
            basis: "deterministic_effect",
            confidence: 0.8,
            reason: "deterministic_check_of_contribution",
            evaluator: "evaluator:sim-artifact-check",
            evidence: "artifact",
        });
    }

    let replay = rng.chance(p.controlled_replay_rate) && n > 1;
    let replay_at = rng.below(n);
    if replay {
        work.controlled_replay += 1;
        let with = rerun.outcome(None);
        let without = rerun.outcome(Some(replay_at));
        let (label, basis, confidence, reason) = match (with, without) {
            (true, false) => (
                UtilityLabel::Helpful,
                "controlled_replay",
                0.9,
                "replay_without_memory_failed",
            ),
            (false, true) => (
                UtilityLabel::Harmful,
                "controlled_replay",
                0.9,
                "replay_without_memory_succeeded",
            ),
            _ => (
                UtilityLabel::Unknown,
                "insufficient",
                0.0,
                "replay_outcome_unchanged",
            ),
        };
        out.push(Judgement {
            level: "item",
            digests: item(replay_at),
            label,
            basis,
            confidence,
            reason,
            evaluator: "evaluator:sim-replay",
            evidence: "replay",
        });
    }

    let corrected = rng.chance(p.owner_correction_rate);
    let owner_at = rng.below(n);
    if corrected {
        work.owner_correction += 1;
        out.push(Judgement {
            level: "item",
            digests: item(owner_at),
            label: owner(owner_at),
            basis: "owner_correction",
            confidence: 1.0,
            reason: "owner_correction",
            evaluator: "owner:sim",
            evidence: "owner",
        });
    }
    (out, work)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A re-run where removing the memory at position 0 changes the probability by
    /// `effect` and the draw is `draw`.
    struct Fixed {
        base: f64,
        effect: f64,
        draw: f64,
    }

    impl Rerun for Fixed {
        fn probability(&self, without: Option<usize>) -> f64 {
            if without == Some(0) {
                self.base
            } else {
                self.base + self.effect
            }
        }
        fn outcome(&self, without: Option<usize>) -> bool {
            self.draw < self.probability(without)
        }
    }

    fn params() -> SimulatorParams {
        SimulatorParams {
            deterministic_effect_rate: 1.0,
            controlled_replay_rate: 1.0,
            owner_correction_rate: 0.0,
            deterministic_effect_false_positive: 0.0,
            deterministic_effect_false_negative: 0.0,
            ..SimulatorParams::default()
        }
    }

    fn labels(rerun: &Fixed, seed: u64) -> Vec<(&'static str, UtilityLabel)> {
        let applied = ["aaaaaaaaaaaaaaaa".to_owned()];
        let two = [applied[0].clone(), "bbbbbbbbbbbbbbbb".to_owned()];
        let seen = Seen {
            applied: &two,
            succeeded: rerun.outcome(None),
        };
        let mut rng = Rng::stream(seed, "t", 0);
        let (out, _) = checks(&params(), seen, rerun, &|_| UtilityLabel::Unknown, &mut rng);
        out.into_iter()
            .filter(|j| j.digests == applied)
            .map(|j| (j.basis, j.label))
            .collect()
    }

    #[test]
    fn replay_reports_only_a_changed_outcome_and_the_check_the_sign_of_the_contribution() {
        // Success with the memory, failure without: the replay says helpful.
        let pivotal = Fixed {
            base: 0.2,
            effect: 0.4,
            draw: 0.5,
        };
        // Success either way: the replay cannot tell; the check still sees the effect.
        let idle = Fixed {
            base: 0.6,
            effect: 0.3,
            draw: 0.1,
        };
        let mut seen_pivotal = false;
        let mut seen_idle = false;
        for seed in 0..40 {
            for (basis, label) in labels(&pivotal, seed) {
                seen_pivotal = true;
                match basis {
                    "controlled_replay" | "deterministic_effect" => {
                        assert_eq!(label, UtilityLabel::Helpful)
                    }
                    other => panic!("{other}"),
                }
            }
            for (basis, label) in labels(&idle, seed) {
                seen_idle = true;
                match basis {
                    "insufficient" => assert_eq!(label, UtilityLabel::Unknown),
                    "deterministic_effect" => assert_eq!(label, UtilityLabel::Helpful),
                    other => panic!("{other}"),
                }
            }
        }
        assert!(seen_pivotal && seen_idle);
    }

    #[test]
    fn the_judge_labels_the_outcome_whatever_the_memory() {
        let p = SimulatorParams {
            evaluator_accuracy: 1.0,
            ..SimulatorParams::default()
        };
        let applied = ["aaaaaaaaaaaaaaaa".to_owned()];
        for succeeded in [true, false] {
            let (out, ran) = inference(
                &p,
                Seen {
                    applied: &applied,
                    succeeded,
                },
                &mut Rng::stream(1, "t", 0),
            );
            assert!(ran);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].label, outcome_label(succeeded));
        }
    }
}
