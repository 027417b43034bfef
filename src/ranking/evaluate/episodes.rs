//! `EPISODES.jsonl`, the held-out evaluation input from real use: JSON Lines, each line one
//! object, either a `memory_utility_observation_v0` packet (a utility delivery, exactly as
//! `utility-observe` prints it) or a `memory_utility_ranking_episode_v0` episode
//! (`split: "training"` for traffic the arms learn from, `"held_out"` for episodes they
//! are scored on, with ground truth per candidate). Blank lines are skipped.
//!
//! Every malformed line is reported with its 1-based line number and the reason; one bad
//! line refuses the whole file. Pure: bytes in, [`Dataset`] out. The format is written
//! down in `docs/rank-evaluate.md` and `schemas/memory_utility_ranking_episode_v0.schema.json`.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::ranking::prior::{MAX_RELEVANCE, Partition};
use crate::utility::observation::{OBSERVATION_SCHEMA_VERSION, validate_observation};
use crate::utility::reducer::DEFAULT_REDUCER_VERSION;
use crate::wire::credential;
use crate::wire::json::{self, Map, Value};
use crate::wire::text;
use crate::wire::timestamp::{Instant, parse_aware};

use super::dataset::{Dataset, HeldOutCandidate, HeldOutEpisode, TrainingEpisode, Truth};
use super::error::RankEvaluateError;

/// Schema version of an episode line.
pub const EPISODE_SCHEMA_VERSION: &str = EpisodeVersion::VALUE;
/// At most this many candidates per episode.
pub const MAX_EPISODE_CANDIDATES: usize = 1000;
/// At most this many line errors are listed in the message.
pub const MAX_LISTED_ERRORS: usize = 20;

const EPISODE_FIELDS: [&str; 7] = [
    "schema_version",
    "episode_id",
    "split",
    "observed_at",
    "partition",
    "candidates",
    "terminal_reward",
];

fn unknown_keys(map: &Map, allowed: &[&str], label: &str) -> Result<(), String> {
    text::reject_unknown(map, label, allowed).map_err(|e| e.0)
}

fn finite(v: Option<&Value>, label: &str) -> Result<f64, String> {
    let f = match v {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        None => return Err(format!("{label} is missing")),
        _ => return Err(format!("{label} must be a number")),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(format!(
            "{label} must be finite (NaN and Infinity are refused)"
        ))
    }
}

const_string!(EpisodeVersion, "memory_utility_ranking_episode_v0");

/// `training` (learned from) or `held_out` (scored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    Training,
    HeldOut,
}

/// Hidden ground truth of a held-out candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroundTruth {
    Helpful,
    Harmful,
    Neutral,
}

/// One candidate of an episode. Training: `memory_ref_digest`, optional
/// `relevance_score` and `used`. Held-out: `memory_ref_digest`, `relevance_score`,
/// `ground_truth`, and `gain` (helpful only, default 1).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EpisodeCandidate {
    /// 16 lowercase hex or `sha256:` + 64 hex.
    pub memory_ref_digest: String,
    /// Finite, 0 to 1e12 (required for held-out episodes).
    #[schemars(with = "Option<f64>")]
    pub relevance_score: f64,
    /// Training only: the memory was applied (its Q-value learns the terminal reward).
    #[schemars(with = "Option<bool>")]
    pub used: bool,
    /// Held-out only.
    pub ground_truth: Option<GroundTruth>,
    /// Held-out helpful only: the nDCG gain, above 0 and at most 1e6 (default 1).
    pub gain: Option<f64>,
}

impl EpisodeCandidate {
    /// The candidate's hidden truth (neutral for a training candidate).
    pub fn truth(&self) -> Truth {
        match self.ground_truth {
            Some(GroundTruth::Helpful) => Truth::Helpful(self.gain.unwrap_or(1.0)),
            Some(GroundTruth::Harmful) => Truth::Harmful,
            Some(GroundTruth::Neutral) | None => Truth::Neutral,
        }
    }
}

/// `memory_utility_ranking_episode_v0`: one line of `EPISODES.jsonl` (the other kind of
/// line is a `memory_utility_observation_v0` delivery).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(rename = "RankingEpisode", deny_unknown_fields)]
pub struct Episode {
    pub schema_version: EpisodeVersion,
    /// Opaque ref, unique in the file.
    pub episode_id: String,
    pub split: Split,
    /// Aware ISO timestamp: recency for hotness, and the order of Q-updates.
    #[schemars(with = "String")]
    pub observed_at: Instant,
    pub partition: Partition,
    /// 1 to 1000, digests unique. Training: what was recalled (accessed). Held-out:
    /// the candidates every arm ranks.
    pub candidates: Vec<EpisodeCandidate>,
    /// Training only (required there): the terminal reward every used memory's Q-value
    /// learns.
    #[schemars(with = "Option<f64>")]
    pub terminal_reward: f64,
}

