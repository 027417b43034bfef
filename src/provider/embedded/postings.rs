//! Posting blocks of the embedded store's term index, and the BM25 score FTS5's `bm25()`
//! gives, computed term at a time over them.
//!
//! * **Blocks.** A term's postings are kept in blocks of at most [`BLOCK_POSTINGS`], in
//!   document order. A block is `(first_doc, last_doc, count, data)`; `data` is, per
//!   posting, three LEB128 varints: the document's distance from the previous one (from
//!   `first_doc` for the first), the term's frequency in it, and the document's length in
//!   tokens. A document joins the end of its term's last block ([`append`]) or starts a new
//!   one, so a write never re-encodes a block.
//! * **Score** ([`score`]): for each query phrase in order, `idf * (f * (k1 + 1)) /
//!   (f + k1 * (1 - b + b * D / avgdl))` added to the document's sum, with FTS5's constants
//!   (`k1` 1.2, `b` 0.75), its IDF (`ln((N - n + 0.5) / (n + 0.5))`, 1e-6 when not
//!   positive) and its corpus statistics (rows and tokens of the whole index), in the same
//!   order of operations, so every score equals the one `bm25()` negates, bit for bit.

/// Most postings a block holds.
pub const BLOCK_POSTINGS: usize = 128;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A document's entry in a term's postings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// The document (the record's row id).
    pub doc: i64,
    /// How often the term occurs in it.
    pub tf: u32,
    /// The document's length in tokens.
    pub len: u32,
}

/// A block whose bytes do not decode as its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PostingsError {
    /// The data ended inside a posting, held more or fewer postings than its count, or a
    /// varint overflowed.
    #[error("a posting block of the search index is malformed")]
    Malformed,
}

/// The index's corpus statistics: every indexed row, and their tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Corpus {
    /// Indexed rows (FTS5's `xRowCount`).
    pub rows: i64,
    /// Tokens of every indexed row (FTS5's `xColumnTotalSize`).
    pub tokens: i64,
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn get_varint(data: &[u8], at: &mut usize) -> Result<u64, PostingsError> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*at).ok_or(PostingsError::Malformed)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(PostingsError::Malformed)
}

/// Appends `posting` to a block's `data` whose last document is `last_doc` (the block's
/// `first_doc` for an empty block). `posting.doc` must not be below `last_doc`.
pub fn append(data: &mut Vec<u8>, last_doc: i64, posting: Posting) {
    put_varint(data, posting.doc.saturating_sub(last_doc).unsigned_abs());
    put_varint(data, u64::from(posting.tf));
    put_varint(data, u64::from(posting.len));
}

/// Decodes a block of `count` postings starting at `first_doc` onto `out`.
pub fn decode(
    first_doc: i64,
    count: usize,
    data: &[u8],
    out: &mut Vec<Posting>,
) -> Result<(), PostingsError> {
    let mut at = 0;
    let mut doc = first_doc;
    for _ in 0..count {
        let delta =
            i64::try_from(get_varint(data, &mut at)?).map_err(|_| PostingsError::Malformed)?;
        doc = doc.checked_add(delta).ok_or(PostingsError::Malformed)?;
        let tf = u32::try_from(get_varint(data, &mut at)?).map_err(|_| PostingsError::Malformed)?;
        let len =
            u32::try_from(get_varint(data, &mut at)?).map_err(|_| PostingsError::Malformed)?;
        out.push(Posting { doc, tf, len });
    }
    if at == data.len() {
        Ok(())
    } else {
        Err(PostingsError::Malformed)
    }
}

