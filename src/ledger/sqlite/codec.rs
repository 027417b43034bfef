//! The stored forms of the SQLite ledger's values: identifiers as their 32 bytes, order
//! keys as a big-endian instant and the raw `created_at`, labels, levels and bases as
//! their indices; and the decoders of its rows. A stored value this binary could not have
//! written reads as damaged, never as another value.

use rusqlite::Row;

use super::super::error::{LedgerError, LedgerResult};
use super::super::rows::{DeliveryRow, ObservationRow, PartitionRow, SubjectRow, parse_seqs};
use crate::utility::observation::{AttributionLevel, EvidenceBasis, UtilityLabel};
use crate::wire::digest;

/// A stored value this binary could not have written (a damaged row).
pub(super) fn damaged(column: usize) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Blob,
        "damaged ledger value".into(),
    )
}

/// A value that cannot be stored in this layout (never produced by the validator).
pub(super) fn unstorable(what: &str) -> LedgerError {
    LedgerError::Storage(format!("{what} is not in its canonical form"))
}

/// 64 lowercase hex digits → their 32 bytes appended to `out`.
pub(super) fn push_hex(out: &mut Vec<u8>, hex: &str) -> Option<()> {
    out.extend_from_slice(&decode_hex(hex)?);
    Some(())
}

/// 64 lowercase hex digits → their 32 bytes (on the stack: no allocation per id).
pub(super) fn decode_hex(hex: &str) -> Option<[u8; 32]> {
    digest::decode_hex32(hex.as_bytes())
}

pub(super) fn hex_of(prefix: &str, bytes: &[u8]) -> Option<String> {
    if bytes.len() != 32 {
        return None;
    }
    let mut out = String::with_capacity(prefix.len() + 64);
    out.push_str(prefix);
    digest::push_hex(&mut out, bytes);
    Some(out)
}

/// `prefix` + 64 lowercase hex → the 32 bytes.
pub(super) fn id_blob(text: &str, prefix: &str) -> Option<[u8; 32]> {
    decode_hex(text.strip_prefix(prefix)?)
}

pub(super) fn observation_blob(id: &str) -> LedgerResult<[u8; 32]> {
    id_blob(id, "muo_").ok_or_else(|| unstorable("an observation id"))
}

pub(super) fn fingerprint_blob(fp: &str) -> LedgerResult<[u8; 32]> {
    id_blob(fp, "muof_").ok_or_else(|| unstorable("a fingerprint"))
}

/// `mui_`/`mus_`/`mul_` + 64 hex → the level letter then the 32 bytes.
pub(super) fn subject_blob(id: &str) -> Option<[u8; 33]> {
    let tag = match id.get(..4)? {
        "mui_" => b'i',
        "mus_" => b's',
        "mul_" => b'l',
        _ => return None,
    };
    let mut out = [0u8; 33];
    out[0] = tag;
    out[1..].copy_from_slice(&decode_hex(id.get(4..)?)?);
    Some(out)
}

pub(super) fn subject_blob_of(id: &str) -> LedgerResult<[u8; 33]> {
    subject_blob(id).ok_or_else(|| unstorable("a subject id"))
}

pub(super) fn subject_text(blob: &[u8]) -> Option<String> {
    let (tag, rest) = blob.split_first()?;
    let prefix = match tag {
        b'i' => "mui_",
        b's' => "mus_",
        b'l' => "mul_",
        _ => return None,
    };
    hex_of(prefix, rest)
}

pub(super) fn level_of_subject(blob: &[u8]) -> Option<&'static str> {
    match blob.first()? {
        b'i' => Some("item"),
        b's' => Some("set"),
        b'l' => Some("none"),
        _ => None,
    }
}

/// An [`super::order_prefix`] text → 8-byte big-endian instant + `created_at`.
pub(super) fn order_blob(text: &str) -> Option<Vec<u8>> {
    let (micros, created_at) = text.split_once('\u{1}')?;
    if micros.len() != 20 {
        return None;
    }
    let micros: u64 = micros.parse().ok()?;
    let mut out = Vec::with_capacity(8 + created_at.len() + 33);
    out.extend_from_slice(&micros.to_be_bytes());
    out.extend_from_slice(created_at.as_bytes());
    Some(out)
}

