//! Laws of the evaluation: determinism, the boundary cases of the issue (exact causal
//! evidence; pure-noise inference; a world where memories cause nothing; inference alone
//! under confounding), evidence that never reads the hidden effects, tuning that never
//! sees the held-out episodes, scope leaks caught only in a deliberately leaking double,
//! the ledger seam agreeing with `utility-project`, the `EPISODES.jsonl` path agreeing with
//! the simulator, and the docs listing every parameter.

use std::collections::BTreeSet;

use super::arms::{Arm, ArmContext, Ranker, ViewRanker, arms_for};
use super::dataset::Dataset;
use super::ledger::{EvaluationLedger, LedgerOpener, ReducerOpener, SqliteOpener, key_of};
use super::profile::{EvaluationProfile, Kind, sections};
use super::report::{Source, analyze, reason};
use super::run::{RunResult, run};
use super::*;
use crate::ranking::prior::{SubjectUtility, UtilityView};
use crate::utility::observation::AttributionLevel;
use crate::utility::observation::{Observation, validate_observation};
use crate::utility::reducer::v1::REDUCER_V1;
use crate::utility::reducer::{
    ProjectionRequest, ReducerContext, Rules, V1Params, project_with, reduce,
};
use crate::wire::json::Value;

fn small(edit: impl FnOnce(&mut EvaluationProfile)) -> EvaluationProfile {
    let mut p = EvaluationProfile::defaults();
    p.simulator.training_episodes = 800.0;
    p.simulator.held_out_ratio = 0.5;
    p.evaluation.bootstrap_resamples = 60.0;
    edit(&mut p);
    p
}

/// SQLite ledgers in a temporary directory that lives as long as the value.
struct Sqlite {
    _dir: tempfile::TempDir,
    opener: SqliteOpener,
}

fn sqlite() -> Sqlite {
    let dir = tempfile::tempdir().expect("temp dir");
    let opener = SqliteOpener::new(dir.path().to_path_buf());
    Sqlite { _dir: dir, opener }
}

fn simulate_and_run(p: &EvaluationProfile) -> (Dataset, RunResult) {
    let data = simulate::simulate(p).expect("simulation");
    let result = run(&data, p, &arms_for(&data), &ReducerOpener).expect("run");
    (data, result)
}

fn packet_text(p: &EvaluationProfile) -> String {
    let data = simulate::simulate(p).expect("simulation");
    let store = sqlite();
    let packet = evaluate(
        &data,
        p,
        &Source::Simulation { seed: p.seed },
        None,
        &store.opener,
    )
    .expect("packet");
    crate::wire::json::to_pretty_line(&packet)
}

#[test]
fn the_same_seed_gives_byte_identical_packets_and_another_seed_does_not() {
    let p = small(|_| {});
    assert_eq!(packet_text(&p), packet_text(&p));
    let mut q = p.clone();
    q.seed = 2;
    assert_ne!(packet_text(&p), packet_text(&q));
}

/// Non-helpful memories ranked above each truly helpful memory.
fn above(order: &[usize], truths: &dyn Fn(usize) -> bool, h: usize) -> usize {
    let pos = order.iter().position(|&i| i == h).unwrap_or(order.len());
    order[..pos].iter().filter(|&&i| !truths(i)).count()
}

