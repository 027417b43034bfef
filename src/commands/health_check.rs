//! `health-check`: classifies one built-in fixture case's retrieval health
//! ([`crate::contract::health`]), or, with `--goal-id`/`--agent-id`, the health of the
//! goal's configured corpus probed in the real store.
//!
//! The live probe is the shell's: it resolves the goal's experiment route, reads the
//! embedded store's inventory of the corpus scope ([`embedded::lifecycle::inventory`]),
//! runs one recall whose query is the newest active record's own summary (never printed),
//! checks that the record came back with the same bytes, and looks for an `apply` receipt
//! of that corpus naming one of its active records. Each of the five pipeline states
//! (`corpus_present`, `index_present`, `retrieval_query_succeeded`,
//! `result_readback_verified`, `memory_applied_with_receipt`) is measured on its own and
//! the same classification as the fixtures turns them into the packet.

use std::time::Duration;

use crate::cli::HealthCheckArgs;
use crate::contract::experiment;
use crate::contract::health::{self, HealthCase};
use crate::error::Error;
use crate::io;
use crate::obj;
use crate::provider::embedded;
use crate::provider::{ContextProvider, ProviderConfig};
use crate::recall::command::configured_request;
use crate::recall::{ProviderSource, execute_recall, normalize_binding, timeout_seconds};
use crate::runtime::receipts;
use crate::wire::digest::{content_digest, short16};
use crate::wire::json::{Map, Value};
use crate::wire::text::FieldError;

use super::context::{Context, Outcome};
use super::resolve;

/// What `health-check` classifies.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthCheckRequest {
    /// The fixture case.
    pub case: HealthCase,
    /// Probe the goal's configured corpus instead (with `agent_id`).
    #[serde(default)]
    pub goal_id: Option<String>,
    /// The allowlisted agent id of that goal.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The surface to probe (needed when the config declares several).
    #[serde(default)]
    pub surface_id: Option<String>,
}

impl From<&HealthCheckArgs> for HealthCheckRequest {
    fn from(args: &HealthCheckArgs) -> HealthCheckRequest {
        HealthCheckRequest {
            case: args.case,
            goal_id: args.goal_id.clone(),
            agent_id: args.agent_id.clone(),
            surface_id: args.surface_id.clone(),
        }
    }
}

/// Runs `health-check`: the health packet, exit 0.
pub fn run(request: &HealthCheckRequest, ctx: &Context) -> Result<Outcome, Error> {
    if let (Some(goal), Some(agent)) = (request.goal_id.as_deref(), request.agent_id.as_deref()) {
        return live(goal, agent, request.surface_id.as_deref(), ctx);
    }
    let packet = health::fixture_packet(request.case)?;
    Ok(Outcome::success(Value::Object(packet)))
}

fn field_error(message: impl Into<String>) -> Error {
    Error::Field(FieldError::new(message))
}

/// The five pipeline states and what they rest on, measured in the store.
#[derive(Debug, Default)]
struct Probe {
    provider_available: bool,
    corpus_present: bool,
    record_count: usize,
    index_present: bool,
    retrieval_query_succeeded: bool,
    result_readback_verified: bool,
    memory_applied_with_receipt: bool,
}

