//! One view per packet kind, keyed by `schema_version`: the lines a packet adds to the
//! markdown summary (its reasons), the sections a few kinds print under it by default
//! (their body: a verdict's table) and its `--detail` report.
//!
//! To show a new packet kind, write a `<kind>_summary` and a `<kind>_detail` function
//! below and add one [`PacketView`] to [`VIEWS`] (see `docs/output.md`). A summary
//! function must return nothing for every state whose markdown the recorded reference
//! runs pin (the conformance check catches a slip). Views only read the packet and the
//! run's [`Notes`]; they never compute a decision of their own.

use crate::commands::Notes;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt;

use super::report::{Report, show};

/// A `- label: value` line added to the markdown summary.
pub type Line = (String, String);

/// How a person sees one packet kind.
pub struct PacketView {
    /// The packet's `schema_version`.
    pub schema_version: &'static str,
    /// Lines added under the pinned summary lines (reasons, labels). Empty for the states
    /// the reference's markdown pins.
    pub summary: fn(&Map) -> Vec<Line>,
    /// Sections printed under the summary in the default markdown too, for a packet whose
    /// verdict a person cannot read without its table (e.g. `rank-evaluate`). Empty for
    /// every reference kind (their markdown is pinned).
    pub body: fn(&Map, &mut Report),
    /// The `--detail` report, printed under the summary.
    pub detail: fn(&Map, &Notes, &mut Report),
}

/// Every packet kind with a view of its own. A kind that is not listed gets
/// [`generic_detail`] and no summary lines beyond the shared `error` line.
pub const VIEWS: &[PacketView] = &[
    PacketView {
        schema_version: "reward_memory_error_v0",
        summary: none,
        body: no_body,
        detail: error_detail,
    },
    PacketView {
        schema_version: "reward_memory_architecture_v0",
        summary: none,
        body: no_body,
        detail: architecture_detail,
    },
    PacketView {
        schema_version: "reward_memory_corpus_registry_v0",
        summary: none,
        body: no_body,
        detail: corpus_registry_detail,
    },
    PacketView {
        schema_version: "reward_memory_corpus_health_v0",
        summary: none,
        body: no_body,
        detail: health_detail,
    },
    PacketView {
        schema_version: "reward_memory_candidate_review_v0",
        summary: none,
        body: no_body,
        detail: candidate_review_detail,
    },
    PacketView {
        schema_version: "reward_memory_pilot_meta_route_v0",
        summary: none,
        body: no_body,
        detail: route_detail,
    },
    PacketView {
        schema_version: "reward_memory_experiment_status_v1",
        summary: experiment_summary,
        body: no_body,
        detail: experiment_detail,
    },
    PacketView {
        schema_version: "reward_memory_ingest_receipt_v0",
        summary: ingest_summary,
        body: no_body,
        detail: ingest_detail,
    },
    PacketView {
        schema_version: "reward_memory_evaluation_v0",
        summary: evaluation_summary,
        body: no_body,
        detail: evaluation_detail,
    },
    PacketView {
        schema_version: "reward_memory_dogfood_batch_v1",
        summary: none,
        body: no_body,
        detail: dogfood_detail,
    },
    PacketView {
        schema_version: "reward_memory_operator_control_v0",
        summary: none,
        body: no_body,
        detail: operator_control_detail,
    },
    PacketView {
        schema_version: "memory_utility_projection_v0",
        summary: projection_summary,
        body: no_body,
        detail: projection_detail,
    },
    PacketView {
        schema_version: "memory_utility_observation_v0",
        summary: observation_summary,
        body: no_body,
        detail: observation_detail,
    },
    PacketView {
        schema_version: "memory_utility_projection_validation_v0",
        summary: none,
        body: no_body,
        detail: validation_detail,
    },
    PacketView {
        schema_version: "reward_memory_recall_v0",
        summary: recall_summary,
        body: no_body,
        detail: recall_detail,
    },
    PacketView {
        schema_version: "reward_memory_application_v0",
        summary: application_summary,
        body: no_body,
        detail: application_detail,
    },
    PacketView {
        schema_version: "memory_utility_rank_prior_v0",
        summary: rank_prior_summary,
        body: no_body,
        detail: rank_prior_detail,
    },
    PacketView {
        schema_version: "memory_utility_rank_prior_effect_v0",
        summary: effect_summary,
        body: no_body,
        detail: effect_detail,
    },
    PacketView {
        schema_version: "memory_utility_ranking_evaluation_v0",
        summary: none,
        body: ranking_evaluation_body,
        detail: ranking_evaluation_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_append_v0",
        summary: ledger_append_summary,
        body: ledger_append_body,
        detail: ledger_append_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_projection_v0",
        summary: ledger_projection_summary,
        body: no_body,
        detail: ledger_projection_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_subject_v0",
        summary: ledger_subject_summary,
        body: ledger_subject_body,
        detail: ledger_subject_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_verify_v0",
        summary: ledger_verify_summary,
        body: no_body,
        detail: ledger_verify_detail,
    },
];

/// The view registered for `schema_version`.
pub fn find(schema_version: &str) -> Option<&'static PacketView> {
    VIEWS.iter().find(|v| v.schema_version == schema_version)
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn none(_: &Map) -> Vec<Line> {
    Vec::new()
}

fn no_body(_: &Map, _: &mut Report) {}

/// The value at a dotted path of nested objects.
fn at<'a>(map: &'a Map, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = map.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// [`show`] of the value at `path`.
fn s(map: &Map, path: &str) -> String {
    show(at(map, path))
}

/// `- key: value` fields for each dotted path that is present, labelled by the path's
/// last key (the section title says where they come from).
fn fields_of(map: &Map, paths: &[&str]) -> Vec<(String, String)> {
    paths
        .iter()
        .filter(|p| at(map, p).is_some())
        .map(|p| {
            let key = p.rsplit('.').next().unwrap_or(p);
            (key.to_owned(), s(map, p))
        })
        .collect()
}

fn items<'a>(map: &'a Map, path: &str) -> &'a [Value] {
    at(map, path).and_then(Value::as_array).unwrap_or_default()
}

fn objects<'a>(map: &'a Map, path: &str) -> impl Iterator<Item = &'a Map> {
    items(map, path).iter().filter_map(Value::as_object)
}