#[test]
fn exact_causal_evidence_never_ranks_a_helpful_memory_lower_than_semantic() {
    // No model judge, error-free deterministic checks, plenty of replays and owner
    // corrections (all of them exact about a memory's effect on the episode's task), no
    // confounding, and relevance noise small enough (bounded at ±3.46 sd) that every pool
    // holds only memories of the episode's topic and traps, so a memory's effect on its
    // topic is also its truth for the episode.
    let p = small(|p| {
        let s = &mut p.simulator;
        s.evaluator_rate = 0.0;
        s.deterministic_effect_rate = 0.5;
        s.deterministic_effect_false_positive = 0.0;
        s.deterministic_effect_false_negative = 0.0;
        s.controlled_replay_rate = 0.3;
        s.owner_correction_rate = 0.05;
        s.relevance_noise = 0.05;
        s.confounding = 0.0;
    });
    let (data, result) = simulate_and_run(&p);
    let semantic = &result.arms[0];
    let bounded = &result.arms[2];
    assert_eq!(bounded.key, "bounded_utility");
    let mut changed = 0;
    let mut helpful_checked = 0;
    for (e, episode) in data.held_out.iter().enumerate() {
        let truths = |i: usize| episode.candidates[i].truth.is_helpful();
        let (a1, a3) = (&semantic.orders[e], &bounded.orders[e]);
        if a1 != a3 {
            changed += 1;
        }
        for &h in a1.iter().filter(|&&i| truths(i)) {
            helpful_checked += 1;
            assert!(
                above(a3, &truths, h) <= above(a1, &truths, h),
                "episode {e}: a non-helpful memory overtook helpful candidate {h}: {a1:?} -> {a3:?}"
            );
        }
        for cut in 1..=a1.len() {
            let count = |o: &[usize]| o[..cut].iter().filter(|&&i| truths(i)).count();
            assert!(count(a3) >= count(a1), "episode {e}, top {cut}");
        }
    }
    assert!(helpful_checked > 100, "{helpful_checked}");
    assert!(
        changed > 50,
        "the prior must actually move candidates: {changed}"
    );
    let analysis = analyze(result, &p, p.seed).expect("analysis");
    assert_eq!(analysis.gate.false_attenuation, Some(0.0));
}

#[test]
fn pure_noise_inference_without_stronger_evidence_leaves_arm_4_equal_to_arm_1() {
    let p = small(|p| {
        let s = &mut p.simulator;
        s.evaluator_accuracy = 1.0 / 3.0;
        s.deterministic_effect_rate = 0.0;
        s.controlled_replay_rate = 0.0;
        s.owner_correction_rate = 0.0;
    });
    let (data, result) = simulate_and_run(&p);
    assert_eq!(result.arms[3].key, "bounded_utility_without_inference");
    for e in 0..data.held_out.len() {
        assert_eq!(
            result.arms[3].orders[e], result.arms[0].orders[e],
            "episode {e}"
        );
    }
    assert_eq!(result.arms[3].values, result.arms[0].values);
    let moved = (0..data.held_out.len())
        .filter(|&e| result.arms[2].orders[e] != result.arms[0].orders[e])
        .count();
    assert!(
        moved > 0,
        "the noise must move arm 3 for the comparison to mean anything"
    );
}

/// A deliberately leaking arm: it pools item utility of every partition in the ledger
/// (other agents' and stale snapshots' included) and presents it as this partition's.
struct LeakingDouble;

impl Arm for LeakingDouble {
    fn key(&self) -> &'static str {
        "leaking_double"
    }
    fn title(&self) -> &'static str {
        "test double that merges utility across partitions"
    }
    fn prepare<'a>(&self, ctx: ArmContext<'a>) -> Result<Box<dyn Ranker + 'a>, RankEvaluateError> {
        let mut seen = BTreeSet::new();
        let subjects: Vec<SubjectUtility> = ctx
            .state
            .subjects
            .values()
            .flatten()
            .map(|s| s.utility.clone())
            .filter(|s| {
                s.level == AttributionLevel::Item && seen.insert(s.memory_ref_digests.clone())
            })
            .collect();
        Ok(Box::new(ViewRanker {
            view: UtilityView::new(ctx.partition.clone(), subjects)?,
            partition: ctx.partition,
            profile: &ctx.profile.rank_prior,
        }))
    }
}

#[test]
fn scope_leaks_are_zero_in_every_arm_and_caught_in_the_leaking_double() {
    let p = small(|_| {});
    let data = simulate::simulate(&p).expect("simulation");
    let mut arms = arms_for(&data);
    assert_eq!(arms.len(), 7, "a simulation adds the on-policy arm");
    arms.push(Box::new(LeakingDouble));
    let store = sqlite();
    let result = run(&data, &p, &arms, &store.opener).expect("run");
    assert_eq!(result.ledger.backend, "sqlite");
    for arm in &result.arms[..7] {
        assert_eq!(arm.leaks, 0, "{}", arm.key);
    }
    let double = &result.arms[7];
    assert!(
        double.leaks > 0 && double.leak_episodes > 0,
        "the metric must catch the double"
    );
    let analysis = analyze(result, &p, p.seed).expect("analysis");
    assert!(analysis.gate.reasons.contains(&reason::SCOPE_LEAK));
}

