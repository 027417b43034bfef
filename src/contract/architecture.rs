//! The Stage-0 architecture contract: the five memory classes and the static
//! `reward_memory_architecture_v0` packet.
//!
//! The packet is an interface fact (every key and literal value is part of the
//! contract), so it is kept as data in `assets/architecture.json` and parsed with the
//! order-preserving parser. Pure.

use std::sync::LazyLock;

use crate::wire::json::{self, Value};

/// The five memory class ids, in contract order.
pub const CLASS_IDS: &[&str] = &[
    "run_bound_reward",
    "hard_policy",
    "soft_preference",
    "procedural_experience",
    "working_context",
];

/// The classes a candidate, standing policy or recall may target.
pub const DURABLE_CLASS_IDS: &[&str] = &["hard_policy", "soft_preference", "procedural_experience"];

static PACKET: LazyLock<Value> =
    LazyLock::new(
        || match json::parse(include_str!("../assets/architecture.json")) {
            Ok(v) => v,
            Err(err) => panic!("built-in architecture packet must parse: {err}"),
        },
    );

/// The `architecture` packet.
pub fn packet() -> Value {
    PACKET.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_lists_the_five_classes_in_order() {
        let packet = packet();
        let classes: Vec<&str> = packet
            .get("memory_classes")
            .and_then(Value::as_array)
            .expect("memory_classes")
            .iter()
            .filter_map(|c| c.get("class_id").and_then(Value::as_str))
            .collect();
        assert_eq!(classes, CLASS_IDS);
        assert_eq!(
            packet.get("status").and_then(Value::as_str),
            Some("design_contract")
        );
    }
}
