//! Reading a search's best hits: the records of its best BM25 sums, filtered by namespace
//! and scope.

use rusqlite::{Connection, OptionalExtension as _, params};

use super::postings;

/// A search hit as read: the record's ref, its bytes and its rank (the negated BM25
/// score).
pub(super) type Hit = (String, Vec<u8>, f64);

/// The best `fetch` hits of a search's `scores` that are records of `namespace`
/// within the scope (`scope_ref` itself or under `prefix`), best first.
pub(super) fn best_rows(
    tx: &Connection,
    scores: &postings::Scores,
    namespace: &str,
    scope_ref: &str,
    prefix: &str,
    fetch: usize,
) -> rusqlite::Result<Vec<Hit>> {
    let mut record =
        tx.prepare_cached("SELECT namespace, resource_ref, content FROM resources WHERE id = ?1")?;
    let mut out: Vec<Hit> = Vec::new();
    let (mut seen, mut window) = (0, fetch.max(1));
    // Widened fourfold while hits outside the scope leave the answer short; each window
    // starts with the previous one (the order is total).
    loop {
        let best = scores.best(window);
        for &(doc, score) in &best[seen.min(best.len())..] {
            if out.len() == fetch {
                break;
            }
            let row: Option<(String, String, Vec<u8>)> = record
                .query_row(params![doc], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .optional()?;
            if let Some((ns, resource_ref, content)) = row
                && ns == namespace
                && (resource_ref == scope_ref || resource_ref.starts_with(prefix))
            {
                out.push((resource_ref, content, -score));
            }
        }
        if out.len() == fetch || best.len() < window {
            return Ok(out);
        }
        seen = best.len();
        window = window.saturating_mul(4);
    }
}
