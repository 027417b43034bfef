//! JSON parser and printers: whatever parses prints, and every printer's output parses
//! back to a value that prints the same bytes again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::wire::json::{self, DumpOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = json::decode_utf8(data) else {
        return;
    };
    let _ = json::parse_prefix(text);
    let Ok(value) = json::parse(text) else {
        return;
    };
    for opts in [
        DumpOptions::PRETTY,
        DumpOptions::CANONICAL,
        DumpOptions::LEGACY_RAW,
        DumpOptions::LEGACY_ASCII,
    ] {
        let printed = json::dumps(&value, opts);
        let back = match json::parse(&printed) {
            Ok(back) => back,
            // The memory budget is per input byte: a minified print of a padded document
            // may be refused as too dense, and only that.
            Err(err) if err.message.starts_with("JSON document too dense") => continue,
            Err(err) => panic!("printed JSON does not parse: {err}"),
        };
        assert_eq!(json::dumps(&back, opts), printed, "print -> parse -> print");
    }
    let _ = reward_memory::output::markdown(&value);
});
