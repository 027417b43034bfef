//! The Stage-4 fixture world: neutral fixture identities, the in-memory provider double
//! and one setup function per contract case, each running the real shared core
//! (candidate build and review, active record, recall request and guard, recall
//! execution, model application, route guard).
//!
//! This module owns setup only. It returns plain observations; the assertions, metrics
//! and release gate belong to [`crate::contract::evaluation`]. The one project-specific fixture is
//! the named PR #3237 Issue Fix regression observation. No I/O, no clock.

use std::cell::Cell;

use crate::contract::candidate;
use crate::contract::route;
use crate::obj;
use crate::provider::{
    ContextProvider, ProviderError, Retrieval, RetrieveRequest, RetrievedItem, Sync, SyncRequest,
};
use crate::recall::{self, Applier, ProviderSource, RecallItem, RecallSession};
use crate::wire::digest;
use crate::wire::json::{self, Map, Value};
use crate::wire::pyfmt::pystr;

use super::EvaluationError;

/// Observation and activation time of every fixture.
pub const OBSERVED_AT: &str = "2026-07-14T10:00:00+00:00";
pub const WORKSPACE: &str = "workspace:reward-memory-eval";
pub const PROJECT: &str = "repository:fixture-project";
pub const REVISION: &str = "revision:stage4";
pub const SURFACE: &str = "issue_fix.patch_planning";
pub const CORPUS_ID: &str = "reward_memory_policy_scopes";
pub const SCOPE_REF: &str = "memory://resources/reward-memory/fixture-project";
pub const PROVIDER_ID: &str = "fixture_provider";
/// The maintainer whose correction the fixture policy comes from.
pub const MAINTAINER: &str = "github:user:maintainer";
/// Shared-core name reported by the Issue Fix patch-planning boundary.
pub const SHARED_CORE: &str = "loopx.capabilities.reward_memory.application";

const QUERY: &str = "What reviewed policy constrains this patch?";
const QUERY_SUMMARY: &str = "reviewed Issue Fix scope policy";

/// An in-memory provider that serves fixed items and counts its calls. It refuses to
/// write: the suite must never change provider state.
pub struct FixtureProvider {
    items: Vec<RetrievedItem>,
    retrieve_calls: Cell<usize>,
    write_attempts: Cell<usize>,
}

impl FixtureProvider {
    pub fn new(items: Vec<RetrievedItem>) -> FixtureProvider {
        FixtureProvider {
            items,
            retrieve_calls: Cell::new(0),
            write_attempts: Cell::new(0),
        }
    }

    /// How many times `retrieve` ran.
    pub fn call_count(&self) -> usize {
        self.retrieve_calls.get()
    }

    /// How many times something tried to write through this provider.
    pub fn write_attempts(&self) -> usize {
        self.write_attempts.get()
    }
}

impl ContextProvider for FixtureProvider {
    fn provider_id(&self) -> &str {
        PROVIDER_ID
    }

    fn retrieve(&self, request: &RetrieveRequest) -> Retrieval {
        self.retrieve_calls.set(self.retrieve_calls.get() + 1);
        Retrieval {
            provider: PROVIDER_ID.to_owned(),
            namespace: request.namespace.clone(),
            status: "completed".to_owned(),
            query_summary: request.query_summary.clone(),
            observed_at: request.observed_at.clone(),
            search_performed: true,
            read_performed: true,
            items: self.items.clone(),
            reason_code: None,
            provider_version: None,
            latency_ms: 0,
            requested_limit: request.max_results,
            snapshot: None,
            lifecycle_skipped: 0,
        }
    }

    fn sync(&self, request: &SyncRequest) -> Sync {
        self.write_attempts.set(self.write_attempts.get() + 1);
        let mut refused = Sync::planned(
            PROVIDER_ID,
            &request.namespace,
            &request.observed_at,
            request.resources.len(),
        );
        refused.status = "unavailable".to_owned();
        refused.reason_code = Some("fixture_provider_is_read_only".to_owned());
        refused.retry_disposition = "no_retry".to_owned();
        refused
    }

    fn try_sync(&self, request: &SyncRequest) -> Result<Sync, ProviderError> {
        self.sync(request);
        Err(ProviderError::Invalid(
            "the Stage-4 fixture must not write provider state".to_owned(),
        ))
    }
}