fn live(goal: &str, agent: &str, surface: Option<&str>, ctx: &Context) -> Result<Outcome, Error> {
    let resolution = resolve::experiment(ctx, goal, agent)?;
    let Some(config) = resolution.config else {
        return Err(field_error(format!(
            "Reward Memory experiment is unavailable for this agent: {}",
            resolution.status_name()
        )));
    };
    let surface_id = match (surface, config.surfaces.as_slice()) {
        (Some(s), _) => s.to_owned(),
        (None, [only]) => only.surface_id.clone(),
        (None, _) => {
            return Err(field_error(
                "--surface-id is required: the experiment config declares several surfaces",
            ));
        }
    };
    let route = experiment::surface_route(&config, &surface_id, None)?;
    let entry = &route.ingest;
    let binding = normalize_binding(&entry.provider_binding, &entry.corpus)?;
    let text = |key: &str| {
        binding
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let observed_at = io::utc_now_iso();
    let mut probe = Probe::default();
    if text("provider_id") == embedded::PROVIDER_ID {
        let store = resolve::provider_factory(ctx)
            .embedded_store(&ProviderConfig::from_binding(&entry.provider_binding));
        let timeout = Duration::from_secs_f64(timeout_seconds(&binding).clamp(1.0, 120.0));
        let inventory = embedded::lifecycle::inventory(
            &store,
            &text("namespace"),
            &text("scope_ref"),
            &observed_at,
            timeout,
        );
        match inventory {
            Err(_) => {}
            Ok(None) => probe.provider_available = true,
            Ok(Some(inventory)) => {
                probe.provider_available = true;
                probe.corpus_present = inventory.records > 0;
                probe.record_count = inventory.active.len();
                if let Some((probe_ref, bytes)) = inventory.active.last() {
                    let content = String::from_utf8_lossy(bytes).into_owned();
                    let query = crate::wire::json::parse(&content)
                        .ok()
                        .and_then(|e| {
                            e.get("content_summary")
                                .and_then(Value::as_str)
                                .map(str::to_owned)
                        })
                        .unwrap_or_default();
                    let queries = [Value::Object(obj! {
                        "query" => query,
                        "query_summary" => "Live health probe of the configured corpus.",
                    })];
                    let packet = configured_request(
                        entry,
                        &route.surface_id,
                        &route.recall_profile.mode,
                        &queries,
                        route.recall_profile.limit,
                        &observed_at,
                    )?;
                    let session = execute_recall(
                        &packet,
                        &entry.provider_binding,
                        ProviderSource::Injected(&store as &dyn ContextProvider),
                    )?;
                    let status = session.packet.get("status").and_then(Value::as_str);
                    probe.index_present = matches!(status, Some("completed" | "empty"));
                    probe.retrieval_query_succeeded = status == Some("completed");
                    probe.result_readback_verified = session.items.iter().any(|item| {
                        item.memory_ref == *probe_ref
                            && item.content_digest == content_digest(&content)
                    });
                }
                if probe.result_readback_verified {
                    let digests: Vec<String> =
                        inventory.active.iter().map(|(r, _)| short16(r)).collect();
                    probe.memory_applied_with_receipt = applied_receipt(
                        &resolve::runtime_root(ctx),
                        entry.corpus.get("corpus_id"),
                        &digests,
                    );
                }
            }
        }
    }
    let observation = observation(&entry.corpus, &route.surface_id, &probe);
    let packet = health::health_packet(&Value::Object(entry.corpus.clone()), &observation)?;
    Ok(Outcome::success(Value::Object(packet)))
}

/// True when a stored `apply` receipt of `corpus_id` names one of `digests`.
fn applied_receipt(root: &std::path::Path, corpus_id: Option<&Value>, digests: &[String]) -> bool {
    let Ok(entries) = std::fs::read_dir(receipts::receipt_dir(root)) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".json") else {
            return false;
        };
        let Ok(receipt) = receipts::load_receipt(root, id) else {
            return false;
        };
        let receipt = receipt.get("receipt").cloned().unwrap_or(receipt);
        receipt.get("corpus_id") == corpus_id
            && receipt
                .get("memory_ref_digests")
                .and_then(Value::as_array)
                .is_some_and(|d| {
                    d.iter()
                        .any(|v| v.as_str().is_some_and(|s| digests.iter().any(|x| x == s)))
                })
    })
}

/// The observation the classification reads, from the probe.
fn observation(corpus: &Map, surface_id: &str, probe: &Probe) -> Map {
    obj! {
        "requested_project_ref" => corpus.at(&["scope", "project_ref"]).cloned().unwrap_or_default(),
        "requested_surface" => surface_id,
        "current_source_revision" => corpus.at(&["freshness", "source_revision"]).cloned().unwrap_or(Value::Null),
        "provider_available" => probe.provider_available,
        "corpus_present" => probe.corpus_present,
        "record_count" => if probe.corpus_present { probe.record_count } else { 0 },
        "index_present" => probe.index_present,
        "retrieval_query_succeeded" => probe.retrieval_query_succeeded,
        "result_readback_verified" => probe.result_readback_verified,
        "memory_applied_with_receipt" => probe.memory_applied_with_receipt,
        "freshness_window_satisfied" => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        let Command::HealthCheck(args) =
            parse_command(&["health-check", "--case", "wrong-surface"])
        else {
            panic!("health-check");
        };
        let json: HealthCheckRequest =
            serde_json::from_str(r#"{"case": "wrong-surface"}"#).expect("request");
        assert_eq!(HealthCheckRequest::from(&args), json);
        assert_eq!(json.case, HealthCase::WrongSurface);
        assert!(
            serde_json::from_str::<HealthCheckRequest>(r#"{"case": "wrong_surface"}"#).is_err()
        );
        assert!(
            serde_json::from_str::<HealthCheckRequest>(r#"{"case": "stale", "x": 1}"#).is_err()
        );
    }
}
