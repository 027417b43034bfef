//! The traffic events of the attribution loop, `memory_utility_traffic_event_v0` (issue 22):
//! one per recall, one per `apply` and one per verified outcome that `utility-attribute`
//! attributes, appended to the utility ledger's traffic log ([`crate::ledger::traffic`])
//! when a ledger is configured; and `recall --explore`'s randomization.
//!
//! Owns the typed events (also their JSON Schema, [`TrafficEvent`]), their builders, their
//! strict reader ([`parse_event`]) and the exploration permutation with its propensities
//! ([`explore`], [`recall_candidates`]). Public-safe by construction: an event carries
//! digests, relevance scores, ranks, refs and ids, never query text, content or raw
//! provider refs. Pure: the randomness of [`explore`] comes from the shell as a value
//! ([`ExplorationDraw`]), the timestamps as strings.

use std::cmp::Ordering;

use schemars::JsonSchema;

use crate::const_string;
use crate::ledger::PartitionKey;
use crate::ledger::traffic::{TrafficAppend, TrafficKind};
use crate::ranking::evaluate::rng::Rng;
use crate::ranking::prior::is_memory_digest;
use crate::utility::observation::Scope;
use crate::utility::reducer::context::{DEFAULT_REDUCER_VERSION, reducer_identity};
use crate::wire::json::{self, Map, Value};
use crate::wire::schema::Nullable;
use crate::wire::text::is_ref;
use crate::wire::timestamp::parse_aware;

const_string!(TrafficEventVersion, "memory_utility_traffic_event_v0");
const_string!(RecallEventKind, "recall");
const_string!(ApplyEventKind, "apply");
const_string!(OutcomeEventKind, "outcome");

/// Schema version of every traffic event.
pub const TRAFFIC_EVENT_SCHEMA_VERSION: &str = TrafficEventVersion::VALUE;

/// The largest `--explore` value: every recall explored.
pub const MAX_EPSILON: f64 = 1.0;

/// The four scope ids of a partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrafficScope {
    pub agent_id: String,
    pub project_id: String,
    pub corpus_id: String,
    pub surface_id: String,
}

/// The partition of an event: the recall's scope and snapshot refs (for apply and
/// outcome events, the receipt's, which are the recall's).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrafficPartition {
    pub scope: TrafficScope,
    pub retrieval_snapshot_ref: String,
    pub policy_snapshot_ref: String,
}

impl TrafficPartition {
    /// The ledger's key of this partition.
    pub fn key(&self) -> PartitionKey {
        PartitionKey {
            agent_id: self.scope.agent_id.clone(),
            project_id: self.scope.project_id.clone(),
            corpus_id: self.scope.corpus_id.clone(),
            surface_id: self.scope.surface_id.clone(),
            retrieval_snapshot_ref: self.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: self.policy_snapshot_ref.clone(),
        }
    }

    /// The partition of a ledger key.
    pub fn of_key(key: &PartitionKey) -> TrafficPartition {
        TrafficPartition {
            scope: TrafficScope {
                agent_id: key.agent_id.clone(),
                project_id: key.project_id.clone(),
                corpus_id: key.corpus_id.clone(),
                surface_id: key.surface_id.clone(),
            },
            retrieval_snapshot_ref: key.retrieval_snapshot_ref.clone(),
            policy_snapshot_ref: key.policy_snapshot_ref.clone(),
        }
    }

    /// The `mur_` reducer identity of this partition under the default reducer: what a
    /// verdict names the partitions it evaluated by.
    pub fn reducer_identity(&self) -> String {
        let scope = Scope {
            agent_id: self.scope.agent_id.as_str().into(),
            project_id: self.scope.project_id.as_str().into(),
            corpus_id: self.scope.corpus_id.as_str().into(),
            surface_id: self.scope.surface_id.as_str().into(),
        };
        reducer_identity(
            &scope,
            &self.retrieval_snapshot_ref,
            &self.policy_snapshot_ref,
            DEFAULT_REDUCER_VERSION,
        )
    }
}

/// Which ranking the recall showed (before exploration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoggingPolicyKind {
    /// The provider's order (no prior, or a prior that stayed off: shadow mode).
    Semantic,
    /// The rank prior's order (a qualified verdict let it apply).
    RankPrior,
}

impl LoggingPolicyKind {
    fn parse(text: &str) -> Option<LoggingPolicyKind> {
        match text {
            "semantic" => Some(LoggingPolicyKind::Semantic),
            "rank_prior" => Some(LoggingPolicyKind::RankPrior),
            _ => None,
        }
    }
}

