//! `rank-prior`: reads the request ([`crate::ranking::prior::request`]) and prints the
//! bounded rank prior's ranking; with `--ledger` the utility comes from the utility
//! ledger, which this handler opens and reads for the request's candidates; with
//! `--execute` it resolves the corpus's provider through the experiment route and writes
//! the partition's modifier table as a provider effect
//! ([`crate::provider::embedded::effects`]), or refuses it on a provider without a
//! rank-prior contract.
//!
//! The handler takes a plain [`RankPriorRequest`] (built from the clap arguments, or by
//! another front end); the request file is read, and the ledger opened, before the
//! request is parsed.

use std::time::Duration;

use crate::cli::RankPriorArgs;
use crate::error::Error;
use crate::io;
use crate::ledger::view as ledger_view;
use crate::provider::embedded;
use crate::provider::embedded::effects::{self, EffectKey};
use crate::ranking::prior::request::{
    CONTRACT_ABSENT, EffectResult, RankPriorInput, Request, UtilitySource, effect_payload,
    effect_receipt, rank_request, request_error,
};
use crate::wire::json::Value;

use super::context::{Context, Outcome};
use super::resolve;
use crate::output::notes::Notes;

/// What `rank-prior` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
pub struct RankPriorRequest {
    /// The request JSON file; `-` reads standard input.
    pub input: String,
    /// Write the modifier table as a provider effect (needs `goal_id` and `agent_id`).
    #[serde(default)]
    pub execute: bool,
    /// Goal id of the experiment route that names the corpus's provider (`execute`).
    pub goal_id: Option<String>,
    /// Allowlisted agent id of that goal (`execute`).
    pub agent_id: Option<String>,
    /// Read the utility from the utility ledger at this location (empty: the default
    /// location) instead of the request's projection.
    pub ledger: Option<String>,
    /// Largest JSON input accepted, in bytes.
    pub max_input_bytes: u64,
}

impl From<&RankPriorArgs> for RankPriorRequest {
    fn from(args: &RankPriorArgs) -> RankPriorRequest {
        RankPriorRequest {
            input: args.input.clone(),
            execute: args.execute,
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            ledger: args.ledger.clone(),
            max_input_bytes: args.input_limit.max_input_bytes,
        }
    }
}

fn execute(request: &RankPriorRequest, ctx: &Context, parsed: &Request) -> Result<Outcome, Error> {
    let (Some(goal), Some(agent)) = (request.goal_id.as_deref(), request.agent_id.as_deref())
    else {
        return Err(request_error("--execute needs --goal-id and --agent-id").into());
    };
    let resolution = resolve::experiment(ctx, goal, agent)?;
    let Some(config) = resolution.config else {
        return Err(request_error(
            "Reward Memory experiment is unavailable for this agent: the effect needs an enabled route",
        )
        .into());
    };
    let corpus_id = &parsed.partition.scope.corpus_id;
    let entry = config.corpus(corpus_id).ok_or_else(|| {
        request_error("partition scope corpus_id is not a corpus of this experiment")
    })?;
    let binding = &entry.provider_binding;
    let provider_id = binding
        .get("provider_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let payload = effect_payload(parsed);
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
            parsed,
            &provider_id,
            &payload,
            &refused,
        )));
    }
    let factory = resolve::provider_factory(ctx);
    let config = crate::provider::ProviderConfig::from_binding(binding);
    let store = factory.embedded_store(&config);
    let seconds = crate::recall::timeout_seconds(binding);
    let timeout = Duration::from_secs_f64(if seconds.is_finite() {
        seconds.clamp(1.0, 120.0)
    } else {
        30.0
    });
    let key = EffectKey {
        reducer_identity: parsed.partition.reducer_identity(),
        profile_digest: parsed.profile.digest(),
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
    Ok(Outcome::success(effect_receipt(parsed, &provider_id, &payload, &result)).with_notes(notes))
}

/// Runs `rank-prior` on the context with its route applied.
pub fn run(request: &RankPriorRequest, ctx: &Context) -> Result<Outcome, Error> {
    let input = io::read_input_object(&ctx.env, &request.input, request.max_input_bytes)?;
    let outcome = command_on(request, ctx, &input);
    io::leave_to_exit(input);
    outcome
}

fn command_on(request: &RankPriorRequest, ctx: &Context, input: &Value) -> Result<Outcome, Error> {
    let Some(location) = &request.ledger else {
        let parsed =
            RankPriorInput::from_value(input, UtilitySource::Projection)?.into_request(None)?;
        if request.execute {
            return execute(request, ctx, &parsed);
        }
        return Ok(rank_request(&parsed).map(Outcome::success)?);
    };
    if request.execute {
        return Err(request_error(
            "--execute stores the table of every subject of a projection: give the projection instead of --ledger",
        )
        .into());
    }
    let explicit = Some(location.as_str()).filter(|l| !l.is_empty());
    let mut opened = super::resolve::open_ledger(explicit, ctx)?;
    let parsed = RankPriorInput::from_value(input, UtilitySource::Ledger)?;
    let view = ledger_view::utility_view(
        opened.backend.as_mut(),
        &parsed.partition,
        &parsed.digests(),
        parsed.profile.require_attested_tiers,
    )?;
    let parsed = parsed.into_request(Some(view))?;
    let notes = Notes {
        ledger: opened.notes.ledger.take(),
        ..Notes::default()
    };
    Ok(Outcome::success(rank_request(&parsed)?).with_notes(notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another front end (the MCP server, `commands/mcp.rs`) sends the request as JSON.
    #[test]
    fn a_request_reads_from_json_with_its_defaults() {
        let request: RankPriorRequest =
            serde_json::from_str(r#"{"input": "request.json", "max_input_bytes": 1024}"#)
                .expect("request");
        assert_eq!(
            request,
            RankPriorRequest {
                input: "request.json".into(),
                execute: false,
                goal_id: None,
                agent_id: None,
                ledger: None,
                max_input_bytes: 1024,
            }
        );
    }
}
