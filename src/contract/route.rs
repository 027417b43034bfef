//! The pilot/meta route guard (`reward_memory_pilot_meta_route_v0`) and `route-check`.
//!
//! Owns the deterministic fixture guard that sends an issue-fix observation to a pilot
//! fix, an evidence hold or a meta design gate, the PR #3237 regression observation, the
//! observation's closed value sets ([`BehaviorStatus`], [`Complexity`]) and the guard's
//! reason codes. It is a guard fixture, not the live reasoner: it grants no memory or
//! write authority. Pure: no I/O.

use crate::obj;
use crate::wire::choice::Choice;
use crate::wire::json::{Map, Value};
use crate::wire::pyfmt::{pystr, pystr_strip};
use crate::wire::text::{FieldError, FieldResult, public_safe_text, strict_bool};

/// Schema of the route packet.
pub const ROUTE_SCHEMA_VERSION: &str = "reward_memory_pilot_meta_route_v0";
/// `case_ref` of an observation without one.
pub const MANUAL_CASE_REF: &str = "manual_observation";
/// `case_ref` of the PR #3237 regression observation.
pub const PR_3237_CASE_REF: &str = "https://github.com/volcengine/OpenViking/pull/3237";

crate::choice! {
    /// A recorded regression observation `route-check` can replay instead of flags.
    pub enum RouteCase {
        /// [`pr_3237_observation`].
        Pr3237 => "pr-3237",
    }
}

crate::choice! {
    /// Whether the observed behaviour is a confirmed bug (`behavior_status`).
    pub enum BehaviorStatus {
        BugConfirmed => "bug_confirmed",
        ByDesign => "by_design",
        Uncertain => "uncertain",
    }
}

crate::choice! {
    /// Edge-case complexity of a change (`edge_case_complexity`).
    pub enum Complexity {
        Low => "low",
        Medium => "medium",
        High => "high",
    }
}

/// Why a route packet could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// The observation is invalid; the message is the reference's.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// A validated route observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteObservation {
    /// Public-safe, at most 240 characters.
    pub case_ref: String,
    pub behavior_status: BehaviorStatus,
    /// 1..=20.
    pub surface_count: i64,
    pub semantic_contract_change: bool,
    pub generic_boundary_for_specific_policy: bool,
    pub user_visible_behavior_change: bool,
    pub hot_path_or_storage_change: bool,
    pub retrieval_or_memory_quality_claim: bool,
    pub edge_case_complexity: Complexity,
    pub named_reproduction: bool,
    pub named_validation: bool,
    pub effect_evidence: bool,
    pub ux_evidence: bool,
    pub benchmark_evidence: bool,
    pub performance_evidence: bool,
}

fn fail(message: impl Into<String>) -> FieldError {
    FieldError::new(message)
}

/// The value of `key` as one of `T`'s spellings (surrounding whitespace stripped), else
/// the reference's error naming the sorted spellings as a Python list.
fn member<T: Choice>(observation: &Map, key: &str) -> FieldResult<T> {
    T::from_name(&pystr_strip(observation.get(key))).ok_or_else(|| {
        let mut names = T::names();
        names.sort_unstable();
        let quoted: Vec<String> = names.iter().map(|s| format!("'{s}'")).collect();
        fail(format!("{key} must be one of [{}]", quoted.join(", ")))
    })
}

/// `str(v or "manual_observation")`, refused when it starts like a local path, then
/// public-safe compacted to 240 characters.
fn case_ref(v: Option<&Value>) -> FieldResult<String> {
    let raw = match v {
        Some(value) if value.is_truthy() => pystr(Some(value)),
        _ => MANUAL_CASE_REF.to_owned(),
    };
    let error = || fail("case_ref must be compact and public-safe");
    if raw.starts_with('/') || raw.starts_with('~') {
        return Err(error());
    }
    public_safe_text(Some(&Value::Str(raw.into())), 240).ok_or_else(error)
}

