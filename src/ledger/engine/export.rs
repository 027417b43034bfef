//! The ledger's deliveries out: `export` (every delivery of one partition, or all after
//! a sequence, as JSON Lines in ledger order) and `export --salvage` (what can still be
//! read of a damaged ledger, with an exact account of what could not).

use std::collections::HashMap;

use crate::utility::observation::validate_observation;
use crate::wire::json::{self, DumpOptions, Value};

use super::super::backend::{LedgerBackend, with_read};
use super::super::error::{LedgerError, LedgerResult};
use super::super::packets::SalvageReport;
use super::super::provenance::Provenance;
use super::super::rows::{DeliveryRow, PartitionKey};

/// Compact JSON in insertion order (stored subject state, export lines).
pub const COMPACT: DumpOptions = DumpOptions {
    indent: None,
    item_sep: ",",
    key_sep: ":",
    sort_keys: false,
    ensure_ascii: false,
};

/// Schema version of an export line with its provenance (`export --provenance`).
pub const DELIVERY_SCHEMA_VERSION: &str = "memory_utility_ledger_delivery_v0";

/// Writes every delivery (of one partition, or all after `after_seq`) as a JSON line,
/// in ledger order: the observation itself (LoopX's packet, which `append` takes back as
/// an import), or with `with_provenance` a [`DELIVERY_SCHEMA_VERSION`] line
/// `{schema_version, seq, provenance, observation}`. Returns the number of lines.
pub fn export(
    backend: &mut dyn LedgerBackend,
    partition: Option<&PartitionKey>,
    after_seq: i64,
    with_provenance: bool,
    write: &mut dyn FnMut(&str) -> LedgerResult<()>,
) -> LedgerResult<u64> {
    with_read(backend, |backend| {
        let mut count = 0u64;
        let provenance: HashMap<i64, Provenance> = if with_provenance {
            let ids: Vec<i64> = backend.batches()?.iter().map(|b| b.batch_id).collect();
            backend.batch_provenance(&ids)?.into_iter().collect()
        } else {
            HashMap::new()
        };
        let partitions: HashMap<i64, PartitionKey> = backend
            .partitions()?
            .into_iter()
            .map(|p| (p.partition_id, p.key))
            .collect();
        let mut emit = |row: DeliveryRow| -> LedgerResult<()> {
            if row.seq <= after_seq {
                return Ok(());
            }
            let key = partitions.get(&row.partition_id).ok_or_else(|| {
                LedgerError::Storage(format!("delivery {} has no partition", row.seq))
            })?;
            let observation = row
                .observation(key)
                .ok_or_else(|| LedgerError::Storage(format!("delivery {} is damaged", row.seq)))?;
            let value = if with_provenance {
                let arrived = provenance.get(&row.batch_id).unwrap_or(&Provenance::Import);
                Value::Object(crate::obj! {
                    "schema_version" => DELIVERY_SCHEMA_VERSION,
                    "seq" => row.seq,
                    "provenance" => arrived.to_value(),
                    "observation" => observation.to_value(),
                })
            } else {
                observation.to_value()
            };
            let mut line = json::dumps(&value, COMPACT);
            line.push('\n');
            count += 1;
            write(&line)
        };
        match partition {
            Some(key) => {
                let id = partitions
                    .iter()
                    .find(|(_, k)| *k == key)
                    .map(|(id, _)| *id);
                if let Some(id) = id {
                    backend.partition_deliveries(id, &mut emit)?;
                }
            }
            None => backend.all_deliveries(after_seq, &mut emit)?,
        }
        Ok(count)
    })
}

/// Writes every delivery after `after_seq` that can still be read from a damaged ledger,
/// in ledger order, as [`export`] writes lines, and accounts for every sequence it could
/// not export: ledger sequences are dense (1 to the high water), so each one missing
/// from what was read, or read but not a valid observation of a readable partition
/// (re-validated as `verify` does), is lost.
pub fn salvage(
    backend: &mut dyn LedgerBackend,
    after_seq: i64,
    write: &mut dyn FnMut(&str) -> LedgerResult<()>,
) -> LedgerResult<SalvageReport> {
    let after_seq = after_seq.max(0);
    let mut report = SalvageReport {
        after_seq,
        last_read: after_seq,
        ..SalvageReport::default()
    };
    let mut expected = after_seq + 1;
    let high = backend.salvage(after_seq, &mut |row, key| {
        if row.seq < expected {
            return Ok(());
        }
        report.lose(expected, row.seq - 1);
        expected = row.seq + 1;
        report.last_read = row.seq;
        let observation = key
            .and_then(|key| row.observation(key))
            .filter(|o| matches!(validate_observation(&o.to_value()), Ok(again) if again == *o));
        let Some(observation) = observation else {
            report.damaged_rows += 1;
            report.lose(row.seq, row.seq);
            return Ok(());
        };
        let mut line = json::dumps(&observation.to_value(), COMPACT);
        line.push('\n');
        report.exported += 1;
        write(&line)
    })?;
    report.high_water = high;
    if let Some(h) = high {
        report.lose(expected, h);
    }
    Ok(report)
}
