//! The README runs as documented: every ```console block is executed from the repository
//! root, as on a fresh machine, and must print what the README shows.
//!
//! Rules of a console block (trycmd's conventions):
//! * a line starting with `$ ` is a command; a command line ending in `\` continues on the
//!   next line;
//! * the lines up to the next command are its expected output: stdout and stderr merged in
//!   the order they were written; trailing blank lines do not count;
//! * a line `...` matches any number of lines, and `[..]` inside a line matches any text
//!   (used only for values that vary: temporary paths, wall-clock latency).
//!
//! Each block runs in one `bash` process, so a block may set variables for its later
//! commands (e.g. `RM_ROOT=$(mktemp -d)`); blocks do not share state. The binary under test
//! is first on `PATH` as `reward-memory`, `HOME` is an empty directory and
//! `LOOPX_REGISTRY` is unset. ```sh blocks are kept to installing and developing (a fixed
//! list of commands checked below); every runnable example is a console block.

use std::path::Path;

/// One `$ command` with the output the README shows for it.
struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// A fenced block: its info string, first line number and body lines.
struct Fence {
    info: String,
    line: usize,
    body: Vec<String>,
}

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    std::fs::read_to_string(path).expect("README.md is readable")
}

fn fences(text: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut open: Option<Fence> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Fence {
                    info: info.trim().to_owned(),
                    line: i + 1,
                    body: Vec::new(),
                });
            }
            (Some(_), Some("")) => out.extend(open.take()),
            (Some(fence), _) => fence.body.push(line.to_owned()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README has an unclosed code fence");
    out
}

fn examples(fence: &Fence) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut continuing = false;
    for (i, line) in fence.body.iter().enumerate() {
        if continuing {
            let example = out.last_mut().expect("a command is open");
            example.command.push('\n');
            example.command.push_str(line);
            continuing = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example {
                line: fence.line + 1 + i,
                command: command.to_owned(),
                expected: Vec::new(),
            });
            continuing = command.ends_with('\\');
        } else {
            let example = out.last_mut().unwrap_or_else(|| {
                panic!(
                    "README line {}: console output before any `$ ` command",
                    fence.line + 1 + i
                )
            });
            example.expected.push(line.clone());
        }
    }
    out
}

fn trim_trailing_blank(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// A line of expected output matches an actual line (`[..]` = any text).
fn line_matches(expected: &str, actual: &str) -> bool {
    if !expected.contains("[..]") {
        return expected == actual;
    }
    let pattern: Vec<String> = expected.split("[..]").map(regex::escape).collect();
    regex::Regex::new(&format!("^{}$", pattern.join(".*")))
        .map(|re| re.is_match(actual))
        .unwrap_or(false)
}

/// Expected lines match actual lines (`...` = any number of lines).
fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| line_matches(first, a) && lines_match(rest, more)),
    }
}

const MARK: &str = "@@readme-example@@";

/// Runs a block's commands in one bash process and returns each command's output lines.
fn run_block(examples: &[Example], home: &Path) -> Vec<Vec<String>> {
    let mut script = String::from("exec 2>&1\n");
    for example in examples {
        script.push_str(&format!("printf '\\n{MARK}\\n'\n{}\n", example.command));
    }
    script.push_str(&format!("printf '\\n{MARK}\\n'\n"));
    let bin = Path::new(env!("CARGO_BIN_EXE_reward-memory"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("binary dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("LOOPX_REGISTRY")
        .env_remove("NO_COLOR")
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let marker = format!("\n{MARK}\n");
    let mut parts: Vec<&str> = text.split(&marker).collect();
    // parts[0] is what ran before the first marker (nothing); the last part is after the
    // final marker (nothing).
    assert!(parts.len() == examples.len() + 2, "markers lost:\n{text}");
    parts.pop();
    parts
        .into_iter()
        .skip(1)
        .map(|part| trim_trailing_blank(part.lines().map(str::to_owned).collect()))
        .collect()
}

/// Tools the examples call besides the binary and coreutils.
const TOOLS: &[&str] = &["bash", "jq", "sqlite3"];

#[test]
fn every_console_block_prints_what_the_readme_shows() {
    for tool in TOOLS {
        let found = std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok();
        assert!(
            found,
            "the README examples need `{tool}` (e.g. apt-get install {tool})"
        );
    }
    let text = readme();
    let blocks: Vec<Fence> = fences(&text)
        .into_iter()
        .filter(|f| f.info == "console")
        .collect();
    assert!(blocks.len() >= 6, "README lost its console examples");
    let mut failures = Vec::new();
    let mut count = 0;
    for block in &blocks {
        let examples = examples(block);
        assert!(
            !examples.is_empty(),
            "README line {}: empty block",
            block.line
        );
        let home = tempfile::tempdir().expect("home dir");
        let actual = run_block(&examples, home.path());
        for (example, actual) in examples.iter().zip(actual) {
            count += 1;
            let expected = trim_trailing_blank(example.expected.clone());
            if !lines_match(&expected, &actual) {
                failures.push(format!(
                    "README line {}: $ {}\n--- README shows ---\n{}\n--- it prints ---\n{}\n",
                    example.line,
                    example.command,
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(count >= 20, "only {count} README examples ran");
}

/// Commands a ```sh block may hold: installing, the main job, testing and the gate, which this test
/// cannot run inside itself.
const NOT_RUN_PREFIXES: &[&str] = &[
    "cargo install --locked --path .",
    "cargo run --release --locked -- evaluate",
    "cargo test",
    "bash scripts/",
    ".ci/run",
    "UPDATE_SCHEMAS=1 cargo test",
    "INSTA_UPDATE=always cargo test",
    "../shared/conformance/check ",
    "bench/",
    "LOOPX_BIN=",
];

#[test]
fn shell_blocks_only_install_build_or_test() {
    for fence in fences(&readme()) {
        if !matches!(fence.info.as_str(), "sh" | "bash" | "shell") {
            continue;
        }
        for (i, line) in fence.body.iter().enumerate() {
            let command = line.split(" #").next().unwrap_or(line).trim();
            if command.is_empty() {
                continue;
            }
            assert!(
                NOT_RUN_PREFIXES.iter().any(|p| command.starts_with(p)),
                "README line {}: `{command}` belongs in a ```console block (with its output) so that the README test runs it",
                fence.line + 1 + i
            );
        }
    }
}

#[test]
fn the_matcher_understands_ellipses_and_wildcards() {
    let lines = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(lines_match(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(lines_match(&lines("a\n...\nd"), &lines("a\nd")));
    assert!(!lines_match(&lines("a\n...\nd"), &lines("a\nb")));
    assert!(lines_match(&lines("x: [..] ms"), &lines("x: 12 ms")));
    assert!(!lines_match(&lines("x: [..] ms"), &lines("y: 12 ms")));
    assert!(!lines_match(&lines("a"), &lines("a\nb")));
}
