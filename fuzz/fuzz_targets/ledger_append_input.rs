//! `utility-ledger append` input: the streaming record scanner (object form and JSON
//! Lines) and the per-delivery validator it feeds. No input panics; every record, and so
//! every refusal, names a line inside the input, in input order; an error ends the
//! stream; the records do not depend on how the reader's buffer splits the bytes; JSON
//! Lines input (first non-blank byte not `{`) yields exactly its non-blank lines.
#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use reward_memory::ledger::engine::{Record, prepare_delivery};
use reward_memory::ledger::input::records;

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

fuzz_target!(|data: &[u8]| {
    let lines = data.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let whole: Vec<_> = records(BufReader::with_capacity(8192, data)).collect();
    let capacity = 1 + usize::from(data.first().copied().unwrap_or(0)) % 7;
    let pieces: Vec<_> = records(BufReader::with_capacity(capacity, data)).collect();
    assert_eq!(whole, pieces, "records depend on the read buffer size");
    let mut previous = 0;
    for (i, record) in whole.iter().enumerate() {
        let line = match record {
            Ok(Record::Item { line, bytes }) => {
                // A refusal of the validator is reported at the item's line.
                let _ = prepare_delivery(bytes);
                *line
            }
            Ok(Record::Refused { line, .. }) => *line,
            Err(_) => {
                assert_eq!(i + 1, whole.len(), "an error ends the stream");
                continue;
            }
        };
        assert!((1..=lines).contains(&line), "line {line} of {lines}");
        assert!(line >= previous, "records out of input order");
        previous = line;
    }
    let first = data
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first != Some(&b'{') {
        let expected: Vec<_> = data
            .split(|b| *b == b'\n')
            .enumerate()
            .filter(|(_, line)| !is_blank(line))
            .map(|(i, line)| {
                Ok(Record::Item {
                    line: i as u64 + 1,
                    bytes: line.to_vec(),
                })
            })
            .collect();
        assert_eq!(whole, expected, "JSON Lines are not split per line");
    }
});
