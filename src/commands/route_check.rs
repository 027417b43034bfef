//! `route-check`: turns the flags (or `--case`) into one observation and prints its
//! pilot/meta route ([`crate::contract::route`]).

use crate::cli::RouteCheckArgs;
use crate::contract::route::{self, BehaviorStatus, Complexity, RouteCase};
use crate::error::Error;
use crate::obj;
use crate::wire::json::{Map, Value};

use super::context::{Context, Outcome};

/// The change `route-check` routes: a recorded case, or the facts of one change. A
/// missing key takes the command line's default.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RouteCheckRequest {
    /// A recorded regression observation, used instead of every field below.
    pub case: Option<RouteCase>,
    pub behavior_status: BehaviorStatus,
    /// 1-20 (checked by the route guard).
    pub surface_count: i64,
    pub semantic_contract_change: bool,
    pub generic_boundary_for_specific_policy: bool,
    pub user_visible_behavior_change: bool,
    pub hot_path_or_storage_change: bool,
    pub retrieval_or_memory_quality_claim: bool,
    pub named_reproduction: bool,
    pub named_validation: bool,
    pub effect_evidence: bool,
    pub ux_evidence: bool,
    pub benchmark_evidence: bool,
    pub performance_evidence: bool,
    pub edge_case_complexity: Complexity,
}

impl Default for RouteCheckRequest {
    /// The command line's defaults: a confirmed bug on one surface, low complexity, no
    /// flag set.
    fn default() -> RouteCheckRequest {
        RouteCheckRequest {
            case: None,
            behavior_status: BehaviorStatus::BugConfirmed,
            surface_count: 1,
            semantic_contract_change: false,
            generic_boundary_for_specific_policy: false,
            user_visible_behavior_change: false,
            hot_path_or_storage_change: false,
            retrieval_or_memory_quality_claim: false,
            named_reproduction: false,
            named_validation: false,
            effect_evidence: false,
            ux_evidence: false,
            benchmark_evidence: false,
            performance_evidence: false,
            edge_case_complexity: Complexity::Low,
        }
    }
}

impl From<&RouteCheckArgs> for RouteCheckRequest {
    fn from(args: &RouteCheckArgs) -> RouteCheckRequest {
        RouteCheckRequest {
            case: args.case,
            behavior_status: args.behavior_status,
            surface_count: args.surface_count,
            semantic_contract_change: args.semantic_contract_change,
            generic_boundary_for_specific_policy: args.generic_boundary_for_specific_policy,
            user_visible_behavior_change: args.user_visible_behavior_change,
            hot_path_or_storage_change: args.hot_path_or_storage_change,
            retrieval_or_memory_quality_claim: args.retrieval_or_memory_quality_claim,
            named_reproduction: args.named_reproduction,
            named_validation: args.named_validation,
            effect_evidence: args.effect_evidence,
            ux_evidence: args.ux_evidence,
            benchmark_evidence: args.benchmark_evidence,
            performance_evidence: args.performance_evidence,
            edge_case_complexity: args.edge_case_complexity,
        }
    }
}

/// The observation the request describes (`case` replaces all of its fields), in the
/// reference's input shape.
pub fn observation(request: &RouteCheckRequest) -> Map {
    if let Some(RouteCase::Pr3237) = request.case {
        return route::pr_3237_observation();
    }
    obj! {
        "behavior_status" => request.behavior_status.as_str(),
        "surface_count" => request.surface_count,
        "semantic_contract_change" => request.semantic_contract_change,
        "generic_boundary_for_specific_policy" => request.generic_boundary_for_specific_policy,
        "user_visible_behavior_change" => request.user_visible_behavior_change,
        "hot_path_or_storage_change" => request.hot_path_or_storage_change,
        "retrieval_or_memory_quality_claim" => request.retrieval_or_memory_quality_claim,
        "edge_case_complexity" => request.edge_case_complexity.as_str(),
        "named_reproduction" => request.named_reproduction,
        "named_validation" => request.named_validation,
        "effect_evidence" => request.effect_evidence,
        "ux_evidence" => request.ux_evidence,
        "benchmark_evidence" => request.benchmark_evidence,
        "performance_evidence" => request.performance_evidence,
    }
}

/// Runs `route-check`: the route packet, exit 0.
pub fn run(request: &RouteCheckRequest, _: &Context) -> Result<Outcome, Error> {
    let packet = route::route_packet(&observation(request))?;
    Ok(Outcome::success(Value::Object(packet)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_command};

    fn from_argv(extra: &[&str]) -> RouteCheckRequest {
        let argv: Vec<&str> = ["route-check"].iter().chain(extra).copied().collect();
        let Command::RouteCheck(args) = parse_command(&argv) else {
            panic!("route-check");
        };
        RouteCheckRequest::from(&args)
    }

    #[test]
    fn the_command_line_and_json_give_the_same_request() {
        assert_eq!(from_argv(&[]), RouteCheckRequest::default());
        let json: RouteCheckRequest = serde_json::from_str(
            r#"{"behavior_status": "by_design", "surface_count": 3, "ux_evidence": true,
                "edge_case_complexity": "high"}"#,
        )
        .expect("request");
        let argv = [
            "--behavior-status",
            "by_design",
            "--surface-count",
            "3",
            "--ux-evidence",
            "--edge-case-complexity",
            "high",
        ];
        assert_eq!(from_argv(&argv), json);
        let case: RouteCheckRequest =
            serde_json::from_str(r#"{"case": "pr-3237"}"#).expect("request");
        assert_eq!(from_argv(&["--case", "pr-3237"]), case);
        assert_eq!(observation(&case), route::pr_3237_observation());
    }

    #[test]
    fn the_default_observation_is_a_low_risk_confirmed_bug() {
        let observation = observation(&RouteCheckRequest::default());
        assert_eq!(
            observation.get("behavior_status"),
            Some(&Value::from("bug_confirmed"))
        );
        assert_eq!(observation.get("surface_count"), Some(&Value::Int(1)));
        assert_eq!(
            observation.get("edge_case_complexity"),
            Some(&Value::from("low"))
        );
        assert_eq!(observation.len(), 14);
    }
}
