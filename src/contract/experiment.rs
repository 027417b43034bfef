//! `experiment-status`: the default-off, agent-scoped Reward Memory experiment of a goal.
//!
//! Owns registered-agent id normalization (§8.2), the goal policy (§8.3), the
//! `reward_memory_experiment_config_v1` loader and normalizer with its surface routes
//! (§8.5) and the `reward_memory_experiment_status_v1` packet (§8.4). Pure: the shell
//! finds the registry file (§1.5) and reads it, and hands in the reader of the config
//! file ([`resolve`]). This command never contacts a provider.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::contract::ingest::policy::normalize_standing_policy;
use crate::contract::registry::normalize_corpus;
use crate::error::Error;
use crate::obj;
use crate::recall::normalize_binding;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::{self, pystr, pystr_strip};
use crate::wire::text::{self, AGENT_ID_RE, FieldError, FieldResult};

/// Schema of the experiment config file.
pub const CONFIG_SCHEMA_VERSION: &str = "reward_memory_experiment_config_v1";
/// The Issue Fix compatibility adapter.
pub const ISSUE_FIX_ADAPTER: &str = "issue_fix_maintainer_feedback";
/// The generic scoped-feedback adapter.
pub const SCOPED_FEEDBACK_ADAPTER: &str = "scoped_feedback";

const MAX_CORPORA: usize = 50;
const MAX_SURFACES: usize = 20;

/// Registry route failures that are not plain field errors.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// The registry file could not be read (the reference crashes here; we report it).
    #[error("cannot read registry JSON: {0}")]
    RegistryUnreadable(String),
    /// The registry is not JSON, or its root is not an object.
    #[error("{0}")]
    RegistryInvalid(String),
}

// ---------------------------------------------------------------------------------------
// Agents and goal policy (§8.2, §8.3)
// ---------------------------------------------------------------------------------------

/// Normalizes one agent id: whitespace collapsed, lower-cased, spaces to `-`; `None`
/// unless the result matches AGENT_ID.
pub fn normalize_agent_id(value: Option<&Value>) -> Option<String> {
    let collapsed = pyfmt::collapse_ws(&pystr(value));
    let candidate = collapsed.to_lowercase().replace(' ', "-");
    (!candidate.is_empty() && AGENT_ID_RE.is_match(&candidate)).then_some(candidate)
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
// Config v1 (§8.5)
// ---------------------------------------------------------------------------------------

/// A surface's recall profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallProfile {
    pub profile_id: String,
    pub mode: String,
    pub max_queries: i64,
    pub limit: i64,
}

/// One declared corpus with its standing policy and materialized provider binding
/// (all three normalized).
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusEntry {
    pub corpus: Map,
    pub standing_policy: Map,
    pub provider_binding: Map,
}

/// One module-owned surface route.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceConfig {
    pub surface_id: String,
    pub adapter: String,
    /// In declaration order.
    pub corpus_ids: Vec<String>,
    pub ingest_corpus_id: String,
    pub recall_profile: RecallProfile,
}

/// The automation policy; `fail_open` is always true once normalized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Automation {
    pub automatic_recall: bool,
    pub automatic_ingest: bool,
    pub fail_open: bool,
}

/// A normalized `reward_memory_experiment_config_v1`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentConfig {
    /// The raw project binding without `corpus_scopes`.
    pub project_provider_binding: Map,
    /// In declaration order.
    pub corpora: Vec<(String, CorpusEntry)>,
    /// In declaration order.
    pub surfaces: Vec<SurfaceConfig>,
    pub automation: Automation,
}

impl ExperimentConfig {
    /// The entry of a declared corpus.
    pub fn corpus(&self, corpus_id: &str) -> Option<&CorpusEntry> {
        self.corpora
            .iter()
            .find(|(id, _)| id == corpus_id)
            .map(|(_, e)| e)
    }

    /// The configuration of a surface.
    pub fn surface(&self, surface_id: &str) -> Option<&SurfaceConfig> {
        self.surfaces.iter().find(|s| s.surface_id == surface_id)
    }
}

fn bounded_objects<'a>(v: Option<&'a Value>, label: &str, max: usize) -> FieldResult<Vec<&'a Map>> {
    let fail = || FieldError(format!("{label} must be a bounded non-empty object list"));
    let items = v.and_then(Value::as_array).ok_or_else(fail)?;
    if items.is_empty() || items.len() > max {
        return Err(fail());
    }
    items
        .iter()
        .map(|i| i.as_object().ok_or_else(fail))
        .collect()
}