/// The fixture corpus: a revision-bound hard-policy corpus owned by the provider scope.
pub fn corpus() -> Value {
    Value::Object(obj! {
        "corpus_id" => CORPUS_ID,
        "class_id" => "hard_policy",
        "provider_id" => PROVIDER_ID,
        "owner_ref" => "provider_scope_owner",
        "source_of_truth" => "reviewed_owner_feedback",
        "read_authority" => "module_scoped",
        "write_authority" => "provider_managed",
        "scope" => obj! {
            "workspace_ref" => WORKSPACE,
            "project_ref" => PROJECT,
            "surface_ids" => vec![SURFACE],
        },
        "freshness" => obj! {"mode" => "revision_bound", "source_revision" => REVISION},
        "lifecycle" => obj! {"state" => "active", "supersedes" => Value::Array(Box::default())},
        "retrieval" => obj! {
            "index_required" => true,
            "readback_required" => true,
            "application_receipt_required" => true,
        },
        "maintenance" => obj! {
            "writeback_triggers" => vec!["reviewed_candidate"],
            "closure_policy" => "provider_write_then_revision_verified_read",
            "retirement_authority" => "provider_scope_owner",
        },
        "privacy" => obj! {"visibility" => "private", "raw_content_in_registry" => false},
        "provider_scope_ref_digest" => digest::short16(SCOPE_REF),
    })
}

/// The maintainer-correction hard-policy proposal, sourced from `actor_ref`.
pub fn proposal(actor_ref: &str) -> Map {
    obj! {
        "target_class" => "hard_policy",
        "content_summary" => "Memory-core changes require relevant effect evidence and must not add a disproportionate patch for one narrow edge case.",
        "source" => obj! {
            "source_kind" => "maintainer_correction",
            "source_ref" => "github:example/reward-memory#reviewed-feedback",
            "actor_ref" => actor_ref,
            "actor_role" => "verified_repository_core_contributor",
        },
        "scope" => obj! {
            "workspace_ref" => WORKSPACE,
            "project_ref" => PROJECT,
            "surface_ids" => vec![SURFACE],
            "revision_ref" => REVISION,
        },
        "reasoning" => obj! {
            "summary" => "The correction is reusable only at Issue Fix patch planning.",
            "confidence" => "high",
        },
        "guard_context" => obj! {
            "source_freshness" => "current",
            "conflict_state" => "clear",
            "current_artifact_verified" => true,
        },
        "requested_action_scopes" => vec!["issue_fix:scope_selection"],
        "raw_content_captured" => false,
    }
}

/// A verified authority checkpoint for `actor_ref` on the fixture project.
pub fn authority(actor_ref: &str) -> Value {
    Value::Object(obj! {
        "verified" => true,
        "source_ref" => "repository:authority-map",
        "actor_ref" => actor_ref,
        "actor_role" => "verified_repository_core_contributor",
        "project_ref" => PROJECT,
        "action_scopes" => vec!["issue_fix:scope_selection"],
    })
}

/// The fixture policy built, reviewed `accept` and wrapped as an active record.
pub fn active_record() -> Result<Map, EvaluationError> {
    let candidate =
        candidate::build_candidate(&proposal(MAINTAINER), Some(&authority(MAINTAINER)))?;
    let reviewed = candidate::review_candidate(
        &candidate,
        &obj! {
            "decision" => "accept",
            "reviewer_ref" => MAINTAINER,
            "review_ref" => "review:reward-memory-stage4",
            "reasoning_summary" => "The compact policy and authority scope were reviewed.",
        },
    )?;
    Ok(recall::build_active_record(
        &reviewed,
        &corpus(),
        OBSERVED_AT,
    )?)
}

/// The provider binding of the fixture corpus.
pub fn binding() -> Map {
    obj! {
        "corpus_id" => CORPUS_ID,
        "provider_id" => PROVIDER_ID,
        "namespace" => "reward_memory",
        "scope_ref" => SCOPE_REF,
        "timeout_seconds" => 5,
        "setup_hints" => Map::new(),
    }
}

/// A verified module-scoped read checkpoint for one project and surface.
pub fn read_checkpoint(project_ref: &str, surface_id: &str) -> Value {
    Value::Object(obj! {
        "verified" => true,
        "corpus_id" => CORPUS_ID,
        "workspace_ref" => WORKSPACE,
        "project_ref" => project_ref,
        "surface_id" => surface_id,
        "read_authority" => "module_scoped",
        "source_ref" => "repository:authority-map",
    })
}

/// What a recall request asks for; [`RequestShape::standard`] matches the corpus.
#[derive(Debug, Clone, Copy)]
pub struct RequestShape<'a> {
    pub project_ref: &'a str,
    pub surface_id: &'a str,
    pub revision_ref: &'a str,
    pub freshness_revision: &'a str,
}

