//! The append's intake, on the validating thread: records of the input parsed and
//! validated into deliveries that are ready to store ([`Prepared`]): their storage row and
//! the compact form ([`Staged`]) the aggregate runs classify.

use crate::utility::observation::{EvidenceBasis, Observation, UtilityLabel, validate_observation};
use crate::utility::reducer;
use crate::wire::digest;
use crate::wire::json;

use super::super::rows::{DeliveryRow, PartitionKey, order_prefix};

/// One record of an append input.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// The bytes of one delivery and the line it starts on.
    Item { line: u64, bytes: Vec<u8> },
    /// A record refused before parsing (too large).
    Refused {
        line: u64,
        reason_code: &'static str,
        error: String,
    },
}

/// A validated delivery, made ready on the validating thread: its storage row and its
/// staged form need only their sequence, batch and partition from the writer.
pub(super) struct Prepared {
    /// What the row leaves of the observation: its partition fields.
    pub(super) observation: Observation,
    /// [`PartitionKey::hash_of`] the observation.
    pub(super) partition_hash: u64,
    pub(super) row: DeliveryRow,
    pub(super) staged: Staged,
}

/// Parses and validates one delivery with the observation validator.
pub fn prepare_delivery(bytes: &[u8]) -> Result<Observation, (&'static str, String)> {
    let malformed = "observation_malformed";
    let text = json::decode_utf8(bytes).map_err(|e| (malformed, e.message))?;
    let value = json::parse(text).map_err(|e| (malformed, e.message))?;
    if value.as_object().is_none() {
        return Err((malformed, "observation must be an object".into()));
    }
    let observation = validate_observation(&value).map_err(|e| (e.reason.code(), e.message))?;
    // This port's stricter public-safe rule: the ledger is ours, not the reference's.
    observation
        .credential_free("observation")
        .map_err(|e| (NOT_PUBLIC_SAFE, e.0))?;
    Ok(observation)
}

/// The refusal reason of a delivery whose text looks like it holds a credential.
pub const NOT_PUBLIC_SAFE: &str = "observation_not_public_safe";

/// Records read and validated, not yet written.
#[derive(Default)]
pub(super) struct Intake {
    pub(super) prepared: Vec<Prepared>,
    pub(super) received: i64,
    pub(super) refused: Vec<(u64, &'static str, String)>,
}

impl Intake {
    pub(super) fn take(&mut self, record: Record) {
        self.received += 1;
        match record {
            Record::Refused {
                line,
                reason_code,
                error,
            } => self.refused.push((line, reason_code, error)),
            Record::Item { line, bytes } => match prepare_delivery(&bytes) {
                Ok(mut observation) => {
                    let fingerprint = observation.fingerprint();
                    let subject_id = reducer::subject_id(&observation);
                    let order = order_prefix(observation.created_instant, &observation.created_at);
                    let partition_hash = PartitionKey::hash_of(&observation);
                    let digests = observation.memory_ref_digests.join(",");
                    let row = DeliveryRow::take_from(&mut observation, 0, 0, 0);
                    let staged = Staged {
                        pid: 0,
                        seq: 0,
                        observation_id: PackedId::of(&row.observation_id),
                        subject_id: PackedId::of(&subject_id),
                        fingerprint: PackedId::of(&fingerprint),
                        order,
                        utility_label: observation.utility_label,
                        evidence_basis: observation.evidence_basis,
                        confidence: observation.confidence,
                        digests,
                    };
                    self.prepared.push(Prepared {
                        observation,
                        partition_hash,
                        row,
                        staged,
                    });
                }
                Err((code, message)) => self.refused.push((line, code, message)),
            },
        }
    }
}

/// The id prefixes held packed while staged, in text order (so that packed ids of one
/// kind order as their text does).
const PACKED_PREFIXES: [&str; 5] = ["mui_", "mul_", "muo_", "muof_", "mus_"];

/// An identifier held compactly while staged (a run holds tens of thousands): a known
/// prefix and 64 lowercase hex digits as 32 bytes, anything else as its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum PackedId {
    Hex(u8, [u8; 32]),
    Text(Box<str>),
}

impl PackedId {
    fn of(text: &str) -> PackedId {
        let bytes = text.as_bytes();
        // The tags index PACKED_PREFIXES.
        let (tag, digits) = match bytes.get(..4) {
            Some(b"mui_") => (0u8, &bytes[4..]),
            Some(b"mul_") => (1, &bytes[4..]),
            Some(b"muo_") => (2, &bytes[4..]),
            Some(b"muof") if bytes.get(4) == Some(&b'_') => (3, &bytes[5..]),
            Some(b"mus_") => (4, &bytes[4..]),
            _ => return PackedId::Text(text.into()),
        };
        let Some(packed) = digest::decode_hex32(digits) else {
            return PackedId::Text(text.into());
        };
        PackedId::Hex(tag, packed)
    }

    pub(super) fn text(&self) -> String {
        match self {
            PackedId::Text(text) => text.to_string(),
            PackedId::Hex(tag, bytes) => {
                let prefix = PACKED_PREFIXES
                    .get(usize::from(*tag))
                    .copied()
                    .unwrap_or("");
                let mut out = String::with_capacity(prefix.len() + 64);
                out.push_str(prefix);
                digest::push_hex(&mut out, bytes);
                out
            }
        }
    }
}

/// A stored delivery waiting for its aggregate run: what classification and the
/// aggregate row need, without the rest of the observation.
pub(super) struct Staged {
    pub(super) pid: i64,
    pub(super) seq: i64,
    pub(super) observation_id: PackedId,
    pub(super) subject_id: PackedId,
    pub(super) fingerprint: PackedId,
    pub(super) order: String,
    pub(super) utility_label: UtilityLabel,
    pub(super) evidence_basis: EvidenceBasis,
    pub(super) confidence: f64,
    /// Sorted digests joined by `,`.
    pub(super) digests: String,
}

#[cfg(test)]
mod tests {
    use super::PackedId;

    #[test]
    fn packed_ids_spell_their_text_back_and_order_as_it_does() {
        let hex: String = (0u8..32)
            .map(|b| format!("{:02x}", b.wrapping_mul(53)))
            .collect();
        let mut ids = Vec::new();
        for prefix in ["mui_", "mul_", "muo_", "muof_", "mus_"] {
            let id = format!("{prefix}{hex}");
            assert!(matches!(PackedId::of(&id), PackedId::Hex(..)), "{id}");
            ids.push(id);
        }
        for odd in [
            format!("muo_{}", hex.to_uppercase()),
            format!("muo_{}g", &hex[..63]),
            format!("muo_{}", &hex[..62]),
            format!("muo_{hex}00"),
            format!("muof{hex}"),
            format!("mux_{hex}"),
            String::new(),
        ] {
            assert!(matches!(PackedId::of(&odd), PackedId::Text(_)), "{odd}");
            ids.push(odd);
        }
        for id in &ids {
            assert_eq!(&PackedId::of(id).text(), id);
        }
        let hexes: Vec<&String> = ids[..5].iter().collect();
        for pair in hexes.windows(2) {
            assert!(PackedId::of(pair[0]) < PackedId::of(pair[1]));
        }
    }
}
