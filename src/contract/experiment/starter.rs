//! The documents `reward-memory init` writes (issue 26): a registry with one goal and
//! agent, its `reward_memory_experiment_config_v1` with two corpora on the embedded store,
//! each with its standing policy, and an example lesson event for the second corpus.
//!
//! The two corpora:
//! - `issue_fix_patch_policy` (`hard_policy`), the Issue Fix policy corpus of the embedded
//!   example (`fixtures/ingest_event/embedded/`): maintainer corrections with an
//!   authority checkpoint, surface `issue_fix.patch_planning`;
//! - `agent_learnings` (`procedural_experience`): the agent's own distilled experience,
//!   surface `agent.learnings`, written through the scoped feedback adapter. Its standing
//!   policy admits source kind `agent_observation` from actor role `agent_self` and grants
//!   no action scope: a lesson is advisory (the candidate guard refuses an advisory class
//!   that requests action authority, `advisory_class_requested_action_authority`) and
//!   needs its current artifact verified (`procedural_experience_current_artifact_unverified`).
//!   This is the standing policy mechanism as LoopX has it: its guards are unchanged, the
//!   policy names what it admits.
//!
//! Pure: paths, ids and the time come in; the values go out, and the shell writes them.

use schemars::JsonSchema;
use serde::Serialize;

use crate::wire::digest::short16;
use crate::wire::json::{Map, Value, str_list};
use crate::wire::schema::AlwaysTrue;
use crate::wire::text::{self, FieldError};
use crate::{const_string, obj};

/// Where the experiment config lives, relative to the goal's `repo`.
pub const CONFIG_PATH: &str = ".loopx/config/reward-memory/experiment.json";
/// The Issue Fix corpus and its surface.
pub const ISSUE_FIX_CORPUS: &str = "issue_fix_patch_policy";
pub const ISSUE_FIX_SURFACE: &str = "issue_fix.patch_planning";
/// The agent-learnings corpus and its surface.
pub const LEARNINGS_CORPUS: &str = "agent_learnings";
pub const LEARNINGS_SURFACE: &str = "agent.learnings";
/// The source kind and actor role the agent-learnings policy admits.
pub const AGENT_SOURCE_KIND: &str = "agent_observation";
pub const AGENT_ACTOR_ROLE: &str = "agent_self";
/// The revision both corpora are bound to until the owner moves it.
pub const REVISION: &str = "revision:initial";

/// What the documents are made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarterSetup {
    /// The goal's `repo`: the absolute directory holding [`CONFIG_PATH`].
    pub repo: String,
    pub goal_id: String,
    pub agent_id: String,
    pub workspace_ref: String,
    pub project_ref: String,
    /// The example lesson's `observed_at` (aware ISO time).
    pub observed_at: String,
}

/// Why `init` wrote nothing (or not everything).
#[derive(Debug, thiserror::Error)]
pub enum StarterError {
    /// An id or ref given to `init` is not a public-safe token.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A file `init` would write is already there.
    #[error(
        "{0} already exists: init writes a new setup only; choose an empty directory or remove it"
    )]
    Exists(String),
    /// A file could not be written.
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

/// The ids and refs of `setup` checked as the registry and the contracts will read them.
pub fn check_setup(setup: &StarterSetup) -> Result<(), StarterError> {
    super::check_agent_id(&setup.agent_id)?;
    let goal = Value::from(setup.goal_id.as_str());
    text::token(Some(&goal), "--goal-id")?;
    for (value, label) in [
        (&setup.workspace_ref, "--workspace-ref"),
        (&setup.project_ref, "--project-ref"),
    ] {
        text::token(Some(&Value::from(value.as_str())), label)?;
    }
    Ok(())
}

const_string!(InitVersion, "reward_memory_init_v0");
const_string!(Initialized, "initialized");

/// One corpus `init` declared, and what its standing policy admits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InitCorpus {
    pub corpus_id: String,
    pub class_id: String,
    pub surface_id: String,
    pub adapter: String,
    pub allowed_source_kinds: Vec<String>,
    pub allowed_actor_roles: Vec<String>,
    /// Empty for an advisory corpus: its memories grant no action authority.
    pub allowed_action_scopes: Vec<String>,
}

/// The shell commands `init` prints, in order: each runs as printed (the recall saves
/// its packet for the apply, which reads it with `jq`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InitCommands {
    pub ingest: String,
    pub recall: String,
    pub apply: String,
}

