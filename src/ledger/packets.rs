//! The packets of the `utility-ledger` commands: the append receipt, the paged ledger
//! projection, the subject look-up and the verify report.
//!
//! Owns their key order and schema versions. Pure: every value comes in as an argument.

use crate::obj;
use crate::utility::reducer::{MAX_REJECTIONS, ReducerContext};
use crate::wire::digest;
use crate::wire::json::{self, Value};
use crate::wire::keys;

use super::{BatchRow, Counters, HISTORY_PER_SUBJECT, LEDGER_SCHEMA_VERSION};

/// Schema version of the append receipt.
pub const APPEND_SCHEMA_VERSION: &str = "memory_utility_ledger_append_v0";
/// Schema version of the paged projection printed beyond the v0 caps.
pub const PROJECTION_SCHEMA_VERSION: &str = "memory_utility_ledger_projection_v0";
/// Schema version of the subject look-up.
pub const SUBJECT_SCHEMA_VERSION: &str = "memory_utility_ledger_subject_v0";
/// Schema version of the verify report.
pub const VERIFY_SCHEMA_VERSION: &str = "memory_utility_ledger_verify_v0";
/// The reducer of ledger packets: the v0 subject rules, uncapped exact counters, history
/// bounded per subject, subjects paged in `subject_id` order.
pub const LEDGER_REDUCER_VERSION: &str = "memory_utility_ledger_reducer_v0";
/// Most refusals listed in a receipt (the counters stay exact).
pub const MAX_REFUSALS: usize = 64;
/// Largest page of the ledger projection (and its default).
pub const MAX_PAGE: usize = 128;

/// One refused delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub line: u64,
    pub reason_code: &'static str,
    pub error: String,
}

/// The paging fields of a ledger projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub limit: usize,
    pub after: Option<String>,
    pub next_after: Option<String>,
}

fn opt(v: &Option<String>) -> Value {
    v.as_deref().map_or(Value::Null, Value::from)
}

/// What an append did.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendReport {
    pub batch: BatchRow,
    /// The first [`MAX_REFUSALS`] refusals.
    pub refusals: Vec<Refusal>,
    pub high_water: i64,
    pub backend: &'static str,
}

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

/// What verify found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerifyReport {
    pub backend: &'static str,
    pub high_water: i64,
    pub batches: i64,
    pub partitions: i64,
    pub deliveries: i64,
    pub observations: i64,
    pub subjects: i64,
    /// The first difference between stored and recomputed state.
    pub first_difference: Option<String>,
    /// The storage's integrity check failed (then nothing was recomputed and every
    /// count is 0): its first problems.
    pub damage: Option<String>,
}

/// `mur_` + SHA-256 of canonical `{ledger_reducer_version, policy_snapshot_ref,
/// reducer_version, retrieval_snapshot_ref, schema_version, scope}` for ledger packets:
/// never equal to a v0 identity, so a reader cannot mistake one for the other.
pub fn ledger_identity(context: &ReducerContext, schema_version: &str) -> String {
    digest::prefixed_canonical(
        "mur_",
        &Value::Object(obj! {
            "schema_version" => schema_version,
            "ledger_reducer_version" => LEDGER_REDUCER_VERSION,
            "reducer_version" => context.reducer_version.as_str(),
            "scope" => context.scope.to_sorted_map(),
            "retrieval_snapshot_ref" => context.retrieval_snapshot_ref.as_str(),
            "policy_snapshot_ref" => context.policy_snapshot_ref.as_str(),
        }),
    )
}

