//! The simulator's hidden world: memories, each with a per-scope causal effect on the
//! success probability of tasks of its topic, tasks with a difficulty, the recall (where
//! some memories are recalled mostly for easy tasks: confounding) and the success model.
//!
//! Effects are hidden: the outcome of an episode is drawn from them, held-out ground truth
//! is them, and the owner (who knows) reads them; the evaluator, deterministic checks and
//! replays only see outcomes and re-runs ([`super::evidence`]). Pure: seeded draws only.

use crate::ranking::prior::Partition;
use crate::utility::observation::Scope;
use crate::utility::reducer::DEFAULT_REDUCER_VERSION;
use crate::utility::reducer::v1::REDUCER_V1;
use crate::wire::digest::short16;
use crate::wire::json::Text;
use crate::wire::pyfmt::round6;

use super::dataset::{Dataset, HeldOutCandidate, Truth, success_probability};
use super::profile::SimulatorParams;
use super::rng::Rng;

/// The surface every simulated scope recalls for.
pub const SURFACE: &str = "loopx.issue_fix";

/// A memory's kind in one scope, before its strength scales it into an effect.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Helpful,
    Harmful,
    Neutral,
}

/// One memory of a corpus.
#[derive(Debug, Clone)]
pub struct Memory {
    pub raw_ref: String,
    pub digest: String,
    /// `None` for a hotness-trap memory (relevant to, and harmful on, every topic).
    pub topic: Option<usize>,
    /// Recalled mostly for easy tasks: on a hard task of its topic it looks off-topic.
    pub easy_only: bool,
}

/// One scope (agent × corpus): its hidden effects and its two partitions.
#[derive(Debug, Clone)]
pub struct ScopeWorld {
    pub corpus: usize,
    pub scope: Scope,
    /// Causal effect of each memory of the corpus on a task of its topic (traps: on every
    /// task): `helpful_effect × strength`, `−harmful_effect × strength`, or 0.
    effects: Vec<f64>,
    /// The current policy snapshot's partition index.
    pub current: usize,
    /// The previous policy snapshot's partition index.
    pub stale: usize,
}

/// The whole hidden world.
#[derive(Debug, Clone)]
pub struct World {
    pub corpora: Vec<Vec<Memory>>,
    pub corpus_ids: Vec<String>,
    pub scopes: Vec<ScopeWorld>,
}

/// One task: its scope, topic and easiness (uniform in `[0, 1]`; 1 is the easiest).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Task {
    pub scope: usize,
    pub topic: usize,
    pub easiness: f64,
}

/// One recalled candidate: memory index and observed relevance.
#[derive(Debug, Clone, Copy)]
pub struct Recalled {
    pub memory: usize,
    pub relevance: f64,
}

fn draw_kind(p: &SimulatorParams, rng: &mut Rng) -> (Kind, f64) {
    let u = rng.unit();
    let strength = rng.between(p.strength_min, p.strength_max);
    let kind = if u < p.helpful_share {
        Kind::Helpful
    } else if u < p.helpful_share + p.harmful_share {
        Kind::Harmful
    } else {
        Kind::Neutral
    };
    (kind, strength)
}

fn effect_of(p: &SimulatorParams, (kind, strength): (Kind, f64)) -> f64 {
    match kind {
        Kind::Helpful => p.helpful_effect * strength,
        Kind::Harmful => -p.harmful_effect * strength,
        Kind::Neutral => 0.0,
    }
}

