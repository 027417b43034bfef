//! The append's intake, on the validating thread: records of the input parsed and
//! validated into deliveries that are ready to store ([`Prepared`]): their storage row and
//! the compact form ([`Staged`]) the aggregate runs classify.

use crate::utility::observation::{EvidenceBasis, Observation, UtilityLabel, validate_observation};
use crate::utility::reducer;
use crate::utility::scan;
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
    // The common shape (what generators and `utility-observe` write) is read straight
    // from the text; every other text, and every refusal, takes the general path.
    let observation = match scan::observation_text(text) {
        Some(observation) => observation,
        None => {
            let value = json::parse(text).map_err(|e| (malformed, e.message))?;
            if value.as_object().is_none() {
                return Err((malformed, "observation must be an object".into()));
            }
            validate_observation(&value).map_err(|e| (e.reason.code(), e.message))?
        }
    };
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
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
    use super::{PackedId, prepare_delivery};
    use crate::utility::observation::validate_observation;
    use crate::wire::json;

    /// The general path alone: parse, then validate (what every delivery took before the
    /// direct reading), with the same refusal codes and messages.
    fn general(
        text: &str,
    ) -> Result<crate::utility::observation::Observation, (&'static str, String)> {
        let value = json::parse(text).map_err(|e| ("observation_malformed", e.message))?;
        if value.as_object().is_none() {
            return Err((
                "observation_malformed",
                "observation must be an object".into(),
            ));
        }
        let observation = validate_observation(&value).map_err(|e| (e.reason.code(), e.message))?;
        observation
            .credential_free("observation")
            .map_err(|e| (super::NOT_PUBLIC_SAFE, e.0))?;
        Ok(observation)
    }

    #[test]
    fn the_direct_reading_prepares_what_the_general_path_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/utility_ledger");
        let mut texts: Vec<String> = Vec::new();
        let mut golden: Vec<_> = std::fs::read_dir(root.join("golden"))
            .map(|dir| dir.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        golden.sort();
        for case in golden {
            let Ok(input) = std::fs::read_to_string(case.join("input.json")) else {
                continue;
            };
            let Ok(value) = json::parse(&input) else {
                continue;
            };
            let items = value
                .get("observations")
                .and_then(json::Value::as_array)
                .map(<[json::Value]>::to_vec)
                .unwrap_or_default();
            for item in items {
                texts.push(json::to_compact_line(&item).trim_end().to_owned());
            }
        }
        assert!(texts.len() > 10, "the golden inputs hold observations");
        if let Ok(lines) = std::fs::read_to_string(root.join("append/every-refusal.jsonl")) {
            texts.extend(lines.lines().map(str::to_owned));
        }
        let base = texts[0].clone();
        let variants = [
            format!("  {base}\n"),
            format!("{base} x"),
            format!("{base}{{}}"),
            base.replacen('{', "{\"confidence\":0.5,", 1),
            base.replacen(":", " : ", 3),
            base.replacen("\"helpful\"", "\"help\\u0066ul\"", 1),
            base.replacen("\"helpful\"", "\" helpful \"", 1),
            base.replacen("false", "0", 1),
            base.replacen("false", "true", 1),
            base.replacen("loopx", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", 1),
            base.replacen("muo_", "muo_0", 1),
            base.replacen("2026", "2027", 1),
            base.replacen("\"item\"", "\"set\"", 1),
            "[]".to_owned(),
            String::new(),
        ];
        texts.extend(variants);
        for text in &texts {
            assert_eq!(prepare_delivery(text.as_bytes()), general(text), "{text}");
        }
    }

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
