//! The embedded store's term index (`search_postings`): kept up to date from the FTS5
//! index's search texts in every write transaction, and searched without FTS5's per-row
//! cost.
//!
//! * **What it holds.** Per term, blocks of postings ([`super::postings`]) over every row
//!   of `resources_fts`, tokenized as FTS5 tokenizes it: ASCII text here, by FTS5's own
//!   rules for ASCII and its `porter` stemmer (`porter.rs`), any other text by FTS5
//!   itself (a temporary FTS5 table with the store's tokenizer, read back through
//!   `fts5vocab`), so a term here is exactly a term there.
//!   `store_meta` keeps its state: the store generation it was brought up to
//!   (`search_generation`), the last record id it covers, its corpus statistics (rows,
//!   tokens) and the tokenizer it was built with.
//! * **When it is used.** Only when its recorded generation and tokenizer are the store's
//!   ([`search`]); otherwise (a store written by an older version, a rebuilt FTS5 index,
//!   a record inserted by hand) a search reads the same postings from FTS5's own index
//!   (`fallback`), and the next write rebuilds it ([`update`]). A stale index is never
//!   read.
//! * **Queries.** Each query word is tokenized as FTS5 tokenizes it; every distinct token
//!   is a term of the search (`query_terms`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension as _, params};

use super::index::{self, Tokenizer};
use super::porter;
use super::postings::{self, BLOCK_POSTINGS, Corpus, Posting, Scores};
use crate::wire::fast_hash::FastMap;

const TABLE_SQL: &str = "CREATE TABLE IF NOT EXISTS search_postings (
    term TEXT NOT NULL,
    first_doc INTEGER NOT NULL,
    last_doc INTEGER NOT NULL,
    count INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (term, first_doc)
) WITHOUT ROWID;";

const KEY_GENERATION: &str = "search_generation";
const KEY_LAST_DOC: &str = "search_last_doc";
const KEY_ROWS: &str = "search_rows";
const KEY_TOKENS: &str = "search_tokens";
const KEY_TOKENIZER: &str = "search_tokenizer";
const KEYS: [&str; 5] = [
    KEY_GENERATION,
    KEY_LAST_DOC,
    KEY_ROWS,
    KEY_TOKENS,
    KEY_TOKENIZER,
];

/// Rows tokenized at a time when the index is brought up to date.
const CHUNK_ROWS: i64 = 20_000;

/// The index's recorded state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    generation: String,
    last_doc: i64,
    corpus: Corpus,
    tokenizer: String,
}

fn state(conn: &Connection) -> rusqlite::Result<Option<State>> {
    let mut stmt = conn.prepare_cached(
        "SELECT key, value FROM store_meta WHERE key IN
         ('search_generation', 'search_last_doc', 'search_rows', 'search_tokens', 'search_tokenizer')",
    )?;
    let values: BTreeMap<String, String> = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let number = |key: &str| values.get(key).and_then(|v| v.parse::<i64>().ok());
    Ok((|| {
        Some(State {
            generation: values.get(KEY_GENERATION)?.clone(),
            last_doc: number(KEY_LAST_DOC)?,
            corpus: Corpus {
                rows: number(KEY_ROWS)?,
                tokens: number(KEY_TOKENS)?,
            },
            tokenizer: values.get(KEY_TOKENIZER)?.clone(),
        })
    })())
}

/// Forgets the index's state, so no search reads it until a write rebuilds it (the FTS5
/// index was rebuilt, perhaps with another tokenizer).
pub fn invalidate(conn: &Connection) -> rusqlite::Result<()> {
    for key in KEYS {
        conn.execute("DELETE FROM store_meta WHERE key = ?1", params![key])?;
    }
    Ok(())
}

/// The temporary FTS5 table (and its `fts5vocab` view) that tokenizes texts as the
/// store's index does; created on first use in `conn`'s temp schema, emptied after use.
fn tokenizing_tables(
    conn: &Connection,
    tokenizer: Tokenizer,
) -> rusqlite::Result<(String, String)> {
    let table = format!("search_tokenize_{}", tokenizer.name());
    let vocab = format!("search_vocab_{}", tokenizer.name());
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table} USING fts5(body, content = '', tokenize = '{}');
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab('temp', '{table}', 'instance');",
        tokenizer.fts_option()
    ))?;
    Ok((table, vocab))
}

