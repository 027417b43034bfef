//! The term index against FTS5's own `bm25()` ranking on the same rows.

use rusqlite::{Connection, params};

use super::*;

const WORDS: [&str; 16] = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "running",
    "runs",
    "café",
    "cafe",
    "Zeta",
    "eta",
    "theta",
    "iota",
    "snake_case",
    "don't",
    "v2.0-rc1",
    "ÉCOLE",
];

fn add_row(conn: &Connection, id: i64, text: &str) {
    conn.execute(
        "INSERT INTO resources (id, namespace, resource_ref, content, content_sha256, observed_at)
         VALUES (?1, 'ns', ?2, x'00', '', '')",
        params![id, format!("r{id}")],
    )
    .expect("record");
    conn.execute(
        "INSERT INTO resources_fts (rowid, body) VALUES (?1, ?2)",
        params![id, text],
    )
    .expect("row");
}

/// A store-like schema (`store_meta`, `resources`, `resources_fts` with `tokenizer`) and
/// `n` rows of pseudo-random text (a fixed linear congruential sequence).
fn corpus(tokenizer: Tokenizer, n: i64) -> Connection {
    let conn = Connection::open_in_memory().expect("memory");
    conn.execute_batch(&format!(
        "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE resources (id INTEGER PRIMARY KEY, namespace TEXT, resource_ref TEXT,
             content BLOB, content_sha256 TEXT, observed_at TEXT);
         {}",
        index::create_index_sql(tokenizer)
    ))
    .expect("schema");
    index::set_meta(&conn, index::TOKENIZER_KEY, tokenizer.name()).expect("meta");
    let mut seed: u64 = 17;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    for id in 1..=n {
        let len = 1 + next() as usize % 32;
        let text: Vec<&str> = (0..len)
            .map(|_| WORDS[next() as usize % WORDS.len()])
            .collect();
        add_row(&conn, id, &text.join(if id % 3 == 0 { ", " } else { " " }));
    }
    conn
}

fn fts5_ranking(conn: &Connection, words: &[String]) -> Vec<(i64, f64)> {
    let query = words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    let mut stmt = conn
        .prepare(
            "SELECT rowid, bm25(resources_fts) AS rank FROM resources_fts
             WHERE resources_fts MATCH ?1 ORDER BY rank, rowid",
        )
        .expect("prepare");
    stmt.query_map(params![query], |r| Ok((r.get(0)?, -r.get::<_, f64>(1)?)))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows")
}

fn ours(conn: &Connection, generation: &str, words: &[String]) -> Option<Vec<(i64, f64)>> {
    let scores = search(conn, generation, words).expect("search")?;
    Some(scores.best(scores.len()))
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

#[test]
fn the_term_index_ranks_and_scores_exactly_as_fts5_bm25() {
    for tokenizer in Tokenizer::ALL {
        let conn = corpus(tokenizer, 300);
        update(&conn, "g0", 0, "g1").expect("build");
        for query in [
            words(&["alpha"]),
            words(&["alpha", "beta", "gamma"]),
            words(&["run", "runs", "running", "cafe"]),
            words(&["zeta", "iota", "theta", "eta", "delta", "nothing"]),
            words(&["snake", "case", "don", "t", "v2", "0", "rc1"]),
            words(&["ecole", "école", "alpha"]),
        ] {
            let expected = fts5_ranking(&conn, &query);
            assert!(!expected.is_empty(), "{tokenizer:?} {query:?} matches");
            assert_eq!(
                ours(&conn, "g1", &query),
                Some(expected),
                "{tokenizer:?} {query:?}"
            );
        }
    }
}

#[test]
fn rows_written_after_the_index_are_added_incrementally_with_the_same_scores() {
    let conn = corpus(Tokenizer::Unicode61, 150);
    update(&conn, "g0", 0, "g1").expect("build");
    for id in 151..=400_i64 {
        let word = WORDS[(id as usize * 7) % WORDS.len()].repeat(1 + id as usize % 3);
        add_row(&conn, id, &format!("{word} alpha beta"));
    }
    update(&conn, "g1", 150, "g2").expect("grow");
    let state = state(&conn).expect("state").expect("recorded");
    assert_eq!(state.last_doc, 400);
    assert_eq!(state.corpus.rows, 400);
    let blocks: i64 = conn
        .query_row(
            "SELECT count(*) FROM search_postings WHERE term = 'alpha'",
            [],
            |r| r.get(0),
        )
        .expect("blocks");
    assert!(blocks >= 3, "alpha's postings span {blocks} blocks");
    let query = words(&["alpha", "beta", "gammagamma", "eta"]);
    assert_eq!(ours(&conn, "g2", &query), Some(fts5_ranking(&conn, &query)));
}

#[test]
fn a_stale_or_invalidated_index_is_never_read_and_the_next_write_rebuilds_it() {
    let conn = corpus(Tokenizer::Unicode61, 50);
    update(&conn, "g0", 0, "g1").expect("build");
    let query = words(&["alpha"]);
    assert!(ours(&conn, "g1", &query).is_some());
    // Another generation (a write by a version that does not keep the index).
    assert_eq!(ours(&conn, "g2", &query), None);
    // A write whose previous state is not the recorded one rebuilds from every row.
    update(&conn, "g-other", 50, "g3").expect("rebuild");
    assert_eq!(ours(&conn, "g3", &query), Some(fts5_ranking(&conn, &query)));
    // A record added by hand (the generation unchanged) is not in the index: it may not
    // answer; the next write, whose last record id is not the recorded one, rebuilds it.
    add_row(&conn, 51, "alpha");
    assert_eq!(ours(&conn, "g3", &query), None);
    update(&conn, "g3", 51, "g4").expect("rebuild");
    assert_eq!(ours(&conn, "g4", &query), Some(fts5_ranking(&conn, &query)));
    invalidate(&conn).expect("invalidate");
    assert_eq!(ours(&conn, "g4", &query), None);
    // A recorded tokenizer other than the index's.
    update(&conn, "g4", 51, "g5").expect("rebuild");
    index::set_meta(&conn, index::TOKENIZER_KEY, "porter").expect("meta");
    assert_eq!(ours(&conn, "g5", &query), None);
}

#[test]
fn a_word_fts5_reads_as_several_tokens_leaves_the_search_to_fts5() {
    let conn = corpus(Tokenizer::Unicode61, 20);
    update(&conn, "g0", 0, "g1").expect("build");
    assert_eq!(ours(&conn, "g1", &words(&["alpha beta"])), None);
    // A word of no token (only separators) is no phrase.
    assert!(ours(&conn, "g1", &words(&["alpha", "..."])).is_some());
}