#[test]
fn the_sqlite_ledger_and_the_reducer_seam_read_back_what_utility_project_prints_under_v0_and_v1() {
    let p = small(|p| {
        let s = &mut p.simulator;
        s.training_episodes = 120.0;
        s.corpora = 1.0;
        s.memories_per_corpus = 10.0;
        s.topics_per_corpus = 3.0;
        s.hotness_trap_memories = 1.0;
        s.recall_limit = 5.0;
        s.max_memories_used = 2.0;
        s.delivery_retry_rate = 0.3;
    });
    let data = simulate::simulate(&p).expect("simulation");
    let store = sqlite();
    let mut on_sqlite = store.opener.open().expect("ledger");
    let mut in_memory: EvaluationLedger = ReducerOpener.open().expect("ledger");
    for o in &data.deliveries {
        on_sqlite.deliver(o).expect("deliver");
        in_memory.deliver(o).expect("deliver");
    }
    let (from_sqlite, sqlite_counters) = on_sqlite.read_back().expect("read back");
    let (from_memory, memory_counters) = in_memory.read_back().expect("read back");
    assert_eq!(from_sqlite, from_memory);
    let v1 = Rules::V1(V1Params::default());
    let (from_sqlite_v1, _) = on_sqlite.read_back_under(v1).expect("read back");
    let (from_memory_v1, _) = in_memory.read_back_under(v1).expect("read back");
    assert_eq!(from_sqlite_v1, from_memory_v1);
    assert_ne!(
        from_sqlite_v1, from_sqlite,
        "v1 subjects carry their posterior"
    );
    assert_eq!(sqlite_counters, memory_counters);
    assert!(
        sqlite_counters.duplicate > 0,
        "retries must reach the ledger twice"
    );
    let mut compared = 0;
    for partition in &data.partitions {
        let key = key_of(partition);
        let stream: Vec<Value> = data
            .deliveries
            .iter()
            .filter(|o| {
                super::ledger::partition_key(
                    &o.scope,
                    &o.retrieval_snapshot_ref,
                    &o.policy_snapshot_ref,
                ) == key
            })
            .map(|o| o.to_value())
            .collect();
        if stream.is_empty() {
            continue;
        }
        let projection = reduce(&ProjectionRequest {
            observations: &stream,
            scope: &Value::Object(partition.scope.to_sorted_map()),
            retrieval_snapshot_ref: &Value::from(partition.retrieval_snapshot_ref.as_str()),
            policy_snapshot_ref: &Value::from(partition.policy_snapshot_ref.as_str()),
            reducer_version: &Value::from(partition.reducer_version.as_str()),
            previous_projection: None,
        })
        .expect("projection");
        assert_ne!(
            projection.get("status"),
            Some(&Value::from("rejected")),
            "within the caps"
        );
        let ours = from_sqlite.get(&key).cloned().unwrap_or_default();
        assert_eq!(Some(&Value::from(ours.clone())), projection.get("subjects"));
        let from_projection = UtilityView::from_projection(&projection).expect("view");
        let facts: Vec<SubjectUtility> = ours
            .iter()
            .map(|s| super::ledger::subject_facts(s).expect("facts").utility)
            .collect();
        let from_ledger = UtilityView::new(partition.clone(), facts).expect("view");
        assert_eq!(from_projection, from_ledger);
        // Under v1: the subjects of the `memory_utility_projection_v1` of the same stream.
        let v1 = Rules::V1(V1Params::default());
        let context = ReducerContext::strict(
            &Value::Object(partition.scope.to_sorted_map()),
            &Value::from(partition.retrieval_snapshot_ref.as_str()),
            &Value::from(partition.policy_snapshot_ref.as_str()),
            &Value::from(REDUCER_V1),
        )
        .expect("context");
        let observations: Vec<Observation> = stream
            .iter()
            .map(|v| validate_observation(v).expect("observation"))
            .collect();
        let projection = project_with(&context, &observations, v1)
            .expect("v1 projection")
            .to_value();
        let ours = from_sqlite_v1.get(&key).cloned().unwrap_or_default();
        assert_eq!(Some(&Value::from(ours)), projection.get("subjects"));
        compared += 1;
    }
    assert!(compared >= 2, "{compared}");
}

