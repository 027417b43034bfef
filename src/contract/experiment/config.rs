//! The `reward_memory_experiment_config_v1` file (§8.5): its normalizer, one named step
//! per section in the reference's validation order (the project provider binding and its
//! corpus scopes, the declared corpora, their materialized bindings, the surfaces, the
//! automation policy), and the route of one surface.
//!
//! Pure: the shell reads and parses the file; every failure here is a [`FieldError`]
//! whose message stays internal (the status packet only says `config_invalid`).

use std::collections::BTreeSet;

use crate::contract::ingest::policy::normalize_standing_policy;
use crate::contract::registry::normalize_corpus;
use crate::obj;
use crate::recall::normalize_binding;
use crate::wire::json::{Map, Value, str_items};
use crate::wire::pyfmt::{pystr, pystr_strip};
use crate::wire::text::{self, FieldError, FieldResult, strict_bool};

use super::ExperimentError;

/// Schema of the experiment config file.
pub const CONFIG_SCHEMA_VERSION: &str = "reward_memory_experiment_config_v1";
/// The Issue Fix compatibility adapter.
pub const ISSUE_FIX_ADAPTER: &str = "issue_fix_maintainer_feedback";
/// The generic scoped-feedback adapter.
pub const SCOPED_FEEDBACK_ADAPTER: &str = "scoped_feedback";

const MAX_CORPORA: usize = 50;
const MAX_SURFACES: usize = 20;

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
    str_items(scope_field(map, "surface_ids"))
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
    // Ours: the embedded store's tokenizer (see `crate::recall::normalize_binding`).
    "store_tokenizer",
];

/// A declared corpus, normalized, with its standing policy: the id, the corpus, the
/// policy.
type DeclaredCorpus = (String, Map, Map);

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
    let (project_binding, scope_refs) = project_binding(raw)?;
    let corpora = declared_corpora(raw, project_binding)?;
    check_one_project(&corpora, &scope_refs)?;
    let entries = materialize_bindings(corpora, project_binding, &scope_refs)?;
    let surfaces = surfaces(raw, &entries)?;
    let automation = automation(raw)?;
    let mut project_provider_binding = project_binding.clone();
    project_provider_binding.remove("corpus_scopes");
    Ok(ExperimentConfig {
        project_provider_binding,
        corpora: entries,
        surfaces,
        automation,
    })
}

/// `project_provider_binding`: its keys, and its `corpus_scopes` as exact, unique
/// `(corpus_id, scope_ref)` pairs in declaration order.
fn project_binding(raw: &Map) -> FieldResult<(&Map, Vec<(String, String)>)> {
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
    Ok((project_binding, scope_refs))
}

/// `corpora`: each entry's corpus and standing policy normalized, ids unique, the policy
/// inside its corpus and every corpus on the project provider.
fn declared_corpora(raw: &Map, project_binding: &Map) -> FieldResult<Vec<DeclaredCorpus>> {
    let raw_corpora = bounded_objects(raw.get("corpora"), "corpora", MAX_CORPORA)?;
    let mut corpora: Vec<DeclaredCorpus> = Vec::new();
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
    Ok(corpora)
}