/// The logging policy of one recall: what it would have shown, and how it explored.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LoggingPolicy {
    pub kind: LoggingPolicyKind,
    /// The applied prior's `murp_` digest (`rank_prior` only).
    #[schemars(with = "Nullable<String>")]
    pub profile_digest: Option<String>,
    /// `--explore`: the probability that the order within the pool was a uniformly random
    /// permutation (0 without exploration).
    pub epsilon: f64,
    /// Candidates in the exploration pool (`in_pool`): the semantic pool of the prior's
    /// profile when one was given (shown or past `--limit`), else every shown result.
    pub pool_size: u64,
    /// This recall drew the random permutation.
    pub explored: bool,
}

/// One candidate of a recall: a result of the provider, shown or not.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrafficCandidate {
    /// 16 hex of the raw provider ref (as receipts and observations carry it).
    pub memory_ref_digest: String,
    /// The provider's relevance score, `null` when it reports none.
    #[schemars(with = "Nullable<f64>")]
    pub relevance: Option<f64>,
    /// 1-based rank by relevance (descending, ties by digest) among all candidates;
    /// `null` when a candidate has no relevance.
    #[schemars(with = "Nullable<u64>")]
    pub semantic_rank: Option<u64>,
    /// 1-based rank under the logging policy before exploration and before the cut to
    /// `--limit` (with `--rank-prior` the pool is fetched and only its first `--limit`
    /// are shown); `null` when the policy does not rank it (an applied prior drops results
    /// outside its semantic stage).
    #[schemars(with = "Nullable<u64>")]
    pub policy_rank: Option<u64>,
    /// 1-based rank as shown (printed); `null` when not shown.
    #[schemars(with = "Nullable<u64>")]
    pub shown_rank: Option<u64>,
    /// In the exploration pool, shown or not: exploration permutes the whole pool before
    /// `--limit` cuts it, so a member past the limit could have been shown.
    pub in_pool: bool,
    /// Probability under the logging policy that this candidate is shown at
    /// `shown_rank`: `(1 − ε)·[policy_rank = shown_rank] + ε/pool_size` for a pool member,
    /// 1 for a shown candidate outside the pool (exploration never moves it); `null` when
    /// not shown.
    #[schemars(with = "Nullable<f64>")]
    pub propensity: Option<f64>,
}

/// The prior's ranking of a recall whose prior stayed off (shadow mode).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Shadow {
    pub profile_digest: String,
    /// The prior's semantic pool in its final order (digests).
    pub ranks: Vec<String>,
}

/// A recall event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecallEvent {
    pub schema_version: TrafficEventVersion,
    pub event_kind: RecallEventKind,
    /// The recall's `recall_session_ref` (`rms_` + 32 hex).
    pub recall_id: String,
    pub observed_at: String,
    pub partition: TrafficPartition,
    pub logging_policy: LoggingPolicy,
    pub candidates: Vec<TrafficCandidate>,
    #[schemars(with = "Nullable<Shadow>")]
    pub shadow: Option<Shadow>,
}

/// An `apply` event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApplyEvent {
    pub schema_version: TrafficEventVersion,
    pub event_kind: ApplyEventKind,
    pub recall_id: String,
    pub observed_at: String,
    /// `rma_` + 64 hex.
    pub application_receipt_id: String,
    /// `applied`, `ignored` or `refuted`.
    pub outcome: String,
    /// The applied memories' digests (empty unless `outcome` is `applied`).
    pub applied: Vec<String>,
    pub partition: TrafficPartition,
}

/// A verified outcome attributed by `utility-attribute`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OutcomeEvent {
    pub schema_version: TrafficEventVersion,
    pub event_kind: OutcomeEventKind,
    pub application_receipt_id: String,
    pub observed_at: String,
    pub outcome_ref: String,
    /// `succeeded`, `partial` or `failed`.
    pub outcome_status: String,
    pub partition: TrafficPartition,
}

/// `memory_utility_traffic_event_v0`: one event of the traffic log.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "TrafficEvent")]
pub enum TrafficEvent {
    Recall(RecallEvent),
    Apply(ApplyEvent),
    Outcome(OutcomeEvent),
}

