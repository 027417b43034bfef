//! The `rank-prior` request and its answers: the ranking `memory_utility_rank_prior_v0`
//! ([`super::rank()`], [`super::packet()`]) and, for `--execute`, the stored modifier table
//! and the effect receipt `memory_utility_rank_prior_effect_v0`.
//!
//! Owns the request shape (`profile`, `partition`, `projection`, `candidates` or
//! `recall`; [`RankPriorInput`], also its JSON Schema), the effect payload and the effect
//! receipt ([`EffectPacket`], also its schema). With `--ledger` the utility comes from the
//! utility ledger's stored subjects of the partition that mention a candidate instead of
//! the request's projection: [`RankPriorInput::digests`] names them, the shell reads them
//! ([`crate::ledger::view`]) and hands the view to [`RankPriorInput::into_request`]. The
//! embedded store gets an exact-readback effect ([`crate::provider::embedded::effects`]);
//! OpenViking has no external rank-prior contract, so the effect is refused with
//! `provider_rank_prior_contract_absent` and nothing is written (ranking stays local).
//! Pure: reading the request, opening the ledger and writing the effect are the
//! `rank-prior` handler's, in the shell.

use schemars::JsonSchema;

use crate::const_string;
use crate::recall::RECALL_SCHEMA_VERSION;
use crate::utility::strict;
use crate::wire::digest;
use crate::wire::json::{self, Map, Value};
use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};
use crate::wire::text;

use super::candidate::{Candidate, MAX_CANDIDATES, Partition};
use super::error::RankPriorError;
use super::modifier::Reason;
use super::packet::RankPriorPacket;
use super::profile::{MODIFIER_VERSION, ModifierVersion, Profile};
use super::rank::{check_partition, modifier_table, rank};
use super::view::UtilityView;

/// Schema version of the effect receipt.
pub const EFFECT_SCHEMA_VERSION: &str = EffectVersion::VALUE;
/// Schema version of the stored modifier table.
pub const EFFECT_TABLE_SCHEMA_VERSION: &str = "memory_utility_rank_prior_effect_table_v0";
/// Why a provider without a rank-prior contract gets no effect.
pub const CONTRACT_ABSENT: &str = "provider_rank_prior_contract_absent";

const REQUEST_FIELDS: [&str; 5] = ["profile", "partition", "projection", "candidates", "recall"];

/// A request error of `rank-prior` (a [`RankPriorError::Field`]).
fn field(message: impl Into<String>) -> RankPriorError {
    super::error::field(message)
}

/// A request-shape error of `rank-prior` (a [`RankPriorError::Request`]).
pub fn request_error(message: impl Into<String>) -> RankPriorError {
    RankPriorError::Request(message.into())
}

/// Where a request's utility comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilitySource {
    /// The request's own `projection` (required).
    Projection,
    /// The utility ledger (`--ledger`): the request must not carry a projection.
    Ledger,
}

/// `rank-prior --input`: the profile, the partition, the utility (a projection, unless the
/// command reads the ledger) and the candidates to rank.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(rename = "RankPriorInput", deny_unknown_fields)]
pub struct RankPriorInput {
    pub profile: Profile,
    pub partition: Partition,
    /// A `memory_utility_projection_v0` packet of exactly this partition; required
    /// unless the command reads the utility ledger (`--ledger`), where it must be absent.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub projection: Option<UtilityView>,
    /// Either `candidates` or `recall` (optional with `--execute`).
    pub candidates: Option<Vec<Candidate>>,
    /// A packet printed by `reward-memory recall`.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub recall: Option<Vec<Candidate>>,
}

/// A request with its utility: what ranking and the effect need.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub profile: Profile,
    pub partition: Partition,
    pub view: UtilityView,
    pub candidates: Option<Vec<Candidate>>,
}

/// A candidate row: `{memory_ref_digest, relevance_score}`. `label` names the row in
/// errors and is only built when one occurs.
fn candidate(row: &Value, label: impl Fn() -> String) -> Result<Candidate, RankPriorError> {
    let map = row
        .as_object()
        .ok_or_else(|| field(format!("{} must be an object", label())))?;
    let digest = map
        .get("memory_ref_digest")
        .and_then(Value::as_str)
        .ok_or_else(|| field(format!("{}.memory_ref_digest must be a string", label())))?;
    let relevance = match map.get("relevance_score") {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        Some(Value::Null) | None => {
            return Err(field(format!(
                "{}.relevance_score is missing: the provider returned no relevance score",
                label()
            )));
        }
        _ => {
            return Err(field(format!(
                "{}.relevance_score must be a number",
                label()
            )));
        }
    };
    if !relevance.is_finite() {
        return Err(field(format!(
            "{}.relevance_score must be a finite number (NaN and Infinity are refused)",
            label()
        )));
    }
    Candidate::new(digest, relevance).map_err(|e| field(format!("{}: {e}", label())))
}

