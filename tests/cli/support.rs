//! Shared helpers: run the binary in a scratch directory and render a transcript
//! (exit status, stdout, stderr) for insta file snapshots.

#![allow(dead_code)] // helpers are shared by files that use different subsets

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One finished run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The run with its standard output passed through `mask`.
    pub fn masked(self, mask: fn(&str) -> String) -> Run {
        Run {
            stdout: mask(&self.stdout),
            ..self
        }
    }

    /// The whole observable behaviour as one text block.
    pub fn transcript(&self) -> String {
        format!(
            "exit: {}\n----- stdout -----\n{}----- stderr -----\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Stdout parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).expect("stdout is JSON")
    }
}

/// A fresh empty directory under the target dir, removed on drop.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let path =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join(".home")).expect("scratch dir");
        Scratch { path }
    }

    /// Writes a file relative to the scratch dir.
    pub fn write(&self, rel: &str, contents: &str) -> &Scratch {
        let path = self.path.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent dir");
        }
        std::fs::write(path, contents).expect("write file");
        self
    }

    /// Runs the binary inside the scratch dir with an isolated HOME.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Run {
        self.run_env(args, stdin, &[])
    }

    /// [`Scratch::run`] with the environment variables `env` set.
    pub fn run_env(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
        let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("reward-memory");
        cmd.current_dir(&self.path)
            .env("HOME", self.path.join(".home"))
            .env_remove("LOOPX_REGISTRY")
            .env_remove("REWARD_MEMORY_FORMAT")
            .env_remove("REWARD_MEMORY_REGISTRY")
            .env_remove("REWARD_MEMORY_RUNTIME_ROOT")
            .env("COLUMNS", "100")
            .envs(env.iter().copied())
            .args(args);
        if let Some(input) = stdin {
            cmd.write_stdin(input.as_bytes().to_vec());
        }
        let output = cmd.output().expect("binary runs");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout)
                .replace(&*self.path.to_string_lossy(), "@CASE_DIR@"),
            stderr: String::from_utf8_lossy(&output.stderr)
                .replace(&*self.path.to_string_lossy(), "@CASE_DIR@"),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Says on stderr why a test could not check what it is about here (a missing tool or
/// privilege), so that a skipped check is visible in the test output.
#[allow(clippy::print_stderr)]
pub fn note(text: &str) {
    eprintln!("note: {text}");
}

/// Runs the binary with no files, in a scratch dir.
pub fn run(args: &[&str]) -> Run {
    Scratch::new().run(args, None)
}

/// The repository's fixtures directory.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Every `*.json` file of `fixtures/<sub>/<kind>/`, sorted by name.
pub fn fixture_files(sub: &str, kind: &str) -> Vec<PathBuf> {
    let dir = fixtures_dir().join(sub).join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A fixture's file name without `.json`.
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_owned()
}

/// A fixture's file stem with `-` written `_`, for snapshot names.
pub fn snake_stem(path: &Path) -> String {
    file_stem(path).replace('-', "_")
}

/// A JSON fixture file, parsed.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// Indented JSON text of a value.
pub fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).expect("serializable")
}

/// Copies the fixture at `path` into a fresh scratch dir as `name` and runs `args` there.
pub fn run_with_file(path: &Path, name: &str, args: &[&str]) -> Run {
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let scratch = Scratch::new();
    scratch.write(name, &text);
    scratch.run(args, None)
}

/// The generated schema of `schema_version` (as committed under `schemas/`).
pub fn schema_named(schema_version: &str) -> schemars::Schema {
    reward_memory::schema::all()
        .into_iter()
        .find(|f| f.file_name == format!("{schema_version}.schema.json"))
        .unwrap_or_else(|| panic!("no schema {schema_version}"))
        .schema
}

/// Asserts that the run for the fixture at `path` was refused: exit 2 and an
/// `invalid_request` packet.
pub fn assert_invalid_request(run: &Run, path: &Path) {
    assert_eq!(run.code, 2, "{}: {}", path.display(), run.stdout);
    assert_eq!(
        run.json()["status"],
        "invalid_request",
        "{}",
        path.display()
    );
}

/// insta settings that store snapshots under `tests/cli/snapshots`.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// Replaces the wall-clock `latency_ms` values, in JSON (`"latency_ms": N`) and in the
/// markdown views (`latency_ms: N`), with a placeholder: the only values of most packets
/// that vary between runs.
pub fn mask_latency(text: &str) -> String {
    let json = regex::Regex::new(r#""latency_ms": \d+"#).expect("valid pattern");
    let markdown = regex::Regex::new(r#"(^|[^"])latency_ms: \d+"#).expect("valid pattern");
    let text = json.replace_all(text, r#""latency_ms": "[ms]""#);
    markdown
        .replace_all(&text, "${1}latency_ms: [ms]")
        .into_owned()
}

/// Masks what varies between runs of the attribution loop: recall session refs, clock
/// readings (microsecond ISO timestamps) and latency.
pub fn mask_session(text: &str) -> String {
    let rules = [
        (r"rms_[0-9a-f]{32}", "rms_[session]"),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00",
            "[timestamp]",
        ),
    ];
    let mut out = text.to_owned();
    for (pattern, replacement) in rules {
        let re = regex::Regex::new(pattern).expect("valid pattern");
        out = re.replace_all(&out, replacement).into_owned();
    }
    mask_latency(&out)
}

/// Snapshots a run's transcript under `name` after a mask (`mask_latency`,
/// `mask_session`, or any `fn(&str) -> String`).
#[macro_export]
macro_rules! snap_masked {
    ($name:expr, $run:expr, $mask:expr) => {{
        let run: $crate::support::Run = $run;
        let text = ($mask)(&run.transcript());
        $crate::support::snapshot_settings().bind(|| {
            insta::assert_snapshot!($name, text);
        });
    }};
}

/// Snapshots a run's transcript under `name`.
#[macro_export]
macro_rules! snap {
    ($name:expr, $run:expr) => {{
        let run = $run;
        $crate::support::snapshot_settings().bind(|| {
            insta::assert_snapshot!($name, run.transcript());
        });
    }};
}