fn strings(map: &Map, path: &str) -> Vec<String> {
    items(map, path).iter().map(|v| show(Some(v))).collect()
}

fn is_false(map: &Map, path: &str) -> bool {
    at(map, path) == Some(&Value::Bool(false))
}

// ---------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------

fn error_detail(_: &Map, _: &Notes, _: &mut Report) {}

/// Any packet without a view of its own: its top-level fields.
pub fn generic_detail(packet: &Map, _: &Notes, report: &mut Report) {
    let pairs = packet
        .iter()
        .filter(|(_, v)| match v {
            Value::Object(m) => m.contains_key("status"),
            Value::Array(a) => a.iter().all(|i| !matches!(i, Value::Object(_))),
            _ => true,
        })
        .map(|(k, v)| (k.to_owned(), show(Some(v))));
    report.section("Packet").fields(pairs);
}

fn architecture_detail(p: &Map, _: &Notes, report: &mut Report) {
    let rows = objects(p, "memory_classes")
        .map(|c| vec![s(c, "class_id"), s(c, "authority"), s(c, "durability")])
        .collect();
    report
        .section("Memory classes")
        .table(&["class", "authority", "durability"], rows);
    report
        .section("Precedence (highest first)")
        .numbered(strings(p, "precedence"));
    let delegation = report.section("Pilot/meta delegation");
    delegation.fields(fields_of(
        p,
        &[
            "pilot_meta_delegation.decisions",
            "pilot_meta_delegation.pilot_requires",
            "pilot_meta_delegation.meta_triggers",
        ],
    ));
    report
        .section("Lifecycle states")
        .text(&strings(p, "lifecycle_states").join(" -> "));
}

fn corpus_registry_detail(p: &Map, _: &Notes, report: &mut Report) {
    let rows = objects(p, "corpora")
        .map(|c| {
            vec![
                s(c, "corpus_id"),
                s(c, "class_id"),
                s(c, "provider_id"),
                s(c, "owner_ref"),
                s(c, "read_authority"),
                s(c, "write_authority"),
                s(c, "freshness.mode"),
                s(c, "lifecycle.state"),
            ]
        })
        .collect();
    report.section("Corpora").table(
        &[
            "corpus",
            "class",
            "provider",
            "owner",
            "read",
            "write",
            "freshness",
            "state",
        ],
        rows,
    );
    let coverage = at(p, "class_coverage")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(class, corpora)| vec![class.to_owned(), show(Some(corpora))])
                .collect()
        })
        .unwrap_or_default();
    report
        .section("Class coverage")
        .table(&["class", "corpora"], coverage);
}

fn health_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Corpus").fields(fields_of(
        p,
        &[
            "corpus_id",
            "class_id",
            "health_state",
            "reason_codes",
            "may_apply_memory",
            "scope_check.project_matches",
            "scope_check.surface_matches",
            "freshness_check.lifecycle_state",
            "freshness_check.source_revision_matches",
            "freshness_check.freshness_window_satisfied",
        ],
    ));
    let rows = at(p, "pipeline")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(stage, v)| vec![stage.to_owned(), show(Some(v))])
                .collect()
        })
        .unwrap_or_default();
    report
        .section("Pipeline (in order)")
        .table(&["stage", "value"], rows);
}

fn candidate_review_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Review").fields(fields_of(
        p,
        &[
            "status",
            "requested_decision",
            "effective_decision",
            "guard_passed",
            "review.reviewer_ref",
            "review.review_ref",
            "review.reasoning_summary",
            "persistence_next_step",
        ],
    ));
    report.section("Record").fields(fields_of(
        p,
        &[
            "record.candidate_ref",
            "record.target_class",
            "record.content_summary",
            "record.source.source_kind",
            "record.source.actor_role",
            "record.scope.project_ref",
            "record.scope.surface_ids",
            "record.scope.revision_ref",
            "record.lifecycle.state",
            "record.lifecycle.retired_reason",
            "record.lifecycle.supersedes_refs",
        ],
    ));
}

fn route_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Route").fields(fields_of(
        p,
        &[
            "decision",
            "case_ref",
            "pilot_authorized",
            "meta_review_required",
            "live_reasoning_required",
            "required_evidence",
            "missing_required_evidence",
        ],
    ));
    report.section("Reasons").list(strings(p, "reason_codes"));
}

fn experiment_summary(p: &Map) -> Vec<Line> {
    match p.get("reason_code") {
        Some(v @ Value::Str(_)) => vec![("reason_code".to_owned(), show(Some(v)))],
        _ => Vec::new(),
    }
}

fn experiment_detail(p: &Map, notes: &Notes, report: &mut Report) {
    let route = report.section("Route");
    route.fields(
        [(
            "registry".to_owned(),
            notes
                .registry
                .as_ref()
                .map(|r| r.display().to_string())
                .unwrap_or_default(),
        )]
        .into_iter()
        .chain(fields_of(
            p,
            &[
                "goal_id",
                "agent_id",
                "status",
                "reason_code",
                "enabled",
                "experimental",
                "configured_for_agent",
                "config_schema_version",
                "provider_id",
                "corpus_ids",
                "config_runtime_route.registry_role",
                "config_runtime_route.readback_status",
            ],
        )),
    );
    let rows = objects(p, "surface_profiles")
        .map(|sp| {
            vec![
                s(sp, "surface_id"),
                s(sp, "adapter"),
                s(sp, "corpus_count"),
                s(sp, "recall_profile_id"),
            ]
        })
        .collect::<Vec<_>>();
    if !rows.is_empty() {
        report
            .section("Surfaces")
            .table(&["surface", "adapter", "corpora", "recall profile"], rows);
    }
}

fn ingest_summary(p: &Map) -> Vec<Line> {
    if is_false(p, "guard.passed") {
        vec![("guard.reason_codes".to_owned(), s(p, "guard.reason_codes"))]
    } else {
        Vec::new()
    }
}