/// `candidates`: at most [`MAX_CANDIDATES`] rows of exactly the two candidate keys.
fn candidate_list(list: &Value) -> Result<Vec<Candidate>, RankPriorError> {
    let rows = list
        .as_array()
        .ok_or_else(|| field("candidates must be a list"))?;
    if rows.len() > MAX_CANDIDATES {
        return Err(field(format!(
            "at most {MAX_CANDIDATES} candidates can be ranked at once"
        )));
    }
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            if let Some(m) = row.as_object() {
                text::reject_unknown(
                    m,
                    &format!("candidates[{i}]"),
                    &["memory_ref_digest", "relevance_score"],
                )?;
            }
            candidate(row, || format!("candidates[{i}]"))
        })
        .collect()
}

/// `recall`: the results of a recall packet of the partition's corpus and surface.
fn recall_results(recall: &Value, partition: &Partition) -> Result<Vec<Candidate>, RankPriorError> {
    let recall = recall
        .as_object()
        .ok_or_else(|| field("recall must be an object"))?;
    if recall.get("schema_version").and_then(Value::as_str) != Some(RECALL_SCHEMA_VERSION) {
        return Err(field(format!(
            "recall must be a {RECALL_SCHEMA_VERSION} packet printed by the recall command"
        )));
    }
    if recall.get("corpus_id").and_then(Value::as_str) != Some(partition.scope.corpus_id.as_str())
        || recall.get("surface_id").and_then(Value::as_str)
            != Some(partition.scope.surface_id.as_str())
    {
        return Err(field(
            "recall corpus_id and surface_id must match the partition scope",
        ));
    }
    let rows = recall
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| field("recall.results must be a list"))?;
    rows.iter()
        .enumerate()
        .map(|(i, row)| candidate(row, || format!("recall.results[{i}]")))
        .collect()
}

/// `candidates` or `recall` (at most one of them).
type Candidates = (Option<Vec<Candidate>>, Option<Vec<Candidate>>);

fn candidates_of(map: &Map, partition: &Partition) -> Result<Candidates, RankPriorError> {
    match (map.get("candidates"), map.get("recall")) {
        (Some(_), Some(_)) => Err(request_error("give either candidates or recall, not both")),
        (None, None) => Ok((None, None)),
        (Some(list), None) => Ok((Some(candidate_list(list)?), None)),
        (None, Some(recall)) => Ok((None, Some(recall_results(recall, partition)?))),
    }
}

impl RankPriorInput {
    /// Reads a request object whose utility comes from `source`.
    pub fn from_value(
        input: &Value,
        source: UtilitySource,
    ) -> Result<RankPriorInput, RankPriorError> {
        let map = input
            .as_object()
            .ok_or_else(|| request_error("rank-prior input must be an object"))?;
        text::reject_unknown(map, "rank-prior input", &REQUEST_FIELDS)
            .map_err(|e| request_error(e.0))?;
        let ledger = source == UtilitySource::Ledger;
        if ledger && map.contains_key("projection") {
            return Err(request_error(
                "give either a projection or --ledger, not both: with --ledger the utility comes from the ledger",
            ));
        }
        let required: &[&str] = if ledger {
            &["profile", "partition"]
        } else {
            &["profile", "partition", "projection"]
        };
        strict::reject_missing(map, "rank-prior input", required)
            .map_err(|e| request_error(e.0))?;
        let get = |k: &str| map.get(k).unwrap_or(&Value::Null);
        let profile = Profile::from_value(get("profile"))?;
        let partition = Partition::from_value(get("partition"))?;
        let projection = if ledger {
            None
        } else {
            let view = UtilityView::from_projection(get("projection"))?;
            check_partition(&view, &partition)?;
            Some(view)
        };
        let (candidates, recall) = candidates_of(map, &partition)?;
        if ledger && candidates.is_none() && recall.is_none() {
            return Err(request_error(
                "rank-prior input needs candidates or recall: --ledger reads the subjects of the candidates",
            ));
        }
        Ok(RankPriorInput {
            profile,
            partition,
            projection,
            candidates,
            recall,
        })
    }

