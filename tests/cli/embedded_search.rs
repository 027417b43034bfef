//! What the embedded store indexes for an ingested memory: the whole memory text of a
//! summary the LoopX contract shortens to 500 characters (the receipt says so), and the
//! bound past which a memory is refused.

use serde_json::json;

use crate::ingest_event::{configured, conforms, embedded, embedded_setup, store};
use crate::support::{Run, Scratch, pretty};

/// Writes `long.json`: the embedded example event whose summary is `words` words long and
/// ends with `zanzibar`.
fn write_long_event(s: &Scratch, words: usize) -> usize {
    let mut event = embedded("event.json");
    let mut summary = "validate material effects ".repeat(words / 3);
    summary.push_str("zanzibar");
    event["event"]["content_summary"] = json!(summary);
    s.write("long.json", &pretty(&event));
    summary.chars().count()
}

fn recall(s: &Scratch, query: &str) -> Run {
    s.run(
        &[
            "--registry",
            "registry.json",
            "--runtime-root",
            "rt",
            "recall",
            "--goal-id",
            "embedded-demo",
            "--agent-id",
            "pilot",
            "--query",
            query,
            "--query-summary",
            "long memory",
            "--observed-at",
            "2026-07-16T01:00:00+00:00",
            "--format",
            "json",
        ],
        None,
    )
}

#[test]
fn a_shortened_summary_is_named_in_the_receipt_and_searchable_whole() {
    let s = embedded_setup(|_| {});
    let chars = write_long_event(&s, 120);
    assert!(chars > 500);
    let planned = configured(&s, "long.json", false);
    assert_eq!(planned.json()["status"], "planned");
    assert_eq!(planned.json()["content_summary_shortened"], true);
    let out = configured(&s, "long.json", true);
    let packet = out.json();
    assert_eq!(packet["status"], "activated", "{}", out.stdout);
    assert_eq!(packet["content_summary_shortened"], true);
    assert_eq!(packet["content_summary_chars"], json!(chars));
    conforms("reward_memory_ingest_receipt_v0", &out);
    let (summary, body): (String, String) = store(&s)
        .query_row(
            "SELECT json_extract(CAST(r.content AS TEXT), '$.content_summary'), f.body
             FROM resources r JOIN resources_fts f ON f.rowid = r.id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("one record");
    assert_eq!(summary.chars().count(), 500, "the record keeps LoopX's 500");
    assert!(body.ends_with("zanzibar"), "the index keeps the whole text");
    let found = recall(&s, "zanzibar");
    assert_eq!(found.code, 0, "{}", found.stdout);
    assert_eq!(
        found.json()["results"].as_array().map(Vec::len),
        Some(1),
        "{}",
        found.stdout
    );
}

#[test]
fn a_summary_that_fits_adds_nothing_to_the_receipt() {
    let s = embedded_setup(|_| {});
    let out = configured(&s, "event.json", false);
    assert!(out.json().get("content_summary_shortened").is_none());
}

#[test]
fn a_memory_past_the_bound_is_refused_with_the_bound_named() {
    let s = embedded_setup(|_| {});
    let chars = write_long_event(&s, 9_000);
    let out = configured(&s, "long.json", true);
    assert_eq!(out.code, 2, "{}", out.stdout);
    let error = out.json()["error"].as_str().unwrap_or_default().to_owned();
    assert!(
        error.contains(&format!("content_summary is {chars} characters"))
            && error.contains("at most 65536"),
        "{error}"
    );
    assert!(!s.path.join("rt/reward-memory/embedded.sqlite3").exists());
}
