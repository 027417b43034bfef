//! `ingest-event`: the shell around the pure flow of [`crate::contract::ingest`] (§9.2):
//! reads `--input`, resolves the experiment route of the configured form
//! (`--goal-id`/`--agent-id`) through the registry, and for `--execute` builds the
//! provider of the route's binding and clears the staging directories that killed runs
//! left under the runtime root before the write.

pub mod bulk;

use crate::cli::IngestEventArgs;
use crate::contract::ingest::adapters::Mode;
use crate::contract::ingest::core::{self, Prepared};
use crate::contract::ingest::{self, Form, IngestError};
use crate::error::Error;
use crate::io;
use crate::provider::{ProviderConfig, ProviderFactory};
use crate::wire::json::{Map, Value};

use super::context::{Context, Outcome};
use super::resolve;
use super::resolve::InputFile;
use crate::output::notes::Notes;

/// One feedback event to ingest: the input file, and for the configured form the goal
/// and agent whose experiment route to use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IngestEventRequest {
    /// The full public fixture or the compact event (JSON).
    pub input: InputFile,
    /// Goal id of the configured experiment route.
    #[serde(default)]
    pub goal_id: Option<String>,
    /// Allowlisted agent id of that route.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Write to the route's provider and read it back (configured form only).
    #[serde(default)]
    pub execute: bool,
}

impl From<&IngestEventArgs> for IngestEventRequest {
    fn from(args: &IngestEventArgs) -> IngestEventRequest {
        IngestEventRequest {
            input: InputFile {
                path: args.input.clone(),
                max_bytes: args.input_limit.max_input_bytes,
            },
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            execute: args.execute,
        }
    }
}

/// Runs `ingest-event` on the context with its route applied. The outcome's notes say
/// where the provider keeps records and which registry routed the event, for the
/// `--detail` view.
pub fn run(request: &IngestEventRequest, ctx: &Context) -> Result<Outcome, Error> {
    let source = match request.input.read_object(ctx)? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let form = ingest::form(
        &source,
        request.goal_id.as_deref(),
        request.agent_id.as_deref(),
        request.execute,
    )?;
    let resolution = match form {
        Form::Configured { goal_id, agent_id } => {
            let resolution = resolve::experiment(ctx, goal_id, agent_id)?;
            // The refusal keeps the reference's text; stderr names the file and the field.
            if let Some(problem) = &resolution.problem {
                io::write_stderr_line(&format!("reward-memory: warning: {problem}"));
            }
            Some(resolution)
        }
        Form::Full => None,
    };
    let plan = ingest::plan(&source, resolution)?;
    let factory = resolve::provider_factory(ctx);
    let config = ProviderConfig::from_binding(&plan.provider_binding);
    let notes = Notes {
        registry: (form != Form::Full).then(|| resolve::registry_path(ctx)),
        store: factory.store_location(&config),
        // Only an executed ingest opens the store (the write and its readback).
        warnings: if request.execute {
            factory.store_trust_problem(&config).into_iter().collect()
        } else {
            Vec::new()
        },
        ..Notes::default()
    };
    let run_write = |prepared: &Prepared| -> Result<Map, IngestError> {
        io::clear_stale_staging(&crate::provider::staging_root(&factory.runtime_root));
        let built = factory.build(&ProviderConfig::from_binding(&prepared.binding));
        let provider = built.as_ref().map(|p| p.as_ref()).map_err(Clone::clone);
        Ok(core::execute(prepared, provider)?)
    };
    let mode = if request.execute {
        Mode::Execute(&run_write)
    } else {
        Mode::DryRun
    };
    let packet = ingest::ingest(&plan, &mode)?;
    Ok(Outcome::success(Value::Object(packet)).with_notes(notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    fn from_argv(extra: &[&str]) -> IngestEventRequest {
        let argv: Vec<&str> = ["ingest-event"].iter().chain(extra).copied().collect();
        let Command::IngestEvent(args) = parse_command(&argv) else {
            panic!("ingest-event");
        };
        IngestEventRequest::from(&args)
    }

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let json: IngestEventRequest =
            serde_json::from_str(r#"{"input": {"path": "event.json"}}"#).expect("request");
        assert_eq!(from_argv(&["--input", "event.json"]), json);
        let json: IngestEventRequest = serde_json::from_str(
            r#"{"input": {"path": "-", "max_bytes": 10}, "goal_id": "g", "agent_id": "a",
                "execute": true}"#,
        )
        .expect("request");
        let argv = [
            "--input",
            "-",
            "--max-input-bytes",
            "10",
            "--goal-id",
            "g",
            "--agent-id",
            "a",
            "--execute",
        ];
        assert_eq!(from_argv(&argv), json);
    }
}