/// The corpus scopes name exactly the declared corpora, and those belong to one
/// workspace and project.
fn check_one_project(
    corpora: &[DeclaredCorpus],
    scope_refs: &[(String, String)],
) -> FieldResult<()> {
    let declared: BTreeSet<&str> = corpora.iter().map(|(id, _, _)| id.as_str()).collect();
    let scoped: BTreeSet<&str> = scope_refs.iter().map(|(id, _)| id.as_str()).collect();
    if declared != scoped {
        return Err(FieldError::new(
            "project provider corpus scopes must exactly match declared corpora",
        ));
    }
    let mut pairs: Vec<(Option<&Value>, Option<&Value>)> = Vec::new();
    for (_, corpus, _) in corpora {
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
    Ok(())
}

/// Each corpus's provider binding: the project binding's keys plus the corpus id and its
/// scope ref, normalized against the corpus.
fn materialize_bindings(
    corpora: Vec<DeclaredCorpus>,
    project_binding: &Map,
    scope_refs: &[(String, String)],
) -> FieldResult<Vec<(String, CorpusEntry)>> {
    let mut entries: Vec<(String, CorpusEntry)> = Vec::new();
    for (corpus_id, corpus, policy) in corpora {
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
    Ok(entries)
}

/// `surfaces`: each one valid against the declared corpora, and every declared corpus
/// assigned to at least one of them.
fn surfaces(raw: &Map, entries: &[(String, CorpusEntry)]) -> FieldResult<Vec<SurfaceConfig>> {
    let declared: BTreeSet<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
    let raw_surfaces = bounded_objects(raw.get("surfaces"), "surfaces", MAX_SURFACES)?;
    let mut surfaces: Vec<SurfaceConfig> = Vec::new();
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for (index, item) in raw_surfaces.iter().enumerate() {
        let surface = surface(index, item, entries, &declared, &surfaces)?;
        referenced.extend(surface.corpus_ids.iter().cloned());
        surfaces.push(surface);
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
    Ok(surfaces)
}

/// `surfaces[index]`: a unique id, its selected corpora (declared, each declaring and
/// authorizing the surface, all compatible), its ingest corpus, adapter and recall
/// profile.
fn surface(
    index: usize,
    item: &Map,
    entries: &[(String, CorpusEntry)],
    declared: &BTreeSet<&str>,
    earlier: &[SurfaceConfig],
) -> FieldResult<SurfaceConfig> {
    let item = Value::Object(item.clone());
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
    if surface_id.is_empty() || earlier.iter().any(|s| s.surface_id == surface_id) {
        return Err(FieldError::new("surface_id must be present and unique"));
    }
    let corpus_ids = selected_corpus_ids(surface, declared)?;
    let ingest_corpus_id = pystr_strip(surface.get("ingest_corpus_id"));
    if !corpus_ids.contains(&ingest_corpus_id) {
        return Err(FieldError::new(
            "surface.ingest_corpus_id must be one selected corpus",
        ));
    }
    check_surface_corpora(&surface_id, &corpus_ids, entries)?;
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
    Ok(SurfaceConfig {
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
    })
}

/// A surface's `corpus_ids`: a bounded non-empty list of unique, declared ids, in
/// declaration order.
fn selected_corpus_ids(surface: &Map, declared: &BTreeSet<&str>) -> FieldResult<Vec<String>> {
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
    Ok(corpus_ids)
}

/// Every selected corpus declares the surface, its standing policy authorizes it, and
/// all of them share class, authority, privacy, freshness and lifecycle.
fn check_surface_corpora(
    surface_id: &str,
    corpus_ids: &[String],
    entries: &[(String, CorpusEntry)],
) -> FieldResult<()> {
    let surface_id = surface_id.to_owned();
    let mut signatures: Vec<Vec<Option<Value>>> = Vec::new();
    for corpus_id in corpus_ids {
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
    Ok(())
}

/// `automation`: strict booleans, and it must fail open.
fn automation(raw: &Map) -> FieldResult<Automation> {
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
    Ok(Automation {
        automatic_recall,
        automatic_ingest,
        fail_open: true,
    })
}

/// A parsed config document: a JSON object with the v1 schema, then [`normalize_config`].
pub fn config_from_document(value: &Value) -> FieldResult<ExperimentConfig> {
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
    normalize_config(value)
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
) -> Result<SurfaceRoute, ExperimentError> {
    let surface = config
        .surface(surface_id)
        .ok_or_else(|| FieldError::new("reward-memory surface is not configured"))?;
    if let Some(a) = adapter
        && !a.is_empty()
        && a != surface.adapter
    {
        return Err(FieldError::new("input adapter does not match the configured route").into());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    fn fixture_config() -> Value {
        crate::wire::json::parse(include_str!(
            "../../../fixtures/experiment_status/valid/experiment-two-surfaces.json"
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
            .to_string(),
            "input adapter does not match the configured route"
        );
        assert_eq!(
            surface_route(&config, "nope.surface", None)
                .expect_err("unknown")
                .to_string(),
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
    fn a_config_document_is_a_v1_object() {
        assert_eq!(
            config_from_document(&Value::from(vec![1]))
                .expect_err("list")
                .0,
            "reward-memory experiment config is unavailable"
        );
        let mut raw = fixture_config();
        if let Value::Object(m) = &mut raw {
            m.insert("schema_version", "reward_memory_experiment_config_v0");
        }
        assert_eq!(
            config_from_document(&raw).expect_err("v0").0,
            "reward-memory experiment config must use reward_memory_experiment_config_v1"
        );
        let config = config_from_document(&fixture_config()).expect("v1");
        assert_eq!(config, normalize_config(&fixture_config()).expect("v1"));
    }

    #[test]
    fn config_sections_fail_in_the_reference_order() {
        // The surfaces are checked after the corpora, the automation after the surfaces.
        let mut raw = fixture_config();
        if let Value::Object(m) = &mut raw {
            m.insert("surfaces", Value::from(Vec::<Value>::new()));
            m.insert("automation", obj! {"fail_open" => false});
            m.insert("corpora", Value::from(Vec::<Value>::new()));
        }
        assert_eq!(
            normalize_config(&raw).expect_err("corpora").0,
            "corpora must be a bounded non-empty object list"
        );
        let mut raw = fixture_config();
        if let Value::Object(m) = &mut raw {
            m.insert("surfaces", Value::from(Vec::<Value>::new()));
            m.insert("automation", obj! {"fail_open" => false});
        }
        assert_eq!(
            normalize_config(&raw).expect_err("surfaces").0,
            "surfaces must be a bounded non-empty object list"
        );
        let mut raw = fixture_config();
        if let Value::Object(m) = &mut raw {
            m.insert(
                "automation",
                obj! {"automatic_recall" => false, "automatic_ingest" => false, "fail_open" => false},
            );
        }
        assert_eq!(
            normalize_config(&raw).expect_err("automation").0,
            "reward-memory automation must be fail-open"
        );
    }
}