fn ingest_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report.section("Record").fields(fields_of(
        p,
        &[
            "status",
            "reason_codes",
            "candidate_ref",
            "corpus_id",
            "policy_id",
            "surface_ids",
            "activation_ref",
            "provider_ref",
        ],
    ));
    report.section("Guard").fields(fields_of(
        p,
        &["guard.passed", "guard.reason_codes", "guard.rule"],
    ));
    let provider = at(p, "write.provider")
        .or_else(|| at(p, "experiment.provider_id"))
        .map(|v| show(Some(v)))
        .unwrap_or_default();
    let written = if p.contains_key("write") {
        ""
    } else {
        "not called (dry run or blocked before the provider)"
    };
    let mut provider_fields = vec![
        ("provider".to_owned(), provider),
        ("store".to_owned(), notes.store.clone().unwrap_or_default()),
        ("write".to_owned(), written.to_owned()),
    ];
    provider_fields.extend(fields_of(
        p,
        &[
            "write.namespace",
            "write.status",
            "write.reason_code",
            "write.write_count",
            "deduplicated",
            "write.retry_disposition",
            "write.provider_version",
            "write.observed_at",
        ],
    ));
    report.section("Provider").fields(provider_fields);
    report.section("Readback").fields(fields_of(
        p,
        &[
            "readback.status",
            "readback.reason_code",
            "readback.result_count",
            "exact_readback_verified",
            "memory_available_for_recall",
            "execution_evidence.verified_result",
            "execution_evidence.unknowns",
        ],
    ));
    let mut route = fields_of(p, &["experiment.goal_id", "experiment.agent_id"]);
    if let (false, Some(registry)) = (route.is_empty(), &notes.registry) {
        route.insert(0, ("registry".to_owned(), registry.display().to_string()));
    }
    report.section("Route").fields(route);
}

fn evaluation_summary(p: &Map) -> Vec<Line> {
    if p.get("ok") == Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let failed: Vec<String> = objects(p, "cases")
        .filter(|c| c.get("passed") != Some(&Value::Bool(true)))
        .map(|c| s(c, "case_id"))
        .collect();
    let mut lines = Vec::new();
    if !failed.is_empty() {
        lines.push(("failed_cases".to_owned(), failed.join(", ")));
    }
    lines.push((
        "release_gate.reason_codes".to_owned(),
        s(p, "release_gate.reason_codes"),
    ));
    lines
}

fn evaluation_detail(p: &Map, _: &Notes, report: &mut Report) {
    let rows = objects(p, "cases")
        .map(|c| {
            vec![
                s(c, "case_id"),
                if c.get("passed") == Some(&Value::Bool(true)) {
                    "passed".to_owned()
                } else {
                    "FAILED".to_owned()
                },
                s(c, "assertion_count"),
                s(c, "failure_kind"),
                s(c, "public_evidence_bytes"),
            ]
        })
        .collect();
    report.section("Cases").table(
        &["case", "result", "assertions", "failure", "evidence bytes"],
        rows,
    );
    report.section("Totals").fields(fields_of(
        p,
        &[
            "metrics.case_count",
            "metrics.passed_case_count",
            "metrics.failed_case_count",
            "metrics.assertion_count",
            "metrics.latency_ms",
            "metrics.model_tokens",
            "metrics.provider_write_count",
            "metrics.external_write_count",
            "metrics.false_application_count",
        ],
    ));
    report.section("Release gate").fields(fields_of(
        p,
        &[
            "release_gate.status",
            "release_gate.decision",
            "release_gate.reason_codes",
            "release_gate.claim_scope",
            "release_gate.semantic_uplift_claim_allowed",
            "release_gate.production_rollout_allowed",
        ],
    ));
}

fn dogfood_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Readiness").fields(fields_of(
        p,
        &[
            "status",
            "reason_codes",
            "stage4_gate_verified",
            "loopx_domains",
            "application_dispositions",
            "operator_controls",
        ],
    ));
    let rows = objects(p, "receipts")
        .map(|r| {
            let utility = match at(r, "utility.observation.utility_label") {
                Some(label @ Value::Str(_)) => show(Some(label)),
                _ => {
                    let status = s(r, "utility.evaluation.status");
                    match at(r, "utility.evaluation.reason_code") {
                        Some(code @ Value::Str(_)) => format!("{status} ({})", show(Some(code))),
                        _ => status,
                    }
                }
            };
            vec![
                s(r, "domain_id"),
                s(r, "application.disposition"),
                s(r, "module_outcome.verified"),
                utility,
                s(r, "cost.latency_ms"),
                s(r, "cost.provider_call_count"),
                s(r, "intervention.count"),
            ]
        })
        .collect();
    report.section("Receipts").table(
        &[
            "domain",
            "disposition",
            "verified",
            "utility",
            "latency ms",
            "provider calls",
            "interventions",
        ],
        rows,
    );
    report.section("Metrics").fields(fields_of(
        p,
        &[
            "metrics.receipt_count",
            "metrics.issue_fix_receipt_count",
            "metrics.loopx_domain_count",
            "metrics.applied_count",
            "metrics.not_applied_count",
            "metrics.refuted_count",
            "metrics.utility_observation_count",
            "metrics.utility_rejected_count",
            "metrics.latency_ms",
        ],
    ));
}

fn operator_control_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Control").fields(fields_of(
        p,
        &[
            "receipt.control_ref",
            "receipt.action",
            "receipt.effective_action",
            "receipt.result_state",
            "receipt.corpus_id",
            "receipt.operator_ref",
            "receipt.authority_ref",
            "receipt.authority_verified",
            "receipt.reasoning_summary",
            "receipt.next_step",
            "receipt.provider_write_performed",
        ],
    ));
    report.section("Decision").fields(fields_of(
        p,
        &[
            "decision.status",
            "decision.effective_decision",
            "decision.record.candidate_ref",
            "decision.record.content_summary",
            "decision.record.lifecycle.state",
            "decision.persistence_next_step",
        ],
    ));
}

fn projection_summary(p: &Map) -> Vec<Line> {
    if p.get("status") != Some(&Value::from("rejected")) {
        return Vec::new();
    }
    let codes: Vec<String> = objects(p, "rejections")
        .flat_map(|r| strings(r, "reason_codes"))
        .collect();
    vec![("rejections".to_owned(), codes.join(", "))]
}

