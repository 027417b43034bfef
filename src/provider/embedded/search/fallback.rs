//! A search's BM25 sums read from FTS5's own index, for when the term index may not answer:
//! each term's frequency in each row from `fts5vocab`, each row's length from
//! `resources_fts_docsize`, the corpus statistics from FTS5's averages record. The postings
//! are the term index's, so the sums are its sums, bit for bit, at FTS5's reading cost.

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension as _, params};

use super::super::postings::{self, Corpus, Posting, PostingsError, Scores};
use super::scores_for;

/// The `fts5vocab` view of the store's index (one row per token instance), in the
/// connection's temp schema, so a read-only connection may create it.
const INSTANCES_SQL: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_fts_instances
    USING fts5vocab('main', 'resources_fts', 'instance');";

/// An FTS5 record that does not decode as its format says.
fn malformed() -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, Type::Blob, Box::new(PostingsError::Malformed))
}

/// One varint of SQLite's record format (FTS5's too): 7-bit groups, most significant
/// first, each but the last with its high bit set; a ninth byte gives all its 8 bits.
fn sqlite_varint(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    for i in 0..9 {
        let byte = *data.get(*at)?;
        *at += 1;
        if i == 8 {
            return Some((value << 8) | u64::from(byte));
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// FTS5's count of rows and of their tokens (the averages record, `id = 1` of its data
/// table: the row count, then each column's total).
fn corpus(conn: &Connection) -> rusqlite::Result<Corpus> {
    let block: Option<Vec<u8>> = conn
        .query_row(
            "SELECT block FROM resources_fts_data WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    // A new index has no record yet, or an empty one: no rows.
    let Some(block) = block.filter(|b| !b.is_empty()) else {
        return Ok(Corpus::default());
    };
    let mut at = 0;
    let rows = sqlite_varint(&block, &mut at).ok_or_else(malformed)?;
    let tokens = sqlite_varint(&block, &mut at).ok_or_else(malformed)?;
    Ok(Corpus {
        rows: i64::try_from(rows).map_err(|_| malformed())?,
        tokens: i64::try_from(tokens).map_err(|_| malformed())?,
    })
}

/// The BM25 sums of every row holding a term of `terms` (the store's tokens), from FTS5.
pub(super) fn scores(conn: &Connection, terms: &[String]) -> rusqlite::Result<Scores> {
    let corpus = corpus(conn)?;
    conn.execute_batch(INSTANCES_SQL)?;
    let mut frequencies = conn.prepare_cached(
        "SELECT doc, count(*) FROM temp.search_fts_instances WHERE term = ?1
         GROUP BY doc ORDER BY doc",
    )?;
    let mut size = conn.prepare_cached("SELECT sz FROM resources_fts_docsize WHERE id = ?1")?;
    let mut lists: Vec<(f64, Vec<Posting>)> = Vec::with_capacity(terms.len());
    let (mut hits, mut last_doc) = (0_i64, 0_i64);
    for term in terms {
        let mut list: Vec<Posting> = Vec::new();
        let rows = frequencies.query_map(params![term], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (doc, tf) = row?;
            let tf = u32::try_from(tf).map_err(|_| malformed())?;
            let sz: Option<Vec<u8>> = size.query_row(params![doc], |r| r.get(0)).optional()?;
            let len = sz
                .and_then(|sz| sqlite_varint(&sz, &mut 0))
                .and_then(|len| u32::try_from(len).ok())
                .ok_or_else(malformed)?;
            list.push(Posting { doc, tf, len });
        }
        let df = i64::try_from(list.len()).unwrap_or(i64::MAX);
        hits = hits.saturating_add(df);
        last_doc = last_doc.max(list.last().map_or(0, |p| p.doc));
        lists.push((postings::idf(corpus.rows, df), list));
    }
    let mut scores = scores_for(corpus, last_doc, hits);
    for (weight, list) in &lists {
        scores.add(*weight, list);
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::sqlite_varint;

    #[test]
    fn sqlite_varints_decode_one_to_nine_bytes() {
        let cases: [(&[u8], u64); 5] = [
            (&[0x05], 5),
            (&[0x81, 0x00], 128),
            (&[0x83, 0xff, 0x7f], (3 << 14) | (0x7f << 7) | 0x7f),
            (&[0xff; 9], u64::MAX),
            (&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], 1),
        ];
        for (bytes, value) in cases {
            let mut at = 0;
            assert_eq!(sqlite_varint(bytes, &mut at), Some(value), "{bytes:?}");
            assert_eq!(at, bytes.len());
        }
        assert_eq!(sqlite_varint(&[0x81], &mut 0), None);
        assert_eq!(sqlite_varint(&[], &mut 0), None);
    }
}