    /// The candidates to rank: `candidates`, or the results of `recall`.
    pub fn ranked_candidates(&self) -> Option<&[Candidate]> {
        self.candidates.as_deref().or(self.recall.as_deref())
    }

    /// The digests of the candidates, in request order: the subjects a ledger read needs.
    pub fn digests(&self) -> Vec<&str> {
        self.ranked_candidates()
            .unwrap_or_default()
            .iter()
            .map(|c| c.memory_ref_digest.as_str())
            .collect()
    }

    /// The request with its utility: the request's projection, else `ledger_view` (the
    /// ledger's subjects of [`Self::digests`] in the partition).
    pub fn into_request(self, ledger_view: Option<UtilityView>) -> Result<Request, RankPriorError> {
        let view = self.projection.or(ledger_view).ok_or_else(|| {
            request_error("rank-prior needs the utility: a projection or --ledger")
        })?;
        Ok(Request {
            profile: self.profile,
            partition: self.partition,
            view,
            candidates: self.candidates.or(self.recall),
        })
    }
}

/// Reads a request whose utility is its projection.
pub fn parse_request(input: &Value) -> Result<Request, RankPriorError> {
    RankPriorInput::from_value(input, UtilitySource::Projection)?.into_request(None)
}

/// One row of the stored modifier table.
#[derive(serde::Serialize)]
struct TableRow<'a> {
    memory_ref_digest: &'a str,
    modifier: f64,
    reason_codes: &'a [Reason],
}

/// The stored modifier table (`memory_utility_rank_prior_effect_table_v0`), in key order
/// before canonical sorting.
#[derive(serde::Serialize)]
struct EffectTable<'a> {
    schema_version: &'static str,
    modifier_version: &'static str,
    reducer_identity: String,
    scope: Value,
    retrieval_snapshot_ref: &'a str,
    policy_snapshot_ref: &'a str,
    reducer_version: &'a str,
    profile_digest: String,
    profile: &'a Profile,
    default_modifier: f64,
    modifiers: Vec<TableRow<'a>>,
}

/// The stored modifier table: canonical JSON bytes.
pub fn effect_payload(request: &Request) -> String {
    let table = modifier_table(&request.view, &request.profile);
    let p = &request.partition;
    let typed = EffectTable {
        schema_version: EFFECT_TABLE_SCHEMA_VERSION,
        modifier_version: MODIFIER_VERSION,
        reducer_identity: p.reducer_identity(),
        scope: Value::Object(p.scope.to_sorted_map()),
        retrieval_snapshot_ref: &p.retrieval_snapshot_ref,
        policy_snapshot_ref: &p.policy_snapshot_ref,
        reducer_version: &p.reducer_version,
        profile_digest: request.profile.digest(),
        profile: &request.profile,
        default_modifier: 1.0,
        modifiers: table
            .iter()
            .map(|(d, m)| TableRow {
                memory_ref_digest: d,
                modifier: m.value,
                reason_codes: &m.reasons,
            })
            .collect(),
    };
    // Serializing a struct of strings and numbers cannot fail.
    json::canonical(&json::to_value(&typed).unwrap_or_default())
}

/// The outcome fields of an effect receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectResult {
    /// One of [`EffectStatus`]'s spellings.
    pub status: &'static str,
    pub reason_code: Option<&'static str>,
    pub cause_code: Option<&'static str>,
    pub effect_version: Option<i64>,
    pub written: bool,
    pub deduplicated: bool,
    pub verified: bool,
}

const_string!(EffectVersion, "memory_utility_rank_prior_effect_v0");

/// Effect statuses (the provider's; the receipt prints them as they come).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EffectStatus {
    Applied,
    ReadbackUnverified,
    Refused,
    ProviderUnavailable,
}