/// The strongest evidence tier with support: the last non-zero entry of
/// `evidence_strength`, whose keys run from weakest to strongest.
fn strongest_tier(subject: &Map) -> String {
    at(subject, "evidence_strength")
        .and_then(Value::as_object)
        .and_then(|m| {
            m.iter()
                .filter(|(_, n)| !matches!(n, Value::Int(0)))
                .map(|(k, _)| k.to_owned())
                .last()
        })
        .unwrap_or_else(|| "-".to_owned())
}

/// The columns of a subjects table (`utility-project`, the ledger's packets).
const SUBJECT_HEADER: [&str; 8] = [
    "memory",
    "level",
    "label",
    "estimate",
    "confidence",
    "support",
    "strongest tier",
    "review",
];

/// One row per subject object under `path`: its memory digests, level, effective label,
/// estimate, confidence, non-zero support counts, strongest tier and review.
/// The read-only review proposals of a projection, as a table (nothing when there are none).
fn review_proposals_section(report: &mut Report, p: &Map) {
    let proposals: Vec<Vec<String>> = objects(p, "review_proposals")
        .map(|r| {
            vec![
                s(r, "memory_ref_digests"),
                s(r, "state"),
                s(r, "proposed_action"),
                s(r, "reason_codes"),
            ]
        })
        .collect();
    if !proposals.is_empty() {
        report
            .section("Review proposals (read-only; nothing is applied)")
            .table(
                &["memory", "state", "proposed action", "reasons"],
                proposals,
            );
    }
}

fn subject_rows(p: &Map, path: &str) -> Vec<Vec<String>> {
    objects(p, path)
        .map(|subject| {
            let support = at(subject, "support")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter(|(_, n)| !matches!(n, Value::Int(0)))
                        .map(|(k, n)| format!("{k} {}", show(Some(n))))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let review = match s(subject, "review.state").as_str() {
                "none" => "none".to_owned(),
                state => format!("{state} ({})", s(subject, "review.proposed_action")),
            };
            vec![
                s(subject, "memory_ref_digests"),
                s(subject, "attribution_level"),
                s(subject, "effective_utility_label"),
                s(subject, "utility_estimate"),
                s(subject, "confidence"),
                support,
                strongest_tier(subject),
                review,
            ]
        })
        .collect()
}

fn projection_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report
        .section("Projection")
        .fields(ledger_field(notes).into_iter().chain(fields_of(
            p,
            &[
                "status",
                "reducer_version",
                "scope.agent_id",
                "scope.project_id",
                "scope.corpus_id",
                "scope.surface_id",
                "retrieval_snapshot_ref",
                "policy_snapshot_ref",
                "accepted_observation_count",
                "duplicate_observation_count",
                "conflicting_observation_count",
                "rejected_observation_count",
                "last_observed_at",
            ],
        )));
    report
        .section("Subjects")
        .table(&SUBJECT_HEADER, subject_rows(p, "subjects"));
    review_proposals_section(report, p);
    let rejections: Vec<String> = objects(p, "rejections")
        .map(|r| s(r, "reason_codes"))
        .collect();
    report.section("Rejections").list(rejections);
}

fn observation_summary(p: &Map) -> Vec<Line> {
    fields_of(
        p,
        &[
            "utility_label",
            "attribution_level",
            "evidence_basis",
            "confidence",
        ],
    )
}

fn observation_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Observation").fields(
        fields_of(
            p,
            &[
                "utility_label",
                "attribution_level",
                "evidence_basis",
                "confidence",
                "reason_codes",
                "evidence_refs",
                "memory_ref_digests",
                "outcome_ref",
                "scope.agent_id",
                "scope.project_id",
                "scope.corpus_id",
                "scope.surface_id",
                "retrieval_snapshot_ref",
                "policy_snapshot_ref",
                "evaluator_ref",
                "evaluation_version",
                "created_at",
            ],
        )
        .into_iter()
        .chain(fields_of(p, &["observation_id", "application_receipt_id"])),
    );
}

fn validation_detail(p: &Map, _: &Notes, report: &mut Report) {
    let section = report.section("Validation");
    match p.get("error") {
        Some(Value::Str(rule)) => section.fields([
            ("status".to_owned(), s(p, "status")),
            ("violated rule".to_owned(), rule.to_string()),
        ]),
        _ => section
            .text("Every readback rule holds: the projection can be used as a read-only view."),
    }
}

// ---------------------------------------------------------------------------------------
// Recall, apply and the rank prior (docs/recall.md)
// ---------------------------------------------------------------------------------------

/// What an agent at a terminal needs next: how many results, the session to apply them
/// with, and whether the rank prior moved anything (or why it stayed off).
fn recall_summary(p: &Map) -> Vec<Line> {
    let mut lines = fields_of(p, &["result_count"]);
    if at(p, "recall_session_ref").is_some_and(|v| !v.is_null()) {
        lines.extend(fields_of(p, &["recall_session_ref"]));
    }
    match at(p, "rank_prior_reason_code").and_then(Value::as_str) {
        Some("rank_prior_not_requested") => {}
        Some(_) => lines.extend(fields_of(p, &["rank_prior_reason_code"])),
        None => lines.extend(fields_of(p, &["rank_prior.order_changed"])),
    }
    lines
}

fn ranked_rows(p: &Map, path: &str) -> Vec<Vec<String>> {
    objects(p, path)
        .map(|c| {
            vec![
                s(c, "final_rank"),
                s(c, "semantic_rank"),
                s(c, "memory_ref_digest"),
                s(c, "relevance_score"),
                s(c, "modifier"),
                s(c, "rank_score"),
                s(c, "reason_codes"),
            ]
        })
        .collect()
}

const RANKED_HEADER: [&str; 7] = [
    "rank",
    "semantic rank",
    "memory",
    "relevance",
    "modifier",
    "rank score",
    "reasons",
];

