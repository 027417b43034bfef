//! `experiment-status`: the default-off, agent-scoped Reward Memory experiment of a goal.
//!
//! Owns registered-agent id normalization (§8.2), the goal policy (§8.3), the
//! resolution of a goal and agent through the registry (§8.1) and the
//! `reward_memory_experiment_status_v1` packet (§8.4); the config file and its surface
//! routes (§8.5) are [`config`]'s. Pure: the shell finds the registry file (§1.5), reads
//! and parses it, and hands in the reader of the config file ([`resolve`]). This command
//! never contacts a provider.

pub mod config;
pub mod starter;

use std::path::{Path, PathBuf};

use crate::obj;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::{self, pystr, pystr_strip};
use crate::wire::text::{FieldError, FieldResult};

pub use config::{
    Automation, CONFIG_SCHEMA_VERSION, CorpusEntry, ExperimentConfig, ISSUE_FIX_ADAPTER,
    RecallProfile, SCOPED_FEEDBACK_ADAPTER, SurfaceConfig, SurfaceRoute, config_from_document,
    normalize_config, surface_route,
};

/// Why the experiment of a goal and agent could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// The registry file could not be read (the reference crashes here; we report it).
    #[error("cannot read registry JSON: {0}")]
    RegistryUnreadable(String),
    /// The registry is not JSON, or its root is not an object.
    #[error("{0}")]
    RegistryInvalid(String),
    /// The agent, the goal, its policy or a surface route is invalid; the message is the
    /// reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
}

// ---------------------------------------------------------------------------------------
// Agents and goal policy (§8.2, §8.3)
// ---------------------------------------------------------------------------------------

/// Normalizes one agent id: whitespace collapsed, lower-cased, spaces to `-`; `None`
/// unless the result matches AGENT_ID.
pub fn normalize_agent_id(value: Option<&Value>) -> Option<String> {
    let collapsed = pyfmt::collapse_ws(&pystr(value));
    let candidate = collapsed.to_lowercase().replace(' ', "-");
    (!candidate.is_empty() && crate::wire::text::is_agent_id(&candidate)).then_some(candidate)
}

fn push_unique(out: &mut Vec<String>, agent: Option<String>) {
    if let Some(agent) = agent
        && !out.contains(&agent)
    {
        out.push(agent);
    }
}

/// Normalizes `coordination.registered_agents`: null → none, a scalar is wrapped, an
/// object item contributes its first truthy `id`/`agent_id`/`name`.
pub fn normalize_registered_agents(value: Option<&Value>) -> Vec<String> {
    let items: Vec<&Value> = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(other) => vec![other],
    };
    let mut agents = Vec::new();
    for item in items {
        let value = match item {
            Value::Object(map) => ["id", "agent_id"]
                .iter()
                .filter_map(|k| map.get(k))
                .find(|v| v.is_truthy())
                .or_else(|| map.get("name")),
            other => Some(other),
        };
        push_unique(&mut agents, normalize_agent_id(value));
    }
    agents
}

/// The goal's `control_plane.reward_memory` policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalPolicy {
    pub enabled: bool,
    pub experimental: bool,
    pub config_path: String,
    pub enabled_agents: Vec<String>,
}

