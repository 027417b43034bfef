//! The logged episodes of `rank-evaluate --ledger`: one per recall event of the evaluated
//! partitions, joined with its first `apply` event and that receipt's first outcome event,
//! split in time ([`build`]), and their JSON Lines form (`--export-episodes`, read back by
//! `rank-evaluate --input`): the training deliveries as `memory_utility_observation_v0`
//! lines, then one `memory_utility_logged_episode_v0` line per episode in log order.
//!
//! The time split: the usable episodes (an outcome, relevance for every candidate, a shown
//! top with its propensity) in log order; the last [`HELD_OUT_SHARE`] of them (at least
//! one) are held out, and so is every recall logged after the first of them. Everything
//! the arms learn is older than that first held-out recall: the deliveries up to the
//! delivery high water it recorded (`split_seq`), and the applies and outcomes logged
//! before it. A held-out recall's own apply, outcome and observations come after it, so
//! they are never seen in training. Pure: traffic rows in, episodes out.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::ledger::traffic::{TrafficKind, TrafficRow};
use crate::recall::traffic::{
    LoggingPolicy, Shadow, TrafficCandidate, TrafficEvent, TrafficPartition, parse_event,
    parse_partition,
};
use crate::utility::observation::{OBSERVATION_SCHEMA_VERSION, Observation, validate_observation};
use crate::utility::reducer::DEFAULT_REDUCER_VERSION;
use crate::wire::json::{self, Map, Value};
use crate::wire::schema::Nullable;
use crate::wire::timestamp::parse_aware;

use super::super::episodes::MAX_LISTED_ERRORS;
use super::super::error::RankEvaluateError;

const_string!(LoggedEpisodeVersion, "memory_utility_logged_episode_v0");

/// Schema version of an exported logged episode line.
pub const LOGGED_EPISODE_SCHEMA_VERSION: &str = LoggedEpisodeVersion::VALUE;

/// The share of usable episodes held out (the latest ones).
pub const HELD_OUT_SHARE: f64 = 0.3;

/// Training or held-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoggedSplit {
    Training,
    HeldOut,
}

/// The verified outcome of an episode's application, as `utility-attribute` recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoggedOutcome {
    Succeeded,
    Partial,
    Failed,
}

impl LoggedOutcome {
    /// The reward: succeeded 1, partial 0.5, failed 0.
    pub fn reward(self) -> f64 {
        match self {
            LoggedOutcome::Succeeded => 1.0,
            LoggedOutcome::Partial => 0.5,
            LoggedOutcome::Failed => 0.0,
        }
    }

    fn parse(text: &str) -> Option<LoggedOutcome> {
        match text {
            "succeeded" => Some(LoggedOutcome::Succeeded),
            "partial" => Some(LoggedOutcome::Partial),
            "failed" => Some(LoggedOutcome::Failed),
            _ => None,
        }
    }
}

/// `memory_utility_logged_episode_v0`: one recall of the traffic log with what followed
/// it (one line of `--export-episodes`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(rename = "LoggedEpisode", deny_unknown_fields)]
pub struct LoggedEpisode {
    pub schema_version: LoggedEpisodeVersion,
    /// The recall's `recall_id` (its session ref).
    pub episode_id: String,
    pub split: LoggedSplit,
    /// The recall's `observed_at`.
    pub observed_at: String,
    pub partition: TrafficPartition,
    pub logging_policy: LoggingPolicy,
    pub candidates: Vec<TrafficCandidate>,
    #[schemars(with = "Nullable<Shadow>")]
    pub shadow: Option<Shadow>,
    /// The applied digests of the recall's first `apply`; `null` when no apply is known
    /// (for a training episode: none was logged before the split).
    #[schemars(with = "Nullable<Vec<String>>")]
    pub applied: Option<Vec<String>>,
    /// The verified outcome of that apply's receipt; `null` when none is known (for a
    /// training episode: none was logged before the split).
    #[schemars(with = "Nullable<LoggedOutcome>")]
    pub outcome_status: Option<LoggedOutcome>,
    /// The reducer version the partition was evaluated under (`--partition`'s), written
    /// only when it is not `memory_utility_reducer_v0`: an export read back by
    /// `rank-evaluate --input` is evaluated under the same reducer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub reducer_version: Option<String>,
}