fn recall_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Recall").fields(fields_of(
        p,
        &[
            "status",
            "reason_code",
            "reason_codes",
            "corpus_id",
            "surface_id",
            "mode",
            "provider_id",
            "provider_call_count",
            "result_readback_verified",
            "recall_session_ref",
            "recall_session_expires_at",
            "recall_session_reason_code",
        ],
    ));
    let rows = objects(p, "results")
        .map(|r| {
            vec![
                s(r, "rank"),
                s(r, "memory_ref"),
                s(r, "memory_ref_digest"),
                s(r, "relevance_score"),
                s(r, "candidate_ref"),
                s(r, "content_summary"),
            ]
        })
        .collect();
    report.section("Results").table(
        &[
            "rank",
            "memory_ref",
            "digest",
            "relevance",
            "candidate",
            "summary",
        ],
        rows,
    );
    report.section("Rank prior").fields(fields_of(
        p,
        &[
            "rank_prior_applied",
            "rank_prior_reason_code",
            "rank_prior.profile_id",
            "rank_prior.order_changed",
        ],
    ));
    let rows = ranked_rows(p, "rank_prior.candidates");
    if !rows.is_empty() {
        report
            .section("Rank prior candidates")
            .table(&RANKED_HEADER, rows);
    }
}

fn application_summary(p: &Map) -> Vec<Line> {
    fields_of(p, &["application_receipt_id"])
}

fn application_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Application").fields(fields_of(
        p,
        &[
            "status",
            "application_receipt_id",
            "recall_session_ref",
            "receipt.application_id",
            "receipt.artifact_ref",
            "receipt.outcome",
            "receipt.memory_ref_digests",
            "receipt.reasoning_summary",
            "receipt.current_artifact_verified",
            "receipt.corpus_id",
            "receipt.surface_id",
        ],
    ));
}

fn rank_prior_summary(p: &Map) -> Vec<Line> {
    fields_of(p, &["order_changed", "modified_count"])
}

fn rank_prior_detail(p: &Map, notes: &Notes, report: &mut Report) {
    // `--ledger`: where the utility was read (a projection names no location).
    report
        .section("Rank prior")
        .fields(ledger_field(notes).into_iter().chain(fields_of(
            p,
            &[
                "profile_id",
                "profile_digest",
                "reducer_identity",
                "modifier_bounds",
                "semantic_stage.semantic_floor",
                "semantic_stage.candidate_pool",
                "semantic_stage.input_count",
                "semantic_stage.below_floor_count",
                "semantic_stage.outside_pool_count",
                "semantic_stage.pool_count",
            ],
        )));
    report
        .section("Candidates (final order)")
        .table(&RANKED_HEADER, ranked_rows(p, "candidates"));
    let reviews: Vec<String> = objects(p, "review_proposals")
        .map(|r| format!("{}: {}", s(r, "memory_ref_digest"), s(r, "proposed_action")))
        .collect();
    if !reviews.is_empty() {
        report
            .section("Review proposals (nothing is removed)")
            .list(reviews);
    }
}

fn effect_summary(p: &Map) -> Vec<Line> {
    fields_of(p, &["reason_code", "effect_version"])
        .into_iter()
        .filter(|(_, v)| v != "-")
        .collect()
}

fn effect_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Effect").fields(fields_of(
        p,
        &[
            "status",
            "reason_code",
            "cause_code",
            "provider_id",
            "effect_ref",
            "effect_version",
            "table_digest",
            "modifier_count",
            "deduplicated",
            "exact_readback_verified",
            "ranking",
            "provider_write_performed",
        ],
    ));
}

// ---------------------------------------------------------------------------------------
// The held-out ranking evaluation (docs/rank-evaluate.md)
// ---------------------------------------------------------------------------------------

