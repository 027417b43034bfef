//! The evaluation profile `memory_utility_ranking_evaluation_profile_v0`: the rank-prior
//! profile under evaluation, the metric and gate settings, the unit costs of task cost, the
//! comparison arms' settings (hotness, MemRL) and every simulator parameter, each with a documented default and
//! bounds, plus the `--sweep NAME=V1,V2,...` syntax.
//!
//! Every numeric parameter is declared once in a table ([`ParamSpec`]) that drives parsing,
//! defaults, the normalized echo in the verdict packet, the profile's JSON Schema, the
//! sweep and the parameter tables of `docs/rank-evaluate.md` (a test checks that the
//! document lists every parameter with its default). Pure: no I/O.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::obj;
use crate::wire::digest;
use crate::wire::json::{Map, Value};
use crate::wire::keys;
use crate::wire::text::FieldError;

use super::error::RankEvaluateError;
use crate::ranking::prior::profile::ProfileVersion;
use crate::ranking::prior::{PROFILE_SCHEMA_VERSION, Profile};
use crate::utility::observation::EvidenceBasis;

/// Schema version of an evaluation profile (optional in the profile object).
pub const EVALUATION_PROFILE_SCHEMA_VERSION: &str = "memory_utility_ranking_evaluation_profile_v0";
/// The seed when neither the profile nor `--seed` names one.
pub const DEFAULT_SEED: u64 = 1;
pub use super::rng::MAX_SEED;
/// At most this many sweep points.
pub const MAX_SWEEP_POINTS: usize = 20;

/// Whether a parameter takes integers or any number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
}

/// One numeric parameter: name, kind, default, inclusive bounds and its meaning.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub doc: &'static str,
}

macro_rules! params {
    ($(#[$meta:meta])* $ty:ident { $( $(#[doc = $doc:literal])+ $name:ident : $kind:ident = $default:expr, [$min:expr, $max:expr]; )+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $ty { $( $(#[doc = $doc])+ pub $name: f64, )+ }

        impl $ty {
            /// Every parameter of this section, in declaration order.
            pub const SPECS: &'static [ParamSpec] = &[
                $( ParamSpec {
                    name: stringify!($name),
                    kind: Kind::$kind,
                    default: $default,
                    min: $min,
                    max: $max,
                    doc: concat!($($doc),+),
                }, )+
            ];

            /// The value of `name`.
            pub fn get(&self, name: &str) -> Option<f64> {
                match name { $( stringify!($name) => Some(self.$name), )+ _ => None }
            }

            fn slot(&mut self, name: &str) -> Option<&mut f64> {
                match name { $( stringify!($name) => Some(&mut self.$name), )+ _ => None }
            }
        }

        impl Default for $ty {
            fn default() -> Self {
                $ty { $( $name: $default, )+ }
            }
        }
    };
}

params!(
    /// How the metrics and the gate are computed.
    EvaluationSettings {
        /// The cut-off k of nDCG@k and harmful@k.
        k: Int = 3.0, [1.0, 100.0];
        /// Bootstrap resamples of the held-out episodes (paired across arms).
        bootstrap_resamples: Int = 1000.0, [10.0, 100000.0];
        /// Two-sided level of every percentile interval.
        confidence_level: Float = 0.95, [0.5, 0.999];
        /// The gate's largest admissible false attenuation of arm 3 (share of truly helpful pool members whose modifier fell below 1).
        false_attenuation_max: Float = 0.05, [0.0, 1.0];
        /// 1: tune the learned comparison arms (hotness, MemRL, on-policy MemRL) on a validation split of the training episodes over the stated grids; 0: use the hotness and memrl values of this profile as given.
        tune_baselines: Int = 1.0, [0.0, 1.0];
        /// Share of the training episodes (the latest ones) held back as the validation split for tuning; the arms are then trained on every training episode with the tuned values.
        validation_share: Float = 0.2, [0.05, 0.5];
    }
);

params!(
    /// Unit costs of task cost, in units of one memory read: what reading memories and producing each kind of evidence costs per task.
    CostSettings {
        /// Cost of reading one memory (task cost counts the memories read down to the first truly helpful one).
        memory_read: Float = 1.0, [0.0, 1000000.0];
        /// Cost of one evaluator (model judge) call.
        evaluator_inference: Float = 4.0, [0.0, 1000000.0];
        /// Cost of one deterministic check of a memory's contribution.
        deterministic_effect: Float = 2.0, [0.0, 1000000.0];
        /// Cost of one controlled replay (the task run again without one memory).
        controlled_replay: Float = 20.0, [0.0, 1000000.0];
        /// Cost of one owner correction (a person's review).
        owner_correction: Float = 50.0, [0.0, 1000000.0];
    }
);