impl TrafficEvent {
    /// The event as the ledger stores it: its columns and compact JSON text.
    pub fn to_append(&self) -> TrafficAppend {
        let (kind, partition, recall_id, receipt_id, observed_at) = match self {
            TrafficEvent::Recall(e) => (
                TrafficKind::Recall,
                &e.partition,
                e.recall_id.as_str(),
                "",
                e.observed_at.as_str(),
            ),
            TrafficEvent::Apply(e) => (
                TrafficKind::Apply,
                &e.partition,
                e.recall_id.as_str(),
                e.application_receipt_id.as_str(),
                e.observed_at.as_str(),
            ),
            TrafficEvent::Outcome(e) => (
                TrafficKind::Outcome,
                &e.partition,
                "",
                e.application_receipt_id.as_str(),
                e.observed_at.as_str(),
            ),
        };
        TrafficAppend {
            kind,
            partition: partition.key(),
            recall_id: recall_id.to_owned(),
            application_receipt_id: receipt_id.to_owned(),
            observed_at: observed_at.to_owned(),
            event: self.to_text(),
        }
    }

    /// Compact JSON text in key order.
    pub fn to_text(&self) -> String {
        json::to_value(self)
            .map(|v| json::dumps(&v, crate::ledger::engine::COMPACT))
            .unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------
// Building a recall event
// ---------------------------------------------------------------------------------------

/// The shell's randomness for one recall's exploration: `coin` uniform in `[0, 1)` and
/// the `seed` of the permutation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExplorationDraw {
    pub coin: f64,
    pub seed: u64,
}

impl ExplorationDraw {
    /// A draw from 16 random bytes (e.g. `/dev/urandom`).
    pub fn from_bytes(bytes: [u8; 16]) -> ExplorationDraw {
        let mut a = [0u8; 8];
        let mut b = [0u8; 8];
        a.copy_from_slice(&bytes[..8]);
        b.copy_from_slice(&bytes[8..]);
        ExplorationDraw {
            coin: (u64::from_le_bytes(a) >> 11) as f64 * (1.0 / (1u64 << 53) as f64),
            seed: u64::from_le_bytes(b),
        }
    }
}

/// `--explore EPSILON` checked: a number from 0 to 1.
pub fn parse_epsilon(text: &str) -> Result<f64, String> {
    let message = || {
        format!(
            "--explore must be a number from 0 to 1 (the probability that a recall shows its semantic pool in a uniformly random order), not {text:?}"
        )
    };
    let value: f64 = text.trim().parse().map_err(|_| message())?;
    if value.is_finite() && (0.0..=MAX_EPSILON).contains(&value) {
        Ok(value)
    } else {
        Err(message())
    }
}

/// The shown order after exploration: with probability `epsilon` (`draw.coin <
/// epsilon`) the pool members of `policy_order` are put into a uniformly random order
/// within the positions the pool occupies (a candidate outside the pool keeps its
/// position); otherwise the policy order. Returns the order and whether it explored.
pub fn explore(
    policy_order: &[usize],
    in_pool: impl Fn(usize) -> bool,
    epsilon: f64,
    draw: ExplorationDraw,
) -> (Vec<usize>, bool) {
    if draw.coin >= epsilon {
        return (policy_order.to_vec(), false);
    }
    let slots: Vec<usize> = (0..policy_order.len())
        .filter(|&i| in_pool(policy_order[i]))
        .collect();
    let members: Vec<usize> = slots.iter().map(|&i| policy_order[i]).collect();
    let mut rng = Rng::stream(draw.seed, "recall-explore", 0);
    let permutation = rng.sample(members.len(), members.len());
    let mut shown = policy_order.to_vec();
    for (slot, &pick) in slots.iter().zip(&permutation) {
        shown[*slot] = members[pick];
    }
    (shown, true)
}

/// What a recall showed: its candidates in provider order, the logging policy's order
/// and the shown order (indices into `candidates`), the pool and the exploration rate.
/// The shown order may be shorter than the policy order: `recall --rank-prior` fetches
/// the pool and shows its first `--limit`.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// `(digest, relevance)` of every provider result, in provider order.
    pub candidates: Vec<(String, Option<f64>)>,
    /// The logging policy's order before exploration (and before the cut to `--limit`).
    pub policy_order: Vec<usize>,
    /// The printed order (after exploration and the cut).
    pub shown_order: Vec<usize>,
    /// Per candidate: in the exploration pool.
    pub in_pool: Vec<bool>,
    pub epsilon: f64,
}

fn semantic_cmp(a: &(String, Option<f64>), b: &(String, Option<f64>)) -> Ordering {
    let (ra, rb) = (a.1.unwrap_or(0.0), b.1.unwrap_or(0.0));
    rb.total_cmp(&ra).then_with(|| a.0.cmp(&b.0))
}

