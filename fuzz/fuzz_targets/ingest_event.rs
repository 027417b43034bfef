//! `ingest-event` (dry run, no route) on any input document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::cli::{FormatArg, IngestEventArgs, InputLimitArg, RouteArgs};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = reward_memory::io::parse_document(data) else {
        return;
    };
    let args = IngestEventArgs {
        input: "-".to_owned(),
        goal_id: None,
        agent_id: None,
        execute: false,
        input_limit: InputLimitArg {
            max_input_bytes: u64::MAX,
        },
        format: FormatArg { format: None },
        route: RouteArgs::default(),
    };
    let ctx = reward_memory::commands::Context {
        env: reward_memory::io::Env::default(),
        registry: None,
        runtime_root: None,
        format: reward_memory::cli::Format::Json,
    };
    if let Ok(outcome) = reward_memory::commands::ingest_event::command_on(source, &args, &ctx) {
        print_both(&outcome.packet);
    }
});

fn print_both(packet: &reward_memory::wire::json::Value) {
    let _ = reward_memory::output::render(packet, reward_memory::cli::Format::Json);
    let _ = reward_memory::output::render(packet, reward_memory::cli::Format::Markdown);
}
