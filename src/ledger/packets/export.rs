//! What `utility-ledger export --salvage` read of a damaged ledger, and the summary line
//! it prints on stderr. (The export lines themselves are LoopX's
//! `memory_utility_observation_v0` packets.)

/// What `export --salvage` read of a damaged ledger.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SalvageReport {
    /// Deliveries after this sequence were asked for.
    pub after_seq: i64,
    /// Lines written.
    pub exported: u64,
    /// The greatest sequence the ledger records having reached (`None`: unreadable).
    pub high_water: Option<i64>,
    /// The greatest sequence read (`after_seq` when none).
    pub last_read: i64,
    /// Sequences not exported (unreadable, or read but not a valid observation of a
    /// readable partition), in order; at most [`SALVAGE_RANGES`] ranges are kept.
    pub lost: Vec<(i64, i64)>,
    /// Every sequence not exported (exact).
    pub lost_count: i64,
    /// Of those, rows that were read but are not a valid observation of a readable
    /// partition.
    pub damaged_rows: i64,
}

/// Ranges of lost sequences kept in a [`SalvageReport`].
pub const SALVAGE_RANGES: usize = 16;

impl SalvageReport {
    /// True when every sequence from `after_seq + 1` to a readable high water was
    /// exported.
    pub fn complete(&self) -> bool {
        self.high_water.is_some() && self.lost_count == 0
    }

    /// Counts the sequences `first..=last` as lost (nothing when `last < first`), keeping
    /// at most [`SALVAGE_RANGES`] ranges.
    pub fn lose(&mut self, first: i64, last: i64) {
        if last < first {
            return;
        }
        self.lost_count += last - first + 1;
        let kept = self.lost.len();
        match self.lost.last_mut() {
            Some(range) if range.1 + 1 == first => range.1 = last,
            _ if kept < SALVAGE_RANGES => self.lost.push((first, last)),
            _ => {}
        }
    }
}

/// The `reward-memory: salvage ...` line `export --salvage` prints on stderr: how many
/// deliveries were exported and which sequences were lost; it never calls an export
/// complete unless every sequence up to a readable high water was exported.
pub fn salvage_summary(r: &SalvageReport) -> String {
    let first = r.after_seq + 1;
    let lost = if r.lost_count == 0 {
        String::new()
    } else {
        let mut ranges: Vec<String> = r
            .lost
            .iter()
            .map(|(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        let listed: i64 = r.lost.iter().map(|(a, b)| b - a + 1).sum();
        if listed < r.lost_count {
            ranges.push("...".to_owned());
        }
        let damaged = if r.damaged_rows > 0 {
            format!(", {} of them read but damaged", r.damaged_rows)
        } else {
            String::new()
        };
        format!(
            "; {} could not be exported{damaged}: sequences {}",
            r.lost_count,
            ranges.join(", ")
        )
    };
    match r.high_water {
        Some(high) if r.lost_count == 0 => format!(
            "salvage complete: exported all {} deliveries after sequence {} (sequences {first}-{high})",
            r.exported, r.after_seq
        ),
        Some(high) => format!(
            "salvage incomplete: exported {} of {} deliveries after sequence {} (sequences {first}-{high}){lost}",
            r.exported,
            (high - r.after_seq).max(0),
            r.after_seq
        ),
        None => format!(
            "salvage incomplete: exported {} deliveries after sequence {}; the ledger's last sequence cannot be read, so deliveries after sequence {} may be missing{lost}",
            r.exported, r.after_seq, r.last_read
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_salvage_summary_claims_completeness_only_with_a_known_high_water() {
        let complete = SalvageReport {
            exported: 10,
            high_water: Some(10),
            last_read: 10,
            ..SalvageReport::default()
        };
        assert!(complete.complete());
        assert_eq!(
            salvage_summary(&complete),
            "salvage complete: exported all 10 deliveries after sequence 0 (sequences 1-10)"
        );
        let lost = SalvageReport {
            exported: 7,
            high_water: Some(10),
            last_read: 10,
            lost: vec![(3, 4), (9, 9)],
            lost_count: 3,
            damaged_rows: 1,
            ..SalvageReport::default()
        };
        assert!(!lost.complete());
        assert_eq!(
            salvage_summary(&lost),
            "salvage incomplete: exported 7 of 10 deliveries after sequence 0 (sequences 1-10); \
             3 could not be exported, 1 of them read but damaged: sequences 3-4, 9"
        );
        let unknown = SalvageReport {
            after_seq: 4,
            exported: 6,
            last_read: 10,
            ..SalvageReport::default()
        };
        assert!(
            !unknown.complete(),
            "no readable high water: never complete"
        );
        assert!(
            salvage_summary(&unknown).contains("deliveries after sequence 10 may be missing"),
            "{}",
            salvage_summary(&unknown)
        );
    }
}
