//! `utility-validate` on any input document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::cli::Format;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    let packet = reward_memory::ledger::validate::validate_input(&source);
    let _ = reward_memory::output::render(&packet, Format::Json);
});