impl RequestShape<'static> {
    pub fn standard() -> RequestShape<'static> {
        RequestShape {
            project_ref: PROJECT,
            surface_id: SURFACE,
            revision_ref: REVISION,
            freshness_revision: REVISION,
        }
    }
}

fn query() -> Value {
    Value::Object(obj! {"query" => QUERY, "query_summary" => QUERY_SUMMARY})
}

fn freshness(revision: &str) -> Map {
    obj! {"source_truth_current" => true, "source_revision" => revision}
}

/// A `function_boundary` recall request packet (with its guard) for `shape`.
pub fn recall_request(shape: RequestShape<'_>) -> Result<Map, EvaluationError> {
    let request = obj! {
        "workspace_ref" => WORKSPACE,
        "project_ref" => shape.project_ref,
        "surface_id" => shape.surface_id,
        "revision_ref" => shape.revision_ref,
        "mode" => "function_boundary",
        "queries" => vec![query()],
        "limit" => 3,
        "observed_at" => OBSERVED_AT,
        "freshness_context" => freshness(shape.freshness_revision),
        "conflict_state" => "clear",
        "raw_content_captured" => false,
    };
    Ok(recall::build_recall_request(
        &corpus(),
        &request,
        Some(&read_checkpoint(shape.project_ref, shape.surface_id)),
    )?)
}

/// A provider hit serving `record` (sorted-key JSON) at `<scope>/<suffix>.json`.
pub fn provider_item(record: &Map, suffix: &str) -> RetrievedItem {
    RetrievedItem {
        resource_ref: format!("{SCOPE_REF}/{suffix}.json"),
        summary: pystr(record.get("content_summary")),
        content: digest::j1(&Value::Object(record.clone())),
        score: Some(0.9),
    }
}

fn recall_with(
    request: &Map,
    provider: &FixtureProvider,
) -> Result<RecallSession, EvaluationError> {
    Ok(recall::execute_recall(
        request,
        &binding(),
        ProviderSource::Injected(provider),
    )?)
}

fn packet_str(packet: &Map, key: &str) -> String {
    pystr(packet.get(key))
}

fn packet_bool(packet: &Map, key: &str) -> bool {
    packet.get(key) == Some(&Value::Bool(true))
}

