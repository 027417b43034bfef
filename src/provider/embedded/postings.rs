//! Posting blocks of the embedded store's term index, and the BM25 score of a search,
//! computed term at a time over postings.
//!
//! * **Blocks.** A term's postings are kept in blocks of at most [`BLOCK_POSTINGS`], in
//!   document order. A block is `(first_doc, last_doc, count, data)`; `data` is, per
//!   posting, three LEB128 varints: the document's distance from the previous one (from
//!   `first_doc` for the first), the term's frequency in it, and the document's length in
//!   tokens. A document joins the end of its term's last block ([`append`]) or starts a new
//!   one, so a write never re-encodes a block.
//! * **Score** ([`Scores`]): BM25 as Lucene computes it (the variant `bm25s` calls
//!   `lucene`): for each query term in order, `idf * (f * (k1 + 1)) /
//!   (f + k1 * (1 - b + b * D / avgdl))` added to the document's sum, with `k1` 1.5,
//!   `b` 0.75 and the IDF `ln(1 + (N - n + 0.5) / (n + 0.5))` (positive for every term,
//!   however common), over the corpus statistics of the whole index (rows and tokens).
//!   The same postings give the same sums, bit for bit, whichever index they were read
//!   from.

/// Most postings a block holds.
pub const BLOCK_POSTINGS: usize = 128;

const K1: f64 = 1.5;
/// The (tf, len) pairs below these are memoized per term ([`Scores::add`]).
const MEMO_TF: usize = 8;
const MEMO_LEN: usize = 512;
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

/// The IDF of a term found in `hits` of `rows` rows: `ln(1 + (N - n + 0.5) / (n + 0.5))`,
/// positive even for a term in every row (FTS5's `bm25()` floors the negative
/// `ln((N - n + 0.5) / (n + 0.5))` to 1e-6 instead, so a term in half the rows or more
/// weighs nothing).
pub fn idf(rows: i64, hits: i64) -> f64 {
    (1.0 + ((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln()
}

/// BM25 sums of the documents holding a query's terms, one term at a time
/// ([`Scores::add`]) in the query's order, so each document's sum is added up in one order.
#[derive(Debug, Clone)]
pub struct Scores {
    avgdl: f64,
    /// Indexed by document id when the ids are small enough; a document without a term of
    /// the query sums to exactly 0 (every contribution is positive).
    dense: Vec<f64>,
    /// Documents beyond `dense`.
    sparse: std::collections::BTreeMap<i64, f64>,
    /// Contributions by (tf, len) for the weight `memo_weight` ([`Scores::add`]).
    memo: Vec<f64>,
    memo_weight: Option<u64>,
}

impl Scores {
    /// Sums over `corpus`. `slots`: one past the largest document id, when known and at
    /// most `dense_limit` (then the sums are a dense array).
    pub fn new(corpus: Corpus, slots: Option<usize>, dense_limit: usize) -> Scores {
        let avgdl = if corpus.rows > 0 {
            corpus.tokens as f64 / corpus.rows as f64
        } else {
            0.0
        };
        let dense = slots.filter(|&n| n <= dense_limit).unwrap_or(0);
        Scores {
            avgdl,
            dense: vec![0.0; dense],
            sparse: std::collections::BTreeMap::new(),
            memo: Vec::new(),
            memo_weight: None,
        }
    }

    /// Adds one term's contribution (IDF `weight`) to each document of `postings`.
    pub fn add(&mut self, weight: f64, postings: &[Posting]) {
        let avgdl = self.avgdl;
        let contribution = |tf: u32, len: u32| {
            let f = f64::from(tf);
            let d = f64::from(len);
            weight * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)))
        };
        // A term's contribution depends only on its weight and (tf, len): the common
        // small pairs are computed once per weight (the same expression, the same bits).
        if self.memo_weight != Some(weight.to_bits()) {
            self.memo.clear();
            self.memo.resize(MEMO_TF * MEMO_LEN, f64::NAN);
            self.memo_weight = Some(weight.to_bits());
        }
        let memo = &mut self.memo;
        for posting in postings {
            let add = match (posting.tf as usize, posting.len as usize) {
                (tf, len) if tf < MEMO_TF && len < MEMO_LEN => {
                    let slot = &mut memo[tf * MEMO_LEN + len];
                    if slot.is_nan() {
                        *slot = contribution(posting.tf, posting.len);
                    }
                    *slot
                }
                _ => contribution(posting.tf, posting.len),
            };
            match usize::try_from(posting.doc)
                .ok()
                .and_then(|i| self.dense.get_mut(i))
            {
                Some(sum) => *sum += add,
                None => *self.sparse.entry(posting.doc).or_insert(0.0) += add,
            }
        }
    }

    /// Every scored document, unordered.
    fn all(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .filter_map(|(i, s)| i64::try_from(i).ok().map(|doc| (doc, *s)));
        dense.chain(self.sparse.iter().map(|(d, s)| (*d, *s)))
    }

    /// How many documents are scored.
    pub fn len(&self) -> usize {
        self.all().count()
    }

    /// True when no document is scored.
    pub fn is_empty(&self) -> bool {
        self.all().next().is_none()
    }

    /// The best `n` documents in [`ranked`] order (fewer when fewer are scored): one pass
    /// keeping the best `n` seen, never a list of every match.
    pub fn best(&self, n: usize) -> Vec<(i64, f64)> {
        if n == 0 {
            return Vec::new();
        }
        let mut kept: std::collections::BinaryHeap<Ranked> =
            std::collections::BinaryHeap::with_capacity(n + 1);
        for hit in self.all() {
            if kept.len() < n {
                kept.push(Ranked(hit));
            } else if kept
                .peek()
                .is_some_and(|worst| ranked(&hit, &worst.0).is_lt())
            {
                kept.pop();
                kept.push(Ranked(hit));
            }
        }
        let mut out: Vec<(i64, f64)> = kept.into_iter().map(|r| r.0).collect();
        out.sort_unstable_by(ranked);
        out
    }
}