impl LoggedEpisode {
    /// The reward of the episode, when its outcome is known.
    pub fn reward(&self) -> Option<f64> {
        self.outcome_status.map(LoggedOutcome::reward)
    }

    /// The shown top: its candidate index and propensity.
    pub fn shown_top(&self) -> Option<(usize, f64)> {
        self.candidates
            .iter()
            .position(|c| c.shown_rank == Some(1))
            .and_then(|i| self.candidates[i].propensity.map(|p| (i, p)))
    }

    /// Usable for estimation: an outcome, relevance for every candidate, a shown top with
    /// a propensity above 0.
    pub fn usable(&self) -> bool {
        self.outcome_status.is_some()
            && !self.candidates.is_empty()
            && self.candidates.iter().all(|c| c.relevance.is_some())
            && self.shown_top().is_some_and(|(_, p)| p > 0.0)
    }
}

/// What an evaluation of logged traffic consumes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoggedData {
    /// Every recall of the evaluated partitions, in log order.
    pub episodes: Vec<LoggedEpisode>,
    /// The training deliveries (sequence at most the split), in sequence order.
    pub deliveries: Vec<Observation>,
}

impl LoggedData {
    /// The reducer version the episodes are evaluated under: the one every episode names
    /// (`memory_utility_reducer_v0` when none names one); episodes that name different
    /// versions are refused.
    pub fn reducer_version(&self) -> Result<&str, RankEvaluateError> {
        fn of(e: &LoggedEpisode) -> &str {
            e.reducer_version
                .as_deref()
                .unwrap_or(DEFAULT_REDUCER_VERSION)
        }
        let Some(first) = self.episodes.first().map(of) else {
            return Ok(DEFAULT_REDUCER_VERSION);
        };
        match self.episodes.iter().map(of).find(|v| *v != first) {
            None => Ok(first),
            Some(other) => Err(RankEvaluateError::Episodes(format!(
                "the logged episodes name two reducer versions, {first} and {other}: evaluate the partitions of each reducer on their own"
            ))),
        }
    }

    /// Marks every episode as evaluated under `reducer_version` (nothing is written for
    /// `memory_utility_reducer_v0`).
    pub fn under_reducer(mut self, reducer_version: &str) -> LoggedData {
        let named =
            (reducer_version != DEFAULT_REDUCER_VERSION).then(|| reducer_version.to_owned());
        for episode in &mut self.episodes {
            episode.reducer_version.clone_from(&named);
        }
        self
    }
}

/// The episodes of a log and where its split fell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Built {
    pub episodes: Vec<LoggedEpisode>,
    /// The delivery high water the first held-out recall recorded (every delivery up to
    /// it may train); the log's delivery high water when nothing is held out.
    pub split_seq: i64,
}

fn malformed(row: &TrafficRow, why: &str) -> RankEvaluateError {
    RankEvaluateError::Ledger(format!(
        "the traffic log's event {} is malformed ({why}): the ledger's traffic tables were edited or damaged",
        row.seq
    ))
}

/// Builds the episodes of `rows` (the events of the evaluated partitions, in sequence
/// order) and splits them in time. `delivery_high_water` is the ledger's.
pub fn build(rows: &[TrafficRow], delivery_high_water: i64) -> Result<Built, RankEvaluateError> {
    let mut builder = Builder::default();
    for row in rows {
        builder.push(row)?;
    }
    Ok(builder.finish(delivery_high_water))
}

struct Recall {
    seq: i64,
    delivery_seq: i64,
    event: crate::recall::traffic::RecallEvent,
}

/// [`build`] one row at a time, so that a reader keeps parsed events, not their text.
#[derive(Default)]
pub struct Builder {
    recalls: Vec<Recall>,
    seen: std::collections::BTreeSet<String>,
    /// recall id -> (seq, receipt id, applied)
    applies: BTreeMap<String, (i64, String, Vec<String>)>,
    /// receipt id -> (seq, outcome)
    outcomes: BTreeMap<String, (i64, LoggedOutcome)>,
}