fn candidate(v: &Value, label: &str, held_out: bool) -> Result<EpisodeCandidate, String> {
    let map = v
        .as_object()
        .ok_or_else(|| format!("{label} must be an object"))?;
    let allowed: &[&str] = if held_out {
        &[
            "memory_ref_digest",
            "relevance_score",
            "ground_truth",
            "gain",
        ]
    } else {
        &["memory_ref_digest", "relevance_score", "used"]
    };
    unknown_keys(map, allowed, label)?;
    let digest = match map.get("memory_ref_digest") {
        Some(Value::Str(s)) if crate::utility::strict::is_memory_digest(s) => s.clone(),
        _ => {
            return Err(format!(
                "{label}.memory_ref_digest must be 16 lowercase hex characters or sha256: and 64"
            ));
        }
    };
    let relevance = match map.get("relevance_score") {
        None if !held_out => 0.0,
        v => finite(v, &format!("{label}.relevance_score"))?,
    };
    if !(0.0..=MAX_RELEVANCE).contains(&relevance) {
        return Err(format!(
            "{label}.relevance_score must be between 0 and {MAX_RELEVANCE:e}"
        ));
    }
    if !held_out {
        let used = match map.get("used") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(format!("{label}.used must be a boolean")),
        };
        return Ok(EpisodeCandidate {
            memory_ref_digest: digest.into(),
            relevance_score: relevance,
            used,
            ground_truth: None,
            gain: None,
        });
    }
    let (truth, gain) = match map.get("ground_truth").and_then(Value::as_str) {
        Some("helpful") => {
            let gain = match map.get("gain") {
                None => 1.0,
                v => finite(v, &format!("{label}.gain"))?,
            };
            if !(gain > 0.0 && gain <= 1e6) {
                return Err(format!("{label}.gain must be above 0 and at most 1e6"));
            }
            (GroundTruth::Helpful, Some(gain))
        }
        Some(other @ ("harmful" | "neutral")) => {
            if map.contains_key("gain") {
                return Err(format!(
                    "{label}.gain is only allowed for a helpful candidate"
                ));
            }
            if other == "harmful" {
                (GroundTruth::Harmful, None)
            } else {
                (GroundTruth::Neutral, None)
            }
        }
        _ => {
            return Err(format!(
                "{label}.ground_truth must be helpful, harmful or neutral"
            ));
        }
    };
    Ok(EpisodeCandidate {
        memory_ref_digest: digest.into(),
        relevance_score: relevance,
        used: false,
        ground_truth: Some(truth),
        gain,
    })
}

fn episode(map: &Map) -> Result<Episode, String> {
    unknown_keys(map, &EPISODE_FIELDS, "episode")?;
    let id = match map.get("episode_id") {
        Some(Value::Str(s)) if text::is_ref(s) => s.clone(),
        _ => return Err("episode_id must be an opaque public-safe reference".to_owned()),
    };
    credential::check(&id, "episode_id").map_err(|e| e.0)?;
    let split = match map.get("split").and_then(Value::as_str) {
        Some("training") => Split::Training,
        Some("held_out") => Split::HeldOut,
        _ => return Err("split must be training or held_out".to_owned()),
    };
    let held_out = split == Split::HeldOut;
    let at = match map.get("observed_at") {
        Some(Value::Str(s)) => parse_aware(s)
            .map_err(|_| "observed_at must be an ISO timestamp with a timezone".to_owned())?,
        _ => return Err("observed_at must be an ISO timestamp with a timezone".to_owned()),
    };
    let partition = Partition::from_value(map.get("partition").unwrap_or(&Value::Null))
        .map_err(|e| e.to_string())?;
    let rows = match map.get("candidates") {
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_EPISODE_CANDIDATES => {
            items
        }
        _ => {
            return Err(format!(
                "candidates must be a list of 1 to {MAX_EPISODE_CANDIDATES} objects"
            ));
        }
    };
    let mut candidates = Vec::with_capacity(rows.len());
    let mut seen = std::collections::BTreeSet::new();
    for (i, row) in rows.iter().enumerate() {
        let c = candidate(row, &format!("candidates[{i}]"), held_out)?;
        if !seen.insert(c.memory_ref_digest.clone()) {
            return Err(format!(
                "candidates[{i}].memory_ref_digest {} is listed twice",
                c.memory_ref_digest
            ));
        }
        candidates.push(c);
    }
    let reward = match (held_out, map.get("terminal_reward")) {
        (true, None) => 0.0,
        (true, Some(_)) => {
            return Err("terminal_reward belongs to training episodes only".to_owned());
        }
        (false, v) => finite(v, "terminal_reward")?,
    };
    if reward.abs() > 1e6 {
        return Err("terminal_reward must be between -1e6 and 1e6".to_owned());
    }
    Ok(Episode {
        schema_version: EpisodeVersion,
        episode_id: id.into(),
        split,
        observed_at: at,
        partition,
        candidates,
        terminal_reward: reward,
    })
}