#[test]
fn the_episodes_file_path_agrees_with_the_simulator() {
    let p = small(|p| p.simulator.training_episodes = 300.0);
    let mut data = simulate::simulate(&p).expect("simulation");
    let text = episodes::write_jsonl(&data);
    let parsed = episodes::parse(text.as_bytes()).expect("parse");
    assert_eq!(parsed.observation_lines, data.deliveries.len());
    // A file carries neither the simulated environment (validation ground truth, the
    // on-policy arm) nor the evidence runs and outcomes behind its deliveries: compare
    // with the simulation without them.
    assert_eq!(arms_for(&data).len(), 7);
    assert_eq!(arms_for(&parsed.dataset).len(), 6);
    data.environment.clear();
    data.evidence_work = None;
    data.outcomes.clear();
    let source = Source::Simulation { seed: p.seed };
    let a = evaluate(&data, &p, &source, None, &ReducerOpener).expect("packet");
    let b = evaluate(&parsed.dataset, &p, &source, None, &ReducerOpener).expect("packet");
    for key in [
        "verdict",
        "arms",
        "differences",
        "gate",
        "held_out",
        "ledger",
    ] {
        assert_eq!(a.get(key), b.get(key), "{key}");
    }
}

#[test]
fn malformed_episode_lines_are_listed_with_their_numbers() {
    let text = concat!(
        "{\"schema_version\": \"memory_utility_ranking_episode_v0\"}\n",
        "\n",
        "not json\n",
        "[1]\n",
        "{\"schema_version\": \"other\"}\n",
        "{\"schema_version\": \"memory_utility_observation_v0\"}\n",
    );
    let err = episodes::parse(text.as_bytes()).expect_err("malformed");
    let message = err.to_string();
    assert!(
        message.starts_with("episodes input has 5 malformed lines: line 1: "),
        "{message}"
    );
    for line in [
        "line 3: not JSON",
        "line 4: must be a JSON object",
        "line 5: schema_version must be",
        "line 6: ",
    ] {
        assert!(message.contains(line), "{line} in {message}");
    }
    assert!(
        !message.contains("line 2:"),
        "blank lines are skipped: {message}"
    );
}

#[test]
fn the_docs_list_every_parameter_with_its_default() {
    let docs = include_str!("../../../docs/rank-evaluate.md");
    for (section, specs) in sections() {
        for spec in specs {
            let default = match spec.kind {
                Kind::Int => format!("{}", spec.default as i64),
                Kind::Float => crate::wire::pyfmt::float_repr(spec.default),
            };
            let row = format!("| `{section}.{}` | {default} |", spec.name);
            assert!(
                docs.contains(&row),
                "docs/rank-evaluate.md lacks the row {row}"
            );
        }
    }
}

/// The world of `fixtures/rank_evaluate/valid/simulated-small.jsonl`.
fn fixture_profile() -> EvaluationProfile {
    small(|p| {
        p.seed = 11;
        let s = &mut p.simulator;
        s.training_episodes = 40.0;
        s.held_out_ratio = 0.3;
        s.corpora = 1.0;
        s.memories_per_corpus = 12.0;
        s.topics_per_corpus = 3.0;
        s.hotness_trap_memories = 1.0;
        s.recall_limit = 6.0;
        s.deterministic_effect_rate = 0.3;
    })
}

#[test]
fn the_simulated_episodes_fixture_is_current() {
    let data = simulate::simulate(&fixture_profile()).expect("simulation");
    let text = episodes::write_jsonl(&data);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/rank_evaluate/valid/simulated-small.jsonl");
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, &text).expect("write fixture");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "fixture drifted (run UPDATE_FIXTURES=1 cargo test)"
    );
}

