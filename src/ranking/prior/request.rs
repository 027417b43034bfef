//! The `rank-prior` request and its answers: the ranking `memory_utility_rank_prior_v0`
//! ([`super::rank`], [`super::packet`]) and, for `--execute`, the stored modifier table
//! and the effect receipt `memory_utility_rank_prior_effect_v0`.
//!
//! Owns the request shape (`profile`, `partition`, `projection`, `candidates` or
//! `recall`), the effect payload and the effect receipt. With `--ledger` the utility comes
//! from the utility ledger's stored subjects of the partition that mention a candidate
//! ([`crate::ledger::view`]) instead of the request's projection. The embedded store gets an
//! exact-readback effect ([`crate::provider::embedded::effects`]); OpenViking has no
//! external rank-prior contract, so the effect is refused with
//! `provider_rank_prior_contract_absent` and nothing is written (ranking stays local).
//! No file or clock access: the ledger is read only through the
//! [`crate::ledger::LedgerBackend`] it is handed; reading the request, opening the ledger
//! and writing the effect are the `rank-prior` handler's, in the shell.

use crate::error::Error;
use crate::obj;
use crate::recall::RECALL_SCHEMA_VERSION;
use crate::wire::digest;
use crate::wire::json::{self, Map, Value};
use crate::wire::keys;
use crate::wire::text::FieldError;

use super::{
    self as rank_prior, Candidate, MODIFIER_VERSION, Partition, Profile, RankPriorError,
    UtilityView,
};

/// Schema version of the effect receipt.
pub const EFFECT_SCHEMA_VERSION: &str = "memory_utility_rank_prior_effect_v0";
/// Schema version of the stored modifier table.
pub const EFFECT_TABLE_SCHEMA_VERSION: &str = "memory_utility_rank_prior_effect_table_v0";
/// Why a provider without a rank-prior contract gets no effect.
pub const CONTRACT_ABSENT: &str = "provider_rank_prior_contract_absent";

const REQUEST_FIELDS: [&str; 5] = ["profile", "partition", "projection", "candidates", "recall"];

/// A request error of `rank-prior` (a [`RankPriorError::Field`]).
pub fn field(message: impl Into<String>) -> Error {
    Error::from(RankPriorError::Field(FieldError(message.into())))
}

/// A parsed request.
pub struct Request {
    pub profile: Profile,
    pub partition: Partition,
    pub view: UtilityView,
    pub candidates: Option<Vec<Candidate>>,
}