impl RouteObservation {
    /// Validates a JSON observation in the reference order (behavior status, complexity,
    /// surface count, the eleven strict booleans, then `case_ref`).
    pub fn from_map(observation: &Map) -> FieldResult<RouteObservation> {
        let behavior_status = member(observation, "behavior_status")?;
        let complexity = member(observation, "edge_case_complexity")?;
        let surface_count = match observation.get("surface_count") {
            Some(Value::Int(n)) => *n,
            // Out of any i64 range, so certainly outside 1..=20.
            Some(Value::BigInt(_)) => i64::MAX,
            _ => return Err(fail("surface_count must be an integer")),
        };
        if !(1..=20).contains(&surface_count) {
            return Err(fail("surface_count must be between 1 and 20"));
        }
        let flag = |key: &str| strict_bool(observation.get(key), key);
        // Written in the reference's order: a struct literal evaluates in source order.
        Ok(RouteObservation {
            behavior_status,
            edge_case_complexity: complexity,
            surface_count,
            semantic_contract_change: flag("semantic_contract_change")?,
            generic_boundary_for_specific_policy: flag("generic_boundary_for_specific_policy")?,
            user_visible_behavior_change: flag("user_visible_behavior_change")?,
            hot_path_or_storage_change: flag("hot_path_or_storage_change")?,
            retrieval_or_memory_quality_claim: flag("retrieval_or_memory_quality_claim")?,
            named_reproduction: flag("named_reproduction")?,
            named_validation: flag("named_validation")?,
            effect_evidence: flag("effect_evidence")?,
            ux_evidence: flag("ux_evidence")?,
            benchmark_evidence: flag("benchmark_evidence")?,
            performance_evidence: flag("performance_evidence")?,
            case_ref: case_ref(observation.get("case_ref"))?,
        })
    }

    /// The observation as a JSON object (the reference's input shape).
    pub fn to_map(&self) -> Map {
        obj! {
            "case_ref" => self.case_ref.as_str(),
            "behavior_status" => self.behavior_status.as_str(),
            "surface_count" => self.surface_count,
            "semantic_contract_change" => self.semantic_contract_change,
            "generic_boundary_for_specific_policy" => self.generic_boundary_for_specific_policy,
            "user_visible_behavior_change" => self.user_visible_behavior_change,
            "hot_path_or_storage_change" => self.hot_path_or_storage_change,
            "retrieval_or_memory_quality_claim" => self.retrieval_or_memory_quality_claim,
            "edge_case_complexity" => self.edge_case_complexity.as_str(),
            "named_reproduction" => self.named_reproduction,
            "named_validation" => self.named_validation,
            "effect_evidence" => self.effect_evidence,
            "ux_evidence" => self.ux_evidence,
            "benchmark_evidence" => self.benchmark_evidence,
            "performance_evidence" => self.performance_evidence,
        }
    }
}

/// The public PR #3237 regression observation (by-design, cross-surface, high
/// complexity, reproduction and validation named, no evidence).
pub fn pr_3237_observation() -> Map {
    obj! {
        "case_ref" => PR_3237_CASE_REF,
        "behavior_status" => "by_design",
        "surface_count" => 2,
        "semantic_contract_change" => true,
        "generic_boundary_for_specific_policy" => true,
        "user_visible_behavior_change" => true,
        "hot_path_or_storage_change" => true,
        "retrieval_or_memory_quality_claim" => false,
        "edge_case_complexity" => "high",
        "named_reproduction" => true,
        "named_validation" => true,
        "effect_evidence" => false,
        "ux_evidence" => false,
        "benchmark_evidence" => false,
        "performance_evidence" => false,
    }
}

/// The route decision and its reason codes, before packaging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteDecision {
    /// `pilot_fix`, `hold_for_evidence` or `meta_design_gate`.
    pub decision: &'static str,
    pub reason_codes: Vec<String>,
    /// Short names (`effect`, `ux`, `benchmark`, `performance`), in that order.
    pub required_evidence: Vec<&'static str>,
    /// The required items whose evidence flag is false.
    pub missing_required_evidence: Vec<&'static str>,
}

/// Decides the route of a validated observation.
pub fn decide(o: &RouteObservation) -> RouteDecision {
    let mut meta: Vec<String> = Vec::new();
    if o.behavior_status != BehaviorStatus::BugConfirmed {
        meta.push(format!("semantics_{}", o.behavior_status));
    }
    if o.semantic_contract_change {
        meta.push("semantic_contract_change".into());
    }
    if o.surface_count > 1 {
        meta.push("cross_surface_change".into());
    }
    if o.generic_boundary_for_specific_policy {
        meta.push("generic_boundary_for_specific_policy".into());
    }
    if o.edge_case_complexity == Complexity::High {
        meta.push("high_edge_case_complexity".into());
    }
    let evidence = [
        ("effect", true, o.effect_evidence),
        ("ux", o.user_visible_behavior_change, o.ux_evidence),
        (
            "benchmark",
            o.retrieval_or_memory_quality_claim,
            o.benchmark_evidence,
        ),
        (
            "performance",
            o.hot_path_or_storage_change,
            o.performance_evidence,
        ),
    ];
    let required: Vec<&'static str> = evidence
        .iter()
        .filter(|(_, required, _)| *required)
        .map(|(name, _, _)| *name)
        .collect();
    let missing: Vec<&'static str> = evidence
        .iter()
        .filter(|(_, required, present)| *required && !*present)
        .map(|(name, _, _)| *name)
        .collect();
    let missing_codes = missing
        .iter()
        .map(|name| format!("missing_{name}_evidence"));
    let (decision, reason_codes) = if !meta.is_empty() {
        (
            "meta_design_gate",
            meta.into_iter().chain(missing_codes).collect(),
        )
    } else {
        let mut pilot_gaps: Vec<String> = missing_codes.collect();
        if !o.named_reproduction {
            pilot_gaps.push("missing_named_reproduction".into());
        }
        if !o.named_validation {
            pilot_gaps.push("missing_named_validation".into());
        }
        if pilot_gaps.is_empty() {
            (
                "pilot_fix",
                vec![
                    "confirmed_bug_semantics".to_owned(),
                    "single_bounded_surface".to_owned(),
                    "no_semantic_contract_change".to_owned(),
                    "no_generic_boundary_for_specific_policy".to_owned(),
                    format!("edge_case_complexity_{}", o.edge_case_complexity),
                    "reproduction_validation_and_relevant_evidence_present".to_owned(),
                ],
            )
        } else {
            ("hold_for_evidence", pilot_gaps)
        }
    };
    RouteDecision {
        decision,
        reason_codes,
        required_evidence: required,
        missing_required_evidence: missing,
    }
}