/// `memory_utility_rank_prior_effect_v0`: the receipt of `rank-prior --execute`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(rename = "RankPriorEffectPacket", deny_unknown_fields)]
pub struct EffectPacket {
    pub ok: AlwaysTrue,
    pub schema_version: EffectVersion,
    #[schemars(with = "EffectStatus")]
    pub status: &'static str,
    /// `provider_rank_prior_contract_absent` (refused), a store problem, or
    /// `provider_effect_readback_mismatch`; null when applied.
    #[schemars(with = "Nullable<String>")]
    pub reason_code: Option<&'static str>,
    /// The embedded store's public-safe cause code (`busy`, `corrupt`, ...) when the store
    /// could not be used; else null.
    #[schemars(with = "Nullable<String>")]
    pub cause_code: Option<&'static str>,
    pub provider_id: String,
    /// `mrpe_` + 64 hex of `{provider_id, reducer_identity, profile_digest}`.
    pub effect_ref: String,
    /// 1, 2, ... per effect key; null when nothing was written.
    #[schemars(with = "Nullable<u64>")]
    pub effect_version: Option<i64>,
    pub reducer_identity: String,
    pub profile_id: String,
    pub profile_digest: String,
    pub modifier_version: ModifierVersion,
    /// `sha256:` + 64 hex of the stored table bytes.
    pub table_digest: String,
    #[schemars(with = "u32")]
    pub modifier_count: usize,
    pub deduplicated: bool,
    pub exact_readback_verified: bool,
    /// `provider_effect_and_local` when applied, else `local_only`.
    pub ranking: &'static str,
    pub fail_open: AlwaysTrue,
    pub provider_write_performed: bool,
    pub external_writes_performed: bool,
    pub memory_content_modified: AlwaysFalse,
    pub provider_hotness_modified: AlwaysFalse,
    pub grants_new_action_authority: AlwaysFalse,
    pub raw_content_captured: AlwaysFalse,
}

/// The `{provider_id, reducer_identity, profile_digest}` an effect ref hashes.
#[derive(serde::Serialize)]
struct EffectKey<'a> {
    provider_id: &'a str,
    reducer_identity: &'a str,
    profile_digest: &'a str,
}

impl EffectPacket {
    /// The receipt of one outcome.
    pub fn new(
        request: &Request,
        provider_id: &str,
        payload: &str,
        r: &EffectResult,
    ) -> EffectPacket {
        let reducer_identity = request.partition.reducer_identity();
        let profile_digest = request.profile.digest();
        let key = EffectKey {
            provider_id,
            reducer_identity: &reducer_identity,
            profile_digest: &profile_digest,
        };
        // Serializing a struct of strings cannot fail.
        let effect_ref =
            digest::prefixed_canonical("mrpe_", &json::to_value(&key).unwrap_or_default());
        EffectPacket {
            ok: AlwaysTrue,
            schema_version: EffectVersion,
            status: r.status,
            reason_code: r.reason_code,
            cause_code: r.cause_code,
            provider_id: provider_id.to_owned(),
            effect_ref,
            effect_version: r.effect_version,
            reducer_identity,
            profile_id: request.profile.profile_id.clone(),
            profile_digest,
            modifier_version: ModifierVersion,
            table_digest: format!("sha256:{}", digest::sha256_hex(payload)),
            modifier_count: modifier_table(&request.view, &request.profile).len(),
            deduplicated: r.deduplicated,
            exact_readback_verified: r.verified,
            ranking: if r.status == "applied" {
                "provider_effect_and_local"
            } else {
                "local_only"
            },
            fail_open: AlwaysTrue,
            provider_write_performed: r.written,
            external_writes_performed: r.written,
            memory_content_modified: AlwaysFalse,
            provider_hotness_modified: AlwaysFalse,
            grants_new_action_authority: AlwaysFalse,
            raw_content_captured: AlwaysFalse,
        }
    }

    /// The receipt as an ordered value.
    pub fn to_value(&self) -> Value {
        // Serializing a struct of strings and numbers cannot fail.
        json::to_value(self).unwrap_or_default()
    }
}

/// The effect receipt `memory_utility_rank_prior_effect_v0` of one outcome, as a value.
pub fn effect_receipt(
    request: &Request,
    provider_id: &str,
    payload: &str,
    r: &EffectResult,
) -> Value {
    EffectPacket::new(request, provider_id, payload, r).to_value()
}

/// The ranking packet of a request (it needs candidates).
pub fn rank_request(request: &Request) -> Result<Value, RankPriorError> {
    let Some(candidates) = &request.candidates else {
        return Err(request_error(
            "rank-prior input needs candidates or recall (only --execute works without them)",
        ));
    };
    let ranking = rank(
        candidates,
        &request.view,
        &request.partition,
        &request.profile,
    )?;
    Ok(RankPriorPacket::new(&ranking, &request.partition, &request.profile).to_value())
}
