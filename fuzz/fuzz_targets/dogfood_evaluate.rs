//! `dogfood-evaluate` on any input document (the Stage-4 gate taken as ready).
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::output::Format;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    if let Ok(packet) = reward_memory::contract::dogfood::evaluate_input(&source, || true) {
        let _ = reward_memory::output::render(&packet, Format::Json);
        let _ = reward_memory::output::render(&packet, Format::Markdown);
    }
});
