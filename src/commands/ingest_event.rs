//! `ingest-event`: the flow of one feedback event into a guarded memory write (§9) and
//! its validation order (§9.2): the input form (full, or configured through
//! `--goal-id`/`--agent-id` and the experiment route), the adapter, then the pure steps of
//! [`crate::contract::ingest`] in a dry run, or with `--execute` the provider write and
//! its exact readback. Reads `--input` and the registry/config; an executed write first
//! clears staging directories that killed runs left under the runtime root.

use crate::cli::IngestEventArgs;
use crate::contract::experiment::{self, ISSUE_FIX_ADAPTER, SCOPED_FEEDBACK_ADAPTER};
use crate::contract::ingest::adapters::{self, Mode, Route};
use crate::contract::ingest::{CONFIGURED_FORM_FIELDS, FULL_FORM_FIELDS, core};
use crate::error::Error;
use crate::io;
use crate::provider::{ProviderConfig, ProviderFactory};
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::pystr;
use crate::wire::text::FieldError;

use super::{Context, Notes, Outcome, resolve};

/// Runs `ingest-event` on the context with its route applied. The outcome's notes say
/// where the provider keeps records and which registry routed the event, for the
/// `--detail` view.
pub fn run(args: &IngestEventArgs, ctx: &Context) -> Result<Outcome, Error> {
    let source = io::read_input_object(&ctx.env, &args.input, args.input_limit.max_input_bytes)?;
    command_on(source, args, ctx)
}

/// The command on an already parsed input (`args.input` is not read again). Without
/// `--goal-id`/`--agent-id` this is the pure dry run.
pub fn command_on(source: Value, args: &IngestEventArgs, ctx: &Context) -> Result<Outcome, Error> {
    let source = match source {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let goal_id = args.goal_id.as_deref().filter(|s| !s.is_empty());
    let agent_id = args.agent_id.as_deref().filter(|s| !s.is_empty());
    let configured = goal_id.is_some() || agent_id.is_some();
    let (goal_id, agent_id) = match (goal_id, agent_id) {
        (Some(g), Some(a)) => (Some(g), Some(a)),
        (None, None) => (None, None),
        _ => {
            return Err(
                FieldError::new("--goal-id and --agent-id must be supplied together").into(),
            );
        }
    };
    if args.execute && !configured {
        return Err(FieldError::new(
            "--execute requires an enabled experiment route via --goal-id and --agent-id",
        )
        .into());
    }
    let allowed = if configured {
        CONFIGURED_FORM_FIELDS
    } else {
        FULL_FORM_FIELDS
    };
    let unexpected: Vec<&str> = source.keys().filter(|k| !allowed.contains(k)).collect();
    if !unexpected.is_empty() {
        return Err(FieldError(format!(
            "ingest input contains unsupported fields: {}",
            crate::wire::keys::list(unexpected)
        ))
        .into());
    }
    let mut experiment_status: Option<Map> = None;
    let mut experiment_config = None;
    if let (Some(goal_id), Some(agent_id)) = (goal_id, agent_id) {
        let resolution = resolve::experiment(ctx, goal_id, agent_id)?;
        let Some(config) = resolution.config.clone() else {
            let status = resolution.status_name();
            let status = if status.is_empty() {
                "unavailable".to_owned()
            } else {
                status
            };
            return Err(FieldError(format!(
                "Reward Memory experiment is unavailable for this agent: {status}"
            ))
            .into());
        };
        experiment_status = Some(resolution.status);
        experiment_config = Some(config);
    }
    let event = match source.get("event") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => return Err(FieldError::new("event must be an object").into()),
    };
    let supplied_adapter = source.get("adapter").filter(|v| v.is_truthy());
    let route = match &experiment_config {
        Some(config) => {
            let surface_id = pystr(event.get("surface_id"));
            let adapter = supplied_adapter.map(|v| pystr(Some(v)));
            Some(experiment::surface_route(
                config,
                &surface_id,
                adapter.as_deref(),
            )?)
        }
        None => None,
    };
    let (adapter, corpus, standing_policy, binding) = match &route {
        Some(route) => (
            Value::from(&route.adapter),
            Value::Object(route.ingest.corpus.clone()),
            Value::Object(route.ingest.standing_policy.clone()),
            Value::Object(route.ingest.provider_binding.clone()),
        ),
        None => (
            supplied_adapter.cloned().unwrap_or(Value::Null),
            source.get("corpus").cloned().unwrap_or(Value::Null),
            source
                .get("standing_policy")
                .cloned()
                .unwrap_or(Value::Null),
            source
                .get("provider_binding")
                .cloned()
                .unwrap_or(Value::Null),
        ),
    };
    for (key, value) in [
        ("corpus", &corpus),
        ("standing_policy", &standing_policy),
        ("provider_binding", &binding),
    ] {
        if value.as_object().is_none() {
            return Err(FieldError(format!("{key} must be an object")).into());
        }
    }
    let binding = binding.as_object().cloned().unwrap_or_default();
    let observed_at = pystr(source.get("observed_at"));
    let route_inputs = Route {
        corpus: &corpus,
        standing_policy: &standing_policy,
        provider_binding: &binding,
        observed_at: &observed_at,
    };
    let factory = resolve::provider_factory(ctx);
    let config = ProviderConfig::from_binding(&binding);
    let notes = Notes {
        registry: configured.then(|| resolve::registry_path(ctx)),
        store: factory.store_location(&config),
        // Only an executed ingest opens the store (the write and its readback).
        warnings: if args.execute {
            factory.store_trust_problem(&config).into_iter().collect()
        } else {
            Vec::new()
        },
        ..Notes::default()
    };
    let run_write = |prepared: &core::Prepared| -> Result<Map, Error> {
        io::clear_stale_staging(&crate::provider::staging_root(&factory.runtime_root));
        let built = factory.build(&ProviderConfig::from_binding(&prepared.binding));
        let provider = built.as_ref().map(|p| p.as_ref()).map_err(Clone::clone);
        Ok(core::execute(prepared, provider)?)
    };
    let mode = if args.execute {
        Mode::Execute(&run_write)
    } else {
        Mode::DryRun
    };
    let mut packet = match pystr(Some(&adapter)).as_str() {
        ISSUE_FIX_ADAPTER => adapters::ingest_issue_fix_event(&event, &route_inputs, &mode)?,
        SCOPED_FEEDBACK_ADAPTER => {
            adapters::ingest_scoped_feedback_event(&event, &route_inputs, &mode)?
        }
        _ => {
            return Err(FieldError::new(
                "adapter is unsupported; semantic routing is intentionally not inferred",
            )
            .into());
        }
    };
    if let Some(status) = experiment_status {
        packet.insert("experiment", status);
    }
    Ok(Outcome::success(Value::Object(packet)).with_notes(notes))
}
