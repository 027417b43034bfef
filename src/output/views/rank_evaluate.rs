//! The view of the held-out ranking evaluation (`rank-evaluate`, docs/rank-evaluate.md):
//! its body (the evaluation's context, the arms × metrics table with intervals, v1
//! against v0 on the same resamples, how the comparison arms were tuned, the gate's
//! checks on the gated arm and which arm wins), printed in the default markdown, and its
//! `--detail` report (paired differences, the sweep, and where the numbers come from).

use crate::output::notes::Notes;
use crate::output::report::Report;
use crate::wire::float;
use crate::wire::json::{Map, Value};

use super::fields::{at, check, counts, entries, fields_of, fixed, interval, number, objects, s};

/// The verdict's context, the arm × metric table and the gate's checks: what a person
/// needs to judge the verdict, printed in the default markdown.
pub(super) fn ranking_evaluation_body(p: &Map, report: &mut Report) {
    if super::rank_evaluate_logged::is_logged(p) {
        return super::rank_evaluate_logged::logged_body(p, report);
    }
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
                float::float_repr((level * 10.0).round() / 10.0).trim_end_matches(".0"),
                s(p, "settings.bootstrap_resamples"),
            ),
        ),
        (
            "reducer",
            format!(
                "{}: the gate qualifies {}",
                s(p, "reducer_version"),
                s(p, "gate.arm")
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
            let mut row = arm_row(arm, &metrics, false);
            row.push(s(arm, "scope_leaks.count"));
            row.push(interval(arm, "evaluator_disagreement", false));
            row
        })
        .collect();
    report.section("Arms").table(&header, rows);
    if let Some(comparison) = at(p, "reducer_comparison").and_then(Value::as_object) {
        let mut header: Vec<String> = vec!["arm".to_owned(), "versus".to_owned()];
        header.extend(metrics.iter().map(|(label, _)| format!("Δ{label}")));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut row = vec![s(comparison, "arm"), s(comparison, "versus")];
        row.extend(
            metrics
                .iter()
                .map(|(_, key)| interval(comparison, &format!("metrics.{key}"), true)),
        );
        report
            .section("Reducer v1 against v0, same episodes and resamples")
            .table(&header, vec![row]);
    }
    let tuning: Vec<String> = objects(p, "arms")
        .filter_map(|arm| tuning_line(arm, &k))
        .collect();
    if !tuning.is_empty() {
        report.section("Tuning of the comparison arms").list(tuning);
    }
    let gated = s(p, "gate.arm");
    let beating: Vec<String> = objects(p, "gate.arms_beating_gated_arm")
        .map(|b| format!("{} {}", s(b, "arm"), interval(b, "ndcg_difference", true)))
        .collect();
    let winner = if beating.is_empty() {
        format!("no other arm beats {gated} on nDCG@{k} (paired interval above 0)")
    } else {
        format!(
            "{gated} is beaten on nDCG@{k} (paired interval above 0) by: {}; the verdict only asks whether it beats semantic without harm",
            beating.join(", ")
        )
    };
    report.section("Gate").list(vec![
        format!(
            "{} nDCG@{k} gain of {gated} over semantic has its interval above 0: {}",
            check(p, "gate.ndcg_gain.passed"),
            interval(p, "gate.ndcg_gain.difference", true)
        ),
        format!(
            "{} false attenuation of {gated} at most {}: {}",
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
        format!(
            "not a check: the best arm on nDCG@{k} is {}: {}",
            s(p, "gate.best_arm.arm"),
            interval(p, "gate.best_arm.ndcg_at_k", false)
        ),
        format!("not a check: {winner}"),
    ]);
}