params!(
    /// Arm 2: OpenViking-style hotness blended into the semantic score.
    HotnessSettings {
        /// Weight of hotness in `(1 - alpha) * relevance + alpha * hotness` (the value used when tuning is off or impossible).
        alpha: Float = 0.2, [0.0, 1.0];
        /// Half-life in days of the recency decay inside hotness (the value used when tuning is off or impossible).
        half_life_days: Float = 7.0, [0.001, 100000.0];
    }
);

params!(
    /// Arms 5 and 7: the MemRL-style Q-value arms (off-policy and on-policy).
    MemrlSettings {
        /// Learning rate of `Q <- Q + alpha * (r - Q)` (the value used when tuning is off or impossible).
        alpha: Float = 0.3, [0.0001, 1.0];
        /// Weight of the z-scored Q-value against the z-scored similarity (`lambda`; the value used when tuning is off or impossible).
        mix_weight: Float = 0.5, [0.0, 1.0];
        /// Q-value of a memory never used in training.
        q_init: Float = 0.0, [-1000.0, 1000.0];
        /// Terminal reward of a successful episode.
        success_reward: Float = 1.0, [-1000.0, 1000.0];
        /// Terminal reward of a failed episode.
        failure_reward: Float = 0.0, [-1000.0, 1000.0];
    }
);

