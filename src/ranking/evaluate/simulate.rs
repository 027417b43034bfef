//! The deterministic simulator behind `rank-evaluate --simulate`: a hidden world
//! ([`super::world`]) whose memories cause the outcomes of the tasks they are applied to,
//! training episodes that go through the product (recall session → [`apply_recall`]
//! application receipt → verified outcome → evidence from what each evaluator can see
//! ([`super::evidence`]) → [`build_observation`], the builder `utility-observe` uses →
//! ledger delivery), and disjoint held-out episodes whose ground truth is the causal effect
//! of each candidate on the task.
//!
//! Every random draw comes from a named [`Rng`] stream keyed by the seed and the episode
//! index, so one seed gives one dataset byte for byte, and the sweep compares parameter
//! values on the same episodes (common random numbers). It reads no clock or environment.
//! The world and every parameter are described in `docs/rank-evaluate.md`.

use crate::obj;
use crate::ranking::prior::Partition;
use crate::recall::{RecallItem, RecallSession, apply_recall};
use crate::utility::observation::{Observation, Scope, UtilityLabel, build_observation};
use crate::wire::digest::sha256_prefix;
use crate::wire::json::{self, Value};
use crate::wire::timestamp::parse_aware;

use super::dataset::{Dataset, Environment, EvidenceWork, HeldOutEpisode, TrainingEpisode, Truth};
use super::error::RankEvaluateError;
use super::evidence::{self, Judgement, Rerun, Seen};
use super::profile::{EvaluationProfile, SimulatorParams};
use super::rng::Rng;
use super::world::{self, Memory, Recalled, Task, World};

/// The simulated clock starts here (UTC).
pub const START: &str = "2026-09-01T00:00:00Z";
/// The same instant in Unix seconds.
const START_UNIX: i64 = 1_788_220_800;
pub use super::world::SURFACE;

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

fn observe(
    facts: &EpisodeFacts<'_>,
    j: &Judgement,
    index: usize,
) -> Result<Observation, RankEvaluateError> {
    let evidence = format!("evidence:sim-{index}-{}", j.evidence);
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
        "evidence_refs" => json::str_list(&[evidence.as_str()]),
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
        lifecycle_skipped: 0,
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

/// A re-run of one training episode in the simulated world: the same task and random
/// draw, with the applied memories (sorted by digest, as [`Seen::applied`]) or all but one.
struct EpisodeRerun<'a> {
    params: &'a SimulatorParams,
    world: &'a World,
    task: Task,
    applied: &'a [usize],
    draw: f64,
}

impl Rerun for EpisodeRerun<'_> {
    fn probability(&self, without: Option<usize>) -> f64 {
        let applied: Vec<usize> = self
            .applied
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != without)
            .map(|(_, &m)| m)
            .collect();
        world::probability(self.params, self.world, &self.task, &applied)
    }

    fn outcome(&self, without: Option<usize>) -> bool {
        self.draw < self.probability(without)
    }
}

/// What the owner knows about a memory: the sign of its effect on the task.
fn owner_label(truth: Truth) -> UtilityLabel {
    match truth {
        Truth::Helpful(_) => UtilityLabel::Helpful,
        Truth::Harmful => UtilityLabel::Harmful,
        Truth::Neutral => UtilityLabel::Neutral,
    }
}

/// Runs one training episode through the product and appends its facts, its deliveries,
/// its verified outcome and its environment.
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
    let topics = (s.topics_per_corpus as usize).max(1);
    let topic = pick.below(topics);
    let stale = pick.chance(s.stale_snapshot_rate);
    let task = Task {
        scope: scope_index,
        topic,
        easiness: pick.unit(),
    };
    let sw = &world.scopes[scope_index];
    let partition_index = if stale { sw.stale } else { sw.current };
    let memories = world.memories(&task);
    let recalled = world::recall(s, world, &task, &mut Rng::stream(seed, "train-recall", i));
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
        sampled.clone()
    } else {
        (0..count).collect()
    };
    // The applied memories sorted by digest: the order of the receipt's digests.
    let mut applied: Vec<usize> = used.iter().map(|&u| recalled[u].memory).collect();
    applied.sort_by(|a, b| memories[*a].digest.cmp(&memories[*b].digest));
    let draw = Rng::stream(seed, "train-outcome", i).unit();
    let success = draw < world::probability(s, world, &task, &applied);
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

    let used_digests: Vec<String> = applied
        .iter()
        .map(|&m| memories[m].digest.clone())
        .collect();
    let seen = Seen {
        applied: &used_digests,
        succeeded: success,
    };
    let (mut judgements, judged) =
        evidence::inference(s, seen, &mut Rng::stream(seed, "train-evaluator", i));
    let rerun = EpisodeRerun {
        params: s,
        world,
        task,
        applied: &applied,
        draw,
    };
    let owner = |k: usize| owner_label(world.truth(&task, applied[k]));
    let (strong, mut work) = evidence::checks(
        s,
        seen,
        &rerun,
        &owner,
        &mut Rng::stream(seed, "train-strong", i),
    );
    judgements.extend(strong);
    work.evaluator_inference = usize::from(judged);

    let mut retry = Rng::stream(seed, "train-retry", i);
    for j in &judgements {
        let observation = observe(&facts, j, index)?;
        let twice = retry.chance(s.delivery_retry_rate);
        dataset.deliveries.push(observation.clone());
        if twice {
            dataset.deliveries.push(observation);
        }
    }
    let total = dataset
        .evidence_work
        .get_or_insert_with(EvidenceWork::default);
    total.evaluator_inference += work.evaluator_inference;
    total.deterministic_effect += work.deterministic_effect;
    total.controlled_replay += work.controlled_replay;
    total.owner_correction += work.owner_correction;
    dataset.outcomes.insert(refs.outcome_ref.clone(), success);
    dataset.environment.push(Environment::new(
        recalled.iter().map(|r| world.candidate(&task, r)).collect(),
        count,
        explore.then_some(sampled),
        recalled
            .iter()
            .map(|r| world.effect(&task, r.memory))
            .collect(),
        world::base_success(s, &task),
        draw,
    ));
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
    let scope = pick.below(world.scopes.len());
    let topic = pick.below((s.topics_per_corpus as usize).max(1));
    let task = Task {
        scope,
        topic,
        easiness: pick.unit(),
    };
    let recalled = world::recall(
        s,
        world,
        &task,
        &mut Rng::stream(p.seed, "held-out-recall", i),
    );
    Ok(HeldOutEpisode {
        partition: world.scopes[scope].current,
        at: instant_of(&iso(episode_unix(s, time_index)))?,
        candidates: recalled.iter().map(|r| world.candidate(&task, r)).collect(),
    })
}

/// The number of held-out episodes for the profile.
pub fn held_out_count(s: &SimulatorParams) -> usize {
    ((s.training_episodes * s.held_out_ratio).round() as usize).max(1)
}

/// Simulates the whole dataset of one profile.
pub fn simulate(p: &EvaluationProfile) -> Result<Dataset, RankEvaluateError> {
    let mut dataset = Dataset::default();
    let world = world::build(&p.simulator, p.seed, &mut dataset);
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