fn strict_bool(v: Option<&Value>, label: &str) -> FieldResult<bool> {
    text::strict_bool(v, label)
}

fn bounded_int(v: Option<&Value>, label: &str, max: i64) -> FieldResult<i64> {
    match v {
        Some(Value::Int(i)) if (1..=max).contains(i) => Ok(*i),
        _ => Err(FieldError(format!(
            "{label} must be an integer between 1 and {max}"
        ))),
    }
}

fn adapter(v: Option<&Value>) -> FieldResult<String> {
    let s = pystr_strip(v);
    if s == ISSUE_FIX_ADAPTER || s == SCOPED_FEEDBACK_ADAPTER {
        Ok(s)
    } else {
        Err(FieldError::new(
            "reward-memory experiment adapter must be one of: issue_fix_maintainer_feedback, scoped_feedback",
        ))
    }
}

fn scope_field<'a>(map: &'a Map, key: &str) -> Option<&'a Value> {
    map.get("scope").and_then(|s| s.get(key))
}

fn surface_list(map: &Map) -> Vec<String> {
    scope_field(map, "surface_ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn policy_matches_corpus(policy: &Map, corpus: &Map) -> bool {
    let corpus_surfaces = surface_list(corpus);
    policy.get("owner_ref") == corpus.get("owner_ref")
        && scope_field(policy, "workspace_ref") == scope_field(corpus, "workspace_ref")
        && scope_field(policy, "project_ref") == scope_field(corpus, "project_ref")
        && surface_list(policy)
            .iter()
            .all(|s| corpus_surfaces.contains(s))
        && policy.get("allowed_target_classes")
            == Some(&Value::from(vec![
                corpus.get("class_id").cloned().unwrap_or_default(),
            ]))
}

fn compatibility_signature(corpus: &Map, policy: &Map) -> Vec<Option<Value>> {
    ["class_id", "owner_ref", "read_authority", "write_authority"]
        .iter()
        .map(|k| corpus.get(k).cloned())
        .chain(std::iter::once(policy.get("authority_source_ref").cloned()))
        .chain(
            ["privacy", "freshness", "lifecycle"]
                .iter()
                .map(|k| corpus.get(k).cloned()),
        )
        .collect()
}

const BINDING_KEYS: &[&str] = &[
    "provider_id",
    "namespace",
    "timeout_seconds",
    "setup_hints",
    "provider_binary",
    "minimum_provider_version",
    "actor_peer_id",
];

/// Normalizes a parsed config object (§8.5). The messages are internal: callers only
/// learn `config_invalid`.
pub fn normalize_config(raw: &Value) -> FieldResult<ExperimentConfig> {
    let raw = text::strict_object(
        Some(raw),
        "reward-memory experiment config",
        &[
            "schema_version",
            "project_provider_binding",
            "corpora",
            "surfaces",
            "automation",
        ],
    )?;
    let mut binding_fields: Vec<&str> = BINDING_KEYS.to_vec();
    binding_fields.push("corpus_scopes");
    let project_binding = text::strict_object(
        raw.get("project_provider_binding"),
        "project_provider_binding",
        &binding_fields,
    )?;
    let scopes = bounded_objects(
        project_binding.get("corpus_scopes"),
        "project_provider_binding.corpus_scopes",
        MAX_CORPORA,
    )?;
    let mut scope_refs: Vec<(String, String)> = Vec::new();
    for (index, item) in scopes.iter().enumerate() {
        let item = Value::Object((*item).clone());
        let scope = text::strict_object(
            Some(&item),
            &format!("project_provider_binding.corpus_scopes[{index}]"),
            &["corpus_id", "scope_ref"],
        )?;
        let corpus_id = pystr_strip(scope.get("corpus_id"));
        let scope_ref = pystr_strip(scope.get("scope_ref"));
        if corpus_id.is_empty() || scope_ref.is_empty() {
            return Err(FieldError::new(
                "each project provider corpus scope must be exact",
            ));
        }
        if scope_refs.iter().any(|(id, _)| *id == corpus_id) {
            return Err(FieldError::new(
                "project provider corpus scopes must not contain duplicates",
            ));
        }
        scope_refs.push((corpus_id, scope_ref));
    }

    let raw_corpora = bounded_objects(raw.get("corpora"), "corpora", MAX_CORPORA)?;
    let mut corpora: Vec<(String, Map, Map)> = Vec::new();
    for (index, item) in raw_corpora.iter().enumerate() {
        let item = Value::Object((*item).clone());
        let entry = text::strict_object(
            Some(&item),
            &format!("corpora[{index}]"),
            &["corpus", "standing_policy"],
        )?;
        let (Some(corpus_raw @ Value::Object(_)), Some(policy_raw @ Value::Object(_))) =
            (entry.get("corpus"), entry.get("standing_policy"))
        else {
            return Err(FieldError::new(
                "each corpus entry requires corpus and standing_policy",
            ));
        };
        let corpus = normalize_corpus(corpus_raw)?;
        let policy = normalize_standing_policy(policy_raw)?;
        let corpus_id = pystr(corpus.get("corpus_id"));
        if corpora.iter().any(|(id, _, _)| *id == corpus_id) {
            return Err(FieldError::new(
                "corpora must not contain duplicate corpus ids",
            ));
        }
        if !policy_matches_corpus(&policy, &corpus) {
            return Err(FieldError::new(
                "standing policy authority and scope must stay inside its corpus",
            ));
        }
        if corpus.get("provider_id") != project_binding.get("provider_id") {
            return Err(FieldError::new(
                "every corpus must use the project provider binding",
            ));
        }
        corpora.push((corpus_id, corpus, policy));
    }
    let declared: BTreeSet<&str> = corpora.iter().map(|(id, _, _)| id.as_str()).collect();
    let scoped: BTreeSet<&str> = scope_refs.iter().map(|(id, _)| id.as_str()).collect();
    if declared != scoped {
        return Err(FieldError::new(
            "project provider corpus scopes must exactly match declared corpora",
        ));
    }
    let mut pairs: Vec<(Option<&Value>, Option<&Value>)> = Vec::new();
    for (_, corpus, _) in &corpora {
        let pair = (
            scope_field(corpus, "workspace_ref"),
            scope_field(corpus, "project_ref"),
        );
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    if pairs.len() != 1 {
        return Err(FieldError::new(
            "all corpora must belong to one exact project scope",
        ));
    }
    let mut entries: Vec<(String, CorpusEntry)> = Vec::new();
    for (corpus_id, corpus, policy) in corpora.iter().cloned() {
        let scope_ref = scope_refs
            .iter()
            .find(|(id, _)| *id == corpus_id)
            .map(|(_, r)| r.clone())
            .unwrap_or_default();
        let mut raw_binding = Map::new();
        for key in BINDING_KEYS {
            if let Some(v) = project_binding.get(key) {
                raw_binding.insert(*key, v.clone());
            }
        }
        raw_binding.insert("corpus_id", corpus_id.clone());
        raw_binding.insert("scope_ref", scope_ref);
        let provider_binding = normalize_binding(&raw_binding, &corpus)?;
        entries.push((
            corpus_id,
            CorpusEntry {
                corpus,
                standing_policy: policy,
                provider_binding,
            },
        ));
    }

    let raw_surfaces = bounded_objects(raw.get("surfaces"), "surfaces", MAX_SURFACES)?;
    let mut surfaces: Vec<SurfaceConfig> = Vec::new();
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for (index, item) in raw_surfaces.iter().enumerate() {
        let item = Value::Object((*item).clone());
        let surface = text::strict_object(
            Some(&item),
            &format!("surfaces[{index}]"),
            &[
                "surface_id",
                "adapter",
                "corpus_ids",
                "ingest_corpus_id",
                "recall_profile",
            ],
        )?;
        let surface_id = pystr_strip(surface.get("surface_id"));
        if surface_id.is_empty() || surfaces.iter().any(|s| s.surface_id == surface_id) {
            return Err(FieldError::new("surface_id must be present and unique"));
        }
        let corpus_ids_raw = match surface.get("corpus_ids") {
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_CORPORA => items,
            _ => {
                return Err(FieldError::new(
                    "surface.corpus_ids must be a bounded non-empty list",
                ));
            }
        };
        let corpus_ids: Vec<String> = corpus_ids_raw
            .iter()
            .map(|v| pystr_strip(Some(v)))
            .collect();
        let unique: BTreeSet<&String> = corpus_ids.iter().collect();
        if corpus_ids.iter().any(String::is_empty) || unique.len() != corpus_ids.len() {
            return Err(FieldError::new(
                "surface.corpus_ids must contain unique corpus ids",
            ));
        }
        let unknown: Vec<&str> = unique
            .iter()
            .filter(|id| !declared.contains(id.as_str()))
            .map(|id| id.as_str())
            .collect();
        if !unknown.is_empty() {
            return Err(FieldError(format!(
                "surface selects an undeclared corpus: {}",
                unknown.join(", ")
            )));
        }
        let ingest_corpus_id = pystr_strip(surface.get("ingest_corpus_id"));
        if !corpus_ids.contains(&ingest_corpus_id) {
            return Err(FieldError::new(
                "surface.ingest_corpus_id must be one selected corpus",
            ));
        }
        let mut signatures: Vec<Vec<Option<Value>>> = Vec::new();
        for corpus_id in &corpus_ids {
            let Some((_, entry)) = entries.iter().find(|(id, _)| id == corpus_id) else {
                continue;
            };
            if !surface_list(&entry.corpus).contains(&surface_id) {
                return Err(FieldError::new(
                    "surface must be declared by every selected corpus",
                ));
            }
            if !surface_list(&entry.standing_policy).contains(&surface_id) {
                return Err(FieldError::new(
                    "surface must be authorized by every selected standing policy",
                ));
            }
            let signature = compatibility_signature(&entry.corpus, &entry.standing_policy);
            if !signatures.contains(&signature) {
                signatures.push(signature);
            }
        }
        if signatures.len() != 1 {
            return Err(FieldError::new(
                "surface corpora must share memory class, authority, privacy, freshness, and lifecycle",
            ));
        }
        let profile = text::strict_object(
            surface.get("recall_profile"),
            &format!("surfaces[{index}].recall_profile"),
            &["profile_id", "mode", "max_queries", "limit"],
        )?;
        let mode = pystr_strip(profile.get("mode"));
        if mode != "function_boundary" && mode != "bounded_agentic_search" {
            return Err(FieldError::new("recall_profile.mode is unsupported"));
        }
        let profile_id = pystr_strip(profile.get("profile_id"));
        if profile_id.is_empty() {
            return Err(FieldError::new("recall_profile.profile_id must be present"));
        }
        let adapter = adapter(surface.get("adapter"))?;
        let max_queries = bounded_int(profile.get("max_queries"), "recall_profile.max_queries", 3)?;
        let limit = bounded_int(profile.get("limit"), "recall_profile.limit", 8)?;
        referenced.extend(corpus_ids.iter().cloned());
        surfaces.push(SurfaceConfig {
            surface_id,
            adapter,
            corpus_ids,
            ingest_corpus_id,
            recall_profile: RecallProfile {
                profile_id,
                mode,
                max_queries,
                limit,
            },
        });
    }
    if referenced
        .iter()
        .map(String::as_str)
        .collect::<BTreeSet<&str>>()
        != declared
    {
        return Err(FieldError::new(
            "every declared corpus must be assigned to an explicit surface",
        ));
    }
    let automation = text::strict_object(
        raw.get("automation"),
        "automation",
        &["automatic_recall", "automatic_ingest", "fail_open"],
    )?;
    if !strict_bool(automation.get("fail_open"), "automation.fail_open")? {
        return Err(FieldError::new(
            "reward-memory automation must be fail-open",
        ));
    }
    let automatic_recall = strict_bool(
        automation.get("automatic_recall"),
        "automation.automatic_recall",
    )?;
    let automatic_ingest = strict_bool(
        automation.get("automatic_ingest"),
        "automation.automatic_ingest",
    )?;
    let mut project_provider_binding = project_binding.clone();
    project_provider_binding.remove("corpus_scopes");
    Ok(ExperimentConfig {
        project_provider_binding,
        corpora: entries,
        surfaces,
        automation: Automation {
            automatic_recall,
            automatic_ingest,
            fail_open: true,
        },
    })
}

/// Parses config bytes: UTF-8 JSON object with the v1 schema, then [`normalize_config`].
pub fn parse_config(bytes: &[u8]) -> FieldResult<ExperimentConfig> {
    let value = crate::io::parse_document(bytes)
        .map_err(|_| FieldError::new("reward-memory experiment config is unavailable"))?;
    if value.as_object().is_none() {
        return Err(FieldError::new(
            "reward-memory experiment config is unavailable",
        ));
    }
    if value.get("schema_version") != Some(&Value::from(CONFIG_SCHEMA_VERSION)) {
        return Err(FieldError::new(
            "reward-memory experiment config must use reward_memory_experiment_config_v1",
        ));
    }
    normalize_config(&value)
}

/// The route of one surface (§8.5 "Surface route").
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceRoute {
    pub surface_id: String,
    pub adapter: String,
    pub recall_profile: RecallProfile,
    /// The surface's corpora in configured order.
    pub recall_corpora: Vec<CorpusEntry>,
    pub corpus_ids: Vec<String>,
    /// The ingest corpus.
    pub ingest: CorpusEntry,
}

impl SurfaceRoute {
    /// The `reward_memory_surface_config_v0` packet.
    pub fn packet(&self) -> Map {
        let profile = &self.recall_profile;
        let entry = |e: &CorpusEntry| {
            Value::Object(obj! {
                "corpus" => e.corpus.clone(),
                "standing_policy" => e.standing_policy.clone(),
                "provider_binding" => e.provider_binding.clone(),
            })
        };
        obj! {
            "schema_version" => "reward_memory_surface_config_v0",
            "surface_id" => self.surface_id.as_str(),
            "adapter" => self.adapter.as_str(),
            "recall_profile" => obj! {
                "profile_id" => profile.profile_id.as_str(),
                "mode" => profile.mode.as_str(),
                "max_queries" => profile.max_queries,
                "limit" => profile.limit,
            },
            "recall_corpora" => Value::Array(self.recall_corpora.iter().map(entry).collect()),
            "selection" => obj! {
                "mode" => "explicit_surface_corpus_ids",
                "global_corpus_scan" => false,
                "corpus_ids" => crate::wire::json::str_list(&self.corpus_ids),
            },
            "corpus" => self.ingest.corpus.clone(),
            "standing_policy" => self.ingest.standing_policy.clone(),
            "provider_binding" => self.ingest.provider_binding.clone(),
        }
    }
}

/// Selects the corpora explicitly assigned to one surface. A supplied adapter must equal
/// the configured one.
pub fn surface_route(
    config: &ExperimentConfig,
    surface_id: &str,
    adapter: Option<&str>,
) -> FieldResult<SurfaceRoute> {
    let surface = config
        .surface(surface_id)
        .ok_or_else(|| FieldError::new("reward-memory surface is not configured"))?;
    if let Some(a) = adapter
        && !a.is_empty()
        && a != surface.adapter
    {
        return Err(FieldError::new(
            "input adapter does not match the configured route",
        ));
    }
    let mut recall_corpora = Vec::new();
    for corpus_id in &surface.corpus_ids {
        let entry = config
            .corpus(corpus_id)
            .ok_or_else(|| FieldError::new("configured surface corpus is unavailable"))?;
        recall_corpora.push(entry.clone());
    }
    let ingest = config
        .corpus(&surface.ingest_corpus_id)
        .cloned()
        .ok_or_else(|| FieldError::new("configured ingest corpus is unavailable"))?;
    Ok(SurfaceRoute {
        surface_id: surface_id.to_owned(),
        adapter: surface.adapter.clone(),
        recall_profile: surface.recall_profile.clone(),
        recall_corpora,
        corpus_ids: surface.corpus_ids.clone(),
        ingest,
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
}

impl Resolution {
    /// The `status` value of the packet.
    pub fn status_name(&self) -> String {
        pystr(self.status.get("status"))
    }
}

/// Builds the status packet for an already found goal. `read_config` reads the config
/// file at a resolved path (the only I/O, injected).
pub fn resolve_for_goal(
    registry: &Map,
    goal: &Map,
    goal_id: &str,
    agent: &str,
    config_location: impl Fn(&str) -> PathBuf,
    read_config: impl Fn(&Path) -> Option<Vec<u8>>,
) -> FieldResult<Resolution> {
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
        .ok_or_else(|| FieldError::new("reward-memory experiment config is unavailable"))
        .and_then(|bytes| parse_config(&bytes));
    let config = match config {
        Ok(config) => config,
        Err(_) => {
            return Ok(Resolution {
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
    })
}

/// Checks the agent id of a request; the shell does this before it reads the registry.
pub fn check_agent_id(agent_id: &str) -> FieldResult<()> {
    normalize_agent_id(Some(&Value::from(agent_id)))
        .map(|_| ())
        .ok_or_else(|| FieldError::new("agent_id must be a public-safe registered agent id"))
}

/// Resolves the experiment of `goal_id`/`agent_id` (§8.1) from the bytes of the registry
/// file. `repo_dir` turns a goal's `repo` into its directory (`~` expanded, a relative or
/// missing repo against the working directory); `read_config` reads the config file at
/// a resolved path (the only I/O, injected).
pub fn resolve(
    registry: &[u8],
    goal_id: &str,
    agent_id: &str,
    repo_dir: impl Fn(&str) -> PathBuf,
    read_config: impl Fn(&Path) -> Option<Vec<u8>>,
) -> Result<Resolution, Error> {
    let registry = crate::io::parse_document(registry)
        .map_err(|e| ExperimentError::RegistryInvalid(e.to_string()))?;
    let registry = registry.as_object().ok_or_else(|| {
        ExperimentError::RegistryInvalid("JSON root must be an object".to_owned())
    })?;
    let (goal, agent) = find_goal(registry, goal_id, agent_id)?;
    let project = repo_dir(&pystr(goal.get("repo")));
    Ok(resolve_for_goal(
        registry,
        goal,
        goal_id,
        &agent,
        |config_path| project.join(config_path),
        read_config,
    )?)
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

    fn fixture_config() -> Value {
        crate::wire::json::parse(include_str!(
            "../../fixtures/experiment_status/valid/experiment-two-surfaces.json"
        ))
        .expect("valid fixture")
    }

    #[test]
    fn config_surfaces_route_to_their_own_corpora() {
        let config = normalize_config(&fixture_config()).expect("valid config");
        assert_eq!(config.corpora.len(), 2);
        let route = surface_route(&config, "reviewer_artifact.summary", None).expect("route");
        assert_eq!(route.adapter, SCOPED_FEEDBACK_ADAPTER);
        assert_eq!(
            route.ingest.corpus.get("corpus_id"),
            Some(&s("example_reviewer_artifact_policy"))
        );
        let packet = route.packet();
        assert_eq!(
            packet
                .get("selection")
                .and_then(|v| v.get("global_corpus_scan")),
            Some(&Value::Bool(false))
        );
        assert_eq!(
            surface_route(
                &config,
                "reviewer_artifact.summary",
                Some(ISSUE_FIX_ADAPTER)
            )
            .expect_err("mismatch")
            .0,
            "input adapter does not match the configured route"
        );
        assert_eq!(
            surface_route(&config, "nope.surface", None)
                .expect_err("unknown")
                .0,
            "reward-memory surface is not configured"
        );
    }

    #[test]
    fn unassigned_corpora_and_unknown_corpus_ids_are_rejected() {
        let mut raw = fixture_config();
        if let Value::Object(m) = &mut raw
            && let Some(Value::Array(surfaces)) = m.get_mut("surfaces")
        {
            *surfaces = surfaces[..1].into();
        }
        assert_eq!(
            normalize_config(&raw).expect_err("unassigned").0,
            "every declared corpus must be assigned to an explicit surface"
        );
        let mut raw = fixture_config();
        if let Value::Object(m) = &mut raw
            && let Some(Value::Array(surfaces)) = m.get_mut("surfaces")
            && let Some(Value::Object(first)) = surfaces.first_mut()
        {
            first.insert("corpus_ids", crate::wire::json::str_list(&["ghost"]));
        }
        assert_eq!(
            normalize_config(&raw).expect_err("unknown").0,
            "surface selects an undeclared corpus: ghost"
        );
    }

    #[test]
    fn goal_ids_are_strings_or_integers() {
        assert_eq!(goal_id_of(None), None);
        assert_eq!(goal_id_of(Some(&Value::Int(0))).as_deref(), Some("0"));
        assert_eq!(goal_id_of(Some(&Value::Bool(false))), None);
    }
}
