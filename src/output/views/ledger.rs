//! Views of the utility ledger's packets (docs/utility.md#utility-ledger): the append
//! receipt, the paged projection, the subject lookup and the verify report.

use crate::output::notes::Notes;
use crate::output::report::Report;
use crate::wire::json::{Map, Value};

use super::fields::{Line, at, fields_of, items, ledger_and_fields, objects, s};
use super::utility::{PARTITION_FIELDS, SUBJECT_HEADER, review_proposals_section, subject_rows};

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
pub(super) fn ledger_append_summary(p: &Map) -> Vec<Line> {
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
pub(super) fn ledger_append_body(p: &Map, report: &mut Report) {
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

pub(super) fn ledger_append_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report.section("Batch").fields(ledger_and_fields(
        notes,
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
    ));
}

/// The partition's counters and which page this is.
pub(super) fn ledger_projection_summary(p: &Map) -> Vec<Line> {
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

pub(super) fn ledger_projection_detail(p: &Map, notes: &Notes, report: &mut Report) {
    let paths = [
        &[
            "status",
            "projection_ready",
            "ledger_reducer_version",
            "reducer_version",
            "reducer_identity",
        ][..],
        &PARTITION_FIELDS,
        &[
            "last_observed_at",
            "last_observation_id",
            "page.limit",
            "page.after",
            "page.returned",
            "page.next_after",
        ],
    ]
    .concat();
    report
        .section("Projection")
        .fields(ledger_and_fields(notes, p, &paths));
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
pub(super) fn ledger_subject_summary(p: &Map) -> Vec<Line> {
    let mut lines = fields_of(p, &["subject_count"]);
    if !items(p, "missing_memory_ref_digests").is_empty() {
        lines.extend(fields_of(p, &["missing_memory_ref_digests"]));
    }
    lines
}

/// The found subjects: what a person looks a memory up for.
pub(super) fn ledger_subject_body(p: &Map, report: &mut Report) {
    let rows = subject_rows(p, "subjects");
    if !rows.is_empty() {
        report.section("Subjects").table(&SUBJECT_HEADER, rows);
    }
}

pub(super) fn ledger_subject_detail(p: &Map, notes: &Notes, report: &mut Report) {
    let paths = [
        &["memory_ref_digests"][..],
        &PARTITION_FIELDS,
        &["reducer_version", "reducer_identity"],
    ]
    .concat();
    report
        .section("Partition")
        .fields(ledger_and_fields(notes, p, &paths));
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
pub(super) fn ledger_review_summary(p: &Map) -> Vec<Line> {
    let mut lines = fields_of(p, &["open_count", "partition_count"]);
    if at(p, "truncated") == Some(&Value::Bool(true)) {
        lines.push((
            "listed".to_owned(),
            format!(
                "the first {} in (partition, subject) order",
                items(p, "proposals").len()
            ),
        ));
    }
    lines
}

/// The open proposals: what awaits a decision and how to make it.
pub(super) fn ledger_review_body(p: &Map, report: &mut Report) {
    let rows: Vec<Vec<String>> = objects(p, "proposals")
        .map(|q| {
            let support = at(q, "support").and_then(Value::as_object);
            let count = |k: &str| support.map_or_else(String::new, |m| s(m, k));
            vec![
                s(q, "memory_ref_digests"),
                s(q, "review_state"),
                s(q, "reason_codes"),
                format!(
                    "+{} -{} ={} ?{}",
                    count("helpful"),
                    count("harmful"),
                    count("neutral"),
                    count("unknown")
                ),
                s(q, "strongest_tier"),
                objects(q, "resolve")
                    .map(|r| s(r, "action"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect();
    if !rows.is_empty() {
        report.section("Open proposals").table(
            &[
                "memories",
                "state",
                "reasons",
                "support",
                "strongest tier",
                "resolve by",
            ],
            rows,
        );
    }
}

pub(super) fn ledger_review_detail(p: &Map, notes: &Notes, report: &mut Report) {
    report.section("Ledger").fields(ledger_and_fields(
        notes,
        p,
        &[
            "ledger_backend",
            "partition_count",
            "open_count",
            "truncated",
        ],
    ));
    for q in objects(p, "proposals") {
        let section = report.section(&format!(
            "{} ({})",
            s(q, "subject_id"),
            s(q, "review_state")
        ));
        let partition = at(q, "partition").and_then(Value::as_object);
        if let Some(partition) = partition {
            section.fields(fields_of(partition, &PARTITION_FIELDS));
        }
        for r in objects(q, "resolve") {
            section.text(&format!("{}: `{}`", s(r, "action"), s(r, "command")));
        }
    }
}

pub(super) fn ledger_verify_summary(p: &Map) -> Vec<Line> {
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

pub(super) fn ledger_verify_detail(p: &Map, notes: &Notes, report: &mut Report) {
    let section = report.section("Ledger");
    section.fields(ledger_and_fields(
        notes,
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
    ));
    if at(p, "first_difference").is_some_and(Value::is_null) {
        section.text(
            "Every observation aggregate, subject, digest index row, partition counter and batch equals its recomputation from the raw deliveries.",
        );
    }
}
