//! One view per packet kind, keyed by `schema_version`: the lines a packet adds to the
//! markdown summary (its reasons), the sections a few kinds print under it by default
//! (their body: a verdict's table) and its `--detail` report.
//!
//! This file holds the table of views ([`VIEWS`]) and the helpers the views share; the
//! views themselves live by family: `contracts.rs` (the Stage 0-5 LoopX packets),
//! `init.rs` (the setup `init` wrote), `recall.rs` (recall, apply, the rank prior), `utility.rs` (observation, projection,
//! validation), `ledger.rs` (the utility ledger) and `rank_evaluate.rs` (the ranking
//! evaluation; `rank_evaluate_logged.rs` its verdict on logged traffic). To show a new
//! packet kind, write a `<kind>_summary` and a `<kind>_detail` function in its family's
//! file and add one [`PacketView`] to [`VIEWS`] (see `docs/output.md`). A summary function must return nothing for every state whose
//! markdown the recorded reference runs pin (the conformance check catches a slip).
//! Views only read the packet and the run's [`Notes`]; they never compute a decision of
//! their own.

mod contracts;
mod fields;
mod init;
mod ledger;
mod rank_evaluate;
mod rank_evaluate_logged;
mod recall;
mod utility;

use crate::output::notes::Notes;
use crate::wire::json::{Map, Value};
pub use fields::Line;

use super::report::{Report, show};

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
        detail: contracts::architecture_detail,
    },
    PacketView {
        schema_version: "reward_memory_corpus_registry_v0",
        summary: none,
        body: no_body,
        detail: contracts::corpus_registry_detail,
    },
    PacketView {
        schema_version: "reward_memory_corpus_health_v0",
        summary: none,
        body: no_body,
        detail: contracts::health_detail,
    },
    PacketView {
        schema_version: "reward_memory_candidate_review_v0",
        summary: none,
        body: no_body,
        detail: contracts::candidate_review_detail,
    },
    PacketView {
        schema_version: "reward_memory_pilot_meta_route_v0",
        summary: none,
        body: no_body,
        detail: contracts::route_detail,
    },
    PacketView {
        schema_version: "reward_memory_demo_v0",
        summary: none,
        body: init::demo_body,
        detail: init::demo_detail,
    },
    PacketView {
        schema_version: "reward_memory_init_v0",
        summary: none,
        body: init::init_body,
        detail: init::init_detail,
    },
    PacketView {
        schema_version: "reward_memory_experiment_status_v1",
        summary: contracts::experiment_summary,
        body: no_body,
        detail: contracts::experiment_detail,
    },
    PacketView {
        schema_version: "reward_memory_ingest_receipt_v0",
        summary: contracts::ingest_summary,
        body: no_body,
        detail: contracts::ingest_detail,
    },
    PacketView {
        schema_version: "reward_memory_evaluation_v0",
        summary: contracts::evaluation_summary,
        body: no_body,
        detail: contracts::evaluation_detail,
    },
    PacketView {
        schema_version: "reward_memory_dogfood_batch_v1",
        summary: none,
        body: no_body,
        detail: contracts::dogfood_detail,
    },
    PacketView {
        schema_version: "reward_memory_operator_control_v0",
        summary: none,
        body: no_body,
        detail: contracts::operator_control_detail,
    },
    PacketView {
        schema_version: "memory_utility_projection_v0",
        summary: utility::projection_summary,
        body: no_body,
        detail: utility::projection_detail,
    },
    PacketView {
        schema_version: "memory_utility_projection_v1",
        summary: utility::projection_summary,
        body: no_body,
        detail: utility::projection_detail,
    },
    PacketView {
        schema_version: "memory_utility_attribution_receipt_v0",
        summary: utility::attribution_summary,
        body: no_body,
        detail: generic_detail,
    },
    PacketView {
        schema_version: "memory_utility_observation_v0",
        summary: utility::observation_summary,
        body: no_body,
        detail: utility::observation_detail,
    },
    PacketView {
        schema_version: "memory_utility_projection_validation_v0",
        summary: none,
        body: no_body,
        detail: utility::validation_detail,
    },
    PacketView {
        schema_version: "reward_memory_recall_v0",
        summary: recall::recall_summary,
        body: no_body,
        detail: recall::recall_detail,
    },
    PacketView {
        schema_version: "reward_memory_application_v0",
        summary: recall::application_summary,
        body: no_body,
        detail: recall::application_detail,
    },
    PacketView {
        schema_version: "memory_utility_rank_prior_v0",
        summary: recall::rank_prior_summary,
        body: no_body,
        detail: recall::rank_prior_detail,
    },
    PacketView {
        schema_version: "memory_utility_rank_prior_effect_v0",
        summary: recall::effect_summary,
        body: no_body,
        detail: recall::effect_detail,
    },
    PacketView {
        schema_version: "memory_utility_ranking_evaluation_v1",
        summary: none,
        body: rank_evaluate::ranking_evaluation_body,
        detail: rank_evaluate::ranking_evaluation_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_append_v0",
        summary: ledger::ledger_append_summary,
        body: ledger::ledger_append_body,
        detail: ledger::ledger_append_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_projection_v0",
        summary: ledger::ledger_projection_summary,
        body: no_body,
        detail: ledger::ledger_projection_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_subject_v0",
        summary: ledger::ledger_subject_summary,
        body: ledger::ledger_subject_body,
        detail: ledger::ledger_subject_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_projection_v1",
        summary: ledger::ledger_projection_summary,
        body: no_body,
        detail: ledger::ledger_projection_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_subject_v1",
        summary: ledger::ledger_subject_summary,
        body: ledger::ledger_subject_body,
        detail: ledger::ledger_subject_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_review_v0",
        summary: ledger::ledger_review_summary,
        body: ledger::ledger_review_body,
        detail: ledger::ledger_review_detail,
    },
    PacketView {
        schema_version: "memory_utility_ledger_verify_v0",
        summary: ledger::ledger_verify_summary,
        body: no_body,
        detail: ledger::ledger_verify_detail,
    },
];

/// The view registered for `schema_version`.
pub fn find(schema_version: &str) -> Option<&'static PacketView> {
    VIEWS.iter().find(|v| v.schema_version == schema_version)
}

fn none(_: &Map) -> Vec<Line> {
    Vec::new()
}

fn no_body(_: &Map, _: &mut Report) {}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet object from JSON text: the input of the views' tests.
    pub(super) fn parse(text: &str) -> Map {
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
}