/// The creation instant (microseconds) at the head of an [`order_blob`].
pub(super) fn order_micros(blob: &[u8]) -> Option<i128> {
    let (micros, created_at) = blob.split_at_checked(8)?;
    std::str::from_utf8(created_at).ok()?;
    Some(i128::from(u64::from_be_bytes(micros.try_into().ok()?)))
}

/// An [`order_blob`] → its [`super::order_prefix`] text: the instant as 20 decimal
/// digits, `0x01`, `created_at` (written digit by digit: it is decoded for every member
/// of every subject a read reduces).
pub(super) fn order_text(blob: &[u8]) -> Option<String> {
    let (micros, created_at) = blob.split_at_checked(8)?;
    let mut micros = u64::from_be_bytes(micros.try_into().ok()?);
    let created_at = std::str::from_utf8(created_at).ok()?;
    let mut digits = [b'0'; 20];
    for slot in digits.iter_mut().rev() {
        // `micros % 10` is a single decimal digit.
        *slot = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    let mut out = String::with_capacity(21 + created_at.len());
    for d in digits {
        out.push(char::from(d));
    }
    out.push('\u{1}');
    out.push_str(created_at);
    Some(out)
}

/// An [`super::order_key_text`] → [`order_blob`] of its prefix, `0x01`, the id's bytes.
pub(super) fn key_blob(text: &str) -> Option<Vec<u8>> {
    let (prefix, id) = text.rsplit_once('\u{1}')?;
    let mut out = order_blob(prefix)?;
    out.push(1);
    push_hex(&mut out, id.strip_prefix("muo_")?)?;
    Some(out)
}

pub(super) fn key_text(blob: &[u8]) -> Option<String> {
    let split = blob.len().checked_sub(33)?;
    let (order, id) = blob.split_at(split);
    let (sep, id) = id.split_first()?;
    if *sep != 1 {
        return None;
    }
    Some(format!(
        "{}\u{1}{}",
        order_text(order)?,
        hex_of("muo_", id)?
    ))
}

pub(super) fn label_index(text: &str) -> LedgerResult<i64> {
    UtilityLabel::parse(text)
        .map(|l| l.index() as i64)
        .ok_or_else(|| unstorable("a utility label"))
}

pub(super) fn level_index(text: &str) -> LedgerResult<i64> {
    AttributionLevel::parse(text)
        .map(|l| l.index() as i64)
        .ok_or_else(|| unstorable("an attribution level"))
}

pub(super) fn basis_index(text: &str) -> LedgerResult<i64> {
    EvidenceBasis::parse(text)
        .map(|l| l.index() as i64)
        .ok_or_else(|| unstorable("an evidence basis"))
}

pub(super) fn from_index<T: Copy>(all: &[T], row: &Row<'_>, column: usize) -> rusqlite::Result<T> {
    let i: i64 = row.get(column)?;
    usize::try_from(i)
        .ok()
        .and_then(|i| all.get(i).copied())
        .ok_or_else(|| damaged(column))
}

pub(super) fn blob_column<T>(
    row: &Row<'_>,
    column: usize,
    convert: impl Fn(&[u8]) -> Option<T>,
) -> rusqlite::Result<T> {
    let value = row.get_ref(column)?;
    let bytes = value.as_blob().map_err(|_| damaged(column))?;
    convert(bytes).ok_or_else(|| damaged(column))
}

pub(super) fn delivery(row: &Row<'_>) -> rusqlite::Result<DeliveryRow> {
    Ok(DeliveryRow {
        seq: row.get(0)?,
        batch_id: row.get(1)?,
        partition_id: row.get(2)?,
        observation_id: blob_column(row, 3, |b| hex_of("muo_", b))?,
        application_receipt_id: row.get(4)?,
        memory_ref_digests: row.get(5)?,
        outcome_ref: row.get(6)?,
        utility_label: from_index(UtilityLabel::ALL, row, 7)?.as_str().to_owned(),
        attribution_level: from_index(AttributionLevel::ALL, row, 8)?
            .as_str()
            .to_owned(),
        evidence_basis: from_index(EvidenceBasis::ALL, row, 9)?.as_str().to_owned(),
        confidence: row.get(10)?,
        reason_codes: row.get(11)?,
        evidence_refs: row.get(12)?,
        evaluator_ref: row.get(13)?,
        evaluation_version: row.get(14)?,
        created_at: row.get(15)?,
    })
}

pub(super) fn subject(row: &Row<'_>) -> rusqlite::Result<SubjectRow> {
    let seqs: String = row.get(6)?;
    Ok(SubjectRow {
        partition_id: row.get(0)?,
        subject_id: blob_column(row, 1, subject_text)?,
        attribution_level: blob_column(row, 1, level_of_subject)?.to_owned(),
        review_state: row.get(2)?,
        observation_count: row.get(3)?,
        last_key: blob_column(row, 4, key_text)?,
        state: row.get(5)?,
        history_seqs: parse_seqs(&seqs),
    })
}

/// An observation aggregate (columns of [`OBSERVATION_COLUMNS`] from `base`), without
/// its conflict fingerprints.
pub(super) fn observation(row: &Row<'_>, base: usize) -> rusqlite::Result<ObservationRow> {
    Ok(ObservationRow {
        partition_id: row.get(base)?,
        subject_id: blob_column(row, base + 1, subject_text)?,
        observation_id: blob_column(row, base + 2, |b| hex_of("muo_", b))?,
        version_count: row.get(base + 3)?,
        delivery_count: row.get(base + 4)?,
        fingerprint: blob_column(row, base + 5, |b| hex_of("muof_", b))?,
        rep_seq: row.get(base + 6)?,
        rep_order: blob_column(row, base + 7, order_text)?,
        fingerprints: Vec::new(),
        utility_label: from_index(UtilityLabel::ALL, row, base + 8)?,
        evidence_basis: from_index(EvidenceBasis::ALL, row, base + 9)?,
        confidence: row.get(base + 10)?,
    })
}

pub(super) fn partition(row: &Row<'_>) -> rusqlite::Result<PartitionRow> {
    PartitionRow::from_columns(|i| row.get(i), |i| row.get(i))
}

#[cfg(test)]
mod tests {
    use super::{
        hex_of, id_blob, order_blob, order_micros, order_text, subject_blob, subject_text,
    };

    #[test]
    fn order_texts_convert_to_blobs_and_back() {
        for micros in [0u64, 7, 63_912_345_678_901_234, u64::MAX] {
            let text = format!("{micros:020}\u{1}2026-08-15T00:00:00+02:00");
            let blob = order_blob(&text).expect("an order text");
            assert_eq!(order_text(&blob).as_deref(), Some(text.as_str()));
            assert_eq!(order_micros(&blob), Some(i128::from(micros)));
        }
        assert_eq!(order_text(&[0; 7]), None);
    }

    #[test]
    fn ids_convert_to_bytes_and_back_and_non_canonical_ids_are_refused() {
        let hex: String = (0u8..32)
            .map(|b| format!("{:02x}", b.wrapping_mul(37)))
            .collect();
        let id = format!("muo_{hex}");
        let blob = id_blob(&id, "muo_").expect("canonical");
        assert_eq!(blob.len(), 32);
        assert_eq!(hex_of("muo_", &blob).as_deref(), Some(id.as_str()));
        let subject = format!("mus_{hex}");
        let blob = subject_blob(&subject).expect("canonical");
        assert_eq!(blob[0], b's');
        assert_eq!(subject_text(&blob).as_deref(), Some(subject.as_str()));
        for bad in [
            format!("muo_{}", hex.to_uppercase()),
            format!("muo_{}g", &hex[..63]),
            format!("muo_{}", &hex[..62]),
            format!("muo_{hex}00"),
            format!("muo_{}\u{e9}", &hex[..62]),
            format!("mui_{hex}"),
        ] {
            assert_eq!(id_blob(&bad, "muo_"), None, "{bad}");
        }
    }
}