/// The event's candidates of a recall that showed `shown`.
pub fn recall_candidates(shown: &Shown) -> Vec<TrafficCandidate> {
    let n = shown.candidates.len();
    let mut semantic: Vec<Option<u64>> = vec![None; n];
    if shown.candidates.iter().all(|c| c.1.is_some()) {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| semantic_cmp(&shown.candidates[a], &shown.candidates[b]));
        for (rank, &i) in order.iter().enumerate() {
            semantic[i] = Some(rank as u64 + 1);
        }
    }
    let rank_in =
        |order: &[usize], i: usize| order.iter().position(|&x| x == i).map(|p| p as u64 + 1);
    let pool_size = shown.in_pool.iter().filter(|p| **p).count();
    (0..n)
        .map(|i| {
            let policy_rank = rank_in(&shown.policy_order, i);
            let shown_rank = rank_in(&shown.shown_order, i);
            let in_pool = shown.in_pool.get(i).copied().unwrap_or(false);
            let propensity = shown_rank.map(|_| {
                if in_pool {
                    let same = if policy_rank == shown_rank { 1.0 } else { 0.0 };
                    (1.0 - shown.epsilon) * same + shown.epsilon / pool_size.max(1) as f64
                } else {
                    1.0
                }
            });
            TrafficCandidate {
                memory_ref_digest: shown.candidates[i].0.clone(),
                relevance: shown.candidates[i].1,
                semantic_rank: semantic[i],
                policy_rank,
                shown_rank,
                in_pool,
                propensity,
            }
        })
        .collect()
}

/// A recall event.
pub struct RecallFacts<'a> {
    pub recall_id: &'a str,
    pub observed_at: &'a str,
    pub partition: TrafficPartition,
    pub kind: LoggingPolicyKind,
    pub profile_digest: Option<String>,
    pub explored: bool,
    pub shown: &'a Shown,
    pub shadow: Option<Shadow>,
}

/// Builds the recall event.
pub fn recall_event(facts: RecallFacts<'_>) -> TrafficEvent {
    let candidates = recall_candidates(facts.shown);
    let pool_size = candidates.iter().filter(|c| c.in_pool).count() as u64;
    TrafficEvent::Recall(RecallEvent {
        schema_version: TrafficEventVersion,
        event_kind: RecallEventKind,
        recall_id: facts.recall_id.to_owned(),
        observed_at: facts.observed_at.to_owned(),
        partition: facts.partition,
        logging_policy: LoggingPolicy {
            kind: facts.kind,
            profile_digest: facts.profile_digest,
            epsilon: facts.shown.epsilon,
            pool_size,
            explored: facts.explored,
        },
        candidates,
        shadow: facts.shadow,
    })
}

fn text_of<'a>(map: &'a Map, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The partition a receipt names: `None` when it lacks one of the six ids (a receipt of
/// `recall --input` names no agent or project).
pub fn receipt_partition(receipt: &Map) -> Option<TrafficPartition> {
    let get = |k: &str| {
        text_of(receipt, k)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Some(TrafficPartition {
        scope: TrafficScope {
            agent_id: get("agent_id")?,
            project_id: get("project_id")?,
            corpus_id: get("corpus_id")?,
            surface_id: get("surface_id")?,
        },
        retrieval_snapshot_ref: get("retrieval_snapshot_ref")?,
        policy_snapshot_ref: get("policy_snapshot_ref")?,
    })
}

/// The apply event of a printed `reward_memory_application_v0` packet, or `None` when
/// its receipt names no complete partition.
pub fn apply_event(packet: &Value, observed_at: &str) -> Option<TrafficEvent> {
    let receipt = packet.get("receipt").and_then(Value::as_object)?;
    let partition = receipt_partition(receipt)?;
    let outcome = text_of(receipt, "outcome")?.to_owned();
    let applied = if outcome == "applied" {
        json::str_items(receipt.get("memory_ref_digests"))
    } else {
        Vec::new()
    };
    Some(TrafficEvent::Apply(ApplyEvent {
        schema_version: TrafficEventVersion,
        event_kind: ApplyEventKind,
        recall_id: packet.get("recall_session_ref")?.as_str()?.to_owned(),
        observed_at: observed_at.to_owned(),
        application_receipt_id: packet.get("application_receipt_id")?.as_str()?.to_owned(),
        outcome,
        applied,
        partition,
    }))
}

/// The outcome event of one attribution.
pub fn outcome_event(
    application_receipt_id: &str,
    outcome_ref: &str,
    outcome_status: &str,
    partition: TrafficPartition,
    observed_at: &str,
) -> TrafficEvent {
    TrafficEvent::Outcome(OutcomeEvent {
        schema_version: TrafficEventVersion,
        event_kind: OutcomeEventKind,
        application_receipt_id: application_receipt_id.to_owned(),
        observed_at: observed_at.to_owned(),
        outcome_ref: outcome_ref.to_owned(),
        outcome_status: outcome_status.to_owned(),
        partition,
    })
}

// ---------------------------------------------------------------------------------------
// Reading an event back
// ---------------------------------------------------------------------------------------

type Read<T> = Result<T, String>;

fn field<'a>(map: &'a Map, key: &str) -> Read<&'a Value> {
    map.get(key).ok_or_else(|| format!("{key} is missing"))
}