/// The number at `path`, integer or float.
fn number(map: &Map, path: &str) -> Option<f64> {
    match at(map, path)? {
        Value::Float(x) => Some(*x),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// `x` with three decimals, signed for a difference; `-` when absent.
fn fixed(x: Option<f64>, signed: bool) -> String {
    match x {
        None => "-".to_owned(),
        Some(x) if signed => format!("{x:+.3}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// An `{estimate, lower, upper}` object as `0.612 [0.601, 0.623]`; `-` when absent or
/// without an estimate (no episode to measure).
fn interval(map: &Map, path: &str, signed: bool) -> String {
    let Some(e) = at(map, path).and_then(Value::as_object) else {
        return "-".to_owned();
    };
    match number(e, "estimate") {
        None => "-".to_owned(),
        est => format!(
            "{} [{}, {}]",
            fixed(est, signed),
            fixed(number(e, "lower"), signed),
            fixed(number(e, "upper"), signed)
        ),
    }
}

/// `[x]` for a passed gate check, `[ ]` otherwise.
fn check(map: &Map, path: &str) -> &'static str {
    if at(map, path) == Some(&Value::Bool(true)) {
        "[x]"
    } else {
        "[ ]"
    }
}

/// The five metrics in table order, with `k` in the labels of the top-k ones.
fn ranking_metrics(k: &str) -> [(String, &'static str); 5] {
    [
        (format!("nDCG@{k}"), "ndcg_at_k"),
        ("success@1".to_owned(), "success_at_1"),
        (format!("harmful@{k}"), "harmful_at_k"),
        ("task cost".to_owned(), "task_cost"),
        ("false attenuation".to_owned(), "false_attenuation"),
    ]
}

/// The verdict's context, the arm × metric table and the gate's checks: what a person
/// needs to judge the verdict, printed in the default markdown.
fn ranking_evaluation_body(p: &Map, report: &mut Report) {
    let k = s(p, "settings.k");
    let origin = if s(p, "source.kind") == "simulation" {
        format!("simulation, seed {}", s(p, "source.seed"))
    } else {
        format!("episodes file sha256 {}", s(p, "source.input_sha256"))
    };
    let level = number(p, "settings.confidence_level").unwrap_or_default() * 100.0;
    let sweep = at(p, "sweep")
        .and_then(Value::as_object)
        .map(|sweep| {
            let values: Vec<String> = objects(sweep, "points").map(|pt| s(pt, "value")).collect();
            format!(
                "{} = {} (each point's arms and verdict with --detail)",
                s(sweep, "parameter"),
                values.join(", ")
            )
        })
        .unwrap_or_default();
    report.section("Evaluation").fields([
        (
            "profile",
            format!("{} ({})", s(p, "profile_id"), s(p, "profile_digest")),
        ),
        (
            "source",
            format!(
                "{origin}: {} training, {} held-out episodes ({} with a truly helpful memory in the pool)",
                s(p, "source.training_episodes"),
                s(p, "source.held_out_episodes"),
                s(p, "held_out.answerable_episodes"),
            ),
        ),
        (
            "intervals",
            format!(
                "{}% percentile bootstrap over held-out episodes, {} resamples, paired across arms",
                pyfmt::float_repr((level * 10.0).round() / 10.0).trim_end_matches(".0"),
                s(p, "settings.bootstrap_resamples"),
            ),
        ),
        ("sweep", sweep),
    ]);
    let metrics = ranking_metrics(&k);
    let mut header: Vec<&str> = vec!["#", "arm"];
    header.extend(metrics.iter().map(|(label, _)| label.as_str()));
    header.extend(["scope leaks", "evaluator disagreement"]);
    let rows = objects(p, "arms")
        .map(|arm| {
            let mut row = vec![s(arm, "number"), s(arm, "arm")];
            row.extend(
                metrics
                    .iter()
                    .map(|(_, key)| interval(arm, &format!("metrics.{key}"), false)),
            );
            row.push(s(arm, "scope_leaks.count"));
            row.push(interval(arm, "evaluator_disagreement", false));
            row
        })
        .collect();
    report.section("Arms").table(&header, rows);
    report.section("Gate").list(vec![
        format!(
            "{} nDCG@{k} gain of bounded_utility over semantic has its interval above 0: {}",
            check(p, "gate.ndcg_gain.passed"),
            interval(p, "gate.ndcg_gain.difference", true)
        ),
        format!(
            "{} false attenuation of bounded_utility at most {}: {}",
            check(p, "gate.false_attenuation.passed"),
            fixed(number(p, "gate.false_attenuation.threshold"), false),
            fixed(number(p, "gate.false_attenuation.estimate"), false)
        ),
        format!(
            "{} harmful@{k} not worse than semantic: difference {}",
            check(p, "gate.harmful_at_k.passed"),
            fixed(number(p, "gate.harmful_at_k.difference"), true)
        ),
        format!(
            "{} no scope leaks in any arm: {}",
            check(p, "gate.scope_leaks.passed"),
            s(p, "gate.scope_leaks.count")
        ),
    ]);
}

/// Under the body: the paired differences against arm 1, the sweep, and where the
/// numbers come from (held-out counts, ledger, the evaluated profile).
fn ranking_evaluation_detail(p: &Map, _: &Notes, report: &mut Report) {
    let k = s(p, "settings.k");
    let metrics = ranking_metrics(&k);
    let mut header: Vec<String> = vec!["#".to_owned(), "arm".to_owned()];
    header.extend(metrics.iter().map(|(label, _)| format!("Δ{label}")));
    let rows = objects(p, "differences")
        .map(|d| {
            let mut row = vec![s(d, "number"), s(d, "arm")];
            row.extend(
                metrics
                    .iter()
                    .map(|(_, key)| interval(d, &format!("metrics.{key}"), true)),
            );
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    report
        .section("Differences against arm 1 (semantic), same resamples")
        .table(&header, rows);
    if let Some(sweep) = at(p, "sweep").and_then(Value::as_object) {
        let points: Vec<&Map> = objects(sweep, "points").collect();
        let arms: Vec<String> = points
            .first()
            .map(|first| objects(first, "arms").map(|a| s(a, "arm")).collect())
            .unwrap_or_default();
        let parameter = s(sweep, "parameter");
        let mut header: Vec<String> = vec![parameter.clone()];
        header.extend(arms.iter().cloned());
        header.extend(
            [
                "Δ bounded_utility",
                "Δ bounded_utility_without_inference",
                "false attenuation",
                "evaluator disagreement",
                "verdict",
            ]
            .map(str::to_owned),
        );
        let rows = points
            .iter()
            .map(|point| {
                let point_arms: Vec<&Map> = objects(point, "arms").collect();
                let mut row = vec![s(point, "value")];
                row.extend(point_arms.iter().map(|a| interval(a, "ndcg_at_k", false)));
                for key in ["bounded_utility", "bounded_utility_without_inference"] {
                    row.push(
                        point_arms
                            .iter()
                            .find(|a| s(a, "arm") == key)
                            .map_or("-".to_owned(), |a| {
                                interval(a, "ndcg_difference_vs_semantic", true)
                            }),
                    );
                }
                row.push(interval(point, "false_attenuation", false));
                row.push(interval(point, "evaluator_disagreement", false));
                row.push(s(point, "verdict"));
                row
            })
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        report
            .section(&format!(
                "Sweep of {parameter} (nDCG@{k} per arm; Δ against semantic)"
            ))
            .table(&header, rows);
    }
    report.section("Held-out episodes").fields(fields_of(
        p,
        &[
            "held_out.episodes",
            "held_out.answerable_episodes",
            "held_out.pool_candidates",
            "held_out.truly_helpful_in_pool",
            "held_out.truly_harmful_in_pool",
        ],
    ));
    let by_basis = at(p, "ledger.deliveries_by_basis")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(basis, n)| format!("{basis} {}", show(Some(n))))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let mut ledger = fields_of(
        p,
        &[
            "ledger.backend",
            "ledger.partitions",
            "ledger.deliveries",
            "ledger.accepted",
            "ledger.duplicate",
            "ledger.conflicting",
            "ledger.item_subjects",
            "ledger.set_subjects",
            "ledger.inference_deliveries_removed_for_arm_4",
        ],
    );
    ledger.push(("deliveries_by_basis".to_owned(), by_basis));
    report.section("Training ledger").fields(ledger);
    report.section("Arm descriptions").list(
        objects(p, "arms")
            .map(|a| {
                format!(
                    "{} {}: {}",
                    s(a, "number"),
                    s(a, "arm"),
                    s(a, "description")
                )
            })
            .collect(),
    );
    report
        .section("Rank-prior profile evaluated")
        .fields(fields_of(
            p,
            &[
                "profile_id",
                "profile_digest",
                "modifier_version",
                "profile.rank_prior.semantic_floor",
                "profile.rank_prior.candidate_pool",
                "profile.rank_prior.modifier_bounds",
                "profile.rank_prior.min_evidence_basis",
                "profile.rank_prior.allow_evaluator_inference",
                "profile.rank_prior.min_support",
                "evaluation_profile_digest",
                "settings.k",
                "settings.bootstrap_resamples",
                "settings.confidence_level",
                "settings.false_attenuation_max",
            ],
        ));
}

// ---------------------------------------------------------------------------------------
// The utility ledger (docs/utility.md#utility-ledger)
// ---------------------------------------------------------------------------------------

/// The ledger a command used (from the run's notes; never with credentials).
fn ledger_field(notes: &Notes) -> Vec<(String, String)> {
    notes
        .ledger
        .iter()
        .map(|l| ("ledger".to_owned(), l.clone()))
        .collect()
}

/// `received N, appended N, ...` of the append receipt.
fn append_counts(p: &Map) -> String {
    [
        "received",
        "appended",
        "duplicate",
        "conflicting",
        "refused",
    ]
    .iter()
    .map(|k| format!("{k} {}", s(p, k)))
    .collect::<Vec<_>>()
    .join(", ")
}

/// Refusals named in the summary (the body lists every refusal of the packet).
const SUMMARY_REFUSALS: usize = 8;

/// The counts, the high-water sequence and which lines were refused with which reason
/// code (the errors are in the body's table).
fn ledger_append_summary(p: &Map) -> Vec<Line> {
    let mut lines = vec![
        ("deliveries".to_owned(), append_counts(p)),
        (
            "ledger".to_owned(),
            format!("high-water sequence {}", s(p, "high_water_sequence")),
        ),
    ];
    let refusals: Vec<&Map> = objects(p, "refusals").collect();
    if !refusals.is_empty() {
        let mut named: Vec<String> = refusals
            .iter()
            .take(SUMMARY_REFUSALS)
            .map(|r| format!("line {} {}", s(r, "line"), s(r, "reason_code")))
            .collect();
        let refused = match at(p, "refused") {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        let more = refused.saturating_sub(named.len() as i64);
        if more > 0 {
            named.push(format!("and {more} more"));
        }
        lines.push(("refusals".to_owned(), named.join(", ")));
    }
    lines
}

/// Every listed refusal with its line, reason code and error: what to fix in the input
/// (printed by default: the summary line names only the codes).
fn ledger_append_body(p: &Map, report: &mut Report) {
    // A list, not a table: validator errors can be long, and a list wraps readably.
    let refusals: Vec<String> = objects(p, "refusals")
        .map(|r| {
            format!(
                "line {}: {}: {}",
                s(r, "line"),
                s(r, "reason_code"),
                s(r, "error")
            )
        })
        .collect();
    if refusals.is_empty() {
        return;
    }
    let listed = refusals.len();
    let section = report.section("Refusals (never stored)");
    section.list(refusals);
    if at(p, "refusals_truncated") == Some(&Value::Bool(true)) {
        section.text(&format!(
            "Only the first {listed} of {} refusals are listed (refusals_truncated); the counts are exact.",
            s(p, "refused")
        ));
    }
}

fn ledger_append_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report
        .section("Batch")
        .fields(ledger_field(notes).into_iter().chain(fields_of(
            p,
            &[
                "ledger_backend",
                "ledger_schema_version",
                "batch_id",
                "received",
                "appended",
                "duplicate",
                "conflicting",
                "refused",
                "first_sequence",
                "last_sequence",
                "high_water_sequence",
                "durable",
            ],
        )));
}

/// The partition's counters and which page this is.
fn ledger_projection_summary(p: &Map) -> Vec<Line> {
    let counters = [
        ("deliveries", "delivery_count"),
        ("accepted", "accepted_observation_count"),
        ("duplicate", "duplicate_observation_count"),
        ("conflicting", "conflicting_observation_count"),
        ("rejected", "rejected_observation_count"),
    ]
    .iter()
    .map(|(label, key)| format!("{label} {}", s(p, key)))
    .collect::<Vec<_>>()
    .join(", ");
    let subjects = format!(
        "{} (item {}, set {}, unresolved {}, in conflict {})",
        s(p, "subject_count"),
        s(p, "item_subject_count"),
        s(p, "set_subject_count"),
        s(p, "unresolved_lineage_count"),
        s(p, "conflict_subject_count"),
    );
    let next = match at(p, "page.next_after") {
        Some(Value::Str(after)) => format!("next page: --after {after}"),
        _ => "last page".to_owned(),
    };
    let after = match at(p, "page.after") {
        Some(Value::Str(after)) => format!(" after {after}"),
        _ => String::new(),
    };
    let page = format!(
        "{} subjects{after} (limit {}), {next}",
        s(p, "page.returned"),
        s(p, "page.limit")
    );
    vec![
        ("observations".to_owned(), counters),
        ("subjects".to_owned(), subjects),
        ("page".to_owned(), page),
    ]
}

fn ledger_projection_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report
        .section("Projection")
        .fields(ledger_field(notes).into_iter().chain(fields_of(
            p,
            &[
                "status",
                "projection_ready",
                "ledger_reducer_version",
                "reducer_version",
                "reducer_identity",
                "scope.agent_id",
                "scope.project_id",
                "scope.corpus_id",
                "scope.surface_id",
                "retrieval_snapshot_ref",
                "policy_snapshot_ref",
                "last_observed_at",
                "last_observation_id",
                "page.limit",
                "page.after",
                "page.returned",
                "page.next_after",
            ],
        )));
    report
        .section("Subjects (this page, by subject_id)")
        .table(&SUBJECT_HEADER, subject_rows(p, "subjects"));
    review_proposals_section(report, p);
    let rejections: Vec<Vec<String>> = objects(p, "rejections")
        .map(|r| {
            vec![
                s(r, "observation_id"),
                s(r, "delivery_count"),
                s(r, "reason_codes"),
            ]
        })
        .collect();
    if !rejections.is_empty() {
        let section = report.section("Conflicting observation ids (quarantined)");
        section.table(&["observation", "deliveries", "reasons"], rejections);
        if at(p, "rejections_truncated") == Some(&Value::Bool(true)) {
            section.text(&format!(
                "The first 64 of {} conflicting ids are listed.",
                s(p, "conflicting_observation_count")
            ));
        }
    }
}

/// How many subjects were found, and the requested digests no subject mentions.
fn ledger_subject_summary(p: &Map) -> Vec<Line> {
    let mut lines = fields_of(p, &["subject_count"]);
    if !items(p, "missing_memory_ref_digests").is_empty() {
        lines.extend(fields_of(p, &["missing_memory_ref_digests"]));
    }
    lines
}

/// The found subjects: what a person looks a memory up for.
fn ledger_subject_body(p: &Map, report: &mut Report) {
    let rows = subject_rows(p, "subjects");
    if !rows.is_empty() {
        report.section("Subjects").table(&SUBJECT_HEADER, rows);
    }
}

fn ledger_subject_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report
        .section("Partition")
        .fields(ledger_field(notes).into_iter().chain(fields_of(
            p,
            &[
                "memory_ref_digests",
                "scope.agent_id",
                "scope.project_id",
                "scope.corpus_id",
                "scope.surface_id",
                "retrieval_snapshot_ref",
                "policy_snapshot_ref",
                "reducer_version",
                "reducer_identity",
            ],
        )));
    for subject in objects(p, "subjects") {
        let rows: Vec<Vec<String>> = objects(subject, "observation_history")
            .map(|h| {
                vec![
                    s(h, "created_at"),
                    s(h, "utility_label"),
                    s(h, "evidence_basis"),
                    s(h, "confidence"),
                    s(h, "outcome_ref"),
                ]
            })
            .collect();
        let shown = rows.len();
        let section = report.section(&format!(
            "Latest observations of {} ({}, {} of {})",
            s(subject, "memory_ref_digests"),
            s(subject, "subject_id"),
            shown,
            s(subject, "observation_count"),
        ));
        section.table(
            &["created_at", "label", "evidence", "confidence", "outcome"],
            rows,
        );
    }
}

/// On a mismatch the first difference, then what was checked.
fn ledger_verify_summary(p: &Map) -> Vec<Line> {
    let mut lines = Vec::new();
    if let Some(Value::Str(difference)) = at(p, "first_difference") {
        lines.push(("first_difference".to_owned(), difference.to_string()));
    }
    lines.push((
        "checked".to_owned(),
        format!(
            "deliveries {}, observation ids {}, subjects {}, partitions {}, batches {}, high-water sequence {}",
            s(p, "delivery_count"),
            s(p, "observation_count"),
            s(p, "subject_count"),
            s(p, "partition_count"),
            s(p, "batch_count"),
            s(p, "high_water_sequence"),
        ),
    ));
    lines
}

fn ledger_verify_detail(p: &Map, notes: &Notes, report: &mut Report) {
    let section = report.section("Ledger");
    section.fields(ledger_field(notes).into_iter().chain(fields_of(
        p,
        &[
            "ledger_backend",
            "ledger_schema_version",
            "high_water_sequence",
            "batch_count",
            "partition_count",
            "delivery_count",
            "observation_count",
            "subject_count",
            "first_difference",
        ],
    )));
    if at(p, "first_difference").is_some_and(Value::is_null) {
        section.text(
            "Every observation aggregate, subject, digest index row, partition counter and batch equals its recomputation from the raw deliveries.",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Map {
        crate::wire::json::parse(text)
            .expect("valid")
            .as_object()
            .cloned()
            .expect("object")
    }

    #[test]
    fn every_view_has_a_distinct_schema_version() {
        let mut seen = std::collections::BTreeSet::new();
        for view in VIEWS {
            assert!(seen.insert(view.schema_version), "{}", view.schema_version);
        }
    }

    #[test]
    fn strongest_tier_is_the_last_non_zero_strength() {
        let subject = parse(
            r#"{"evidence_strength": {"insufficient": 1, "evaluator_inference": 0,
                "deterministic_effect": 2, "controlled_replay": 0, "owner_correction": 0}}"#,
        );
        assert_eq!(strongest_tier(&subject), "deterministic_effect");
        assert_eq!(strongest_tier(&parse("{}")), "-");
    }

    #[test]
    fn intervals_read_as_estimate_and_bounds_and_absent_ones_as_a_dash() {
        let p = parse(
            r#"{"a": {"estimate": 0.25, "lower": -0.125, "upper": 1, "n": 4},
                "b": {"estimate": null, "lower": null, "upper": null, "n": 0}}"#,
        );
        assert_eq!(interval(&p, "a", false), "0.250 [-0.125, 1.000]");
        assert_eq!(interval(&p, "a", true), "+0.250 [-0.125, +1.000]");
        assert_eq!(interval(&p, "b", false), "-");
        assert_eq!(interval(&p, "c", false), "-");
    }

    #[test]
    fn a_ranking_evaluation_body_shows_the_gate_checks_and_reference_kinds_have_none() {
        let p = parse(
            r#"{"settings": {"k": 3, "confidence_level": 0.95, "bootstrap_resamples": 10},
                "arms": [], "gate": {"ndcg_gain": {"passed": true,
                "difference": {"estimate": 0.5, "lower": 0.25, "upper": 0.75, "n": 2}},
                "scope_leaks": {"passed": false, "count": 2}}}"#,
        );
        let mut report = Report::default();
        ranking_evaluation_body(&p, &mut report);
        let text = report.to_markdown();
        assert!(text.contains(
            "- [x] nDCG@3 gain of bounded_utility over semantic has its interval above 0: +0.500 [+0.250, +0.750]\n"
        ), "{text}");
        assert!(
            text.contains("- [ ] no scope leaks in any arm: 2\n"),
            "{text}"
        );
        assert!(
            text.contains("- intervals: 95% percentile bootstrap"),
            "{text}"
        );
        for view in VIEWS {
            if view.schema_version != "memory_utility_ranking_evaluation_v0" {
                let mut empty = Report::default();
                (view.body)(&p, &mut empty);
                assert_eq!(empty, Report::default(), "{}", view.schema_version);
            }
        }
    }

    #[test]
    fn a_failed_evaluation_names_its_failed_cases_and_gate_reasons() {
        let packet = parse(
            r#"{"ok": false, "status": "failed",
                "cases": [{"case_id": "a", "passed": true}, {"case_id": "b", "passed": false}],
                "release_gate": {"reason_codes": ["case_failed:b"]}}"#,
        );
        assert_eq!(
            evaluation_summary(&packet),
            vec![
                ("failed_cases".to_owned(), "b".to_owned()),
                (
                    "release_gate.reason_codes".to_owned(),
                    "case_failed:b".to_owned()
                ),
            ]
        );
    }
}
