//! The layering rules of `src/` (docs/architecture.md), read from the source: which
//! folders may use the shell (`cli`, `commands`, `error`, `io`, clap), that the wire layer
//! uses nothing above it, and how test-only files inside `src/` are named.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source folder is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file of `src/` with its path relative to `src/` (with `/`), sorted.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(&root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("source is readable");
            (rel, text)
        })
        .collect()
}

/// Test-only files: the unit tests (`tests.rs`), property tests (`props.rs`) and shared
/// test builders (`testkit.rs`) of a module folder.
fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    matches!(name, "tests.rs" | "props.rs" | "testkit.rs")
}

/// The code of a line: what stands before a `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or_default()
}

/// `file:line: text` of every code line outside the allowed places that names `pattern`.
fn uses_outside(pattern: &str, allowed: &[&str], include_tests: bool) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, text) in sources() {
        if allowed
            .iter()
            .any(|place| rel == *place || rel.starts_with(&format!("{place}/")))
        {
            continue;
        }
        if !include_tests && is_test_file(&rel) {
            continue;
        }
        for (number, line) in text.lines().enumerate() {
            if code(line).contains(pattern) {
                found.push(format!("src/{rel}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    found
}

fn assert_none(rule: &str, found: &[String]) {
    assert!(found.is_empty(), "{rule}:\n{}", found.join("\n"));
}

#[test]
fn only_the_shell_knows_clap_and_the_command_line() {
    let shell = ["commands", "cli.rs", "main.rs"];
    assert_none(
        "outside commands/, cli.rs and main.rs, nothing uses the command line",
        &uses_outside("crate::cli", &shell, true),
    );
    assert_none(
        "outside commands/, cli.rs and main.rs, nothing uses clap",
        &uses_outside("clap::", &shell, true),
    );
}

#[test]
fn only_the_shell_uses_the_commands_and_the_top_level_error() {
    assert_none(
        "only commands/ and main.rs use the commands layer",
        &uses_outside("crate::commands", &["commands", "main.rs"], true),
    );
    assert_none(
        "only commands/, main.rs and error.rs use the top-level error",
        &uses_outside("crate::error", &["commands", "main.rs", "error.rs"], true),
    );
}

#[test]
fn files_and_the_environment_are_reached_only_through_the_shell_and_the_adapters() {
    // The storage adapters (providers, the ledger's backends) open their own files
    // through `io`'s trust rule; the contracts, the attribution loop and the wire layer
    // never do.
    let places = [
        "commands", "main.rs", "error.rs", "io", "runtime", "provider", "ledger",
    ];
    assert_none(
        "only the shell and the adapters use io",
        &uses_outside("crate::io", &places, false),
    );
}

#[test]
fn the_wire_layer_uses_nothing_above_it() {
    let mut found = Vec::new();
    for (rel, text) in sources() {
        if !rel.starts_with("wire/") {
            continue;
        }
        for (number, line) in text.lines().enumerate() {
            let line_code = code(line);
            let mut rest = line_code;
            while let Some(at) = rest.find("crate::") {
                let name: String = rest[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // The wire layer itself, and the macros exported at the crate root that
                // it defines (`obj!`, `choice!`, `const_string!`).
                if !matches!(name.as_str(), "wire" | "obj" | "choice" | "const_string") {
                    found.push(format!("src/{rel}:{}: {}", number + 1, line.trim()));
                }
                rest = &rest[at + 7..];
            }
        }
    }
    assert_none("src/wire uses only itself", &found);
}

#[test]
fn test_only_files_in_src_are_named_tests_props_or_testkit() {
    let mut found = Vec::new();
    for (rel, text) in sources() {
        let lines: Vec<&str> = text.lines().collect();
        for (number, pair) in lines.windows(2).enumerate() {
            if pair[0].trim() != "#[cfg(test)]" {
                continue;
            }
            let declared = pair[1].trim();
            let Some(name) = declared
                .strip_prefix("mod ")
                .or_else(|| declared.strip_prefix("pub mod "))
                .or_else(|| declared.strip_prefix("pub(crate) mod "))
                .and_then(|rest| rest.strip_suffix(';'))
            else {
                continue;
            };
            if !matches!(name, "tests" | "props" | "testkit") {
                found.push(format!("src/{rel}:{}: {declared}", number + 2));
            }
        }
    }
    assert_none(
        "a test-only module file is tests.rs, props.rs or testkit.rs",
        &found,
    );
    let test_files: Vec<String> = sources()
        .into_iter()
        .map(|(rel, _)| rel)
        .filter(|rel| is_test_file(rel))
        .collect();
    assert!(test_files.len() >= 8, "{test_files:?}");
}