/// The tokens of each text as FTS5 with `tokenizer` indexes it: `(term, id)` for every
/// token instance, sorted.
fn tokenize<'a>(
    conn: &Connection,
    tokenizer: Tokenizer,
    texts: impl IntoIterator<Item = (i64, &'a str)>,
) -> rusqlite::Result<Vec<(String, i64)>> {
    let (table, vocab) = tokenizing_tables(conn, tokenizer)?;
    {
        let mut insert = conn.prepare_cached(&format!(
            "INSERT INTO temp.{table} (rowid, body) VALUES (?1, ?2)"
        ))?;
        for (id, text) in texts {
            insert.execute(params![id, text])?;
        }
    }
    let mut instances: Vec<(String, i64)> = conn
        .prepare_cached(&format!("SELECT term, doc FROM temp.{vocab}"))?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    conn.prepare_cached(&format!(
        "INSERT INTO temp.{table} ({table}) VALUES ('delete-all')"
    ))?
    .execute([])?;
    instances.sort_unstable();
    Ok(instances)
}

/// The tokens of an ASCII `text` as FTS5's `unicode61` makes them: its token characters
/// there are the letters and digits, every other character separates, and letters are
/// folded to lower case. `lowered`: the text lower-cased. Read a byte at a time.
fn ascii_unicode61(lowered: &str) -> impl Iterator<Item = &str> {
    let bytes = lowered.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while bytes.get(at).is_some_and(|b| !b.is_ascii_alphanumeric()) {
            at += 1;
        }
        let start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_alphanumeric) {
            at += 1;
        }
        // ASCII letters and digits are whole characters in any UTF-8 text.
        (at > start).then(|| lowered.get(start..at)).flatten()
    })
}

/// The tokens of an ASCII `text` as FTS5 with `tokenizer` makes them ([`ascii_unicode61`],
/// each stemmed by [`porter::stem`] under `porter`). `lowered`: the text lower-cased.
fn ascii_tokens(tokenizer: Tokenizer, lowered: &str) -> impl Iterator<Item = Cow<'_, str>> {
    ascii_unicode61(lowered).map(move |token| match tokenizer {
        Tokenizer::Unicode61 => Cow::Borrowed(token),
        Tokenizer::Porter => porter::stem(token),
    })
}

/// True when a text's tokens may be made by [`ascii_tokens`] instead of FTS5.
fn tokenized_here(text: &str) -> bool {
    text.is_ascii()
}

/// A term's block as it is being extended.
struct Block {
    first: i64,
    last: i64,
    count: usize,
    data: Vec<u8>,
    /// The row exists (else it is inserted).
    stored: bool,
    /// Postings were added since it was read.
    dirty: bool,
}

/// The distinct terms of one chunk, each with its id (its index in `terms`).
#[derive(Default)]
struct Vocabulary<'a> {
    terms: Vec<Cow<'a, str>>,
    ids: FastMap<Cow<'a, str>, u32>,
}

impl<'a> Vocabulary<'a> {
    /// The id of `term`, given on its first sight.
    fn intern(&mut self, term: Cow<'a, str>) -> u32 {
        if let Some(&id) = self.ids.get(term.as_ref()) {
            return id;
        }
        let id = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        self.terms.push(term.clone());
        self.ids.insert(term, id);
        id
    }
}

