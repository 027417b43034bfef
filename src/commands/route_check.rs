//! `route-check`: turns the flags (or `--case`) into one observation and prints its
//! pilot/meta route ([`crate::contract::route`]).

use crate::cli::{RouteCase, RouteCheckArgs};
use crate::contract::route::{self, behavior_name, complexity_name};
use crate::error::Error;
use crate::obj;
use crate::wire::json::{Map, Value};

use super::Outcome;

/// The observation the CLI flags describe (`--case` replaces all of them).
pub fn observation_from_args(args: &RouteCheckArgs) -> Map {
    if let Some(RouteCase::Pr3237) = args.case {
        return route::pr_3237_observation();
    }
    obj! {
        "behavior_status" => behavior_name(args.behavior_status),
        "surface_count" => args.surface_count,
        "semantic_contract_change" => args.semantic_contract_change,
        "generic_boundary_for_specific_policy" => args.generic_boundary_for_specific_policy,
        "user_visible_behavior_change" => args.user_visible_behavior_change,
        "hot_path_or_storage_change" => args.hot_path_or_storage_change,
        "retrieval_or_memory_quality_claim" => args.retrieval_or_memory_quality_claim,
        "edge_case_complexity" => complexity_name(args.edge_case_complexity),
        "named_reproduction" => args.named_reproduction,
        "named_validation" => args.named_validation,
        "effect_evidence" => args.effect_evidence,
        "ux_evidence" => args.ux_evidence,
        "benchmark_evidence" => args.benchmark_evidence,
        "performance_evidence" => args.performance_evidence,
    }
}

/// Runs `route-check`: the route packet, exit 0.
pub fn run(args: &RouteCheckArgs) -> Result<Outcome, Error> {
    Ok(Outcome::success(Value::Object(route::route_packet(
        &observation_from_args(args),
    )?)))
}