/// A hit ordered so that a max-heap's top is the worst of those kept.
struct Ranked((i64, f64));

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        ranked(&self.0, &other.0).is_eq()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        ranked(&self.0, &other.0)
    }
}

/// The order of search results: the higher score first, then the lower document id.
pub fn ranked(a: &(i64, f64), b: &(i64, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
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
    fn the_idf_is_lucenes_positive_for_every_term_and_falls_with_frequency() {
        assert!((idf(10, 1) - (1.0 + 9.5_f64 / 1.5).ln()).abs() < 1e-15);
        assert!((idf(10, 5) - 2.0_f64.ln()).abs() < 1e-15);
        let every = idf(10, 10);
        assert!(every > 0.0 && every < idf(10, 9) && idf(10, 9) < idf(10, 5));
    }

    fn scored(phrases: &[(f64, &[Posting])], corpus: Corpus, slots: Option<usize>) -> Scores {
        let mut scores = Scores::new(corpus, slots, 1 << 20);
        for (weight, postings) in phrases {
            scores.add(*weight, postings);
        }
        scores
    }

    #[test]
    fn dense_and_sparse_accumulation_agree_and_sum_phrases_in_order() {
        let a = [p(1, 2, 10), p(3, 1, 4)];
        let b = [p(3, 3, 4), p(4, 1, 20)];
        let corpus = Corpus {
            rows: 40,
            tokens: 400,
        };
        let (wa, wb) = (idf(40, 2), idf(40, 2));
        let dense = scored(&[(wa, &a), (wb, &b)], corpus, Some(5));
        let partly = scored(&[(wa, &a), (wb, &b)], corpus, Some(3));
        let sparse = scored(&[(wa, &a), (wb, &b)], corpus, None);
        assert_eq!(dense.best(10), sparse.best(10));
        assert_eq!(partly.best(10), sparse.best(10));
        let term = |w: f64, f: f64, d: f64| w * ((f * 2.5) / (f + 1.5 * (0.25 + 0.75 * d / 10.0)));
        let doc3 = sparse
            .best(10)
            .iter()
            .find(|(d, _)| *d == 3)
            .map(|(_, s)| *s);
        assert_eq!(doc3, Some(term(wa, 1.0, 4.0) + term(wb, 3.0, 4.0)));
        assert_eq!(sparse.len(), 3);
        assert!(!sparse.is_empty());
        assert!(scored(&[], corpus, Some(5)).is_empty());
    }

    #[test]
    fn best_keeps_the_best_n_by_score_then_document() {
        let corpus = Corpus {
            rows: 100,
            tokens: 1000,
        };
        // Equal postings tie; longer documents score lower.
        let postings = [
            p(5, 1, 10),
            p(2, 1, 10),
            p(9, 1, 10),
            p(1, 1, 40),
            p(4, 2, 10),
        ];
        let scores = scored(&[(1.0, &postings)], corpus, Some(16));
        let best: Vec<i64> = scores.best(3).iter().map(|(d, _)| *d).collect();
        assert_eq!(best, [4, 2, 5]);
        let all: Vec<i64> = scores.best(10).iter().map(|(d, _)| *d).collect();
        assert_eq!(all, [4, 2, 5, 9, 1]);
        assert!(scores.best(0).is_empty());
    }
}
