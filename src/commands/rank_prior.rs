//! The `rank-prior` command: reads a request, runs the pure rank prior
//! ([`crate::ranking::prior`]) and prints `memory_utility_rank_prior_v0`; with `--execute`
//! writes the partition's modifier table as a provider effect and prints
//! `memory_utility_rank_prior_effect_v0`.
//!
//! Owns the request shape (`profile`, `partition`, `projection`, `candidates` or
//! `recall`), the effect payload and the effect receipt. With `--ledger` the utility comes
//! from the utility ledger's stored subjects of the partition that mention a candidate
//! ([`crate::ledger::view`]) instead of the request's projection. The embedded store gets an
//! exact-readback effect ([`crate::provider::embedded::effects`]); OpenViking has no
//! external rank-prior contract, so the effect is refused with
//! `provider_rank_prior_contract_absent` and nothing is written (ranking stays local).

use std::time::Duration;

use crate::cli::RankPriorArgs;
use crate::error::Error;
use crate::obj;
use crate::provider::embedded;
use crate::provider::embedded::effects::{self, EffectKey};
use crate::recall::RECALL_SCHEMA_VERSION;
use crate::wire::digest;
use crate::wire::json::{self, Map, Value};
use crate::wire::keys;
use crate::wire::text::FieldError;
use crate::{Context, Notes, Outcome, experiment, io};

use crate::ranking::prior::{
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

fn field(message: impl Into<String>) -> Error {
    Error::from(RankPriorError::Field(FieldError(message.into())))
}

/// A parsed request.
struct Request {
    profile: Profile,
    partition: Partition,
    view: UtilityView,
    candidates: Option<Vec<Candidate>>,
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
type Ledger<'a> = Option<&'a mut dyn crate::ledger::LedgerBackend>;

fn parse_request(input: &Value, ledger: Ledger<'_>) -> Result<Request, Error> {
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
fn effect_payload(request: &Request) -> String {
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
struct EffectResult {
    status: &'static str,
    reason_code: Option<&'static str>,
    cause_code: Option<&'static str>,
    effect_version: Option<i64>,
    written: bool,
    deduplicated: bool,
    verified: bool,
}

fn effect_receipt(request: &Request, provider_id: &str, payload: &str, r: &EffectResult) -> Value {
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

fn execute(args: &RankPriorArgs, ctx: &Context, request: &Request) -> Result<Outcome, Error> {
    let (Some(goal), Some(agent)) = (args.goal_id.as_deref(), args.agent_id.as_deref()) else {
        return Err(field("--execute needs --goal-id and --agent-id"));
    };
    let resolution = experiment::resolve(ctx, goal, agent)?;
    let Some(config) = resolution.config else {
        return Err(field(
            "Reward Memory experiment is unavailable for this agent: the effect needs an enabled route",
        ));
    };
    let corpus_id = &request.partition.scope.corpus_id;
    let entry = config
        .corpus(corpus_id)
        .ok_or_else(|| field("partition scope corpus_id is not a corpus of this experiment"))?;
    let binding = &entry.provider_binding;
    let provider_id = binding
        .get("provider_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let payload = effect_payload(request);
    if provider_id != embedded::PROVIDER_ID {
        let refused = EffectResult {
            status: "refused",
            reason_code: Some(CONTRACT_ABSENT),
            cause_code: None,
            effect_version: None,
            written: false,
            deduplicated: false,
            verified: false,
        };
        return Ok(Outcome::success(effect_receipt(
            request,
            &provider_id,
            &payload,
            &refused,
        )));
    }
    let factory = crate::provider::DefaultFactory::from_context(ctx);
    let config = crate::provider::ProviderConfig::from_binding(binding);
    let store = factory.embedded_store(&config);
    let seconds = crate::recall::timeout_seconds(binding);
    let timeout = Duration::from_secs_f64(if seconds.is_finite() {
        seconds.clamp(1.0, 120.0)
    } else {
        30.0
    });
    let key = EffectKey {
        reducer_identity: request.partition.reducer_identity(),
        profile_digest: request.profile.digest(),
    };
    let outcome = effects::write_rank_prior_effect(
        &store,
        &key,
        payload.as_bytes(),
        &io::utc_now_iso(),
        timeout,
    );
    let result = EffectResult {
        status: outcome.status,
        reason_code: outcome.reason_code,
        cause_code: outcome.cause_code,
        effect_version: outcome.effect_version,
        written: outcome.write_performed,
        deduplicated: outcome.deduplicated,
        verified: outcome.exact_readback_verified,
    };
    let notes = Notes {
        warnings: factory.store_trust_problem(&config).into_iter().collect(),
        ..Notes::default()
    };
    Ok(
        Outcome::success(effect_receipt(request, &provider_id, &payload, &result))
            .with_notes(notes),
    )
}

/// Runs `rank-prior`.
pub fn command(args: &RankPriorArgs, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_input_object(&ctx.env, &args.input, args.input_limit.max_input_bytes)?;
    let outcome = command_on(args, ctx, &input);
    io::leave_to_exit(input);
    outcome
}

fn command_on(args: &RankPriorArgs, ctx: &Context, input: &Value) -> Result<Outcome, Error> {
    let Some(location) = &args.ledger else {
        let request = parse_request(input, None)?;
        if args.execute {
            return execute(args, ctx, &request);
        }
        return rank_request(&request).map(Outcome::success);
    };
    if args.execute {
        return Err(field(
            "--execute stores the table of every subject of a projection: give the projection instead of --ledger",
        ));
    }
    let arg = crate::cli::LedgerLocationArg {
        ledger: Some(location.clone()).filter(|l| !l.is_empty()),
        runtime_root: None,
    };
    let mut opened = crate::commands::utility_ledger::open(&arg, ctx)?;
    let request = parse_request(input, Some(opened.backend.as_mut()))?;
    let notes = Notes {
        ledger: opened.notes.ledger.take(),
        ..Notes::default()
    };
    Ok(Outcome::success(rank_request(&request)?).with_notes(notes))
}

/// `rank-prior` without `--execute` on an already parsed input: pure.
pub fn rank_input(input: &Value) -> Result<Value, Error> {
    rank_request(&parse_request(input, None)?)
}

fn rank_request(request: &Request) -> Result<Value, Error> {
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