impl Builder {
    /// Takes the next row (in sequence order).
    pub fn push(&mut self, row: &TrafficRow) -> Result<(), RankEvaluateError> {
        let event = parse_event(&row.event).map_err(|why| malformed(row, &why))?;
        match (row.kind, event) {
            (TrafficKind::Recall, TrafficEvent::Recall(e)) => {
                if self.seen.insert(e.recall_id.clone()) {
                    self.recalls.push(Recall {
                        seq: row.seq,
                        delivery_seq: row.delivery_seq,
                        event: e,
                    });
                }
            }
            (TrafficKind::Apply, TrafficEvent::Apply(e)) => {
                self.applies.entry(e.recall_id).or_insert((
                    row.seq,
                    e.application_receipt_id,
                    e.applied,
                ));
            }
            (TrafficKind::Outcome, TrafficEvent::Outcome(e)) => {
                let status = LoggedOutcome::parse(&e.outcome_status)
                    .ok_or_else(|| malformed(row, "outcome_status"))?;
                self.outcomes
                    .entry(e.application_receipt_id)
                    .or_insert((row.seq, status));
            }
            _ => return Err(malformed(row, "its kind column and event_kind differ")),
        }
        Ok(())
    }

    /// The episodes, split in time.
    pub fn finish(self, delivery_high_water: i64) -> Built {
        let Builder {
            recalls,
            applies,
            outcomes,
            ..
        } = self;
        // What followed each recall: (apply seq, applied, (outcome seq, outcome)).
        type Followed = (i64, Vec<String>, Option<(i64, LoggedOutcome)>);
        let followed: Vec<Option<Followed>> = recalls
            .iter()
            .map(|r| {
                applies
                    .get(&r.event.recall_id)
                    .filter(|(seq, _, _)| *seq > r.seq)
                    .map(|(seq, receipt, applied)| {
                        let outcome = outcomes.get(receipt).copied().filter(|(s, _)| *s > *seq);
                        (*seq, applied.clone(), outcome)
                    })
            })
            .collect();
        let mut episodes: Vec<LoggedEpisode> = recalls
            .iter()
            .zip(&followed)
            .map(|(r, f)| LoggedEpisode {
                schema_version: LoggedEpisodeVersion,
                episode_id: r.event.recall_id.clone(),
                split: LoggedSplit::Training,
                observed_at: r.event.observed_at.clone(),
                partition: r.event.partition.clone(),
                logging_policy: r.event.logging_policy.clone(),
                candidates: r.event.candidates.clone(),
                shadow: r.event.shadow.clone(),
                applied: f.as_ref().map(|(_, a, _)| a.clone()),
                outcome_status: f.as_ref().and_then(|(_, _, o)| o.map(|(_, s)| s)),
                reducer_version: None,
            })
            .collect();
        let usable: Vec<usize> = (0..episodes.len())
            .filter(|&i| episodes[i].usable())
            .collect();
        let held = (HELD_OUT_SHARE * usable.len() as f64).ceil() as usize;
        let Some(&first) = usable
            .get(usable.len() - held.min(usable.len()))
            .filter(|_| held > 0)
        else {
            return Built {
                episodes,
                split_seq: delivery_high_water,
            };
        };
        let split_at = recalls[first].seq;
        for (i, episode) in episodes.iter_mut().enumerate() {
            if recalls[i].seq >= split_at {
                episode.split = LoggedSplit::HeldOut;
                continue;
            }
            // Training sees only what was logged before the first held-out recall.
            match &followed[i] {
                Some((apply_seq, _, outcome)) if *apply_seq < split_at => {
                    if !outcome.is_some_and(|(s, _)| s < split_at) {
                        episode.outcome_status = None;
                    }
                }
                _ => {
                    episode.applied = None;
                    episode.outcome_status = None;
                }
            }
        }
        Built {
            episodes,
            split_seq: recalls[first].delivery_seq,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The JSON Lines export
// ---------------------------------------------------------------------------------------

fn line_options() -> json::DumpOptions {
    json::DumpOptions {
        indent: None,
        item_sep: ", ",
        key_sep: ": ",
        sort_keys: false,
        ensure_ascii: false,
    }
}

/// The export: every training delivery as its observation packet, then every episode.
pub fn write_jsonl(data: &LoggedData) -> Result<String, RankEvaluateError> {
    let mut out = String::new();
    for observation in &data.deliveries {
        out.push_str(&json::dumps(&observation.to_value(), line_options()));
        out.push('\n');
    }
    for episode in &data.episodes {
        let value = json::to_value(episode)
            .map_err(|_| RankEvaluateError::Internal("a logged episode does not serialize"))?;
        out.push_str(&json::dumps(&value, line_options()));
        out.push('\n');
    }
    Ok(out)
}

/// True when `bytes` hold logged episodes (their first episode line is a
/// `memory_utility_logged_episode_v0`), which `rank-evaluate --input` then evaluates
/// off-policy.
pub fn is_logged_file(bytes: &[u8]) -> bool {
    let needle = LOGGED_EPISODE_SCHEMA_VERSION.as_bytes();
    bytes
        .split(|b| *b == b'\n')
        .find(|line| {
            !line.iter().all(u8::is_ascii_whitespace)
                && !contains(line, OBSERVATION_SCHEMA_VERSION.as_bytes())
        })
        .is_some_and(|line| contains(line, needle))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn text_field(map: &Map, key: &str) -> Result<String, String> {
    map.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{key} must be a string"))
}

fn episode_line(map: &Map) -> Result<LoggedEpisode, String> {
    const FIELDS: [&str; 10] = [
        "schema_version",
        "episode_id",
        "split",
        "observed_at",
        "partition",
        "logging_policy",
        "candidates",
        "shadow",
        "applied",
        "outcome_status",
    ];
    if let Some(extra) = map
        .keys()
        .find(|k| !FIELDS.contains(k) && *k != "reducer_version")
    {
        return Err(format!("unknown field {extra:?}"));
    }
    let reducer_version = match map.get("reducer_version") {
        None => None,
        Some(v) => {
            // Checked as the rank prior's partition reader checks it.
            let mut named = map
                .get("partition")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            named.insert("reducer_version", v.clone());
            let version = crate::ranking::prior::Partition::from_value(&Value::Object(named))
                .map_err(|e| e.to_string())?
                .reducer_version;
            if version == DEFAULT_REDUCER_VERSION {
                return Err(format!(
                    "reducer_version is written only for a reducer other than {DEFAULT_REDUCER_VERSION}: leave it out"
                ));
            }
            Some(version)
        }
    };
    if let Some(missing) = FIELDS.iter().find(|k| !map.contains_key(k)) {
        return Err(format!("{missing} is missing"));
    }
    // The recall part reads exactly as a recall event does.
    let mut recall = Map::new();
    recall.insert(
        "schema_version",
        crate::recall::traffic::TRAFFIC_EVENT_SCHEMA_VERSION,
    );
    recall.insert("event_kind", "recall");
    recall.insert(
        "recall_id",
        map.get("episode_id").cloned().unwrap_or_default(),
    );
    for key in [
        "observed_at",
        "partition",
        "logging_policy",
        "candidates",
        "shadow",
    ] {
        recall.insert(key, map.get(key).cloned().unwrap_or_default());
    }
    let text = json::dumps(&Value::Object(recall), crate::ledger::engine::COMPACT);
    let Ok(TrafficEvent::Recall(event)) = parse_event(&text) else {
        return Err(parse_event(&text)
            .err()
            .unwrap_or_else(|| "not a recall".to_owned()));
    };
    let split = match map.get("split").and_then(Value::as_str) {
        Some("training") => LoggedSplit::Training,
        Some("held_out") => LoggedSplit::HeldOut,
        _ => return Err("split must be training or held_out".to_owned()),
    };
    let applied = match map.get("applied") {
        Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|d| match d.as_str() {
                    Some(s) if crate::ranking::prior::is_memory_digest(s) => Ok(s.to_owned()),
                    _ => Err("applied must list memory digests".to_owned()),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        _ => return Err("applied must be null or a list of digests".to_owned()),
    };
    let outcome_status = match map.get("outcome_status") {
        Some(Value::Null) => None,
        Some(Value::Str(s)) => Some(
            LoggedOutcome::parse(s)
                .ok_or("outcome_status must be succeeded, partial, failed or null")?,
        ),
        _ => return Err("outcome_status must be succeeded, partial, failed or null".to_owned()),
    };
    Ok(LoggedEpisode {
        schema_version: LoggedEpisodeVersion,
        episode_id: text_field(map, "episode_id")?,
        split,
        observed_at: event.observed_at,
        partition: event.partition,
        logging_policy: event.logging_policy,
        candidates: event.candidates,
        shadow: event.shadow,
        applied,
        outcome_status,
        reducer_version,
    })
}

/// A parsed export.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLog {
    pub data: LoggedData,
    pub observation_lines: usize,
}

/// Reads an export ([`write_jsonl`]). Every malformed line is reported with its number.
pub fn parse_jsonl(bytes: &[u8]) -> Result<ParsedLog, RankEvaluateError> {
    let mut errors: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut data = LoggedData::default();
    let mut observation_lines = 0usize;
    let mut ids = std::collections::BTreeSet::new();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let result = (|| -> Result<(), String> {
            let text = json::decode_utf8(raw).map_err(|e| format!("not UTF-8: {}", e.message))?;
            let value = json::parse(text).map_err(|e| format!("not JSON: {}", e.message))?;
            let map = value.as_object().ok_or("must be a JSON object")?;
            match map.get("schema_version").and_then(Value::as_str) {
                Some(OBSERVATION_SCHEMA_VERSION) => {
                    let o = validate_observation(&value)
                        .map_err(|e| format!("{} ({})", e.message, e.reason.code()))?;
                    o.credential_free("observation").map_err(|e| e.0)?;
                    observation_lines += 1;
                    data.deliveries.push(o);
                    Ok(())
                }
                Some(LOGGED_EPISODE_SCHEMA_VERSION) => {
                    let episode = episode_line(map)?;
                    if !ids.insert(episode.episode_id.clone()) {
                        return Err(format!("episode_id {} is listed twice", episode.episode_id));
                    }
                    data.episodes.push(episode);
                    Ok(())
                }
                _ => Err(format!(
                    "schema_version must be {LOGGED_EPISODE_SCHEMA_VERSION} or {OBSERVATION_SCHEMA_VERSION} (a file of logged episodes, as --export-episodes writes it)"
                )),
            }
        })();
        if let Err(message) = result {
            count += 1;
            if errors.len() < MAX_LISTED_ERRORS {
                errors.push(format!("line {line}: {message}"));
            }
        }
    }
    if count > 0 {
        let more = count - errors.len();
        let tail = if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        };
        return Err(RankEvaluateError::Episodes(format!(
            "logged episodes input has {count} malformed line{}: {}{tail}",
            if count == 1 { "" } else { "s" },
            errors.join("; ")
        )));
    }
    Ok(ParsedLog {
        data,
        observation_lines,
    })
}

/// The partition of a `--partition` file (`{scope, retrieval_snapshot_ref,
/// policy_snapshot_ref, [reducer_version]}`) and the reducer version it names
/// (`memory_utility_reducer_v0` by default): the traffic log is keyed by the partition,
/// the evaluation reads it under that reducer.
pub fn partition_of_value(value: &Value) -> Result<(TrafficPartition, String), RankEvaluateError> {
    let mut copy = value.as_object().cloned().unwrap_or_default();
    let reducer_version = match copy.remove("reducer_version") {
        None => DEFAULT_REDUCER_VERSION.to_owned(),
        Some(v) => {
            // The rank prior's partition reader checks the version as recall does.
            let mut named = copy.clone();
            named.insert("reducer_version", v);
            crate::ranking::prior::Partition::from_value(&Value::Object(named))
                .map_err(|e| RankEvaluateError::Profile(format!("--partition: {e}")))?
                .reducer_version
        }
    };
    let partition = parse_partition(&Value::Object(copy), "partition")
        .map_err(|e| RankEvaluateError::Profile(format!("--partition: {e}")))?;
    Ok((partition, reducer_version))
}

/// The latest `observed_at` among `texts`, as RFC 3339 in UTC (`Z`).
pub fn latest_utc(texts: impl Iterator<Item = String>) -> Option<String> {
    let epoch = parse_aware("1970-01-01T00:00:00Z").map_or(0, |i| i.micros);
    texts
        .filter_map(|t| parse_aware(&t).ok())
        .max()
        .and_then(|i| i64::try_from(i.micros - epoch).ok())
        .and_then(chrono::DateTime::from_timestamp_micros)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}