/// `reward-memory init`: `reward_memory_init_v0`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InitPacket {
    pub ok: AlwaysTrue,
    pub schema_version: InitVersion,
    pub status: Initialized,
    /// The absolute directory written.
    pub directory: String,
    pub goal_id: String,
    pub agent_id: String,
    /// The absolute paths of the written registry, experiment config and example lesson.
    pub registry: String,
    pub experiment_config: String,
    pub lesson_event: String,
    /// The runtime root the commands use (the embedded store, sessions, ledger).
    pub runtime_root: String,
    pub corpora: Vec<InitCorpus>,
    pub commands: InitCommands,
}

/// What each declared corpus admits, from the config `starter` built.
pub fn declared_corpora() -> Vec<InitCorpus> {
    let owned = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
    vec![
        InitCorpus {
            corpus_id: ISSUE_FIX_CORPUS.to_owned(),
            class_id: "hard_policy".to_owned(),
            surface_id: ISSUE_FIX_SURFACE.to_owned(),
            adapter: "issue_fix_maintainer_feedback".to_owned(),
            allowed_source_kinds: owned(&["maintainer_correction"]),
            allowed_actor_roles: owned(&["verified_repository_core_contributor"]),
            allowed_action_scopes: owned(&["issue_fix:scope_selection"]),
        },
        InitCorpus {
            corpus_id: LEARNINGS_CORPUS.to_owned(),
            class_id: "procedural_experience".to_owned(),
            surface_id: LEARNINGS_SURFACE.to_owned(),
            adapter: "scoped_feedback".to_owned(),
            allowed_source_kinds: owned(&[AGENT_SOURCE_KIND]),
            allowed_actor_roles: owned(&[AGENT_ACTOR_ROLE]),
            allowed_action_scopes: Vec::new(),
        },
    ]
}

const_string!(DemoVersion, "reward_memory_demo_v0");

/// One step of `init --demo`: what ran, how it ended and what that shows.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DemoStep {
    /// `ingest`, `recall`, `apply`, `attribute`, `ledger`, `evaluate`, `recall_with_prior`,
    /// `recall_without_prior`.
    pub step: String,
    /// The subcommand line it ran (the route's `--registry`/`--runtime-root` left out).
    pub command: String,
    /// The packet's `status` (or the error).
    pub status: String,
    /// Whether the step came out as the loop expects.
    pub passed: bool,
    /// What the step shows, in one sentence.
    pub proved: String,
}

/// `reward-memory init --demo`: `reward_memory_demo_v0`, the whole loop run once.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DemoPacket {
    /// True when every step passed.
    pub ok: bool,
    pub schema_version: DemoVersion,
    /// `completed` (every step passed) or `failed` (the first failed step ends the run).
    pub status: String,
    /// Where the setup, the store and the ledger were (removed afterwards unless a
    /// directory was given).
    pub directory: String,
    pub kept: bool,
    pub steps: Vec<DemoStep>,
}

/// The three documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Starter {
    pub registry: Value,
    pub config: Value,
    /// An `ingest-event` input: one lesson for the agent-learnings corpus.
    pub lesson: Value,
}

fn owner(setup: &StarterSetup) -> String {
    format!("owner:{}", setup.goal_id)
}

fn scope_ref(corpus_id: &str) -> String {
    format!("embedded://reward-memory/{}", corpus_id.replace('_', "-"))
}

fn corpus(setup: &StarterSetup, corpus_id: &str, class_id: &str, surface: &str) -> Map {
    let source_of_truth = if class_id == "hard_policy" {
        "reviewed_maintainer_feedback"
    } else {
        "reviewed_agent_experience"
    };
    obj! {
        "corpus_id" => corpus_id,
        "class_id" => class_id,
        "provider_id" => "embedded",
        "owner_ref" => owner(setup),
        "source_of_truth" => source_of_truth,
        "read_authority" => "module_scoped",
        "write_authority" => "provider_managed",
        "scope" => obj! {
            "workspace_ref" => setup.workspace_ref.as_str(),
            "project_ref" => setup.project_ref.as_str(),
            "surface_ids" => str_list(&[surface]),
        },
        "freshness" => obj! {
            "mode" => "revision_bound",
            "source_revision" => REVISION,
        },
        "lifecycle" => obj! {"state" => "active", "supersedes" => Value::Array(Box::default())},
        "retrieval" => obj! {
            "index_required" => true,
            "readback_required" => true,
            "application_receipt_required" => true,
        },
        "maintenance" => obj! {
            "writeback_triggers" => str_list(&[source_of_truth]),
            "closure_policy" => "write_exact_readback_then_recall",
            "retirement_authority" => owner(setup),
        },
        "privacy" => obj! {"visibility" => "private", "raw_content_in_registry" => false},
        "provider_scope_ref_digest" => short16(&scope_ref(corpus_id)),
    }
}

