//! Rendering a packet as bytes: the exact JSON printer or the markdown view.
//!
//! Markdown is a view of the same packet, in three layers:
//! 1. the summary pinned by the reference: a fixed list of top-level keys in a fixed
//!    order, values through Python's `str()`; nested objects are never dumped but
//!    summarized by their `status` (or `schema_version`), and an operator-control
//!    `receipt` adds its `control_ref` and `effective_action` lines;
//! 2. lines a person needs to act, added under it: the `error` of a packet that is not
//!    ok, and what the packet kind's view in [`views`] adds (guard, rejection and gate
//!    reasons, an observation's label); nothing for the states the reference pins;
//! 3. the kind's body, for the few kinds whose verdict needs a table to be read
//!    (`rank-evaluate`): sections under the summary, in the default output too;
//! 4. with `--detail`, the kind's report ([`report`]) under all of that.
//!
//! [`refusal`] is the one-line stderr message of an exit-2 packet in markdown mode. The
//! JSON output never changes (`jsonl` prints the same packet on one line). Nothing is
//! coloured. [`Format`] names the three outputs;
//! [`error_packet`] is the packet of a request error.

pub mod notes;
pub mod report;
pub mod views;

use crate::wire::json::{self, Map, Value};
use crate::wire::pyfmt;

crate::choice! {
    /// Output format of a packet.
    pub enum Format {
        /// The markdown view: the summary, and with `--detail` the report.
        Markdown => "markdown",
        /// The exact JSON packet.
        Json => "json",
        /// The same packet as one line: compact JSON and a newline (JSON Lines).
        Jsonl => "jsonl",
    }
}

pub use notes::Notes;

/// The `reward_memory_error_v0` packet for a request error; a message over
/// [`crate::wire::keys::MAX_ERROR_BYTES`] is cut ([`crate::wire::keys::bound`]).
pub fn error_packet(message: &str) -> Value {
    Value::Object(crate::obj! {
        "ok" => false,
        "schema_version" => "reward_memory_error_v0",
        "status" => "invalid_request",
        "error" => crate::wire::keys::bound(message).as_ref(),
    })
}

/// Prints `packet` in `format`, including the trailing newline(s).
pub fn render(packet: &Value, format: Format) -> String {
    render_view(packet, &Notes::default(), format, false)
}

/// Prints `packet` in `format`; in markdown, `detail` adds the kind's report, which may
/// show `notes` (facts of the run that the packet does not carry).
pub fn render_view(packet: &Value, notes: &Notes, format: Format, detail: bool) -> String {
    match format {
        Format::Json => json::to_pretty_line(packet),
        Format::Jsonl => json::to_compact_line(packet),
        Format::Markdown => {
            let mut out = markdown(packet);
            out.push_str(&body_report(packet).to_markdown());
            if detail {
                out.push_str(&detail_report(packet, notes).to_markdown());
            }
            out
        }
    }
}

/// The sections a packet kind prints under its summary by default (empty for most kinds,
/// and for every kind whose markdown the reference pins).
pub fn body_report(packet: &Value) -> report::Report {
    let mut out = report::Report::default();
    if let Some(map) = packet.as_object()
        && let Some(view) = views::find(&schema_version(map))
    {
        (view.body)(map, &mut out);
    }
    out
}

/// The `--detail` report of a packet: its kind's view, or every top-level field.
pub fn detail_report(packet: &Value, notes: &Notes) -> report::Report {
    let mut out = report::Report::default();
    if let Some(map) = packet.as_object() {
        match views::find(&schema_version(map)) {
            Some(view) => (view.detail)(map, notes, &mut out),
            None => views::generic_detail(map, notes, &mut out),
        }
    }
    out
}

fn schema_version(map: &Map) -> String {
    map.get("schema_version")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The reason lines added under the pinned summary: the `error` of a packet that is not
/// ok, then the kind's own lines.
pub fn reason_lines(map: &Map) -> Vec<views::Line> {
    let mut lines = Vec::new();
    if map.get("ok") == Some(&Value::Bool(false))
        && let Some(Value::Str(error)) = map.get("error")
    {
        lines.push(("error".to_owned(), error.to_string()));
    }
    if let Some(view) = views::find(&schema_version(map)) {
        lines.extend((view.summary)(map));
    }
    lines
}

/// The message of the `reward-memory: <message>` stderr line that accompanies an exit-2
/// packet in markdown mode: the request error itself, else `<status>: <reasons>`.
pub fn refusal(packet: &Value) -> Option<String> {
    let map = packet.as_object()?;
    if schema_version(map) == "reward_memory_error_v0" {
        return map.get("error").map(pyfmt::py_str_value);
    }
    let status = map.get("status").map(scalar).unwrap_or_default();
    let mut reasons: Vec<String> = reason_lines(map).into_iter().map(|(_, v)| v).collect();
    if let Some(Value::Array(codes)) = map.get("reason_codes")
        && !codes.is_empty()
    {
        let codes: Vec<String> = codes.iter().map(pyfmt::py_str_value).collect();
        reasons.insert(0, codes.join(", "));
    }
    Some(match (status.is_empty(), reasons.is_empty()) {
        (false, false) => format!("{status}: {}", reasons.join("; ")),
        (true, false) => reasons.join("; "),
        (false, true) => status,
        (true, true) => "the packet is not ok".to_owned(),
    })
}

/// `value` as an inline code span: fenced with more backticks than it contains.
fn code(value: &str) -> String {
    let longest = value
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    if longest == 0 {
        return format!("`{value}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {value} {fence}")
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

/// The markdown summary: `# Reward Memory`, a blank line, the known keys, then the
/// packet's reason lines.
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
        for (label, value) in reason_lines(map) {
            lines.push(format!("- {label}: {}", code(&value)));
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
    fn a_request_error_shows_its_error_line() {
        let packet = error_packet("surface_count must be between 1 and 20");
        assert_eq!(
            markdown(&packet),
            "# Reward Memory\n\n- status: `invalid_request`\n\
             - error: `surface_count must be between 1 and 20`\n\n"
        );
        assert_eq!(
            refusal(&packet).as_deref(),
            Some("surface_count must be between 1 and 20")
        );
    }

    #[test]
    fn a_long_request_error_is_cut_to_one_kib_in_the_packet_markdown_and_refusal() {
        let message = format!("bad input: {}", "é".repeat(100_000));
        let packet = error_packet(&message);
        let error = packet
            .get("error")
            .and_then(Value::as_str)
            .expect("error text");
        assert!(error.len() <= 1024, "{} bytes", error.len());
        assert!(error.ends_with(" more bytes not shown)"), "{error}");
        assert!(markdown(&packet).len() <= 1200);
        assert!(refusal(&packet).is_some_and(|r| r.len() <= 1024));
    }

    #[test]
    fn an_error_with_backticks_gets_a_longer_fence() {
        assert_eq!(code("a `b` c"), "`` a `b` c ``");
        assert_eq!(code("plain"), "`plain`");
    }

    #[test]
    fn refusal_joins_status_and_reasons() {
        let packet = Value::Object(crate::obj! {
            "ok" => false,
            "schema_version" => "reward_memory_dogfood_batch_v1",
            "status" => "hold",
            "reason_codes" => Value::from(vec!["a", "b"]),
        });
        assert_eq!(refusal(&packet).as_deref(), Some("hold: a, b"));
    }

    #[test]
    fn json_is_unchanged_by_detail() {
        let packet = error_packet("x");
        assert_eq!(
            render_view(&packet, &Notes::default(), Format::Json, true),
            render(&packet, Format::Json)
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