/// The `reward_memory_pilot_meta_route_v0` packet of a validated observation.
pub fn decide_route(o: &RouteObservation) -> Map {
    let d = decide(o);
    obj! {
        "ok" => true,
        "schema_version" => ROUTE_SCHEMA_VERSION,
        "case_ref" => o.case_ref.as_str(),
        "decision" => d.decision,
        "reason_codes" => d.reason_codes,
        "required_evidence" => d.required_evidence,
        "missing_required_evidence" => d.missing_required_evidence,
        "pilot_authorized" => d.decision == "pilot_fix",
        "meta_review_required" => d.decision == "meta_design_gate",
        "route_check_role" => "deterministic_guard_fixture_not_live_reasoner",
        "live_reasoning_required" => true,
        "memory_patch_authority" => false,
        "external_write_authorized" => false,
        "raw_issue_or_memory_captured" => false,
    }
}

/// Validates a JSON observation and returns its route packet.
pub fn route_packet(observation: &Map) -> Result<Map, RouteError> {
    Ok(decide_route(&RouteObservation::from_map(observation)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::parse;

    /// The eleven strict booleans of an observation, in the order they are checked.
    const FLAG_KEYS: [&str; 11] = [
        "semantic_contract_change",
        "generic_boundary_for_specific_policy",
        "user_visible_behavior_change",
        "hot_path_or_storage_change",
        "retrieval_or_memory_quality_claim",
        "named_reproduction",
        "named_validation",
        "effect_evidence",
        "ux_evidence",
        "benchmark_evidence",
        "performance_evidence",
    ];

    fn observation(overrides: &[(&str, Value)]) -> Map {
        let mut base = obj! {
            "behavior_status" => "bug_confirmed",
            "surface_count" => 1,
            "edge_case_complexity" => "low",
        };
        for key in FLAG_KEYS {
            base.insert(key, false);
        }
        for (k, v) in overrides {
            base.insert(*k, v.clone());
        }
        base
    }

    fn reasons(overrides: &[(&str, Value)]) -> (String, Vec<String>) {
        let packet = route_packet(&observation(overrides)).expect("valid");
        let decision = packet
            .get("decision")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let codes = crate::wire::json::str_items(packet.get("reason_codes"));
        (decision, codes)
    }

    fn t() -> Value {
        Value::Bool(true)
    }

    #[test]
    fn pr_3237_is_a_meta_design_gate() {
        let packet = route_packet(&pr_3237_observation()).expect("valid");
        assert_eq!(
            packet.get("decision"),
            Some(&Value::from("meta_design_gate"))
        );
        assert_eq!(
            packet.get("reason_codes"),
            Some(&Value::from(vec![
                "semantics_by_design",
                "semantic_contract_change",
                "cross_surface_change",
                "generic_boundary_for_specific_policy",
                "high_edge_case_complexity",
                "missing_effect_evidence",
                "missing_ux_evidence",
                "missing_performance_evidence",
            ]))
        );
        assert_eq!(
            packet.get("required_evidence"),
            Some(&Value::from(vec!["effect", "ux", "performance"]))
        );
        assert_eq!(packet.get("case_ref"), Some(&Value::from(PR_3237_CASE_REF)));
    }

    #[test]
    fn each_meta_reason_is_reported() {
        let rows: Vec<(Vec<(&str, Value)>, &str)> = vec![
            (
                vec![("behavior_status", "uncertain".into())],
                "semantics_uncertain",
            ),
            (
                vec![("semantic_contract_change", t())],
                "semantic_contract_change",
            ),
            (vec![("surface_count", 3.into())], "cross_surface_change"),
            (
                vec![("generic_boundary_for_specific_policy", t())],
                "generic_boundary_for_specific_policy",
            ),
            (
                vec![("edge_case_complexity", "high".into())],
                "high_edge_case_complexity",
            ),
        ];
        for (overrides, code) in rows {
            let (decision, codes) = reasons(&overrides);
            assert_eq!(decision, "meta_design_gate", "{code}");
            assert_eq!(codes, [code, "missing_effect_evidence"], "{code}");
        }
    }

    #[test]
    fn missing_evidence_holds_the_pilot() {
        let (decision, codes) = reasons(&[]);
        assert_eq!(decision, "hold_for_evidence");
        assert_eq!(
            codes,
            [
                "missing_effect_evidence",
                "missing_named_reproduction",
                "missing_named_validation"
            ]
        );
        let (_, codes) = reasons(&[
            ("named_reproduction", t()),
            ("named_validation", t()),
            ("effect_evidence", t()),
            ("user_visible_behavior_change", t()),
            ("retrieval_or_memory_quality_claim", t()),
            ("hot_path_or_storage_change", t()),
        ]);
        assert_eq!(
            codes,
            [
                "missing_ux_evidence",
                "missing_benchmark_evidence",
                "missing_performance_evidence"
            ]
        );
    }

    #[test]
    fn complete_evidence_authorizes_a_pilot_fix() {
        let (decision, codes) = reasons(&[
            ("named_reproduction", t()),
            ("named_validation", t()),
            ("effect_evidence", t()),
            ("edge_case_complexity", "medium".into()),
        ]);
        assert_eq!(decision, "pilot_fix");
        assert_eq!(
            codes,
            [
                "confirmed_bug_semantics",
                "single_bounded_surface",
                "no_semantic_contract_change",
                "no_generic_boundary_for_specific_policy",
                "edge_case_complexity_medium",
                "reproduction_validation_and_relevant_evidence_present"
            ]
        );
    }

    #[test]
    fn validation_errors_use_the_reference_strings() {
        let rows: Vec<(Vec<(&str, Value)>, &str)> = vec![
            (
                vec![("behavior_status", "maybe".into())],
                "behavior_status must be one of ['bug_confirmed', 'by_design', 'uncertain']",
            ),
            (
                vec![("edge_case_complexity", "extreme".into())],
                "edge_case_complexity must be one of ['high', 'low', 'medium']",
            ),
            (
                vec![("surface_count", Value::Float(2.0))],
                "surface_count must be an integer",
            ),
            (
                vec![("surface_count", t())],
                "surface_count must be an integer",
            ),
            (
                vec![("surface_count", 0.into())],
                "surface_count must be between 1 and 20",
            ),
            (
                vec![("surface_count", 21.into())],
                "surface_count must be between 1 and 20",
            ),
            (
                vec![(
                    "surface_count",
                    Value::BigInt("99999999999999999999".into()),
                )],
                "surface_count must be between 1 and 20",
            ),
            (
                vec![("ux_evidence", 1.into())],
                "ux_evidence must be a boolean",
            ),
            (
                vec![("case_ref", "~/notes".into())],
                "case_ref must be compact and public-safe",
            ),
            (
                vec![("case_ref", "see /tmp/x".into())],
                "case_ref must be compact and public-safe",
            ),
            // Several invalid fields: the first in the reference's order is reported.
            (
                vec![
                    ("named_reproduction", 1.into()),
                    ("semantic_contract_change", 1.into()),
                ],
                "semantic_contract_change must be a boolean",
            ),
            (
                vec![
                    ("performance_evidence", 1.into()),
                    ("named_validation", 1.into()),
                ],
                "named_validation must be a boolean",
            ),
            (
                vec![("case_ref", "~/x".into()), ("ux_evidence", 1.into())],
                "ux_evidence must be a boolean",
            ),
            (
                vec![("ux_evidence", 1.into()), ("surface_count", 0.into())],
                "surface_count must be between 1 and 20",
            ),
        ];
        for (overrides, message) in rows {
            assert_eq!(
                route_packet(&observation(&overrides))
                    .expect_err(message)
                    .to_string(),
                message
            );
        }
    }

    #[test]
    fn case_ref_defaults_and_is_compacted() {
        let packet = route_packet(&observation(&[("case_ref", Value::Bool(false))])).expect("ok");
        assert_eq!(packet.get("case_ref"), Some(&Value::from(MANUAL_CASE_REF)));
        let packet = route_packet(&observation(&[("case_ref", " a \n b ".into())])).expect("ok");
        assert_eq!(packet.get("case_ref"), Some(&Value::from("a b")));
        let parsed = parse(r#"{"case_ref": 5}"#).expect("json");
        let five = parsed.get("case_ref").cloned().expect("five");
        let packet = route_packet(&observation(&[("case_ref", five)])).expect("ok");
        assert_eq!(packet.get("case_ref"), Some(&Value::from("5")));
    }
}
