//! The term index and the FTS5 fallback against a textbook BM25 over FTS5's own tokens.

use std::collections::BTreeMap;

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

/// The textbook sums: every row's tokens as FTS5 holds them (`fts5vocab`), counted here,
/// and Lucene's BM25 (k1 1.5, b 0.75) over them, term by term in query order.
fn textbook(conn: &Connection, terms: &[String]) -> BTreeMap<i64, f64> {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.oracle USING fts5vocab('main', 'resources_fts', 'instance');",
    )
    .expect("vocab");
    let instances: Vec<(String, i64)> = conn
        .prepare("SELECT term, doc FROM temp.oracle")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM resources_fts", [], |r| r.get(0))
        .expect("count");
    let mut len: BTreeMap<i64, f64> = BTreeMap::new();
    let mut tf: BTreeMap<(&str, i64), f64> = BTreeMap::new();
    for (term, doc) in &instances {
        *len.entry(*doc).or_default() += 1.0;
        *tf.entry((term.as_str(), *doc)).or_default() += 1.0;
    }
    let avgdl = instances.len() as f64 / rows as f64;
    let mut sums: BTreeMap<i64, f64> = BTreeMap::new();
    for term in terms {
        let docs: Vec<(i64, f64)> = tf
            .iter()
            .filter(|((t, _), _)| t == term)
            .map(|((_, d), f)| (*d, *f))
            .collect();
        let n = docs.len() as f64;
        let idf = (1.0 + (rows as f64 - n + 0.5) / (n + 0.5)).ln();
        for (doc, f) in docs {
            let norm = 1.5 * (1.0 - 0.75 + 0.75 * len[&doc] / avgdl);
            *sums.entry(doc).or_default() += idf * (f * 2.5) / (f + norm);
        }
    }
    sums
}

fn all(scores: &Scores) -> Vec<(i64, f64)> {
    scores.best(scores.len())
}

fn assert_textbook(conn: &Connection, terms: &[String], got: &[(i64, f64)], what: &str) {
    let expected = textbook(conn, terms);
    assert!(!expected.is_empty(), "{what}: {terms:?} matches");
    let got_map: BTreeMap<i64, f64> = got.iter().copied().collect();
    assert_eq!(
        got_map.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "{what}: {terms:?}: the documents scored"
    );
    for (doc, score) in &expected {
        let ours = got_map[doc];
        assert!(
            (ours - score).abs() <= 1e-12 * score.abs().max(1.0),
            "{what}: {terms:?}: document {doc} scores {ours}, the textbook {score}"
        );
    }
}

fn indexed_scores(
    conn: &Connection,
    generation: &str,
    terms: &[String],
) -> Option<Vec<(i64, f64)>> {
    let tokenizer = index::recorded_tokenizer(conn).expect("tokenizer");
    indexed(conn, generation, tokenizer, terms)
        .expect("search")
        .map(|s| all(&s))
}

