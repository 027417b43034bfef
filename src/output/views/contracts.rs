//! Views of the Stage 0-5 LoopX packets: architecture, corpus registry, corpus health,
//! candidate review, pilot/meta route, experiment status, ingest receipt, evaluation,
//! dogfood batch and operator control. The reference pins their summary markdown, so
//! their reason lines cover only states it does not pin (a configuration error, a guard
//! that did not pass, a failed evaluation); the rest is their `--detail` report.

use crate::output::notes::Notes;
use crate::output::report::{Report, show};
use crate::wire::json::{Map, Value};

use super::fields::{Line, at, entry_rows, fields_of, is_false, objects, s, strings};

pub(super) fn architecture_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn corpus_registry_detail(p: &Map, _: &Notes, report: &mut Report) {
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
    report
        .section("Class coverage")
        .table(&["class", "corpora"], entry_rows(p, "class_coverage"));
}

pub(super) fn health_detail(p: &Map, _: &Notes, report: &mut Report) {
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
    report
        .section("Pipeline (in order)")
        .table(&["stage", "value"], entry_rows(p, "pipeline"));
}

pub(super) fn candidate_review_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn route_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn experiment_summary(p: &Map) -> Vec<Line> {
    match p.get("reason_code") {
        Some(v @ Value::Str(_)) => vec![("reason_code".to_owned(), show(Some(v)))],
        _ => Vec::new(),
    }
}

pub(super) fn experiment_detail(p: &Map, notes: &Notes, report: &mut Report) {
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

pub(super) fn ingest_summary(p: &Map) -> Vec<Line> {
    if is_false(p, "guard.passed") {
        vec![("guard.reason_codes".to_owned(), s(p, "guard.reason_codes"))]
    } else {
        Vec::new()
    }
}

pub(super) fn ingest_detail(p: &Map, notes: &Notes, report: &mut Report) {
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

pub(super) fn evaluation_summary(p: &Map) -> Vec<Line> {
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

pub(super) fn evaluation_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn dogfood_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn operator_control_detail(p: &Map, _: &Notes, report: &mut Report) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::views::tests::parse;

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
