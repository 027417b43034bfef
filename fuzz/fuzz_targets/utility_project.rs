//! `utility-project` on any input document; an accepted projection passes the readback
//! validator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::cli::Format;
use reward_memory::wire::json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    if let Ok(packet) = reward_memory::utility::project_input(&source) {
        let _ = reward_memory::output::render(&packet, Format::Json);
        if packet.get("ok") == Some(&Value::Bool(true)) {
            let checked = reward_memory::ledger::validate::validate_input(&packet);
            assert_eq!(checked.get("ok"), Some(&Value::Bool(true)));
        }
    }
});
