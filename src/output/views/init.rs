//! The view of `init`'s packet (`reward_memory_init_v0`): the commands to run next, in the
//! default markdown too (they are what a person came for), and the files and corpora
//! with `--detail`.

use crate::output::notes::Notes;
use crate::output::report::Report;
use crate::wire::json::{Map, Value};

use super::fields::{at, objects, s};

/// The three commands, as a shell block under the summary (nothing for a packet without
/// them).
pub(super) fn init_body(p: &Map, report: &mut Report) {
    if at(p, "commands").and_then(Value::as_object).is_none() {
        return;
    }
    let commands: Vec<String> = ["ingest", "recall", "apply"]
        .iter()
        .map(|k| s(p, &format!("commands.{k}")))
        .collect();
    report
        .section("Next: ingest the example lesson, recall it with its text, apply it")
        .shell(commands);
}

/// The written files and what each corpus's standing policy admits.
pub(super) fn init_detail(p: &Map, _: &Notes, report: &mut Report) {
    report.section("Files").fields(
        [
            "registry",
            "experiment_config",
            "lesson_event",
            "runtime_root",
        ]
        .map(|k| (k, s(p, k))),
    );
    let rows = objects(p, "corpora")
        .map(|c| {
            let list = |k: &str| {
                at(c, k)
                    .and_then(Value::as_array)
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default()
            };
            vec![
                s(c, "corpus_id"),
                s(c, "class_id"),
                s(c, "surface_id"),
                list("allowed_source_kinds"),
                list("allowed_actor_roles"),
                list("allowed_action_scopes"),
            ]
        })
        .collect();
    report.section("Corpora").table(
        &[
            "corpus",
            "class",
            "surface",
            "source kinds",
            "actor roles",
            "action scopes",
        ],
        rows,
    );
}

/// `init --demo`: each step, whether it passed and what it proved.
pub(super) fn demo_body(p: &Map, report: &mut Report) {
    let steps: Vec<String> = objects(p, "steps")
        .map(|step| {
            let mark = if at(step, "passed") == Some(&Value::Bool(true)) {
                "[x]"
            } else {
                "[ ]"
            };
            format!(
                "{mark} {} (`{}`): {}",
                s(step, "step"),
                s(step, "status"),
                s(step, "proved")
            )
        })
        .collect();
    report.section("The loop, once").numbered(steps);
}

/// `init --demo --detail`: the command of each step.
pub(super) fn demo_detail(p: &Map, _: &Notes, report: &mut Report) {
    let rows = objects(p, "steps")
        .map(|step| vec![s(step, "step"), s(step, "command")])
        .collect();
    report.section("Commands").table(&["step", "command"], rows);
    report
        .section("Setup")
        .fields([("directory", s(p, "directory")), ("kept", s(p, "kept"))]);
}
