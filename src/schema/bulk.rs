//! Schema-only wire types of `ingest-event --input FILE.jsonl` (docs/ingest.md): the
//! `reward_memory_ingest_line_refused_v0` line of an input line that never reached the
//! contract, and the closing `reward_memory_ingest_bulk_summary_v0`; field order being key
//! order. Every other line is the single ingest's receipt.

#![allow(dead_code)]

use std::collections::BTreeMap;

use schemars::JsonSchema;

use crate::const_string;
use crate::wire::schema::AlwaysFalse;

const_string!(LineRefusedVersion, "reward_memory_ingest_line_refused_v0");
const_string!(BulkSummaryVersion, "reward_memory_ingest_bulk_summary_v0");

/// Why a line has no receipt.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineRefusal {
    /// The line is not an ingest input (not JSON, not an object, an unknown key, a field
    /// the form refuses, longer than `--max-input-bytes`).
    Refused,
    /// Its receipt was built, but the store transaction of its batch failed: nothing of
    /// the batch was stored.
    Uncommitted,
}

/// `reward_memory_ingest_line_refused_v0`: one input line refused, with its number.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LineRefused {
    pub ok: AlwaysFalse,
    pub schema_version: LineRefusedVersion,
    /// The line's number in the file (1-based; blank lines count).
    pub line: u64,
    pub status: LineRefusal,
    /// What to fix.
    pub error: String,
}

/// Whether the lines were written.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BulkMode {
    Execute,
    DryRun,
}

/// `reward_memory_ingest_bulk_summary_v0`: the last line of a JSON Lines ingest.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BulkSummary {
    /// Every non-blank line was activated (or planned) and no batch failed.
    pub ok: bool,
    pub schema_version: BulkSummaryVersion,
    pub mode: BulkMode,
    /// Non-blank lines read.
    pub lines: u64,
    /// Lines per status (`activated`, `planned`, `guard_blocked`, `refused`, ...), by name.
    pub status_counts: BTreeMap<String, u64>,
    /// Records the run inserted.
    pub records_written: u64,
    /// Activated lines whose record was already stored with the same bytes.
    pub records_already_stored: u64,
    pub batch_size: u64,
    pub batches_committed: u64,
    pub batches_failed: u64,
    /// Lines neither activated nor planned.
    pub not_ok_line_count: u64,
    /// The first 20 of them, by line number.
    pub first_not_ok_lines: Vec<u64>,
}
