//! Views of the utility packets (docs/utility.md): the observation, the projection and
//! its validation, and the subjects table and review proposals that the ledger's
//! packets show too.

use crate::output::notes::Notes;
use crate::output::report::Report;
use crate::wire::json::{Map, Value};

use super::fields::{Line, counts, entries, fields_of, ledger_and_fields, objects, s, strings};

/// The fields that name a utility partition: the scope and the two snapshot refs. The
/// projection, observation and ledger reports show them in this order.
pub(super) const PARTITION_FIELDS: [&str; 6] = [
    "scope.agent_id",
    "scope.project_id",
    "scope.corpus_id",
    "scope.surface_id",
    "retrieval_snapshot_ref",
    "policy_snapshot_ref",
];

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
    let paths = [
        &["status", "reducer_version"][..],
        &PARTITION_FIELDS,
        &[
            "accepted_observation_count",
            "duplicate_observation_count",
            "conflicting_observation_count",
            "rejected_observation_count",
            "last_observed_at",
        ],
    ]
    .concat();
    report
        .section("Projection")
        .fields(ledger_and_fields(notes, p, &paths));
    report
        .section("Subjects")
        .table(&SUBJECT_HEADER, subject_rows(p, "subjects"));
    review_proposals_section(report, p);
    let rejections: Vec<String> = objects(p, "rejections")
        .map(|r| s(r, "reason_codes"))
        .collect();
    report.section("Rejections").list(rejections);
}

/// One line per receipt and evaluator (`status`, with the reason when there is one),
/// then the ledger's high-water sequence.
pub(super) fn attribution_summary(p: &Map) -> Vec<Line> {
    let mut lines = Vec::new();
    for attribution in objects(p, "attributions") {
        let receipt = s(attribution, "application_receipt_id");
        for e in objects(attribution, "evaluators") {
            let reason = match e.get("reason").and_then(Value::as_str) {
                Some(r) => format!(" ({r})"),
                None => String::new(),
            };
            let ids = strings(e, "observation_ids").len();
            lines.push((
                s(e, "evaluator_id"),
                format!(
                    "{}{reason}, {ids} observation(s), {receipt}",
                    s(e, "status")
                ),
            ));
        }
    }
    lines.push((
        "high_water_sequence".to_owned(),
        s(p, "high_water_sequence"),
    ));
    lines
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
    let paths = [
        &[
            "utility_label",
            "attribution_level",
            "evidence_basis",
            "confidence",
            "reason_codes",
            "evidence_refs",
            "memory_ref_digests",
            "outcome_ref",
        ][..],
        &PARTITION_FIELDS,
        &[
            "evaluator_ref",
            "evaluation_version",
            "created_at",
            "observation_id",
            "application_receipt_id",
        ],
    ]
    .concat();
    report.section("Observation").fields(fields_of(p, &paths));
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
            let support = counts(entries(subject, "support").filter(|(_, n)| is_counted(n)));
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
    entries(subject, "evidence_strength")
        .filter(|(_, n)| is_counted(n))
        .map(|(tier, _)| tier.to_owned())
        .last()
        .unwrap_or_else(|| "-".to_owned())
}

/// Whether a support or strength count is shown: anything but the integer 0.
fn is_counted(n: &Value) -> bool {
    !matches!(n, Value::Int(0))
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