params!(
    /// The simulated world, its training traffic and its held-out episodes.
    SimulatorParams {
        /// Training episodes (also `--episodes`).
        training_episodes: Int = 10000.0, [1.0, 1000000.0];
        /// Held-out episodes as a share of the training episodes (rounded, at least 1).
        held_out_ratio: Float = 0.2, [0.0001, 10.0];
        /// Corpora; every corpus has its own memories.
        corpora: Int = 2.0, [1.0, 16.0];
        /// Agents per corpus; each (agent, corpus) pair is one scope, so agents of one corpus see the same memory digests (near-duplicates across scopes).
        agents_per_corpus: Int = 2.0, [1.0, 16.0];
        /// Memories per corpus, including the hotness-trap group.
        memories_per_corpus: Int = 48.0, [2.0, 2000.0];
        /// Topics per corpus; ordinary memories are spread evenly over them.
        topics_per_corpus: Int = 8.0, [1.0, 500.0];
        /// Generic memories per corpus relevant to every topic, harmful in every scope and popular (the hotness trap).
        hotness_trap_memories: Int = 3.0, [0.0, 100.0];
        /// Share of ordinary memories that are helpful (a positive causal effect on tasks of their topic).
        helpful_share: Float = 0.3, [0.0, 1.0];
        /// Share of ordinary memories that are harmful (a negative causal effect on tasks of their topic; the rest is neutral, no effect).
        harmful_share: Float = 0.2, [0.0, 1.0];
        /// Smallest hidden strength of a helpful or harmful memory (its effect is the strength times helpful_effect or harmful_effect).
        strength_min: Float = 0.3, [0.0, 1.0];
        /// Largest hidden strength.
        strength_max: Float = 1.0, [0.0, 1.0];
        /// Chance that an ordinary memory's hidden effect is drawn again for a scope, so the same digest can be helpful for one agent and harmful for another.
        cross_scope_truth_flip: Float = 0.25, [0.0, 1.0];
        /// Noise-free relevance of a memory to a query of its own topic.
        on_topic_relevance: Float = 0.75, [0.0, 1.0];
        /// Noise-free relevance to a query of another topic.
        off_topic_relevance: Float = 0.25, [0.0, 1.0];
        /// Noise-free relevance of a hotness-trap memory to every query.
        trap_relevance: Float = 0.6, [0.0, 1.0];
        /// Added to the on-topic relevance of a helpful memory and subtracted for a harmful one: how much semantic retrieval already knows about utility (0: nothing).
        relevance_truth_signal: Float = 0.0, [-1.0, 1.0];
        /// Standard deviation of the relevance noise (bounded at ±3.46 standard deviations; observed relevance is clamped to [0, 1]).
        relevance_noise: Float = 0.12, [0.0, 1.0];
        /// Candidates a recall returns (the most relevant by observed relevance).
        recall_limit: Int = 12.0, [1.0, 1000.0];
        /// Chance that an episode applies several memories (2 up to max_memories_used) instead of one.
        multi_memory_rate: Float = 0.6, [0.0, 1.0];
        /// Most memories applied in one episode.
        max_memories_used: Int = 3.0, [1.0, 16.0];
        /// Chance that the agent applies memories drawn at random from the recall instead of the top ones.
        exploration_rate: Float = 0.2, [0.0, 1.0];
        /// Success probability of a task of average difficulty whose applied memories have no effect.
        base_success: Float = 0.35, [0.0, 1.0];
        /// Spread of task difficulty: a task's base success is base_success + difficulty_spread * (easiness - 0.5), easiness uniform in [0, 1] (0: every task equally hard).
        difficulty_spread: Float = 0.4, [0.0, 1.0];
        /// Causal effect of an applied helpful memory on the success probability of a task of its topic, times its strength (0: helpful memories have no causal effect).
        helpful_effect: Float = 0.45, [0.0, 1.0];
        /// Causal effect removed from the success probability by an applied harmful memory (on a task of its topic; a trap on every task), times its strength (0: no causal harm).
        harmful_effect: Float = 0.35, [0.0, 1.0];
        /// Share of ordinary memories recalled mostly for easy tasks: on a task of their topic they look on-topic only when the task is easy (easiness at least 0.5), otherwise off-topic (confounding of usage with difficulty).
        confounding: Float = 0.2, [0.0, 1.0];
        /// Chance that the evaluator judges an episode at all.
        evaluator_rate: Float = 1.0, [0.0, 1.0];
        /// Chance that an evaluator label follows the outcome it sees (helpful on success, harmful on failure); otherwise one of the two other labels, uniformly. The judge never sees a memory's effect.
        evaluator_accuracy: Float = 0.75, [0.0, 1.0];
        /// Reported evaluator confidence minus its accuracy (clamped to [0.01, 1]).
        evaluator_overconfidence: Float = 0.15, [-1.0, 1.0];
        /// Chance that the evaluator claims item-level credit in a multi-memory episode (otherwise one set-level observation labelled by the outcome).
        evaluator_item_rate: Float = 0.35, [0.0, 1.0];
        /// Chance per episode of a deterministic check of one applied memory's contribution (deterministic_effect): a noise-free re-run of the task without that memory.
        deterministic_effect_rate: Float = 0.08, [0.0, 1.0];
        /// Chance that the check reports an effect (helpful or harmful, evenly) for a memory that made no difference.
        deterministic_effect_false_positive: Float = 0.05, [0.0, 1.0];
        /// Chance that the check reports no effect (neutral) for a memory that made a difference.
        deterministic_effect_false_negative: Float = 0.05, [0.0, 1.0];
        /// Chance per multi-memory episode of a controlled replay of one applied memory: the episode re-run without it with the same random state; a changed outcome is helpful or harmful, an unchanged one unknown (insufficient).
        controlled_replay_rate: Float = 0.03, [0.0, 1.0];
        /// Chance per episode that the owner corrects one applied memory (the owner knows its effect on the task).
        owner_correction_rate: Float = 0.01, [0.0, 1.0];
        /// Chance that a delivery reaches the ledger twice (an idempotent retry).
        delivery_retry_rate: Float = 0.05, [0.0, 1.0];
        /// Share of training episodes run under the previous policy snapshot (another partition, never used for the held-out ranking).
        stale_snapshot_rate: Float = 0.1, [0.0, 1.0];
        /// Minutes between consecutive episodes (recency for hotness).
        minutes_between_episodes: Float = 5.0, [0.0, 10000.0];
        /// 1: the simulated partitions name memory_utility_reducer_v1 and the gate qualifies arm 6 (bounded_utility_v1); 0: they name memory_utility_reducer_v0 and the gate qualifies arm 3 (bounded_utility). Both arms run either way.
        reducer_v1: Int = 0.0, [0.0, 1.0];
    }
);

