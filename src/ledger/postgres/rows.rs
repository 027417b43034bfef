//! Reading the PostgreSQL ledger's rows: server-side cursors read side by side, row
//! conversions that keep credentials out of errors, and the keyed `UNNEST` arrays a
//! statement takes for many keys at once.

use std::cell::RefCell;
use std::collections::VecDeque;

use postgres::types::ToSql;
use postgres::{Client, Row};

use super::super::error::LedgerResult;
use super::super::rows::SubjectKey;
use super::map_error;

/// Rows of a server-side cursor, `FETCH`ed in blocks, so that two streams can be read
/// side by side in one transaction.
pub(super) struct Cursor<'c> {
    client: &'c RefCell<&'c mut Client>,
    name: &'static str,
    buffer: VecDeque<Row>,
    done: bool,
    secret: Option<&'c str>,
}

impl<'c> Cursor<'c> {
    /// The rows of the cursor `name` (declared in the open transaction) on `client`.
    pub(super) fn new(
        client: &'c RefCell<&'c mut Client>,
        name: &'static str,
        secret: Option<&'c str>,
    ) -> Cursor<'c> {
        Cursor {
            client,
            name,
            buffer: VecDeque::new(),
            done: false,
            secret,
        }
    }
}

const FETCH_BLOCK: usize = 1000;

impl Iterator for Cursor<'_> {
    type Item = LedgerResult<Row>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buffer.is_empty() && !self.done {
            let fetched = self
                .client
                .borrow_mut()
                .query(&format!("FETCH {FETCH_BLOCK} FROM {}", self.name), &[]);
            match fetched {
                Ok(rows) => {
                    self.done = rows.len() < FETCH_BLOCK;
                    self.buffer.extend(rows);
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(map_error(&e, self.secret)));
                }
            }
        }
        self.buffer.pop_front().map(Ok)
    }
}

pub(super) fn rows_to<T>(
    rows: Vec<Row>,
    convert: impl Fn(&Row) -> Result<T, postgres::Error>,
    secret: Option<&str>,
) -> LedgerResult<Vec<T>> {
    rows.iter()
        .map(|r| convert(r).map_err(|e| map_error(&e, secret)))
        .collect()
}

/// Rows of a statement over `count` keys (`UNNEST ... WITH ORDINALITY`): column 0 is
/// the 1-based index of a row's key, `convert` decodes the rest from column 1. One
/// vector per key, in key order.
pub(super) fn by_key_index<T>(
    rows: Vec<Row>,
    count: usize,
    convert: impl Fn(&Row, usize) -> Result<T, postgres::Error>,
    secret: Option<&str>,
) -> LedgerResult<Vec<Vec<T>>> {
    let items = rows_to(
        rows,
        |r| Ok((r.try_get::<_, i64>(0)?, convert(r, 1)?)),
        secret,
    )?;
    Ok(group_by_index(count, items))
}

/// Splits `(index, T)` rows ordered by index into one vector per key.
fn group_by_index<T>(count: usize, items: Vec<(i64, T)>) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = (0..count).map(|_| Vec::new()).collect();
    for (i, item) in items {
        if let Some(slot) = usize::try_from(i - 1).ok().and_then(|i| out.get_mut(i)) {
            slot.push(item);
        }
    }
    out
}

pub(super) fn key_arrays(keys: &[SubjectKey]) -> (Vec<i64>, Vec<String>) {
    (
        keys.iter().map(|k| k.0).collect(),
        keys.iter().map(|k| k.1.clone()).collect(),
    )
}

/// Values as statement parameters.
pub(super) fn sql_params<T: ToSql + Sync>(values: &[T]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}