/// How a learned comparison arm was set up, as one line: `memrl: alpha 0.1, mix_weight
/// 0.75 (best of 16 grid points on 400 validation episodes, nDCG@3 0.829)`.
fn tuning_line(arm: &Map, k: &str) -> Option<String> {
    let t = at(arm, "tuning")?.as_object()?;
    let values: Vec<String> = entries(t, "parameters")
        .map(|(name, v)| format!("{name} {}", crate::output::report::show(Some(v))))
        .collect();
    let how = if s(t, "method") == "validation_grid" {
        format!(
            "best of {} grid points on {} validation episodes, nDCG@{k} {}",
            objects(t, "grid").count(),
            s(t, "validation_episodes"),
            fixed(number(t, "validation_ndcg_at_k"), false)
        )
    } else {
        format!("the profile's values: {}", s(t, "reason"))
    };
    Some(format!("{}: {} ({how})", s(arm, "arm"), values.join(", ")))
}

/// Under the body: the paired differences against arm 1, the sweep, and where the
/// numbers come from (held-out counts, ledger, the evaluated profile).
pub(super) fn ranking_evaluation_detail(p: &Map, notes: &Notes, report: &mut Report) {
    if super::rank_evaluate_logged::is_logged(p) {
        return super::rank_evaluate_logged::logged_detail(p, notes, report);
    }
    let k = s(p, "settings.k");
    let metrics = ranking_metrics(&k);
    let mut header: Vec<String> = vec!["#".to_owned(), "arm".to_owned()];
    header.extend(metrics.iter().map(|(label, _)| format!("Δ{label}")));
    let rows = objects(p, "differences")
        .map(|d| arm_row(d, &metrics, true))
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
                "Δ bounded_utility_v1",
                "false attenuation",
                "evaluator disagreement",
                "best arm",
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
                for key in [
                    "bounded_utility",
                    "bounded_utility_without_inference",
                    "bounded_utility_v1",
                ] {
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
                row.push(s(point, "best_arm"));
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
    let by_basis = counts(entries(p, "ledger.deliveries_by_basis"));
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
    ledger.push((
        "evidence_runs".to_owned(),
        counts(entries(p, "ledger.evidence_runs")),
    ));
    report.section("Training ledger").fields(ledger);
    report.section("Evaluator disagreement").fields([
        (
            "against a stronger tier".to_owned(),
            interval(p, "evaluator_disagreement.against_stronger_tier", false),
        ),
        (
            "against the verified outcomes (inference the only evidence)".to_owned(),
            interval(p, "evaluator_disagreement.against_outcomes", false),
        ),
    ]);
    report.section("Arm descriptions").list(
        objects(p, "arms")
            .map(|a| {
                format!(
                    "{} {}: {} (evidence cost per task {})",
                    s(a, "number"),
                    s(a, "arm"),
                    s(a, "description"),
                    fixed(number(a, "evidence_cost_per_task"), false)
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
                "reducer_version",
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
    report
        .section("Unit costs of task cost (one memory read = 1)")
        .fields(fields_of(
            p,
            &[
                "profile.cost.memory_read",
                "profile.cost.evaluator_inference",
                "profile.cost.deterministic_effect",
                "profile.cost.controlled_replay",
                "profile.cost.owner_correction",
            ],
        ));
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

/// An arm's number and name, then each metric's interval under `metrics.<key>`: a row of
/// the arms table, or (signed) of the differences against arm 1.
fn arm_row(arm: &Map, metrics: &[(String, &str)], signed: bool) -> Vec<String> {
    let mut row = vec![s(arm, "number"), s(arm, "arm")];
    row.extend(
        metrics
            .iter()
            .map(|(_, key)| interval(arm, &format!("metrics.{key}"), signed)),
    );
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::views::VIEWS;
    use crate::output::views::tests::parse;

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
                "arms": [], "gate": {"arm": "bounded_utility", "ndcg_gain": {"passed": true,
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
        // Our own kinds with a body: the verdict, `init` (its commands) and its demo.
        let with_body = [
            "memory_utility_ranking_evaluation_v1",
            "reward_memory_init_v0",
            "reward_memory_demo_v0",
        ];
        for view in VIEWS {
            if !with_body.contains(&view.schema_version) {
                let mut empty = Report::default();
                (view.body)(&p, &mut empty);
                assert_eq!(empty, Report::default(), "{}", view.schema_version);
            }
        }
    }
}