/// A world whose outcomes do not depend on the helpful effect (every task succeeds with
/// probability 0.98, the clamp, whatever is applied): only the hidden effects differ.
fn clamped_world(helpful_effect: f64) -> EvaluationProfile {
    small(|p| {
        let s = &mut p.simulator;
        s.training_episodes = 300.0;
        s.base_success = 1.0;
        s.difficulty_spread = 0.0;
        s.harmful_effect = 0.0;
        s.helpful_effect = helpful_effect;
        s.owner_correction_rate = 0.0;
        s.deterministic_effect_rate = 0.3;
        s.controlled_replay_rate = 0.3;
    })
}

#[test]
fn evidence_never_reads_the_hidden_effects_only_outcomes_and_re_runs() {
    // Two worlds with the same outcomes and different hidden effects: every delivery the
    // judge, the deterministic checks and the replays produce is the same, byte for byte,
    // while the held-out ground truth (the effects) differs.
    let a = simulate::simulate(&clamped_world(0.0)).expect("simulation");
    let b = simulate::simulate(&clamped_world(0.45)).expect("simulation");
    assert_eq!(a.outcomes, b.outcomes, "the same outcomes");
    let inference = |d: &Dataset| -> Vec<Value> {
        d.deliveries
            .iter()
            .filter(|o| super::ledger::is_inference(o))
            .map(|o| o.to_value())
            .collect()
    };
    assert!(!inference(&a).is_empty());
    assert_eq!(inference(&a), inference(&b), "inference evidence");
    let all = |d: &Dataset| {
        d.deliveries
            .iter()
            .map(|o| o.to_value())
            .collect::<Vec<_>>()
    };
    assert_eq!(all(&a), all(&b), "every automatic evidence path");
    let helpful = |d: &Dataset| {
        d.held_out
            .iter()
            .flat_map(|e| &e.candidates)
            .filter(|c| c.truth.is_helpful())
            .count()
    };
    assert_eq!(helpful(&a), 0);
    assert!(helpful(&b) > 0, "the worlds differ in their hidden effects");
}

