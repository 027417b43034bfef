//! `ingest-event` (dry run, no route) on any input document: the pure flow of
//! `contract::ingest` (form, plan, adapter) as the handler runs it for the full form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::contract::ingest::{self, adapters::Mode};
use reward_memory::output::Format;
use reward_memory::wire::json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    let source = match source {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let Ok(form) = ingest::form(&source, None, None, false) else {
        return;
    };
    assert_eq!(form, ingest::Form::Full);
    let Ok(plan) = ingest::plan(&source, None) else {
        return;
    };
    if let Ok(packet) = ingest::ingest(&plan, &Mode::DryRun) {
        let packet = Value::Object(packet);
        let _ = reward_memory::output::render(&packet, Format::Json);
        let _ = reward_memory::output::render(&packet, Format::Markdown);
    }
});
