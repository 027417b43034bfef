//! The deterministic simulator behind `rank-evaluate --simulate`: a hidden world of
//! memories with per-scope ground truth, training episodes that go through the product
//! (recall session → [`apply_recall`] application receipt → verified outcome →
//! [`build_observation`], the builder `utility-observe` uses → ledger delivery), and
//! disjoint held-out episodes with their ground truth.
//!
//! Every random draw comes from a named [`Rng`] stream keyed by the seed and the episode
//! index, so one seed gives one dataset byte for byte, and the sweep compares parameter
//! values on the same episodes (common random numbers). It reads no clock or environment.
//! The world and every parameter are described in `docs/rank-evaluate.md`.

use crate::obj;
use crate::ranking::prior::Partition;
use crate::recall::{RecallItem, RecallSession, apply_recall};
use crate::utility::observation::{Observation, Scope, UtilityLabel, build_observation};
use crate::utility::reducer::DEFAULT_REDUCER_VERSION;
use crate::wire::digest::{sha256_prefix, short16};
use crate::wire::json::Text;
use crate::wire::json::{self, Value};
use crate::wire::pyfmt::round6;
use crate::wire::timestamp::parse_aware;

use super::dataset::{Dataset, HeldOutCandidate, HeldOutEpisode, TrainingEpisode, Truth};
use super::error::RankEvaluateError;
use super::profile::{EvaluationProfile, SimulatorParams};
use super::rng::Rng;

/// The simulated clock starts here (UTC).
pub const START: &str = "2026-09-01T00:00:00Z";
/// The same instant in Unix seconds.
const START_UNIX: i64 = 1_788_220_800;
/// The surface every simulated scope recalls for.
pub const SURFACE: &str = "loopx.issue_fix";

/// A memory's hidden label in one scope.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Label {
    Helpful,
    Harmful,
    Neutral,
}

impl Label {
    fn utility(self) -> UtilityLabel {
        match self {
            Label::Helpful => UtilityLabel::Helpful,
            Label::Harmful => UtilityLabel::Harmful,
            Label::Neutral => UtilityLabel::Neutral,
        }
    }

    /// The two other labels, in a fixed order.
    fn others(self) -> [Label; 2] {
        match self {
            Label::Helpful => [Label::Harmful, Label::Neutral],
            Label::Harmful => [Label::Helpful, Label::Neutral],
            Label::Neutral => [Label::Helpful, Label::Harmful],
        }
    }
}

#[derive(Debug, Clone)]
struct Memory {
    raw_ref: String,
    digest: String,
    /// `None` for a hotness-trap memory (relevant to every topic).
    topic: Option<usize>,
}

#[derive(Debug, Clone)]
struct ScopeWorld {
    corpus: usize,
    scope: Scope,
    /// Hidden (label, strength) per memory of the corpus.
    truth: Vec<(Label, f64)>,
    current: usize,
    stale: usize,
}

struct World {
    corpora: Vec<Vec<Memory>>,
    corpus_ids: Vec<String>,
    scopes: Vec<ScopeWorld>,
}

fn draw_label(p: &SimulatorParams, rng: &mut Rng) -> (Label, f64) {
    let u = rng.unit();
    let strength = rng.between(p.strength_min, p.strength_max);
    let label = if u < p.helpful_share {
        Label::Helpful
    } else if u < p.helpful_share + p.harmful_share {
        Label::Harmful
    } else {
        Label::Neutral
    };
    (label, strength)
}

