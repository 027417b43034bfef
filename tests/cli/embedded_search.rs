//! What the embedded store indexes for an ingested memory: the whole memory text of a
//! summary the LoopX contract shortens to 500 characters (the receipt says so), and the
//! bound past which a memory is refused; the term index answering recall as FTS5 does, and
//! built by the first write of a store that lacks it.

use serde_json::json;

use crate::ingest_event::{bulk, configured, conforms, embedded, embedded_setup, store};
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

/// The results of a recall: each result's refs and relevance, in order.
fn ranked_results(run: &Run) -> Vec<(String, String, f64)> {
    let packet = run.json();
    packet["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["memory_ref"].as_str().expect("memory_ref").to_owned(),
                r["candidate_ref"]
                    .as_str()
                    .expect("candidate_ref")
                    .to_owned(),
                r["relevance_score"].as_f64().expect("relevance_score"),
            )
        })
        .collect()
}

fn meta(s: &Scratch, key: &str) -> Option<String> {
    store(s)
        .query_row("SELECT value FROM store_meta WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .ok()
}

#[test]
fn the_term_index_and_fts5_answer_a_recall_with_the_same_results() {
    let s = embedded_setup(|_| {});
    let texts = [
        "Run the focused test suite before pushing a branch.",
        "Keep memory-core changes focused and tested.",
        "A branch pushed without tests breaks the suite for everyone.",
        "Document the café migration; tests first, then the suite.",
        "Never push to main without a review.",
    ];
    let lines: String = texts
        .iter()
        .map(|text| {
            let mut event = embedded("event.json");
            event["event"]["content_summary"] = json!(text);
            format!("{event}\n")
        })
        .collect();
    s.write("events.jsonl", &lines);
    let ingest = bulk(&s, "events.jsonl", &["--execute"]);
    assert_eq!(ingest.code, 0, "{}", ingest.stdout);
    assert_eq!(meta(&s, "search_generation"), meta(&s, "generation"));
    assert_eq!(meta(&s, "search_rows").as_deref(), Some("5"));
    for query in ["focused test suite branch", "café tests push review"] {
        let indexed = ranked_results(&recall(&s, query));
        assert!(indexed.len() >= 3, "{query}: {indexed:?}");
        // Without the term index's state, FTS5 answers the same recall.
        let saved = meta(&s, "search_generation").expect("recorded");
        store(&s)
            .execute("DELETE FROM store_meta WHERE key = 'search_generation'", [])
            .expect("forget");
        assert_eq!(ranked_results(&recall(&s, query)), indexed, "{query}");
        store(&s)
            .execute(
                "INSERT INTO store_meta (key, value) VALUES ('search_generation', ?1)",
                [saved],
            )
            .expect("restore");
    }
}

#[test]
fn a_store_without_the_term_index_gets_it_at_its_next_write() {
    let s = embedded_setup(|_| {});
    assert_eq!(
        configured(&s, "event.json", true).json()["status"],
        "activated"
    );
    let conn = store(&s);
    conn.execute_batch(
        "DROP TABLE search_postings; DELETE FROM store_meta WHERE key LIKE 'search_%';",
    )
    .expect("as an older version left it");
    drop(conn);
    let before = ranked_results(&recall(&s, "focused memory core changes"));
    assert_eq!(meta(&s, "search_generation"), None, "a read builds nothing");
    write_long_event(&s, 30);
    assert_eq!(
        configured(&s, "long.json", true).json()["status"],
        "activated"
    );
    assert_eq!(meta(&s, "search_generation"), meta(&s, "generation"));
    assert_eq!(meta(&s, "search_rows").as_deref(), Some("2"));
    // The corpus grew (its statistics with it): the same record still ranks first.
    let after = ranked_results(&recall(&s, "focused memory core changes"));
    let first = |r: &[(String, String, f64)]| r.first().map(|(m, c, _)| (m.clone(), c.clone()));
    assert_eq!(first(&after), first(&before));
    assert_eq!(
        ranked_results(&recall(&s, "zanzibar")).len(),
        1,
        "the new record is found"
    );
}