/// The rank-prior profile evaluated when the evaluation profile names none.
pub fn default_rank_prior() -> Value {
    Value::Object(obj! {
        "schema_version" => PROFILE_SCHEMA_VERSION,
        "profile_id" => "profile:rank-evaluate-default",
        "semantic_floor" => 0.05,
        "candidate_pool" => 8,
        "modifier_bounds" => Value::from(vec![Value::Float(0.5), Value::Float(2.0)]),
        "min_evidence_basis" => EvidenceBasis::EvaluatorInference.as_str(),
        "allow_evaluator_inference" => true,
        "min_support" => 1,
    })
}

/// A resolved evaluation profile.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluationProfile {
    pub seed: u64,
    pub rank_prior: Profile,
    pub evaluation: EvaluationSettings,
    pub cost: CostSettings,
    pub hotness: HotnessSettings,
    pub memrl: MemrlSettings,
    pub simulator: SimulatorParams,
}

const SECTIONS: [&str; 8] = [
    "schema_version",
    "seed",
    "rank_prior",
    "evaluation",
    "cost",
    "hotness",
    "memrl",
    "simulator",
];

fn invalid(message: impl Into<String>) -> RankEvaluateError {
    RankEvaluateError::Profile(message.into())
}

fn number(v: &Value, label: &str, spec: &ParamSpec) -> Result<f64, RankEvaluateError> {
    let bounds = || {
        let shown = |x: f64| {
            if spec.kind == Kind::Int {
                format!("{}", x as i64)
            } else {
                crate::wire::pyfmt::float_repr(x)
            }
        };
        format!("between {} and {}", shown(spec.min), shown(spec.max))
    };
    let f = match (v, spec.kind) {
        (Value::Int(i), _) => *i as f64,
        (Value::Float(f), Kind::Float) => *f,
        (Value::Float(f), Kind::Int) if f.fract() == 0.0 => *f,
        (_, Kind::Int) => {
            return Err(invalid(format!("{label} must be an integer {}", bounds())));
        }
        _ => return Err(invalid(format!("{label} must be a number {}", bounds()))),
    };
    if !f.is_finite() || f < spec.min || f > spec.max {
        let what = if spec.kind == Kind::Int {
            "an integer"
        } else {
            "a number"
        };
        return Err(invalid(format!("{label} must be {what} {}", bounds())));
    }
    Ok(f)
}

fn read_section(
    value: Option<&Value>,
    section: &str,
    specs: &[ParamSpec],
    mut set: impl FnMut(&str, f64),
) -> Result<(), RankEvaluateError> {
    let Some(value) = value else {
        return Ok(());
    };
    let Some(map) = value.as_object() else {
        return Err(invalid(format!("profile.{section} must be an object")));
    };
    let unknown: Vec<&str> = map
        .keys()
        .filter(|k| !specs.iter().any(|s| s.name == *k))
        .collect();
    if !unknown.is_empty() {
        return Err(invalid(format!(
            "profile.{section} contains unsupported fields: {}",
            keys::list(unknown)
        )));
    }
    for spec in specs {
        if let Some(v) = map.get(spec.name) {
            set(
                spec.name,
                number(v, &format!("profile.{section}.{}", spec.name), spec)?,
            );
        }
    }
    Ok(())
}

fn section_value(specs: &[ParamSpec], get: impl Fn(&str) -> Option<f64>) -> Value {
    let mut map = Map::with_capacity(specs.len());
    for spec in specs {
        let v = get(spec.name).unwrap_or(spec.default);
        match spec.kind {
            Kind::Int => map.insert(spec.name, v as i64),
            Kind::Float => map.insert(spec.name, Value::Float(v)),
        }
    }
    Value::Object(map)
}

impl EvaluationProfile {
    /// The defaults: the default rank prior and every documented default.
    pub fn defaults() -> EvaluationProfile {
        EvaluationProfile::from_value(&Value::Object(Map::new()))
            .unwrap_or_else(|_| unreachable_default())
    }