fn exact(map: &Map, keys: &[&str], label: &str) -> Read<()> {
    if let Some(extra) = map.keys().find(|k| !keys.contains(k)) {
        return Err(format!("{label} has an unknown field {extra:?}"));
    }
    if let Some(missing) = keys.iter().find(|k| !map.contains_key(k)) {
        return Err(format!("{label}.{missing} is missing"));
    }
    Ok(())
}

fn string(map: &Map, key: &str) -> Read<String> {
    field(map, key)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{key} must be a string"))
}

fn reference(map: &Map, key: &str) -> Read<String> {
    let s = string(map, key)?;
    if is_ref(&s) {
        Ok(s)
    } else {
        Err(format!("{key} must be a public-safe ref"))
    }
}

fn number(v: &Value, label: &str) -> Read<f64> {
    let f = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => return Err(format!("{label} must be a number")),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(format!("{label} must be finite"))
    }
}

fn optional_number(v: &Value, label: &str) -> Read<Option<f64>> {
    if v.is_null() {
        Ok(None)
    } else {
        number(v, label).map(Some)
    }
}

fn optional_rank(v: &Value, label: &str) -> Read<Option<u64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) if *i >= 1 => Ok(Some(*i as u64)),
        _ => Err(format!("{label} must be null or a positive integer")),
    }
}

fn digest(v: &Value, label: &str) -> Read<String> {
    match v.as_str() {
        Some(s) if is_memory_digest(s) => Ok(s.to_owned()),
        _ => Err(format!(
            "{label} must be a memory digest (16 lowercase hex or sha256: and 64)"
        )),
    }
}

fn digests(v: &Value, label: &str) -> Read<Vec<String>> {
    v.as_array()
        .ok_or_else(|| format!("{label} must be a list"))?
        .iter()
        .enumerate()
        .map(|(i, d)| digest(d, &format!("{label}[{i}]")))
        .collect()
}

fn timestamp(map: &Map, key: &str) -> Read<String> {
    let s = string(map, key)?;
    parse_aware(&s).map_err(|_| format!("{key} must be an aware ISO timestamp"))?;
    Ok(s)
}

/// Reads a partition object (`scope` with the four ids, the two snapshot refs).
pub fn parse_partition(v: &Value, label: &str) -> Read<TrafficPartition> {
    let map = v
        .as_object()
        .ok_or_else(|| format!("{label} must be an object"))?;
    exact(
        map,
        &["scope", "retrieval_snapshot_ref", "policy_snapshot_ref"],
        label,
    )?;
    let scope = field(map, "scope")?
        .as_object()
        .ok_or_else(|| format!("{label}.scope must be an object"))?;
    exact(
        scope,
        &["agent_id", "project_id", "corpus_id", "surface_id"],
        &format!("{label}.scope"),
    )?;
    Ok(TrafficPartition {
        scope: TrafficScope {
            agent_id: reference(scope, "agent_id")?,
            project_id: reference(scope, "project_id")?,
            corpus_id: reference(scope, "corpus_id")?,
            surface_id: reference(scope, "surface_id")?,
        },
        retrieval_snapshot_ref: reference(map, "retrieval_snapshot_ref")?,
        policy_snapshot_ref: reference(map, "policy_snapshot_ref")?,
    })
}

