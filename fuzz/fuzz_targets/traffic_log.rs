//! The traffic log's readers: a stored event (`recall::traffic::parse_event`) and an
//! `--export-episodes` file (`logged::episodes::parse_jsonl`). No input panics; an accepted
//! event written back reads as the same event; an accepted export written back parses to
//! the same episodes and deliveries; a refused export names its malformed lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::ranking::evaluate::RankEvaluateError;
use reward_memory::ranking::evaluate::logged::episodes::{parse_jsonl, write_jsonl};
use reward_memory::recall::traffic::parse_event;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(event) = parse_event(text)
    {
        assert_eq!(parse_event(&event.to_text()), Ok(event), "write -> parse");
    }
    match parse_jsonl(data) {
        Ok(parsed) => {
            let written = write_jsonl(&parsed.data).expect("an accepted export writes");
            let again = parse_jsonl(written.as_bytes())
                .unwrap_or_else(|e| panic!("a written export does not parse: {e}\n{written}"));
            assert_eq!(again.data, parsed.data, "write -> parse");
        }
        Err(RankEvaluateError::Episodes(message)) => {
            assert!(message.contains(": line "), "{message}");
        }
        Err(other) => panic!("the reader returned another error: {other}"),
    }
});