    /// Reads a profile object strictly: unknown keys refused, every value bounded.
    pub fn from_value(value: &Value) -> Result<EvaluationProfile, RankEvaluateError> {
        let Some(map) = value.as_object() else {
            return Err(invalid("profile must be a JSON object"));
        };
        let unknown: Vec<&str> = map.keys().filter(|k| !SECTIONS.contains(k)).collect();
        if !unknown.is_empty() {
            return Err(invalid(format!(
                "profile contains unsupported fields: {}",
                keys::list(unknown)
            )));
        }
        if let Some(v) = map.get("schema_version")
            && v.as_str() != Some(EVALUATION_PROFILE_SCHEMA_VERSION)
        {
            return Err(invalid(format!(
                "profile.schema_version must be {EVALUATION_PROFILE_SCHEMA_VERSION}"
            )));
        }
        let seed = match map.get("seed") {
            None => DEFAULT_SEED,
            Some(Value::Int(i)) if *i >= 0 && (*i as u64) <= MAX_SEED => *i as u64,
            Some(_) => {
                return Err(invalid(format!(
                    "profile.seed must be an integer between 0 and {MAX_SEED}"
                )));
            }
        };
        let rank_prior_value = map
            .get("rank_prior")
            .cloned()
            .unwrap_or_else(default_rank_prior);
        let rank_prior = Profile::from_value(&rank_prior_value)
            .map_err(|e| invalid(format!("profile.rank_prior: {e}")))?;
        let mut profile = EvaluationProfile {
            seed,
            rank_prior,
            evaluation: EvaluationSettings::default(),
            cost: CostSettings::default(),
            hotness: HotnessSettings::default(),
            memrl: MemrlSettings::default(),
            simulator: SimulatorParams::default(),
        };
        read_section(map.get("cost"), "cost", CostSettings::SPECS, |k, v| {
            if let Some(slot) = profile.cost.slot(k) {
                *slot = v;
            }
        })?;
        read_section(
            map.get("evaluation"),
            "evaluation",
            EvaluationSettings::SPECS,
            |k, v| {
                if let Some(slot) = profile.evaluation.slot(k) {
                    *slot = v;
                }
            },
        )?;
        read_section(
            map.get("hotness"),
            "hotness",
            HotnessSettings::SPECS,
            |k, v| {
                if let Some(slot) = profile.hotness.slot(k) {
                    *slot = v;
                }
            },
        )?;
        read_section(map.get("memrl"), "memrl", MemrlSettings::SPECS, |k, v| {
            if let Some(slot) = profile.memrl.slot(k) {
                *slot = v;
            }
        })?;
        read_section(
            map.get("simulator"),
            "simulator",
            SimulatorParams::SPECS,
            |k, v| {
                if let Some(slot) = profile.simulator.slot(k) {
                    *slot = v;
                }
            },
        )?;
        profile.check_consistency()?;
        Ok(profile)
    }

    /// Rules that involve several parameters.
    pub fn check_consistency(&self) -> Result<(), RankEvaluateError> {
        let s = &self.simulator;
        if s.helpful_share + s.harmful_share > 1.0 {
            return Err(invalid(
                "profile.simulator.helpful_share plus harmful_share must be at most 1",
            ));
        }
        if s.strength_min > s.strength_max {
            return Err(invalid(
                "profile.simulator.strength_min must be at most strength_max",
            ));
        }
        if s.hotness_trap_memories >= s.memories_per_corpus {
            return Err(invalid(
                "profile.simulator.hotness_trap_memories must be smaller than memories_per_corpus",
            ));
        }
        Ok(())
    }

    /// The normalized profile: every section with every parameter, as the verdict echoes
    /// it and as its digest covers it.
    pub fn to_value(&self) -> Value {
        Value::Object(obj! {
            "schema_version" => EVALUATION_PROFILE_SCHEMA_VERSION,
            "seed" => self.seed as i64,
            "rank_prior" => self.rank_prior.to_value(),
            "evaluation" => section_value(EvaluationSettings::SPECS, |k| self.evaluation.get(k)),
            "cost" => section_value(CostSettings::SPECS, |k| self.cost.get(k)),
            "hotness" => section_value(HotnessSettings::SPECS, |k| self.hotness.get(k)),
            "memrl" => section_value(MemrlSettings::SPECS, |k| self.memrl.get(k)),
            "simulator" => section_value(SimulatorParams::SPECS, |k| self.simulator.get(k)),
        })
    }

    /// `mure_` + SHA-256 of the canonical normalized profile: names the whole evaluation
    /// setup (the rank-prior profile's own `murp_` digest is reported beside it).
    pub fn digest(&self) -> String {
        digest::prefixed_canonical("mure_", &self.to_value())
    }

