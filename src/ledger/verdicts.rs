//! Recorded evaluation verdicts (`rank-evaluate --record`) and the ledger's identity:
//! the row a verdict is stored as ([`VerdictRow`]), recording one in its own write
//! transaction ([`record`]) and reading the newest for a profile and partition
//! ([`newest`]). Verdicts are appended, never updated: the newest record wins.

use super::backend::{LedgerBackend, with_read};
use super::error::LedgerResult;
pub use super::rows::{LEDGER_ID_PREFIX, VerdictRow};

/// What [`record`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The ledger's identity after the write.
    pub ledger_id: String,
    /// The verdict's record number (1, 2, … in record order).
    pub record_seq: i64,
    /// False when the same verdict digest was already recorded (nothing written).
    pub appended: bool,
}

/// Records `row` in one write transaction (the ledger gets its identity if it had none).
pub fn record(backend: &mut dyn LedgerBackend, row: &VerdictRow) -> LedgerResult<Recorded> {
    backend.begin_write()?;
    let result = (|| {
        let ledger_id = backend.ledger_id()?.unwrap_or_default();
        let (record_seq, appended) = backend.record_verdict(row)?;
        Ok(Recorded {
            ledger_id,
            record_seq,
            appended,
        })
    })();
    match result {
        Ok(recorded) => {
            backend.commit()?;
            Ok(recorded)
        }
        Err(e) => {
            backend.rollback();
            Err(e)
        }
    }
}

/// What a recall reads of the ledger for its evaluation gate, in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateState {
    pub ledger_id: Option<String>,
    pub high_water_seq: i64,
    /// The newest recorded verdict's canonical JSON for the profile and partition.
    pub newest_verdict: Option<String>,
}

/// The ledger's identity, high-water mark and newest recorded verdict for
/// (`profile_digest`, `partition`) in one read snapshot.
pub fn newest(
    backend: &mut dyn LedgerBackend,
    profile_digest: &str,
    partition: &str,
) -> LedgerResult<GateState> {
    with_read(backend, |b| {
        Ok(GateState {
            ledger_id: b.ledger_id()?,
            high_water_seq: b.high_water()?,
            newest_verdict: b.newest_verdict(profile_digest, partition)?,
        })
    })
}

/// The ledger's identity in a read snapshot (`None` for a ledger that has none yet).
pub fn ledger_id(backend: &mut dyn LedgerBackend) -> LedgerResult<Option<String>> {
    with_read(backend, |b| b.ledger_id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::sqlite::SqliteLedger;

    fn row(digest: &str, verdict: &str, partitions: &[&str]) -> VerdictRow {
        VerdictRow {
            verdict_digest: digest.to_owned(),
            profile_digest: "murp_p".to_owned(),
            verdict: verdict.to_owned(),
            source_kind: "ledger".to_owned(),
            partitions: partitions.iter().map(|p| (*p).to_owned()).collect(),
            packet: format!("{{\"verdict\":\"{verdict}\",\"d\":\"{digest}\"}}"),
        }
    }

    #[test]
    fn the_newest_record_for_a_profile_and_partition_wins_and_a_repeat_writes_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut ledger = SqliteLedger::new(dir.path().join("ledger.sqlite3"));
        let first = record(
            &mut ledger,
            &row("murv_1", "qualified", &["mur_a", "mur_b"]),
        )
        .expect("recorded");
        assert!(first.appended);
        assert!(first.ledger_id.starts_with(LEDGER_ID_PREFIX));
        assert_eq!(first.ledger_id.len(), LEDGER_ID_PREFIX.len() + 32);
        let second = record(&mut ledger, &row("murv_2", "hold", &["mur_a"])).expect("recorded");
        assert_eq!((second.record_seq, second.appended), (2, true));
        assert_eq!(second.ledger_id, first.ledger_id, "one identity per ledger");
        let again = record(&mut ledger, &row("murv_1", "qualified", &["mur_a"])).expect("ok");
        assert_eq!((again.record_seq, again.appended), (1, false));
        let state = newest(&mut ledger, "murp_p", "mur_a").expect("read");
        assert_eq!(state.ledger_id.as_deref(), Some(first.ledger_id.as_str()));
        assert!(state.newest_verdict.expect("a verdict").contains("murv_2"));
        let other = newest(&mut ledger, "murp_p", "mur_b").expect("read");
        assert!(other.newest_verdict.expect("a verdict").contains("murv_1"));
        let none = newest(&mut ledger, "murp_other", "mur_a").expect("read");
        assert_eq!(none.newest_verdict, None);
    }
}