/// Builds the world of one seed, interning every scope's two partitions in `dataset`.
pub fn build(p: &SimulatorParams, seed: u64, dataset: &mut Dataset) -> World {
    let n_corpora = p.corpora as usize;
    let n_memories = p.memories_per_corpus as usize;
    let traps = p.hotness_trap_memories as usize;
    let topics = (p.topics_per_corpus as usize).max(1);
    let mut corpora = Vec::with_capacity(n_corpora);
    let mut corpus_ids = Vec::with_capacity(n_corpora);
    let mut scopes = Vec::new();
    for c in 0..n_corpora {
        let corpus_id = format!("sim-corpus-{c}");
        let mut confounding = Rng::stream(seed, "world-confounding", c as u64);
        let memories: Vec<Memory> = (0..n_memories)
            .map(|m| {
                let raw_ref = format!("sim:{corpus_id}:memory-{m:04}");
                let topic = (m >= traps).then(|| (m - traps) % topics);
                let easy = confounding.chance(p.confounding);
                Memory {
                    digest: short16(&raw_ref),
                    raw_ref,
                    topic,
                    easy_only: easy && topic.is_some(),
                }
            })
            .collect();
        let mut base_rng = Rng::stream(seed, "world-truth", c as u64);
        let base: Vec<(Kind, f64)> = memories
            .iter()
            .map(|m| {
                let drawn = draw_kind(p, &mut base_rng);
                if m.topic.is_none() {
                    (Kind::Harmful, drawn.1)
                } else {
                    drawn
                }
            })
            .collect();
        for a in 0..p.agents_per_corpus as usize {
            let mut flip_rng = Rng::stream(seed, "world-scope-truth", (c * 64 + a) as u64);
            let effects: Vec<f64> = memories
                .iter()
                .zip(&base)
                .map(|(m, &b)| {
                    let flip = flip_rng.chance(p.cross_scope_truth_flip);
                    let redrawn = draw_kind(p, &mut flip_rng);
                    effect_of(
                        p,
                        if flip && m.topic.is_some() {
                            redrawn
                        } else {
                            b
                        },
                    )
                })
                .collect();
            let scope = Scope {
                agent_id: compact_str::format_compact!("agent:sim-c{c}-a{a}"),
                project_id: compact_str::format_compact!("project:sim-c{c}"),
                corpus_id: corpus_id.as_str().into(),
                surface_id: Text::from(SURFACE),
            };
            let partition = |version: &str| Partition {
                scope: scope.clone(),
                retrieval_snapshot_ref: format!("retrieval:sim-corpus-{c}"),
                policy_snapshot_ref: format!("policy:sim-c{c}-a{a}-{version}"),
                reducer_version: if p.reducer_v1 >= 0.5 {
                    REDUCER_V1
                } else {
                    DEFAULT_REDUCER_VERSION
                }
                .to_owned(),
            };
            let current = dataset.intern(&partition("v2"));
            let stale = dataset.intern(&partition("v1"));
            scopes.push(ScopeWorld {
                corpus: c,
                scope,
                effects,
                current,
                stale,
            });
        }
        corpora.push(memories);
        corpus_ids.push(corpus_id);
    }
    World {
        corpora,
        corpus_ids,
        scopes,
    }
}

impl World {
    /// The memories of a task's corpus.
    pub fn memories(&self, task: &Task) -> &[Memory] {
        &self.corpora[self.scopes[task.scope].corpus]
    }

    /// The causal effect of memory `m` on `task`'s success probability: its scope effect
    /// when it is about the task's topic (a trap is about every topic), else 0.
    pub fn effect(&self, task: &Task, m: usize) -> f64 {
        let memory = &self.memories(task)[m];
        if memory.topic.is_none_or(|t| t == task.topic) {
            self.scopes[task.scope].effects[m]
        } else {
            0.0
        }
    }

    /// The causal truth of memory `m` for `task`: helpful with gain = its effect when the
    /// effect is positive, harmful when negative, neutral at 0.
    pub fn truth(&self, task: &Task, m: usize) -> Truth {
        let e = self.effect(task, m);
        if e > 0.0 {
            Truth::Helpful(round6(e.max(1e-6)))
        } else if e < 0.0 {
            Truth::Harmful
        } else {
            Truth::Neutral
        }
    }

    /// A recalled memory as a candidate with its causal truth for `task`.
    pub fn candidate(&self, task: &Task, r: &Recalled) -> HeldOutCandidate {
        HeldOutCandidate {
            digest: self.memories(task)[r.memory].digest.clone(),
            relevance: r.relevance,
            truth: self.truth(task, r.memory),
        }
    }
}

