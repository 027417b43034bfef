//! How a delivery arrived in the ledger ([`Provenance`]): imported through
//! `utility-ledger append`, produced by an evaluator of the attribution runtime, or
//! recorded as an owner correction under an operator checkpoint.
//!
//! Stored once per batch, not per delivery: a batch that did not arrive by import has a
//! row in the ledger's batch-provenance table (created by the first such batch, inside its
//! write transaction); every other batch, including every batch of a ledger written before
//! provenance existed, reads as [`Provenance::Import`]. Owns the wire spelling; never
//! decides what a provenance is worth (that is the rank prior's `require_attested_tiers`).

use schemars::JsonSchema;
use serde::Serialize;

/// How one delivery (every delivery of its batch) arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schemars(rename = "LedgerProvenance")]
pub enum Provenance {
    /// Appended by `utility-ledger append` (and every delivery stored before provenance
    /// was recorded): the caller's claim, not the runtime's.
    Import,
    /// Produced by the attribution runtime's evaluator `evaluator_id`.
    Attribute { evaluator_id: String },
    /// An owner correction recorded by `utility-correct` under the operator checkpoint
    /// `checkpoint_ref`.
    Correct { checkpoint_ref: String },
}

impl Provenance {
    /// The stored kind: `import`, `attribute` or `correct`.
    pub fn kind(&self) -> &'static str {
        match self {
            Provenance::Import => "import",
            Provenance::Attribute { .. } => "attribute",
            Provenance::Correct { .. } => "correct",
        }
    }

    /// The stored ref: the evaluator id, the checkpoint ref, or empty for an import.
    pub fn reference(&self) -> &str {
        match self {
            Provenance::Import => "",
            Provenance::Attribute { evaluator_id } => evaluator_id,
            Provenance::Correct { checkpoint_ref } => checkpoint_ref,
        }
    }

    /// The provenance of a stored (kind, ref) pair; `None` for a kind this binary does
    /// not know (a damaged or newer row).
    pub fn from_stored(kind: &str, reference: &str) -> Option<Provenance> {
        match kind {
            "import" => Some(Provenance::Import),
            "attribute" => Some(Provenance::Attribute {
                evaluator_id: reference.to_owned(),
            }),
            "correct" => Some(Provenance::Correct {
                checkpoint_ref: reference.to_owned(),
            }),
            _ => None,
        }
    }

    /// True when the attribution runtime produced the delivery (`attribute` or `correct`).
    pub fn is_attested(&self) -> bool {
        !matches!(self, Provenance::Import)
    }

    /// The provenance as a packet value (`{"kind": ..., "evaluator_id"|"checkpoint_ref": ...}`).
    pub fn to_value(&self) -> crate::wire::json::Value {
        // An enum of strings always serializes.
        crate::wire::json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provenance_round_trips_through_its_stored_pair() {
        for p in [
            Provenance::Import,
            Provenance::Attribute {
                evaluator_id: "evaluator:deterministic".into(),
            },
            Provenance::Correct {
                checkpoint_ref: "checkpoint:owner-1".into(),
            },
        ] {
            assert_eq!(
                Provenance::from_stored(p.kind(), p.reference()),
                Some(p.clone())
            );
            let kind = p.to_value();
            assert_eq!(
                kind.get("kind").and_then(crate::wire::json::Value::as_str),
                Some(p.kind())
            );
        }
        assert_eq!(Provenance::from_stored("forged", ""), None);
        assert!(!Provenance::Import.is_attested());
    }
}
