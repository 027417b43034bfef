//! Rendering a packet as bytes: the exact JSON printer or the markdown summary.
//!
//! Markdown is a view of the same packet: a fixed list of top-level keys in a fixed
//! order, values through Python's `str()`. Nested objects are never dumped; they are
//! summarized by their `status` (or `schema_version`) so the view stays readable, and an
//! operator-control `receipt` adds its `control_ref` and `effective_action` lines.

use crate::cli::Format;
use crate::wire::json::{self, Value};
use crate::wire::pyfmt;

/// Prints `packet` in `format`, including the trailing newline(s).
pub fn render(packet: &Value, format: Format) -> String {
    match format {
        Format::Json => json::to_pretty_line(packet),
        Format::Markdown => markdown(packet),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            // A readable summary instead of a Python dict repr.
            map.get("status")
                .or_else(|| map.get("schema_version"))
                .map(pyfmt::py_str_value)
                .unwrap_or_default()
        }
        other => pyfmt::py_str_value(other),
    }
}

/// The markdown summary: `# Reward Memory`, a blank line, then the known keys.
pub fn markdown(packet: &Value) -> String {
    let mut lines = vec!["# Reward Memory".to_owned(), String::new()];
    if let Some(map) = packet.as_object() {
        for key in [
            "status",
            "decision",
            "effective_decision",
            "health_state",
            "case_ref",
        ] {
            if let Some(v) = map.get(key) {
                lines.push(format!("- {key}: `{}`", scalar(v)));
            }
        }
        if let Some(Value::Object(receipt)) = map.get("receipt") {
            for key in ["control_ref", "effective_action"] {
                if let Some(v) = receipt.get(key) {
                    lines.push(format!("- {key}: `{}`", scalar(v)));
                }
            }
        }
        if let Some(Value::Array(items)) = map.get("memory_classes") {
            lines.push(format!("- memory_classes: `{}`", items.len()));
        }
        if let Some(v) = map.get("corpus_count") {
            lines.push(format!("- corpus_count: `{}`", scalar(v)));
        }
        if let Some(Value::Array(items)) = map.get("reason_codes") {
            let parts: Vec<String> = items.iter().map(pyfmt::py_str_value).collect();
            lines.push(format!("- reason_codes: `{}`", parts.join(", ")));
        }
    }
    let mut out = lines.join("\n");
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_ends_with_an_empty_line_and_keeps_key_order() {
        let packet = Value::Object(crate::obj! {
            "reason_codes" => Value::Array(Box::default()),
            "status" => "activated",
            "ok" => true,
        });
        assert_eq!(
            markdown(&packet),
            "# Reward Memory\n\n- status: `activated`\n- reason_codes: ``\n\n"
        );
    }

    #[test]
    fn nested_decision_renders_its_status_and_the_receipt_lines() {
        let packet = Value::Object(crate::obj! {
            "status" => "control_ready",
            "decision" => crate::obj! {"ok" => true, "status" => "retired"},
            "receipt" => crate::obj! {
                "control_ref" => "control:x",
                "action" => "retire",
                "effective_action" => "retire",
            },
        });
        assert_eq!(
            markdown(&packet),
            "# Reward Memory\n\n- status: `control_ready`\n- decision: `retired`\n\
             - control_ref: `control:x`\n- effective_action: `retire`\n\n"
        );
    }

    #[test]
    fn markdown_uses_python_str_for_scalars() {
        let packet = Value::Object(crate::obj! {"status" => true, "corpus_count" => 7});
        assert_eq!(
            markdown(&packet),
            "# Reward Memory\n\n- status: `True`\n- corpus_count: `7`\n\n"
        );
    }
}
