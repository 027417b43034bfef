//! The two event adapters (§9.3, §9.4): strict field mapping of one compact event into the
//! shared candidate, then the ingest core, then the adapter's extension keys. Neither
//! adapter owns a lifecycle, store or routing of its own.

use crate::contract::candidate::{build_candidate, issue_fix_candidate};
use crate::obj;
use crate::recall::execution_evidence;
use crate::wire::digest::short16;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt;
use crate::wire::text::{self, FieldError};

use super::IngestError;
use super::core::{self, Preparation, Prepared};
use super::policy::normalize_standing_policy;

/// Schema of an Issue Fix feedback event (also its `adapter_schema_version`).
pub const ISSUE_FIX_EVENT_SCHEMA_VERSION: &str = "issue_fix_reward_memory_event_v0";
/// Schema of a scoped feedback event.
pub const SCOPED_FEEDBACK_EVENT_SCHEMA_VERSION: &str = "scoped_feedback_reward_memory_event_v0";
/// Schema of the scoped feedback adapter.
pub const SCOPED_FEEDBACK_ADAPTER_SCHEMA_VERSION: &str =
    "scoped_feedback_reward_memory_candidate_adapter_v0";

const SOURCE_FIELDS: &[&str] = &["source_kind", "source_ref", "actor_ref", "actor_role"];
const REASONING_FIELDS: &[&str] = &["summary", "confidence"];
const GUARD_FIELDS: &[&str] = &[
    "source_freshness",
    "conflict_state",
    "current_artifact_verified",
];

const ISSUE_FIX_EVENT_FIELDS: &[&str] = &[
    "schema_version",
    "issue_ref",
    "workspace_ref",
    "repository_ref",
    "surface_id",
    "revision_ref",
    "target_class",
    "content_summary",
    "source",
    "reasoning",
    "guard_context",
    "requested_action_scopes",
    "raw_content_captured",
];

const SCOPED_EVENT_FIELDS: &[&str] = &[
    "schema_version",
    "feedback_ref",
    "workspace_ref",
    "project_ref",
    "user_ref",
    "peer_ref",
    "session_ref",
    "surface_id",
    "revision_ref",
    "target_class",
    "content_summary",
    "source",
    "reasoning",
    "guard_context",
    "requested_action_scopes",
    "raw_content_captured",
];

/// How the write step runs: a dry run, or an execution callback that takes the prepared
/// write and returns the finished receipt (see [`core::execute`]).
pub enum Mode<'a> {
    DryRun,
    Execute(&'a dyn Fn(&Prepared) -> Result<Map, IngestError>),
}

/// The inputs every adapter takes besides its event.
pub struct Route<'a> {
    pub corpus: &'a Value,
    pub standing_policy: &'a Value,
    pub provider_binding: &'a Map,
    /// `str(input.observed_at or "")`, unstripped.
    pub observed_at: &'a str,
}

fn or_null(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Null)
}

fn hard_policy_checkpoint(
    event: &Map,
    policy: &Map,
    source: &Map,
    project_key: &str,
) -> Option<Value> {
    (event.get("target_class").and_then(Value::as_str) == Some("hard_policy")).then(|| {
        Value::Object(obj! {
            "verified" => policy.get("enabled") == Some(&Value::Bool(true)),
            "source_ref" => or_null(policy.get("authority_source_ref")),
            "actor_ref" => or_null(source.get("actor_ref")),
            "actor_role" => or_null(source.get("actor_role")),
            "project_ref" => or_null(event.get(project_key)),
            "action_scopes" => event
                .get("requested_action_scopes")
                .filter(|v| v.is_truthy())
                .cloned()
                .unwrap_or(Value::Array(Box::default())),
        })
    })
}

/// The most characters of memory text the embedded store takes from one event (ours);
/// a longer `content_summary` is refused with this bound named.
pub const MAX_MEMORY_TEXT_CHARS: usize = 65_536;
/// The LoopX contract's bound on a record's `content_summary`.
const RECORD_SUMMARY_CHARS: usize = 500;

/// An event's whole memory text, when the LoopX contract shortened it for the record.
struct WholeText {
    text: String,
    /// Its length in characters (after whitespace is collapsed, as the contract counts).
    chars: usize,
}

/// For the embedded store (ours), the event's whole `content_summary` when the record
/// keeps only its first 500 characters: indexed for search beside the record, and named
/// in the receipt. `None` for another provider or a summary that fits. Refused when it
/// is longer than [`MAX_MEMORY_TEXT_CHARS`] or not public-safe past the part the
/// contract checked. Run it after the candidate was built (the contract's own refusals
/// come first).
fn whole_text(raw: &Map, binding: &Map) -> Result<Option<WholeText>, FieldError> {
    if pyfmt::pystr_strip(binding.get("provider_id")) != crate::provider::embedded::PROVIDER_ID {
        return Ok(None);
    }
    let summary = raw.get("content_summary");
    let (collapsed, chars) = pyfmt::collapse_ws_within(&pyfmt::pystr(summary), usize::MAX);
    let chars = chars.unwrap_or(usize::MAX);
    if chars <= RECORD_SUMMARY_CHARS {
        return Ok(None);
    }
    if chars > MAX_MEMORY_TEXT_CHARS {
        return Err(FieldError(format!(
            "content_summary is {chars} characters; the embedded store takes at most \
             {MAX_MEMORY_TEXT_CHARS} (send a shorter memory)"
        )));
    }
    // At most MAX_MEMORY_TEXT_CHARS characters: compacting to that bound keeps it whole.
    let text = text::public_safe_compacted(summary, collapsed)
        .ok_or_else(|| FieldError::new("content_summary must be compact and public-safe"))?;
    Ok(Some(WholeText { text, chars }))
}