#[test]
fn replays_and_error_free_checks_never_contradict_the_causal_effect() {
    let p = small(|p| {
        let s = &mut p.simulator;
        s.deterministic_effect_rate = 0.5;
        s.deterministic_effect_false_positive = 0.0;
        s.deterministic_effect_false_negative = 0.0;
        s.controlled_replay_rate = 0.5;
    });
    let data = simulate::simulate(&p).expect("simulation");
    let mut checked = 0;
    for o in &data.deliveries {
        let strong = matches!(
            o.evidence_basis,
            crate::utility::observation::EvidenceBasis::ControlledReplay
                | crate::utility::observation::EvidenceBasis::DeterministicEffect
        );
        if !strong {
            continue;
        }
        let index: usize = o
            .outcome_ref
            .strip_prefix("effect:sim-")
            .and_then(|n| n.parse().ok())
            .expect("simulated outcome ref");
        let env = &data.environment[index];
        let truth = env
            .candidates
            .iter()
            .find(|c| c.digest == o.memory_ref_digests[0])
            .map(|c| c.truth)
            .expect("an applied memory was recalled");
        use crate::utility::observation::UtilityLabel as L;
        match o.utility_label {
            L::Helpful => assert!(truth.is_helpful(), "{o:?}"),
            L::Harmful => assert_eq!(truth, super::dataset::Truth::Harmful, "{o:?}"),
            L::Neutral => assert!(!truth.is_helpful(), "{o:?}"),
            L::Unknown => {}
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn a_world_where_memories_cause_nothing_holds() {
    let p = small(|p| {
        p.simulator.helpful_effect = 0.0;
        p.simulator.harmful_effect = 0.0;
    });
    let (_, result) = simulate_and_run(&p);
    assert_eq!(result.held_out.answerable, 0);
    let analysis = analyze(result, &p, p.seed).expect("analysis");
    assert_eq!(analysis.gate.verdict(), packet::Verdict::Hold);
}

#[test]
fn tuning_never_sees_the_held_out_episodes() {
    let p = small(|_| {});
    let data = simulate::simulate(&p).expect("simulation");
    let tuned = tuning::tune(&data, &p).expect("tuning");
    let mut other = data.clone();
    other.held_out.clear();
    assert_eq!(tuning::tune(&other, &p).expect("tuning"), tuned);
    for key in ["semantic_hotness", "memrl", "memrl_on_policy"] {
        let t = tuned.of(key).expect("tuned arm");
        assert_eq!(t.method, tuning::Method::ValidationGrid, "{key}");
        assert_eq!(t.validation_episodes, 160, "{key}: 20% of 800");
        assert!(t.validation_ndcg.is_some() && !t.grid.is_empty(), "{key}");
    }
    // Without an environment (an episodes file) the profile's values are used, and said so.
    let mut file_like = data;
    file_like.environment.clear();
    let untuned = tuning::tune(&file_like, &p).expect("tuning");
    assert_eq!(untuned.settings, super::arms::ArmSettings::of_profile(&p));
    assert_eq!(
        untuned.of("memrl").and_then(|t| t.reason),
        Some("no_validation_ground_truth")
    );
    assert!(untuned.of("memrl_on_policy").is_none());
}

#[test]
fn the_gate_names_the_best_arm_and_every_arm_that_beats_the_gated_arm() {
    let p = small(|_| {});
    let (_, result) = simulate_and_run(&p);
    let analysis = analyze(result, &p, p.seed).expect("analysis");
    let ndcg = |i: usize| analysis.boot.arms[i][0].estimate.unwrap_or(f64::MIN);
    let best = analysis.gate.best_arm;
    for i in 0..analysis.run.arms.len() {
        assert!(ndcg(i) <= ndcg(best), "arm {i}");
    }
    for (i, d) in &analysis.gate.beating_gated {
        assert_ne!(analysis.run.arms[*i].key, "bounded_utility");
        assert!(d.lower.is_some_and(|l| l > 0.0));
        assert!(ndcg(*i) > ndcg(2));
    }
}

#[test]
fn task_cost_charges_each_arm_for_the_evidence_it_needs() {
    let p = small(|_| {});
    let (data, result) = simulate_and_run(&p);
    let work = data
        .evidence_work
        .expect("the simulator counts its evidence runs");
    let n = data.training.len() as f64;
    let c = &p.cost;
    let cost = |key: &str| {
        result
            .arms
            .iter()
            .find(|a| a.key == key)
            .map(|a| a.evidence_cost_per_task)
            .expect("arm")
    };
    let without = (c.deterministic_effect * work.deterministic_effect as f64
        + c.controlled_replay * work.controlled_replay as f64
        + c.owner_correction * work.owner_correction as f64)
        / n;
    assert!((cost("bounded_utility_without_inference") - without).abs() < 1e-9);
    let inference = c.evaluator_inference * work.evaluator_inference as f64 / n;
    assert!((cost("bounded_utility") - without - inference).abs() < 1e-9);
    for key in ["semantic", "semantic_hotness", "memrl", "memrl_on_policy"] {
        assert_eq!(cost(key), 0.0, "{key}");
    }
}

#[test]
fn evaluator_disagreement_against_outcomes_is_measured_where_inference_stands_alone() {
    let p = small(|p| {
        let s = &mut p.simulator;
        s.deterministic_effect_rate = 0.0;
        s.controlled_replay_rate = 0.0;
        s.owner_correction_rate = 0.0;
        s.evaluator_accuracy = 1.0;
    });
    let (_, result) = simulate_and_run(&p);
    assert!(result.disagreement.is_empty(), "no stronger tier at all");
    assert!(result.outcome_disagreement.len() > 20);
    assert!(
        result.outcome_disagreement.iter().all(|f| !f),
        "a judge that follows every outcome never contradicts one"
    );
    let noisy = small(|p| {
        let s = &mut p.simulator;
        s.deterministic_effect_rate = 0.0;
        s.controlled_replay_rate = 0.0;
        s.owner_correction_rate = 0.0;
        s.evaluator_accuracy = 0.0;
    });
    let (_, result) = simulate_and_run(&noisy);
    let share = result.outcome_disagreement.iter().filter(|f| **f).count() as f64
        / result.outcome_disagreement.len() as f64;
    assert!(
        share > 0.5,
        "a judge that never follows the outcome: {share}"
    );
}

#[test]
fn a_sweep_of_a_tuned_value_is_refused_while_tuning_is_on() {
    let p = small(|_| {});
    let data = simulate::simulate(&p).expect("simulation");
    let sweep = profile::parse_sweep("memrl.alpha=0.1,0.3").expect("sweep");
    let err = evaluate(
        &data,
        &p,
        &Source::Simulation { seed: p.seed },
        Some(&sweep),
        &ReducerOpener,
    )
    .expect_err("refused");
    assert!(
        err.to_string().contains("evaluation.tune_baselines"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Issue 23: the noisy harmful memory, v0 against v1 on the same episodes
// ---------------------------------------------------------------------------------------

/// The noisy harmful memory of issue 23: the best text match for a common query, whose
/// application succeeds with probability 0.1. Training applies it `harmful + helpful`
/// times; the judge labels each application by its verified outcome (`harmful` failures,
/// `helpful` lucky successes, one in eight). Every held-out episode asks the common query:
/// the harmful memory is the best match (0.80), a truly helpful one and a neutral one
/// follow closely (0.78, 0.76).
fn noisy_harmful_world(harmful: usize, helpful: usize, reducer_version: &str) -> Dataset {
    use super::dataset::{HeldOutCandidate, HeldOutEpisode, TrainingEpisode, Truth};
    use crate::ranking::prior::Partition;
    use crate::utility::testkit::{DIGEST_A, Spec};

    let mut data = Dataset::default();
    let (mut bad, mut good) = (0, 0);
    for i in 0..harmful + helpful {
        // The lucky successes fall on the 4th, 12th, ... application.
        let lucky = i % 8 == 3 && good < helpful || bad == harmful;
        let label = if lucky { "helpful" } else { "harmful" };
        if lucky {
            good += 1;
        } else {
            bad += 1;
        }
        let at = format!("2026-09-01T{:02}:{:02}:00Z", i / 60, i % 60);
        let spec = Spec::item(label, "evaluator_inference", 0.9, &format!("noisy-{i}")).at(&at);
        let observation = spec.build();
        let partition = data.intern(&Partition {
            scope: observation.scope.clone(),
            retrieval_snapshot_ref: observation.retrieval_snapshot_ref.to_string(),
            policy_snapshot_ref: observation.policy_snapshot_ref.to_string(),
            reducer_version: reducer_version.to_owned(),
        });
        data.training.push(TrainingEpisode {
            partition,
            at: crate::wire::timestamp::parse_aware(&at)
                .expect("time")
                .micros,
            recalled: vec![DIGEST_A.to_owned(), NOISY_HELPFUL.to_owned()],
            used: vec![DIGEST_A.to_owned()],
            reward: if lucky { 1.0 } else { 0.0 },
        });
        data.deliveries.push(observation);
    }
    assert_eq!((bad, good), (harmful, helpful));
    for e in 0..20 {
        data.held_out.push(HeldOutEpisode {
            partition: 0,
            at: crate::wire::timestamp::parse_aware("2026-09-02T00:00:00Z")
                .expect("time")
                .micros
                + e,
            candidates: vec![
                HeldOutCandidate {
                    digest: DIGEST_A.to_owned(),
                    relevance: 0.80,
                    truth: Truth::Harmful,
                },
                HeldOutCandidate {
                    digest: NOISY_HELPFUL.to_owned(),
                    relevance: 0.78,
                    truth: Truth::Helpful(1.0),
                },
                HeldOutCandidate {
                    digest: NOISY_NEUTRAL.to_owned(),
                    relevance: 0.76,
                    truth: Truth::Neutral,
                },
            ],
        });
    }
    data
}

const NOISY_HELPFUL: &str = "1111222233334444";
const NOISY_NEUTRAL: &str = "fedcba9876543210";

/// Issue 23, part 4: one lucky success undoes v0's attenuation (7 harmful + 1 helpful of
/// one tier are a same-tier conflict: `unknown`, modifier 1.0, ranked first again), and
/// 14 + 2 never demote it; under v1 the same deliveries keep it attenuated, below rank 1,
/// in every held-out episode, and the bounded-utility arm of v1 is the one the gate
/// qualifies when the partition names `memory_utility_reducer_v1`.
#[test]
fn v1_keeps_the_noisy_harmful_memory_below_rank_1_where_v0_flips_it_back_to_first() {
    use super::arms::{ArmSettings, TrainingState};
    use crate::ranking::prior::{self as rank_prior, Reason};
    use crate::utility::testkit::DIGEST_A;

    for (harmful, helpful) in [(7, 1), (14, 2)] {
        for version in ["memory_utility_reducer_v0", REDUCER_V1] {
            let case = format!("{harmful} harmful + {helpful} helpful, partitions of {version}");
            let data = noisy_harmful_world(harmful, helpful, version);
            let p = small(|p| p.evaluation.k = 1.0);
            let partition = &data.partitions[0];

            // What each arm's utility makes of the memory.
            let state =
                TrainingState::build(&data, &ArmSettings::of_profile(&p), &p, &ReducerOpener)
                    .expect("state");
            let modifier = |subjects: &[super::ledger::SubjectFacts]| {
                let view = UtilityView::new(
                    partition.clone(),
                    subjects.iter().map(|s| s.utility.clone()),
                )
                .expect("view");
                rank_prior::modifier(&view, DIGEST_A, &p.rank_prior)
            };
            let key = key_of(partition);
            let v0 = modifier(&state.subjects[&key]);
            assert_eq!(v0.value, 1.0, "{case}: v0 flips it to unknown");
            assert_eq!(v0.reasons, [Reason::UtilityUnknown], "{case}");
            let v1 = modifier(&state.subjects_v1[&key]);
            assert!(v1.value < 1.0, "{case}: v1 keeps it attenuated: {v1:?}");
            assert_eq!(v1.reasons[0], Reason::NegativeUtilityAttenuation, "{case}");

            // Ranked on the same held-out episodes.
            let result = run(&data, &p, &arms_for(&data), &ReducerOpener).expect("run");
            let arm = |key: &str| {
                result
                    .arms
                    .iter()
                    .find(|a| a.key == key)
                    .unwrap_or_else(|| panic!("arm {key}"))
            };
            for order in &arm("bounded_utility").orders {
                assert_eq!(order[0], 0, "{case}: v0 ranks the harmful memory first");
            }
            for order in &arm("bounded_utility_v1").orders {
                assert_ne!(order[0], 0, "{case}: v1 ranks it below rank 1");
            }
            let expected_gate = if version == REDUCER_V1 {
                "bounded_utility_v1"
            } else {
                "bounded_utility"
            };
            assert_eq!(result.gated_arm, expected_gate, "{case}");
            let analysis = analyze(result, &p, p.seed).expect("analysis");
            let harmful_at_1 = |a: usize| analysis.boot.arms[a][2].estimate;
            let (a0, a1) = (
                analysis
                    .run
                    .arms
                    .iter()
                    .position(|a| a.key == "bounded_utility"),
                analysis
                    .run
                    .arms
                    .iter()
                    .position(|a| a.key == "bounded_utility_v1"),
            );
            assert_eq!(harmful_at_1(a0.expect("v0")), Some(1.0), "{case}");
            assert_eq!(harmful_at_1(a1.expect("v1")), Some(0.0), "{case}");
            let v1_minus_v0 = analysis.v1_versus_v0.expect("both arms ran");
            assert_eq!(v1_minus_v0[2].estimate, Some(-1.0), "{case}: harmful@1");
            assert_eq!(v1_minus_v0[1].estimate, Some(1.0), "{case}: success@1");
        }
    }
}
