//! `rank-evaluate --input EPISODES.jsonl`: the episodes parser. No input panics; a
//! refusal for malformed lines names them (`line N: ...`); an accepted file written back
//! with `write_jsonl` parses again and writes the same bytes (the writer is the parser's
//! inverse up to episode ids).
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::ranking::evaluate::RankEvaluateError;
use reward_memory::ranking::evaluate::episodes::{parse, write_jsonl};

fuzz_target!(|data: &[u8]| {
    match parse(data) {
        Ok(parsed) => {
            let written = write_jsonl(&parsed.dataset);
            let again = parse(written.as_bytes())
                .unwrap_or_else(|e| panic!("written episodes do not parse: {e}\n{written}"));
            assert_eq!(
                again.observation_lines, parsed.observation_lines,
                "deliveries lost in the round trip"
            );
            assert_eq!(write_jsonl(&again.dataset), written, "write -> parse -> write");
        }
        Err(RankEvaluateError::Episodes(message)) => {
            if message.contains("malformed line") {
                assert!(message.contains(": line "), "{message}");
            }
        }
        Err(other) => panic!("the parser returned a non-episodes error: {other}"),
    }
});
