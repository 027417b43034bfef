//! JSON Schemas of the packets, generated with schemars.
//!
//! Our own packets and inputs are typed structs that the packets are built from (or the
//! inputs parsed into) and that derive their schema: the rank prior's, the ranking
//! evaluation's, `utility-validate`'s, `recall --input` and `apply --input` come from
//! [`crate::ranking`], [`crate::utility`] and [`crate::recall`], the utility ledger's from
//! [`crate::ledger::packets`]. The packets of LoopX's contracts are built as ordered
//! [`crate::wire::json::Value`]s so that their bytes match the reference; the schema-only
//! types in the submodules describe them for consumers. Field order is key order; the
//! vocabulary (constants, nullable keys, string enums) is [`crate::wire::schema`].
//! [`all`] lists every schema and its file name under `schemas/`; [`check`] tests a
//! packet against a schema (types, constants, required and unknown keys, key order), so
//! the tests can prove that the printed packets match what the schemas promise.

pub mod bulk;
mod check;
pub mod core;
pub mod ingest;
pub mod ledger;
pub mod lifecycle;
pub mod recall;
pub mod stage45;
pub mod utility;

use schemars::{JsonSchema, Schema};

use crate::ranking::{evaluate, prior};

pub use crate::wire::schema::{AlwaysFalse, AlwaysTrue, Nullable};
pub use check::check;

/// One committed schema file.
pub struct SchemaFile {
    /// File name under `schemas/`, e.g. `reward_memory_error_v0.schema.json`.
    pub file_name: String,
    pub schema: Schema,
}

fn file<T: JsonSchema>(schema_version: &str) -> SchemaFile {
    let mut schema = schemars::schema_for!(T);
    schema.insert(
        "$id".to_owned(),
        format!("https://reward-memory.invalid/schemas/{schema_version}.schema.json").into(),
    );
    SchemaFile {
        file_name: format!("{schema_version}.schema.json"),
        schema,
    }
}

/// Every packet schema, in a stable order.
pub fn all() -> Vec<SchemaFile> {
    vec![
        file::<core::ErrorPacket>("reward_memory_error_v0"),
        file::<core::ArchitecturePacket>("reward_memory_architecture_v0"),
        file::<core::CorpusRegistryPacket>("reward_memory_corpus_registry_v0"),
        file::<core::HealthPacket>("reward_memory_corpus_health_v0"),
        file::<core::CandidateReviewPacket>("reward_memory_candidate_review_v0"),
        file::<core::RoutePacket>("reward_memory_pilot_meta_route_v0"),
        file::<core::PilotMetaDelegation>("reward_memory_pilot_meta_delegation_v0"),
        file::<stage45::EvaluationPacket>("reward_memory_evaluation_v0"),
        file::<stage45::DogfoodInput>("reward_memory_dogfood_evaluate_input"),
        file::<stage45::DogfoodBatchPacket>("reward_memory_dogfood_batch_v1"),
        file::<stage45::OperatorControlInput>("reward_memory_operator_control_input"),
        file::<stage45::OperatorControlPacket>("reward_memory_operator_control_v0"),
        file::<lifecycle::LifecycleReceipt>("reward_memory_lifecycle_receipt_v0"),
        file::<bulk::LineRefused>("reward_memory_ingest_line_refused_v0"),
        file::<bulk::BulkSummary>("reward_memory_ingest_bulk_summary_v0"),
        file::<ingest::ExperimentStatusPacket>("reward_memory_experiment_status_v1"),
        file::<crate::contract::experiment::starter::InitPacket>("reward_memory_init_v0"),
        file::<crate::contract::experiment::starter::DemoPacket>("reward_memory_demo_v0"),
        file::<ingest::IngestReceiptPacket>("reward_memory_ingest_receipt_v0"),
        file::<utility::ObservationPacket>("memory_utility_observation_v0"),
        file::<utility::ProjectionPacket>("memory_utility_projection_v0"),
        file::<utility::ProjectionPacketV1>("memory_utility_projection_v1"),
        file::<crate::utility::ValidationPacket>("memory_utility_projection_validation_v0"),
        file::<utility::ProjectionInput>("memory_utility_projection_input"),
        file::<utility::ObserveInput>("memory_utility_observe_input"),
        file::<recall::RecallPacket>("reward_memory_recall_v0"),
        file::<crate::recall::command::RecallInput>("reward_memory_recall_input"),
        file::<recall::ApplicationPacket>("reward_memory_application_v0"),
        file::<crate::recall::decision::Decision>("reward_memory_apply_input"),
        file::<prior::RankPriorPacket>("memory_utility_rank_prior_v0"),
        file::<prior::Profile>("memory_utility_rank_prior_profile_v0"),
        file::<prior::request::RankPriorInput>("memory_utility_rank_prior_input"),
        file::<prior::request::EffectPacket>("memory_utility_rank_prior_effect_v0"),
        file::<evaluate::logged::packet::AnyRankingEvaluation>(
            "memory_utility_ranking_evaluation_v1",
        ),
        file::<evaluate::episodes::Episode>("memory_utility_ranking_episode_v0"),
        file::<evaluate::logged::episodes::LoggedEpisode>("memory_utility_logged_episode_v0"),
        file::<crate::recall::traffic::TrafficEvent>("memory_utility_traffic_event_v0"),
        file::<evaluate::profile::EvaluationProfile>(
            "memory_utility_ranking_evaluation_profile_v0",
        ),
        file::<ledger::AppendReceipt>("memory_utility_ledger_append_v0"),
        file::<ledger::LedgerProjectionPacket>("memory_utility_ledger_projection_v0"),
        file::<ledger::LedgerSubjectPacket>("memory_utility_ledger_subject_v0"),
        file::<ledger::LedgerProjectionPacketV1>("memory_utility_ledger_projection_v1"),
        file::<ledger::LedgerSubjectPacketV1>("memory_utility_ledger_subject_v1"),
        file::<ledger::LedgerVerifyPacket>("memory_utility_ledger_verify_v0"),
        file::<ledger::LedgerReviewPacket>("memory_utility_ledger_review_v0"),
        file::<ledger::PartitionInput>("memory_utility_ledger_partition_input"),
        file::<crate::attribution::AttributionReceipt>("memory_utility_attribution_receipt_v0"),
        file::<crate::attribution::Profile>("memory_utility_attribution_profile_v0"),
        file::<ledger::CorrectionReceipt>("memory_utility_correction_receipt_v0"),
        file::<ledger::CorrectionInput>("memory_utility_correction_input"),
    ]
}

/// Pretty JSON text of a schema, as committed (two-space indent, trailing newline).
pub fn render(schema: &Schema) -> String {
    let value = crate::wire::json::from_serde(schema.as_value().clone());
    crate::wire::json::to_pretty_line(&value)
}
