//! The view of a ranking evaluation on logged traffic (`rank-evaluate --ledger`, or
//! `--input` of exported logged episodes; docs/rank-evaluate.md, "From the deployment's
//! own traffic"): the evaluation's context, one table of arms by off-policy estimates
//! with intervals, v1 against v0 on the same resamples and the gate's checks on the
//! gated arm by default; the differences against semantic, the traffic counts and the
//! training ledger under `--detail`.

use crate::output::notes::Notes;
use crate::output::report::Report;
use crate::wire::json::{Map, Value};

use super::fields::{at, check, fields_of, fixed, interval, number, objects, s};

/// True for a verdict on logged traffic (it reports its `traffic`).
pub(super) fn is_logged(p: &Map) -> bool {
    p.get("traffic").is_some_and(|t| t.as_object().is_some())
}

/// The context, the arms × estimates table and the gate's checks.
pub(super) fn logged_body(p: &Map, report: &mut Report) {
    let origin = match at(p, "source.ledger").and_then(Value::as_object) {
        Some(l) => format!(
            "traffic log of a {} ledger, delivery high water {}, split at delivery {}",
            s(l, "backend"),
            s(l, "high_water_seq"),
            s(l, "split_seq")
        ),
        None => format!(
            "logged episodes file sha256 {}",
            s(p, "source.input_sha256")
        ),
    };
    let level = number(p, "settings.confidence_level").unwrap_or_default() * 100.0;
    report.section("Evaluation").fields([
        (
            "profile",
            format!("{} ({})", s(p, "profile_id"), s(p, "profile_digest")),
        ),
        (
            "source",
            format!(
                "{origin}: {} training, {} held-out recalls ({} with a verified outcome estimated on), observed until {}",
                s(p, "source.training_episodes"),
                s(p, "source.held_out_episodes"),
                s(p, "held_out.episodes"),
                s(p, "source.observed_until"),
            ),
        ),
        (
            "estimand",
            format!(
                "value of the memory shown first (reward succeeded 1, partial 0.5, failed 0); the logged policy earned {}",
                interval(p, "held_out.logged_value", false)
            ),
        ),
        (
            "intervals",
            format!(
                "{}% percentile bootstrap over held-out episodes, {} resamples, paired across arms; weights clipped at {}",
                crate::wire::float::float_repr((level * 10.0).round() / 10.0)
                    .trim_end_matches(".0"),
                s(p, "settings.bootstrap_resamples"),
                s(p, "settings.weight_clip"),
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
    ]);
    let rows = objects(p, "arms")
        .map(|a| {
            vec![
                s(a, "number"),
                s(a, "arm"),
                interval(a, "snips", false),
                interval(a, "ips", false),
                interval(a, "doubly_robust", false),
                interval(a, "failure_rate", false),
                fixed(number(a, "effective_sample_size"), false),
                s(a, "matched_episodes"),
                s(a, "unsupported_episodes"),
                s(a, "scope_leaks.count"),
            ]
        })
        .collect();
    report.section("Arms").table(
        &[
            "#",
            "arm",
            "SNIPS",
            "IPS",
            "doubly robust",
            "failure rate",
            "ESS",
            "matched",
            "unsupported",
            "scope leaks",
        ],
        rows,
    );
    if let Some(c) = at(p, "reducer_comparison").and_then(Value::as_object) {
        report
            .section("Reducer v1 against v0, same episodes and resamples")
            .table(
                &[
                    "arm",
                    "versus",
                    "ΔSNIPS",
                    "ΔIPS",
                    "Δdoubly robust",
                    "Δfailure rate",
                ],
                vec![vec![
                    s(c, "arm"),
                    s(c, "versus"),
                    interval(c, "snips", true),
                    interval(c, "ips", true),
                    interval(c, "doubly_robust", true),
                    interval(c, "failure_rate", true),
                ]],
            );
    }
    let gated = s(p, "gate.arm");
    report.section("Gate").list(vec![
        format!(
            "{} held-out episodes with a verified outcome at least {}: {}",
            check(p, "gate.held_out_traffic.passed"),
            s(p, "gate.held_out_traffic.minimum"),
            s(p, "gate.held_out_traffic.episodes")
        ),
        format!(
            "{} off-policy support: effective sample size at least {} ({gated} {}, semantic {}), unsupported episodes {}",
            check(p, "gate.off_policy_support.passed"),
            s(p, "gate.off_policy_support.minimum"),
            fixed(
                number(p, "gate.off_policy_support.gated_arm_effective_sample_size"),
                false
            ),
            fixed(
                number(p, "gate.off_policy_support.semantic_effective_sample_size"),
                false
            ),
            s(p, "gate.off_policy_support.unsupported_episodes")
        ),
        format!(
            "{} SNIPS gain of {gated} over semantic has its interval above 0: {}",
            check(p, "gate.snips_gain.passed"),
            interval(p, "gate.snips_gain.difference", true)
        ),
        format!(
            "{} failure rate not worse than semantic: difference {}",
            check(p, "gate.failure_rate.passed"),
            fixed(number(p, "gate.failure_rate.difference"), true)
        ),
        format!(
            "{} no scope leaks in any arm: {}",
            check(p, "gate.scope_leaks.passed"),
            s(p, "gate.scope_leaks.count")
        ),
        format!("best arm by SNIPS: {}", s(p, "gate.best_arm_by_snips")),
    ]);
}

/// The differences against semantic, the traffic, the training ledger, the settings.
pub(super) fn logged_detail(p: &Map, _: &Notes, report: &mut Report) {
    let rows = objects(p, "differences")
        .map(|d| {
            vec![
                s(d, "number"),
                s(d, "arm"),
                interval(d, "snips", true),
                interval(d, "ips", true),
                interval(d, "doubly_robust", true),
                interval(d, "failure_rate", true),
            ]
        })
        .collect();
    report
        .section("Differences against arm 1 (semantic), same resamples")
        .table(
            &[
                "#",
                "arm",
                "ΔSNIPS",
                "ΔIPS",
                "Δdoubly robust",
                "Δfailure rate",
            ],
            rows,
        );
    report.section("Traffic").fields(fields_of(
        p,
        &[
            "traffic.recalls",
            "traffic.training_recalls",
            "traffic.held_out_recalls",
            "traffic.training_rewards",
            "traffic.held_out_without_outcome",
            "traffic.held_out_unusable",
            "traffic.explored_recalls",
            "traffic.shadow_recalls",
            "traffic.semantic_policy_recalls",
            "traffic.rank_prior_policy_recalls",
            "source.ledger.traffic_high_water_seq",
        ],
    ));
    report.section("Training ledger").fields(fields_of(
        p,
        &[
            "ledger.backend",
            "ledger.partitions",
            "ledger.deliveries",
            "ledger.accepted",
            "ledger.duplicate",
            "ledger.conflicting",
            "ledger.inference_deliveries_removed_for_arm_4",
        ],
    ));
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
    report.section("Settings").fields(fields_of(
        p,
        &[
            "profile_id",
            "profile_digest",
            "evaluation_profile_digest",
            "settings.estimand",
            "settings.weight_clip",
            "settings.held_out_share",
            "settings.min_held_out_episodes",
            "settings.min_effective_sample_size",
            "settings.reward_model",
        ],
    ));
}