/// A candidate row: `{memory_ref_digest, relevance_score}`. `label` names the row in
/// errors and is only built when one occurs.
fn candidate(row: &Value, label: impl Fn() -> String) -> Result<Candidate, Error> {
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

fn candidates_of(map: &Map, partition: &Partition) -> Result<Option<Vec<Candidate>>, Error> {
    match (map.get("candidates"), map.get("recall")) {
        (Some(_), Some(_)) => Err(field("give either candidates or recall, not both")),
        (None, None) => Ok(None),
        (Some(list), None) => {
            let rows = list
                .as_array()
                .ok_or_else(|| field("candidates must be a list"))?;
            if rows.len() > rank_prior::MAX_CANDIDATES {
                return Err(field(format!(
                    "at most {} candidates can be ranked at once",
                    rank_prior::MAX_CANDIDATES
                )));
            }
            rows.iter()
                .enumerate()
                .map(|(i, row)| {
                    if let Some(m) = row.as_object() {
                        let extra: Vec<&str> = m
                            .keys()
                            .filter(|k| *k != "memory_ref_digest" && *k != "relevance_score")
                            .collect();
                        if !extra.is_empty() {
                            return Err(field(format!(
                                "candidates[{i}] contains unsupported fields: {}",
                                keys::list(extra)
                            )));
                        }
                    }
                    candidate(row, || format!("candidates[{i}]"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }
        (None, Some(recall)) => {
            let recall = recall
                .as_object()
                .ok_or_else(|| field("recall must be an object"))?;
            if recall.get("schema_version").and_then(Value::as_str) != Some(RECALL_SCHEMA_VERSION) {
                return Err(field(format!(
                    "recall must be a {RECALL_SCHEMA_VERSION} packet printed by the recall command"
                )));
            }
            if recall.get("corpus_id").and_then(Value::as_str)
                != Some(partition.scope.corpus_id.as_str())
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
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }
    }
}

/// The utility ledger a request reads instead of its projection.
pub type Ledger<'a> = Option<&'a mut dyn crate::ledger::LedgerBackend>;

/// Reads a request; with `ledger`, the utility comes from it instead of a projection.
pub fn parse_request(input: &Value, ledger: Ledger<'_>) -> Result<Request, Error> {
    let map = input
        .as_object()
        .ok_or_else(|| field("rank-prior input must be an object"))?;
    let extra: Vec<&str> = map.keys().filter(|k| !REQUEST_FIELDS.contains(k)).collect();
    if !extra.is_empty() {
        return Err(field(format!(
            "rank-prior input contains unsupported fields: {}",
            keys::list(extra)
        )));
    }
    if ledger.is_some() && map.contains_key("projection") {
        return Err(field(
            "give either a projection or --ledger, not both: with --ledger the utility comes from the ledger",
        ));
    }
    let required: &[&str] = if ledger.is_some() {
        &["profile", "partition"]
    } else {
        &["profile", "partition", "projection"]
    };
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|k| !map.contains_key(k))
        .collect();
    if !missing.is_empty() {
        return Err(field(format!(
            "rank-prior input is missing: {}",
            keys::list(missing)
        )));
    }
    let get = |k: &str| map.get(k).unwrap_or(&Value::Null);
    let profile = Profile::from_value(get("profile"))?;
    let partition = Partition::from_value(get("partition"))?;
    let (view, candidates) = match ledger {
        None => {
            let view = UtilityView::from_projection(get("projection"))?;
            rank_prior::check_partition(&view, &partition)?;
            (view, candidates_of(map, &partition)?)
        }
        Some(backend) => {
            let Some(candidates) = candidates_of(map, &partition)? else {
                return Err(field(
                    "rank-prior input needs candidates or recall: --ledger reads the subjects of the candidates",
                ));
            };
            let digests: Vec<&str> = candidates
                .iter()
                .map(|c| c.memory_ref_digest.as_str())
                .collect();
            let view = crate::ledger::view::utility_view(backend, &partition, &digests)?;
            (view, Some(candidates))
        }
    };
    Ok(Request {
        profile,
        partition,
        view,
        candidates,
    })
}

/// The stored modifier table: canonical JSON bytes.
pub fn effect_payload(request: &Request) -> String {
    let rows: Vec<Value> = rank_prior::modifier_table(&request.view, &request.profile)
        .into_iter()
        .map(|(d, m)| {
            Value::Object(obj! {
                "memory_ref_digest" => d,
                "modifier" => m.value,
                "reason_codes" => json::str_list(&m.reasons.iter().map(|r| r.code()).collect::<Vec<_>>()),
            })
        })
        .collect();
    let p = &request.partition;
    json::canonical(&Value::Object(obj! {
        "schema_version" => EFFECT_TABLE_SCHEMA_VERSION,
        "modifier_version" => MODIFIER_VERSION,
        "reducer_identity" => p.reducer_identity(),
        "scope" => p.scope.to_sorted_map(),
        "retrieval_snapshot_ref" => p.retrieval_snapshot_ref.as_str(),
        "policy_snapshot_ref" => p.policy_snapshot_ref.as_str(),
        "reducer_version" => p.reducer_version.as_str(),
        "profile_digest" => request.profile.digest(),
        "profile" => request.profile.to_value(),
        "default_modifier" => 1.0,
        "modifiers" => Value::Array(rows.into()),
    }))
}

/// The outcome fields of an effect receipt.
pub struct EffectResult {
    pub status: &'static str,
    pub reason_code: Option<&'static str>,
    pub cause_code: Option<&'static str>,
    pub effect_version: Option<i64>,
    pub written: bool,
    pub deduplicated: bool,
    pub verified: bool,
}

/// The effect receipt `memory_utility_rank_prior_effect_v0` of one outcome.
pub fn effect_receipt(
    request: &Request,
    provider_id: &str,
    payload: &str,
    r: &EffectResult,
) -> Value {
    let reducer_identity = request.partition.reducer_identity();
    let profile_digest = request.profile.digest();
    let table_digest = format!("sha256:{}", digest::sha256_hex(payload));
    let effect_ref = digest::prefixed_canonical(
        "mrpe_",
        &Value::Object(obj! {
            "provider_id" => provider_id,
            "reducer_identity" => reducer_identity.as_str(),
            "profile_digest" => profile_digest.as_str(),
        }),
    );
    let count = rank_prior::modifier_table(&request.view, &request.profile).len();
    let applied = r.status == "applied";
    Value::Object(obj! {
        "ok" => true,
        "schema_version" => EFFECT_SCHEMA_VERSION,
        "status" => r.status,
        "reason_code" => r.reason_code,
        "cause_code" => r.cause_code,
        "provider_id" => provider_id,
        "effect_ref" => effect_ref,
        "effect_version" => r.effect_version,
        "reducer_identity" => reducer_identity,
        "profile_id" => request.profile.profile_id.as_str(),
        "profile_digest" => profile_digest,
        "modifier_version" => MODIFIER_VERSION,
        "table_digest" => table_digest,
        "modifier_count" => count,
        "deduplicated" => r.deduplicated,
        "exact_readback_verified" => r.verified,
        "ranking" => if applied { "provider_effect_and_local" } else { "local_only" },
        "fail_open" => true,
        "provider_write_performed" => r.written,
        "external_writes_performed" => r.written,
        "memory_content_modified" => false,
        "provider_hotness_modified" => false,
        "grants_new_action_authority" => false,
        "raw_content_captured" => false,
    })
}

/// `rank-prior` without `--execute` on an already parsed input: pure.
pub fn rank_input(input: &Value) -> Result<Value, Error> {
    rank_request(&parse_request(input, None)?)
}

/// The ranking packet of a parsed request (it needs candidates).
pub fn rank_request(request: &Request) -> Result<Value, Error> {
    let Some(candidates) = &request.candidates else {
        return Err(field(
            "rank-prior input needs candidates or recall (only --execute works without them)",
        ));
    };
    let ranking = rank_prior::rank(
        candidates,
        &request.view,
        &request.partition,
        &request.profile,
    )?;
    Ok(rank_prior::packet(
        &ranking,
        &request.partition,
        &request.profile,
    ))
}