/// The base success probability of a task (before any memory's effect).
pub fn base_success(p: &SimulatorParams, task: &Task) -> f64 {
    p.base_success + p.difficulty_spread * (task.easiness - 0.5)
}

/// The success probability of `task` with the memories `applied` (memory indices).
pub fn probability(p: &SimulatorParams, world: &World, task: &Task, applied: &[usize]) -> f64 {
    success_probability(
        base_success(p, task),
        applied.iter().map(|&m| world.effect(task, m)),
    )
}

/// The recall of `task`: every memory of the corpus scored by observed relevance
/// (noise-free relevance by topic, confounding and `relevance_truth_signal`, plus noise,
/// clamped to [0, 1]), the `recall_limit` most relevant kept (ties by digest).
pub fn recall(p: &SimulatorParams, world: &World, task: &Task, rng: &mut Rng) -> Vec<Recalled> {
    let memories = world.memories(task);
    let effects = &world.scopes[task.scope].effects;
    let mut all: Vec<Recalled> = memories
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let signal = if effects[i] > 0.0 {
                p.relevance_truth_signal
            } else if effects[i] < 0.0 {
                -p.relevance_truth_signal
            } else {
                0.0
            };
            let base = match m.topic {
                None => p.trap_relevance,
                Some(t) if t == task.topic && m.easy_only && task.easiness < 0.5 => {
                    p.off_topic_relevance
                }
                Some(t) if t == task.topic => p.on_topic_relevance + signal,
                Some(_) => p.off_topic_relevance,
            };
            let relevance = round6((base + p.relevance_noise * rng.noise()).clamp(0.0, 1.0));
            Recalled {
                memory: i,
                relevance,
            }
        })
        .collect();
    all.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then_with(|| memories[a.memory].digest.cmp(&memories[b.memory].digest))
    });
    all.truncate(p.recall_limit as usize);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_are_topic_specific_and_zero_when_the_effect_keys_are_zero() {
        let mut p = SimulatorParams::default();
        let mut data = Dataset::default();
        let world = build(&p, 1, &mut data);
        let traps = p.hotness_trap_memories as usize;
        let mut moved = 0;
        for topic in 0..p.topics_per_corpus as usize {
            let task = Task {
                scope: 0,
                topic,
                easiness: 0.5,
            };
            for (m, memory) in world.corpora[0].iter().enumerate() {
                let e = world.effect(&task, m);
                if memory.topic.is_none() {
                    assert!(e < 0.0, "a trap harms every task");
                } else if memory.topic != Some(topic) {
                    assert_eq!(e, 0.0, "no effect off its topic");
                } else if e != 0.0 {
                    moved += 1;
                }
            }
        }
        assert!(moved > traps, "{moved}");
        let task = Task {
            scope: 0,
            topic: 0,
            easiness: 0.5,
        };
        p.helpful_effect = 0.0;
        p.harmful_effect = 0.0;
        let still = build(&p, 1, &mut Dataset::default());
        for m in 0..still.corpora[0].len() {
            assert_eq!(still.effect(&task, m), 0.0);
            assert_eq!(still.truth(&task, m), Truth::Neutral);
        }
    }

    #[test]
    fn confounded_memories_look_on_topic_only_for_easy_tasks() {
        let p = SimulatorParams {
            confounding: 1.0,
            relevance_noise: 0.0,
            ..SimulatorParams::default()
        };
        let world = build(&p, 1, &mut Dataset::default());
        let of = |easiness: f64| {
            let task = Task {
                scope: 0,
                topic: 0,
                easiness,
            };
            let r = recall(&p, &world, &task, &mut Rng::stream(1, "t", 0));
            r.iter()
                .filter(|r| world.corpora[0][r.memory].topic == Some(0))
                .map(|r| r.relevance)
                .fold(0.0_f64, f64::max)
        };
        assert_eq!(of(0.9), p.on_topic_relevance);
        assert!(of(0.1) <= p.off_topic_relevance, "{}", of(0.1));
    }
}