fn fts5_scores(conn: &Connection, terms: &[String]) -> Vec<(i64, f64)> {
    all(&fallback::scores(conn, terms).expect("fallback"))
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

fn terms(tokenizer: Tokenizer, list: &[&str]) -> Vec<String> {
    query_terms(tokenizer, &words(list)).expect("terms")
}

#[test]
fn the_term_index_and_fts5_give_the_textbook_sums_bit_for_bit_alike() {
    for tokenizer in Tokenizer::ALL {
        let conn = corpus(tokenizer, 300);
        update(&conn, "g0", 0, "g1").expect("build");
        for query in [
            &["alpha"][..],
            &["alpha", "beta", "gamma"],
            &["run", "runs", "running", "cafe"],
            &["zeta", "iota", "theta", "eta", "delta", "nothing"],
            &["snake", "case", "don", "t", "v2", "0", "rc1"],
            &["ecole", "école", "alpha"],
        ] {
            let terms = terms(tokenizer, query);
            let what = format!("{tokenizer:?}");
            let ours = indexed_scores(&conn, "g1", &terms).expect("current");
            assert_textbook(&conn, &terms, &ours, &what);
            assert_eq!(fts5_scores(&conn, &terms), ours, "{what}: {terms:?}");
            assert_eq!(
                all(&search(&conn, "g1", &words(query)).expect("search")),
                ours
            );
        }
    }
}

#[test]
fn query_words_become_the_stores_distinct_terms() {
    let u = Tokenizer::Unicode61;
    assert_eq!(
        terms(u, &["alpha beta", "v2.0-rc1", "Alpha"]),
        ["alpha", "beta", "v2", "0", "rc1"]
    );
    assert_eq!(terms(u, &["École", "ecole", "..."]), ["ecole"]);
    assert_eq!(
        terms(Tokenizer::Porter, &["running", "runs", "run"]),
        ["run"]
    );
    assert!(terms(u, &[]).is_empty());
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
    let ours = indexed_scores(&conn, "g2", &query).expect("current");
    assert_textbook(&conn, &query, &ours, "grown");
    assert_eq!(fts5_scores(&conn, &query), ours);
}

#[test]
fn a_stale_or_invalidated_index_is_never_read_and_the_next_write_rebuilds_it() {
    let conn = corpus(Tokenizer::Unicode61, 50);
    update(&conn, "g0", 0, "g1").expect("build");
    let query = words(&["alpha"]);
    let before = indexed_scores(&conn, "g1", &query).expect("current");
    // Another generation (a write by a version that does not keep the index): FTS5
    // answers, with the same sums.
    assert_eq!(indexed_scores(&conn, "g2", &query), None);
    assert_eq!(all(&search(&conn, "g2", &query).expect("search")), before);
    // A write whose previous state is not the recorded one rebuilds from every row.
    update(&conn, "g-other", 50, "g3").expect("rebuild");
    assert_eq!(indexed_scores(&conn, "g3", &query), Some(before));
    // A record added by hand (the generation unchanged) is not in the index: it may not
    // answer, FTS5 does (the new record included); the next write rebuilds it.
    add_row(&conn, 51, "alpha");
    assert_eq!(indexed_scores(&conn, "g3", &query), None);
    let by_fts5 = all(&search(&conn, "g3", &query).expect("search"));
    assert!(by_fts5.iter().any(|(doc, _)| *doc == 51));
    update(&conn, "g3", 51, "g4").expect("rebuild");
    assert_eq!(indexed_scores(&conn, "g4", &query), Some(by_fts5));
    invalidate(&conn).expect("invalidate");
    assert_eq!(indexed_scores(&conn, "g4", &query), None);
    // A recorded tokenizer other than the index's.
    update(&conn, "g4", 51, "g5").expect("rebuild");
    index::set_meta(&conn, index::TOKENIZER_KEY, "porter").expect("meta");
    assert_eq!(indexed_scores(&conn, "g5", &query), None);
}

#[test]
fn fts5_answers_an_empty_index_with_nothing() {
    let conn = corpus(Tokenizer::Unicode61, 0);
    assert!(fts5_scores(&conn, &words(&["alpha"])).is_empty());
    add_row(&conn, 1, "");
    assert!(fts5_scores(&conn, &words(&["alpha"])).is_empty());
}

/// Words to stem: every suffix of the stemmer's rules after stems of every shape
/// (consonant and vowel runs, `y` before and after them, doubled letters, digits), and
/// pseudo-random runs of letters and digits, 1 to 70 bytes.
fn stemmer_words() -> Vec<String> {
    const SUFFIXES: [&str; 62] = [
        "s", "es", "sses", "ies", "ss", "eed", "ed", "ing", "ated", "bled", "ized", "ating",
        "ling", "ssing", "zing", "ping", "y", "ational", "tional", "enci", "anci", "izer", "logi",
        "bli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator", "alism", "iveness",
        "fulness", "ousness", "aliti", "iviti", "biliti", "ical", "ness", "icate", "iciti", "ful",
        "ative", "alize", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
        "ent", "sion", "tion", "ion", "ou", "ism", "ate",
    ];
    const STEMS: [&str; 24] = [
        "", "a", "b", "ab", "ba", "tr", "tre", "tree", "yb", "by", "oy", "bay", "cat", "hop",
        "fil", "fal", "contr", "gener", "relat", "conflat", "wax", "sow", "fix", "2",
    ];
    let mut words = Vec::new();
    for stem in STEMS {
        for suffix in SUFFIXES
            .iter()
            .chain(&["iti", "ous", "ive", "ize", "e", "ll", "l"])
        {
            words.push(format!("{stem}{suffix}"));
            words.push(format!("{stem}{stem}{suffix}"));
        }
    }
    let alphabet = b"aeiouybcdlmnrstgzwx0123";
    let mut seed: u64 = 99;
    for _ in 0..20_000 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let len = 1 + (seed >> 58) as usize % 14 + if seed.is_multiple_of(97) { 56 } else { 0 };
        let word: String = (0..len)
            .map(|i| {
                let pick = (seed >> (i % 48)) as usize ^ (i * 7);
                char::from(alphabet[pick % alphabet.len()])
            })
            .collect();
        words.push(word);
    }
    for text in [
        include_str!("../../../../README.md"),
        include_str!("../../../../docs/search.md"),
    ] {
        words.extend(
            text.to_ascii_lowercase()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
        );
    }
    words.sort();
    words.dedup();
    words
}

#[test]
fn the_stemmer_agrees_with_fts5() {
    let words = stemmer_words();
    assert!(words.len() > 10_000, "{}", words.len());
    let conn = Connection::open_in_memory().expect("memory");
    let by_fts5 = tokenize(
        &conn,
        Tokenizer::Porter,
        words
            .iter()
            .enumerate()
            .map(|(i, w)| (i as i64, w.as_str())),
    )
    .expect("tokenize");
    let mut stems: BTreeMap<i64, String> = BTreeMap::new();
    for (term, doc) in by_fts5 {
        assert!(stems.insert(doc, term).is_none(), "one token per word");
    }
    let mut changed = 0;
    for (i, word) in words.iter().enumerate() {
        let theirs = stems.get(&(i as i64)).expect("a token");
        assert_eq!(porter::stem(word), theirs.as_str(), "{word}");
        changed += usize::from(theirs != word);
    }
    // The comparison is not vacuous: thousands of words are stemmed.
    assert!(changed > 4_000, "{changed} of {}", words.len());
}

#[test]
fn ascii_text_is_tokenized_here_as_fts5_tokenizes_it() {
    let text =
        "Validating the conflated caresses: hopping, ponies & v2.0-rc1 relational_generalization";
    let conn = Connection::open_in_memory().expect("memory");
    for tokenizer in Tokenizer::ALL {
        let mut theirs: Vec<String> = tokenize(&conn, tokenizer, [(1, text)])
            .expect("tokenize")
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let lowered = text.to_ascii_lowercase();
        let mut ours: Vec<String> = ascii_tokens(tokenizer, &lowered)
            .map(Cow::into_owned)
            .collect();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs, "{tokenizer:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn ascii_words_are_read_a_byte_at_a_time_as_a_character_split_reads_them(
        text in "[ -~\t\n\u{e9}]{0,60}",
    ) {
        let lowered = text.to_ascii_lowercase();
        let split: Vec<&str> = lowered
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let bytes: Vec<&str> = ascii_unicode61(&lowered).collect();
        proptest::prop_assert_eq!(bytes, split);
    }
}
