//! The LoopX Reward Memory Stage 0–5 contracts: memory classes ([`architecture`]), the
//! corpus registry ([`registry`]), corpus health ([`health`]), candidate review
//! ([`candidate`]), the route check ([`route`]), the experiment route ([`experiment`]),
//! event ingest ([`ingest`]), the Stage-4 suite ([`evaluation`]), dogfood evaluation
//! ([`dogfood`]) and operator controls ([`operator`]).
//!
//! Typed in, typed out: each contract validates its input and builds its packet. None
//! reads a file, the environment or the clock: the parsed registry and the config reader
//! (`experiment`), the monotonic clock (`evaluation`) and, for an executed ingest, the
//! provider ([`crate::provider::ContextProvider`]) are handed in by the shell.
//!
//! Each contract declares its own domain enums (fixture cases, decisions, actions) as
//! [`crate::wire::choice`] sets, which the command line parses, and its own error enum
//! (`HealthError`, `CandidateError`, `RouteError`, `RegistryError`, `ExperimentError`,
//! `IngestError`, `DogfoodError`, `OperatorError`, `EvaluationError`), returned by the
//! functions the shell calls; [`crate::error::Error`] wraps them. The field validators
//! that several contracts and the recall seam share (one corpus, a standing policy, a
//! candidate, a review, an operator receipt) return the wire layer's
//! [`crate::wire::text::FieldError`], which every contract error wraps. No contract
//! knows the shell: nothing here uses `cli`, `commands`, `error` or `io`.

pub mod architecture;
pub mod candidate;
pub mod dogfood;
pub mod evaluation;
pub mod experiment;
pub mod health;
pub mod ingest;
pub mod operator;
pub mod registry;
pub mod route;

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("contract folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn no_contract_uses_the_shell() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/contract");
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        files.sort();
        assert!(files.len() > 10, "{files:?}");
        let shell = [
            "crate::cli",
            "crate::commands",
            "crate::error",
            "crate::io",
            "clap",
        ];
        let mut found = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("source");
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for name in shell {
                    if code.contains(&format!("{name}::")) {
                        found.push(format!(
                            "{}:{}: {}",
                            file.display(),
                            number + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "contracts use the shell:\n{}",
            found.join("\n")
        );
    }
}