/// The standing policy of one corpus: what it admits without a manual review.
fn standing_policy(setup: &StarterSetup, admits: &InitCorpus) -> Map {
    let corpus_id = admits.corpus_id.as_str();
    obj! {
        "schema_version" => "reward_memory_standing_policy_v0",
        "policy_id" => format!("policy:{}:{}", setup.goal_id, corpus_id.replace('_', "-")),
        "enabled" => true,
        "auto_activate" => true,
        "owner_ref" => owner(setup),
        "reviewer_ref" => format!("agent:{}", setup.agent_id),
        "authority_source_ref" => format!("policy:{}:reward-memory", setup.goal_id),
        "scope" => obj! {
            "workspace_ref" => setup.workspace_ref.as_str(),
            "project_ref" => setup.project_ref.as_str(),
            "surface_ids" => str_list(&[admits.surface_id.as_str()]),
        },
        "allowed_target_classes" => str_list(&[admits.class_id.as_str()]),
        "allowed_source_kinds" => str_list(&admits.allowed_source_kinds),
        "allowed_actor_roles" => str_list(&admits.allowed_actor_roles),
        "allowed_action_scopes" => str_list(&admits.allowed_action_scopes),
        "raw_content_captured" => false,
    }
}

fn surface(corpus_id: &str, surface_id: &str, adapter: &str, profile_id: &str) -> Map {
    obj! {
        "surface_id" => surface_id,
        "adapter" => adapter,
        "corpus_ids" => str_list(&[corpus_id]),
        "ingest_corpus_id" => corpus_id,
        "recall_profile" => obj! {
            "profile_id" => profile_id,
            "mode" => "function_boundary",
            "max_queries" => 1,
            "limit" => 5,
        },
    }
}

/// The registry, experiment config and example lesson for `setup`.
pub fn starter(setup: &StarterSetup) -> Starter {
    let registry = obj! {
        "schema_version" => 1,
        "goals" => Value::Array(vec![Value::Object(obj! {
            "id" => setup.goal_id.as_str(),
            "repo" => setup.repo.as_str(),
            "coordination" => obj! {"registered_agents" => str_list(&[setup.agent_id.as_str()])},
            "control_plane" => obj! {
                "reward_memory" => obj! {
                    "enabled" => true,
                    "experimental" => true,
                    "config_path" => CONFIG_PATH,
                    "enabled_agents" => str_list(&[setup.agent_id.as_str()]),
                },
            },
        })].into()),
    };
    let declared = declared_corpora();
    let entries: Vec<Value> = declared
        .iter()
        .map(|c| {
            Value::Object(obj! {
                "corpus" => corpus(setup, &c.corpus_id, &c.class_id, &c.surface_id),
                "standing_policy" => standing_policy(setup, c),
            })
        })
        .collect();
    let surfaces: Vec<Value> = declared
        .iter()
        .map(|c| {
            Value::Object(surface(
                &c.corpus_id,
                &c.surface_id,
                &c.adapter,
                &format!("{}_function_boundary_v1", c.corpus_id),
            ))
        })
        .collect();
    let corpus_scopes: Vec<Value> = declared
        .iter()
        .map(|c| {
            Value::Object(
                obj! {"corpus_id" => c.corpus_id.as_str(), "scope_ref" => scope_ref(&c.corpus_id)},
            )
        })
        .collect();
    let config = obj! {
        "schema_version" => "reward_memory_experiment_config_v1",
        "project_provider_binding" => obj! {
            "provider_id" => "embedded",
            "namespace" => "reward_memory",
            "timeout_seconds" => 30,
            "corpus_scopes" => Value::Array(corpus_scopes.into()),
        },
        "corpora" => Value::Array(entries.into()),
        "surfaces" => Value::Array(surfaces.into()),
        "automation" => obj! {
            "automatic_recall" => false,
            "automatic_ingest" => false,
            "fail_open" => true,
        },
    };
    Starter {
        registry: Value::Object(registry),
        config: Value::Object(config),
        lesson: Value::Object(lesson(setup)),
    }
}