fn parse_candidate(v: &Value, label: &str) -> Read<TrafficCandidate> {
    let map = v
        .as_object()
        .ok_or_else(|| format!("{label} must be an object"))?;
    exact(
        map,
        &[
            "memory_ref_digest",
            "relevance",
            "semantic_rank",
            "policy_rank",
            "shown_rank",
            "in_pool",
            "propensity",
        ],
        label,
    )?;
    let propensity = optional_number(field(map, "propensity")?, &format!("{label}.propensity"))?;
    if let Some(p) = propensity
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(format!("{label}.propensity must be above 0 and at most 1"));
    }
    let shown_rank = optional_rank(field(map, "shown_rank")?, &format!("{label}.shown_rank"))?;
    if shown_rank.is_some() != propensity.is_some() {
        return Err(format!(
            "{label}: a shown candidate has a propensity and only a shown one"
        ));
    }
    Ok(TrafficCandidate {
        memory_ref_digest: digest(field(map, "memory_ref_digest")?, label)?,
        relevance: optional_number(field(map, "relevance")?, &format!("{label}.relevance"))?,
        semantic_rank: optional_rank(
            field(map, "semantic_rank")?,
            &format!("{label}.semantic_rank"),
        )?,
        policy_rank: optional_rank(field(map, "policy_rank")?, &format!("{label}.policy_rank"))?,
        shown_rank,
        in_pool: field(map, "in_pool")?
            .as_bool()
            .ok_or_else(|| format!("{label}.in_pool must be a boolean"))?,
        propensity,
    })
}

fn parse_recall(map: &Map) -> Read<RecallEvent> {
    exact(
        map,
        &[
            "schema_version",
            "event_kind",
            "recall_id",
            "observed_at",
            "partition",
            "logging_policy",
            "candidates",
            "shadow",
        ],
        "recall event",
    )?;
    let policy = field(map, "logging_policy")?
        .as_object()
        .ok_or("logging_policy must be an object")?;
    exact(
        policy,
        &["kind", "profile_digest", "epsilon", "pool_size", "explored"],
        "logging_policy",
    )?;
    let epsilon = number(field(policy, "epsilon")?, "logging_policy.epsilon")?;
    if !(0.0..=MAX_EPSILON).contains(&epsilon) {
        return Err("logging_policy.epsilon must be from 0 to 1".into());
    }
    let kind = LoggingPolicyKind::parse(&string(policy, "kind")?)
        .ok_or("logging_policy.kind must be semantic or rank_prior")?;
    let profile_digest = match field(policy, "profile_digest")? {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        _ => return Err("logging_policy.profile_digest must be null or a string".into()),
    };
    let candidates = field(map, "candidates")?
        .as_array()
        .ok_or("candidates must be a list")?
        .iter()
        .enumerate()
        .map(|(i, c)| parse_candidate(c, &format!("candidates[{i}]")))
        .collect::<Read<Vec<_>>>()?;
    let pool_size = match field(policy, "pool_size")? {
        Value::Int(n) if *n >= 0 => *n as u64,
        _ => return Err("logging_policy.pool_size must be a non-negative integer".into()),
    };
    if pool_size != candidates.iter().filter(|c| c.in_pool).count() as u64 {
        return Err("logging_policy.pool_size must count the in_pool candidates".into());
    }
    let shadow = match field(map, "shadow")? {
        Value::Null => None,
        Value::Object(s) => {
            exact(s, &["profile_digest", "ranks"], "shadow")?;
            Some(Shadow {
                profile_digest: string(s, "profile_digest")?,
                ranks: digests(field(s, "ranks")?, "shadow.ranks")?,
            })
        }
        _ => return Err("shadow must be null or an object".into()),
    };
    Ok(RecallEvent {
        schema_version: TrafficEventVersion,
        event_kind: RecallEventKind,
        recall_id: reference(map, "recall_id")?,
        observed_at: timestamp(map, "observed_at")?,
        partition: parse_partition(field(map, "partition")?, "partition")?,
        logging_policy: LoggingPolicy {
            kind,
            profile_digest,
            epsilon,
            pool_size,
            explored: field(policy, "explored")?
                .as_bool()
                .ok_or("logging_policy.explored must be a boolean")?,
        },
        candidates,
        shadow,
    })
}

fn parse_apply(map: &Map) -> Read<ApplyEvent> {
    exact(
        map,
        &[
            "schema_version",
            "event_kind",
            "recall_id",
            "observed_at",
            "application_receipt_id",
            "outcome",
            "applied",
            "partition",
        ],
        "apply event",
    )?;
    Ok(ApplyEvent {
        schema_version: TrafficEventVersion,
        event_kind: ApplyEventKind,
        recall_id: reference(map, "recall_id")?,
        observed_at: timestamp(map, "observed_at")?,
        application_receipt_id: reference(map, "application_receipt_id")?,
        outcome: string(map, "outcome")?,
        applied: digests(field(map, "applied")?, "applied")?,
        partition: parse_partition(field(map, "partition")?, "partition")?,
    })
}