    /// Sets one sweepable parameter: a simulator name, or `hotness.NAME`, `memrl.NAME`
    /// or `cost.NAME`.
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), RankEvaluateError> {
        let (specs, slot): (&[ParamSpec], Option<&mut f64>) =
            if let Some(rest) = name.strip_prefix("cost.") {
                (CostSettings::SPECS, self.cost.slot(rest))
            } else if let Some(rest) = name.strip_prefix("hotness.") {
                (HotnessSettings::SPECS, self.hotness.slot(rest))
            } else if let Some(rest) = name.strip_prefix("memrl.") {
                (MemrlSettings::SPECS, self.memrl.slot(rest))
            } else {
                (
                    SimulatorParams::SPECS,
                    self.simulator
                        .slot(name.strip_prefix("simulator.").unwrap_or(name)),
                )
            };
        let short = name.rsplit('.').next().unwrap_or(name);
        let Some(slot) = slot else {
            return Err(RankEvaluateError::Sweep(format!(
                "--sweep names an unknown parameter {name}: use a simulator parameter, hotness.NAME, memrl.NAME or cost.NAME"
            )));
        };
        let spec = specs
            .iter()
            .find(|s| s.name == short)
            .copied()
            .ok_or_else(|| {
                RankEvaluateError::Sweep(format!("--sweep names an unknown parameter {name}"))
            })?;
        *slot = number(&Value::Float(value), &format!("--sweep {name}"), &spec)
            .map_err(|e| RankEvaluateError::Sweep(e.to_string()))?;
        self.check_consistency().map_err(|e| {
            RankEvaluateError::Sweep(format!(
                "--sweep {name}={}: {e}",
                crate::wire::pyfmt::float_repr(value)
            ))
        })
    }
}

/// The normalized profile, as [`EvaluationProfile::to_value`] prints it (the verdict
/// packet's `profile`).
impl serde::Serialize for EvaluationProfile {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

fn section_schema(specs: &[ParamSpec]) -> serde_json::Value {
    let mut properties = serde_json::Map::new();
    for spec in specs {
        let schema = match spec.kind {
            Kind::Int => serde_json::json!({
                "description": spec.doc.trim(),
                "type": "integer",
                "minimum": spec.min as i64,
                "maximum": spec.max as i64,
                "default": spec.default as i64,
            }),
            Kind::Float => serde_json::json!({
                "description": spec.doc.trim(),
                "type": "number",
                "minimum": spec.min,
                "maximum": spec.max,
                "default": spec.default,
            }),
        };
        properties.insert(spec.name.to_owned(), schema);
    }
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
    })
}

impl JsonSchema for EvaluationProfile {
    fn schema_name() -> Cow<'static, str> {
        "RankingEvaluationProfile".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut properties = serde_json::Map::new();
        properties.insert(
            "schema_version".into(),
            serde_json::json!({"type": "string", "const": "memory_utility_ranking_evaluation_profile_v0"}),
        );
        properties.insert(
            "seed".into(),
            serde_json::json!({"description": "Seed of the simulator and the bootstrap (default 1; --seed wins)", "type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991_u64}),
        );
        properties.insert(
            "rank_prior".into(),
            serde_json::json!({"description": "The memory_utility_rank_prior_profile_v0 under evaluation (default: profile:rank-evaluate-default, see docs/rank-evaluate.md)", "type": "object"}),
        );
        for (section, specs) in sections() {
            properties.insert(section.into(), section_schema(specs));
        }
        let value = serde_json::json!({
            "title": "RankingEvaluationProfile",
            "description": "memory_utility_ranking_evaluation_profile_v0: every key optional; unknown keys are refused.",
            "type": "object",
            "additionalProperties": false,
            "properties": properties,
        });
        Schema::try_from(value).unwrap_or_else(|_| json_schema!({"type": "object"}))
    }
}

fn unreachable_default() -> EvaluationProfile {
    // The built-in defaults are valid by construction (a unit test proves it); this
    // fallback only keeps the function total.
    EvaluationProfile {
        seed: DEFAULT_SEED,
        rank_prior: Profile {
            schema_version: ProfileVersion,
            profile_id: "profile:rank-evaluate-default".to_owned(),
            semantic_floor: 0.05,
            candidate_pool: 8,
            modifier_bounds: [0.5, 2.0],
            min_evidence_basis: EvidenceBasis::EvaluatorInference,
            allow_evaluator_inference: true,
            min_support: 1,
            require_attested_tiers: false,
            verdict_max_age_days: None,
            verdict_max_new_deliveries: None,
        },
        evaluation: EvaluationSettings::default(),
        cost: CostSettings::default(),
        hotness: HotnessSettings::default(),
        memrl: MemrlSettings::default(),
        simulator: SimulatorParams::default(),
    }
}

/// A parsed `--sweep NAME=V1,V2,...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub parameter: String,
    pub values: Vec<f64>,
}