/// An event staged for its write: everything an ingest computes before a store is
/// touched (the adapter's checks, the candidate, the guard, the record), and what its
/// receipt gains after the write. [`Staged::finish`] runs the write in a [`Mode`] and
/// builds the receipt; staging is pure, so a JSON Lines ingest stages its next lines
/// while the store writes the current one.
#[derive(Debug)]
pub struct Staged {
    preparation: Preparation,
    /// The length of the event's whole summary, when the record keeps it shortened (its
    /// text went to the prepared write's search text).
    whole_chars: Option<usize>,
    tail: Tail,
    /// The experiment status of the configured form, added as `experiment`.
    experiment: Option<Map>,
}

/// The adapter's own keys of the receipt.
#[derive(Debug)]
enum Tail {
    IssueFix {
        issue_ref: Option<String>,
        summary_digest: String,
    },
    Scoped {
        feedback_ref: String,
        summary_digest: String,
    },
}

impl Staged {
    fn new(
        candidate_packet: &Map,
        route: &Route<'_>,
        policy: &Map,
        raw_event: &Map,
        tail: Tail,
    ) -> Result<Staged, IngestError> {
        let whole = whole_text(raw_event, route.provider_binding)?;
        let whole_chars = whole.as_ref().map(|w| w.chars);
        let mut preparation = core::prepare(
            candidate_packet,
            route.corpus,
            policy,
            route.provider_binding,
            route.observed_at,
        )?;
        if let Preparation::Ready(prepared) = &mut preparation {
            prepared.search_text = whole.map(|w| w.text);
        }
        Ok(Staged {
            preparation,
            whole_chars,
            tail,
            experiment: None,
        })
    }

    /// The same staged event with the experiment status its receipt names.
    pub fn with_experiment(mut self, experiment: Option<Map>) -> Staged {
        self.experiment = experiment;
        self
    }

    /// The same staged event with its readback's recall request built ahead
    /// ([`core::readback_request`]), for a write that will run: a JSON Lines ingest
    /// builds it on its staging thread. A request that cannot be built is left to the
    /// readback, which refuses it as before.
    pub fn with_readback_request(mut self) -> Staged {
        if let Preparation::Ready(prepared) = &mut self.preparation {
            prepared.readback_request = core::readback_request(prepared).ok();
        }
        self
    }

    /// Runs the write in `mode` (a dry run plans it) and returns the receipt.
    pub fn finish(self, mode: &Mode<'_>) -> Result<Map, IngestError> {
        let receipt = match self.preparation {
            Preparation::Blocked(receipt) => receipt,
            Preparation::Ready(prepared) => match mode {
                Mode::DryRun => core::planned(&prepared),
                Mode::Execute(run) => run(&prepared)?,
            },
        };
        let result = match self.whole_chars {
            None => receipt,
            Some(chars) => receipt.merged(&obj! {
                "content_summary_shortened" => true,
                "content_summary_chars" => chars,
            }),
        };
        let mut packet = match self.tail {
            Tail::IssueFix {
                issue_ref,
                summary_digest,
            } => {
                let readback = result.get("readback").and_then(Value::as_object);
                let evidence = execution_evidence(readback, None, Some("ingest_verification"));
                result.merged(&obj! {
                    "adapter_schema_version" => ISSUE_FIX_EVENT_SCHEMA_VERSION,
                    "issue_ref" => issue_ref,
                    "event_summary_digest" => summary_digest,
                    "execution_evidence" => evidence,
                    "next_issue_fix_call" => "run_issue_fix_patch_planning_reward_memory",
                })
            }
            Tail::Scoped {
                feedback_ref,
                summary_digest,
            } => result.merged(&obj! {
                "adapter_schema_version" => SCOPED_FEEDBACK_ADAPTER_SCHEMA_VERSION,
                "event_schema_version" => SCOPED_FEEDBACK_EVENT_SCHEMA_VERSION,
                "feedback_ref" => feedback_ref,
                "event_summary_digest" => summary_digest,
                "next_reward_memory_call" => "explicit_function_boundary_recall",
            }),
        };
        if let Some(status) = self.experiment {
            packet.insert("experiment", status);
        }
        Ok(packet)
    }
}

