//! The review queue: the subjects whose reduced state proposes a review (attenuation of
//! a memory found harmful, quarantine of a conflict, an attribution left unresolved),
//! read from the stored subject rows of one partition or of every partition, in
//! (partition, subject) order. A proposal leaves the queue when the subject's state no
//! longer proposes anything (an owner correction decided it); the command adds what
//! the store says about the memory (a retirement).

use super::super::backend::{LedgerBackend, with_read};
use super::super::error::{LedgerError, LedgerResult};
use super::super::rows::PartitionKey;
use super::state::decode_state;
use crate::utility::reducer::SubjectState;

/// Subject rows read per page.
const PAGE: usize = 512;

/// One open proposal: the partition and the subject's reduced state.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub partition: PartitionKey,
    pub state: SubjectState,
}

/// The queue as read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReviewQueue {
    /// The partitions read (the named one, when it exists; else every partition).
    pub partitions_read: usize,
    /// Every open proposal found, at most `limit` of them.
    pub proposals: Vec<Proposal>,
    /// The open proposals found in all (more than `proposals` holds when it was cut).
    pub open_count: usize,
}

/// The open proposals of `partition` (every partition when `None`), the first `limit`
/// in (partition, subject) order, all counted.
pub fn review_queue(
    backend: &mut dyn LedgerBackend,
    partition: Option<&PartitionKey>,
    limit: usize,
) -> LedgerResult<ReviewQueue> {
    with_read(backend, |backend| {
        let partitions = match partition {
            Some(key) => backend.find_partition(key)?.into_iter().collect(),
            None => backend.partitions()?,
        };
        let mut queue = ReviewQueue {
            partitions_read: partitions.len(),
            ..ReviewQueue::default()
        };
        for p in &partitions {
            let mut after: Option<String> = None;
            loop {
                let page = backend.subjects_page(p.partition_id, after.as_deref(), PAGE)?;
                let full = page.len() == PAGE;
                for row in &page {
                    if row.review_state == "none" {
                        continue;
                    }
                    queue.open_count += 1;
                    if queue.proposals.len() >= limit {
                        continue;
                    }
                    let state = decode_state(row).ok_or_else(|| {
                        LedgerError::Corrupt(format!(
                            "the stored state of subject {} cannot be read: run utility-ledger verify",
                            row.subject_id
                        ))
                    })?;
                    queue.proposals.push(Proposal {
                        partition: p.key.clone(),
                        state,
                    });
                }
                match page.last() {
                    Some(last) if full => after = Some(last.subject_id.clone()),
                    _ => break,
                }
            }
        }
        Ok(queue)
    })
}
