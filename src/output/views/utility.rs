//! Views of the utility packets (docs/utility.md): the observation, the projection and
//! its validation, and the subjects table and review proposals that the ledger's
//! packets show too.

use crate::Notes;
use crate::output::report::{Report, show};
use crate::wire::json::{Map, Value};

use super::{Line, at, fields_of, ledger_field, objects, s, strings};

pub(super) fn projection_summary(p: &Map) -> Vec<Line> {
    if p.get("status") != Some(&Value::from("rejected")) {
        return Vec::new();
    }
    let codes: Vec<String> = objects(p, "rejections")
        .flat_map(|r| strings(r, "reason_codes"))
        .collect();
    vec![("rejections".to_owned(), codes.join(", "))]
}

pub(super) fn projection_detail(p: &Map, notes: &Notes, report: &mut Report) {
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

pub(super) fn observation_summary(p: &Map) -> Vec<Line> {
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

pub(super) fn observation_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn validation_detail(p: &Map, _: &Notes, report: &mut Report) {
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

/// The columns of a subjects table (`utility-project`, the ledger's packets).
pub(super) const SUBJECT_HEADER: [&str; 8] = [
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
pub(super) fn subject_rows(p: &Map, path: &str) -> Vec<Vec<String>> {
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

/// The read-only review proposals of a projection, as a table (nothing when there are none).
pub(super) fn review_proposals_section(report: &mut Report, p: &Map) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::views::tests::parse;

    #[test]
    fn strongest_tier_is_the_last_non_zero_strength() {
        let subject = parse(
            r#"{"evidence_strength": {"insufficient": 1, "evaluator_inference": 0,
                "deterministic_effect": 2, "controlled_replay": 0, "owner_correction": 0}}"#,
        );
        assert_eq!(strongest_tier(&subject), "deterministic_effect");
        assert_eq!(strongest_tier(&parse("{}")), "-");
    }
}