/// What a parsed file holds.
#[derive(Debug)]
pub struct Parsed {
    pub dataset: Dataset,
    pub observation_lines: usize,
}

/// Parses `EPISODES.jsonl`. Every problem names its line; the error lists up to
/// [`MAX_LISTED_ERRORS`] of them.
pub fn parse(bytes: &[u8]) -> Result<Parsed, RankEvaluateError> {
    let mut errors: Vec<String> = Vec::new();
    let mut error_count = 0usize;
    let mut fail = |line: usize, message: String| {
        error_count += 1;
        if errors.len() < MAX_LISTED_ERRORS {
            errors.push(format!("line {line}: {message}"));
        }
    };
    let mut dataset = Dataset::default();
    let mut observation_lines = 0usize;
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut training: Vec<(i128, usize, TrainingEpisode)> = Vec::new();
    // The reducer version of the first episode line, and its line: every episode names
    // the same (one evaluation, one reducer).
    let mut reducer: Option<(String, usize)> = None;
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = match json::decode_utf8(raw) {
            Ok(t) => t,
            Err(e) => {
                fail(line, format!("not UTF-8: {}", e.message));
                continue;
            }
        };
        let value = match json::parse(text) {
            Ok(v) => v,
            Err(e) => {
                fail(line, format!("not JSON: {}", e.message));
                continue;
            }
        };
        let Some(map) = value.as_object() else {
            fail(line, "must be a JSON object".to_owned());
            continue;
        };
        match map.get("schema_version").and_then(Value::as_str) {
            Some(OBSERVATION_SCHEMA_VERSION) => match validate_observation(&value)
                .map_err(|e| format!("{} ({})", e.message, e.reason.code()))
                .and_then(|o| match o.credential_free("observation") {
                    Ok(()) => Ok(o),
                    Err(e) => Err(e.0),
                }) {
                Ok(observation) => {
                    observation_lines += 1;
                    let partition = Partition {
                        scope: observation.scope.clone(),
                        retrieval_snapshot_ref: observation.retrieval_snapshot_ref.to_string(),
                        policy_snapshot_ref: observation.policy_snapshot_ref.to_string(),
                        reducer_version: DEFAULT_REDUCER_VERSION.to_owned(),
                    };
                    dataset.intern(&partition);
                    dataset.deliveries.push(observation);
                }
                Err(message) => fail(line, message),
            },
            Some(EPISODE_SCHEMA_VERSION) => match episode(map) {
                Ok(ep) => {
                    if let Some(first) = ids.get(&ep.episode_id) {
                        fail(
                            line,
                            format!(
                                "episode_id {} is already used on line {first}",
                                ep.episode_id
                            ),
                        );
                        continue;
                    }
                    match &reducer {
                        Some((version, first)) if *version != ep.partition.reducer_version => {
                            fail(
                                line,
                                format!(
                                    "partition.reducer_version is {}, but line {first} names {version}: every episode of one file names the same reducer",
                                    ep.partition.reducer_version
                                ),
                            );
                            continue;
                        }
                        Some(_) => {}
                        None => reducer = Some((ep.partition.reducer_version.clone(), line)),
                    }
                    ids.insert(ep.episode_id.clone(), line);
                    let partition = dataset.intern(&ep.partition);
                    let at = ep.observed_at.micros;
                    if ep.split == Split::HeldOut {
                        dataset.held_out.push(HeldOutEpisode {
                            partition,
                            at,
                            candidates: ep
                                .candidates
                                .into_iter()
                                .map(|c| HeldOutCandidate {
                                    truth: c.truth(),
                                    digest: c.memory_ref_digest,
                                    relevance: c.relevance_score,
                                })
                                .collect(),
                        });
                    } else {
                        let mut used: Vec<String> = ep
                            .candidates
                            .iter()
                            .filter(|c| c.used)
                            .map(|c| c.memory_ref_digest.clone())
                            .collect();
                        used.sort();
                        training.push((
                            at,
                            line,
                            TrainingEpisode {
                                partition,
                                at,
                                recalled: ep
                                    .candidates
                                    .into_iter()
                                    .map(|c| c.memory_ref_digest)
                                    .collect(),
                                used,
                                reward: ep.terminal_reward,
                            },
                        ));
                    }
                }
                Err(message) => fail(line, message),
            },
            _ => fail(
                line,
                format!(
                    "schema_version must be {EPISODE_SCHEMA_VERSION} or {OBSERVATION_SCHEMA_VERSION}"
                ),
            ),
        }
    }
    if error_count == 0 && dataset.held_out.is_empty() {
        return Err(RankEvaluateError::Episodes(
            "episodes input has no held_out episode: add memory_utility_ranking_episode_v0 lines with split held_out".to_owned(),
        ));
    }
    if error_count > 0 {
        let more = error_count - errors.len();
        let tail = if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        };
        return Err(RankEvaluateError::Episodes(format!(
            "episodes input has {error_count} malformed line{}: {}{tail}",
            if error_count == 1 { "" } else { "s" },
            errors.join("; ")
        )));
    }
    training.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    dataset.training = training.into_iter().map(|(_, _, e)| e).collect();
    // Partitions first seen on an observation line are read under the episodes' reducer.
    if let Some((version, _)) = reducer {
        for partition in &mut dataset.partitions {
            partition.reducer_version.clone_from(&version);
        }
    }
    Ok(Parsed {
        dataset,
        observation_lines,
    })
}

