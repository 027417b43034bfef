//! The standing policy (`reward_memory_standing_policy_v0`, §9.5): one pre-approved,
//! exact-scope write boundary. Pure validation; no provider access.

use crate::contract::architecture::DURABLE_CLASS_IDS;
use crate::obj;
use crate::wire::json::{Map, Value};
use crate::wire::text::{self, FieldError, FieldResult};

/// Schema of a standing policy.
pub const STANDING_POLICY_SCHEMA_VERSION: &str = "reward_memory_standing_policy_v0";
/// The identity scope refs, in their fixed order.
pub const IDENTITY_SCOPE_FIELDS: [&str; 3] = ["user_ref", "peer_ref", "session_ref"];

const MAX_POLICY_VALUES: usize = 12;

const POLICY_FIELDS: &[&str] = &[
    "schema_version",
    "policy_id",
    "enabled",
    "auto_activate",
    "owner_ref",
    "reviewer_ref",
    "authority_source_ref",
    "scope",
    "allowed_target_classes",
    "allowed_source_kinds",
    "allowed_actor_roles",
    "allowed_action_scopes",
    "raw_content_captured",
];

const POLICY_SCOPE_FIELDS: &[&str] = &[
    "workspace_ref",
    "project_ref",
    "surface_ids",
    "user_ref",
    "peer_ref",
    "session_ref",
];

/// A policy token list: a JSON list of 1–12 (or 0–12) unique tokens, sorted.
fn policy_tokens(
    v: Option<&Value>,
    label: &str,
    surface: bool,
    allow_empty: bool,
) -> FieldResult<Vec<String>> {
    let items = match v {
        Some(Value::Array(items)) => items,
        _ => return Err(FieldError(format!("{label} must be a bounded token list"))),
    };
    let minimum = usize::from(!allow_empty);
    if items.len() < minimum || items.len() > MAX_POLICY_VALUES {
        return Err(FieldError(format!(
            "{label} must contain {minimum}-{MAX_POLICY_VALUES} items"
        )));
    }
    let mut result = items
        .iter()
        .map(|item| text::token(Some(item), label))
        .collect::<FieldResult<Vec<String>>>()?;
    let mut unique = result.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != result.len() {
        return Err(FieldError(format!("{label} must not contain duplicates")));
    }
    if surface && result.iter().any(|s| !text::is_surface_id(s)) {
        return Err(FieldError(format!(
            "{label} must contain module-qualified surfaces"
        )));
    }
    debug_assert!(result.iter().all(|s| text::is_token(s)));
    result.sort_unstable();
    Ok(result)
}

fn strs(items: &[String]) -> Value {
    crate::wire::json::str_list(items)
}

