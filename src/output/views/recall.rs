//! Views of the recall loop (docs/recall.md): `recall`, `apply`, the rank prior and the
//! rank prior's effect, with the ranked-candidates table the recall and rank-prior
//! reports share.

use crate::output::notes::Notes;
use crate::output::report::Report;
use crate::wire::json::{Map, Value};

use super::fields::{Line, at, fields_of, ledger_and_fields, objects, s};

/// What an agent at a terminal needs next: how many results, the session to apply them
/// with, and whether the rank prior moved anything (or why it stayed off).
pub(super) fn recall_summary(p: &Map) -> Vec<Line> {
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

pub(super) fn recall_detail(p: &Map, _: &Notes, report: &mut Report) {
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
            "candidate_fetch.requested_count",
            "candidate_fetch.fetched_count",
            "candidate_fetch.cut_count",
        ],
    ));
    let rows = ranked_rows(p, "rank_prior.candidates");
    if !rows.is_empty() {
        report
            .section("Rank prior candidates")
            .table(&RANKED_HEADER, rows);
    }
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

pub(super) fn application_summary(p: &Map) -> Vec<Line> {
    fields_of(p, &["application_receipt_id"])
}

pub(super) fn application_detail(p: &Map, _: &Notes, report: &mut Report) {
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

pub(super) fn rank_prior_summary(p: &Map) -> Vec<Line> {
    fields_of(p, &["order_changed", "modified_count"])
}

pub(super) fn rank_prior_detail(p: &Map, notes: &Notes, report: &mut Report) {
    // `--ledger`: where the utility was read (a projection names no location).
    report.section("Rank prior").fields(ledger_and_fields(
        notes,
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
    ));
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

pub(super) fn effect_summary(p: &Map) -> Vec<Line> {
    fields_of(p, &["reason_code", "effect_version"])
        .into_iter()
        .filter(|(_, v)| v != "-")
        .collect()
}

pub(super) fn effect_detail(p: &Map, _: &Notes, report: &mut Report) {
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
