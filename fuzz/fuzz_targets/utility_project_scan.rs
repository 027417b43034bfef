//! `utility-project`'s direct reading of its input text (`utility::scan`) never answers
//! differently from the general path: whenever it answers, the text parses as one
//! object and `project_input` prints the same packet or the same error, and the packet
//! printed from the typed projection (the `--format json` output) is the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reward_memory::utility::scan::{project_text, scan_request};
use reward_memory::utility::{UtilityError, project_input};
use reward_memory::wire::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(fast) = project_text(text) else {
        return;
    };
    let source = reward_memory::io::parse_input_object(data)
        .unwrap_or_else(|e| panic!("the direct reading answered for input the parser refuses: {e}"));
    let general = project_input(&source);
    match (fast, general) {
        (Ok(a), Ok(b)) => {
            assert!(a == b, "projections differ");
            assert_eq!(json::to_pretty_line(&a), json::to_pretty_line(&b));
            let request = scan_request(text).expect("the direct reading answered once");
            let typed = request.project_typed().expect("the direct reading projected once");
            let mut printed = String::new();
            typed.write_pretty_line(&mut printed);
            assert_eq!(printed, json::to_pretty_line(&a));
        }
        (Err(a), Err(b)) => {
            let a = UtilityError::Projection(a);
            assert_eq!(format!("{a:?} / {a}"), format!("{b:?} / {b}"));
        }
        (a, b) => panic!("the paths disagree: {a:?} vs {b:?}"),
    }
});