/// Reads the goal policy. `enabled_agents` must be a list (or falsy): a string, an object,
/// a number or `true` is a request error, where the reference splits a string into
/// characters, iterates an object's keys and crashes on a number.
pub fn goal_policy(goal: &Map) -> FieldResult<GoalPolicy> {
    let empty = Map::new();
    let control_plane = goal.get("control_plane").and_then(Value::as_object);
    let raw = control_plane
        .and_then(|cp| cp.get("reward_memory"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let items: Vec<Value> = match raw.get("enabled_agents") {
        None => Vec::new(),
        Some(v) if !v.is_truthy() => Vec::new(),
        Some(Value::Array(items)) => items.to_vec(),
        // The reference iterates a string by characters ("pilot" → p, i, l, o, t) and an
        // object by keys; both are refused here rather than silently widened.
        Some(_) => {
            return Err(FieldError::new(
                "control_plane.reward_memory.enabled_agents must be a list",
            ));
        }
    };
    let mut enabled_agents = Vec::new();
    for item in &items {
        push_unique(&mut enabled_agents, normalize_agent_id(Some(item)));
    }
    let experimental = raw.get("experimental") == Some(&Value::Bool(true));
    Ok(GoalPolicy {
        enabled: raw.get("enabled") == Some(&Value::Bool(true)) && experimental,
        experimental,
        config_path: pystr_strip(raw.get("config_path")),
        enabled_agents,
    })
}

// ---------------------------------------------------------------------------------------
// Status packet (§8.1, §8.4)
// ---------------------------------------------------------------------------------------

/// Finds the goal and checks the agent (§8.1 steps 1, 3, 4). Returns the goal object and
/// the normalized agent id.
pub fn find_goal<'a>(
    registry: &'a Map,
    goal_id: &str,
    agent_id: &str,
) -> FieldResult<(&'a Map, String)> {
    let agent = normalize_agent_id(Some(&Value::from(agent_id)))
        .ok_or_else(|| FieldError::new("agent_id must be a public-safe registered agent id"))?;
    let goals: &[Value] = registry
        .get("goals")
        .and_then(Value::as_array)
        .unwrap_or(&[]);
    let goal = goals
        .iter()
        .filter_map(Value::as_object)
        .find(|g| goal_id_of(g.get("id")).as_deref() == Some(goal_id))
        .ok_or_else(|| FieldError(format!("goal_id not found in registry: {goal_id}")))?;
    let registered = normalize_registered_agents(
        goal.get("coordination")
            .and_then(Value::as_object)
            .and_then(|c| c.get("registered_agents")),
    );
    if !registered.contains(&agent) {
        return Err(FieldError(format!(
            "agent_id is not registered for goal {goal_id}"
        )));
    }
    Ok((goal, agent))
}

/// The id a goal can be selected by: a string, or an integer in decimal. The reference
/// uses `str(goal.get("id"))`, so a goal without an id matched `--goal-id None` and a
/// boolean id matched `True`; such goals are never selected here.
fn goal_id_of(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::Str(s)) => Some(s.to_string()),
        Some(Value::Int(i)) => Some(i.to_string()),
        Some(Value::BigInt(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// The status packet and, when available, the normalized config.
pub struct Resolution {
    pub status: Map,
    pub config: Option<ExperimentConfig>,
    /// Why the status is `config_invalid`: the config file and what is wrong in it (the
    /// packet keeps the reference's bare status; the shell says this on stderr).
    pub problem: Option<String>,
}

impl Resolution {
    /// The `status` value of the packet.
    pub fn status_name(&self) -> String {
        pystr(self.status.get("status"))
    }
}

/// Builds the status packet for an already found goal. `read_config` reads and parses
/// the config file at a resolved path (the only I/O, injected; the reason when it cannot
/// be read or is not JSON).
pub fn resolve_for_goal(
    registry: &Map,
    goal: &Map,
    goal_id: &str,
    agent: &str,
    config_location: impl Fn(&str) -> PathBuf,
    read_config: impl Fn(&Path) -> Result<Value, String>,
) -> Result<Resolution, ExperimentError> {
    let policy = goal_policy(goal)?;
    let registry_role = pyfmt::py_strip(&{
        let role = registry.get("registry_role");
        if role.is_some_and(Value::is_truthy) {
            pystr(role)
        } else {
            "project-local".to_owned()
        }
    })
    .to_owned();
    let route = obj! {
        "schema_version" => "reward_memory_config_runtime_route_v0",
        "registry_source" => "invoked_registry",
        "registry_role" => registry_role.as_str(),
        "runtime_scope" => if registry_role == "global-local" { "shared_runtime" } else { "project_runtime" },
        "goal_source" => "registry.goals",
        "config_source" => "goal_repo_relative_config_pointer",
        "readback_status" => "not_attempted",
        "exact_readback_verified" => false,
    };
    let configured = policy.enabled_agents.iter().any(|a| a == agent);
    let base = obj! {
        "ok" => true,
        "schema_version" => "reward_memory_experiment_status_v1",
        "goal_id" => goal_id,
        "agent_id" => agent,
        "experimental" => policy.experimental,
        "enabled" => policy.enabled,
        "configured_for_agent" => configured,
        "config_pointer_registered" => !policy.config_path.is_empty(),
        "automatic_ingest" => false,
        "automatic_recall" => false,
        "fail_open" => true,
        "config_runtime_route" => route.clone(),
        "external_writes_performed" => false,
    };
    let unavailable = |status: &str| Resolution {
        status: base
            .clone()
            .merged(&obj! {"status" => status, "available" => false}),
        config: None,
        problem: None,
    };
    if !policy.enabled {
        return Ok(unavailable("disabled"));
    }
    if !configured {
        return Ok(unavailable("agent_not_enabled"));
    }
    if policy.config_path.is_empty() {
        return Ok(unavailable("config_missing"));
    }
    let path = config_location(&policy.config_path);
    let config = read_config(&path)
        .map_err(FieldError::new)
        .and_then(|document| config_from_document(&document));
    let config = match config {
        Ok(config) => config,
        Err(err) => {
            return Ok(Resolution {
                problem: Some(format!(
                    "the experiment config {} is not valid: {err}",
                    path.display()
                )),
                status: base.merged(&obj! {
                    "status" => "config_invalid",
                    "available" => false,
                    "reason_code" => "config_unavailable_or_invalid",
                    "config_runtime_route" => route.merged(&obj! {"readback_status" => "rejected"}),
                }),
                config: None,
            });
        }
    };
    let mut corpus_ids: Vec<&str> = config.corpora.iter().map(|(id, _)| id.as_str()).collect();
    corpus_ids.sort_unstable();
    let mut surfaces: Vec<&SurfaceConfig> = config.surfaces.iter().collect();
    surfaces.sort_by(|a, b| a.surface_id.cmp(&b.surface_id));
    let surface_ids: Vec<&str> = surfaces.iter().map(|s| s.surface_id.as_str()).collect();
    let profiles: Vec<Value> = surfaces
        .iter()
        .map(|s| {
            Value::Object(obj! {
                "surface_id" => s.surface_id.as_str(),
                "adapter" => s.adapter.as_str(),
                "corpus_count" => s.corpus_ids.len(),
                "recall_profile_id" => s.recall_profile.profile_id.as_str(),
            })
        })
        .collect();
    let mut status = base.merged(&obj! {
        "status" => "available",
        "available" => true,
        "config_schema_version" => CONFIG_SCHEMA_VERSION,
        "provider_id" => config.project_provider_binding.get("provider_id").cloned().unwrap_or_default(),
        "corpus_count" => config.corpora.len(),
        "corpus_ids" => crate::wire::json::str_list(&corpus_ids),
        "surface_ids" => crate::wire::json::str_list(&surface_ids),
        "surface_profiles" => Value::Array(profiles.into()),
        "automatic_ingest" => config.automation.automatic_ingest,
        "automatic_recall" => config.automation.automatic_recall,
        "fail_open" => config.automation.fail_open,
        "config_runtime_route" => route.merged(&obj! {
            "readback_status" => "verified",
            "exact_readback_verified" => true,
        }),
        "raw_content_captured" => false,
    });
    if let [only] = config.surfaces.as_slice() {
        let route = surface_route(&config, &only.surface_id, None)?;
        status.insert("adapter", route.adapter.as_str());
        status.insert("corpus_id", pystr(route.ingest.corpus.get("corpus_id")));
    }
    Ok(Resolution {
        status,
        config: Some(config),
        problem: None,
    })
}

/// Checks the agent id of a request; the shell does this before it reads the registry.
pub fn check_agent_id(agent_id: &str) -> FieldResult<()> {
    normalize_agent_id(Some(&Value::from(agent_id)))
        .map(|_| ())
        .ok_or_else(|| FieldError::new("agent_id must be a public-safe registered agent id"))
}

/// Resolves the experiment of `goal_id`/`agent_id` (§8.1) from the parsed registry
/// file. `repo_dir` turns a goal's `repo` into its directory (`~` expanded, a relative or
/// missing repo against the working directory); `read_config` reads and parses the
/// config file at a resolved path (the only I/O, injected).
pub fn resolve(
    registry: &Value,
    goal_id: &str,
    agent_id: &str,
    repo_dir: impl Fn(&str) -> PathBuf,
    read_config: impl Fn(&Path) -> Result<Value, String>,
) -> Result<Resolution, ExperimentError> {
    let registry = registry.as_object().ok_or_else(|| {
        ExperimentError::RegistryInvalid("JSON root must be an object".to_owned())
    })?;
    let (goal, agent) = find_goal(registry, goal_id, agent_id)?;
    let project = repo_dir(&pystr(goal.get("repo")));
    resolve_for_goal(
        registry,
        goal,
        goal_id,
        &agent,
        |config_path| project.join(config_path),
        read_config,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    #[test]
    fn agent_ids_are_collapsed_and_lowered() {
        assert_eq!(
            normalize_agent_id(Some(&s(" PILOT "))).as_deref(),
            Some("pilot")
        );
        assert_eq!(
            normalize_agent_id(Some(&s("Pilot  Agent"))).as_deref(),
            Some("pilot-agent")
        );
        assert_eq!(normalize_agent_id(Some(&s("9lives"))), None);
        assert_eq!(normalize_agent_id(None), None);
    }

    #[test]
    fn registered_agents_wrap_scalars_and_read_object_ids() {
        let v =
            crate::wire::json::parse(r#"[{"agent_id": "Meta"}, "pilot", "pilot", {"name": ""}]"#)
                .expect("valid");
        assert_eq!(normalize_registered_agents(Some(&v)), vec!["meta", "pilot"]);
        assert_eq!(normalize_registered_agents(Some(&s("solo"))), vec!["solo"]);
        assert!(normalize_registered_agents(Some(&Value::Null)).is_empty());
    }

    #[test]
    fn a_goal_without_a_string_id_is_never_selected() {
        let registry = crate::wire::json::parse(
            r#"{"goals": [{"coordination": {"registered_agents": ["pilot"]}}, {"id": true, "coordination": {"registered_agents": ["pilot"]}}]}"#,
        )
        .expect("valid");
        let registry = registry.as_object().expect("object");
        for goal_id in ["None", "True"] {
            let err = find_goal(registry, goal_id, "pilot").expect_err("not selected");
            assert_eq!(err.0, format!("goal_id not found in registry: {goal_id}"));
        }
    }

    #[test]
    fn enabled_agents_string_or_object_is_a_request_error_not_split() {
        for agents in [r#""pilot""#, r#"{"pilot": true}"#] {
            let goal = crate::wire::json::parse(&format!(
                r#"{{"control_plane": {{"reward_memory": {{"enabled": true, "experimental": true, "enabled_agents": {agents}}}}}}}"#
            ))
            .expect("valid");
            let err = goal_policy(goal.as_object().expect("object")).expect_err("refused");
            assert_eq!(
                err.0,
                "control_plane.reward_memory.enabled_agents must be a list"
            );
        }
    }

    #[test]
    fn numeric_enabled_agents_is_a_request_error() {
        let goal = crate::wire::json::parse(
            r#"{"control_plane": {"reward_memory": {"enabled_agents": 5}}}"#,
        )
        .expect("valid");
        assert!(goal_policy(goal.as_object().expect("object")).is_err());
    }

    #[test]
    fn string_true_does_not_enable() {
        let goal = crate::wire::json::parse(
            r#"{"control_plane": {"reward_memory": {"enabled": "true", "experimental": true}}}"#,
        )
        .expect("valid");
        let policy = goal_policy(goal.as_object().expect("object")).expect("policy");
        assert!(!policy.enabled);
        assert!(policy.experimental);
    }

    #[test]
    fn goal_ids_are_strings_or_integers() {
        assert_eq!(goal_id_of(None), None);
        assert_eq!(goal_id_of(Some(&Value::Int(0))).as_deref(), Some("0"));
        assert_eq!(goal_id_of(Some(&Value::Bool(false))), None);
    }

    #[test]
    fn a_registry_whose_root_is_not_an_object_is_invalid() {
        let err = resolve(
            &Value::from(vec![1]),
            "g",
            "pilot",
            |repo: &str| PathBuf::from(repo),
            |_: &Path| Err("absent".to_owned()),
        )
        .err()
        .expect("refused");
        assert!(
            matches!(err, ExperimentError::RegistryInvalid(_)),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "JSON root must be an object");
    }
}