/// FTS5's IDF of a phrase found in `hits` of `rows` rows.
pub fn idf(rows: i64, hits: i64) -> f64 {
    let idf = (((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// The BM25 score of every document holding a term of the query, unordered. `phrases`:
/// each query phrase's postings, in the query's order (a term named twice is two
/// phrases, as FTS5 counts it). `slots`: one past the largest document id, when known and
/// small enough for a dense accumulator.
pub fn score(phrases: &[&[Posting]], corpus: Corpus, slots: Option<usize>) -> Vec<(i64, f64)> {
    if corpus.rows <= 0 {
        return Vec::new();
    }
    let avgdl = corpus.tokens as f64 / corpus.rows as f64;
    let weights: Vec<f64> = phrases
        .iter()
        .map(|postings| idf(corpus.rows, postings.len() as i64))
        .collect();
    let contribution = |weight: f64, posting: &Posting| {
        let f = f64::from(posting.tf);
        let d = f64::from(posting.len);
        weight * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)))
    };
    let dense = slots.filter(|&n| {
        let hits: usize = phrases.iter().map(|p| p.len()).sum();
        n <= hits.saturating_mul(16).max(1 << 16)
    });
    if let Some(slots) = dense {
        let mut sums = vec![0.0_f64; slots];
        let mut seen = vec![false; slots];
        let mut touched: Vec<i64> = Vec::new();
        let mut spill: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
        for (postings, &weight) in phrases.iter().zip(&weights) {
            for posting in postings.iter() {
                let add = contribution(weight, posting);
                match usize::try_from(posting.doc).ok().filter(|&i| i < slots) {
                    Some(i) => {
                        if !seen[i] {
                            seen[i] = true;
                            touched.push(posting.doc);
                        }
                        sums[i] += add;
                    }
                    None => *spill.entry(posting.doc).or_insert(0.0) += add,
                }
            }
        }
        let mut out: Vec<(i64, f64)> = touched
            .into_iter()
            .filter_map(|doc| usize::try_from(doc).ok().map(|i| (doc, sums[i])))
            .collect();
        out.extend(spill);
        return out;
    }
    let mut sums: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    for (postings, &weight) in phrases.iter().zip(&weights) {
        for posting in postings.iter() {
            *sums.entry(posting.doc).or_insert(0.0) += contribution(weight, posting);
        }
    }
    sums.into_iter().collect()
}

/// The order of search results: the higher score first, then the lower document id (the
/// order `ORDER BY rank, id` gives FTS5's negated scores).
pub fn ranked(a: &(i64, f64), b: &(i64, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Moves the best `n` of `scored` to its front, in [`ranked`] order; the rest follow in
/// no particular order.
pub fn best_first(scored: &mut [(i64, f64)], n: usize) {
    if n == 0 || scored.is_empty() {
        return;
    }
    if n < scored.len() {
        scored.select_nth_unstable_by(n - 1, ranked);
    }
    let n = n.min(scored.len());
    scored[..n].sort_unstable_by(ranked);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(doc: i64, tf: u32, len: u32) -> Posting {
        Posting { doc, tf, len }
    }

    #[test]
    fn a_block_decodes_to_the_postings_appended() {
        let postings = [p(7, 1, 3), p(9, 2, 300), p(1_000_007, 70_000, 1)];
        let mut data = Vec::new();
        let mut last = 7;
        for posting in postings {
            append(&mut data, last, posting);
            last = posting.doc;
        }
        let mut out = Vec::new();
        decode(7, 3, &data, &mut out).expect("decodes");
        assert_eq!(out, postings);
        assert_eq!(
            decode(7, 2, &data, &mut Vec::new()),
            Err(PostingsError::Malformed)
        );
        assert_eq!(
            decode(7, 4, &data, &mut Vec::new()),
            Err(PostingsError::Malformed)
        );
        assert_eq!(
            decode(7, 1, &[0xff; 11], &mut Vec::new()),
            Err(PostingsError::Malformed)
        );
    }

    #[test]
    fn the_idf_is_floored_as_fts5_floors_it() {
        assert!((idf(10, 1) - (9.5_f64 / 1.5).ln()).abs() < 1e-15);
        assert_eq!(idf(10, 5), 1e-6);
        assert_eq!(idf(10, 9), 1e-6);
    }

    #[test]
    fn dense_and_sparse_accumulation_agree_and_sum_phrases_in_order() {
        let a = [p(1, 2, 10), p(3, 1, 4)];
        let b = [p(3, 3, 4), p(4, 1, 20)];
        let corpus = Corpus {
            rows: 40,
            tokens: 400,
        };
        let mut dense = score(&[&a, &b], corpus, Some(5));
        let mut sparse = score(&[&a, &b], corpus, None);
        dense.sort_by(ranked);
        sparse.sort_by(ranked);
        assert_eq!(dense, sparse);
        let (wa, wb) = (idf(40, 2), idf(40, 2));
        let term = |w: f64, f: f64, d: f64| w * ((f * 2.2) / (f + 1.2 * (0.25 + 0.75 * d / 10.0)));
        let doc3 = sparse.iter().find(|(d, _)| *d == 3).map(|(_, s)| *s);
        assert_eq!(doc3, Some(term(wa, 1.0, 4.0) + term(wb, 3.0, 4.0)));
        assert_eq!(sparse.len(), 3);
    }

    #[test]
    fn best_first_orders_by_score_then_document() {
        let mut scored = vec![(5, 1.0), (2, 3.0), (9, 3.0), (1, 0.5), (4, 2.0)];
        best_first(&mut scored, 3);
        assert_eq!(&scored[..3], &[(2, 3.0), (9, 3.0), (4, 2.0)]);
        best_first(&mut scored, 10);
        assert_eq!(scored[4], (1, 0.5));
    }
}
