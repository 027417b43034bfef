//! `rank-prior` (no `--execute`) on any input document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::cli::Format;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    let Ok(request) = reward_memory::ranking::prior::request::parse_request(&source) else {
        return;
    };
    if let Ok(packet) = reward_memory::ranking::prior::request::rank_request(&request) {
        let _ = reward_memory::output::render(&packet, Format::Json);
        let _ = reward_memory::output::render(&packet, Format::Markdown);
    }
});
