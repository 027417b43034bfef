//! An aggregate run that proceeds a window at a time: the staged deliveries of the run,
//! their order by key (partition, subject, observation; each id's deliveries in ledger
//! order) and how far the run got. The writer steps it between the chunks the validating
//! thread hands over, so that validation never waits for a whole run.

use super::intake::Staged;

/// The staged deliveries of one run, ordered by key, and the next window's start.
pub(super) struct Run {
    staged: Vec<Staged>,
    /// Indices into `staged`, sorted by key; stable, so each id's deliveries stay in
    /// ledger order.
    order: Vec<usize>,
    next: usize,
}

impl Run {
    /// A run over `staged`, in key order.
    pub(super) fn new(staged: Vec<Staged>) -> Run {
        let mut order: Vec<usize> = (0..staged.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&staged[a], &staged[b]);
            (a.pid, &a.subject_id, &a.observation_id).cmp(&(
                b.pid,
                &b.subject_id,
                &b.observation_id,
            ))
        });
        Run {
            staged,
            order,
            next: 0,
        }
    }

    /// True when every window was taken.
    pub(super) fn is_done(&self) -> bool {
        self.next >= self.order.len()
    }

    /// The next window: the deliveries of at most `subjects` subjects (all of each
    /// subject's), in key order; empty once the run is done.
    pub(super) fn next_window(&mut self, subjects: usize) -> Vec<&Staged> {
        let subjects = subjects.max(1);
        let start = self.next;
        let mut end = start;
        let mut seen = 0;
        let mut window: Vec<&Staged> = Vec::new();
        while let Some(&i) = self.order.get(end) {
            let item = &self.staged[i];
            let new_subject = window
                .last()
                .is_none_or(|prev| prev.pid != item.pid || prev.subject_id != item.subject_id);
            if new_subject {
                if seen == subjects {
                    break;
                }
                seen += 1;
            }
            window.push(item);
            end += 1;
        }
        self.next = end;
        window
    }

    /// The run's buffer, emptied, for the next run's staging (its capacity is kept).
    pub(super) fn into_buffer(mut self) -> Vec<Staged> {
        self.staged.clear();
        self.staged
    }
}
