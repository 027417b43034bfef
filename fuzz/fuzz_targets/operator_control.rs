//! `operator-control` (edit and retire) on any input document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::output::Format;
use reward_memory::contract::operator::{ControlRequest, OperatorAction, control_input};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    for &action in OperatorAction::ALL {
        let request = ControlRequest {
            action,
            control_ref: "control:fuzz",
            reasoning_summary: "The owner narrowed the preference.",
            edited_content_summary: Some("Prefer a focused change."),
        };
        if let Ok(packet) = control_input(&source, &request) {
            let _ = reward_memory::output::render(&packet, Format::Json);
            let _ = reward_memory::output::render(&packet, Format::Markdown);
        }
    }
});