/// `committed` (nothing refused), `refused` (something refused and nothing stored) or
/// `committed_with_refusals`.
pub fn append_status(b: &super::BatchRow) -> &'static str {
    if b.refused == 0 {
        "committed"
    } else if b.appended + b.duplicate + b.conflicting == 0 {
        "refused"
    } else {
        "committed_with_refusals"
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

/// The append receipt, printed only after the batch committed.
pub fn append_receipt(report: &AppendReport) -> Value {
    let b = &report.batch;
    let stored = b.appended + b.duplicate + b.conflicting;
    let refusals: Vec<Value> = report
        .refusals
        .iter()
        .map(|r| {
            Value::Object(obj! {
                "line" => r.line,
                "reason_code" => r.reason_code,
                "error" => keys::bound(&r.error).as_ref(),
            })
        })
        .collect();
    let (first, last) = if stored > 0 {
        (Value::Int(b.first_seq), Value::Int(b.last_seq))
    } else {
        (Value::Null, Value::Null)
    };
    Value::Object(obj! {
        "ok" => b.refused == 0,
        "schema_version" => APPEND_SCHEMA_VERSION,
        "status" => append_status(b),
        "ledger_backend" => report.backend,
        "ledger_schema_version" => LEDGER_SCHEMA_VERSION,
        "batch_id" => b.batch_id,
        "received" => b.received,
        "appended" => b.appended,
        "duplicate" => b.duplicate,
        "conflicting" => b.conflicting,
        "refused" => b.refused,
        "refusals" => Value::from(refusals),
        "refusals_truncated" => b.refused > report.refusals.len() as i64,
        "first_sequence" => first,
        "last_sequence" => last,
        "high_water_sequence" => report.high_water,
        "durable" => true,
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "raw_content_captured" => false,
    })
}

/// The `memory_utility_ledger_projection_v0` page.
pub fn ledger_projection(
    context: &ReducerContext,
    c: &Counters,
    page: Page,
    subjects: Vec<Value>,
    rejections: Vec<Value>,
    last: Option<(String, String)>,
) -> Value {
    let review_required = c.conflicting > 0 || c.conflict_subjects > 0;
    let status = if review_required {
        "review_required"
    } else if c.accepted > 0 {
        "ready"
    } else {
        "empty"
    };
    let proposals: Vec<Value> = subjects
        .iter()
        .filter(|s| {
            s.get("review")
                .and_then(|r| r.get("state"))
                .and_then(Value::as_str)
                .is_some_and(|state| state != "none")
        })
        .map(|s| {
            let review = s.get("review").cloned().unwrap_or(Value::Null);
            let field = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
            Value::Object(obj! {
                "subject_id" => field(s, "subject_id"),
                "attribution_level" => field(s, "attribution_level"),
                "memory_ref_digests" => field(s, "memory_ref_digests"),
                "state" => field(&review, "state"),
                "proposed_action" => field(&review, "proposed_action"),
                "reason_codes" => field(&review, "reason_codes"),
                "quarantine_proposed" => field(&review, "quarantine_proposed"),
                "automatic_deletion" => false,
                "action_authority_granted" => false,
            })
        })
        .collect();
    let (last_at, last_id) = match last {
        Some((at, id)) => (Value::from(at), Value::from(id)),
        None => (Value::Null, Value::Null),
    };
    let returned = subjects.len();
    Value::Object(obj! {
        "ok" => true,
        "schema_version" => PROJECTION_SCHEMA_VERSION,
        "status" => status,
        "projection_ready" => c.accepted > 0 && !review_required,
        "ledger_reducer_version" => LEDGER_REDUCER_VERSION,
        "reducer_version" => context.reducer_version.as_str(),
        "reducer_identity" => ledger_identity(context, PROJECTION_SCHEMA_VERSION),
        "scope" => context.scope.to_sorted_map(),
        "retrieval_snapshot_ref" => context.retrieval_snapshot_ref.as_str(),
        "policy_snapshot_ref" => context.policy_snapshot_ref.as_str(),
        "delivery_count" => c.deliveries,
        "accepted_observation_count" => c.accepted,
        "duplicate_observation_count" => c.duplicate,
        "conflicting_observation_count" => c.conflicting,
        "rejected_observation_count" => c.rejected,
        "lineage_observation_count" => c.accepted,
        "subject_count" => c.subjects,
        "item_subject_count" => c.item_subjects,
        "set_subject_count" => c.set_subjects,
        "unresolved_lineage_count" => c.none_subjects,
        "conflict_subject_count" => c.conflict_subjects,
        "last_observed_at" => last_at,
        "last_observation_id" => last_id,
        "page" => obj! {
            "limit" => page.limit,
            "after" => opt(&page.after),
            "returned" => returned,
            "next_after" => opt(&page.next_after),
        },
        "history_per_subject" => HISTORY_PER_SUBJECT,
        "subjects" => Value::from(subjects),
        "rejections" => Value::from(rejections),
        "rejections_truncated" => c.conflicting > MAX_REJECTIONS as i64,
        "review_proposals" => Value::from(proposals),
        "read_only" => true,
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

/// The `memory_utility_ledger_subject_v0` packet.
pub fn subject_packet(
    context: &ReducerContext,
    digests: &[String],
    missing: &[&String],
    subjects: Vec<Value>,
) -> Value {
    Value::Object(obj! {
        "ok" => true,
        "schema_version" => SUBJECT_SCHEMA_VERSION,
        "status" => if subjects.is_empty() { "not_found" } else { "found" },
        "ledger_reducer_version" => LEDGER_REDUCER_VERSION,
        "reducer_version" => context.reducer_version.as_str(),
        "reducer_identity" => ledger_identity(context, SUBJECT_SCHEMA_VERSION),
        "scope" => context.scope.to_sorted_map(),
        "retrieval_snapshot_ref" => context.retrieval_snapshot_ref.as_str(),
        "policy_snapshot_ref" => context.policy_snapshot_ref.as_str(),
        "memory_ref_digests" => json::str_list(digests),
        "missing_memory_ref_digests" => json::str_list(missing),
        "subject_count" => subjects.len(),
        "history_per_subject" => HISTORY_PER_SUBJECT,
        "subjects" => Value::from(subjects),
        "read_only" => true,
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

/// The `memory_utility_ledger_verify_v0` report.
pub fn verify_packet(report: &VerifyReport) -> Value {
    let (status, difference) = match (&report.damage, &report.first_difference) {
        (Some(damage), _) => (
            "damaged",
            Some(format!(
                "the ledger file is damaged ({damage}): copy out its readable deliveries with `utility-ledger export --salvage` and append them to a new ledger, or restore a backup"
            )),
        ),
        (None, Some(difference)) => ("mismatch", Some(difference.clone())),
        (None, None) => ("verified", None),
    };
    let ok = difference.is_none();
    Value::Object(obj! {
        "ok" => ok,
        "schema_version" => VERIFY_SCHEMA_VERSION,
        "status" => status,
        "ledger_backend" => report.backend,
        "ledger_schema_version" => LEDGER_SCHEMA_VERSION,
        "high_water_sequence" => report.high_water,
        "batch_count" => report.batches,
        "partition_count" => report.partitions,
        "delivery_count" => report.deliveries,
        "observation_count" => report.observations,
        "subject_count" => report.subjects,
        "first_difference" => opt(&difference),
        "read_only" => true,
        "grants_new_action_authority" => false,
        "provider_write_performed" => false,
        "external_writes_performed" => false,
        "raw_content_captured" => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::BatchRow;

    #[test]
    fn a_refusal_text_over_one_kib_is_cut_in_the_receipt() {
        let report = AppendReport {
            batch: BatchRow {
                batch_id: 1,
                first_seq: 0,
                last_seq: 0,
                received: 1,
                appended: 0,
                duplicate: 0,
                conflicting: 0,
                refused: 1,
            },
            refusals: vec![Refusal {
                line: 1,
                reason_code: "observation_malformed",
                error: "x".repeat(100_000),
            }],
            high_water: 0,
            backend: "sqlite",
        };
        let receipt = append_receipt(&report);
        let error = receipt
            .get("refusals")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .and_then(|r| r.get("error"))
            .and_then(Value::as_str)
            .expect("error text");
        assert!(
            error.len() <= keys::MAX_ERROR_BYTES,
            "{} bytes",
            error.len()
        );
        assert!(error.starts_with("xxx"), "{error}");
    }

    #[test]
    fn an_append_that_stored_nothing_is_refused() {
        let batch = |appended, duplicate, refused| BatchRow {
            appended,
            duplicate,
            refused,
            ..BatchRow::default()
        };
        assert_eq!(append_status(&batch(0, 0, 0)), "committed");
        assert_eq!(append_status(&batch(2, 0, 0)), "committed");
        assert_eq!(append_status(&batch(0, 0, 3)), "refused");
        assert_eq!(append_status(&batch(1, 0, 3)), "committed_with_refusals");
        assert_eq!(append_status(&batch(0, 1, 3)), "committed_with_refusals");
    }

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
