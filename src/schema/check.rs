//! A small structural validator for the subset of JSON Schema that schemars emits:
//! `type`, `const`, `enum`, `properties` (with key order), `required`,
//! `additionalProperties`, `items`, `$ref` into `$defs`, `anyOf`/`oneOf`, `minimum`.

use serde_json::Value as S;

use crate::wire::json::Value;

/// Checks `value` against `schema`; the error names the JSON pointer that failed.
pub fn check(value: &Value, schema: &schemars::Schema) -> Result<(), String> {
    let root = schema.as_value();
    at(value, root, root, "")
}

fn resolve<'a>(node: &'a S, root: &'a S) -> Result<&'a S, String> {
    match node.get("$ref").and_then(S::as_str) {
        Some(reference) => {
            let name = reference
                .strip_prefix("#/$defs/")
                .ok_or_else(|| format!("unsupported $ref {reference}"))?;
            root.get("$defs")
                .and_then(|d| d.get(name))
                .ok_or_else(|| format!("unknown $ref {reference}"))
        }
        None => Ok(node),
    }
}

fn type_matches(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => matches!(value, Value::Bool(_)),
        "integer" => matches!(value, Value::Int(_) | Value::BigInt(_)),
        "number" => matches!(value, Value::Int(_) | Value::BigInt(_) | Value::Float(_)),
        "string" => matches!(value, Value::Str(_)),
        "array" => matches!(value, Value::Array(_)),
        "object" => matches!(value, Value::Object(_)),
        _ => false,
    }
}

fn to_serde(value: &Value) -> S {
    serde_json::to_value(value).unwrap_or(S::Null)
}

fn at(value: &Value, node: &S, root: &S, path: &str) -> Result<(), String> {
    let node = resolve(node, root)?;
    if node.as_bool() == Some(true) {
        return Ok(());
    }
    if let Some(options) = node
        .get("anyOf")
        .or_else(|| node.get("oneOf"))
        .and_then(S::as_array)
    {
        let mut errors = Vec::new();
        for option in options {
            match at(value, option, root, path) {
                Ok(()) => return Ok(()),
                Err(e) => errors.push(e),
            }
        }
        return Err(format!(
            "{path}: no alternative matched ({})",
            errors.join("; ")
        ));
    }
    match node.get("type") {
        Some(S::String(ty)) if !type_matches(value, ty) => {
            return Err(format!("{path}: expected {ty}"));
        }
        Some(S::Array(types))
            if !types
                .iter()
                .filter_map(S::as_str)
                .any(|ty| type_matches(value, ty)) =>
        {
            return Err(format!("{path}: expected one of {types:?}"));
        }
        _ => {}
    }
    if let Some(expected) = node.get("const")
        && to_serde(value) != *expected
    {
        return Err(format!("{path}: expected constant {expected}"));
    }
    if let Some(S::Array(options)) = node.get("enum")
        && !options.contains(&to_serde(value))
    {
        return Err(format!("{path}: value not in enum"));
    }
    if let (Some(min), Value::Int(i)) = (node.get("minimum").and_then(S::as_i64), value)
        && *i < min
    {
        return Err(format!("{path}: below minimum {min}"));
    }
    if let Value::Array(items) = value
        && let Some(item_schema) = node.get("items")
    {
        for (i, item) in items.iter().enumerate() {
            at(item, item_schema, root, &format!("{path}/{i}"))?;
        }
    }
    if let Value::Object(map) = value {
        let properties = node.get("properties").and_then(S::as_object);
        if let Some(required) = node.get("required").and_then(S::as_array) {
            for key in required.iter().filter_map(S::as_str) {
                if !map.contains_key(key) {
                    return Err(format!("{path}: missing required key {key}"));
                }
            }
        }
        if let Some(properties) = properties {
            let order: Vec<&String> = properties.keys().collect();
            let mut last = 0usize;
            for (key, item) in map.iter() {
                match order.iter().position(|k| k.as_str() == key) {
                    Some(pos) => {
                        if pos < last {
                            return Err(format!("{path}/{key}: key out of order"));
                        }
                        last = pos;
                        at(item, &properties[key], root, &format!("{path}/{key}"))?;
                    }
                    None => match node.get("additionalProperties") {
                        Some(S::Bool(false)) => {
                            return Err(if crate::wire::keys::is_plain_key(key) {
                                format!("{path}: unknown key {key}")
                            } else {
                                format!("{path}: an unknown key that is not a plain identifier")
                            });
                        }
                        Some(extra) => at(item, extra, root, &format!("{path}/{key}"))?,
                        None => {}
                    },
                }
            }
        } else if let Some(extra) = node.get("additionalProperties") {
            for (key, item) in map.iter() {
                at(item, extra, root, &format!("{path}/{key}"))?;
            }
        }
    }
    Ok(())
}