/// Parses `--sweep`; every value must be a finite number, 1 to [`MAX_SWEEP_POINTS`] values.
pub fn parse_sweep(text: &str) -> Result<Sweep, RankEvaluateError> {
    let err = |m: String| RankEvaluateError::Sweep(m);
    let Some((name, list)) = text.split_once('=') else {
        return Err(err(
            "--sweep must look like NAME=V1,V2,... (for example evaluator_accuracy=0.5,0.7,0.9)"
                .to_owned(),
        ));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(err("--sweep needs a parameter name before =".to_owned()));
    }
    let mut values = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        let v: f64 = part
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| err(format!("--sweep value {part:?} is not a finite number")))?;
        values.push(v);
    }
    if values.len() > MAX_SWEEP_POINTS {
        return Err(err(format!(
            "--sweep takes at most {MAX_SWEEP_POINTS} values"
        )));
    }
    Ok(Sweep {
        parameter: name.to_owned(),
        values,
    })
}

/// Every parameter table: `(section, specs)`, in the order the docs list them.
pub fn sections() -> [(&'static str, &'static [ParamSpec]); 5] {
    [
        ("evaluation", EvaluationSettings::SPECS),
        ("cost", CostSettings::SPECS),
        ("hotness", HotnessSettings::SPECS),
        ("memrl", MemrlSettings::SPECS),
        ("simulator", SimulatorParams::SPECS),
    ]
}

impl From<FieldError> for RankEvaluateError {
    fn from(e: FieldError) -> Self {
        RankEvaluateError::Profile(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    #[test]
    fn the_defaults_are_valid_and_round_trip() {
        let p = EvaluationProfile::defaults();
        assert_eq!(p.rank_prior.profile_id, "profile:rank-evaluate-default");
        let again = EvaluationProfile::from_value(&p.to_value()).expect("valid");
        assert_eq!(again, p);
        assert!(p.digest().starts_with("mure_"));
    }

    #[test]
    fn unknown_keys_and_out_of_range_values_are_refused() {
        let bad = [
            (
                r#"{"simulator": {"nope": 1}}"#,
                "profile.simulator contains unsupported fields: nope",
            ),
            (
                r#"{"simulator": {"corpora": 1.5}}"#,
                "profile.simulator.corpora must be an integer between 1 and 16",
            ),
            (
                r#"{"simulator": {"evaluator_accuracy": 2}}"#,
                "profile.simulator.evaluator_accuracy must be a number between 0.0 and 1.0",
            ),
            (
                r#"{"evaluation": {"k": true}}"#,
                "profile.evaluation.k must be an integer between 1 and 100",
            ),
            (
                r#"{"extra": 1}"#,
                "profile contains unsupported fields: extra",
            ),
            (
                r#"{"seed": -1}"#,
                "profile.seed must be an integer between 0 and 9007199254740991",
            ),
            (
                r#"{"simulator": {"helpful_share": 0.7, "harmful_share": 0.4}}"#,
                "profile.simulator.helpful_share plus harmful_share must be at most 1",
            ),
        ];
        for (text, message) in bad {
            let err = EvaluationProfile::from_value(&parse(text).expect("json")).expect_err(text);
            assert_eq!(err.to_string(), message, "{text}");
        }
    }

    #[test]
    fn sweep_parses_and_sets_parameters() {
        let sweep = parse_sweep("evaluator_accuracy=0.5, 0.75,1").expect("sweep");
        assert_eq!(sweep.values, vec![0.5, 0.75, 1.0]);
        let mut p = EvaluationProfile::defaults();
        p.set_param("evaluator_accuracy", 0.5).expect("set");
        assert_eq!(p.simulator.evaluator_accuracy, 0.5);
        p.set_param("cost.controlled_replay", 7.0).expect("set");
        assert_eq!(p.cost.controlled_replay, 7.0);
        p.set_param("memrl.mix_weight", 0.25).expect("set");
        assert_eq!(p.memrl.mix_weight, 0.25);
        assert!(p.set_param("corpora", 1.5).is_err());
        assert!(p.set_param("nope", 1.0).is_err());
        assert!(parse_sweep("x").is_err());
        assert!(parse_sweep("x=a").is_err());
    }
}