fn build_world(p: &SimulatorParams, seed: u64, dataset: &mut Dataset) -> World {
    let n_corpora = p.corpora as usize;
    let n_memories = p.memories_per_corpus as usize;
    let traps = p.hotness_trap_memories as usize;
    let topics = (p.topics_per_corpus as usize).max(1);
    let mut corpora = Vec::with_capacity(n_corpora);
    let mut corpus_ids = Vec::with_capacity(n_corpora);
    let mut scopes = Vec::new();
    for c in 0..n_corpora {
        let corpus_id = format!("sim-corpus-{c}");
        let memories: Vec<Memory> = (0..n_memories)
            .map(|m| {
                let raw_ref = format!("sim:{corpus_id}:memory-{m:04}");
                Memory {
                    digest: short16(&raw_ref),
                    raw_ref,
                    topic: (m >= traps).then(|| (m - traps) % topics),
                }
            })
            .collect();
        let mut base_rng = Rng::stream(seed, "world-truth", c as u64);
        let base: Vec<(Label, f64)> = memories
            .iter()
            .map(|m| {
                let drawn = draw_label(p, &mut base_rng);
                if m.topic.is_none() {
                    (Label::Harmful, drawn.1)
                } else {
                    drawn
                }
            })
            .collect();
        for a in 0..p.agents_per_corpus as usize {
            let mut flip_rng = Rng::stream(seed, "world-scope-truth", (c * 64 + a) as u64);
            let truth: Vec<(Label, f64)> = memories
                .iter()
                .zip(&base)
                .map(|(m, &b)| {
                    let flip = flip_rng.chance(p.cross_scope_truth_flip);
                    let redrawn = draw_label(p, &mut flip_rng);
                    if flip && m.topic.is_some() {
                        redrawn
                    } else {
                        b
                    }
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
                reducer_version: DEFAULT_REDUCER_VERSION.to_owned(),
            };
            let current = dataset.intern(&partition("v2"));
            let stale = dataset.intern(&partition("v1"));
            scopes.push(ScopeWorld {
                corpus: c,
                scope,
                truth,
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

/// One recalled candidate: memory index and observed relevance.
#[derive(Debug, Clone, Copy)]
struct Recalled {
    memory: usize,
    relevance: f64,
}

fn recall(
    p: &SimulatorParams,
    memories: &[Memory],
    truth: &[(Label, f64)],
    topic: usize,
    rng: &mut Rng,
) -> Vec<Recalled> {
    let mut all: Vec<Recalled> = memories
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let signal = match truth[i].0 {
                Label::Helpful => p.relevance_truth_signal,
                Label::Harmful => -p.relevance_truth_signal,
                Label::Neutral => 0.0,
            };
            let base = match m.topic {
                None => p.trap_relevance,
                Some(t) if t == topic => p.on_topic_relevance + signal,
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

/// True when memory `m` is about `topic` (traps are about everything).
fn on_topic(memory: &Memory, topic: usize) -> bool {
    memory.topic.is_none_or(|t| t == topic)
}

/// The evaluator's (or an artifact's) judgment: the hidden label with probability
/// `accuracy`, otherwise one of the two others, uniformly. Always two draws.
fn judge(truth: Label, accuracy: f64, rng: &mut Rng) -> Label {
    let correct = rng.unit() < accuracy;
    let other = truth.others()[usize::from(rng.unit() >= 0.5)];
    if correct { truth } else { other }
}

fn iso(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| START.to_owned())
}

/// The time of episode `index` (training first, held-out after), as Unix seconds.
fn episode_unix(p: &SimulatorParams, index: usize) -> i64 {
    START_UNIX + (index as f64 * p.minutes_between_episodes * 60.0).round() as i64
}

fn instant_of(text: &str) -> Result<i128, RankEvaluateError> {
    parse_aware(text)
        .map(|i| i.micros)
        .map_err(|_| RankEvaluateError::Simulator(format!("timestamp {text} is not valid")))
}

struct Judgement {
    level: &'static str,
    digests: Vec<String>,
    label: UtilityLabel,
    basis: &'static str,
    confidence: f64,
    reason: &'static str,
    evaluator: &'static str,
    evidence: String,
}

struct EpisodeFacts<'a> {
    receipt: Value,
    outcome: Value,
    context: Value,
    scope: &'a Scope,
    partition: &'a Partition,
    application_id: String,
    outcome_ref: String,
    artifact_ref: String,
    status: &'static str,
    created_at: String,
}

fn observe(facts: &EpisodeFacts<'_>, j: &Judgement) -> Result<Observation, RankEvaluateError> {
    let proposal = Value::Object(obj! {
        "scope" => facts.scope.to_map(),
        "application_id" => facts.application_id.as_str(),
        "artifact_ref" => facts.artifact_ref.as_str(),
        "outcome_ref" => facts.outcome_ref.as_str(),
        "outcome_status" => facts.status,
        "retrieval_snapshot_ref" => facts.partition.retrieval_snapshot_ref.as_str(),
        "policy_snapshot_ref" => facts.partition.policy_snapshot_ref.as_str(),
        "memory_ref_digests" => json::str_list(&j.digests),
        "utility_label" => j.label.as_str(),
        "attribution_level" => j.level,
        "evidence_basis" => j.basis,
        "confidence" => j.confidence,
        "reason_codes" => json::str_list(&[j.reason]),
        "evidence_refs" => json::str_list(&[j.evidence.as_str()]),
        "evaluator_ref" => j.evaluator,
        "evaluation_version" => "evaluation:sim-v0",
    });
    build_observation(
        &facts.receipt,
        &facts.outcome,
        &facts.context,
        &proposal,
        &Value::from(facts.created_at.as_str()),
    )
    .map_err(|e| {
        RankEvaluateError::Simulator(format!("the simulated observation was refused: {e}"))
    })
}

/// The opaque refs of one training episode.
struct EpisodeRefs {
    application_id: String,
    artifact_ref: String,
    outcome_ref: String,
}

impl EpisodeRefs {
    fn of(index: usize) -> EpisodeRefs {
        EpisodeRefs {
            application_id: format!("application:sim-{index}"),
            artifact_ref: format!("artifact:sim-{index}"),
            outcome_ref: format!("effect:sim-{index}"),
        }
    }
}

/// The application receipt of one episode, produced by the real `apply_recall` over a
/// recall session of the episode's recalled memories.
fn receipt_for(
    corpus_id: &str,
    index: usize,
    topic: usize,
    memories: &[Memory],
    recalled: &[Recalled],
    used: &[usize],
    refs: &EpisodeRefs,
) -> Result<Value, RankEvaluateError> {
    let summary = format!("simulated task on topic {topic}");
    let session = RecallSession {
        packet: obj! {
            "status" => "completed",
            "corpus_id" => corpus_id,
            "surface_id" => SURFACE,
            "mode" => "function_boundary",
            "query_kind" => "business_recall",
            "query_evidence" => Value::from(vec![Value::Object(obj! {
                "query_digest" => sha256_prefix(&format!("sim query {index}"), 16),
                "query_summary" => summary.as_str(),
                "exact_query_exposed" => false,
            })]),
            "provider_call_count" => 1,
            "result_readback_verified" => true,
        },
        items: recalled
            .iter()
            .map(|r| {
                let m = &memories[r.memory];
                RecallItem {
                    memory_ref: m.raw_ref.clone(),
                    candidate_ref: format!("candidate:{}", m.digest),
                    target_class: "procedural_experience".to_owned(),
                    content_summary: format!("simulated memory {}", m.digest),
                    content_digest: crate::wire::digest::sha256_hex(&m.raw_ref),
                    relevance: Some(r.relevance),
                }
            })
            .collect(),
        retrieval_snapshot_ref: None,
    };
    let memory_refs: Vec<Value> = used
        .iter()
        .map(|&i| Value::from(memories[recalled[i].memory].raw_ref.as_str()))
        .collect();
    let decision = Value::Object(obj! {
        "output" => "artifact changed with the recalled guidance",
        "outcome" => "applied",
        "memory_refs" => Value::from(memory_refs),
        "current_artifact_verified" => true,
        "reasoning_summary" => "Applied the recalled guidance in a simulated episode.",
    });
    let applier = |_: &Value, _: &[RecallItem]| Ok(decision.clone());
    let packet = apply_recall(
        &Value::from("base artifact"),
        &session,
        &refs.application_id,
        Some(&refs.artifact_ref),
        Some(&applier),
    )
    .map_err(|e| RankEvaluateError::Simulator(format!("the simulated application failed: {e}")))?;
    match packet.get("receipt") {
        Some(receipt @ Value::Object(_))
            if packet.get("status") == Some(&Value::from("applied")) =>
        {
            Ok(receipt.clone())
        }
        _ => Err(RankEvaluateError::Simulator(
            "the simulated application did not produce an applied receipt".to_owned(),
        )),
    }
}

/// Runs one training episode through the product and appends its facts and deliveries.
fn training_episode(
    p: &EvaluationProfile,
    world: &World,
    index: usize,
    dataset: &mut Dataset,
) -> Result<(), RankEvaluateError> {
    let s = &p.simulator;
    let seed = p.seed;
    let i = index as u64;
    let mut pick = Rng::stream(seed, "train-pick", i);
    let scope_index = pick.below(world.scopes.len());
    let sw = &world.scopes[scope_index];
    let topics = (s.topics_per_corpus as usize).max(1);
    let topic = pick.below(topics);
    let stale = pick.chance(s.stale_snapshot_rate);
    let partition_index = if stale { sw.stale } else { sw.current };
    let memories = &world.corpora[sw.corpus];
    let recalled = recall(
        s,
        memories,
        &sw.truth,
        topic,
        &mut Rng::stream(seed, "train-recall", i),
    );
    if recalled.is_empty() {
        return Ok(());
    }
    let mut use_rng = Rng::stream(seed, "train-use", i);
    let multi = use_rng.chance(s.multi_memory_rate) && s.max_memories_used >= 2.0;
    let extra = use_rng.below((s.max_memories_used as usize).saturating_sub(1).max(1));
    let count = if multi { 2 + extra } else { 1 }.min(recalled.len());
    let explore = use_rng.chance(s.exploration_rate);
    let sampled = use_rng.sample(recalled.len(), count);
    let used: Vec<usize> = if explore {
        sampled
    } else {
        (0..count).collect()
    };
    let mut success_p = s.base_success;
    for &u in &used {
        let m = recalled[u].memory;
        let (label, strength) = sw.truth[m];
        let relevant = on_topic(&memories[m], topic);
        match label {
            Label::Helpful if relevant => success_p += s.helpful_effect * strength,
            Label::Harmful if relevant => success_p -= s.harmful_effect * strength,
            _ => {}
        }
    }
    let success = Rng::stream(seed, "train-outcome", i).chance(success_p.clamp(0.02, 0.98));
    let unix = episode_unix(s, index);
    let created_at = iso(unix);
    let at = instant_of(&created_at)?;

    let refs = EpisodeRefs::of(index);
    let partition = &dataset.partitions[partition_index];
    let receipt = receipt_for(
        &world.corpus_ids[sw.corpus],
        index,
        topic,
        memories,
        &recalled,
        &used,
        &refs,
    )?;
    let status = if success { "succeeded" } else { "failed" };
    let facts = EpisodeFacts {
        outcome: Value::Object(obj! {
            "verified" => true,
            "outcome_ref" => refs.outcome_ref.as_str(),
            "artifact_ref" => refs.artifact_ref.as_str(),
            "outcome_status" => status,
        }),
        context: Value::Object(obj! {
            "scope" => sw.scope.to_map(),
            "retrieval_snapshot_ref" => partition.retrieval_snapshot_ref.as_str(),
            "policy_snapshot_ref" => partition.policy_snapshot_ref.as_str(),
        }),
        receipt,
        scope: &sw.scope,
        partition,
        application_id: refs.application_id.clone(),
        outcome_ref: refs.outcome_ref.clone(),
        artifact_ref: refs.artifact_ref.clone(),
        status,
        created_at,
    };

    let mut used_digests: Vec<String> = used
        .iter()
        .map(|&u| memories[recalled[u].memory].digest.clone())
        .collect();
    used_digests.sort();
    let truth_of = |digest: &str| -> Label {
        memories
            .iter()
            .position(|m| m.digest == digest)
            .map_or(Label::Neutral, |m| sw.truth[m].0)
    };

    let mut judgements = Vec::new();
    let mut eval = Rng::stream(seed, "train-evaluator", i);
    let reported = round6((s.evaluator_accuracy + s.evaluator_overconfidence).clamp(0.01, 1.0));
    if eval.chance(s.evaluator_rate) {
        let item_level = used_digests.len() == 1 || eval.chance(s.evaluator_item_rate);
        if item_level {
            for d in &used_digests {
                judgements.push(Judgement {
                    level: "item",
                    digests: vec![d.clone()],
                    label: judge(truth_of(d), s.evaluator_accuracy, &mut eval).utility(),
                    basis: "evaluator_inference",
                    confidence: reported,
                    reason: "evaluator_item_judgment",
                    evaluator: "evaluator:sim-model",
                    evidence: format!("evidence:sim-{index}-inference"),
                });
            }
        } else {
            judgements.push(Judgement {
                level: "set",
                digests: used_digests.clone(),
                label: if success {
                    UtilityLabel::Helpful
                } else {
                    UtilityLabel::Harmful
                },
                basis: "evaluator_inference",
                confidence: reported,
                reason: "multiple_memories_not_disambiguated",
                evaluator: "evaluator:sim-model",
                evidence: format!("evidence:sim-{index}-inference"),
            });
        }
    }
    let mut strong = Rng::stream(seed, "train-strong", i);
    let pick_used = |rng: &mut Rng| used_digests[rng.below(used_digests.len())].clone();
    let det = strong.chance(s.deterministic_effect_rate);
    let det_memory = pick_used(&mut strong);
    let det_label = judge(
        truth_of(&det_memory),
        s.deterministic_effect_accuracy,
        &mut strong,
    );
    if det {
        judgements.push(Judgement {
            level: "item",
            label: det_label.utility(),
            digests: vec![det_memory],
            basis: "deterministic_effect",
            confidence: 0.8,
            reason: "artifact_distinguishes_memory",
            evaluator: "evaluator:sim-artifact-check",
            evidence: format!("evidence:sim-{index}-artifact"),
        });
    }
    let replay = strong.chance(s.controlled_replay_rate) && used_digests.len() > 1;
    let replay_memory = pick_used(&mut strong);
    let replay_label = judge(
        truth_of(&replay_memory),
        s.controlled_replay_accuracy,
        &mut strong,
    );
    if replay {
        judgements.push(Judgement {
            level: "item",
            label: replay_label.utility(),
            digests: vec![replay_memory],
            basis: "controlled_replay",
            confidence: 0.9,
            reason: "controlled_replay_distinguishes_memory",
            evaluator: "evaluator:sim-replay",
            evidence: format!("evidence:sim-{index}-replay"),
        });
    }
    let owner = strong.chance(s.owner_correction_rate);
    let owner_memory = pick_used(&mut strong);
    if owner {
        judgements.push(Judgement {
            level: "item",
            label: truth_of(&owner_memory).utility(),
            digests: vec![owner_memory],
            basis: "owner_correction",
            confidence: 1.0,
            reason: "owner_correction",
            evaluator: "owner:sim",
            evidence: format!("evidence:sim-{index}-owner"),
        });
    }

    let mut retry = Rng::stream(seed, "train-retry", i);
    for j in &judgements {
        let observation = observe(&facts, j)?;
        let twice = retry.chance(s.delivery_retry_rate);
        dataset.deliveries.push(observation.clone());
        if twice {
            dataset.deliveries.push(observation);
        }
    }
    dataset.training.push(TrainingEpisode {
        partition: partition_index,
        at,
        recalled: recalled
            .iter()
            .map(|r| memories[r.memory].digest.clone())
            .collect(),
        used: used_digests,
        reward: if success {
            p.memrl.success_reward
        } else {
            p.memrl.failure_reward
        },
    });
    Ok(())
}

fn held_out_episode(
    p: &EvaluationProfile,
    world: &World,
    index: usize,
    time_index: usize,
) -> Result<HeldOutEpisode, RankEvaluateError> {
    let s = &p.simulator;
    let i = index as u64;
    let mut pick = Rng::stream(p.seed, "held-out-pick", i);
    let sw = &world.scopes[pick.below(world.scopes.len())];
    let topic = pick.below((s.topics_per_corpus as usize).max(1));
    let memories = &world.corpora[sw.corpus];
    let recalled = recall(
        s,
        memories,
        &sw.truth,
        topic,
        &mut Rng::stream(p.seed, "held-out-recall", i),
    );
    let candidates = recalled
        .iter()
        .map(|r| {
            let m = &memories[r.memory];
            let (label, strength) = sw.truth[r.memory];
            let truth = match label {
                Label::Helpful if on_topic(m, topic) => Truth::Helpful(round6(strength.max(1e-6))),
                Label::Harmful => Truth::Harmful,
                _ => Truth::Neutral,
            };
            HeldOutCandidate {
                digest: m.digest.clone(),
                relevance: r.relevance,
                truth,
            }
        })
        .collect();
    Ok(HeldOutEpisode {
        partition: sw.current,
        at: instant_of(&iso(episode_unix(s, time_index)))?,
        candidates,
    })
}

/// The number of held-out episodes for the profile.
pub fn held_out_count(s: &SimulatorParams) -> usize {
    ((s.training_episodes * s.held_out_ratio).round() as usize).max(1)
}

/// Simulates the whole dataset of one profile.
pub fn simulate(p: &EvaluationProfile) -> Result<Dataset, RankEvaluateError> {
    let mut dataset = Dataset::default();
    let world = build_world(&p.simulator, p.seed, &mut dataset);
    let training = p.simulator.training_episodes as usize;
    for index in 0..training {
        training_episode(p, &world, index, &mut dataset)?;
    }
    let held_out = held_out_count(&p.simulator);
    for index in 0..held_out {
        dataset
            .held_out
            .push(held_out_episode(p, &world, index, training + index)?);
    }
    Ok(dataset)
}