fn summary_digest(event: &Map) -> String {
    short16(&text::public_safe_text(event.get("content_summary"), 500).unwrap_or_default())
}

/// `issue_fix_maintainer_feedback` (§9.3): the event is validated before the policy.
pub fn ingest_issue_fix_event(
    event: &Value,
    route: &Route<'_>,
    mode: &Mode<'_>,
) -> Result<Map, IngestError> {
    stage_issue_fix_event(event, route)?.finish(mode)
}

/// [`ingest_issue_fix_event`] up to the write.
pub fn stage_issue_fix_event(event: &Value, route: &Route<'_>) -> Result<Staged, IngestError> {
    let raw = text::strict_object(Some(event), "issue_fix_event", ISSUE_FIX_EVENT_FIELDS)?;
    if raw.get("schema_version").and_then(Value::as_str) != Some(ISSUE_FIX_EVENT_SCHEMA_VERSION) {
        return Err(FieldError::new("event must use issue_fix_reward_memory_event_v0").into());
    }
    let source = text::strict_object(raw.get("source"), "issue_fix_event.source", SOURCE_FIELDS)?;
    text::strict_object(
        raw.get("reasoning"),
        "issue_fix_event.reasoning",
        REASONING_FIELDS,
    )?;
    text::strict_object(
        raw.get("guard_context"),
        "issue_fix_event.guard_context",
        GUARD_FIELDS,
    )?;
    let policy = normalize_standing_policy(route.standing_policy)?;
    let checkpoint = hard_policy_checkpoint(raw, &policy, source, "repository_ref");
    let adapter = issue_fix_candidate(raw, checkpoint.as_ref())?;
    let candidate = adapter
        .get("shared_candidate")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let tail = Tail::IssueFix {
        issue_ref: text::public_safe_text(raw.get("issue_ref"), 160),
        summary_digest: summary_digest(raw),
    };
    Staged::new(&candidate, route, &policy, raw, tail)
}

/// `scoped_feedback` (§9.4): the policy is validated before the event.
pub fn ingest_scoped_feedback_event(
    event: &Value,
    route: &Route<'_>,
    mode: &Mode<'_>,
) -> Result<Map, IngestError> {
    stage_scoped_feedback_event(event, route)?.finish(mode)
}

/// [`ingest_scoped_feedback_event`] up to the write.
pub fn stage_scoped_feedback_event(
    event: &Value,
    route: &Route<'_>,
) -> Result<Staged, IngestError> {
    let policy = normalize_standing_policy(route.standing_policy)?;
    let empty = Map::new();
    let event_map = event.as_object().unwrap_or(&empty);
    let source = event_map
        .get("source")
        .and_then(Value::as_object)
        .ok_or_else(|| FieldError::new("scoped_feedback_event.source must be an object"))?;
    let checkpoint = hard_policy_checkpoint(event_map, &policy, source, "project_ref");
    let raw = text::strict_object(Some(event), "scoped_feedback_event", SCOPED_EVENT_FIELDS)?;
    if raw.get("schema_version").and_then(Value::as_str)
        != Some(SCOPED_FEEDBACK_EVENT_SCHEMA_VERSION)
    {
        return Err(
            FieldError::new("event must use scoped_feedback_reward_memory_event_v0").into(),
        );
    }
    let feedback_ref = text::public_safe_text(raw.get("feedback_ref"), 160)
        .ok_or_else(|| FieldError::new("feedback_ref must be compact and public-safe"))?;
    text::strict_object(
        raw.get("source"),
        "scoped_feedback_event.source",
        SOURCE_FIELDS,
    )?;
    text::strict_object(
        raw.get("reasoning"),
        "scoped_feedback_event.reasoning",
        REASONING_FIELDS,
    )?;
    text::strict_object(
        raw.get("guard_context"),
        "scoped_feedback_event.guard_context",
        GUARD_FIELDS,
    )?;
    let field = |k: &str| or_null(raw.get(k));
    let proposal = obj! {
        "target_class" => field("target_class"),
        "content_summary" => field("content_summary"),
        "source" => field("source"),
        "scope" => obj! {
            "workspace_ref" => field("workspace_ref"),
            "project_ref" => field("project_ref"),
            "user_ref" => field("user_ref"),
            "peer_ref" => field("peer_ref"),
            "session_ref" => field("session_ref"),
            "surface_ids" => Value::Array(vec![field("surface_id")].into()),
            "revision_ref" => field("revision_ref"),
        },
        "reasoning" => field("reasoning"),
        "guard_context" => field("guard_context"),
        "requested_action_scopes" => raw
            .get("requested_action_scopes")
            .filter(|v| v.is_truthy())
            .cloned()
            .unwrap_or(Value::Array(Box::default())),
        "raw_content_captured" => field("raw_content_captured"),
    };
    let candidate = build_candidate(&proposal, checkpoint.as_ref())?;
    let tail = Tail::Scoped {
        feedback_ref,
        summary_digest: summary_digest(raw),
    };
    Staged::new(&candidate, route, &policy, raw, tail)
}
