//! `rank-prior`: reads the request ([`crate::ranking::prior::request`]) and prints the
//! bounded rank prior's ranking; with `--ledger` the utility comes from the utility
//! ledger, which this handler opens; with `--execute` it resolves the corpus's provider
//! through the experiment route and writes the partition's modifier table as a provider
//! effect ([`crate::provider::embedded::effects`]), or refuses it on a provider without a
//! rank-prior contract.

use std::time::Duration;

use crate::cli::RankPriorArgs;
use crate::error::Error;
use crate::io;
use crate::provider::embedded;
use crate::provider::embedded::effects::{self, EffectKey};
use crate::ranking::prior::request::{
    CONTRACT_ABSENT, EffectResult, Request, effect_payload, effect_receipt, field, parse_request,
    rank_request,
};
use crate::wire::json::Value;

use super::{Context, Notes, Outcome, resolve};

fn execute(args: &RankPriorArgs, ctx: &Context, request: &Request) -> Result<Outcome, Error> {
    let (Some(goal), Some(agent)) = (args.goal_id.as_deref(), args.agent_id.as_deref()) else {
        return Err(field("--execute needs --goal-id and --agent-id"));
    };
    let resolution = resolve::experiment(ctx, goal, agent)?;
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

/// Runs `rank-prior` on the context with its route applied.
pub fn run(args: &RankPriorArgs, ctx: &Context) -> Result<Outcome, Error> {
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
    let mut opened = super::resolve::open_ledger(arg.ledger.as_deref(), ctx)?;
    let request = parse_request(input, Some(opened.backend.as_mut()))?;
    let notes = Notes {
        ledger: opened.notes.ledger.take(),
        ..Notes::default()
    };
    Ok(Outcome::success(rank_request(&request)?).with_notes(notes))
}