/// `micros` (since 0001-01-01, as [`crate::wire::timestamp::Instant`]) as an aware ISO
/// timestamp in UTC.
pub fn iso_of_micros(micros: i128) -> String {
    let epoch = parse_aware("1970-01-01T00:00:00Z").map_or(0, |i| i.micros);
    i64::try_from(micros - epoch)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_micros)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
        .unwrap_or_default()
}

fn partition_value(p: &Partition) -> Value {
    let mut map = crate::obj! {
        "scope" => p.scope.to_map(),
        "retrieval_snapshot_ref" => p.retrieval_snapshot_ref.as_str(),
        "policy_snapshot_ref" => p.policy_snapshot_ref.as_str(),
    };
    if p.reducer_version != DEFAULT_REDUCER_VERSION {
        map.insert("reducer_version", p.reducer_version.as_str());
    }
    Value::Object(map)
}

/// Writes a dataset in the `EPISODES.jsonl` format (the inverse of [`parse`]): every
/// delivery as its observation packet, then the training episodes (`ep:train-N`), then
/// the held-out episodes (`ep:held-out-N`). Used to export a simulated dataset.
pub fn write_jsonl(dataset: &Dataset) -> String {
    let mut out = String::new();
    let mut line = |v: &Value| {
        let compact = json::DumpOptions {
            indent: None,
            item_sep: ", ",
            key_sep: ": ",
            sort_keys: false,
            ensure_ascii: false,
        };
        out.push_str(&json::dumps(v, compact));
        out.push('\n');
    };
    for observation in &dataset.deliveries {
        line(&observation.to_value());
    }
    for (i, e) in dataset.training.iter().enumerate() {
        let Some(partition) = dataset.partitions.get(e.partition) else {
            continue;
        };
        let candidates: Vec<Value> = e
            .recalled
            .iter()
            .map(|d| {
                Value::Object(crate::obj! {
                    "memory_ref_digest" => d.as_str(),
                    "used" => e.used.contains(d),
                })
            })
            .collect();
        line(&Value::Object(crate::obj! {
            "schema_version" => EPISODE_SCHEMA_VERSION,
            "episode_id" => format!("ep:train-{i}"),
            "split" => "training",
            "observed_at" => iso_of_micros(e.at),
            "partition" => partition_value(partition),
            "candidates" => Value::from(candidates),
            "terminal_reward" => Value::Float(e.reward),
        }));
    }
    for (i, e) in dataset.held_out.iter().enumerate() {
        let Some(partition) = dataset.partitions.get(e.partition) else {
            continue;
        };
        let candidates: Vec<Value> = e
            .candidates
            .iter()
            .map(|c| {
                let mut m = crate::obj! {
                    "memory_ref_digest" => c.digest.as_str(),
                    "relevance_score" => Value::Float(c.relevance),
                };
                match c.truth {
                    Truth::Helpful(gain) => {
                        m.insert("ground_truth", "helpful");
                        m.insert("gain", Value::Float(gain));
                    }
                    Truth::Harmful => m.insert("ground_truth", "harmful"),
                    Truth::Neutral => m.insert("ground_truth", "neutral"),
                }
                Value::Object(m)
            })
            .collect();
        line(&Value::Object(crate::obj! {
            "schema_version" => EPISODE_SCHEMA_VERSION,
            "episode_id" => format!("ep:held-out-{i}"),
            "split" => "held_out",
            "observed_at" => iso_of_micros(e.at),
            "partition" => partition_value(partition),
            "candidates" => Value::from(candidates),
        }));
    }
    out
}
