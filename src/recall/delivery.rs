//! `recall --deliver-content`: each result's content summary handed to the caller in the
//! printed packet, marked private to the caller (issue 26).
//!
//! The summary is the one the provider's active record carries (at most 500 characters
//! of compact text, §10.3), also for a corpus whose privacy hides it from the public
//! `content_summary` field. It is added to the packet the command prints and to nothing
//! else: the recall session, the application receipt, the traffic log and the ledger are
//! built from the transient items before this runs and never see it. Pure: it takes the
//! finished packet and the summaries in result order.

use crate::obj;
use crate::wire::json::Value;

/// Schema of the object each result carries under `delivered_content`.
pub const DELIVERED_CONTENT_SCHEMA_VERSION: &str = "reward_memory_delivered_content_v0";

/// The visibility of delivered content: for the caller that asked, never stored or
/// forwarded by this binary.
pub const CALLER_PRIVATE: &str = "caller_private";

/// `packet` with `delivered_content` added to each of its results, the `i`-th result
/// taking `summaries[i]`. A packet without results is returned as it is.
pub fn deliver(packet: Value, summaries: &[String]) -> Value {
    let Value::Object(mut map) = packet else {
        return packet;
    };
    let Some(Value::Array(results)) = map.get("results") else {
        return Value::Object(map);
    };
    let delivered: Vec<Value> = results
        .iter()
        .zip(summaries)
        .map(|(result, summary)| match result {
            Value::Object(fields) => Value::Object(fields.clone().merged(&obj! {
                "delivered_content" => obj! {
                    "schema_version" => DELIVERED_CONTENT_SCHEMA_VERSION,
                    "visibility" => CALLER_PRIVATE,
                    "persisted" => false,
                    "content_summary" => summary.as_str(),
                },
            })),
            other => other.clone(),
        })
        .collect();
    map.insert("results", Value::Array(delivered.into()));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json;

    #[test]
    fn each_result_gets_its_own_summary_marked_private() {
        let packet = json::parse(
            r#"{"status": "completed", "results": [{"memory_ref": "a", "rank": 1},
                {"memory_ref": "b", "rank": 2}], "recall_session_ref": null}"#,
        )
        .expect("packet");
        let out = deliver(packet, &["first".to_owned(), "second".to_owned()]);
        let results = out
            .get("results")
            .and_then(Value::as_array)
            .expect("results");
        for (result, summary) in results.iter().zip(["first", "second"]) {
            let delivered = result.get("delivered_content").expect("delivered");
            assert_eq!(
                delivered.get("content_summary").and_then(Value::as_str),
                Some(summary)
            );
            assert_eq!(
                delivered.get("visibility").and_then(Value::as_str),
                Some(CALLER_PRIVATE)
            );
            assert_eq!(delivered.get("persisted"), Some(&Value::Bool(false)));
        }
        // The packet's other keys keep their order.
        let keys: Vec<&str> = out
            .as_object()
            .expect("object")
            .iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["status", "results", "recall_session_ref"]);
    }

    #[test]
    fn a_packet_without_results_is_unchanged() {
        let packet = json::parse(r#"{"status": "guard_blocked"}"#).expect("packet");
        assert_eq!(deliver(packet.clone(), &[]), packet);
    }
}