/// Adds one chunk of rows (`(id, search text)`, ascending ids) to the index; returns the
/// tokens it held.
fn index_rows(
    conn: &Connection,
    tokenizer: Tokenizer,
    rows: &[(i64, String)],
) -> rusqlite::Result<i64> {
    let lowered: Vec<(i64, String)> = rows
        .iter()
        .filter(|(_, text)| tokenized_here(text))
        .map(|(id, text)| (*id, text.to_ascii_lowercase()))
        .collect();
    let by_fts5 = tokenize(
        conn,
        tokenizer,
        rows.iter()
            .filter(|(_, text)| !tokenized_here(text))
            .map(|(id, t)| (*id, t.as_str())),
    )?;
    // Each document's terms (as ids into `terms`), in ascending document order. A
    // token is stemmed once per chunk, however often it occurs; FTS5's instances (of the
    // texts it tokenized) come sorted by term and are grouped by document here.
    let mut vocabulary = Vocabulary::default();
    let mut token_ids: FastMap<&str, u32> = FastMap::default();
    let mut docs: Vec<(i64, Vec<u32>)> = Vec::with_capacity(rows.len());
    for (id, text) in &lowered {
        let ids = ascii_unicode61(text)
            .map(|token| match token_ids.get(token) {
                Some(&term) => term,
                None => {
                    let term = vocabulary.intern(match tokenizer {
                        Tokenizer::Unicode61 => Cow::Borrowed(token),
                        Tokenizer::Porter => porter::stem(token),
                    });
                    token_ids.insert(token, term);
                    term
                }
            })
            .collect();
        docs.push((*id, ids));
    }
    let mut from_fts5: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for (term, doc) in &by_fts5 {
        let term = vocabulary.intern(Cow::Borrowed(term.as_str()));
        from_fts5.entry(*doc).or_default().push(term);
    }
    docs.extend(from_fts5);
    docs.sort_unstable_by_key(|(doc, _)| *doc);
    // Each term's postings, in document order: a document's length is its token count,
    // a term's frequency its run in the document's sorted term ids.
    let mut postings_of: Vec<Vec<Posting>> = vec![Vec::new(); vocabulary.terms.len()];
    let mut tokens: i64 = 0;
    for (doc, mut ids) in docs {
        let len = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        tokens = tokens.saturating_add(i64::from(len));
        ids.sort_unstable();
        for run in ids.chunk_by(|a, b| a == b) {
            let tf = u32::try_from(run.len()).unwrap_or(u32::MAX);
            if let Some(postings) = postings_of.get_mut(run[0] as usize) {
                postings.push(Posting { doc, tf, len });
            }
        }
    }
    // Terms in order, so that the rows are written in key order (the result does not
    // depend on it).
    let mut by_term: Vec<(&str, Vec<Posting>)> = vocabulary
        .terms
        .iter()
        .map(AsRef::as_ref)
        .zip(postings_of)
        .collect();
    by_term.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut last_block = conn.prepare_cached(
        "SELECT first_doc, last_doc, count, data FROM search_postings
         WHERE term = ?1 ORDER BY first_doc DESC LIMIT 1",
    )?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO search_postings (term, first_doc, last_doc, count, data)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut rewrite = conn.prepare_cached(
        "UPDATE search_postings SET last_doc = ?3, count = ?4, data = ?5
         WHERE term = ?1 AND first_doc = ?2",
    )?;
    let mut put = |term: &str, block: &Block| -> rusqlite::Result<()> {
        if block.dirty {
            let row = params![
                term,
                block.first,
                block.last,
                block.count as i64,
                block.data
            ];
            if block.stored {
                rewrite.execute(row)?;
            } else {
                insert.execute(row)?;
            }
        }
        Ok(())
    };
    for (term, postings) in &by_term {
        let term: &str = term;
        let mut block: Option<Block> = last_block
            .query_row(params![term], |row| {
                Ok(Block {
                    first: row.get(0)?,
                    last: row.get(1)?,
                    count: usize::try_from(row.get::<_, i64>(2)?).unwrap_or(BLOCK_POSTINGS),
                    data: row.get(3)?,
                    stored: true,
                    dirty: false,
                })
            })
            .optional()?;
        for posting in postings {
            if let Some(full) = block.take_if(|b| b.count >= BLOCK_POSTINGS) {
                put(term, &full)?;
            }
            let open = block.get_or_insert_with(|| Block {
                first: posting.doc,
                last: posting.doc,
                count: 0,
                data: Vec::new(),
                stored: false,
                dirty: true,
            });
            postings::append(&mut open.data, open.last, *posting);
            open.last = posting.doc;
            open.count += 1;
            open.dirty = true;
        }
        if let Some(last) = &block {
            put(term, last)?;
        }
    }
    Ok(tokens)
}