/// Validates and normalizes a standing policy (§9.5), in the reference's check order.
pub fn normalize_standing_policy(policy: &Value) -> FieldResult<Map> {
    let raw = text::strict_object(Some(policy), "standing_policy", POLICY_FIELDS)?;
    if raw.get("schema_version")
        != Some(&Value::Str(
            STANDING_POLICY_SCHEMA_VERSION.to_owned().into(),
        ))
    {
        return Err(FieldError::new(
            "standing_policy must use reward_memory_standing_policy_v0",
        ));
    }
    let scope = text::strict_object(
        raw.get("scope"),
        "standing_policy.scope",
        POLICY_SCOPE_FIELDS,
    )?;
    let target_classes = policy_tokens(
        raw.get("allowed_target_classes"),
        "standing_policy.allowed_target_classes",
        false,
        false,
    )?;
    if target_classes
        .iter()
        .any(|c| !DURABLE_CLASS_IDS.contains(&c.as_str()))
    {
        return Err(FieldError::new(
            "standing policy may only activate durable memory classes",
        ));
    }
    if text::strict_bool(
        raw.get("raw_content_captured"),
        "standing_policy.raw_content_captured",
    )? {
        return Err(FieldError::new(
            "standing policy must not capture raw content",
        ));
    }
    let mut normalized_scope = obj! {
        "workspace_ref" => text::token(scope.get("workspace_ref"), "standing_policy.scope.workspace_ref")?,
        "project_ref" => text::token(scope.get("project_ref"), "standing_policy.scope.project_ref")?,
        "surface_ids" => strs(&policy_tokens(scope.get("surface_ids"), "standing_policy.scope.surface_ids", true, false)?),
    };
    for field in IDENTITY_SCOPE_FIELDS {
        if let Some(value) =
            text::optional_token(scope.get(field), &format!("standing_policy.scope.{field}"))?
        {
            normalized_scope.insert(field, value);
        }
    }
    let policy_id = text::token(raw.get("policy_id"), "standing_policy.policy_id")?;
    let enabled = text::strict_bool(raw.get("enabled"), "standing_policy.enabled")?;
    let auto_activate =
        text::strict_bool(raw.get("auto_activate"), "standing_policy.auto_activate")?;
    let owner_ref = text::token(raw.get("owner_ref"), "standing_policy.owner_ref")?;
    let reviewer_ref = text::token(raw.get("reviewer_ref"), "standing_policy.reviewer_ref")?;
    let authority_source_ref = text::token(
        raw.get("authority_source_ref"),
        "standing_policy.authority_source_ref",
    )?;
    let source_kinds = policy_tokens(
        raw.get("allowed_source_kinds"),
        "standing_policy.allowed_source_kinds",
        false,
        false,
    )?;
    let actor_roles = policy_tokens(
        raw.get("allowed_actor_roles"),
        "standing_policy.allowed_actor_roles",
        false,
        false,
    )?;
    let action_scopes = policy_tokens(
        raw.get("allowed_action_scopes"),
        "standing_policy.allowed_action_scopes",
        false,
        true,
    )?;
    Ok(obj! {
        "schema_version" => STANDING_POLICY_SCHEMA_VERSION,
        "policy_id" => policy_id,
        "enabled" => enabled,
        "auto_activate" => auto_activate,
        "owner_ref" => owner_ref,
        "reviewer_ref" => reviewer_ref,
        "authority_source_ref" => authority_source_ref,
        "scope" => normalized_scope,
        "allowed_target_classes" => strs(&target_classes),
        "allowed_source_kinds" => strs(&source_kinds),
        "allowed_actor_roles" => strs(&actor_roles),
        "allowed_action_scopes" => strs(&action_scopes),
        "raw_content_captured" => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(json: &str) -> FieldResult<Map> {
        normalize_standing_policy(&crate::wire::json::parse(json).expect("valid json"))
    }

    const VALID: &str = r#"{"schema_version": "reward_memory_standing_policy_v0", "policy_id": "policy:x",
        "enabled": true, "auto_activate": true, "owner_ref": "owner", "reviewer_ref": "agent:r",
        "authority_source_ref": "policy:a", "scope": {"workspace_ref": "workspace:w", "project_ref": "repository:p",
        "surface_ids": ["b.c", "a.b"]}, "allowed_target_classes": ["hard_policy"],
        "allowed_source_kinds": ["maintainer_correction"], "allowed_actor_roles": ["role"],
        "allowed_action_scopes": [], "raw_content_captured": false}"#;

    #[test]
    fn valid_policy_is_normalized_with_sorted_surfaces() {
        let p = policy(VALID).expect("valid policy");
        assert_eq!(
            p.get("scope").and_then(|s| s.get("surface_ids")),
            Some(&crate::wire::json::str_list(&["a.b", "b.c"]))
        );
        assert_eq!(p.keys().last(), Some("raw_content_captured"));
    }

    #[test]
    fn unknown_fields_and_raw_content_are_rejected() {
        let unknown = VALID.replacen("\"enabled\"", "\"comment\": 1, \"enabled\"", 1);
        assert_eq!(
            policy(&unknown).expect_err("unknown").0,
            "standing_policy contains unsupported fields: comment"
        );
        let raw = VALID.replace(
            "\"raw_content_captured\": false",
            "\"raw_content_captured\": true",
        );
        assert_eq!(
            policy(&raw).expect_err("raw").0,
            "standing policy must not capture raw content"
        );
    }

    #[test]
    fn empty_source_kinds_and_working_context_are_rejected() {
        let empty = VALID.replace("[\"maintainer_correction\"]", "[]");
        assert_eq!(
            policy(&empty).expect_err("empty").0,
            "standing_policy.allowed_source_kinds must contain 1-12 items"
        );
        let class = VALID.replace("[\"hard_policy\"]", "[\"working_context\"]");
        assert_eq!(
            policy(&class).expect_err("class").0,
            "standing policy may only activate durable memory classes"
        );
    }
}