fn parse_outcome(map: &Map) -> Read<OutcomeEvent> {
    exact(
        map,
        &[
            "schema_version",
            "event_kind",
            "application_receipt_id",
            "observed_at",
            "outcome_ref",
            "outcome_status",
            "partition",
        ],
        "outcome event",
    )?;
    let status = string(map, "outcome_status")?;
    if !matches!(status.as_str(), "succeeded" | "partial" | "failed") {
        return Err("outcome_status must be succeeded, partial or failed".into());
    }
    Ok(OutcomeEvent {
        schema_version: TrafficEventVersion,
        event_kind: OutcomeEventKind,
        application_receipt_id: reference(map, "application_receipt_id")?,
        observed_at: timestamp(map, "observed_at")?,
        outcome_ref: reference(map, "outcome_ref")?,
        outcome_status: status,
        partition: parse_partition(field(map, "partition")?, "partition")?,
    })
}

/// Reads one stored event strictly (exact fields, types, digests, propensities in
/// `(0, 1]`); the message says what is wrong.
pub fn parse_event(text: &str) -> Read<TrafficEvent> {
    let value = json::parse(text).map_err(|e| format!("not JSON: {e}"))?;
    let map = value.as_object().ok_or("an event must be an object")?;
    if text_of(map, "schema_version") != Some(TRAFFIC_EVENT_SCHEMA_VERSION) {
        return Err(format!(
            "schema_version must be {TRAFFIC_EVENT_SCHEMA_VERSION}"
        ));
    }
    match text_of(map, "event_kind") {
        Some("recall") => parse_recall(map).map(TrafficEvent::Recall),
        Some("apply") => parse_apply(map).map(TrafficEvent::Apply),
        Some("outcome") => parse_outcome(map).map(TrafficEvent::Outcome),
        _ => Err("event_kind must be recall, apply or outcome".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition() -> TrafficPartition {
        TrafficPartition {
            scope: TrafficScope {
                agent_id: "agent:a".into(),
                project_id: "project:p".into(),
                corpus_id: "corpus-a".into(),
                surface_id: "loopx.issue_fix".into(),
            },
            retrieval_snapshot_ref: "retrieval:r1".into(),
            policy_snapshot_ref: "policy:p1".into(),
        }
    }

    fn digest(i: usize) -> String {
        format!("{i:016x}")
    }

    #[test]
    fn exploration_permutes_only_the_pool_and_only_when_the_coin_says_so() {
        let order: Vec<usize> = (0..6).collect();
        let pool = |i: usize| i < 4;
        let (kept, explored) = explore(&order, pool, 0.3, ExplorationDraw { coin: 0.5, seed: 7 });
        assert_eq!((kept, explored), (order.clone(), false));
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let (shown, explored) = explore(&order, pool, 0.3, ExplorationDraw { coin: 0.1, seed });
            assert!(explored);
            assert_eq!(&shown[4..], &[4, 5], "outside the pool nothing moves");
            let mut members = shown[..4].to_vec();
            members.sort_unstable();
            assert_eq!(members, vec![0, 1, 2, 3]);
            seen.insert(shown[0]);
        }
        assert_eq!(seen.len(), 4, "every pool member reaches the top");
        // ε = 0 never explores, ε = 1 always does.
        assert!(!explore(&order, pool, 0.0, ExplorationDraw { coin: 0.0, seed: 1 }).1);
        assert!(
            explore(
                &order,
                pool,
                1.0,
                ExplorationDraw {
                    coin: 0.999,
                    seed: 1
                }
            )
            .1
        );
    }

    #[test]
    fn propensities_follow_the_logging_policy() {
        let shown = Shown {
            candidates: (0..4)
                .map(|i| (digest(i), Some(0.9 - i as f64 * 0.1)))
                .collect(),
            policy_order: vec![0, 1, 2, 3],
            shown_order: vec![2, 1, 0, 3],
            in_pool: vec![true, true, true, false],
            epsilon: 0.2,
        };
        let c = recall_candidates(&shown);
        let p: Vec<Option<f64>> = c.iter().map(|c| c.propensity).collect();
        let ex = 0.2 / 3.0;
        assert_eq!(p, vec![Some(ex), Some(0.8 + ex), Some(ex), Some(1.0)]);
        assert_eq!(c[2].shown_rank, Some(1));
        assert_eq!(c[2].policy_rank, Some(3));
        assert_eq!(c[0].semantic_rank, Some(1));
        assert!(!c[3].in_pool);
    }

    /// `recall --rank-prior` fetches the pool and shows its first `--limit`: the members
    /// past the limit stay in the pool (exploration could have shown them), ranked by the
    /// policy, not shown, and the propensities of the shown ones divide by the whole pool.
    #[test]
    fn a_pool_cut_to_the_limit_keeps_its_unshown_members_in_the_pool() {
        let shown = Shown {
            candidates: (0..6)
                .map(|i| (digest(i), Some(0.9 - i as f64 * 0.1)))
                .collect(),
            // The prior's pool (five: the sixth is below its floor) in its order ...
            policy_order: vec![3, 0, 1, 2, 4],
            // ... and --limit 2 of it.
            shown_order: vec![3, 0],
            in_pool: vec![true, true, true, true, true, false],
            epsilon: 0.5,
        };
        let event = recall_event(RecallFacts {
            recall_id: "rms_0123456789abcdef0123456789abcdef",
            observed_at: "2026-09-01T00:00:00Z",
            partition: partition(),
            kind: LoggingPolicyKind::RankPrior,
            profile_digest: Some("murp_x".into()),
            explored: false,
            shown: &shown,
            shadow: None,
        });
        let TrafficEvent::Recall(recall) = &event else {
            panic!("a recall event");
        };
        assert_eq!(recall.logging_policy.pool_size, 5);
        let c = &recall.candidates;
        let in_pool: Vec<bool> = c.iter().map(|c| c.in_pool).collect();
        assert_eq!(in_pool, [true, true, true, true, true, false]);
        let policy: Vec<Option<u64>> = c.iter().map(|c| c.policy_rank).collect();
        assert_eq!(policy, [Some(2), Some(3), Some(4), Some(1), Some(5), None]);
        let shown_ranks: Vec<Option<u64>> = c.iter().map(|c| c.shown_rank).collect();
        assert_eq!(shown_ranks, [Some(2), None, None, Some(1), None, None]);
        let p: Vec<Option<f64>> = c.iter().map(|c| c.propensity).collect();
        let same = 0.5 + 0.5 / 5.0;
        assert_eq!(p, [Some(same), None, None, Some(same), None, None]);
        assert_eq!(parse_event(&event.to_text()), Ok(event.clone()));
    }

    #[test]
    fn an_event_reads_back_as_it_was_written_and_carries_no_text() {
        let shown = Shown {
            candidates: vec![(digest(1), Some(0.5)), (digest(2), None)],
            policy_order: vec![0, 1],
            shown_order: vec![0, 1],
            in_pool: vec![true, true],
            epsilon: 0.0,
        };
        let event = recall_event(RecallFacts {
            recall_id: "rms_0123456789abcdef0123456789abcdef",
            observed_at: "2026-09-01T00:00:00Z",
            partition: partition(),
            kind: LoggingPolicyKind::Semantic,
            profile_digest: None,
            explored: false,
            shown: &shown,
            shadow: Some(Shadow {
                profile_digest: "murp_x".into(),
                ranks: vec![digest(2), digest(1)],
            }),
        });
        let text = event.to_text();
        assert_eq!(parse_event(&text), Ok(event.clone()));
        let append = event.to_append();
        assert_eq!(append.kind, TrafficKind::Recall);
        assert_eq!(append.partition.agent_id, "agent:a");
        let outcome = outcome_event(
            "rma_x",
            "effect:1",
            "partial",
            partition(),
            "2026-09-01T00:00:00Z",
        );
        assert_eq!(parse_event(&outcome.to_text()), Ok(outcome));
        assert!(parse_event(&text.replace("\"in_pool\":true", "\"in_pool\":1")).is_err());
        assert!(parse_event(&text.replace("0.5", "\"0.5\"")).is_err());
    }

    #[test]
    fn epsilon_is_checked_with_a_message_that_says_what_to_give() {
        assert_eq!(parse_epsilon("0.1"), Ok(0.1));
        assert_eq!(parse_epsilon("1"), Ok(1.0));
        for bad in ["-0.1", "1.5", "NaN", "inf", "x"] {
            let e = parse_epsilon(bad).expect_err(bad);
            assert!(
                e.starts_with("--explore must be a number from 0 to 1"),
                "{e}"
            );
        }
    }
}