fn packet_count(packet: &Map, key: &str) -> usize {
    match packet.get(key) {
        Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

fn guard_reasons(request: &Map) -> Vec<String> {
    request
        .get("guard")
        .and_then(|g| g.get("reason_codes"))
        .and_then(Value::as_array)
        .map(|codes| codes.iter().map(|c| pystr(Some(c))).collect())
        .unwrap_or_default()
}

/// Writes any fixture provider saw, summed over the providers of one case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteTally {
    pub provider_write_attempts: usize,
}

impl WriteTally {
    fn of(providers: &[&FixtureProvider]) -> WriteTally {
        WriteTally {
            provider_write_attempts: providers.iter().map(|p| p.write_attempts()).sum(),
        }
    }
}

/// Case 1: the active record survives a serialize/parse "restart" and is recalled.
#[derive(Debug, Clone)]
pub struct RestartObservation {
    pub serialized_bytes: usize,
    pub record_schema_version: String,
    pub recall_status: String,
    pub readback_verified: bool,
    pub provider_call_count: usize,
    pub writes: WriteTally,
}

pub fn compact_restart() -> Result<RestartObservation, EvaluationError> {
    let encoded = digest::j1(&Value::Object(active_record()?));
    let restarted = match json::parse(&encoded) {
        Ok(Value::Object(map)) => map,
        _ => {
            return Err(EvaluationError::Fixture(
                "restarted record is not an object",
            ));
        }
    };
    let provider = FixtureProvider::new(vec![provider_item(&restarted, "active")]);
    let session = recall_with(&recall_request(RequestShape::standard())?, &provider)?;
    Ok(RestartObservation {
        serialized_bytes: encoded.len(),
        record_schema_version: packet_str(&restarted, "schema_version"),
        recall_status: packet_str(&session.packet, "status"),
        readback_verified: packet_bool(&session.packet, "result_readback_verified"),
        provider_call_count: provider.call_count(),
        writes: WriteTally::of(&[&provider]),
    })
}

/// Case 2: another project and another surface are both stopped before the provider.
#[derive(Debug, Clone)]
pub struct ScopeObservation {
    pub project_status: String,
    pub project_reason_codes: Vec<String>,
    pub surface_status: String,
    pub surface_reason_codes: Vec<String>,
    pub provider_call_count: usize,
    pub writes: WriteTally,
}

pub fn scope_isolation() -> Result<ScopeObservation, EvaluationError> {
    let wrong_project = recall_request(RequestShape {
        project_ref: "repository:other",
        ..RequestShape::standard()
    })?;
    let wrong_surface = recall_request(RequestShape {
        surface_id: "semantic_preference.selection",
        ..RequestShape::standard()
    })?;
    let provider = FixtureProvider::new(vec![provider_item(&active_record()?, "active")]);
    let project = recall_with(&wrong_project, &provider)?;
    let surface = recall_with(&wrong_surface, &provider)?;
    Ok(ScopeObservation {
        project_status: packet_str(&project.packet, "status"),
        project_reason_codes: guard_reasons(&wrong_project),
        surface_status: packet_str(&surface.packet, "status"),
        surface_reason_codes: guard_reasons(&wrong_surface),
        provider_call_count: provider.call_count(),
        writes: WriteTally::of(&[&provider]),
    })
}

/// Case 3: superseded and revoked copies of the record are never recalled.
#[derive(Debug, Clone)]
pub struct InactiveObservation {
    pub recall_status: String,
    pub result_count: usize,
    pub readback_verified: bool,
    pub writes: WriteTally,
}

pub fn inactive_lifecycle() -> Result<InactiveObservation, EvaluationError> {
    let with_state = |state: &str| -> Result<Map, EvaluationError> {
        let mut record = active_record()?;
        record.insert("lifecycle", obj! {"state" => state});
        Ok(record)
    };
    let provider = FixtureProvider::new(vec![
        provider_item(&with_state("superseded")?, "superseded"),
        provider_item(&with_state("revoked")?, "revoked"),
    ]);
    let session = recall_with(&recall_request(RequestShape::standard())?, &provider)?;
    Ok(InactiveObservation {
        recall_status: packet_str(&session.packet, "status"),
        result_count: packet_count(&session.packet, "result_count"),
        readback_verified: packet_bool(&session.packet, "result_readback_verified"),
        writes: WriteTally::of(&[&provider]),
    })
}

/// Case 4: a request at a stale revision is guard-blocked.
#[derive(Debug, Clone)]
pub struct StaleObservation {
    pub recall_status: String,
    pub reason_codes: Vec<String>,
    pub provider_call_count: usize,
    pub writes: WriteTally,
}

pub fn stale_source() -> Result<StaleObservation, EvaluationError> {
    let request = recall_request(RequestShape {
        revision_ref: "revision:stale",
        freshness_revision: "revision:stale",
        ..RequestShape::standard()
    })?;
    let provider = FixtureProvider::new(vec![provider_item(&active_record()?, "active")]);
    let session = recall_with(&request, &provider)?;
    Ok(StaleObservation {
        recall_status: packet_str(&session.packet, "status"),
        reason_codes: guard_reasons(&request),
        provider_call_count: provider.call_count(),
        writes: WriteTally::of(&[&provider]),
    })
}

/// Case 5: the candidate guard passes only when the checkpoint names the source actor.
#[derive(Debug, Clone)]
pub struct AuthorityObservation {
    pub matching_actor_guard: bool,
    pub mismatched_actor_guard: bool,
    pub reason_codes: Vec<String>,
}

pub fn multi_person_authority() -> Result<AuthorityObservation, EvaluationError> {
    let accepted = candidate::build_candidate(&proposal(MAINTAINER), Some(&authority(MAINTAINER)))?;
    let mismatched =
        candidate::build_candidate(&proposal(MAINTAINER), Some(&authority("github:user:other")))?;
    let passed = |packet: &Map| {
        packet.get("guard").and_then(|g| g.get("passed")) == Some(&Value::Bool(true))
    };
    Ok(AuthorityObservation {
        matching_actor_guard: passed(&accepted),
        mismatched_actor_guard: passed(&mismatched),
        reason_codes: guard_reasons(&mismatched),
    })
}

/// Cases 6 and 7: Issue Fix patch planning with a model application that ranks the
/// focused fix first.
#[derive(Debug, Clone)]
pub struct PatchPlanningObservation {
    /// The plan after application (the base plan when the application failed open).
    pub patch_plan: Value,
    /// The `reward_memory_application_v0` packet.
    pub application: Map,
    pub shared_core: &'static str,
    pub writes: WriteTally,
}

impl PatchPlanningObservation {
    /// The application status (`applied`, `failed`, ...).
    pub fn status(&self) -> String {
        packet_str(&self.application, "status")
    }

    /// The compact application receipt.
    pub fn receipt(&self) -> Map {
        self.application
            .get("receipt")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// The first candidate of the plan, if any.
    pub fn top_candidate(&self) -> Option<String> {
        self.patch_plan
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .map(|c| pystr(Some(c)))
    }
}

/// The Issue Fix patch-planning boundary: an explicit recall at `issue_fix.patch_planning`
/// and a model application whose output must stay a patch plan (an object); any other
/// output fails open to `base_plan`.
pub fn patch_planning(
    base_plan: &Value,
    provider: &FixtureProvider,
    application_id: &str,
    artifact_ref: &str,
    apply: &Applier<'_>,
) -> Result<(Value, Map), EvaluationError> {
    let guarded = |base: &Value, items: &[RecallItem]| -> Result<Value, String> {
        let decision = apply(base, items)?;
        match decision.get("output") {
            Some(Value::Object(_)) => Ok(decision),
            _ => Err("Issue Fix reward-memory output must be a patch plan".to_owned()),
        }
    };
    let request = recall_request(RequestShape::standard())?;
    let session = recall_with(&request, provider)?;
    let mut application = recall::apply_recall(
        base_plan,
        &session,
        application_id,
        Some(artifact_ref),
        Some(&guarded),
    )?;
    let plan = application.remove("output").unwrap_or(Value::Null);
    Ok((plan, application))
}

/// The ranking application: focused fix first, attributed to the first recalled item.
fn rank_focused_fix_first(base: &Value, items: &[RecallItem]) -> Result<Value, String> {
    let mut plan = base
        .as_object()
        .cloned()
        .ok_or("base plan is not an object")?;
    plan.insert("candidates", vec!["focused_fix", "broad_generic_patch"]);
    let first = items.first().ok_or("no recalled item to attribute")?;
    Ok(Value::Object(obj! {
        "outcome" => "applied",
        "output" => plan,
        "memory_refs" => vec![first.memory_ref.as_str()],
        "reasoning_summary" => "Current code verifies the narrow boundary; rank the focused fix first.",
        "current_artifact_verified" => true,
    }))
}

pub fn issue_fix_application() -> Result<PatchPlanningObservation, EvaluationError> {
    let provider = FixtureProvider::new(vec![provider_item(&active_record()?, "active")]);
    let base = Value::Object(obj! {"candidates" => vec!["broad_generic_patch", "focused_fix"]});
    let (patch_plan, application) = patch_planning(
        &base,
        &provider,
        "issue-fix:stage4:ranking",
        "patch-plan:stage4",
        &rank_focused_fix_first,
    )?;
    Ok(PatchPlanningObservation {
        patch_plan,
        application,
        shared_core: SHARED_CORE,
        writes: WriteTally::of(&[&provider]),
    })
}

/// Case 8: the PR #3237 Issue Fix regression observation through the route guard.
pub fn pr_3237_route() -> Result<Map, EvaluationError> {
    Ok(route::route_packet(&route::pr_3237_observation())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_record_serializes_to_1262_bytes() {
        let record = active_record().expect("fixture record builds");
        assert_eq!(digest::j1(&Value::Object(record)).len(), 1262);
    }

    #[test]
    fn the_provider_double_refuses_writes_and_counts_them() {
        let provider = FixtureProvider::new(Vec::new());
        let request = SyncRequest {
            namespace: "reward_memory".to_owned(),
            resources: Vec::new(),
            timeout_seconds: 5.0,
            observed_at: OBSERVED_AT.to_owned(),
            execute: true,
        };
        assert!(provider.try_sync(&request).is_err());
        assert_eq!(provider.write_attempts(), 1);
    }

    #[test]
    fn the_ranking_receipt_matches_the_recorded_digests() {
        let observation = issue_fix_application().expect("application runs");
        let receipt = observation.receipt();
        assert_eq!(observation.status(), "applied");
        assert_eq!(
            receipt.get("memory_ref_digests"),
            Some(&Value::from(vec!["718698c9eea101fd"]))
        );
        let digest = receipt
            .get("query_evidence")
            .and_then(|q| q.as_array())
            .and_then(|q| q.first())
            .and_then(|q| q.get("query_digest"));
        assert_eq!(digest, Some(&Value::from("56a738122a6c9191")));
    }
}