/// The example lesson: one distilled experience of the agent, advisory, verified against
/// its current artifact.
fn lesson(setup: &StarterSetup) -> Map {
    let agent = format!("agent:{}", setup.agent_id);
    obj! {
        "adapter" => "scoped_feedback",
        "event" => obj! {
            "schema_version" => "scoped_feedback_reward_memory_event_v0",
            "feedback_ref" => format!("{agent}:lesson:focused-tests"),
            "workspace_ref" => setup.workspace_ref.as_str(),
            "project_ref" => setup.project_ref.as_str(),
            "surface_id" => LEARNINGS_SURFACE,
            "revision_ref" => REVISION,
            "target_class" => "procedural_experience",
            "content_summary" => "Run the focused tests of the changed module before committing: the full suite alone hid a failing case.",
            "source" => obj! {
                "source_kind" => AGENT_SOURCE_KIND,
                "source_ref" => format!("{agent}:task:first"),
                "actor_ref" => agent.as_str(),
                "actor_role" => AGENT_ACTOR_ROLE,
            },
            "reasoning" => obj! {
                "summary" => "The focused tests caught the regression that the full suite reported only as a flaky failure.",
                "confidence" => "medium",
            },
            "guard_context" => obj! {
                "source_freshness" => "current",
                "conflict_state" => "clear",
                "current_artifact_verified" => true,
            },
            "requested_action_scopes" => Value::Array(Box::default()),
            "raw_content_captured" => false,
        },
        "observed_at" => setup.observed_at.as_str(),
    }
}

/// The demo's three lessons (`init --demo`): the example lesson's event with another
/// summary each. A query for `tests commits` finds the first two, one word each (under
/// stemming too), so their relevance is close enough for the bounded prior to reorder.
pub fn demo_lessons(setup: &StarterSetup) -> Vec<Value> {
    [
        (
            "tests",
            "Run the focused tests of the changed module before pushing.",
        ),
        (
            "commits",
            "Prefer small reversible commits over sweeping rewrites.",
        ),
        ("help", "Document every new command flag in its help text."),
    ]
    .iter()
    .map(|(name, summary)| {
        let mut lesson = lesson(setup);
        if let Some(Value::Object(event)) = lesson.get_mut("event") {
            event.insert("content_summary", *summary);
            event.insert(
                "feedback_ref",
                format!("agent:{}:lesson:{name}", setup.agent_id),
            );
        }
        Value::Object(lesson)
    })
    .collect()
}

/// The demo's rank-prior profile (`memory_utility_rank_prior_profile_v0`) and the
/// evaluation profile that wraps it for `rank-evaluate`.
pub fn demo_profiles() -> (Value, Value) {
    let profile = obj! {
        "schema_version" => "memory_utility_rank_prior_profile_v0",
        "profile_id" => "profile:demo",
        "semantic_floor" => 0.0,
        "candidate_pool" => 8,
        "modifier_bounds" => Value::Array(vec![Value::Float(0.5), Value::Float(2.0)].into()),
        "min_evidence_basis" => "deterministic_effect",
        "allow_evaluator_inference" => false,
        "min_support" => 1,
    };
    let evaluation = obj! {
        "schema_version" => "memory_utility_ranking_evaluation_profile_v0",
        "rank_prior" => profile.clone(),
    };
    (Value::Object(profile), Value::Object(evaluation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::experiment::{config_from_document, surface_route};

    fn setup() -> StarterSetup {
        StarterSetup {
            repo: "/tmp/rm-init".to_owned(),
            goal_id: "my-goal".to_owned(),
            agent_id: "agent".to_owned(),
            workspace_ref: "workspace:local".to_owned(),
            project_ref: "project:local".to_owned(),
            observed_at: "2026-12-01T00:00:00+00:00".to_owned(),
        }
    }

    #[test]
    fn the_config_normalizes_with_a_route_for_each_surface() {
        let starter = starter(&setup());
        let config = config_from_document(&starter.config).expect("a valid config");
        assert_eq!(config.surfaces.len(), 2);
        for surface in [ISSUE_FIX_SURFACE, LEARNINGS_SURFACE] {
            let route = surface_route(&config, surface, None).expect("route");
            assert_eq!(route.surface_id, surface);
        }
        let learnings = surface_route(&config, LEARNINGS_SURFACE, None).expect("route");
        assert_eq!(learnings.corpus_ids, [LEARNINGS_CORPUS]);
    }

    #[test]
    fn the_learnings_policy_admits_the_agent_and_grants_no_action_scope() {
        let starter = starter(&setup());
        let policy = starter
            .config
            .get("corpora")
            .and_then(Value::as_array)
            .and_then(|c| c.get(1))
            .and_then(|e| e.get("standing_policy"))
            .cloned()
            .expect("policy");
        assert_eq!(
            policy.get("allowed_source_kinds"),
            Some(&str_list(&[AGENT_SOURCE_KIND]))
        );
        assert_eq!(
            policy.get("allowed_action_scopes"),
            Some(&Value::Array(Box::default()))
        );
        let event = starter.lesson.get("event").expect("event");
        assert_eq!(
            event
                .get("source")
                .and_then(|s| s.get("source_kind"))
                .and_then(Value::as_str),
            Some(AGENT_SOURCE_KIND)
        );
    }
}