/// Brings the index up to `next`, the generation the write transaction `conn` is about
/// to record; `previous` and `last_id` are the generation and the largest record id
/// before this write. The index grows by the FTS5 rows written since; when it was not
/// current before the write (never built, another tokenizer, written by a version that
/// did not keep it, rows added by hand), it is rebuilt from every FTS5 row.
pub fn update(conn: &Connection, previous: &str, last_id: i64, next: &str) -> rusqlite::Result<()> {
    conn.execute_batch(TABLE_SQL)?;
    let tokenizer = index::recorded_tokenizer(conn)?;
    let current = state(conn)?.filter(|s| {
        s.generation == previous && s.last_doc == last_id && s.tokenizer == tokenizer.name()
    });
    let (mut corpus, mut after) = match current {
        Some(s) => (s.corpus, s.last_doc),
        None => {
            conn.execute("DELETE FROM search_postings", [])?;
            (Corpus::default(), i64::MIN)
        }
    };
    let mut chunk = conn.prepare(
        "SELECT rowid, body FROM resources_fts WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
    )?;
    loop {
        let rows: Vec<(i64, String)> = chunk
            .query_map(params![after, CHUNK_ROWS], |row| {
                Ok((
                    row.get(0)?,
                    row.get::<_, Option<String>>(1)?.unwrap_or_default(),
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(&(last, _)) = rows.last() else {
            break;
        };
        corpus.tokens += index_rows(conn, tokenizer, &rows)?;
        corpus.rows += i64::try_from(rows.len()).unwrap_or(i64::MAX);
        after = last;
    }
    let last_doc: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM resources", [], |r| {
        r.get(0)
    })?;
    for (key, value) in [
        (KEY_GENERATION, next.to_owned()),
        (KEY_LAST_DOC, last_doc.to_string()),
        (KEY_ROWS, corpus.rows.to_string()),
        (KEY_TOKENS, corpus.tokens.to_string()),
        (KEY_TOKENIZER, tokenizer.name().to_owned()),
    ] {
        index::set_meta(conn, key, &value)?;
    }
    Ok(())
}

/// The distinct terms of a query's `words` as the store's `tokenizer` makes them, in
/// query order: a word FTS5 splits (`v2.0`, or a word `porter` folds onto another's stem)
/// adds each of its tokens once, as `bm25s` and Lucene treat a query's tokens.
pub(super) fn query_terms(tokenizer: Tokenizer, words: &[String]) -> rusqlite::Result<Vec<String>> {
    let mut instances: Vec<(i64, String)> = Vec::new();
    if words.iter().all(|w| tokenized_here(w)) {
        for (i, word) in words.iter().enumerate() {
            let lowered = word.to_ascii_lowercase();
            instances.extend(ascii_tokens(tokenizer, &lowered).map(|t| (i as i64, t.into_owned())));
        }
    } else {
        let scratch = Connection::open_in_memory()?;
        let indexed = words
            .iter()
            .enumerate()
            .map(|(i, w)| (i as i64, w.as_str()));
        instances = tokenize(&scratch, tokenizer, indexed)?
            .into_iter()
            .map(|(term, word)| (word, term))
            .collect();
        // By word, then term (the order within a word is immaterial to a sum of terms).
        instances.sort_unstable();
    }
    let mut terms: Vec<String> = Vec::new();
    for (_, term) in instances {
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    Ok(terms)
}

/// The BM25 sums ([`postings::Scores`]) of every indexed document holding a term of
/// `words`, for the store at `generation`: read from the term index when it is current,
/// else from FTS5's own index (`fallback`), the same sums either way.
pub fn search(conn: &Connection, generation: &str, words: &[String]) -> rusqlite::Result<Scores> {
    let tokenizer = index::recorded_tokenizer(conn)?;
    let terms = query_terms(tokenizer, words)?;
    match indexed(conn, generation, tokenizer, &terms)? {
        Some(scores) => Ok(scores),
        None => fallback::scores(conn, &terms),
    }
}

/// The room the sums of `hits` postings over documents up to `last_doc` are given: a dense
/// array by document id unless the ids are much sparser than the hits.
fn scores_for(corpus: Corpus, last_doc: i64, hits: i64) -> Scores {
    let slots = usize::try_from(last_doc)
        .ok()
        .and_then(|n| n.checked_add(1));
    let dense_limit = usize::try_from(hits)
        .unwrap_or(usize::MAX)
        .saturating_mul(16)
        .max(1 << 16);
    Scores::new(corpus, slots, dense_limit)
}

/// The sums of `terms` from the term index, or `None` when it may not answer for the store
/// at `generation`: another generation or tokenizer, a last record id other than the one it
/// covers, or a block that does not decode.
pub(super) fn indexed(
    conn: &Connection,
    generation: &str,
    tokenizer: Tokenizer,
    terms: &[String],
) -> rusqlite::Result<Option<Scores>> {
    let Some(state) = state(conn)? else {
        return Ok(None);
    };
    // A record added by hand leaves the generation as it was, not the last record id.
    let last_id: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM resources", [], |r| {
        r.get(0)
    })?;
    if state.generation != generation
        || state.tokenizer != tokenizer.name()
        || state.last_doc != last_id
    {
        return Ok(None);
    }
    // Each term's document frequency first (its IDF weighs every posting), from the
    // blocks' counts; then each term's postings, a block at a time, into the sums.
    let mut frequency =
        conn.prepare_cached("SELECT coalesce(sum(count), 0) FROM search_postings WHERE term = ?1")?;
    let mut weights: Vec<(&str, f64)> = Vec::new();
    let mut hits: i64 = 0;
    for term in terms {
        let df: i64 = frequency.query_row(params![term], |r| r.get(0))?;
        hits = hits.saturating_add(df);
        weights.push((term, postings::idf(state.corpus.rows, df)));
    }
    let mut scores = scores_for(state.corpus, state.last_doc, hits);
    let mut blocks = conn.prepare_cached(
        "SELECT first_doc, count, data FROM search_postings WHERE term = ?1 ORDER BY first_doc",
    )?;
    let mut block: Vec<Posting> = Vec::with_capacity(BLOCK_POSTINGS);
    for (term, weight) in weights {
        let mut rows = blocks.query(params![term])?;
        while let Some(row) = rows.next()? {
            let first: i64 = row.get(0)?;
            let count = usize::try_from(row.get::<_, i64>(1)?).unwrap_or(0);
            let data = row.get_ref(2)?.as_blob()?;
            block.clear();
            if postings::decode(first, count, data, &mut block).is_err() {
                return Ok(None);
            }
            scores.add(weight, &block);
        }
    }
    Ok(Some(scores))
}

mod fallback;

#[cfg(test)]
mod tests;
